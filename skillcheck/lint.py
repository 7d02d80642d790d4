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

import contextlib
import dataclasses
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck.discover import Discovery, Problem, discover
from skillcheck.model import (
    Diagnostic,
    Finding,
    Impact,
    Outcome,
    Severity,
    Skill,
    SkillSummary,
    Span,
)
from skillcheck.rules import Context, Rule, all_rules
from skillcheck.targets import DEFAULT_TARGETS, TARGETS


class InternalError(Exception):
    """A bug in skillcheck: reported as exit 2 with the rule and path."""


def rule_failed(rule: Rule, where: str, exc: Exception) -> InternalError:
    """A bug in a rule as an InternalError naming the rule (and the skill): exit 2 with a
    one-line message, never a silent pass and never a traceback."""
    place = f" on {where}" if where else ""
    return InternalError(
        f"rule {rule.code} ({rule.slug}) failed{place}: {type(exc).__name__}: {exc}"
    )


@contextlib.contextmanager
def guarded(rule: Rule, where: str = "") -> Iterator[None]:
    """Run one rule's check under ``rule_failed``."""
    try:
        yield
    except InternalError:
        raise
    except Exception as exc:
        raise rule_failed(rule, where, exc) from exc


@dataclass
class Settings:
    """Everything that shapes a run, after config and command line are merged."""

    targets: tuple[str, ...] = DEFAULT_TARGETS
    select: frozenset[str] | None = None  # rule codes; None = every rule
    strict: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    # (gitignore-style patterns relative to config_root, rule codes)
    per_path_ignores: list[tuple[list[str], frozenset[str]]] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    config_root: Path | None = None
    respect_gitignore: bool = True
    jobs: int = 1  # processes checking skills; the command line defaults to the CPUs
    cache_dir: Path | None = None  # the result cache's directory; None: no cache
    # count tokens per tier of every skill (the JSON report and --statistics show them)
    figures: bool = True

    def enabled(self) -> list[Rule]:
        rules = all_rules()
        if self.select is None:
            return [r for r in rules if r.default_enabled]
        return [r for r in rules if r.code in self.select]


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

    def statistics_table(self) -> list[str]:
        """Tokens per tier and lines of each skill (``--statistics``), shared with SK6xx."""
        from skillcheck.rules.budgets import statistics_table

        return statistics_table(self.skills, self.tokenizer)

    def for_skill(self, skill: Skill | SkillSummary) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.skill == skill.root]

    def errors_for(self, skill: Skill | SkillSummary) -> list[Diagnostic]:
        return [d for d in self.for_skill(skill) if d.severity is Severity.ERROR]

    def failed(self, strict: bool) -> bool:
        if strict:
            return bool(self.diagnostics)
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def counts(self) -> dict[Severity, int]:
        out = dict.fromkeys(Severity, 0)
        for d in self.diagnostics:
            out[d.severity] += 1
        return out


def make_diagnostic(
    rule: Rule, finding: Finding, skill: Skill | SkillSummary | None, targets: tuple[str, ...]
) -> Diagnostic | None:
    """Apply the active targets to a finding; None when it affects none of them."""
    outcomes: dict[str, Outcome] = {}
    if finding.impact is None:
        severity = finding.severity or rule.severity
        affected: tuple[str, ...] = ()
    else:
        active = {t: i for t, i in finding.impact.items() if t in targets}
        if not active:
            return None
        severity = max(_target_severity(t, i) for t, i in active.items())
        affected = tuple(t for t in targets if t in active)
        outcomes = {t: active[t].outcome for t in affected}
    path = finding.path
    if path is None:
        path = (skill.skill_md or skill.root) if skill is not None else Path.cwd()
    span: Span = finding.span
    return Diagnostic(
        code=rule.code,
        slug=rule.slug,
        severity=severity,
        message=finding.message,
        path=path,
        line=span.start.line,
        column=span.start.column,
        end_line=span.end.line,
        end_column=span.end.column,
        targets=affected,
        fix=finding.fix,
        help=finding.help,
        skill=skill.root if skill is not None else None,
        outcomes=outcomes,
    )


