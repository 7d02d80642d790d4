"""Where `skillcheck lint` spends its CPU time: per stage and per rule, on any tree.

    python bench/profile.py /work/realworld-corpus            # text report, top 25 rules
    python bench/profile.py --format json --top 0 --json prof.json DIR...

Runs `skillcheck lint --isolated --no-cache --jobs 1` in this process with timers around
each rule's check, loading a skill, parsing Markdown, estimating tokens and rendering the
report (CPU time, `time.process_time`). Work shared through a skill's per-run cache (a
parsed Markdown file, a file read) is charged to the first rule that asks for it; the
"parse Markdown" and "estimate tokens" lines show those primitives whichever rule called
them, so they overlap the rule lines. Compare two branches by running this on each: a rule
that grows more than the tree did is a regression.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

_spent: dict[str, float] = defaultdict(float)
_calls: dict[str, int] = defaultdict(int)


def _timed(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return func(*args, **kwargs)
        finally:
            _spent[name] += time.process_time() - start
            _calls[name] += 1

    return wrapper


def _timed_rule(name: str, check: Callable[..., Any]) -> Callable[..., Iterator[Any]]:
    """A rule's check is a generator: its time is spent while it is iterated."""

    def wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
        start = time.process_time()
        _calls[name] += 1
        try:
            iterator = iter(check(*args, **kwargs))
            while True:
                try:
                    item = next(iterator)
                except StopIteration:
                    return
                _spent[name] += time.process_time() - start
                yield item
                start = time.process_time()
        finally:
            _spent[name] += time.process_time() - start

    return wrapper


def _instrument() -> None:
    from skillcheck import report, tokens
    from skillcheck.rules import all_rules
    from skillcheck.source import load, markdown
    from skillcheck.tokens import estimate

    for rule in all_rules():
        name = f"rule {rule.code} {rule.slug}"
        object.__setattr__(rule, "check", _timed_rule(name, rule.check))
    # module attributes the callers look up at call time
    load.load_skill = _timed("stage: load a skill (list and read)", load.load_skill)
    markdown.parse = _timed("primitive: parse Markdown (pyromark)", markdown.parse)
    # the estimate's entry point, where estimate_tokens and the tokenizer object look it up
    timed_estimate = _timed("primitive: estimate tokens", estimate._estimate)
    estimate._estimate = tokens._estimate = timed_estimate
    report.render = _timed("stage: render the report", report.render)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--format", default="json", help="report format (default json)")
    ap.add_argument("--top", type=int, default=25, help="rules to list (0: all)")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    _instrument()
    from skillcheck.cli import cli

    start = time.process_time()
    wall = time.perf_counter()
    command = ["lint", "--isolated", "--no-cache", "--jobs", "1", "--format", args.format]
    with contextlib.suppress(SystemExit):  # exit 1 for findings
        cli.main(
            [*command, "-o", os.devnull, *map(str, args.paths)],
            prog_name="skillcheck",
            standalone_mode=False,
        )
    total = time.process_time() - start
    wall = time.perf_counter() - wall
    rules = sorted((k for k in _spent if k.startswith("rule ")), key=lambda k: -_spent[k])
    others = sorted(k for k in _spent if not k.startswith("rule "))
    in_rules = sum(_spent[k] for k in rules)
    shown = rules if args.top <= 0 else rules[: args.top]
    print(f"total CPU {total:8.2f} s   wall {wall:.2f} s")
    print(f"{'all rules':44} {in_rules:8.2f} s  {100 * in_rules / total:5.1f} %")
    for key in [*others, *shown]:
        print(
            f"{key[:44]:44} {_spent[key]:8.2f} s  {100 * _spent[key] / total:5.1f} %"
            f"  {_calls[key]:>8} calls"
        )
    if args.json:
        figures = {
            "total_cpu_s": round(total, 3),
            "wall_s": round(wall, 3),
            "spent_s": {k: round(v, 3) for k, v in sorted(_spent.items())},
            "calls": dict(sorted(_calls.items())),
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
