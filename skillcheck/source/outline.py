"""The links and headings the link and anchor rules need, read exactly, cheaply when possible.

``outline_for``/``links_for`` give what ``markdown.parse`` gives (links, headings, HTML ids)
for a skill's Markdown file, once per run. The parse (pyromark) is the reader; for the usual
shape of skill Markdown a line scan (``fast_outline``/``fast_links``) gives the same result
without it, and it is *exact by construction* on the texts it accepts, giving up (None, so the
file is parsed) on everything else.

The boundary, and why it holds. The scan accepts a text only when every construct in it
reads the same line by line as in CommonMark's block-then-inline reading:

- fenced code blocks at the left margin (blanked first, so nothing inside them counts; an
  unclosed fence runs to the end, as in CommonMark); a fence in a list, a quote or
  indented, or a backtick fence whose info string holds a backtick, makes it give up;
- code spans opened and closed on one line (masked: a bracket inside one is text), at
  most ``_MAX_BACKTICKS`` backticks, no escaped backtick;
- links and images ``[text](dest)`` on one line, with a destination CommonMark takes as
  written (``_PLAIN_DEST``: no escapes, entities, parentheses, spaces, angle brackets or
  titles) and brackets balanced and not nested (every bracket pairs with one link or
  ``[text]``);
- reference definitions ``[label]: dest`` alone on a line at the margin, at the start of
  a block, with a plain destination and no title; ``[text]`` is taken as text only when
  nothing is defined;
- ATX headings at the margin whose text holds no inline markup that changes it
  (``_HEADING_MARKUP``) and no odd whitespace, and no line that could be a setext
  underline;
- container prefixes (lists, quotes) only change where a line's text starts, which the
  scan measures from the real line.

It gives up on any raw HTML or autolink (``<`` followed by a tag character), any backslash
escape, NUL or CR, lines holding only Unicode spaces, tabs or four spaces before a bracket
(maybe indented code), and a `#` line in a container. tests/test_links_fast.py generates
Markdown from every one of these constructs (and free text) and compares the scan with the
parse, positions included, whenever the scan answers.

Why keep it: on the real-world corpus (bench/realworld, `lint --no-cache --jobs 1`) the
scan answers for 1,944 of the 2,314 files the link rules ask about; with the scan off the
lint parsed 2,384 files instead of 1,221 and took 4 to 8 % more CPU (with markdown-it:
12.8 s instead of 9.0 s of about 48 s). With pyromark the parse is several times cheaper
and the margin is smaller, but still there: on all 20,111 Markdown files of the corpus the
scan answers for 7,944 (identical to the parse), in about 60 % of the CPU parsing them takes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from skillcheck.source.anchors import Slugger, anchor_key, anchor_keys, mark_lines
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.markdown import (
    MARKDOWN,
    Heading,
    Link,
    Markdown,
    for_body,
    for_file,
    text_of,
    truncate_lines,
)
from skillcheck.source.skill import Memo, Pos, Skill, SkillFile, Span
from skillcheck.source.stop import stop_point
from skillcheck.source.text import lf_lines

# --- links and headings without the parser ------------------------------------------------


@dataclass
class Outline:
    """What the link and anchor rules read from a Markdown file, exactly as ``parse`` finds
    it: link destinations, headings and the ids of raw HTML."""

    links: list[Link]
    headings: list[Heading]
    html_ids: set[str]
    truncated: bool = False
    _anchor_keys: frozenset[str] | None = field(default=None, repr=False, compare=False)

    def has_anchor(self, fragment: str) -> bool:
        """Whether ``#fragment`` lands on a heading or an HTML id in this file."""
        keys = self._anchor_keys
        if keys is None:  # once per file: a file is asked about each of its links
            keys = self._anchor_keys = anchor_keys((h.slug for h in self.headings), self.html_ids)
        return anchor_key(fragment) in keys


def outline_of(md: Markdown) -> Outline:
    """The outline of a parsed file."""
    return Outline(md.links, md.headings, md.html_ids, md.truncated)