def check_skill(skill: Skill, rules: Iterable[Rule], ctx: Context) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    views = _views(skill, ctx)
    for view, view_ctx, main in views:
        rule = None
        # one try for all rules (not `guarded` per rule): this loop runs 70 times a skill
        try:
            for rule in rules:
                if rule.scope != "skill":
                    continue
                for finding in rule.check(view, view_ctx):
                    if not main and finding.impact is None:
                        continue  # about the file, not a loader's reading: reported once
                    if not main:
                        finding.fix = None  # edits are planned on the file as written
                    diag = make_diagnostic(rule, finding, skill, view_ctx.targets)
                    if diag is not None:
                        out.append(diag)
        except InternalError:
            raise
        except Exception as exc:
            assert rule is not None
            raise rule_failed(rule, skill.display_root, exc) from exc
    if len(views) > 1:
        out = _merge(out, ctx.targets)
    return _cap_for_parity(out, ctx.targets)


def _views(skill: Skill, ctx: Context) -> list[tuple[Skill, Context, bool]]:
    """The skill as each group of active targets reads it: (skill, context, main reading).

    Loaders that cut the frontmatter at a raw `---` substring (skills-ref) may see another
    frontmatter than the line-based reading; when they do, every rule checks that reading
    for them, so an error for skills-ref means what skills-ref itself reports.
    """
    split = tuple(t for t in ctx.targets if TARGETS[t].substring_split)
    if not split or skill.doc is None:
        return [(skill, ctx, True)]
    from skillcheck.parse import substring_view

    doc = substring_view(skill.doc, strict=all(TARGETS[t].strict_yaml for t in split))
    if doc is None:
        return [(skill, ctx, True)]
    rest = tuple(t for t in ctx.targets if t not in split)
    view = dataclasses.replace(skill, doc=doc, derived={})  # files stay shared: read once
    return [
        (skill, dataclasses.replace(ctx, targets=rest), True),
        (view, dataclasses.replace(ctx, targets=split), False),
    ]


def _merge(diagnostics: list[Diagnostic], order: tuple[str, ...]) -> list[Diagnostic]:
    """One diagnostic for the same finding made on two readings, with both readings' targets
    (and the main reading's message, which may name other targets than the view's)."""
    first: dict[tuple, Diagnostic] = {}
    out: list[Diagnostic] = []
    for diag in diagnostics:
        key = (diag.code, diag.path, diag.line, diag.column, diag.end_line, diag.end_column)
        seen = first.get(key)
        if seen is None:
            first[key] = diag
            out.append(diag)
            continue
        seen.severity = max(seen.severity, diag.severity)
        seen.outcomes.update(diag.outcomes)
        seen.targets = tuple(t for t in order if t in seen.targets or t in diag.targets)
    return out


def _target_severity(target: str, found: Impact) -> Severity:
    """An error for a strict-parity target (skills-ref) means the loader rejects the skill:
    a finding it loads past (ok, degraded) is at most a warning for it."""
    if TARGETS[target].strict_parity and found.outcome < Outcome.REJECTED:
        return min(found.severity, Severity.WARNING)
    return found.severity


def _cap_for_parity(diagnostics: list[Diagnostic], targets: tuple[str, ...]) -> list[Diagnostic]:
    """For targets whose errors mean "the loader rejects it" (skills-ref), runtime-independent
    findings (budgets, hygiene) are warnings: that loader does not reject on those grounds."""
    if not targets or not all(TARGETS[t].strict_parity for t in targets):
        return diagnostics
    for diag in diagnostics:
        if not diag.targets and diag.severity is Severity.ERROR:
            diag.severity = Severity.WARNING
    return diagnostics


def check_collection(
    skills: list[SkillSummary], rules: Iterable[Rule], ctx: Context
) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for rule in rules:
        if rule.scope != "collection":
            continue
        with guarded(rule):
            for skill, finding in rule.check(skills, ctx):
                diag = make_diagnostic(rule, finding, skill, ctx.targets)
                if diag is not None:
                    out.append(diag)
    return _cap_for_parity(out, ctx.targets)


