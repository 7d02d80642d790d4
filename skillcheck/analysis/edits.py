"""Safe autofix builders: exact byte-span edits of SKILL.md that a rule attaches to a Finding.

Moved out of ``fix.py`` (which applies them) so the rules build fixes without importing the
layer above them. Every helper maps the finding's (line, column) positions to byte offsets of
the raw file (BOM and CRLF included), checks that the bytes there are what the parser saw,
and re-parses the edited file to prove the edit changes the frontmatter's values exactly as
intended, and nothing else. An edit that cannot be proven safe is not offered: the finding is
still reported, without a fix.
"""

from __future__ import annotations

import codecs
import copy
import json
import re
from collections.abc import Callable, Iterable
from typing import Any

from skillcheck.analysis.tools import split_tools
from skillcheck.source.frontmatter import parse_document, plain_mapping
from skillcheck.source.skill import Document, Fix, Frontmatter, Node, Pos, Span
from skillcheck.source.text import LINE_BREAK_BYTES, decode, split_lines

_BOM = codecs.BOM_UTF8
_UNMAPPABLE = frozenset({"utf16", "utf32", "invalid-utf8"})
# a block scalar header: indicator, then indentation digit and chomping in either order
_BLOCK_HEADER = re.compile(r"([|>])(?:([1-9])([+-])?|([+-])([1-9])?)?")

Values = dict[str, Any]


# --- positions -> bytes ----------------------------------------------------------------


def _mappable(doc: Document) -> bool:
    """Whether decoded positions map 1:1 to bytes (UTF-8, optionally with a BOM, complete)."""
    if doc.truncated:
        return False
    return not any(issue.kind in _UNMAPPABLE for issue in doc.text_issues)


_STARTS: dict[int, tuple[bytes, list[int]]] = {}


def _line_starts(raw: bytes, offset: int) -> list[int]:
    """Byte offset of the start of each line (from ``offset``), computed once per file:
    scanning from the top for every position made 20,000 keys cost minutes."""
    cached = _STARTS.get(id(raw))
    if cached is None or cached[0] is not raw or cached[1][0] != offset:
        _STARTS.clear()  # keep one file's table: fixes are built file by file
        starts = [offset, *(m.end() for m in LINE_BREAK_BYTES.finditer(raw, offset))]
        cached = _STARTS[id(raw)] = (raw, starts)
    return cached[1]


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
        starts = _line_starts(raw, offset)
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


def _line_start(doc: Document, line: int) -> int | None:
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


