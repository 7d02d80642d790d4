"""Check one skill (or the collection) with the enabled rules: findings to Diagnostics.

Moved out of ``lint.py`` so the engine, suppressions and fixes use it without importing the
library entry point (``lint.lint``) that sits above them: the layers stay acyclic.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from skillcheck.errors import InternalError
from skillcheck.rules import Context, Rule, all_rules
from skillcheck.settings import Settings
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
from skillcheck.targets import TARGETS


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

    doc = substring_view(skill.doc, strict=all(TARGETS[t].strict_yaml for t in split))
    if doc is None:
        return [(skill, ctx, True)]
    rest = tuple(t for t in ctx.targets if t not in split)
    view = dataclasses.replace(skill, doc=doc, memos=Memos())  # files stay shared: read once
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


def check_scope(scope: str, subject: Any, rules: Iterable[Rule], ctx: Context) -> list[Diagnostic]:
    """Run the rules of one non-skill ``scope`` over ``subject`` (the summaries for
    "collection", the discovery result for "discovery"), each guarded."""
    out: list[Diagnostic] = []
    for rule in rules:
        if rule.scope != scope:
            continue
        with guarded(rule):
            for skill, finding in rule.check(subject, ctx):
                diag = make_diagnostic(rule, finding, skill, ctx.targets)
                if diag is not None:
                    out.append(diag)
    return out


def check_collection(
    skills: list[SkillSummary], rules: Iterable[Rule], ctx: Context
) -> list[Diagnostic]:
    return _cap_for_parity(check_scope("collection", skills, rules, ctx), ctx.targets)


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