def _per_path_filter(settings: Settings) -> Any:
    if not settings.per_path_ignores:
        return None
    import pathspec

    root = settings.config_root or Path.cwd()
    compiled = [
        (pathspec.GitIgnoreSpec.from_lines(patterns), codes)
        for patterns, codes in settings.per_path_ignores
    ]

    def ignored(diag: Diagnostic) -> bool:
        rel = os.path.relpath(diag.path, root).replace(os.sep, "/")
        return any(diag.code in codes and spec.match_file(rel) for spec, codes in compiled)

    return ignored


def lint(
    paths: list[Path],
    settings: Settings,
    *,
    keep: bool = False,
    progress: Callable[[Path], None] | None = None,
) -> LintResult:
    """Lint every skill under ``paths``. Raises PathError for a PATH that does not exist.

    ``keep`` also returns every Skill, loaded, in ``result.loaded``, for the commands that
    go on to read the skills' files (catalog, pack, --fix). A skill checked in a worker or
    taken from the cache is loaded again here; if it no longer holds what it was checked
    from (edited meanwhile), it is checked again as loaded.
    """
    rules = settings.enabled()
    ctx = Context(targets=settings.targets, options=settings.options)
    from skillcheck.engine import CheckRun, collection_diagnostics

    # the directories being linted: a SKILL.md symlinked to a file inside them is read
    trees = tuple(os.path.realpath(p) for p in paths if os.path.isdir(p))
    run = CheckRun(rules, ctx, settings, keep, trees)
    try:  # skills are checked (by workers) while the search goes on
        found = discover(
            paths,
            exclude=settings.exclude,
            exclude_root=settings.config_root,
            respect_gitignore=settings.respect_gitignore,
            on_skill=run.add if progress is None else _both(run.add, progress),
        )
        checked = run.finish(found.skills)
    finally:
        run.close()
    skills = checked.summaries
    diagnostics = [diag for skill in skills for diag in skill.diagnostics]
    diagnostics.extend(collection_diagnostics(checked, rules, ctx))
    _add_walk_problems(found, skills)
    diagnostics.extend(_discovery_diagnostics(found, rules, ctx))
    from skillcheck.suppress import apply_suppressions

    diagnostics = apply_suppressions(diagnostics, skills, rules, ctx)
    ignored = _per_path_filter(settings)
    if ignored is not None:
        diagnostics = [d for d in diagnostics if not ignored(d)]
    diagnostics = _unique(diagnostics)
    diagnostics.sort(key=Diagnostic.sort_key)
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
    )


def _both(first: Callable[[Path], None], second: Callable[[Path], None]) -> Callable[[Path], None]:
    def call(root: Path) -> None:
        first(root)
        second(root)

    return call


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """One diagnostic per finding: a file of a nested skill is also in its container's walk,
    and a rule that scans every file of both reports it twice. The innermost skill keeps it
    (its root is the longest, and it is the one the file belongs to)."""
    best: dict[tuple, Diagnostic] = {}
    for diag in diagnostics:
        key = (diag.code, diag.path, diag.line, diag.column, diag.end_line, diag.end_column)
        key += (diag.message,)
        seen = best.get(key)
        if seen is None or _depth(diag.skill) > _depth(seen.skill):
            best[key] = diag
    if len(best) == len(diagnostics):
        return diagnostics
    kept = {id(diag) for diag in best.values()}
    return [diag for diag in diagnostics if id(diag) in kept]


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


def _discovery_diagnostics(found: Discovery, rules: list[Rule], ctx: Context) -> list[Diagnostic]:
    out = []
    for rule in rules:
        if rule.scope != "discovery":
            continue
        with guarded(rule):
            for _none, finding in rule.check(found, ctx):
                diag = make_diagnostic(rule, finding, None, ctx.targets)
                if diag is not None:
                    out.append(diag)
    return out
