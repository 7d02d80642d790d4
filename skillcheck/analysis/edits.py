"""What every safe autofix is built with: exact byte-span edits of SKILL.md, proven safe.

Each fix is defined beside its rule (like a ruff rule's ``Fix``: ``remove_bom`` in
``rules/encoding.py``, ``move_to_metadata`` in ``rules/loaders.py`` ...); ``fix.py`` applies
them. The helpers here map a finding's (line, column) positions to byte offsets of the raw
file (BOM and CRLF included), check that the bytes there are what the parser saw, and
``proven_fix`` re-parses the edited file to prove the edit changes the frontmatter's values
exactly as intended, and nothing else. An edit that cannot be proven safe is not offered: the
finding is still reported, without a fix.
"""

from __future__ import annotations

import codecs
import copy
import itertools
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from skillcheck.source.frontmatter import parse_document, plain_mapping
from skillcheck.source.skill import Document, Fix, Pos, Span
from skillcheck.source.text import LINE_BREAK_BYTES, decode, split_lines

_BOM = codecs.BOM_UTF8
_UNMAPPABLE = frozenset({"utf16", "utf32", "invalid-utf8"})

Values = dict[str, Any]


# --- positions -> bytes ----------------------------------------------------------------


def _mappable(doc: Document) -> bool:
    """Whether decoded positions map 1:1 to bytes (UTF-8, optionally with a BOM, complete)."""
    if doc.truncated:
        return False
    return not any(issue.kind in _UNMAPPABLE for issue in doc.text_issues)


_STARTS: dict[int, tuple[bytes, list[int], Iterator[re.Match[bytes]]]] = {}


def _line_starts(raw: bytes, offset: int, count: int) -> list[int]:
    """Byte offset of the start of each line (from ``offset``), the first ``count`` at least
    (all of them in a shorter file). Computed once per file, and only as far as asked: fixes
    edit the frontmatter, at the top of a body of any length; scanning from the top for
    every position made 20,000 keys cost minutes."""
    cached = _STARTS.get(id(raw))
    if cached is None or cached[0] is not raw or cached[1][0] != offset:
        _STARTS.clear()  # keep one file's table: fixes are built file by file
        cached = _STARTS[id(raw)] = (raw, [offset], LINE_BREAK_BYTES.finditer(raw, offset))
    starts = cached[1]
    if len(starts) < count:
        starts.extend(match.end() for match in itertools.islice(cached[2], count - len(starts)))
    return starts


def byte_offset(doc: Document, pos: Pos) -> int | None:
    """The offset in ``doc.raw`` of (line, column) of the decoded text; None if unmappable.

    Lines end at LF, CRLF or a lone CR (as ``text.split_lines`` splits them), columns count
    code points; the UTF-8 BOM, which the decoded text omits, is counted. The line's bytes
    are checked against its decoded text, so a position is never mapped approximately.
    """
    if not _mappable(doc) or not 1 <= pos.line <= len(doc.lines):
        return None
    text = doc.lines[pos.line - 1]
    if not 1 <= pos.column <= len(text) + 1:
        return None
    raw = doc.raw
    offset = len(_BOM) if raw.startswith(_BOM) else 0
    if pos.line > 1:
        starts = _line_starts(raw, offset, pos.line)
        if pos.line > len(starts):
            return None
        offset = starts[pos.line - 1]
    encoded = text.encode("utf-8")
    if raw[offset : offset + len(encoded)] != encoded:
        return None
    return offset + len(text[: pos.column - 1].encode("utf-8"))


def span_offsets(doc: Document, span: Span) -> tuple[int, int] | None:
    start = byte_offset(doc, span.start)
    end = byte_offset(doc, span.end)
    if start is None or end is None or end < start:
        return None
    return start, end


def line_start(doc: Document, line: int) -> int | None:
    if line == len(doc.lines) + 1:  # just past the last line
        return len(doc.raw)
    return byte_offset(doc, Pos(line, 1))


# --- building and proving one fix --------------------------------------------------------


def _minimal(raw: bytes, start: int, end: int, replacement: bytes) -> tuple[int, int, bytes]:
    """Shrink the edit to the bytes that really change (common prefix and suffix kept)."""
    old = raw[start:end]
    prefix = 0
    limit = min(len(old), len(replacement))
    while prefix < limit and old[prefix] == replacement[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and old[len(old) - 1 - suffix] == replacement[len(replacement) - 1 - suffix]
    ):
        suffix += 1
    return start + prefix, end - suffix, replacement[prefix : len(replacement) - suffix]


