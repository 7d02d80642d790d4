"""Markdown text -> what rules need from it, each piece at its line and column in the real file.

markdown-it-py (the CommonMark preset) does the parsing; its tokens carry line maps but no
columns, so the inline rules that matter (links, images, autolinks, code spans, inline HTML)
are wrapped to record where in the inline source each one starts and ends, and the inline
source is aligned with the file's lines. Columns count Unicode code points (like the rest of
skillcheck), so they stay right after CJK text, emoji, block quotes, list markers and table
pipes. GFM tables are left to CommonMark, which reads a table row as a paragraph: links in
cells are found at the same place, and an escaped pipe keeps its backslash in the source.

A file is parsed at most once per run: ``for_body`` and ``for_file`` cache the result on the
Skill. Rules should first ask ``may_have_links`` (or their own cheap test on the text) so a
skill without anything a rule needs is never parsed at all.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from skillcheck.model import Pos, Skill, SkillFile, Span

# parsing is linear but not cheap; a Markdown file larger than this is checked up to here
MAX_PARSE_CHARS = 512_000
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")

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
    # inline runs whose segments are not computed yet: (content, first line index, special
    # ranges, mapper or None)
    _pending: list[tuple[str, int, list[tuple[int, int, int, int]], Any]] = field(
        default_factory=list, repr=False
    )
    _segments: list[Segment] | None = field(default=None, repr=False)
    _lines: list[str] = field(default_factory=list, repr=False)
    _first_line: int = 1

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
            for content, first, special, mapper in self._pending:
                if mapper is None:
                    mapper = _Mapper(content, first, self._lines, self._first_line)
                _segments(content, special, mapper, out)
            self._segments = out
            self._pending = []
        return self._segments

    def has_anchor(self, fragment: str) -> bool:
        """Whether ``#fragment`` lands on a heading or an HTML id in this file.

        Compared without case, as GitHub's own anchor navigation does, so only anchors that
        break everywhere are reported.
        """
        wanted = fragment.lower()
        if wanted.startswith("user-content-"):
            wanted = wanted[len("user-content-") :]
        return any(h.slug == wanted for h in self.headings) or any(
            i.lower() == wanted for i in self.html_ids
        )


# --- cheap pre-checks --------------------------------------------------------------------

_HTML_LINK_HINT = re.compile(r"<(?:a|img|source|video|audio)\b", re.IGNORECASE)


def may_have_links(text: str) -> bool:
    """False when ``text`` cannot hold a link destination that is not a URL.

    Inline links and images need ``](``, reference definitions ``]:``; raw HTML links need a
    tag. Autolinks always carry a scheme, so they never matter to path rules.
    """
    return "](" in text or "]:" in text or ("<" in text and bool(_HTML_LINK_HINT.search(text)))


# --- GitHub anchors -------------------------------------------------------------------------

_ATX = re.compile(r"(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_CONTAINER = re.compile(r"\s*(?:>|[-*+](?=\s)|\d{1,9}[.)](?=\s))")
_RAW_HTML = re.compile(r"<(?:script|pre|style|textarea)\b|<[?!]", re.IGNORECASE)
_INLINE_MARKUP = re.compile(r"[*_`\[\]<>&\\!]")


_QUICK_FIRST = frozenset("#`~ >-*+0123456789")
# a fence opened inside a list item or a quote: only a real parse knows where it ends
_NESTED_FENCE = re.compile(r"[ \t]*(?:(?:>|[-*+]|\d{1,9}[.)])[ \t]*)+(?:```|~~~)")


def quick_anchors(text: str) -> set[str] | None:
    """Anchors of plain top-level ATX headings, found without parsing (see ``_quick_scan``).

    Without raw HTML only the lines holding ``#`` headings and fences need looking at.
    """
    if "<" in text:
        return _quick_scan(text)
    out: set[str] = set()
    for slug in _quick_headings(text):
        if slug is None:
            return None
        out.add(slug)
    return out


class QuickAnchors:
    """``quick_anchors`` of a text, read only as far as the questions asked need.

    ``has`` stops at the heading it looks for, so a link to a section near the top of a long
    file costs a few lines. A heading found before a construct only a parse can read (where
    ``quick_anchors`` gives None) still counts: what comes later in a file cannot change an
    earlier heading, or the number of the earlier duplicates of its name.
    """

    def __init__(self, text: str) -> None:
        self._found: set[str] = set()
        if "<" in text:
            self._found = _quick_scan(text) or set()
            self._rest: Iterator[str | None] = iter(())
        else:
            self._rest = _quick_headings(text)

    def has(self, anchor: str) -> bool:
        """Whether ``anchor`` (lower case) is certainly an anchor of the text."""
        if anchor in self._found:
            return True
        for slug in self._rest:
            if slug is None:
                break
            self._found.add(slug)
            if slug == anchor:
                return True
        return False


def _quick_headings(text: str) -> Iterator[str | None]:
    """The anchors ``quick_anchors`` finds, in file order, then None if it gives up."""
    slugger = Slugger()
    fence: str | None = None
    for line in text.split("\n"):
        if not line or line[0] not in _QUICK_FIRST:
            continue
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) > 3:
            if fence is None and ("```" in line or "~~~" in line) and _NESTED_FENCE.match(line):
                yield None
                return
            continue
        first = stripped[:1]
        if fence is not None:
            if first == fence[0]:
                tail = stripped.rstrip(" \t\r")
                if tail.startswith(fence) and tail == first * len(tail):
                    fence = None
            continue
        if first in "`~":
            opened = _FENCE.match(line)
            if opened is not None:
                fence = opened.group(1)
            continue
        if first != "#":
            if ("```" in line or "~~~" in line) and _NESTED_FENCE.match(line):
                yield None
                return
            continue
        heading = _ATX.match(stripped.rstrip("\r"))
        if heading is None:
            continue
        title = (heading.group(2) or "").strip()
        if not _INLINE_MARKUP.search(title):
            yield slugger.slug(title)


def _quick_scan(text: str) -> set[str] | None:
    """Anchors of plain top-level ATX headings, found without parsing.

    Top-level fenced code and HTML blocks are skipped the way CommonMark ends them; None
    when a fence or an HTML block sits inside a list or a quote, where only a real parse can
    tell what it hides. The result is a subset of the full parse's anchors (headings with
    inline markup, in lists or quotes, or in setext form are left out, and leaving one out
    only lowers the ``-N`` suffix of later duplicates, whose smaller numbers exist anyway),
    so a fragment found here is certainly there.
    """
    slugger = Slugger()
    out: set[str] = set()
    fence: str | None = None  # the closing fence we are waiting for
    until_blank = until_comment = False
    for line in text.split("\n"):
        if fence is not None:
            stripped = line.strip()
            if (
                stripped.startswith(fence)
                and stripped == fence[0] * len(stripped)
                and len(line) - len(line.lstrip(" ")) <= 3
            ):
                fence = None
            continue
        if until_comment:
            until_comment = "-->" not in line
            continue
        if until_blank:
            until_blank = bool(line.strip())
            continue
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if indent <= 3:
            opened = _FENCE.match(line)
            if opened is not None:
                fence = opened.group(1)
                continue
            if stripped.startswith("<!--"):
                until_comment = "-->" not in stripped[4:]
                continue
            if stripped.startswith("<"):
                if _RAW_HTML.match(stripped):
                    return None
                until_blank = True
                continue
        if "```" in line or "~~~" in line or "<" in line:
            inner = _CONTAINER.match(line)
            if inner is not None:
                rest = line[inner.end() :].lstrip()
                if rest.startswith(("```", "~~~", "<")) or _CONTAINER.match(rest):
                    return None
        if not stripped.startswith("#") or indent > 3:
            continue
        match = _ATX.match(stripped.rstrip("\r"))
        if match is None:
            continue
        title = (match.group(2) or "").strip()
        if _INLINE_MARKUP.search(title):
            continue
        out.add(slugger.slug(title))
    return out


def _slug_char(ch: str) -> bool:
    if ch in " -":
        return True
    cat = unicodedata.category(ch)
    return cat[0] in "LMN" or cat == "Pc"


_ASCII_DROP = re.compile(r"[^a-z0-9 _-]")


def slugify(text: str) -> str:
    """GitHub's heading id (github-slugger): lower case, drop everything but letters, marks,
    numbers, ``_``, ``-`` and spaces, then turn each space into ``-``."""
    if text.isascii():
        lower = text.lower()
        if lower.replace(" ", "").isalnum():  # nothing to drop (most headings)
            return lower.replace(" ", "-")
        return _ASCII_DROP.sub("", lower).replace(" ", "-")
    return "".join(ch for ch in text.lower() if _slug_char(ch)).replace(" ", "-")


class Slugger:
    """Unique slugs for a document's headings: the second ``Usage`` is ``usage-1``."""

    def __init__(self) -> None:
        self.occurrences: dict[str, int] = {}

    def slug(self, text: str) -> str:
        base = slugify(text)
        result = base
        while result in self.occurrences:
            self.occurrences[base] += 1
            result = f"{base}-{self.occurrences[base]}"
        self.occurrences[result] = 0
        return result


