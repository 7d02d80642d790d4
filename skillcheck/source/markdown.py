"""Markdown text -> what rules need from it, each piece at its line and column in the real file.

markdown-it-py (the CommonMark preset) does the parsing; its tokens carry line maps but no
columns, so the inline rules that matter (links, images, autolinks, code spans, inline HTML)
are wrapped to record where in the inline source each one starts and ends, and the inline
source is aligned with the file's lines. Columns count Unicode code points (like the rest of
skillcheck), so they stay right after CJK text, emoji, block quotes, list markers and table
pipes. GFM tables are left to CommonMark, which reads a table row as a paragraph: links in
cells are found at the same place, and an escaped pipe keeps its backslash in the source.

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
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from skillcheck.source.anchors import Slugger, has_anchor
from skillcheck.source.load import decoded_text
from skillcheck.source.skill import Memo, Pos, Skill, SkillFile, Span
from skillcheck.source.text import lf_lines

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
        return has_anchor((h.slug for h in self.headings), self.html_ids, fragment)


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


def parse(lines: list[str], first_line: int = 1) -> Markdown:
    """Parse Markdown given as its lines; ``first_line`` is the file line of ``lines[0]``."""
    result = Markdown(_first_line=first_line)
    lines, result.truncated = truncate_lines(lines)
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
