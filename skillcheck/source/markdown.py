"""Markdown text -> what rules need from it, each piece at its line and column in the real file.

pyromark (bindings to the Rust CommonMark parser pulldown-cmark, no options: CommonMark only)
does the parsing; its events carry the source range of every block and inline element as
UTF-8 byte offsets, which are turned into lines and columns once per file. Columns count
Unicode code points (like the rest of skillcheck), so they stay right after CJK text, emoji,
block quotes, list markers and table pipes. Where a destination is written (the parser gives
only its value) is found by a small scanner inside the link's range. GFM tables are left to
CommonMark, which reads a table row as a paragraph: links in cells are found at the same
place, and an escaped pipe keeps its backslash in the source.

This is the one Markdown reader. Around it, for speed (parsing is about a fifth of a cold
lint), there are only:

- filters, which decide whether the reader must run and never produce what it produces:
  ``may_have_links`` here, ``anchors.QuickAnchors`` ("this anchor is certainly there"), the
  raw-text candidates of ``analysis.links`` and the raw-text pre-check of
  ``rules.mentions``; a filter may only answer "certainly nothing to find" or "don't know";
- one scan, ``outline.fast_outline``/``fast_links``, that gives exactly the parse's links and
  headings on a documented subset of Markdown and gives up on everything else (see the
  boundary in ``skillcheck.source.outline``).

A file is parsed at most once per run: ``for_body`` and ``for_file`` cache the result on the
Skill. Rules should first ask ``may_have_links`` (or their own cheap test on the text) so a
skill without anything a rule needs is never parsed at all. Rules that need only links and
headings ask ``outline.links_for``/``outline.outline_for``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from skillcheck.source.anchors import Slugger, anchor_key, anchor_keys
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import decoded_text
from skillcheck.source.skill import Memo, Pos, Skill, SkillFile, Span
from skillcheck.source.text import lf_lines

# parsing is linear but not cheap; a Markdown file larger than this is checked up to here
MAX_PARSE_CHARS = 512_000
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
# a line of prose that shows what not to do or what might be (a counter-example): the paths
# and commands on it are not instructions to follow (SK501/SK508 paths, SK704 commands)
NOT_AN_INSTRUCTION = LazyPattern(
    r"❌|✗|✘|🚫|⛔|\b(?:don'?t|do not|never|avoid|bad|wrong|incorrect|instead of|"
    r"hard-?cod\w*|would be|could be|hypothetical(?:ly)?)\b",
    re.IGNORECASE,
)

LinkKind = Literal["link", "image", "definition", "reference", "autolink", "html"]


@dataclass(frozen=True)
class Link:
    """A link destination the file points at.

    ``dest`` is the destination as CommonMark reads it (backslash escapes and entities
    resolved, percent-escapes kept). ``span`` covers the destination as written (inside
    ``<...>`` when bracketed); for ``reference`` uses (``[text][label]``), whose destination
    lives in the definition, it covers the whole link.
    """

    kind: LinkKind
    dest: str
    span: Span
    start: Pos  # the first character of the link (``[``, ``!``, ``<``)
    label: str | None = None  # reference label (definitions and reference uses)


@dataclass(frozen=True)
class Heading:
    level: int
    text: str  # plain text, as a browser's textContent would give it
    slug: str  # GitHub's anchor id, with -1, -2 ... for repeated headings
    span: Span


@dataclass(frozen=True)
class Comment:
    text: str  # between ``<!--`` and ``-->``
    span: Span  # from ``<!--`` to just after ``-->``


@dataclass(frozen=True)
class CodeSpan:
    text: str  # the code as written between the backtick fences
    span: Span


@dataclass(frozen=True)
class CodeBlock:
    text: str
    info: str  # the fence's info string ("" for indented blocks)
    fenced: bool
    span: Span  # first to last content line


@dataclass(frozen=True)
class Segment:
    """A run of inline source on one line of a paragraph, heading or list item.

    ``code`` segments are the inside of code spans; other segments are text with Markdown
    markup left in (link syntax, emphasis markers) and inline HTML left out.
    """

    line: int
    column: int
    text: str
    code: bool = False

    @property
    def span(self) -> Span:
        return Span(Pos(self.line, self.column), Pos(self.line, self.column + len(self.text)))


@dataclass
class Markdown:
    links: list[Link] = field(default_factory=list)
    headings: list[Heading] = field(default_factory=list)
    html_ids: set[str] = field(default_factory=set)  # id= / name= attributes in raw HTML
    comments: list[Comment] = field(default_factory=list)
    code_spans: list[CodeSpan] = field(default_factory=list)
    code_blocks: list[CodeBlock] = field(default_factory=list)
    truncated: bool = False  # only the first MAX_PARSE_CHARS characters were parsed
    # paragraphs and headings whose segments are not computed yet (see ``_segments``)
    _pending: list[list[Any]] = field(default_factory=list, repr=False)
    _segments: list[Segment] | None = field(default=None, repr=False)
    _source: Any = field(default=None, repr=False)
    _lines: list[str] = field(default_factory=list, repr=False)
    _first_line: int = 1
    _anchor_keys: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def line(self, number: int) -> str:
        """The text of file line ``number`` ("" outside the parsed lines)."""
        index = number - self._first_line
        return self._lines[index] if 0 <= index < len(self._lines) else ""

    @property
    def segments(self) -> list[Segment]:
        """The text of paragraphs, headings and list items, and the inside of code spans, as
        runs on single lines (in document order)."""
        if self._segments is None:
            out: list[Segment] = []
            for block in self._pending:
                _segments(self._source, block, out)
            self._segments = out
            self._pending = []
        return self._segments

    def segments_holding(self, marks: tuple[str, ...]) -> list[Segment]:
        """The segments (in document order) of the paragraphs and headings whose source
        holds one of ``marks``: every segment whose text holds one, without cutting the
        other blocks into segments (most blocks, for the marks of a path)."""
        if self._segments is not None:
            return self._segments
        source = self._source
        needles = [mark.encode() for mark in marks]
        out: list[Segment] = []
        for block in self._pending:
            first, last, _quotes, special = block
            end = max([last, *(piece[1] for piece in special)])
            if any(source.data.find(needle, first, end) >= 0 for needle in needles):
                _segments(source, block, out)
        return out

    def has_anchor(self, fragment: str) -> bool:
        """Whether ``#fragment`` lands on a heading or an HTML id in this file."""
        keys = self._anchor_keys
        if keys is None:  # once per file: a file is asked about each of its links
            keys = self._anchor_keys = anchor_keys((h.slug for h in self.headings), self.html_ids)
        return anchor_key(fragment) in keys