# --- the parser -------------------------------------------------------------------------------

_MD: Any = None
_META = "skillcheck"


def _parser() -> Any:
    global _MD
    if _MD is None:
        from markdown_it import MarkdownIt  # lazy: not on the CLI start-up path

        md = MarkdownIt("commonmark", {"store_labels": True})
        md.core.ruler.at("inline", _selective_inline)
        # keep every destination as written: rules decide what a scheme means
        md.validateLink = lambda url: True
        md.normalizeLink = lambda url: url
        for name in ("link", "image", "autolink", "backticks", "html_inline"):
            rules = md.inline.ruler.__rules__
            index = md.inline.ruler.__find__(name)
            md.inline.ruler.at(name, _recording_inline(rules[index].fn, name))
        index = md.block.ruler.__find__("reference")
        original = md.block.ruler.__rules__[index].fn
        md.block.ruler.at("reference", _recording_reference(original))
        md.block.ruler.before("table", "skillcheck_deep", _flat_when_deep)
        _MD = md
    return _MD


def _flat_when_deep(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
    """Near markdown-it's nesting limit, read each line as a paragraph.

    At the limit markdown-it skips the rest of the input: 21 nested quotes or 10 nested
    lists would hide every later link of the file from the checks. Taking the deeper lines
    as paragraphs (whose text is still parsed for links) stops the nesting two levels short
    of the limit, as a blockquote opens one level and a list item two.
    """
    if silent or state.level < state.md.options.maxNesting - 2:
        return False
    from markdown_it.rules_block import paragraph

    return bool(paragraph(state, start_line, end_line, silent))


# characters without which an inline run holds no link, image, code span or HTML
_INLINE_MARKS = re.compile(r"[\[`<]")


def _selective_inline(state: Any) -> None:
    """markdown-it's core inline rule, skipping paragraphs that hold nothing rules read.

    Headings are always parsed (their anchors need the rendered text); other runs only when
    they contain ``[``, a backtick or ``<``. Most prose lines do not, and inline parsing is
    half of markdown-it's time.
    """
    previous = None
    for token in state.tokens:
        if token.type == "inline":
            if token.children is None:
                token.children = []
            heading = previous is not None and previous.type == "heading_open"
            if heading or _INLINE_MARKS.search(token.content):
                state.md.inline.parse(token.content, state.md, state.env, token.children)
        previous = token


_TOKEN_OF_RULE = {
    "link": "link_open",
    "image": "image",
    "autolink": "link_open",
    "backticks": "code_inline",
    "html_inline": "html_inline",
}


def _recording_inline(fn: Any, name: str) -> Any:
    """Wrap an inline rule so the token it pushes remembers its source range."""
    wanted = _TOKEN_OF_RULE[name]

    def rule(state: Any, silent: bool) -> bool:
        start = state.pos
        count = len(state.tokens)
        if not fn(state, silent):
            return False
        if silent:
            return True
        for token in state.tokens[count:]:
            if token.type == wanted:
                info: dict[str, Any] = {"src": (start, state.pos)}
                if name in ("link", "image"):
                    info.update(_destination(state, start, state.pos, name == "image"))
                if token.meta is None:
                    token.meta = {}
                token.meta[_META] = info
                break
        return True

    return rule


def _destination(state: Any, start: int, end: int, image: bool) -> dict[str, Any]:
    """Where an inline link's destination is written, or that it is a reference use."""
    helpers = state.md.helpers
    label_end = helpers.parseLinkLabel(state, start + 1 if image else start, not image)
    src = state.src
    pos = label_end + 1
    if label_end < 0 or pos >= end or src[pos] != "(":
        return {"reference": True}
    pos += 1
    while pos < end and src[pos] in " \t\n":
        pos += 1
    res = helpers.parseLinkDestination(src, pos, end)
    if not res.ok:
        return {"dest": "", "dest_src": (pos, pos)}
    if src[pos] == "<":
        return {"dest": res.str, "dest_src": (pos + 1, res.pos - 1)}
    return {"dest": res.str, "dest_src": (pos, res.pos)}


def _recording_reference(fn: Any) -> Any:
    """Wrap the reference-definition block rule to record where each destination is."""

    def rule(state: Any, start_line: int, end_line: int, silent: bool) -> bool:
        if not fn(state, start_line, end_line, silent):
            return False
        if silent:
            return True
        pieces: list[tuple[int, int]] = []  # (offset in `string`, absolute offset in src)
        parts: list[str] = []
        length = 0
        for line in range(start_line, state.line):
            begin = state.bMarks[line] + state.tShift[line]
            text = state.src[begin : state.eMarks[line] + 1]
            pieces.append((length, begin))
            parts.append(text)
            length += len(text)
        string = "".join(parts)
        pos, label_end = 1, -1
        while pos < len(string):  # the label ends at the first unescaped ']'
            ch = string[pos]
            if ch == "]":
                label_end = pos
                break
            if ch == "\\":
                pos += 1
            pos += 1
        if label_end < 0:
            return True
        pos = label_end + 2
        while pos < len(string) and string[pos] in " \t\n":
            pos += 1
        res = state.md.helpers.parseLinkDestination(string, pos, len(string))
        if not res.ok:
            return True
        begin, finish = (pos + 1, res.pos - 1) if string[pos] == "<" else (pos, res.pos)

        def absolute(offset: int) -> int:
            index = bisect.bisect_right([p[0] for p in pieces], offset) - 1
            return pieces[index][1] + offset - pieces[index][0]

        state.env.setdefault(_META, []).append(
            {
                "dest": res.str,
                "label": string[1:label_end],
                "start": absolute(0),
                "dest_src": (absolute(begin), absolute(begin) + (finish - begin)),
            }
        )
        return True

    return rule


# --- aligning inline source with the file -------------------------------------------------------


class _Mapper:
    """Offsets in a block's text (an inline token's content, an HTML block) -> file positions.

    Each line of a block's text is the tail of a real line: block-quote markers, list
    indentation and the paragraph's outer whitespace removed (and, after a partially used
    tab, spaces in place of the tab). So each line is matched against the end of its real
    line, falling back to a search when a closing ``#`` sequence follows a heading's text.
    """

    def __init__(self, content: str, first: int, lines: list[str], line_offset: int) -> None:
        self.starts: list[int] = []
        self.rows: list[tuple[int, int, int]] = []  # (line index, lead, column of the core)
        self.line_offset = line_offset
        self.lines = lines
        offset = 0
        last = len(lines) - 1
        for i, frag in enumerate(content.split("\n")):
            self.starts.append(offset)
            offset += len(frag) + 1
            index = min(first + i, last) if lines else 0
            real = lines[index] if lines else ""
            core = frag.strip()
            lead = len(frag) - len(frag.lstrip())
            self.rows.append((index, lead, _locate(core, real)))

    def text(self, line: int) -> str:
        index = line - self.line_offset
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def pos(self, offset: int) -> Pos:
        i = max(bisect.bisect_right(self.starts, offset) - 1, 0)
        index, lead, col = self.rows[i]
        return Pos(index + self.line_offset, col + max(offset - self.starts[i] - lead, 0) + 1)


def _locate(core: str, real: str) -> int:
    if core:
        tail = real.rstrip()
        if tail.endswith(core):
            return len(tail) - len(core)
        found = real.find(core)
        if found >= 0:
            return found
    return len(real) - len(real.lstrip())


# --- extraction -------------------------------------------------------------------------------

_COMMENT_RE = re.compile(r"<!--(.*?)-->", re.DOTALL)
ATTR_LINK_RE = re.compile(
    r"<(?:a|img|source|video|audio)\b[^>]*?\s(?:href|src)\s*=\s*"
    r"(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s>\"']+))",
    re.IGNORECASE | re.DOTALL,
)
_ATTR_ID_RE = re.compile(
    r"<[A-Za-z][^>]*?\s(?:id|name)\s*=\s*(?:\"(?P<dq>[^\"]*)\"|'(?P<sq>[^']*)'|(?P<bare>[^\s>\"']+))",
    re.DOTALL,
)


def attr_value(match: re.Match[str]) -> tuple[str, int, int]:
    """The value of an ``href``/``src``/``id`` match and where it is in the matched text."""
    for group in ("dq", "sq", "bare"):
        if match.group(group) is not None:
            return match.group(group), match.start(group), match.end(group)
    return "", match.end(), match.end()  # pragma: no cover - one group always matches


def split_lines(text: str) -> list[str]:
    """Lines as CommonMark counts them, with a lone CR kept inside its line (skillcheck's
    line numbers, like YAML's and editors', only break on LF)."""
    lines = text.split("\n")
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def decode(raw: bytes) -> str:
    """A Markdown file's text: UTF-8 without BOM, invalid bytes replaced (SK9xx reports them)."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    return raw.decode("utf-8", "replace")


def parse(lines: list[str], first_line: int = 1) -> Markdown:
    """Parse Markdown given as its lines; ``first_line`` is the file line of ``lines[0]``."""
    result = Markdown(_first_line=first_line)
    total = 0
    for i, line in enumerate(lines):
        total += len(line) + 1
        if total > MAX_PARSE_CHARS:
            lines = lines[:i]
            result.truncated = True
            break
    result._lines = lines
    # a lone CR would be a line break to markdown-it but not to our line numbers
    text = "\n".join(lines)
    if "\r" in text:
        text = text.replace("\r", " ")
    env: dict[str, Any] = {}
    tokens = _parser().parse(text, env)
    if env.get(_META):
        line_starts = [0]
        for line in lines:
            line_starts.append(line_starts[-1] + len(line) + 1)

        def abs_pos(offset: int) -> Pos:
            i = max(bisect.bisect_right(line_starts, offset) - 1, 0)
            return Pos(i + first_line, offset - line_starts[i] + 1)

        for ref in env[_META]:
            start, end = ref["dest_src"]
            span = Span(abs_pos(start), abs_pos(end))
            result.links.append(
                Link("definition", ref["dest"], span, abs_pos(ref["start"]), ref["label"])
            )
    slugger = Slugger()
    heading: Any = None
    for token in tokens:
        kind = token.type
        if kind == "heading_open":
            heading = token
        elif kind == "inline" and token.map is not None:
            _inline(token, lines, first_line, result)
            if heading is not None:
                plain = _plain_text(token.children or [])
                line = heading.map[0] + first_line
                real = lines[heading.map[0]] if heading.map[0] < len(lines) else ""
                column = len(real) - len(real.lstrip()) + 1
                span = Span(Pos(line, column), Pos(line, len(real.rstrip()) + 1))
                level = int(heading.tag[1:])
                result.headings.append(Heading(level, plain, slugger.slug(plain), span))
                heading = None
        elif kind in ("fence", "code_block") and token.map is not None:
            fenced = kind == "fence"
            begin = token.map[0] + (1 if fenced else 0)
            finish = max(token.map[1] - (1 if fenced else 0), begin + 1) - 1
            last = lines[finish] if finish < len(lines) else ""
            span = Span(Pos(begin + first_line, 1), Pos(finish + first_line, len(last) + 1))
            result.code_blocks.append(CodeBlock(token.content, token.info.strip(), fenced, span))
        elif kind == "html_block" and token.map is not None:
            mapper = _Mapper(token.content.rstrip("\n"), token.map[0], lines, first_line)
            _html(token.content, 0, mapper, result)
    result.links.sort(key=lambda link: (link.start, link.span.start))
    return result


def _inline(token: Any, lines: list[str], first_line: int, result: Markdown) -> None:
    content: str = token.content
    mapper: _Mapper | None = None
    special: list[tuple[int, int, int, int]] = []  # (start, end, code start, code end)
    for child in token.children or ():
        info = child.meta.get(_META) if child.meta else None
        if info is None:
            continue
        if mapper is None:
            mapper = _Mapper(content, token.map[0], lines, first_line)
        start, end = info["src"]
        kind = child.type
        if kind == "code_inline":
            fence = len(child.markup)
            special.append((start, end, start + fence, end - fence))
            result.code_spans.append(
                CodeSpan(
                    content[start + fence : end - fence],
                    Span(mapper.pos(start + fence), mapper.pos(end - fence)),
                )
            )
        elif kind == "html_inline":
            special.append((start, end, start, start))
            _html(content[start:end], start, mapper, result)
        elif kind == "link_open" and child.markup == "autolink":
            href = content[start + 1 : end - 1]
            span = Span(mapper.pos(start + 1), mapper.pos(end - 1))
            result.links.append(Link("autolink", href, span, mapper.pos(start)))
        elif kind in ("link_open", "image"):
            link_kind: LinkKind = "image" if kind == "image" else "link"
            if info.get("reference"):
                href = child.attrs.get("src" if kind == "image" else "href", "")
                span = Span(mapper.pos(start), mapper.pos(end))
                label = child.meta.get("label")
                result.links.append(Link("reference", str(href), span, span.start, label=label))
            else:
                begin, finish = info["dest_src"]
                span = Span(mapper.pos(begin), mapper.pos(finish))
                result.links.append(Link(link_kind, info["dest"], span, mapper.pos(start)))
    # text segments are computed when a rule first asks for them (most runs never do)
    result._pending.append((content, token.map[0], special, mapper))


def _segments(
    content: str,
    special: list[tuple[int, int, int, int]],
    mapper: _Mapper,
    out: list[Segment],
) -> None:
    pieces: list[tuple[int, int, bool]] = []
    cursor = 0
    for start, end, code_start, code_end in sorted(special):
        if start > cursor:
            pieces.append((cursor, start, False))
        if code_end > code_start:
            pieces.append((code_start, code_end, True))
        cursor = max(cursor, end)
    if cursor < len(content):
        pieces.append((cursor, len(content), False))
    for start, end, code in pieces:
        offset = start
        for part in content[start:end].split("\n"):
            stripped = part.strip()
            if stripped:
                lead = len(part) - len(part.lstrip())
                begin = mapper.pos(offset + lead)
                out.append(Segment(begin.line, begin.column, stripped, code))
            offset += len(part) + 1


def _html(source: str, base: int, mapper: _Mapper, result: Markdown) -> None:
    """Comments, links and ids in raw HTML; ``base`` is its offset in the mapper's text."""
    if "<!--" in source:
        for match in _COMMENT_RE.finditer(source):
            span = Span(mapper.pos(base + match.start()), mapper.pos(base + match.end()))
            result.comments.append(Comment(match.group(1), span))
        source = _COMMENT_RE.sub(lambda m: " " * len(m.group(0)), source)
    if "=" not in source:
        return
    import html  # raw HTML with attributes is rare in skills: not on the start-up path

    for match in ATTR_LINK_RE.finditer(source):
        value, start, end = attr_value(match)
        span = Span(mapper.pos(base + start), mapper.pos(base + end))
        result.links.append(
            Link("html", html.unescape(value), span, mapper.pos(base + match.start()))
        )
    for match in _ATTR_ID_RE.finditer(source):
        result.html_ids.add(html.unescape(attr_value(match)[0]))


def _plain_text(children: list[Any]) -> str:
    parts: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
    return "".join(parts).strip()


# --- per-skill cache ----------------------------------------------------------------------------


def is_markdown(rel: str) -> bool:
    return rel.lower().endswith(MARKDOWN_SUFFIXES)


def text_of(skill: Skill, entry: SkillFile) -> str | None:
    """The decoded text of a file of the skill (read once, through ``load.read_file``)."""
    key = ("text", entry.rel)
    if key in skill.derived:
        return skill.derived[key]
    if skill.doc is not None and skill.skill_md is not None and entry.path == skill.skill_md:
        return skill.doc.text
    from skillcheck.load import read_file

    raw = read_file(skill, entry)
    text = None if raw is None else decode(raw)
    skill.derived[key] = text
    return text


def for_body(skill: Skill) -> Markdown | None:
    """The SKILL.md body, parsed once per run (positions are SKILL.md's lines)."""
    doc = skill.doc
    if doc is None:
        return None
    key = ("markdown", "SKILL.md")
    if key not in skill.derived:
        start = doc.body_line - 1
        skill.derived[key] = parse(doc.lines[start:], doc.body_line)
    return skill.derived[key]


def for_file(skill: Skill, entry: SkillFile) -> Markdown | None:
    """Another Markdown file of the skill, parsed once per run; None when unreadable."""
    if skill.skill_md is not None and entry.path == skill.skill_md:
        return for_body(skill)
    key = ("markdown", entry.rel)
    if key not in skill.derived:
        text = text_of(skill, entry)
        skill.derived[key] = None if text is None else parse(split_lines(text), 1)
    return skill.derived[key]
