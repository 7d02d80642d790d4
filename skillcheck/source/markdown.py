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
skill without anything a rule needs is never parsed at all. Rules that need only links and
headings ask ``links_for``/``outline_for``, which read the usual shape of skill Markdown
with ``fast_outline`` (a line scan that gives exactly what the parse gives, or gives up)
and parse only the files it gives up on.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from skillcheck.source.load import decoded_text
from skillcheck.source.skill import Memo, Pos, Skill, SkillFile, Span

# parsing is linear but not cheap; a Markdown file larger than this is checked up to here
MAX_PARSE_CHARS = 512_000
MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
# a line of prose that shows what not to do or what might be (a counter-example): the paths
# and commands on it are not instructions to follow (SK501/SK508 paths, SK704 commands)
NOT_AN_INSTRUCTION = re.compile(
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
        """Whether ``#fragment`` lands on a heading or an HTML id in this file."""
        return _has_anchor(self.headings, self.html_ids, fragment)


def _has_anchor(headings: list[Heading], html_ids: set[str], fragment: str) -> bool:
    """Compared without case, as GitHub's own anchor navigation does, so only anchors that
    break everywhere are reported."""
    wanted = fragment.lower()
    if wanted.startswith("user-content-"):
        wanted = wanted[len("user-content-") :]
    return any(h.slug == wanted for h in headings) or any(i.lower() == wanted for i in html_ids)


# --- cheap pre-checks --------------------------------------------------------------------

_HTML_LINK_HINT = re.compile(r"<(?:a|img|source|video|audio)\b", re.IGNORECASE)


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


def _candidate_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` that may be ATX headings (``#`` after at most three spaces) or
    hold a fence (```` ``` ```` or ``~~~``), in order: every other line is one that
    ``_quick_headings`` passes over without looking. Found as they are asked for, so a
    heading near the top costs a few searches."""
    for start, end, _ in _mark_lines(text, ("#", "```", "~~~") if "~" in text else ("#", "```")):
        line = text[start:end]
        if "#" in line[:4] or "```" in line or "~~~" in line:
            yield line


def _quick_headings(text: str) -> Iterator[str | None]:
    """The anchors ``quick_anchors`` finds, in file order, then None if it gives up."""
    slugger = Slugger()
    fence: str | None = None
    for line in _candidate_lines(text):
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
        # lazy: not on the CLI start-up path
        from markdown_it import MarkdownIt, rules_block, rules_inline

        md = MarkdownIt("commonmark", {"store_labels": True})
        md.core.ruler.at("inline", _selective_inline)
        # keep every destination as written: rules decide what a scheme means
        md.validateLink = lambda url: True  # type: ignore[method-assign]
        md.normalizeLink = lambda url: url  # type: ignore[method-assign]
        # the preset's own rule functions (public in markdown_it.rules_inline/rules_block),
        # each replaced under its name by a wrapper that records source ranges
        recorded = {
            "link": rules_inline.link,
            "image": rules_inline.image,
            "autolink": rules_inline.autolink,
            "backticks": rules_inline.backtick,
            "html_inline": rules_inline.html_inline,
        }
        for name, fn in recorded.items():
            md.inline.ruler.at(name, _recording_inline(fn, name))
        md.block.ruler.at("reference", _recording_reference(rules_block.reference))
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


def _truncate(lines: list[str]) -> tuple[list[str], bool]:
    """The lines within the first MAX_PARSE_CHARS characters, and whether any were cut."""
    if sum(map(len, lines)) + len(lines) <= MAX_PARSE_CHARS:
        return lines, False
    total = 0
    for i, line in enumerate(lines):
        total += len(line) + 1
        if total > MAX_PARSE_CHARS:
            return lines[:i], True
    return lines, False


def parse(lines: list[str], first_line: int = 1) -> Markdown:
    """Parse Markdown given as its lines; ``first_line`` is the file line of ``lines[0]``."""
    result = Markdown(_first_line=first_line)
    lines, result.truncated = _truncate(lines)
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
        blanked = []
        done = 0
        for start, end in _comment_spans(source):
            span = Span(mapper.pos(base + start), mapper.pos(base + end))
            result.comments.append(Comment(source[start + 4 : end - 3], span))
            blanked += [source[done:start], " " * (end - start)]
            done = end
        source = "".join(blanked) + source[done:]
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


# --- links and headings without the parser ------------------------------------------------


@dataclass
class Outline:
    """What the link and anchor rules read from a Markdown file, exactly as ``parse`` finds
    it: link destinations, headings and the ids of raw HTML."""

    links: list[Link]
    headings: list[Heading]
    html_ids: set[str]
    truncated: bool = False

    def has_anchor(self, fragment: str) -> bool:
        """Whether ``#fragment`` lands on a heading or an HTML id in this file."""
        return _has_anchor(self.headings, self.html_ids, fragment)