def _values(doc: Document) -> Values | None:
    fm = doc.frontmatter
    if fm is None or fm.close_line is None or fm.error or fm.too_complex or fm.root is None:
        return None
    return fm.values


def _delimiters_trimmed(lines: list[str]) -> list[str]:
    return [line.rstrip(" \t") if line.rstrip(" \t") == "---" else line for line in lines]


# YAML constructs whose expansion the fast proof must not trust to PyYAML's own loader
_UNBOUNDED = frozenset({"alias", "anchor", "merge", "tag"})


def _new_values(doc: Document, new_raw: bytes) -> tuple[Values | None, str | None]:
    """(frontmatter values, body) of the edited file, as ``parse_document`` would give them.

    The YAML is loaded by ``plain_mapping``, about twice as fast as composing it with
    positions (this runs for every fixable finding of every lint); a frontmatter with anchors,
    aliases, merge keys or tags goes through the bounded parser instead.
    """

    fm = doc.frontmatter
    if fm is None or any(issue.kind in _UNBOUNDED for issue in fm.issues):
        new_doc = parse_document(doc.path, new_raw)
        return _values(new_doc), new_doc.body
    lines = split_lines(decode(new_raw)[0])
    if not lines or lines[0].rstrip(" \t") != "---":
        return None, None
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip(" \t") == "---"), None)
    if close is None:
        return None, None
    text = "\n".join(lines[1:close]) + ("\n" if close > 1 else "")
    values = plain_mapping(text)
    return values, None if values is None else "\n".join(lines[close + 1 :])


def proven_fix(
    doc: Document,
    start: int,
    end: int,
    replacement: bytes,
    description: str,
    expect: Callable[[Values], Values] | None,
) -> Fix | None:
    """The edit as a Fix, when it provably does what it says; else None.

    ``expect=None``: the edit must leave every decoded line as it was, but for whitespace
    after a ``---`` (BOM, line breaks, delimiter whitespace), so the parse cannot change.
    Otherwise the edited file must parse to ``expect(old values)`` with the same body.
    """

    start, end, replacement = _minimal(doc.raw, start, end, replacement)
    if start == end and not replacement:
        return None
    new_raw = doc.raw[:start] + replacement + doc.raw[end:]
    if expect is None:
        new_lines = split_lines(decode(new_raw)[0])
        if _delimiters_trimmed(new_lines) != _delimiters_trimmed(doc.lines):
            return None
    else:
        old = _values(doc)
        new, body = _new_values(doc, new_raw)
        if old is None or new is None or body != doc.body:
            return None
        if new != expect(copy.deepcopy(old)):
            return None
    return Fix(doc.path, start, end, replacement, description)


def scalar_texts(value: str, style: str | None) -> list[bytes]:
    """Ways to write ``value`` as a one-line YAML scalar, the closest to ``style`` first."""
    double = json.dumps(value, ensure_ascii=False).encode("utf-8")
    single = ("'" + value.replace("'", "''") + "'").encode("utf-8")
    plain = value.encode("utf-8")
    if style == '"':
        return [double]
    if style == "'":
        return [single, double]
    return [plain, double]


def replace_scalar(doc: Document, key: str, node: Any, value: str, description: str) -> Fix | None:
    """The edit that gives the one-line top-level scalar ``key`` (``node``) the new
    ``value``, in its own quoting where that reads back as ``value``; None when it cannot
    be proven to change nothing else."""
    text = line_text(doc, node.span)
    offsets = span_offsets(doc, node.span)
    if text is None or offsets is None or not raw_matches(doc, *offsets, text):
        return None

    def expect(values: Values) -> Values:
        values[key] = value
        return values

    for replacement in scalar_texts(value, node.style):
        fix = proven_fix(doc, *offsets, replacement, description, expect)
        if fix is not None:
            return fix
    return None


def line_text(doc: Document, span: Span) -> str | None:
    """The decoded text of a single-line span."""
    if span.start.line != span.end.line or not 1 <= span.start.line <= len(doc.lines):
        return None
    line = doc.lines[span.start.line - 1]
    return line[span.start.column - 1 : span.end.column - 1]


def raw_matches(doc: Document, start: int, end: int, text: str) -> bool:
    return doc.raw[start:end] == text.encode("utf-8")
