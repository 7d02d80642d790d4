"""What the Language Server computes, without any LSP machinery: check an editor buffer,
turn fixes into text edits, find the rule under the cursor, complete frontmatter.

Positions here are 0-based lines and 0-based columns in code points of the buffer's text,
with lines split as ``text.split_lines`` splits them (LF, CRLF, lone CR: what the Language
Server Protocol counts as line breaks); the server converts columns to the client's units.
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from skillcheck.engine.check import enabled_rules
from skillcheck.engine.config import build_settings
from skillcheck.engine.lint import lint
from skillcheck.engine.suppress import find_suppressions
from skillcheck.errors import ConfigError
from skillcheck.fix import _relint, plan_fixes
from skillcheck.rules import Input, get_rule
from skillcheck.settings import load_config
from skillcheck.source.frontmatter import parse_document
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import find_skill_md, load_skill
from skillcheck.source.markdown import MARKDOWN_SUFFIXES
from skillcheck.source.skill import Diagnostic, Fix, Memos, Skill
from skillcheck.source.text import offset_pos, split_lines
from skillcheck.targets import TARGETS

Position = tuple[int, int]  # (line, column), 0-based, column in code points


@dataclass(frozen=True)
class Edit:
    start: Position
    end: Position
    text: str


@dataclass
class Action:
    title: str
    kind: str  # "quickfix" or "source.fixAll"
    edits: list[Edit]
    diagnostic: Diagnostic | None = None
    preferred: bool = False


@dataclass
class Checked:
    """One buffer checked: its diagnostics (this file's only) and what the actions need."""

    path: Path
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    skill: Skill | None = None
    settings: Any = None
    problem: str | None = None  # a configuration error: reported instead of diagnostics


def is_skill_markdown(path: Path) -> bool:
    return path.suffix.lower() in MARKDOWN_SUFFIXES and skill_root(path) is not None


def skill_root(path: Path) -> Path | None:
    """The nearest directory holding ``path`` that has a SKILL.md (a skill's file)."""

    if path.name.lower() == "skill.md":
        return path.parent
    for directory in path.parents:
        if find_skill_md(directory) is not None:
            return directory
    return None


def settings_for(path: Path) -> Any:
    """The settings the command line would use when started in the file's directory (the
    configuration found walking up from it). Raises ConfigError. Never writes a cache, never
    starts processes: the server works in its own threads."""

    settings = build_settings(load_config(cwd=path.parent))
    return dataclasses.replace(settings, jobs=1, cache_dir=None, figures=False)


def _same_file(a: Path | None, b: Path) -> bool:
    if a is None:
        return False
    if a == b:
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def load_with_buffer(path: Path, text: str) -> Skill | None:
    """The skill holding ``path`` as on disk, except that ``path`` holds the buffer's text."""

    root = skill_root(path)
    if root is None:
        return None
    skill = load_skill(root, root.name)
    data = text.encode("utf-8", "surrogatepass")
    if skill.skill_md is None and path.name.lower() == "skill.md":
        skill.skill_md = path  # a SKILL.md not saved yet
    if _same_file(skill.skill_md, path):
        assert skill.skill_md is not None
        skill.doc = parse_document(skill.skill_md, data, len(data))
        skill.read_error = None
        skill.contents.pop(skill.skill_md.relative_to(root).as_posix(), None)
        return skill
    rel = path.relative_to(root).as_posix()
    entry = skill.file(rel)
    if entry is not None:
        entry.size = len(data)
    skill.contents[rel] = data
    return skill


def check_buffer(path: Path, text: str) -> Checked:
    """The skill rules' diagnostics for ``path`` holding ``text`` (nothing on disk changes)."""

    result = Checked(path, text)
    try:
        result.settings = settings_for(path)
    except ConfigError as exc:
        result.problem = str(exc)
        return result
    skill = load_with_buffer(path, text)
    if skill is None:
        return result
    result.skill = skill
    result.diagnostics = [d for d in _relint(skill, result.settings) if d.path == path]
    return result


def collection_diagnostics(path: Path, scope: Path | None) -> list[Diagnostic]:
    """Findings of the rules over several skills (duplicate names...) for ``path`` as saved,
    from a lint of ``scope`` (the workspace folder, else the directory of the skills)."""

    root = skill_root(path)
    if root is None:
        return []
    try:
        settings = settings_for(path)
    except ConfigError:
        return []  # check_buffer reports it
    collection = {r.code for r in enabled_rules(settings) if r.reads is Input.COLLECTION}
    if not collection:
        return []
    where = scope if scope is not None and root.is_relative_to(scope) else root.parent
    where = (
        settings.config_root
        if settings.config_root and root.is_relative_to(settings.config_root)
        else where
    )
    result = lint([where], settings)
    return [d for d in result.diagnostics if d.code in collection and _same_file(d.path, path)]


# --- positions ------------------------------------------------------------------------------


# Client columns of a long line are measured from the nearest of these marks (every _STEP
# code points), each measured once: publishing thousands of diagnostics on a megabyte line
# measured the line's head for each of them.
_STEP = 1024


def client_units(line: str, column: int, encoding: str) -> int:
    """``line[:column]``'s length in the client's units: code points (``utf-32``), UTF-8
    bytes (``utf-8``) or UTF-16 code units (``utf-16``, the protocol's default)."""
    if line.isascii() or encoding == "utf-32":  # one unit a code point (isascii is O(1))
        return min(column, len(line)) if column >= 0 else len(line[:column])
    step = min(column, len(line)) // _STEP
    if step <= 0:
        return _measure(line[:column], encoding)
    return _marks(line, encoding)[step - 1] + _measure(line[step * _STEP : column], encoding)


def _measure(text: str, encoding: str) -> int:
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


@functools.lru_cache(maxsize=8)  # the long lines of the buffers being converted
def _marks(line: str, encoding: str) -> list[int]:
    """The units before code point _STEP, 2 * _STEP, ... of ``line``."""
    marks = []
    total = 0
    for start in range(0, len(line) - _STEP + 1, _STEP):
        total += _measure(line[start : start + _STEP], encoding)
        marks.append(total)
    return marks


def _position_of_text(prefix: str) -> Position:
    """Where the text after ``prefix`` starts, 0-based."""
    pos = offset_pos(prefix, len(prefix))
    return pos.line - 1, pos.column - 1


def position_at_byte(data: bytes, offset: int) -> Position:
    return _position_of_text(data[:offset].decode("utf-8", "replace"))


def diagnostic_range(diag: Diagnostic, text: str) -> tuple[Position, Position]:
    """The diagnostic's range in the buffer (a BOM in the buffer shifts line 1: rules count
    columns in the text without it)."""
    shift = 1 if text.startswith("\ufeff") else 0
    start = (max(diag.line - 1, 0), max(diag.column - 1, 0) + (shift if diag.line == 1 else 0))
    end = (max(diag.end_line - 1, 0), max(diag.end_column - 1, 0))
    end = (end[0], end[1] + (shift if diag.end_line == 1 else 0))
    return start, max(start, end)


def _edit_of(data: bytes, fix: Fix) -> Edit:
    return Edit(
        position_at_byte(data, fix.start),
        position_at_byte(data, fix.end),
        fix.replacement.decode("utf-8", "surrogateescape"),
    )


def _overlaps(a: tuple[Position, Position], b: tuple[Position, Position]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


# --- code actions ---------------------------------------------------------------------------


# Diagnostics of one request offered a "disable" comment. Each offer is proved by parsing the
# file with the comment inserted, and an editor asks for the actions of a whole selection: a
# file of 400 keys outside the specification took 1.35 s (quadratic: an hour at 20,000).
MAX_DISABLE = 20


def actions(checked: Checked, wanted: tuple[Position, Position]) -> list[Action]:
    """Quick fixes and "disable" edits for the diagnostics touching ``wanted``, and one
    "fix all" for the file when more than one fix applies.

    A fix shared by several diagnostics (one edit moves every unknown key under
    ``metadata``) is offered once, with the first of them; "disable" comments are offered
    for the first ``MAX_DISABLE`` diagnostics in the range."""
    data = checked.text.encode("utf-8", "surrogatepass")
    lines = split_lines(checked.text)
    offered: set[Fix] = set()
    disables = 0
    out: list[Action] = []
    for diag in checked.diagnostics:
        where = diagnostic_range(diag, checked.text)
        if not _overlaps(where, wanted):
            continue
        fix = diag.fix
        if fix is not None and fix not in offered and _same_file(fix.path, checked.path):
            offered.add(fix)
            out.append(
                Action(
                    f"{diag.code}: {fix.description}",
                    "quickfix",
                    [_edit_of(data, fix)],
                    diag,
                    preferred=True,
                )
            )
        suggestion = diag.suggestion
        if (
            suggestion is not None
            and suggestion not in offered
            and _same_file(suggestion.path, checked.path)
        ):
            # exact, but it changes meaning (a rename): offered, never preferred nor in fix all
            offered.add(suggestion)
            out.append(
                Action(
                    f"{diag.code}: {suggestion.description}",
                    "quickfix",
                    [_edit_of(data, suggestion)],
                    diag,
                )
            )
        if disables < MAX_DISABLE:
            disables += 1
            disable = disable_action(checked, diag, lines)
            if disable is not None:
                out.append(disable)
    fixable = [d for d in checked.diagnostics if d.fix is not None]
    if fixable:
        whole = fix_all(checked)
        if whole is not None:
            out.append(whole)
    return out


def fix_all(checked: Checked) -> Action | None:
    """Every safe fix of SKILL.md, applied in rounds as ``--fix`` applies them, as one edit."""

    skill = checked.skill
    if skill is None or skill.doc is None or not _same_file(skill.skill_md, checked.path):
        return None
    diagnostics = checked.diagnostics
    result = SimpleNamespace(loaded=[skill], for_skill=lambda _skill: diagnostics)
    plans = plan_fixes(result, checked.settings)
    if not plans:
        return None
    plan = plans[0]
    original = plan.original.decode("utf-8", "surrogateescape")
    end = _position_of_text(original)
    new_text = plan.fixed.decode("utf-8", "surrogateescape")
    title = f"skillcheck: fix all ({plan.findings} finding{'s' * (plan.findings != 1)})"
    return Action(title, "source.fixAll", [Edit((0, 0), end, new_text)])


_INDENT = LazyPattern(r"[ \t]*")


def disable_action(
    checked: Checked, diag: Diagnostic, lines: list[str] | None = None
) -> Action | None:
    """Insert a suppression comment for ``diag``: ``disable-next-line`` above a Markdown line,
    else (a frontmatter finding, or where a comment on the line above would not count)
    ``disable`` for the whole file, after the frontmatter. Offered only when the comment, once
    inserted, is found and covers the diagnostic."""

    skill = checked.skill
    if skill is None:
        return None
    in_skill_md = _same_file(skill.skill_md, checked.path)
    if in_skill_md and skill.doc is None:
        return None
    text = checked.text
    if lines is None:  # the buffer's lines (``split_lines``): a caller may pass them
        lines = split_lines(text)
    newline = "\r\n" if "\r\n" in text else "\n"
    body_line = skill.doc.body_line if in_skill_md and skill.doc is not None else 1
    tries: list[tuple[str, int, str]] = []
    if body_line <= diag.line <= len(lines):
        indent = _INDENT.match(lines[diag.line - 1])
        pad = indent.group() if indent else ""
        tries.append(
            (
                f"Disable {diag.code} for this line",
                diag.line - 1,
                f"{pad}<!-- skillcheck-disable-next-line {diag.code} -->{newline}",
            )
        )
    if body_line <= len(lines) + 1:
        tries.append(
            (
                f"Disable {diag.code} for this file",
                body_line - 1,
                f"<!-- skillcheck-disable {diag.code} -->{newline}",
            )
        )
    for title, line, comment in tries:
        if line >= len(lines):  # after the last line: the file may lack a final newline
            insert_at: Position = (len(lines) - 1, len(lines[-1]))
            if not text.endswith(("\n", "\r")):
                comment = newline + comment
        else:
            insert_at = (line, 0)
        if _suppresses(checked, insert_at, comment, diag, next_line=line < len(lines)):
            return Action(title, "quickfix", [Edit(insert_at, insert_at, comment)], diag)
    return None


def _offset(text: str, position: Position) -> int:

    lines = split_lines(text)
    offset = 0
    for index in range(position[0]):
        offset += len(lines[index])
        offset += 2 if text.startswith("\r\n", offset) else 1
    return offset + position[1]


def _suppresses(
    checked: Checked, at: Position, comment: str, diag: Diagnostic, *, next_line: bool
) -> bool:
    """Whether ``comment`` inserted at ``at`` is a suppression covering ``diag`` (moved down
    by the inserted line when the comment goes above it)."""

    skill = checked.skill
    assert skill is not None
    offset = _offset(checked.text, at)
    new_text = checked.text[:offset] + comment + checked.text[offset:]
    data = new_text.encode("utf-8", "surrogatepass")
    if _same_file(skill.skill_md, checked.path):
        assert skill.skill_md is not None
        doc = parse_document(skill.skill_md, data, len(data))
        view = dataclasses.replace(skill, doc=doc, contents={}, memos=Memos())
        where = None
    else:
        rel = checked.path.relative_to(skill.root).as_posix()
        view = dataclasses.replace(skill, contents={rel: data}, memos=Memos())
        where = checked.path
    added = comment.count("\n") if next_line and at[0] < diag.line else 0
    moved = dataclasses.replace(diag, line=diag.line + added)
    return any(
        s.covers(moved) and (s.path is None or _same_file(s.path, checked.path))
        for s in find_suppressions(view)
        if (s.path is None) == (where is None)
    )


# --- hover and completion -------------------------------------------------------------------


def hover(checked: Checked, position: Position) -> str | None:
    """The documentation of every rule whose diagnostic covers ``position``, as Markdown."""

    pages: list[str] = []
    for diag in checked.diagnostics:
        start, end = diagnostic_range(diag, checked.text)
        if not (start <= position <= max(end, (start[0], start[1] + 1))):
            continue
        rule = get_rule(diag.code)
        if rule is not None and rule.docs_markdown() not in pages:
            pages.append(rule.docs_markdown())
    return "\n\n---\n\n".join(pages) or None


_KEY = LazyPattern(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:")


@dataclass(frozen=True)
class Completion:
    label: str
    detail: str
    insert: str


def completions(
    path: Path, text: str, position: Position, targets: Iterable[str]
) -> list[Completion]:
    """Top-level frontmatter keys the configured targets know (not yet written), and values
    for ``name`` (the directory's name) and the boolean fields."""

    lines = split_lines(text)
    line, column = position
    if not lines or lines[0].strip() != "---" or line < 1 or line >= len(lines):
        return []
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if close is not None and line >= close:
        return []
    active = [TARGETS[t] for t in targets if t in TARGETS]
    prefix = lines[line][:column]
    written = {
        m.group(1)
        for i, other in enumerate(lines[1 : close or len(lines)], start=1)
        if i != line and (m := _KEY.match(other))
    }
    key = _KEY.match(prefix)
    if key is None:
        if prefix[:1] in (" ", "\t", "-", "#"):
            return []  # nested or a comment: only top-level keys are completed
        out = []
        fields = sorted({f for t in active for f in t.known_fields} - written)
        for name in fields:
            knowing = [t.title for t in active if name in t.known_fields]
            out.append(Completion(name, "known to " + ", ".join(knowing), f"{name}: "))
        return out
    name = key.group(1)
    if name == "name":
        directory = path.parent.name
        return [Completion(directory, "the skill directory's name", directory)]
    if any(name in t.boolean_fields for t in active):
        return [Completion(v, f"{name} is a boolean", v) for v in ("true", "false")]
    return []
