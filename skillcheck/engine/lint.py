"""Run the rules over skills: discover -> load -> check, then filter and sort.

Skills are checked one at a time and reduced to a SkillSummary at once (streaming: a run
over 10,000 skills never holds 10,000 parsed documents), in worker processes with
``--jobs``, or taken from the result cache when their files are unchanged. Collection rules
and suppressions then run over the summaries, in discovery order, so the output is the same
however the skills were checked.

The engine turns a rule's Finding into a Diagnostic: it keeps the finding only when it
affects an active target (or is runtime-independent), takes the worst severity among the
active targets, and records each target's load outcome for the report. A target whose loader
reads SKILL.md differently (skills-ref cuts the frontmatter at a raw `---`) has the rules run
on its own reading of the file.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck.analysis.figures import Limits, statistics_table
from skillcheck.analysis.paths import forget_outside
from skillcheck.engine.check import (
    DiscoveryInput,
    enabled_rules,
    per_path_filter,
    run_rules,
)
from skillcheck.engine.runner import CheckRun, Extra, RunProgress, collection_diagnostics
from skillcheck.engine.suppress import apply_suppressions
from skillcheck.engine.timing import stage
from skillcheck.rules import Context, default_limits, limits_of
from skillcheck.settings import Settings
from skillcheck.source.discover import Discovery, Listings, Problem, discover
from skillcheck.source.skill import (
    Diagnostic,
    Outcome,
    Severity,
    Skill,
    SkillSummary,
)


@dataclass
class LintResult:
    skills: list[SkillSummary]
    diagnostics: list[Diagnostic]
    targets: tuple[str, ...]
    outcomes: dict[Path, dict[str, Outcome]]
    discovery: Discovery
    tokenizer: str = "estimate"  # the spec the budgets counted with
    fixed: int = 0  # findings resolved by --fix before this result was taken
    # the loaded skills, in order, when asked for (catalog, pack and --fix reuse them)
    loaded: list[Skill] = field(default_factory=list)
    # how each skill's result was obtained: "checked", "cached" (unchanged files) or
    # "content" (files touched but equal to the cached entry's); with keep, "rechecked"
    # counts skills checked again because they changed before they were loaded again
    how: Counter[str] = field(default_factory=Counter)
    # with an Extra: its value for each skill, in the order of ``skills``
    extras: list[Any] = field(default_factory=list)
    # the token and line budgets the run checked against (reports show figures beside them)
    limits: Limits = field(default_factory=default_limits)

    def statistics_table(self) -> list[str]:
        """Tokens per tier and lines of each skill (``--statistics``), shared with SK6xx."""

        return statistics_table(self.skills, self.tokenizer, self.limits)

    def for_skill(self, skill: Skill | SkillSummary) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.skill == skill.root]

    def failed(self, strict: bool, allow: Collection[str] = ()) -> bool:
        """Any error (strict: any finding), not counting the rules in ``allow`` (the codes
        a shipping gate was told to let through)."""
        counted = [d for d in self.diagnostics if d.code not in allow]
        if strict:
            return bool(counted)
        return any(d.severity is Severity.ERROR for d in counted)

    def counts(self) -> dict[Severity, int]:
        out = dict.fromkeys(Severity, 0)
        for d in self.diagnostics:
            out[d.severity] += 1
        return out


def lint(
    paths: list[Path],
    settings: Settings,
    *,
    keep: bool = False,
    progress: RunProgress | None = None,
    extra: Extra | None = None,
) -> LintResult:
    """Lint every skill under ``paths``. Raises PathError for a PATH that does not exist.

    ``keep`` also returns every Skill, loaded, in ``result.loaded``, for the commands that
    go on to read the skills' files (catalog, pack, --fix). A skill checked in a worker or
    taken from the cache is loaded again here; if it no longer holds what it was checked
    from (edited meanwhile), it is checked again as loaded.

    ``extra`` derives a value from each skill where it is checked (``result.extras``), and
    caches it with the summary: what a caller needs of the files without loading them again.
    """
    rules = enabled_rules(settings)
    ctx = Context(targets=settings.targets, options=settings.options)
    # what an earlier run in this process saw around the skills may have changed since
    forget_outside()

    # the directories being linted: a SKILL.md symlinked to a file inside them is read
    trees = tuple(os.path.realpath(p) for p in paths if os.path.isdir(p))
    listings = Listings()
    run = CheckRun(rules, ctx, settings, keep, trees, extra, listings, progress)
    try:  # skills are checked (by workers) while the search goes on
        with stage("discovery (search for skills)"):
            found = discover(
                paths,
                exclude=settings.exclude,
                exclude_root=settings.config_root,
                respect_gitignore=settings.respect_gitignore,
                on_skill=run.add,
                listings=listings,
            )
        if progress is not None:
            progress.searched()
        checked = run.finish(found.skills)
    finally:
        run.close()
    skills = checked.summaries
    diagnostics = [diag for skill in skills for diag in skill.diagnostics]
    with stage("collection rules (all skills together)"):
        diagnostics.extend(collection_diagnostics(checked, rules, ctx))
    _add_walk_problems(found, skills)
    diagnostics.extend(run_rules(DiscoveryInput(found), rules, ctx))

    with stage("suppressions"):
        diagnostics = apply_suppressions(diagnostics, skills, rules, ctx)
    ignored = per_path_filter(settings)
    if ignored is not None:
        diagnostics = [d for d in diagnostics if not ignored(d)]
    diagnostics = _unique(diagnostics)
    diagnostics.sort(key=Diagnostic.sort_key)
    diagnostics = fold_repeats(diagnostics, {r.code for r in rules if r.folds_repeats})
    outcomes: dict[Path, dict[str, Outcome]] = {}
    for skill in skills:
        outcomes[skill.root] = dict.fromkeys(settings.targets, Outcome.OK)
    for diag in diagnostics:
        if diag.skill in outcomes:
            per = outcomes[diag.skill]
            for target, outcome in diag.outcomes.items():
                per[target] = max(per[target], outcome)
    return LintResult(
        skills,
        diagnostics,
        settings.targets,
        outcomes,
        found,
        tokenizer=str(settings.options.get("tokenizer") or "estimate"),
        loaded=checked.loaded,
        how=checked.how,
        extras=checked.extras,
        limits=limits_of(ctx),
    )


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One diagnostic per finding: a file of a nested skill is also in its container's walk,
    and a rule that scans every file of both reports it twice. The innermost skill keeps it
    (its root is the longest, and it is the one the file belongs to)."""
    best: dict[tuple[object, ...], Diagnostic] = {}
    for diag in diagnostics:
        key: tuple[object, ...] = (diag.code, diag.path, diag.line, diag.column)
        key += (diag.end_line, diag.end_column, diag.message)
        seen = best.get(key)
        if seen is None or _depth(diag.skill) > _depth(seen.skill):
            best[key] = diag
    if len(best) == len(diagnostics):
        return diagnostics
    kept = {id(diag) for diag in best.values()}
    return [diag for diag in diagnostics if id(diag) in kept]


