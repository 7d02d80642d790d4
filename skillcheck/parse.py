"""Bytes of SKILL.md -> Document: decoding issues, frontmatter (YAML with positions), body.

The YAML is read as parser events (libyaml through PyYAML's CParser when available) and
composed here into ``Node`` trees that keep every key's and value's span in the real file.
Composing ourselves lets us see what PyYAML's own composer hides (duplicate keys, explicit
tags, anchors, merge keys, flow style) and bound what it does not (alias expansion, depth,
size), so a "billion laughs" frontmatter costs milliseconds, not memory.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import yaml

from skillcheck.model import Document, Frontmatter, Node, Pos, Span, TextIssue, YamlIssue

try:  # libyaml is ~10x faster; the pure-Python parser gives the same events and marks
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

MAX_READ = 8 * 1024 * 1024  # bytes of SKILL.md read at most
MAX_FRONTMATTER = 1024 * 1024  # characters of YAML parsed at most
MAX_EVENTS = 200_000  # YAML events composed at most
MAX_DEPTH = 64  # nesting of YAML collections
MAX_EXPANSION = 10_000  # nodes produced when aliases are expanded into Python values

_YAML_TAG = "tag:yaml.org,2002:"
_RESOLVER = yaml.resolver.Resolver()


# --- decoding --------------------------------------------------------------------------


def _pos_of_byte(raw: bytes, offset: int) -> Pos:
    line_start = raw.rfind(b"\n", 0, offset) + 1
    line = raw.count(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", "replace")) + 1
    return Pos(line, column)


def _looks_utf16(raw: bytes) -> str | None:
    """A BOM-less UTF-16 file has a NUL in every other byte of ASCII text."""
    sample = raw[:256]
    if len(sample) < 4:
        return None
    even = sample[0::2].count(0)
    odd = sample[1::2].count(0)
    half = len(sample) // 2
    if odd > 0.8 * half and even < 0.1 * half:
        return "utf-16-le"
    if even > 0.8 * half and odd < 0.1 * half:
        return "utf-16-be"
    return None


def decode(raw: bytes) -> tuple[str, list[TextIssue]]:
    """Decode SKILL.md bytes as UTF-8, reporting BOMs, UTF-16/32 and invalid bytes."""
    issues: list[TextIssue] = []
    one = Span(Pos(1, 1), Pos(1, 2))
    for bom, encoding, kind in (
        (codecs.BOM_UTF32_LE, "utf-32-le", "utf32"),
        (codecs.BOM_UTF32_BE, "utf-32-be", "utf32"),
        (codecs.BOM_UTF8, "utf-8", "bom"),
        (codecs.BOM_UTF16_LE, "utf-16-le", "utf16"),
        (codecs.BOM_UTF16_BE, "utf-16-be", "utf16"),
    ):
        if raw.startswith(bom):
            label = encoding.upper().replace("-LE", " LE").replace("-BE", " BE")
            detail = "UTF-8 byte order mark" if kind == "bom" else f"{label} byte order mark"
            issues.append(TextIssue(kind, one, detail, 0, len(bom)))  # type: ignore[arg-type]
            if kind == "bom":
                raw = raw[len(bom) :]
                break
            return raw[len(bom) :].decode(encoding, "replace"), issues
    else:
        guessed = _looks_utf16(raw)
        if guessed:
            detail = f"{guessed.upper().replace('-LE', ' LE').replace('-BE', ' BE')} without a BOM"
            issues.append(TextIssue("utf16", one, detail, 0, 0))
            return raw.decode(guessed, "replace"), issues
    offset = 3 if issues and issues[0].kind == "bom" else 0
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = 0
        start = exc.start
        first = exc.start
        while True:
            bad += 1
            try:
                raw[start + 1 :].decode("utf-8")
                break
            except UnicodeDecodeError as more:
                start = start + 1 + more.start
                if bad >= 1000:
                    break
        pos = _pos_of_byte(raw, first)
        detail = f"invalid UTF-8 byte 0x{raw[first]:02x}"
        issues.append(
            TextIssue(
                "invalid-utf8",
                Span(pos, Pos(pos.line, pos.column + 1)),
                detail,
                first + offset,
                first + offset + 1,
            )
        )
        text = raw.decode("utf-8", "replace")
    nul = text.find("\x00")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        col = nul - (text.rfind("\n", 0, nul) + 1) + 1
        issues.append(TextIssue("nul", Span(Pos(line, col), Pos(line, col + 1)), "NUL byte"))
    return text, issues


def line_endings(text: str) -> list[TextIssue]:
    """Report the first CRLF and the first lone CR, with their positions."""
    issues: list[TextIssue] = []
    crlf = text.find("\r\n")
    if crlf >= 0:
        count = text.count("\r\n")
        line = text.count("\n", 0, crlf) + 1
        col = crlf - (text.rfind("\n", 0, crlf) + 1) + 1
        span = Span(Pos(line, col), Pos(line, col + 1))
        issues.append(TextIssue("crlf", span, f"{count} CRLF line ending{'s' * (count != 1)}"))
    lone = text.replace("\r\n", "\n\n").find("\r")
    if lone >= 0:
        line = text.count("\n", 0, lone) + 1
        col = lone - (text.rfind("\n", 0, lone) + 1) + 1
        issues.append(TextIssue("cr", Span(Pos(line, col), Pos(line, col + 1)), "lone CR"))
    return issues


def split_lines(text: str) -> list[str]:
    """Lines as YAML and CommonMark count them: on LF, CRLF; a trailing CR is dropped."""
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


# --- YAML composition ----------------------------------------------------------------


class _TooComplex(Exception):
    pass


def _short_tag(tag: str) -> str:
    return tag[len(_YAML_TAG) :] if tag.startswith(_YAML_TAG) else tag


class _Composer:
    def __init__(self, line_offset: int) -> None:
        self.line_offset = line_offset
        self.anchors: dict[str, Node] = {}
        self.issues: list[YamlIssue] = []

    def span(self, event: Any) -> Span:
        s, e = event.start_mark, event.end_mark
        return Span(
            Pos(s.line + self.line_offset, s.column + 1),
            Pos(e.line + self.line_offset, e.column + 1),
        )

    def compose(self, text: str) -> Node | None:
        stack: list[tuple[Node, list]] = []  # open collections and their children
        root: Node | None = None
        documents = 0
        count = 0
        for event in yaml.parse(text, Loader=_Loader):
            count += 1
            if count > MAX_EVENTS:
                raise _TooComplex(f"the frontmatter has more than {MAX_EVENTS:,} YAML nodes")
            node: Node | None = None
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    self.issues.append(
                        YamlIssue("document", self.span(event), "a second YAML document")
                    )
                continue
            if isinstance(event, yaml.ScalarEvent):
                node = self._scalar(event)
            elif isinstance(event, yaml.AliasEvent):
                target = self.anchors.get(event.anchor)
                if target is None:
                    raise yaml.composer.ComposerError(
                        None, None, f"found undefined alias {event.anchor!r}", event.start_mark
                    )
                node = Node("alias", self.span(event), None, tag=target.tag, target=target)
                self.issues.append(YamlIssue("alias", node.span, f"alias *{event.anchor}"))
            elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                kind = "sequence" if isinstance(event, yaml.SequenceStartEvent) else "mapping"
                node = Node(kind, self.span(event), [], tag="seq" if kind == "sequence" else "map")
                node.flow = bool(event.flow_style)
                if node.flow:
                    shape = "[...]" if kind == "sequence" else "{...}"
                    self.issues.append(YamlIssue("flow", node.span, f"flow {kind} {shape}"))
                self._decorate(node, event)
                if len(stack) >= MAX_DEPTH:
                    raise _TooComplex(f"the frontmatter nests deeper than {MAX_DEPTH} levels")
                self._attach(stack, node)
                stack.append((node, node.value))
                continue
            elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                done, _ = stack.pop()
                done.span = Span(done.span.start, self.span(event).end)
                if done.kind == "mapping":
                    flat = done.value
                    done.value = list(zip(flat[0::2], flat[1::2], strict=False))
                if not stack:
                    root = done
                continue
            else:
                continue
            self._attach(stack, node)
            if not stack:
                root = node
        return root

    def _attach(self, stack: list[tuple[Node, list]], node: Node) -> None:
        if stack:
            stack[-1][1].append(node)

    def _decorate(self, node: Node, event: Any) -> None:
        if event.anchor:
            node.anchor = event.anchor
            self.anchors[event.anchor] = node
            self.issues.append(YamlIssue("anchor", node.span, f"anchor &{event.anchor}"))
        tag = event.tag
        if tag and tag != "!":
            node.explicit_tag = tag
            node.tag = _short_tag(tag)
            self.issues.append(YamlIssue("tag", node.span, f"tag {tag}"))

    def _scalar(self, event: Any) -> Node:
        span = self.span(event)
        node = Node("scalar", span, event.value, style=event.style or None)
        if event.tag and event.tag != "!":
            self._decorate(node, event)
        else:
            resolved = _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
            node.tag = _short_tag(resolved)
            if event.anchor:
                self._decorate(node, event)
        if node.tag == "merge":
            self.issues.append(YamlIssue("merge", span, "merge key <<"))
        return node


_CONSTRUCTOR = yaml.constructor.SafeConstructor()


def _scalar_value(node: Node) -> Any:
    """The value PyYAML's safe_load would give this scalar (str when it cannot)."""
    if node.tag == "str":
        return node.value
    try:
        return _CONSTRUCTOR.construct_object(
            yaml.ScalarNode(_YAML_TAG + node.tag, node.value, style=node.style)
        )
    except Exception:
        return node.value