# --- cheap pre-checks --------------------------------------------------------------------

_HTML_LINK_HINT = LazyPattern(r"<(?:a|img|source|video|audio)\b", re.IGNORECASE)


def may_have_links(text: str) -> bool:
    """False when ``text`` cannot hold a link destination that is not a URL.

    Inline links and images need ``](``, reference definitions ``]:``; raw HTML links need a
    tag. Autolinks always carry a scheme, so they never matter to path rules.
    """
    return (
        "](" in text
        or has_colon_after_bracket(text)
        or ("<" in text and bool(_HTML_LINK_HINT.search(text)))
    )


def has_colon_after_bracket(text: str) -> bool:
    """``"]:" in text``, several times faster: CPython searches this two-character string
    slowly, and ``]`` is rare in prose."""
    at = text.find("]")
    while at >= 0:
        if text.startswith(":", at + 1):
            return True
        at = text.find("]", at + 1)
    return False


# --- extraction -------------------------------------------------------------------------------


def _comment_spans(source: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each ``<!-- ... -->``, as ``<!--(.*?)-->`` finds them but linear:
    the regex rescans to the end from every unclosed ``<!--`` (quadratic)."""
    at = 0
    while (start := source.find("<!--", at)) >= 0:
        close = source.find("-->", start + 4)
        if close < 0:
            return  # no later ``<!--`` can be closed either
        at = close + 3
        yield start, at


# A tag's attributes are read up to its ">" or the next "<": a tag never closed would
# otherwise be read to the end of the text from each one (quadratic in a file of them).
# A capitalised tag (`<Video src="/video.mp4">`, `<Img>`) is a JSX component of the app the
# text is about, not HTML: its props are the app's paths, not links of the file (`<IMG>`,
# all capitals, is still HTML).
ATTR_LINK_RE = LazyPattern(
    r"<(?-i:(?![A-Z][a-z]))(?:a|img|source|video|audio)\b[^<>]*?\s(?:href|src)\s*=\s*"
    r"(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s>\"']+))",
    re.IGNORECASE | re.DOTALL,
)
_ATTR_ID_RE = LazyPattern(
    r"<[A-Za-z][^<>]*?\s(?:id|name)\s*=\s*(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s>\"']+))",
    re.DOTALL,
)


def attr_value(match: re.Match[str]) -> tuple[str, int, int]:
    """The value of an ``href``/``src``/``id`` match and where it is in the matched text."""
    for group in ("dq", "sq", "bare"):
        if match.group(group) is not None:
            return match.group(group), match.start(group), match.end(group)
    return "", match.end(), match.end()  # pragma: no cover - one group always matches


def truncate_lines(lines: list[str]) -> tuple[list[str], bool]:
    """The lines within the first MAX_PARSE_CHARS characters, and whether any were cut."""
    if sum(map(len, lines)) + len(lines) <= MAX_PARSE_CHARS:
        return lines, False
    total = 0
    for i, line in enumerate(lines):
        total += len(line) + 1
        if total > MAX_PARSE_CHARS:
            return lines[:i], True
    return lines, False


def _html(source: str, pos: Callable[[int], Pos], result: Markdown) -> None:
    """Comments, links and ids in raw HTML; ``pos`` places an offset of ``source``."""
    if "<!--" in source:
        blanked = []
        done = 0
        for start, end in _comment_spans(source):
            span = Span(pos(start), pos(end))
            result.comments.append(Comment(source[start + 4 : end - 3], span))
            blanked += [source[done:start], " " * (end - start)]
            done = end
        source = "".join(blanked) + source[done:]
    if "=" not in source:
        return
    import html  # raw HTML with attributes is rare in skills: not on the start-up path

    for match in ATTR_LINK_RE.finditer(source):
        value, start, end = attr_value(match)
        span = Span(pos(start), pos(end))
        result.links.append(Link("html", html.unescape(value), span, pos(match.start())))
    for match in _ATTR_ID_RE.finditer(source):
        result.html_ids.add(html.unescape(attr_value(match)[0]))


# --- the parser -------------------------------------------------------------------------------

_PARSER: Any = None


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        import pyromark  # lazy: not on the CLI start-up path

        _PARSER = pyromark.Markdown()  # no options: CommonMark only (no GFM tables)
    return _PARSER


_SURROGATE = LazyPattern("[\ud800-\udfff]")


def _parseable(lines: list[str]) -> str:
    """The text of ``lines`` as the parser is given it, each character at its column.

    A lone CR would end a line to the parser but not to our line numbers (it reads as a
    space); NUL reads as U+FFFD (CommonMark 2.3), and so does a lone surrogate (from a
    file decoded with surrogateescape), which UTF-8 cannot carry.
    """
    text = "\n".join(lines)
    if "\r" in text:
        text = text.replace("\r", " ")
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    if not text.isascii():
        text = _SURROGATE.sub("\ufffd", text)
    return text


# UTF-8 continuation bytes: a byte string's length without them is its number of characters
_CONTINUATION = bytes(range(0x80, 0xC0))
_BLOCK = 1024  # bytes between two known columns on a long non-ASCII line


class _Source:
    """The parsed text as UTF-8 (what the parser's ranges count) and byte offset -> position.

    Columns count code points: the characters of a line before a byte offset are counted,
    unless the text is ASCII (then byte and character offsets are the same); on a long line
    from the nearest of the columns known every ``_BLOCK`` bytes, so that a line holding
    thousands of links is not counted again for each.
    """

    def __init__(self, text: str, first_line: int) -> None:
        self.data = text.encode()
        self.ascii = len(self.data) == len(text)
        self.first_line = first_line
        starts = [0]
        total = 0
        for line in self.data.split(b"\n"):
            total += len(line) + 1
            starts.append(total)
        self.starts = starts
        self._blocks: dict[int, list[int]] = {}  # line index -> column at each block start

    def index(self, offset: int) -> int:
        """The index (in the parsed lines) of the line holding byte ``offset``."""
        return bisect.bisect_right(self.starts, offset) - 1

    def pos(self, offset: int) -> Pos:
        i = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[i]
        column = offset - start
        if not self.ascii and column:
            data = self.data
            if column > _BLOCK:
                blocks = self._blocks.get(i)
                if blocks is None:
                    blocks = self._blocks[i] = self._columns(i)
                block = column // _BLOCK
                begin = start + block * _BLOCK
                column = blocks[block] + len(data[begin:offset].translate(None, _CONTINUATION))
            else:
                head = data[start:offset]
                if not head.isascii():
                    column = len(head.translate(None, _CONTINUATION))
        return Pos(i + self.first_line, column + 1)

    def _columns(self, index: int) -> list[int]:
        """The column (0-based) of each ``_BLOCK``-th byte of line ``index``."""
        data = self.data
        out = [0]
        for begin in range(self.starts[index], self.line_end(index), _BLOCK):
            chunk = data[begin : begin + _BLOCK]
            out.append(out[-1] + len(chunk.translate(None, _CONTINUATION)))
        return out

    def text(self, begin: int, end: int) -> str:
        return self.data[begin:end].decode("utf-8", "replace")

    def line_end(self, index: int) -> int:
        """The byte offset of line ``index``'s end (before its newline)."""
        return min(self.starts[index + 1] - 1, len(self.data))

    def content_start(self, offset: int, end: int, quotes: int) -> int:
        """Where a continuation line's content starts: after its indentation and up to
        ``quotes`` block-quote markers (a lazy continuation line has none)."""
        data = self.data
        while offset < end and data[offset] in b" \t":
            offset += 1
        for _ in range(quotes):
            if offset >= end or data[offset] != 0x3E:  # ">"
                break
            offset += 1
            while offset < end and data[offset] in b" \t":
                offset += 1
        return offset

    def pieces(self, begin: int, end: int, quotes: int) -> list[tuple[int, int]]:
        """The byte range ``begin:end`` of inline source cut at line ends, each later line
        without its container prefix (as CommonMark reads a paragraph's lines)."""
        index = self.index(begin)
        out: list[tuple[int, int]] = []
        while True:
            line_end = self.line_end(index)
            if end <= line_end or index + 2 >= len(self.starts):
                out.append((begin, min(end, line_end)))
                return out
            out.append((begin, line_end))
            index += 1
            begin = self.content_start(self.starts[index], min(end, self.line_end(index)), quotes)


class _Joined:
    """Pieces of the source (each on one line) joined with newlines, and offset -> position."""

    def __init__(self, source: _Source, pieces: list[tuple[int, int]]) -> None:
        self.source = source
        self.offsets: list[int] = []
        self.begins: list[int] = []
        parts: list[str] = []
        length = 0
        for begin, end in pieces:
            part = source.text(begin, end)
            self.offsets.append(length)
            self.begins.append(begin)
            parts.append(part)
            length += len(part) + 1
        self.text = "\n".join(parts)

    def pos(self, offset: int) -> Pos:
        i = max(bisect.bisect_right(self.offsets, offset) - 1, 0)
        start = self.source.pos(self.begins[i])
        return Pos(start.line, start.column + offset - self.offsets[i])


def _skip_space(source: _Source, at: int, end: int) -> int:
    """Past the spaces, tabs and (at most one) line ending before a destination."""
    data = source.data
    while at < end and data[at] in b" \t":
        at += 1
    if at < end and data[at] == 0x0A:  # "\n": the next line's container prefix goes too
        at = source.content_start(at + 1, end, 1_000)
    return at


_PUNCT = frozenset(b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def _destination(data: bytes, at: int, end: int) -> tuple[int, int] | None:
    """Where a link destination starting at byte ``at`` is written (inside ``<...>`` when
    bracketed), following CommonMark's link destination; None when there is none."""
    if at < end and data[at] == 0x3C:  # "<"
        i = at + 1
        while i < end:
            ch = data[i]
            if ch == 0x3E:  # ">"
                return at + 1, i
            if ch in (0x0A, 0x3C):
                return None
            i += 2 if ch == 0x5C and i + 1 < end and data[i + 1] in _PUNCT else 1
        return None
    depth = 0
    i = at
    while i < end:
        ch = data[i]
        if ch == 0x5C and i + 1 < end and data[i + 1] in _PUNCT:
            i += 2
            continue
        if ch <= 0x20 or ch == 0x7F:
            break
        if ch == 0x28:  # "("
            depth += 1
        elif ch == 0x29:  # ")"
            if depth == 0:
                break
            depth -= 1
        i += 1
    return None if depth else (at, i)


def _reference_label(label: str) -> str:
    """A reference label normalised for matching (whitespace collapsed, case folded)."""
    return " ".join(label.split()).lower().upper()


def _definitions(source: _Source, text: str, result: Markdown) -> bool:
    """Reference definitions ``[label]: dest``, each with where its destination is written;
    whether the text may hold more (a repeated label, which the parser does not report)."""
    found = _parser().reference_definitions(text)
    for definition in found.values():
        _definition(source, definition, definition["span"]["start"], result)
    return bool(found) and text.count("]:") > len(found)


def _definition(source: _Source, definition: Any, start: int, result: Markdown) -> None:
    """The definition the parser read at byte ``start``, with where its destination is."""
    data = source.data
    end = start + definition["span"]["end"] - definition["span"]["start"]
    at = start + 1
    while at < end and data[at] != 0x5D:  # the label ends at the first unescaped "]"
        at += 2 if data[at] == 0x5C else 1
    if at >= end:
        return
    where = _destination(data, _skip_space(source, at + 2, end), end)
    if where is None:
        return
    span = Span(source.pos(where[0]), source.pos(where[1]))
    label = source.text(start + 1, at)
    result.links.append(Link("definition", definition["dest"], span, source.pos(start), label))


# a line that may start with a reference definition: container markers, then "[label]:"
_DEFINITION_LINE = LazyPattern(
    rb"^[ \t>]*(?:(?:[-+*]|[0-9]{1,9}[.)])[ \t>]+)*(\[)(?:[^\]\\\n]|\\.){1,999}\]:", re.MULTILINE
)


def _repeated_definitions(
    source: _Source, covered: list[tuple[int, int]], result: Markdown
) -> None:
    """Definitions of a label defined before: CommonMark reads them as definitions (the
    first one wins), but the parser reports only the first. A line that starts like one
    and lies outside every paragraph, heading, code and HTML block is one; its text alone
    gives its destination."""
    known = {link.start for link in result.links if link.kind == "definition"}
    covered.sort()
    begins = [begin for begin, _ in covered]
    data = source.data
    for match in _DEFINITION_LINE.finditer(data):
        start = match.start(1)
        i = bisect.bisect_right(begins, start) - 1
        if (i >= 0 and start < covered[i][1]) or source.pos(start) in known:
            continue
        line = data[start : source.line_end(source.index(start))].decode("utf-8", "replace")
        for definition in _parser().reference_definitions(line).values():
            _definition(source, definition, start, result)
            break


_INLINE_EVENTS = frozenset(("Text", "Code", "InlineHtml"))
_INLINE_TAGS = frozenset(("Emphasis", "Strong", "Strikethrough"))
_ATX_OPENING = LazyPattern(rb"#{1,6}(?:[ \t]+|(?=[\r\n])|\Z)")

# an inline block being read: [first event's start, last event's end, block-quote depth,
# specials (start, end, code start, code end)]
_Block = list[Any]


def parse(lines: list[str], first_line: int = 1) -> Markdown:
    """Parse Markdown given as its lines; ``first_line`` is the file line of ``lines[0]``."""
    result = Markdown(_first_line=first_line)
    lines, result.truncated = truncate_lines(lines)
    result._lines = lines
    text = _parseable(lines)
    source = _Source(text, first_line)
    result._source = source
    repeated = has_colon_after_bracket(text) and _definitions(source, text, result)
    covered: list[tuple[int, int]] = []  # code and HTML blocks, if definitions may repeat
    data = source.data
    links = result.links
    slugger = Slugger()
    quotes = 0  # block-quote depth
    block: _Block | None = None
    items = 0  # list-item depth
    loose: _Block | None = None  # the block of a tight item's text (it has no paragraph)
    heading: list[str] | None = None  # the heading's plain text so far
    heading_start = 0
    level = 0
    in_image = 0
    frames: list[list[Any]] = []  # open links and images: [data, start, end, label end]
    code: list[str] | None = None  # the open code block's text
    code_info: tuple[int, bool, str] = (0, False, "")
    code_end = -1
    html: list[tuple[int, int]] | None = None  # the open HTML block's lines
    for event, where in _parser().events_with_range(text, merge_text=True):
        start = where["start"]
        end = where["end"]
        if event.__class__ is str:  # SoftBreak, HardBreak, Rule
            if event == "Rule":
                if loose is not None:
                    result._pending.append(loose)
                    block = loose = None
                continue
            if block is not None:
                block[1] = end
                if heading is not None and not in_image:
                    heading.append("\n")
                if frames:
                    frames[-1][3] = end
            continue
        key = next(iter(event))
        value = event[key]
        if items and key == "Start":
            inline = (
                value in _INLINE_TAGS
                if value.__class__ is str
                else "Link" in value or "Image" in value
            )
            if inline and block is None and code is None:
                block = loose = [start, start, quotes, []]  # a tight item's text: no paragraph
            elif not inline and loose is not None:
                result._pending.append(loose)  # a block starts in the item: its text ends
                block = loose = None
        elif block is None and items and code is None and key in _INLINE_EVENTS:
            # (a text event after a backslash escape starts after the backslash)
            begin = start - 1 if start and data[start - 1] == 0x5C else start
            block = loose = [begin, begin, quotes, []]
        if key == "Text":
            if code is not None:
                code.append(value)
                code_end = end
            elif block is not None:
                block[1] = end
                if heading is not None and not in_image:
                    heading.append(value)
                if frames:
                    frames[-1][3] = end
            # text in an HTML block comes as Html events; other text is in no block we read
        elif key == "Start":
            if value.__class__ is str:
                if value == "Paragraph":
                    block = [start, start, quotes, []]
                elif value == "HtmlBlock":
                    html = []
                    if repeated:
                        covered.append((start, end))
                elif value == "Item":
                    items += 1
                continue
            tag = next(iter(value))
            if tag == "Link" or tag == "Image":
                if tag == "Image":
                    in_image += 1
                frames.append([value[tag], start, end, start + (2 if tag == "Image" else 1)])
            elif tag == "Heading":
                block = [start, start, quotes, []]
                heading = []
                heading_start = start
                level = int(value[tag]["level"][1])
            elif tag == "BlockQuote":
                quotes += 1
            elif tag == "CodeBlock":
                if repeated:
                    covered.append((start, end))
                kind = value[tag]
                fenced = kind != "Indented"
                info = ""
                if fenced:
                    first = source.text(start, source.line_end(source.index(start)))
                    info = first.lstrip(" \t").lstrip(first.lstrip(" \t")[:1]).strip()
                code = []
                code_info = (start, fenced, info)
                code_end = -1
        elif key == "End":
            if value.__class__ is str:
                if block is not None and end > block[1] and value in ("Emphasis", "Strong"):
                    block[1] = end  # the closing delimiter is the block's (or label's) text
                    if frames:
                        frames[-1][3] = end
                elif value == "Paragraph" and block is not None:
                    result._pending.append(block)
                    block = None
                elif value == "Item":
                    items -= 1
                    if loose is not None:
                        result._pending.append(loose)
                        block = loose = None
                elif value == "Link" or value == "Image":
                    if value == "Image":
                        in_image -= 1
                    frame = frames.pop()
                    _link(source, frame, value == "Image", links)
                    if frames:
                        frames[-1][3] = frame[2]
                    if block is not None:
                        block[1] = max(block[1], frame[2])
                elif value == "CodeBlock" and code is not None:
                    _code_block(source, lines, code, code_info, code_end, result)
                    code = None
                elif value == "HtmlBlock" and html is not None:
                    if html:
                        joined = _Joined(source, html)
                        _html(joined.text, joined.pos, result)
                    html = None
                continue
            tag = next(iter(value))
            if tag == "Heading" and block is not None and heading is not None:
                opening = _ATX_OPENING.match(data, block[0])
                if opening is not None:
                    block[0] = opening.end()  # the segments start at the heading's text
                result._pending.append(block)
                plain = "".join(heading).strip()
                index = source.index(heading_start)
                real = lines[index] if index < len(lines) else ""
                line = index + first_line
                span = Span(
                    Pos(line, len(real) - len(real.lstrip()) + 1), Pos(line, len(real.rstrip()) + 1)
                )
                result.headings.append(Heading(level, plain, slugger.slug(plain), span))
                block = heading = None
            elif tag == "BlockQuote":
                quotes -= 1
        elif key == "Code":
            if block is not None:
                block[1] = end
                if frames:
                    frames[-1][3] = end
                if heading is not None and not in_image:
                    heading.append(value)
                fence = 1
                while data[start + fence] == 0x60:  # "`"
                    fence += 1
                inner = (start + fence, end - fence)
                block[3].append((start, end, *inner))
                if b"\n" in data[inner[0] : inner[1]]:
                    code_text = _Joined(source, source.pieces(*inner, block[2])).text
                else:
                    code_text = source.text(*inner)
                result.code_spans.append(
                    CodeSpan(code_text, Span(source.pos(inner[0]), source.pos(inner[1])))
                )
        elif key == "InlineHtml":
            if block is not None:
                block[1] = end
                if frames:
                    frames[-1][3] = end
                block[3].append((start, end, start, start))
                joined = _Joined(source, source.pieces(start, end, block[2]))
                _html(joined.text, joined.pos, result)
        elif key == "Html" and html is not None:
            if end > start and data[end - 1] == 0x0A:
                end -= 1
            html.append((start, end))
    if repeated:
        covered += [(block[0], block[1]) for block in result._pending]
        _repeated_definitions(source, covered, result)
    links.sort(key=lambda link: (link.start, link.span.start))
    return result


_LEAF_BLOCKS = frozenset(("Paragraph", "Heading", "CodeBlock", "HtmlBlock"))


def text_blocks(lines: list[str]) -> list[tuple[bool, int, int]]:
    """(is HTML, first line index, end line index) of each block of ``lines`` that holds text
    rather than code: HTML blocks, and the inline text of paragraphs, headings and list items
    (a tight item's text, which comes without a paragraph, by the lines its events cover)."""
    text = _parseable(lines)
    source = _Source(text, 0)
    out: list[tuple[bool, int, int]] = []
    depth = 0  # inside a paragraph, heading, code block or HTML block
    for event, where in _parser().events_with_range(text, merge_text=True):
        if event.__class__ is str:
            continue
        key = next(iter(event))
        start, end = where["start"], where["end"]
        begin, finish = source.index(start), source.index(max(end - 1, start)) + 1
        if key == "Start" or key == "End":
            value = event[key]
            tag = value if value.__class__ is str else next(iter(value))
            if tag in _LEAF_BLOCKS:
                if key == "End":
                    depth -= 1
                    continue
                depth += 1
                if tag != "CodeBlock":
                    out.append((tag == "HtmlBlock", begin, finish))
        elif depth == 0 and key in _INLINE_EVENTS:
            if out and not out[-1][0] and begin < out[-1][2]:  # one line is read once
                out[-1] = (False, out[-1][1], max(finish, out[-1][2]))
            else:
                out.append((False, begin, finish))
    return out


def _link(source: _Source, frame: list[Any], image: bool, links: list[Link]) -> None:
    """The link or image that ``frame`` (its start event's data, range, label end) reads."""
    info, start, end, label_end = frame
    kind = info["link_type"]
    if kind == "Inline":
        data = source.data
        close = data.find(b"]", label_end, end)
        where = None
        if close >= 0 and data[close + 1 : close + 2] == b"(":
            at = _skip_space(source, close + 2, end)
            where = _destination(data, at, end) or (at, at)
        else:  # pragma: no cover - an inline link always has "](" after its label
            where = (start, start)
        span = Span(source.pos(where[0]), source.pos(where[1]))
        links.append(Link("image" if image else "link", info["dest_url"], span, source.pos(start)))
    elif kind == "Autolink" or kind == "Email":
        span = Span(source.pos(start + 1), source.pos(end - 1))
        links.append(Link("autolink", source.text(start + 1, end - 1), span, source.pos(start)))
    else:  # a reference use: [text][label], [label][], [label]
        if kind == "Collapsed" and source.data[end : end + 2] == b"[]":
            end += 2  # the parser's range stops before the "[]"
        span = Span(source.pos(start), source.pos(end))
        label = _reference_label(info["id"]) if info["id"] else None
        links.append(Link("reference", info["dest_url"], span, span.start, label=label))


def _code_block(
    source: _Source,
    lines: list[str],
    parts: list[str],
    info: tuple[int, bool, str],
    last: int,
    result: Markdown,
) -> None:
    start, fenced, string = info
    begin = source.index(start) + (1 if fenced else 0)
    finish = source.index(last - 1) if last > 0 else begin
    finish = max(finish, begin)
    tail = lines[finish] if finish < len(lines) else ""
    first = source.first_line
    span = Span(Pos(begin + first, 1), Pos(finish + first, len(tail) + 1))
    code = "".join(parts)
    if code and not code.endswith("\n"):
        code += "\n"  # the last line of the text: every code line ends with a line ending
    result.code_blocks.append(CodeBlock(code, string, fenced, span))


def _segments(source: _Source, block: _Block, out: list[Segment]) -> None:
    """The segments of one paragraph or heading (see ``Segment``)."""
    first, last, quotes, special = block
    cuts: list[tuple[int, int, bool]] = []
    cursor = first
    for start, end, code_start, code_end in special:
        if start > cursor:
            cuts.append((cursor, start, False))
        if code_end > code_start:
            cuts.append((code_start, code_end, True))
        cursor = max(cursor, end)
    if cursor < last:
        cuts.append((cursor, last, False))
    for begin, end, code in cuts:
        for piece_start, piece_end in source.pieces(begin, end, quotes):
            part = source.text(piece_start, piece_end)
            stripped = part.strip()
            if stripped:
                at = source.pos(piece_start)
                lead = len(part) - len(part.lstrip())
                out.append(Segment(at.line, at.column + lead, stripped, code))


# --- per-skill cache ----------------------------------------------------------------------------


def is_markdown(rel: str) -> bool:
    return rel.lower().endswith(MARKDOWN_SUFFIXES)


# the parse of the SKILL.md body ("SKILL.md") or of a file
MARKDOWN: Memo[Markdown | None] = Memo("markdown")


def text_of(skill: Skill, entry: SkillFile) -> str | None:
    """The decoded text of a file of the skill (read and decoded once per run)."""
    return decoded_text(skill, entry)


def for_body(skill: Skill) -> Markdown | None:
    """The SKILL.md body, parsed once per run (positions are SKILL.md's lines)."""
    doc = skill.doc
    if doc is None:
        return None
    return skill.memos.get_or_make(
        MARKDOWN, lambda: parse(doc.lines[doc.body_line - 1 :], doc.body_line), "SKILL.md"
    )


def for_file(skill: Skill, entry: SkillFile) -> Markdown | None:
    """Another Markdown file of the skill, parsed once per run; None when unreadable."""
    if skill.skill_md is not None and entry.path == skill.skill_md:
        return for_body(skill)
    if not skill.memos.has(MARKDOWN, entry.rel):
        text = text_of(skill, entry)
        skill.memos.put(MARKDOWN, None if text is None else parse(lf_lines(text), 1), entry.rel)
    return skill.memos.get(MARKDOWN, entry.rel)
