"""Bytes of SKILL.md -> Document: decoding issues, frontmatter (YAML with positions), body.

The YAML is read as parser events (libyaml through PyYAML's CParser when available) and
composed here into ``Node`` trees that keep every key's and value's span in the real file.
Composing ourselves lets us see what PyYAML's own composer hides (duplicate keys, explicit
tags, anchors, merge keys, flow style) and bound what it does not (alias expansion, depth,
size), so a "billion laughs" frontmatter costs milliseconds, not memory.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import Document, Frontmatter, Node, Pos, Span, YamlIssue
from skillcheck.source.text import (
    decode,
    line_endings,
    offset_pos,
    split_lines,
    trim_partial_utf8,
)

if TYPE_CHECKING:
    import yaml

MAX_FRONTMATTER = 1024 * 1024  # characters of YAML parsed at most
MAX_EVENTS = 200_000  # YAML events composed at most
MAX_DEPTH = 64  # nesting of YAML collections
MAX_EXPANSION = 10_000  # nodes produced when aliases are expanded into Python values
MAX_PURE_PYTHON = 64 * 1024  # characters of YAML read with the slow pure-Python parser
_BIG_ESCAPE = LazyPattern(r"\\U([0-9A-Fa-f]{8})")
_GLUED_HEADER_COMMENT = LazyPattern(r"[|>][-+0-9]*#")


_YAML_TAG = "tag:yaml.org,2002:"


class _Yaml(NamedTuple):
    module: Any  # yaml
    loader: Any  # libyaml's CSafeLoader when PyYAML was built with it
    strict_loader: Any  # the pure-Python loader reading as strictyaml does
    resolver: Any
    constructor: Any
    ignored: frozenset[Any]  # events that carry nothing to compose


@functools.cache
def _yaml() -> _Yaml:
    """PyYAML, imported on the first parse: a run that takes every skill from the result
    cache parses no YAML, and a one-skill pre-commit run should not pay for the import."""
    import yaml

    try:  # libyaml is ~10x faster; the pure-Python parser gives the same events and marks
        from yaml import CSafeLoader as loader
    except ImportError:  # pragma: no cover - depends on how PyYAML was built
        from yaml import SafeLoader as loader  # type: ignore[assignment]

    class StrictYamlLoader(yaml.SafeLoader):
        """PyYAML's pure-Python loader reading as strictyaml's ruamel fork does: the same
        scanner, but U+0085, U+2028 and U+2029 end no line (YAML 1.2) while they still fold
        like breaks, so a key after one is still a simple key and a value with one is no
        syntax error."""

        def forward(self, length: int = 1) -> None:
            if self.pointer + length + 1 >= len(self.buffer):
                self.update(length + 1)
            while length:
                ch = self.buffer[self.pointer]
                self.pointer += 1
                self.index += 1
                if ch == "\n" or (ch == "\r" and self.buffer[self.pointer] != "\n"):
                    self.line += 1
                    self.column = 0
                elif ch != "\ufeff":
                    self.column += 1
                length -= 1

    return _Yaml(
        yaml,
        loader,
        StrictYamlLoader,
        yaml.resolver.Resolver(),
        yaml.constructor.SafeConstructor(),
        frozenset({yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent}),
    )


_TAGS: dict[tuple[str, Any], str] = {}  # (plain scalar, implicit) -> short tag: keys repeat
_TAGS_MAX = 4096


# --- YAML composition ----------------------------------------------------------------


class _TooComplex(Exception):
    pass


def _short_tag(tag: str) -> str:
    return tag[len(_YAML_TAG) :] if tag.startswith(_YAML_TAG) else tag


def _resolved_tag(value: str, implicit: Any) -> str:
    """The short tag PyYAML resolves an untagged scalar to (remembered: keys repeat)."""
    key = (value, implicit)
    tag = _TAGS.get(key)
    if tag is None:
        kit = _yaml()
        tag = _short_tag(kit.resolver.resolve(kit.module.ScalarNode, value, implicit))
        if len(value) <= 64:  # keys and short values; a description rarely repeats
            if len(_TAGS) >= _TAGS_MAX:
                _TAGS.clear()
            _TAGS[key] = tag
    return tag


class _Marks:
    """Map a YAML mark to the real file position.

    YAML counts U+0085, U+2028 and U+2029 as line breaks where the file's lines (and every
    editor) do not, so a mark's own line/column would drift after such a character; its
    character index into the frontmatter text does not.
    """

    def __init__(self, text: str, line_offset: int, column_offset: int = 0) -> None:
        self.line_offset = line_offset
        self.column_offset = column_offset  # where the text starts on its first line
        self.breaks = [m.start() for m in re.finditer("\n", text)]

    def pos(self, mark: Any) -> Pos:
        return self.at(mark.index)

    def at(self, index: int) -> Pos:
        breaks = self.breaks
        line = bisect.bisect_left(breaks, index)  # line breaks before the index
        if line:  # the column counts from the character after the last break
            return Pos(line + self.line_offset, index - breaks[line - 1])
        return Pos(self.line_offset, index + 1 + self.column_offset)


class _Composer:
    def __init__(self, marks: _Marks) -> None:
        self.marks = marks
        self.anchors: dict[str, Node] = {}
        self.issues: list[YamlIssue] = []
        self.flow_issues: dict[int, YamlIssue] = {}  # id(node) -> its issue, spanned at the end
        self.events = 0  # parser events composed: what the text itself writes out

    def span(self, event: Any) -> Span:
        at = self.marks.at
        return Span(at(event.start_mark.index), at(event.end_mark.index))

    def compose(self, text: str, loader: Any = None) -> Node | None:
        parser = (loader or _yaml().loader)(
            text
        )  # what yaml.parse does, without a generator around each event
        try:
            return self._compose(parser.get_event)
        finally:
            parser.dispose()

    def _compose(self, next_event: Any) -> Node | None:
        stack: list[tuple[Node, list]] = []  # open collections and their children
        root: Node | None = None
        documents = 0
        count = 0
        at = self.marks.at
        kit = _yaml()
        yaml = kit.module
        scalar_event, document_start, ignored = (
            yaml.ScalarEvent,
            yaml.DocumentStartEvent,
            kit.ignored,
        )
        while (event := next_event()) is not None:
            count += 1
            if count > MAX_EVENTS:
                raise _TooComplex(f"the frontmatter has more than {MAX_EVENTS:,} YAML nodes")
            node: Node | None = None
            kind_of_event = type(event)  # the parsers make these exact classes: no isinstance
            if kind_of_event is scalar_event:  # most events: inlined
                node = Node(
                    "scalar",
                    Span(at(event.start_mark.index), at(event.end_mark.index)),
                    event.value,
                    style=event.style or None,
                )
                tag = event.tag
                if tag and tag != "!":
                    self._decorate(node, event)
                else:
                    node.tag = _resolved_tag(event.value, event.implicit)
                    if event.anchor or tag == "!":
                        self._decorate(node, event)
                if stack:
                    stack[-1][1].append(node)
                elif documents == 1:
                    root = node
                continue
            elif kind_of_event is document_start:
                documents += 1
                if documents > 1:
                    self.issues.append(YamlIssue("document", self.span(event), "---"))
                continue
            elif kind_of_event in ignored:
                continue
            elif isinstance(event, yaml.AliasEvent):
                target = self.anchors.get(event.anchor) if event.anchor is not None else None
                if target is None:
                    raise yaml.composer.ComposerError(
                        None,
                        None,
                        f"found undefined alias {event.anchor!r}",
                        event.start_mark,  # type: ignore[arg-type]  # the C loader's Mark
                    )
                if any(target is open_node for open_node, _ in stack):
                    # the node would contain itself: every walk of the tree (expansion, rules)
                    # would never end
                    raise _TooComplex(
                        f"the alias *{event.anchor} refers to a collection that contains it"
                        " (a recursive structure)"
                    )
                node = Node("alias", self.span(event), None, tag=target.tag, target=target)
                self.issues.append(YamlIssue("alias", node.span, f"*{event.anchor}"))
            elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
                kind: Literal["sequence", "mapping"] = (
                    "sequence" if isinstance(event, yaml.SequenceStartEvent) else "mapping"
                )
                node = Node(kind, self.span(event), [], tag="seq" if kind == "sequence" else "map")
                node.flow = bool(event.flow_style)
                if node.flow:
                    shape = "[...]" if kind == "sequence" else "{...}"
                    issue = YamlIssue("flow", node.span, shape)
                    self.issues.append(issue)
                    self.flow_issues[id(node)] = issue
                self._decorate(node, event)
                if len(stack) >= MAX_DEPTH:
                    raise _TooComplex(f"the frontmatter nests deeper than {MAX_DEPTH} levels")
                self._attach(stack, node)
                stack.append((node, node.value))
                continue
            elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
                done, _ = stack.pop()
                done.span = Span(done.span.start, self.span(event).end)
                if id(done) in self.flow_issues:  # underline the whole [...] / {...}
                    self.flow_issues.pop(id(done)).span = done.span
                if done.kind == "mapping":
                    flat = done.value
                    done.value = list(zip(flat[0::2], flat[1::2], strict=False))
                    for key, _value in done.value:  # `<<` merges only as a key
                        if key.kind == "scalar" and key.tag == "merge":
                            self.issues.append(YamlIssue("merge", key.span, "<<"))
                if not stack and documents == 1:  # PyYAML reads the first document only
                    root = done
                continue
            else:
                continue
            self._attach(stack, node)
            if not stack and documents == 1:
                root = node
        self.events = count
        return root

    def _attach(self, stack: list[tuple[Node, list]], node: Node) -> None:
        if stack:
            stack[-1][1].append(node)

    def _decorate(self, node: Node, event: Any) -> None:
        if event.anchor:
            node.anchor = event.anchor
            self.anchors[event.anchor] = node
            self.issues.append(YamlIssue("anchor", node.span, f"&{event.anchor}"))
        tag = event.tag
        if tag == "!":  # the non-specific tag: a plain string to PyYAML, a tag to strictyaml
            self.issues.append(YamlIssue("tag", node.span, "!"))
        elif tag:
            node.explicit_tag = tag
            node.tag = _short_tag(tag)
            shown = "!!" + node.tag if tag.startswith(_YAML_TAG) else tag
            self.issues.append(YamlIssue("tag", node.span, shown))


def _scalar_value(node: Node) -> Any:
    """The value PyYAML's safe_load would give this scalar (str when it cannot)."""
    if node.tag == "str":
        return node.value
    try:
        kit = _yaml()
        return kit.constructor.construct_object(
            kit.module.ScalarNode(_YAML_TAG + node.tag, node.value, style=node.style)
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


def _error_span(exc: yaml.YAMLError, marks: _Marks, text: str) -> tuple[str, Span]:
    yaml = _yaml().module
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow at all
        char = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or " ")
        index = exc.position
        if exc.encoding != "unicode":  # libyaml counts bytes of the UTF-8 it was fed
            index = len(text.encode("utf-8", "surrogatepass")[:index].decode("utf-8", "ignore"))
        pos = marks.at(index)
        message = f"unacceptable character U+{char:04X}: {exc.reason}"
        return message, Span(pos, Pos(pos.line, pos.column + 1))
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{problem} ({context})" if context else str(problem)
    if mark is None:
        line = marks.line_offset
        return message, Span(Pos(line, 1), Pos(line, 1))
    context_mark = getattr(exc, "context_mark", None)
    if context_mark is not None and (
        mark.index >= len(text.rstrip()) or context == "while scanning a simple key"
    ):
        # the useful place is where the construct began (an unclosed quote, a line that
        # lost its indentation), not where the parser gave up (the closing '---', the next key)
        mark = context_mark
    pos = marks.pos(mark)
    return message, Span(pos, Pos(pos.line, pos.column + 1))