def to_python(node: Node, budget: list[int] | None = None) -> Any:
    """Plain Python values with PyYAML typing; alias expansion is bounded."""
    if budget is None:
        budget = [MAX_EXPANSION]
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooComplex(
            f"expanding the frontmatter's aliases gives more than {MAX_EXPANSION:,} values"
            " (a 'billion laughs' pattern?)"
        )
    node = node.resolved()
    if node.kind == "scalar":
        return _scalar_value(node)
    if node.kind == "sequence":
        return [to_python(child, budget) for child in node.value]
    if node.kind == "mapping":
        out: dict[Any, Any] = {}
        merged: list[dict] = []
        for key, value in node.value:
            if key.resolved().tag == "merge":
                sub = to_python(value, budget)
                merged.extend(sub if isinstance(sub, list) else [sub])
                continue
            k = to_python(key, budget)
            try:
                out[k] = to_python(value, budget)
            except TypeError:  # an unhashable key such as a list
                out[str(k)] = to_python(value, budget)
        for extra in merged:
            if isinstance(extra, dict):
                for k, v in extra.items():
                    out.setdefault(k, v)
        return out
    return None


def _error_span(exc: yaml.YAMLError, line_offset: int, last_line: int) -> tuple[str, Span]:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{problem} ({context})" if context else str(problem)
    if mark is None:
        return message, Span(Pos(line_offset, 1), Pos(line_offset, 1))
    line = min(mark.line + line_offset, last_line)
    pos = Pos(line, mark.column + 1)
    return message, Span(pos, Pos(line, mark.column + 2))