def fold_repeats(diagnostics: list[Diagnostic], codes: set[str]) -> list[Diagnostic]:
    """One diagnostic per rule of ``codes``, file and message: a missing target named 16,000
    times on one line (or 57 links into one missing folder) is one problem, reported at its
    first place
    with "and N more places in this file" and every other place in ``related`` (JSON and
    SARIF list them). Sorted input; findings with a fix stay apart (each fix is its own edit).
    Runs after suppressions, so a disabled line does not hide the other places."""
    first: dict[tuple[object, ...], Diagnostic] = {}
    more: dict[int, list[tuple[int, int, int, int]]] = {}
    out: list[Diagnostic] = []
    for diag in diagnostics:
        if diag.fix is not None or diag.suggestion is not None or diag.code not in codes:
            out.append(diag)
            continue
        key = (diag.code, diag.path, diag.severity, diag.message, diag.skill)
        seen = first.get(key)
        if seen is None:
            first[key] = diag
            out.append(diag)
            continue
        more.setdefault(id(seen), []).append(
            (diag.line, diag.column, diag.end_line, diag.end_column)
        )
    if not more:
        return diagnostics
    for diag in out:
        places = more.get(id(diag))
        if places:
            n = len(places)
            diag.message += f" (and {n} more place{'s' if n > 1 else ''} in this file)"
            diag.related = diag.related + tuple(places)
    return out


def _depth(root: Path | None) -> int:
    return len(root.parts) if root is not None else -1


def _add_walk_problems(found: Discovery, skills: list[SkillSummary]) -> None:
    """What the walk of a skill could not list is unchecked too (SK100): the search does not
    see it when PATH is a file inside the skill, and the walk has its own bounds."""
    seen = {problem.path for problem in found.problems}
    for skill in skills:
        for path, reason in skill.walk_errors:
            if path in seen:
                continue
            seen.add(path)
            if "not checked" in reason:  # a bound of the walk (depth, entry count)
                # an error: a skill that was only partly checked must not pass (a secret or
                # an escaping link past the bound would go unseen)
                found.problems.append(Problem(path, f"{reason}; the skill cannot pass"))
            else:
                found.problems.append(
                    Problem(path, f"cannot be read ({reason}); files in it were not checked")
                )