def outline_of(md: Markdown) -> Outline:
    """The outline of a parsed file."""
    return Outline(md.links, md.headings, md.html_ids, md.truncated)


_LEAD = " \t>*+-.)0123456789"  # what container markers and indentation are made of
# container markers (block quotes, list items) and indentation, as CommonMark reads them
_PREFIX = re.compile(r"(?:[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t\n]|\Z)))*[ \t]*")
# a code span: a backtick run, then the next run of exactly its length on the same line
_CODE_SPAN = re.compile(r"`(?<!``)(`*)(?!`)(.*?)(?<!`)`\1(?!`)")
_TAG_START = re.compile(r"<[A-Za-z/!?]")  # raw HTML or an autolink (a bare `<` is text)
_ESCAPE = re.compile(r"\\(?:[!-/:-@\[-`{-~]|$)", re.MULTILINE)
# lines (searched in the text with a "\n" in front) that may be headings or setext underlines
_HASH_LINE = re.compile(r"\n[ \t>*+\-.)0-9]*#")
_SETEXT_LINE = re.compile(r"\n(?=[ \t>*+.)0-9]*[=-])[ \t>*+\-.)0-9=]*+(?![^\n])")
_ATX_START = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
# a destination CommonMark takes as written: no escapes, entities, parentheses, spaces or
# control characters, angle brackets, backticks or brackets
_PLAIN_DEST = r"[^\x00-\x20\x7f()<>\\&`\[\]]"
_LINK_OR_TEXT = re.compile(r"\[[^\[\]\n]*\](?:\((" + _PLAIN_DEST + r"*)\)|(?!\())")
_DEFINITION = re.compile(
    r"\[([^\[\]\\`<\n]*[A-Za-z0-9][^\[\]\\`<\n]*)\]:[ \t]*(" + _PLAIN_DEST + r"+)[ \t]*"
)
# inline markup that changes a heading's text (emphasis, entities, links)
_HEADING_MARKUP = re.compile(r"[*&\[\]]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# whitespace to Python (str.strip) but not to CommonMark's line structure
_ODD_ASCII_SPACE = "\x0b\x0c\x1c\x1d\x1e\x1f"
_ODD_SPACE = re.compile(
    r"[\x0b\x0c\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)
_MAX_BACKTICKS = 2000
_MASK = "\x01"  # stands for the characters of a code span: never in a plain destination


def fast_links(lines: list[str], first_line: int = 1) -> list[Link] | None:
    """``parse(lines, first_line).links`` without the parser, or None when the text holds
    something the cheap scan cannot read exactly (see ``fast_outline``)."""
    text = _Text.of(lines)
    if text is None:
        return None
    links = text.links(first_line)
    if links is None or (text.definitions and not text.setext_free()):
        return None
    return links


def fast_outline(lines: list[str], first_line: int = 1) -> Outline | None:
    """``outline_of(parse(lines, first_line))`` without the parser, or None when the text
    holds something this scan cannot read exactly.

    It reads the usual shape of skill Markdown: fenced code blocks at the left margin, code
    spans closed on their line, links and images with a plainly written destination on one
    line, reference definitions on a line of their own, ATX headings with plain text, lists
    and quotes. Where block structure could change what a line means it gives up: raw HTML,
    backslash escapes, fences or headings in lists or quotes, setext underlines, indented
    lines with brackets or ``#``, code spans or brackets left open on a line, titles, and so
    on. (Nesting deep enough for ``_flat_when_deep`` only turns containers into paragraphs,
    and inside containers the scan reads nothing but links, which read the same in both.)
    tests/test_links_fast.py checks the agreement on generated Markdown.
    """
    text = _Text.of(lines)
    if text is None:
        return None
    links = text.links(first_line)
    if links is None or not text.setext_free():
        return None
    headings = text.headings(first_line)
    if headings is None:
        return None
    return Outline(links, headings, set(), text.truncated)


class _Text:
    """A text ready for the cheap scan: fenced code blanked, and checked for what the scan
    never reads (NUL, CR, raw HTML, escapes, code spans left open, lines of Unicode spaces)."""

    def __init__(self, lines: list[str], truncated: bool, text: str, outside: str) -> None:
        self.lines = lines  # as given (after truncation): heading spans measure these
        self.truncated = truncated
        self.text = text  # fenced code blanked
        self.outside = outside  # and code spans removed
        self.scan = "\n" + text  # for the line searches below: every line follows a "\n"
        self.definitions = False

    @classmethod
    def of(cls, lines: list[str]) -> _Text | None:
        lines, truncated = _truncate(lines)
        text = "\n".join(lines)
        # markdown-it reads NUL as U+FFFD; parse reads a lone CR as a space but locates the
        # text of its line by searching for it (which the CR can defeat)
        if "\x00" in text or "\r" in text:
            return None
        if "```" in text or ("~" in text and "~~~" in text):
            unfenced = _blank_fences(text)
            if unfenced is None:
                return None
            text = unfenced
        if "\\" in text and "\\`" in text:
            return None  # an escaped backtick opens no code span: the pairing below would
        if not text.isascii() or any(ch in text for ch in _ODD_ASCII_SPACE):
            found = _ODD_SPACE.search(text)
            while found is not None:
                start = text.rfind("\n", 0, found.start()) + 1
                line = _line_at(text, start)
                if not line[_PREFIX.match(line).end() :].strip():  # type: ignore[union-attr]
                    # a line of Unicode spaces starts a paragraph that markdown-it trims
                    # away, and parse then puts the paragraph's links a line too high
                    return None
                found = _ODD_SPACE.search(text, start + len(line))
        if "`" in text and text.count("`") > _MAX_BACKTICKS:
            return None  # pairing code spans by regular expression is quadratic at worst
        outside = _CODE_SPAN.sub("", text) if "`" in text else text  # text outside code spans
        if "`" in outside:  # a run left open may pair with one on a later line
            return None
        if "<" in outside and _TAG_START.search(outside):
            return None
        if "\\" in outside and _ESCAPE.search(outside):
            return None
        return cls(lines, truncated, text, outside)

    def setext_free(self) -> bool:
        """No line could be a setext underline, which makes the lines above a heading."""
        text = self.text
        if "=" not in text and "-" not in text:
            return True
        for match in _SETEXT_LINE.finditer(self.scan):
            start = match.start()  # in text: the line before the underline ends here
            if start == 0:
                continue
            above = _line_at(text, text.rfind("\n", 0, start - 1) + 1)
            if above.strip(" \t") and not _ATX_START.match(above):
                return False
        return True

    def links(self, first_line: int) -> list[Link] | None:
        """The links of the text, or None when one cannot be read.

        When no code span holds a bracket (the usual case), one search of the whole text
        finds every bracket pair, and only the lines holding a link or a definition are
        looked at; else each line holding a bracket is read with its code spans masked.
        """
        text, outside = self.text, self.outside
        if "[" not in outside and "]" not in outside:
            return []
        opening, closing = _count(text, "["), _count(text, "]")
        if _count(outside, "[") != opening or _count(outside, "]") != closing:
            return self._links_by_line(first_line)
        found = list(_LINK_OR_TEXT.finditer(text))
        if 2 * len(found) != opening + closing:
            return None  # nested or unbalanced brackets
        out: list[Link] = []
        count_lines = _LineIndex(text)
        plain_brackets = False
        last_definition = -2
        start = lead = index = number = 0
        end = -1  # where the line of the last link looked at ends
        for link in found:
            begin = link.start()
            dest = link.group(1)
            if dest is None and not text.startswith(":", link.end()):
                plain_brackets = True  # `[text]`: text, if nothing is defined
                continue
            if begin > end:  # a new line (searched for from the last one's end)
                start = text.rfind("\n", max(end, 0), begin) + 1
                end = text.find("\n", begin)
                if end < 0:
                    end = len(text)
                lead = _PREFIX.match(text, start).end()  # type: ignore[union-attr]
                prefix = text[start:lead]
                if "\t" in prefix or "    " in prefix:
                    return None  # maybe indented code
                if text.startswith("#", lead) and not _plain_heading_line(
                    _line_at(text, start), lead - start
                ):
                    return None
                index = count_lines(start)
                number = index + first_line
            if dest is None:  # `[label]:` at the start of the line: a definition?
                if begin != lead:
                    plain_brackets = True
                    continue
                definition = self._definition(start, index, number, last_definition)
                if definition is None:
                    return None
                out.append(definition)
                last_definition = index
                continue
            image = begin > 0 and text[begin - 1] == "!"
            out.append(
                Link(
                    "image" if image else "link",
                    dest,
                    Span(
                        Pos(number, link.start(1) - start + 1), Pos(number, link.end(1) - start + 1)
                    ),
                    Pos(number, begin - start if image else begin - start + 1),
                )
            )
        if self.definitions and plain_brackets:
            return None  # `[text]` may be a reference to a definition
        return out

    def _definition(self, start: int, index: int, number: int, last_definition: int) -> Link | None:
        """The reference definition on the line at ``start`` (whose text starts with
        ``[label]:``), or None unless it is one the scan reads exactly: at the margin, at
        the start of a block, a plain destination, no title."""
        text = self.text
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        above = _line_at(text, text.rfind("\n", 0, start - 1) + 1) if start else ""
        if text[start : start + 1] != "[" or (above.strip(" \t") and last_definition != index - 1):
            return None
        definition = _DEFINITION.fullmatch(text, start, end)
        below = _line_at(text, end + 1).lstrip(" \t")[:1] if end < len(text) else ""
        if definition is None or below in ("'", '"', "("):
            return None  # a title, possibly on the next line
        dest_start, dest_end = definition.span(2)
        self.definitions = True
        return Link(
            "definition",
            definition.group(2),
            Span(Pos(number, dest_start - start + 1), Pos(number, dest_end - start + 1)),
            Pos(number, 1),
            definition.group(1),
        )

    def _links_by_line(self, first_line: int) -> list[Link] | None:
        """``links`` when a code span holds a bracket: line by line, code spans masked."""
        text = self.text
        out: list[Link] = []
        count_lines = _LineIndex(text)
        plain_brackets = False
        last_definition = -2
        pos = 0
        while True:
            opening, closing = text.find("[", pos), text.find("]", pos)
            found = min(opening, closing) if opening >= 0 <= closing else max(opening, closing)
            if found < 0:
                break
            start = text.rfind("\n", 0, found) + 1
            end = text.find("\n", found)
            if end < 0:
                end = len(text)
            pos = end
            line = text[start:end]
            if "`" in line:
                line = _CODE_SPAN.sub(_mask, line)
            index = count_lines(start)
            number = index + first_line
            lead = _PREFIX.match(line).end()  # type: ignore[union-attr]
            prefix = line[:lead]
            if "\t" in prefix or "    " in prefix:
                return None  # maybe indented code
            if line.startswith("#", lead) and not _plain_heading_line(line, lead):
                return None
            if line.startswith("[", lead):
                close = line.find("]", lead)
                if line[close + 1 : close + 2] == ":" and "[" not in line[lead + 1 : close]:
                    definition = self._definition(start, index, number, last_definition)
                    if definition is None:
                        return None
                    out.append(definition)
                    last_definition = index
                    continue
            count = 0
            for link in _LINK_OR_TEXT.finditer(line):
                count += 1
                dest = link.group(1)
                if dest is None:  # `[text]` not followed by `(`: text, if nothing is defined
                    plain_brackets = True
                    continue
                begin = link.start()
                image = begin > 0 and line[begin - 1] == "!"
                span = Span(Pos(number, link.start(1) + 1), Pos(number, link.end(1) + 1))
                out.append(
                    Link(
                        "image" if image else "link",
                        dest,
                        span,
                        Pos(number, begin if image else begin + 1),
                    )
                )
            if 2 * count != line.count("[") + line.count("]"):
                return None  # nested or unbalanced brackets
        if self.definitions and plain_brackets:
            return None  # `[text]` may be a reference to a definition
        return out

    def headings(self, first_line: int) -> list[Heading] | None:
        """The ATX headings, or None when a `#` line may be a heading the scan cannot read."""
        text = self.text
        if "#" not in text:
            return []
        count_lines = _LineIndex(text)
        slugger = Slugger()
        out: list[Heading] = []
        for match in _HASH_LINE.finditer(self.scan):
            start = match.start()
            raw = _line_at(text, start)
            line = _CODE_SPAN.sub(_mask, raw) if "`" in raw else raw
            lead = _PREFIX.match(line).end()  # type: ignore[union-attr]
            if line[lead : lead + 1] != "#":
                continue  # a `#` in paragraph text
            if lead > 3 or line[:lead].strip(" "):
                return None  # in a list, a quote or maybe indented code
            level = len(line) - lead - len(line[lead:].lstrip("#"))
            pos = lead + level
            if level > 6 or (pos < len(line) and line[pos] not in " \t"):
                continue  # `####### x`, `#tag`: paragraph text
            # markdown-it's heading rule: trailing spaces, then a closing `#` run after a space
            end = len(line)
            while end > pos and line[end - 1] in " \t":
                end -= 1
            cut = end
            while cut > pos and line[cut - 1] == "#":
                cut -= 1
            if cut > pos and line[cut - 1] in " \t":
                end = cut
            while pos < end and line[pos] in " \t":
                pos += 1
            while end > pos and line[end - 1] in " \t":
                end -= 1
            content = raw[pos:end]
            if content and (content[0].isspace() or content[-1].isspace()):
                return None  # markdown-it trims another set of spaces than Python
            if _HEADING_MARKUP.search(line, pos, end):
                return None
            plain = (_CODE_SPAN.sub(_code_text, content) if "`" in content else content).strip()
            index = count_lines(start)
            real = self.lines[index]
            number = index + first_line
            span = Span(
                Pos(number, len(real) - len(real.lstrip()) + 1),
                Pos(number, len(real.rstrip()) + 1),
            )
            out.append(Heading(level, plain, slugger.slug(plain), span))
        return out


def _count(text: str, char: str) -> int:
    """``text.count(char)``, faster for the rare characters it is used on."""
    count = 0
    at = text.find(char)
    while at >= 0:
        count += 1
        at = text.find(char, at + 1)
    return count


def _line_at(text: str, start: int) -> str:
    """The line of ``text`` that starts at offset ``start``."""
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def _plain_heading_line(line: str, lead: int) -> bool:
    """Whether links on a line starting with `#` are where a naive count puts them: the line
    is paragraph text, or a heading at the margin without a closing `#` run (parse locates a
    heading's text by searching the line, which a closing run can mislead)."""
    level = len(line) - lead - len(line[lead:].lstrip("#"))
    if level > 6 or line[lead + level : lead + level + 1] not in ("", " ", "\t"):
        return True  # paragraph text
    if lead > 3 or line[:lead].strip(" "):
        return False
    tail = line.rstrip(" \t")
    return (
        not tail.endswith("#")
        and not tail[-1:].isspace()
        and not line[lead + level :].lstrip(" \t")[:1].isspace()
    )


class _LineIndex:
    """Offset in a text -> line index, for offsets asked in increasing order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 0

    def __call__(self, offset: int) -> int:
        if offset < self.offset:
            self.offset = self.line = 0
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _mask(match: re.Match[str]) -> str:
    return _MASK * (match.end() - match.start())


def _code_text(match: re.Match[str]) -> str:
    """A code span's text as markdown-it gives it (one space each side stripped)."""
    content = match.group(2)
    if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
        content = content[1:-1]
    return content


def _mark_lines(text: str, marks: tuple[str, ...]) -> Iterator[tuple[int, int, int]]:
    """(start, end, first mark) of each line of ``text`` holding one of ``marks``, in order.

    Each line is visited once and each mark searched for once per line that holds it, so
    the cost stays linear however many marks a line holds.
    """
    upcoming = {mark: text.find(mark) for mark in marks}
    while True:
        at = min((v for v in upcoming.values() if v >= 0), default=-1)
        if at < 0:
            return
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        if end < 0:
            end = len(text)
        yield start, end, at
        for mark, where in upcoming.items():
            if 0 <= where <= end:
                upcoming[mark] = text.find(mark, end)


def _blank_fences(text: str) -> str | None:
    """``text`` with the lines of fenced code blocks (fences included) emptied, or None when
    a fence is not at the left margin (in a list or a quote, or indented), where only a
    parse knows where it ends."""
    pieces: list[str] = []
    done = 0  # text[:done] is in pieces
    fence: tuple[str, int, int] | None = None  # (character, length, start of its line)
    for start, end, at in _mark_lines(text, ("```", "~~~") if "~" in text else ("```",)):
        if text[start:at].strip(_LEAD):
            continue  # backticks inside a line of text
        line = text[start:end]
        if fence is None:
            char = line[0]
            if char not in "`~":
                return None
            length = len(line) - len(line.lstrip(char))
            if char == "`" and "`" in line[length:]:
                return None  # not a fence: an info string cannot hold a backtick
            fence = (char, length, start)
            continue
        char, length, opened = fence
        inner = line.lstrip(" ")
        if len(line) - len(inner) > 3 or not inner.startswith(char * length):
            continue
        if inner.lstrip(char).strip(" \t"):
            continue
        pieces += [text[done:opened], "\n" * text.count("\n", opened, end)]
        done = end
        fence = None
    if fence is not None:  # never closed: code to the end
        pieces += [text[done : fence[2]], "\n" * text.count("\n", fence[2])]
        done = len(text)
    pieces.append(text[done:])
    return "".join(pieces)


# --- per-skill cache ----------------------------------------------------------------------------


def is_markdown(rel: str) -> bool:
    return rel.lower().endswith(MARKDOWN_SUFFIXES)


# the parse, the outline and the links of the SKILL.md body ("SKILL.md") or of a file
MARKDOWN: Memo[Markdown | None] = Memo("markdown")
OUTLINE: Memo[Outline | None] = Memo("outline")
LINKS: Memo[list[Link] | None] = Memo("links")


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
        skill.memos.put(MARKDOWN, None if text is None else parse(split_lines(text), 1), entry.rel)
    return skill.memos.get(MARKDOWN, entry.rel)


def _name(skill: Skill, entry: SkillFile | None) -> str:
    """The cache name of the SKILL.md body (``entry`` None) or of another Markdown file."""
    if entry is None or (skill.skill_md is not None and entry.path == skill.skill_md):
        return "SKILL.md"
    return entry.rel


def source_lines(skill: Skill, entry: SkillFile | None = None) -> tuple[list[str], int] | None:
    """The lines ``for_body`` (``entry`` None) or ``for_file`` would parse, and the file
    line of the first; None when unreadable."""
    if _name(skill, entry) == "SKILL.md":
        doc = skill.doc
        return None if doc is None else (doc.lines[doc.body_line - 1 :], doc.body_line)
    assert entry is not None
    text = text_of(skill, entry)
    return None if text is None else (split_lines(text), 1)


def _parsed(skill: Skill, entry: SkillFile | None) -> Markdown | None:
    return for_body(skill) if entry is None else for_file(skill, entry)


def outline_for(skill: Skill, entry: SkillFile | None = None) -> Outline | None:
    """The links, headings and HTML ids of the SKILL.md body (``entry`` None) or of another
    Markdown file, once per run: from ``fast_outline`` when it can read the text, else from
    the parse (which is then cached for the other rules). None when unreadable."""
    name = _name(skill, entry)
    if skill.memos.has(OUTLINE, name):
        return skill.memos.get(OUTLINE, name)
    result = None
    if not skill.memos.has(MARKDOWN, name):
        source = source_lines(skill, entry)
        if source is not None:
            result = fast_outline(*source)
    if result is None:
        md = _parsed(skill, entry)
        result = None if md is None else outline_of(md)
    return skill.memos.put(OUTLINE, result, name)


def links_for(skill: Skill, entry: SkillFile | None = None) -> list[Link] | None:
    """``outline_for(skill, entry).links``, without reading headings when nothing else
    needs them (the catalog, most link checks). None when unreadable."""
    name = _name(skill, entry)
    memos = skill.memos
    if memos.has(LINKS, name):
        return memos.get(LINKS, name)
    if memos.has(OUTLINE, name):
        outline = memos.get(OUTLINE, name)
        return None if outline is None else outline.links
    if memos.has(MARKDOWN, name):
        md = memos.get(MARKDOWN, name)
        return None if md is None else md.links
    source = source_lines(skill, entry)
    result = None if source is None else fast_links(*source)
    if result is None:
        md = _parsed(skill, entry)
        result = None if md is None else md.links
    return skill.memos.put(LINKS, result, name)