_LEAD = " \t>*+-.)0123456789"  # what container markers and indentation are made of
# container markers (block quotes, list items) and indentation, as CommonMark reads them
_PREFIX = LazyPattern(r"(?:[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t\n]|\Z)))*[ \t]*")
# a code span: a backtick run, then the next run of exactly its length on the same line
_CODE_SPAN = LazyPattern(r"`(?<!``)(`*)(?!`)(.*?)(?<!`)`\1(?!`)")
_TAG_START = LazyPattern(r"<[A-Za-z/!?]")  # raw HTML or an autolink (a bare `<` is text)
_ESCAPE = LazyPattern(r"\\(?:[!-/:-@\[-`{-~]|$)", re.MULTILINE)
# lines (searched in the text with a "\n" in front) that may be headings or setext underlines
_HASH_LINE = LazyPattern(r"\n[ \t>*+\-.)0-9]*#")
_SETEXT_LINE = LazyPattern(r"\n(?=[ \t>*+.)0-9]*[=-])[ \t>*+\-.)0-9=]*+(?![^\n])")
_ATX_START = LazyPattern(r" {0,3}#{1,6}(?:[ \t]|$)")
# a destination CommonMark takes as written: no escapes, entities, parentheses, spaces or
# control characters, angle brackets, backticks or brackets
_PLAIN_DEST = r"[^\x00-\x20\x7f()<>\\&`\[\]]"
_LINK_OR_TEXT = LazyPattern(r"\[[^\[\]\n]*\](?:\((" + _PLAIN_DEST + r"*)\)|(?!\())")
_DEFINITION = LazyPattern(
    r"\[([^\[\]\\`<\n]*[A-Za-z0-9][^\[\]\\`<\n]*)\]:[ \t]*(" + _PLAIN_DEST + r"+)[ \t]*"
)
# inline markup that changes a heading's text (emphasis, entities, links)
_HEADING_MARKUP = LazyPattern(r"[*&\[\]]|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# whitespace to Python (str.strip) but not to CommonMark's line structure (a vertical tab or
# form feed, whitespace to both, ends the scan in _Text.of)
_ODD_ASCII_SPACE = "\x1c\x1d\x1e\x1f"
_ODD_SPACE = LazyPattern(r"[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
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
    on.
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
        lines, truncated = truncate_lines(lines)
        text = "\n".join(lines)
        # parse reads NUL as U+FFFD, a lone CR as a space, and a vertical tab or form feed
        # after "#" as the space that makes a heading ("#\f" is an empty one): each changes
        # what a line holds
        if "\x00" in text or "\r" in text or "\x0b" in text or "\x0c" in text:
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
                    # a line of Unicode spaces starts a paragraph whose first line is
                    # trimmed by another set of spaces than Python's
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
        for start, end, _ in mark_lines(text, ("[", "]")):
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
            stop_point()
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
            # CommonMark's heading rule: trailing spaces, then a closing `#` run after a space
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
                return None  # CommonMark trims another set of spaces than Python
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
    """A code span's text as CommonMark gives it (one space each side stripped)."""
    content = match.group(2)
    if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
        content = content[1:-1]
    return content


def _blank_fences(text: str) -> str | None:
    """``text`` with the lines of fenced code blocks (fences included) emptied, or None when
    a fence is not at the left margin (in a list or a quote, or indented), where only a
    parse knows where it ends."""
    pieces: list[str] = []
    done = 0  # text[:done] is in pieces
    fence: tuple[str, int, int] | None = None  # (character, length, start of its line)
    for start, end, at in mark_lines(text, ("```", "~~~") if "~" in text else ("```",)):
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

# the outline and the links of the SKILL.md body ("SKILL.md") or of a file
OUTLINE: Memo[Outline | None] = Memo("outline")
LINKS: Memo[list[Link] | None] = Memo("links")
SOURCE_LINES: Memo[tuple[list[str], int] | None] = Memo("source-lines")


def _name(skill: Skill, entry: SkillFile | None) -> str:
    """The cache name of the SKILL.md body (``entry`` None) or of another Markdown file."""
    if entry is None or (skill.skill_md is not None and entry.path == skill.skill_md):
        return "SKILL.md"
    return entry.rel


def source_lines(skill: Skill, entry: SkillFile | None = None) -> tuple[list[str], int] | None:
    """The lines ``for_body`` (``entry`` None) or ``for_file`` would parse, and the file
    line of the first; None when unreadable. Split once per file: rules ask for each link
    (a file of thousands of links was split again for each)."""
    name = _name(skill, entry)
    memos = skill.memos
    if memos.has(SOURCE_LINES, name):
        return memos.get(SOURCE_LINES, name)
    result: tuple[list[str], int] | None
    if name == "SKILL.md":
        doc = skill.doc
        result = None if doc is None else (doc.lines[doc.body_line - 1 :], doc.body_line)
    else:
        assert entry is not None
        text = text_of(skill, entry)
        result = None if text is None else (lf_lines(text), 1)
    return memos.put(SOURCE_LINES, result, name)


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
