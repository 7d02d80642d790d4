"""Run rules over skills: check, workers, cache, summaries, suppressions, results."""