def plain_mapping(text: str) -> dict[Any, Any] | None:
    """The mapping a YAML text loads to with libyaml's safe loader, without positions or
    bounds (about twice as fast as composing it); None when it is no mapping or no YAML.

    Only for text known to hold no anchor, alias, merge key or tag, whose expansion only the
    bounded composer may be trusted with (the fix proofs check that first).
    """
    kit = _yaml()
    try:
        values = kit.module.load(text, Loader=kit.loader)
    except (kit.module.YAMLError, ValueError, TypeError):
        return None
    return values if isinstance(values, dict) else None


def parse_yaml(
    text: str, line_offset: int, fm: Frontmatter, *, column_offset: int = 0, strict: bool = False
) -> None:
    """Compose ``text`` (frontmatter YAML starting at file line ``line_offset``, column
    ``column_offset + 1``) into ``fm``.

    ``strict`` reads it as strictyaml (skills-ref) does: with the pure-Python scanner, which
    strictyaml's ruamel fork shares (libyaml lets tabs through where they do not), counting
    lines as YAML 1.2 does (see ``_yaml``).
    """
    if len(text) > MAX_FRONTMATTER:
        fm.too_complex = (
            f"the frontmatter is {len(text):,} characters; skillcheck parses at most"
            f" {MAX_FRONTMATTER:,}"
        )
        return
    marks = _Marks(text, line_offset, column_offset)
    kit = _yaml()
    yaml = kit.module
    loader: Any = kit.loader
    if strict and len(text) <= MAX_PURE_PYTHON:  # ~3 s per MiB: beyond, libyaml's reading stands
        loader = kit.strict_loader
    composer = _Composer(marks)
    try:
        fm.root = composer.compose(text, loader)
    except _TooComplex as exc:
        fm.too_complex = str(exc)
        fm.issues = composer.issues
        return
    except yaml.YAMLError as exc:
        fm.issues = composer.issues
        if "maximum nesting depth" in str(getattr(exc, "problem", None)):
            # libyaml 0.2.5 (PyYAML 6.0.4's wheels) stops at 1,000 levels while it scans
            # ahead, before the composer meets its own bound: the same verdict either way
            fm.too_complex = f"the frontmatter nests deeper than {MAX_DEPTH} levels"
            return
        fm.error = _error_span(exc, marks, text)
        return
    except (ValueError, OverflowError) as exc:
        if loader is kit.loader:
            raise
        # the pure-Python scanner (and strictyaml's) fails on an escape past U+10FFFF
        index = next((m.start() for m in _BIG_ESCAPE.finditer(text) if int(m[1], 16) > 0x10FFFF), 0)
        pos = marks.at(index)
        fm.error = (
            f"invalid escape in a quoted value ({exc})",
            Span(pos, Pos(pos.line, pos.column + 10)),
        )
        fm.issues = composer.issues
        return
    except (RecursionError, MemoryError):  # pragma: no cover - bounded above
        fm.too_complex = "the frontmatter is too deeply nested to parse"
        return
    fm.issues = composer.issues
    if strict and loader is not kit.loader and "..." in text:
        # strictyaml reads a second `...` document end marker as a second document
        ends = [t for t in yaml.scan(text, Loader=loader) if isinstance(t, yaml.DocumentEndToken)]
        if len(ends) > 1:
            pos = marks.pos(ends[1].start_mark)
            fm.error = (
                "a second document end marker '...' (strictyaml reads another document)",
                Span(pos, Pos(pos.line, pos.column + 3)),
            )
            return
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
    # what the text writes out is already bounded (MAX_EVENTS); only what aliases add is
    # charged, so 20,000 plain keys are not taken for a "billion laughs"
    budget = [MAX_EXPANSION + composer.events]
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
    # a bounded read may end inside a character: that is our cut, not an encoding error
    text, issues = decode(trim_partial_utf8(raw) if truncated else raw)
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


