"""Human output in the manner of ruff: location, code, message, excerpt with a caret, help."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skillcheck.report import Chunks, ReportOptions, Sink, grid, inert_lines, rel, safe
from skillcheck.rules import all_rules
from skillcheck.source.display import cell_width
from skillcheck.source.skill import Diagnostic, Severity
from skillcheck.targets import TARGETS

_COLORS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}
MAX_EXCERPT = 160


@functools.cache
def _unquoted() -> frozenset[str]:
    """Rules whose finding's line is never quoted (SK702's holds a secret)."""
    return frozenset(r.code for r in all_rules() if not r.quote_source)


@functools.cache
def _security() -> frozenset[str]:
    """Rules whose findings the report lists first (those GitHub ranks by security-severity)."""
    return frozenset(r.code for r in all_rules() if r.security_severity is not None)


def _security_first(diagnostics: list[Diagnostic]) -> Iterator[Diagnostic]:
    """Security findings first (what a reviewer must see before anything else), then the
    rest, each group in the run's order."""
    security = _security()
    yield from (d for d in diagnostics if d.code in security)
    yield from (d for d in diagnostics if d.code not in security)


def _paint(text: str, code: str, on: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if on else text


def _line_of(path: Path, line: int, by_file: dict[Path, Any]) -> str | None:
    """The line a diagnostic points at, as kept in its skill's summary."""
    skill = by_file.get(path)
    return skill.line(path, line) if skill is not None else None


def _excerpt(diag: Diagnostic, source: str, color: bool) -> list[str]:
    number = str(diag.line)
    pad = " " * len(number)
    shown = source.expandtabs(1)
    start = max(diag.column - 1, 0)
    offset = 0
    if len(shown) > MAX_EXCERPT:  # keep the caret in view on long lines
        offset = max(0, start - MAX_EXCERPT // 2)
        shown = ("…" if offset else "") + shown[offset : offset + MAX_EXCERPT] + "…"
        start = start - offset + (1 if offset else 0)
    width = 1
    if diag.end_line == diag.line and diag.end_column > diag.column:
        width = diag.end_column - diag.column
    # placed in terminal columns of the text as printed (wide CJK and emoji take two, an
    # escaped control its escape), not in code points
    before = cell_width(safe(shown[:start]))
    under = max(1, cell_width(safe(shown[start : start + width])))
    caret = " " * before + "^" * under
    return [
        f"{pad} |",
        f"{number} | {safe(shown)}",
        f"{pad} | {_paint(caret, _COLORS[diag.severity], color)}",
    ]


def write(result, options: ReportOptions, sink: Sink) -> None:
    chunks = Chunks(sink)

    def out(line: str) -> None:
        # every line made inert on its own, as the whole text would be (inert_lines is per line)
        chunks.add(inert_lines(line) + "\n")

    # every file a finding points at, not only SKILL.md: its summary keeps the quoted lines
    by_file = {path: s for s in result.skills for path in s.lines}
    color = options.color
    for diag in _security_first(result.diagnostics):
        where = f"{safe(rel(diag.path, options.cwd))}:{diag.line}:{diag.column}:"
        severity = _paint(f"[{diag.severity}]", _COLORS[diag.severity], color)
        code = _paint(diag.code, "1", color)
        # [*]: --fix resolves it (ruff's marker)
        fixable = f" {_paint('[*]', '32', color)}" if diag.fix is not None else ""
        out(
            f"{_paint(where, '1', color)} {code} {severity} {safe(diag.message)} ({diag.slug})"
            + fixable
        )
        shown_fix = f"  = fix: {safe(diag.fix.description)}" if diag.fix is not None else None
        if options.quiet:
            if options.show_fixes and shown_fix:
                out(shown_fix)
            continue
        source = _line_of(diag.path, diag.line, by_file)
        if source is not None and diag.code not in _unquoted():
            for line in _excerpt(diag, source, color):
                out(line)
        if diag.help:
            out(f"  = help: {safe(diag.help)}")
        if options.show_fixes and shown_fix:
            out(shown_fix)
        if diag.targets and diag.targets != ("agentskills",):
            out(f"  = targets: {', '.join(diag.targets)}")
        out("")
    if not options.quiet:
        for line in grid.text_lines(
            result,
            lambda root: rel(root, options.cwd),
            options.outcome_rules,
            lambda text, code: _paint(text, code, color),
        ):
            out(line)
    if options.statistics:
        for line in _statistics(result):
            out(line)
    if not options.quiet:
        out(summary(result, options))
    chunks.flush()


def render(result, options: ReportOptions) -> str:
    parts: list[str] = []
    write(result, options, parts.append)
    return "".join(parts)


def _statistics(result) -> list[str]:
    counts: dict[tuple[str, str], int] = {}
    for diag in result.diagnostics:
        key = (diag.code, diag.slug)
        counts[key] = counts.get(key, 0) + 1
    lines = [
        f"{n:5d}  {code}  {slug}"
        for (code, slug), n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    extra = getattr(result, "statistics_table", None)
    if extra:
        table = extra()
        lines.extend([""] * bool(lines and table) + table)
    return [*lines, ""] if lines else []


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _targets_note(result) -> str:
    """`` (targets: claude-code, codex; ...)``: which runtimes were checked, and once when the
    specification was not among them."""
    targets = tuple(getattr(result, "targets", ()) or ())
    if not targets:
        return ""

    word = "target" if len(targets) == 1 else "targets"
    names = "all" if len(targets) > 1 and set(targets) == set(TARGETS) else ", ".join(targets)
    note = f" ({word}: {names}"
    if "agentskills" not in targets:
        note += "; the Agent Skills specification was not checked: add --target agentskills"
    return note + ")"


def _hidden_note(options: ReportOptions) -> str:
    hidden = {k: v for k, v in (options.hidden or {}).items() if v}
    if not hidden:
        return ""
    parts = [
        f"{n} info" if name == "info" else _plural(n, name)
        for name in ("warning", "info")
        if (n := hidden.get(name))
    ]
    return f" {' and '.join(parts)} hidden by --min-severity."


def summary(result, options: ReportOptions) -> str:
    return _summary(result, options) + _hidden_note(options)


def _summary(result, options: ReportOptions) -> str:
    counts = result.counts()
    skills = _plural(len(result.skills), "skill") + _targets_note(result)
    fixed = getattr(result, "fixed", 0)
    done = f"Fixed {_plural(fixed, 'finding')}. " if fixed else ""  # by --fix
    if not result.diagnostics:
        return f"{done}All checks passed: {skills}."
    parts = []
    for severity, word in (
        (Severity.ERROR, "error"),
        (Severity.WARNING, "warning"),
        (Severity.INFO, "info"),
    ):
        if counts[severity]:
            parts.append(
                _plural(counts[severity], word) if word != "info" else f"{counts[severity]} info"
            )
    text = (
        "Found "
        + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])
        + f" in {skills}"
    )
    fixable = sum(1 for d in result.diagnostics if d.fix is not None)
    if fixable and options.fix_hint:
        text += f"; {fixable} fixable with --fix [*]"
    return done + text + "."