def parse_yaml(text: str, line_offset: int, fm: Frontmatter) -> None:
    """Compose ``text`` (frontmatter YAML starting at file line ``line_offset``) into ``fm``."""
    if len(text) > MAX_FRONTMATTER:
        fm.too_complex = (
            f"the frontmatter is {len(text):,} characters; skillcheck parses at most"
            f" {MAX_FRONTMATTER:,}"
        )
        return
    composer = _Composer(line_offset)
    last_line = line_offset + text.count("\n")
    try:
        fm.root = composer.compose(text)
    except _TooComplex as exc:
        fm.too_complex = str(exc)
        fm.issues = composer.issues
        return
    except yaml.YAMLError as exc:
        fm.error = _error_span(exc, line_offset, max(last_line, line_offset))
        fm.issues = composer.issues
        return
    except (RecursionError, MemoryError):  # pragma: no cover - bounded above
        fm.too_complex = "the frontmatter is too deeply nested to parse"
        return
    fm.issues = composer.issues
    root = fm.root
    if root is None or root.resolved().kind != "mapping":
        return
    for key, value in root.items():
        name = key.text()
        if name is None:
            continue
        if name in fm.fields:
            fm.duplicates.append((key, value, fm.fields[name][0]))
        # PyYAML keeps the last of duplicate keys, so fields and values do too
        fm.fields[name] = (key, value)
    budget = [MAX_EXPANSION]
    for name, (key, value) in fm.fields.items():
        if key.resolved().tag == "merge":
            continue
        try:
            fm.values[name] = to_python(value, budget)
        except _TooComplex as exc:
            fm.too_complex = str(exc)
            return


# --- the document ------------------------------------------------------------------------


def _is_delimiter(line: str) -> tuple[bool, bool]:
    """(is a ``---`` line, has trailing whitespace)."""
    stripped = line.rstrip(" \t")
    return stripped == "---", stripped != line


def parse_document(path: Path, raw: bytes, size: int | None = None) -> Document:
    """Split SKILL.md into frontmatter and body, with every position in the real file."""
    truncated = size is not None and size > len(raw)
    text, issues = decode(raw)
    issues.extend(line_endings(text))
    lines = split_lines(text)
    frontmatter: Frontmatter | None = None
    body_line = 1
    body = text
    is_open, open_ws = _is_delimiter(lines[0]) if lines else (False, False)
    if is_open:
        close = None
        close_ws = False
        for index in range(1, len(lines)):
            found, ws = _is_delimiter(lines[index])
            if found:
                close, close_ws = index, ws
                break
        if close is None:
            frontmatter = Frontmatter(1, None, "\n".join(lines[1:]), open_trailing_ws=open_ws)
            body = ""
            body_line = len(lines) + 1
        else:
            yaml_text = "\n".join(lines[1:close])
            if close > 1:
                yaml_text += "\n"
            frontmatter = Frontmatter(
                1, close + 1, yaml_text, open_trailing_ws=open_ws, close_trailing_ws=close_ws
            )
            parse_yaml(yaml_text, 2, frontmatter)
            body_line = close + 2
            body = "\n".join(lines[close + 1 :])
    return Document(
        path=path,
        raw=raw,
        text=text,
        lines=lines,
        text_issues=issues,
        frontmatter=frontmatter,
        body=body,
        body_line=body_line,
        truncated=truncated,
        size=size if size is not None else len(raw),
    )