def _proven_fix(
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


def _scalar_text(value: str, style: str | None) -> list[bytes]:
    """Ways to write ``value`` as a one-line YAML scalar, the closest to ``style`` first."""
    double = json.dumps(value, ensure_ascii=False).encode("utf-8")
    single = ("'" + value.replace("'", "''") + "'").encode("utf-8")
    plain = value.encode("utf-8")
    if style == '"':
        return [double]
    if style == "'":
        return [single, double]
    return [plain, double]


def _line_text(doc: Document, span: Span) -> str | None:
    """The decoded text of a single-line span."""
    if span.start.line != span.end.line or not 1 <= span.start.line <= len(doc.lines):
        return None
    line = doc.lines[span.start.line - 1]
    return line[span.start.column - 1 : span.end.column - 1]


def _raw_matches(doc: Document, start: int, end: int, text: str) -> bool:
    return doc.raw[start:end] == text.encode("utf-8")


# --- fixes offered by rules --------------------------------------------------------------


def remove_bom(doc: Document) -> Fix | None:
    """SK901: drop the UTF-8 byte order mark."""
    if not doc.raw.startswith(_BOM):
        return None
    return _proven_fix(doc, 0, len(_BOM), b"", "remove the UTF-8 byte order mark", None)


def normalize_newlines(doc: Document) -> Fix | None:
    """SK902: every CRLF and lone CR becomes LF (one edit from the first CR to the last)."""
    if doc.truncated or any(i.kind in ("utf16", "utf32") for i in doc.text_issues):
        return None
    raw = doc.raw
    first = raw.find(b"\r")
    if first < 0:
        return None
    last = raw.rfind(b"\r")
    end = last + 2 if raw[last + 1 : last + 2] == b"\n" else last + 1
    region = raw[first:end]
    replacement = region.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return _proven_fix(doc, first, end, replacement, "convert line endings to LF", None)


def strip_delimiter_whitespace(doc: Document, line: int) -> Fix | None:
    """SK114: remove spaces and tabs after a ``---`` delimiter."""
    if not 1 <= line <= len(doc.lines):
        return None
    text = doc.lines[line - 1]
    trailing = text[3:]
    if not text.startswith("---") or not trailing or trailing.strip(" \t"):
        return None
    offsets = span_offsets(doc, Span(Pos(line, 4), Pos(line, len(text) + 1)))
    if offsets is None or not _raw_matches(doc, *offsets, trailing):
        return None
    return _proven_fix(doc, *offsets, b"", "remove whitespace after '---'", None)


def strip_description(doc: Document, node: Node) -> Fix | None:
    """SK309: remove leading/trailing whitespace from a quoted or block-scalar description."""
    if node.kind != "scalar" or node.anchor or node.explicit_tag or not isinstance(node.value, str):
        return None
    target = node.value.strip()
    if not target or target == node.value:
        return None

    def expect(values: Values) -> Values:
        values["description"] = target
        return values

    if node.style in ("'", '"'):
        text = _line_text(doc, node.span)
        offsets = span_offsets(doc, node.span)
        if (
            text is None
            or offsets is None
            or len(text) < 2
            or not _raw_matches(doc, *offsets, text)
        ):
            return None
        quote, inner = text[0], text[1:-1]
        if text[-1] != quote:
            return None
        replacement = (quote + inner.strip(" \t") + quote).encode("utf-8")
    elif node.style in ("|", ">"):
        # a clipped or kept block scalar ends with a line break: the '-' indicator strips it
        line = doc.lines[node.span.start.line - 1] if node.span.start.line <= len(doc.lines) else ""
        header = _BLOCK_HEADER.match(line, node.span.start.column - 1)
        if header is None or "-" in header.group(0):
            return None
        old = header.group(0)
        new = header.group(1) + (header.group(2) or header.group(5) or "") + "-"
        span = Span(node.span.start, Pos(node.span.start.line, node.span.start.column + len(old)))
        offsets = span_offsets(doc, span)
        if offsets is None or not _raw_matches(doc, *offsets, old):
            return None
        replacement = new.encode("utf-8")
    else:
        return None
    return _proven_fix(
        doc, *offsets, replacement, "remove whitespace around the description", expect
    )


def allowed_tools_string(doc: Document, fm: Frontmatter, tools: list[str]) -> Fix | None:
    """SK403: rewrite a list or a comma-separated ``allowed-tools`` as one spaced string."""

    pair = fm.fields.get("allowed-tools")
    if pair is None or not tools or any(not t for t in tools):
        return None
    key, node = pair
    joined = " ".join(tools)
    if split_tools(joined) != tools or any(any(c.isspace() for c in t) for t in tools):
        # a tool with a space (`Bash(npx expo *)`, `Azure MCP/docs`): loaders that follow the
        # spec split the string on every space, parentheses or not
        return None

    def expect(values: Values) -> Values:
        values["allowed-tools"] = joined
        return values

    if node.anchor or node.explicit_tag:
        return None
    if node.kind == "sequence":
        items = node.value
        if not items or any(i.kind != "scalar" or i.anchor or i.explicit_tag for i in items):
            return None
        # from just after the key's ':' to the end of the list
        colon_line = doc.lines[key.span.end.line - 1] if key.span.end.line <= len(doc.lines) else ""
        rest = colon_line[key.span.end.column - 1 :]
        colon = len(rest) - len(rest.lstrip(" \t"))
        if not rest[colon:].startswith(":"):
            return None
        start_pos = Pos(key.span.end.line, key.span.end.column + colon + 1)
        end_pos = node.span.end if node.flow else items[-1].span.end
        offsets = span_offsets(doc, Span(start_pos, end_pos))
        if offsets is None or b"#" in doc.raw[offsets[0] : offsets[1]]:
            return None  # never drop a comment
        candidates = [b" " + text for text in _scalar_text(joined, None)]
    elif node.kind == "scalar" and node.tag != "null":
        offsets = span_offsets(doc, node.span)
        if offsets is None:
            return None
        candidates = _scalar_text(joined, node.style if node.style in ("'", '"') else None)
    else:
        return None
    for replacement in candidates:
        fix = _proven_fix(
            doc, *offsets, replacement, "write allowed-tools as one space-separated string", expect
        )
        if fix is not None:
            return fix
    return None


def _path_of(fm: Frontmatter, node: Node) -> tuple[str, ...] | None:
    for name, (_key, value) in fm.fields.items():
        if value is node:
            return (name,)
        if name == "metadata":
            for key, inner in value.items():
                text = key.text()
                if inner is node and isinstance(text, str):
                    return ("metadata", text)
    return None


def quote_scalar(doc: Document, fm: Frontmatter, node: Node) -> Fix | None:
    """SK112: ``yes`` -> ``"yes"``: the value becomes the text as written."""
    if (
        node.kind != "scalar"
        or node.style is not None
        or node.anchor
        or node.explicit_tag
        or node.tag in ("str", "null")
    ):
        return None
    path = _path_of(fm, node)
    text = _line_text(doc, node.span)
    offsets = span_offsets(doc, node.span)
    if path is None or text is None or text != node.value or offsets is None:
        return None
    if not _raw_matches(doc, *offsets, text):
        return None

    def expect(values: Values) -> Values:
        holder = values
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = node.value
        return values

    replacement = json.dumps(node.value, ensure_ascii=False).encode("utf-8")
    return _proven_fix(doc, *offsets, replacement, f"quote {node.value!r}", expect)


def _movable_line(doc: Document, fm: Frontmatter, name: str) -> int | None:
    """The line of ``name: value`` when it can move as one whole line, else None."""
    key, value = fm.fields[name]
    duplicated = any(k.text() == name for k, _v, _e in fm.duplicates)
    if (
        duplicated
        or key.kind != "scalar"
        or key.style is not None
        or key.anchor
        or key.explicit_tag
        or key.span.start.column != 1
        or value.kind != "scalar"
        or value.anchor
        or value.explicit_tag
        or value.style in ("|", ">")
        or value.span.end.line != key.span.start.line
    ):
        return None
    return key.span.start.line


def move_to_metadata(
    doc: Document, fm: Frontmatter, names: Iterable[str]
) -> tuple[Fix | None, list[str]]:
    """SK108: move top-level ``key: scalar`` lines under ``metadata`` in one edit.

    Returns the fix and the names it moves. ``metadata`` must be absent (it is added at the
    end of the frontmatter) or a non-empty block mapping (the lines join it with its
    indentation, after its last entry).
    """
    root = fm.root.resolved() if fm.root is not None else None
    if fm.close_line is None or root is None or root.kind != "mapping" or root.flow:
        return None, []
    meta_pair = fm.fields.get("metadata")
    existing: set[str] = set()
    if meta_pair is None:
        indent = "  "
        insert_line = fm.close_line
    else:
        meta_key, meta = meta_pair
        if (
            meta.kind != "mapping"
            or meta.flow
            or meta.anchor
            or meta.explicit_tag
            or not meta.value
            or any(m.text() == "metadata" for m, _v, _e in fm.duplicates)
        ):
            return None, []
        columns = {k.span.start.column for k, _v in meta.value}
        if len(columns) != 1 or min(columns) <= 1:
            return None, []
        indent = " " * (min(columns) - 1)
        existing = {str(k.text()) for k, _v in meta.value}
        last_value = meta.value[-1][1]
        if last_value.kind == "scalar" and last_value.span.start.line == last_value.span.end.line:
            insert_line = last_value.span.end.line + 1
        else:  # the last entry's extent is unclear: join as the first entry instead
            header = doc.lines[meta_key.span.start.line - 1][meta_key.span.end.column - 1 :]
            rest = header.lstrip(" \t")
            if not rest.startswith(":") or rest[1:].strip(" \t")[:1] not in ("", "#"):
                return None, []
            insert_line = meta_key.span.start.line + 1
    moved: dict[int, str] = {}
    for name in dict.fromkeys(names):
        if name in existing or name not in fm.fields or name == "metadata":
            continue
        line = _movable_line(doc, fm, name)
        if line is not None:
            moved[line] = name
    if not moved:
        return None, []
    lines = sorted(moved)
    starts: dict[int, int] = {}  # byte offset of each line involved, and of the next one
    for n in range(min(*lines, insert_line), max(*lines, insert_line) + 2):
        offset = _line_start(doc, n)
        if offset is None:
            return None, []
        starts[n] = offset
    raw = doc.raw

    def raw_line(n: int) -> bytes:
        return raw[starts[n] : starts[n + 1]]

    eol = b"\r\n" if raw_line(lines[0]).endswith(b"\r\n") else b"\n"
    block = b"".join(indent.encode() + raw_line(n) for n in lines)
    if meta_pair is None:
        block = b"metadata:" + eol + block
    low, high = min(lines[0], insert_line), max(lines[-1] + 1, insert_line)
    out = bytearray()
    for n in range(low, high):
        if n == insert_line:
            out += block
        if n not in moved:
            out += raw_line(n)
    if insert_line == high:
        out += block
    names_moved = [moved[n] for n in lines]

    def expect(values: Values) -> Values:
        meta = values.get("metadata")
        meta = dict(meta) if isinstance(meta, dict) else {}
        for name in names_moved:
            meta[name] = values.pop(name)
        values["metadata"] = meta
        return values

    # every moved key's diagnostic carries this description: name a few, not 20,000
    shown = ", ".join(repr(n) for n in names_moved[:5])
    if len(names_moved) > 5:
        shown += f" and {len(names_moved) - 5:,} more keys"
    fix = _proven_fix(
        doc, starts[low], starts[high], bytes(out), f"move {shown} under 'metadata'", expect
    )
    return (fix, names_moved) if fix is not None else (None, [])
