"""Check one skill (or the collection) with the enabled rules: findings to Diagnostics.

Moved out of ``lint.py`` so the engine, suppressions and fixes use it without importing the
library entry point (``lint.lint``) that sits above them: the layers stay acyclic.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillcheck.analysis.fragments import fragment_evidence
from skillcheck.errors import InternalError
from skillcheck.rules import Context, Rule, all_rules
from skillcheck.rules.base import (
    CollectionRule,
    DiscoveryRule,
    SkillRule,
    SuppressionComment,
    SuppressionsRule,
)
from skillcheck.settings import Settings
from skillcheck.source.discover import Discovery
from skillcheck.source.frontmatter import substring_view
from skillcheck.source.skill import (
    Diagnostic,
    Finding,
    Impact,
    Memos,
    Outcome,
    Severity,
    Skill,
    SkillSummary,
    Span,
)
from skillcheck.source.stop import STOP, Stopped
from skillcheck.targets import TARGETS


def rule_failed(rule: Rule, where: str, exc: Exception) -> InternalError:
    """A bug in a rule as an InternalError naming the rule (and the skill): exit 2 with a
    one-line message, never a silent pass and never a traceback."""
    place = f" on {where}" if where else ""
    return InternalError(
        f"rule {rule.code} ({rule.slug}) failed{place}: {type(exc).__name__}: {exc}"
    )


def enabled_rules(settings: Settings) -> list[Rule]:
    """The rules a run with ``settings`` checks: the selected ones, else the default set."""
    rules = all_rules()
    if settings.select is None:
        return [r for r in rules if r.default_enabled]
    return [r for r in rules if r.code in settings.select]


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
        suggestion=finding.suggestion,
    )


# --- the one dispatcher ---------------------------------------------------------------


@dataclass(frozen=True)
class SkillInput:
    skill: Skill


@dataclass(frozen=True)
class CollectionInput:
    summaries: list[SkillSummary]


@dataclass(frozen=True)
class DiscoveryInput:
    discovery: Discovery


@dataclass(frozen=True)
class SuppressionsInput:
    summary: SkillSummary
    comments: Sequence[SuppressionComment]


Subject = SkillInput | CollectionInput | DiscoveryInput | SuppressionsInput


Owner = Skill | SkillSummary | None


def dispatch(
    subject: Subject, rules: Iterable[Rule], ctx: Context, where: str = ""
) -> Iterator[tuple[Rule, Owner, Finding]]:
    """Run every rule that reads ``subject``'s kind of input over it: (rule, owner, finding).

    The one loop that calls checks, for every kind (``rules.base.Input``). A rule that raises
    becomes an InternalError naming it (``rule_failed``) and ``where``. One try for all rules,
    not one per rule, and no generator per rule: for skills this runs 80 times a skill.
    """
    rule = None
    stop = STOP.get()  # looked up once: the check between rules is one attribute read
    try:
        if isinstance(subject, SkillInput):
            skill = subject.skill
            for rule in rules:
                if stop is not None and stop.is_set():
                    raise Stopped
                if isinstance(rule, SkillRule):
                    for finding in rule.check(skill, ctx):
                        yield rule, skill, finding
        elif isinstance(subject, CollectionInput):
            for rule in rules:
                if stop is not None and stop.is_set():
                    raise Stopped
                if isinstance(rule, CollectionRule):
                    for summary, finding in rule.check(subject.summaries, ctx):
                        yield rule, summary, finding
        elif isinstance(subject, DiscoveryInput):
            for rule in rules:
                if isinstance(rule, DiscoveryRule):
                    for _none, finding in rule.check(subject.discovery, ctx):
                        yield rule, None, finding
        else:
            for rule in rules:
                if isinstance(rule, SuppressionsRule):
                    for finding in rule.check(subject.summary, ctx, subject.comments):
                        yield rule, subject.summary, finding
    except InternalError:
        raise
    except Exception as exc:
        assert rule is not None
        raise rule_failed(rule, where, exc) from exc


def run_rules(
    subject: Subject, rules: Iterable[Rule], ctx: Context, where: str = ""
) -> list[Diagnostic]:
    """The diagnostics of every rule that reads ``subject`` (see ``dispatch``)."""
    out: list[Diagnostic] = []
    for rule, owner, finding in dispatch(subject, rules, ctx, where):
        diag = make_diagnostic(rule, finding, owner, ctx.targets)
        if diag is not None:
            out.append(diag)
    return out


def check_skill(skill: Skill, rules: Iterable[Rule], ctx: Context) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    views = _views(skill, ctx)
    for view, view_ctx, main in views:
        for rule, _view, finding in dispatch(SkillInput(view), rules, view_ctx, skill.display_root):
            if not main and finding.impact is None:
                continue  # about the file, not a loader's reading: reported once
            if not main:
                finding.fix = finding.suggestion = None  # edits are of the file as written
            diag = make_diagnostic(rule, finding, skill, view_ctx.targets)
            if diag is not None:
                out.append(diag)
    if len(views) > 1:
        out = _merge(out, ctx.targets)
    if fragment_evidence(skill) is not None:
        # not a skill but a fragment merged into one at build time: SK103 says so (and
        # names `exclude`); what other rules say of a skill does not apply to it
        out = [d for d in out if d.code == "SK103"]
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

    views: list[tuple[Skill, Context, bool]] = []
    moved: set[str] = set()
    # one view per YAML dialect: skills-ref parses the cut as strictyaml, Claude Code does not
    for strict in (True, False):
        group = tuple(t for t in split if TARGETS[t].strict_yaml is strict)
        doc = substring_view(skill.doc, strict=strict) if group else None
        if doc is None:
            continue
        view = dataclasses.replace(skill, doc=doc, memos=Memos())  # files stay shared
        views.append((view, dataclasses.replace(ctx, targets=group), False))
        moved.update(group)
    if not views:
        return [(skill, ctx, True)]
    rest = tuple(t for t in ctx.targets if t not in moved)
    return [(skill, dataclasses.replace(ctx, targets=rest), True), *views]


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
    return _cap_for_parity(run_rules(CollectionInput(skills), rules, ctx), ctx.targets)


def per_path_filter(settings: Settings) -> Any:
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