def substring_view(doc: Document, strict: bool = True) -> Document | None:
    """SKILL.md as skills-ref (and Claude Code) read it, or None when that is what ``doc``
    already holds.

    skills-ref reads the file with universal newlines, requires it to start with the
    characters ``---`` and cuts the frontmatter at the next raw substring ``---``: inside a
    value, a comment or a ``----`` line too, and it accepts ``---name: x`` on line 1; Claude
    Code 2.1.332 cuts at the same place (bench/runtimes). The cut is then parsed as
    strictyaml reads YAML (``strict``, skills-ref; see ``parse_yaml``) or as PyYAML does. A view is
    built only when the cut differs from the line-based one or the YAML holds a character
    (tab, U+0085, U+2028, U+2029) that strictyaml reads differently from libyaml.
    """
    if any(i.kind in ("bom", "utf16", "utf32", "invalid-utf8") for i in doc.text_issues):
        return None  # skills-ref finds no frontmatter or cannot decode: SK901/SK903 say so
    text = "\n".join(doc.lines)  # universal newlines: CRLF and a lone CR read as LF
    if not text.startswith("---"):
        return None  # no frontmatter for either reading (SK103)
    end = text.find("---", 3)
    fm = doc.frontmatter
    line_close = None  # where the line-based reading closes, as an offset into text
    if fm is not None and fm.close_line is not None:
        line_close = sum(len(line) + 1 for line in doc.lines[: fm.close_line - 1])
    yaml_text = text[3:end] if end >= 0 else text[3:]
    # what strictyaml may read differently from libyaml: tabs, YAML 1.1 line breaks, escapes
    # (libyaml refuses surrogates such as "\ud83d"), a second `...` document end marker, a
    # comment glued to a block scalar header (`|#`, which libyaml accepts)
    special = strict and (
        any(c in yaml_text for c in ("\t", "\x85", "\u2028", "\u2029", "\\", "..."))
        or _GLUED_HEADER_COMMENT.search(yaml_text) is not None
    )
    same_cut = fm is not None and end == (line_close if line_close is not None else -1)
    if same_cut and (end < 0 or not special):
        return None
    view = Frontmatter(1, None, yaml_text)
    body, body_line = "", len(doc.lines) + 1
    if end >= 0:
        close = offset_pos(text, end)
        view.close_line = close.line
        if close.column != 1 or not _is_delimiter(doc.lines[close.line - 1])[0]:
            view.cut = close  # mid-line or mid-value, not a `---` line
        parse_yaml(yaml_text, 1, view, column_offset=3, strict=strict)
        body, body_line = text[end + 3 :], close.line
    return dataclasses.replace(doc, frontmatter=view, body=body, body_line=body_line)
