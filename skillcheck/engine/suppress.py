"""Inline suppressions in SKILL.md and the skill's other Markdown files.

``<!-- skillcheck-disable SK602 -->`` silences codes for the whole file it is in;
``<!-- skillcheck-disable-next-line SK501 -->`` for the line after the comment. Codes or
slugs, separated by commas or spaces; none means every rule. An HTML comment is invisible in
rendered Markdown, so it is the one place a suppression can live without changing what agents
read. Only real comments in the body count: one shown inside a code block or a code span (as
documentation about skillcheck would show it) is text, not a directive.

Suppressions that silence nothing, and codes in them that name no rule, are reported by
SK120 (``unused-suppression``). Those diagnostics are produced after the suppressions are
applied, so no comment can silence them; ``ignore`` and ``per-path-ignores`` can.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from skillcheck.engine.check import SuppressionsInput, run_rules
from skillcheck.rules import Context, Input, Rule, get_rule
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import read_text
from skillcheck.source.markdown import MARKDOWN_SUFFIXES, text_blocks
from skillcheck.source.skill import Diagnostic, Pos, Skill, SkillSummary, Span
from skillcheck.source.text import split_lines

MARKER = "skillcheck-disable"
_COMMENT = LazyPattern(
    r"<!--\s*skillcheck-(disable-next-line|disable)\b(?P<codes>[^>]*?)\s*-->", re.IGNORECASE
)
_WORD = LazyPattern(r"[^\s,]+")
_BACKTICKS = LazyPattern(r"`+")


@dataclass
class Suppression:
    span: Span  # the comment
    next_line: bool
    codes: frozenset[str] | None  # None = every rule
    words: list[tuple[str, Span]] = field(default_factory=list)  # as written, with positions
    unknown: list[tuple[str, Span]] = field(default_factory=list)  # words naming no rule
    used: set[str] = field(default_factory=set)  # codes that silenced a diagnostic
    # words naming an enabled rule that silenced nothing, with their positions
    unused: list[tuple[str, Span]] = field(default_factory=list)
    unused_all: bool = False  # a code-less comment that silenced nothing
    path: Path | None = None  # the Markdown file holding it; None: the skill's SKILL.md

    @property
    def text(self) -> str:
        return "skillcheck-disable-next-line" if self.next_line else "skillcheck-disable"

    def covers(self, diag: Diagnostic) -> bool:
        if self.codes is not None and diag.code not in self.codes:
            return False
        return not self.next_line or diag.line == self.span.end.line + 1


def _comments_in_html(text: str, start: int) -> Iterator[tuple[int, re.Match[str]]]:
    """Suppression comments in raw HTML, where backticks mean nothing."""
    for match in _COMMENT.finditer(text):
        yield start + match.start(), match


def _comments_in_inline(text: str, start: int) -> Iterator[tuple[int, re.Match[str]]]:
    """Suppression comments in paragraph text, skipping code spans and escaped ``<``.

    CommonMark reads inline content left to right: whichever of a code span or an HTML
    comment starts first wins, a backslash escapes the next character outside code, and a
    code span closes only at a backtick run of exactly its opening length.
    """
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "`":
            run = _BACKTICKS.match(text, i)
            assert run is not None
            width = len(run.group())
            closing = next(
                (m for m in _BACKTICKS.finditer(text, run.end()) if len(m.group()) == width),
                None,
            )
            i = closing.end() if closing is not None else run.end()
            continue
        if text.startswith("<!--", i):
            end = text.find("-->", i + 4)
            if end < 0:
                return
            match = _COMMENT.fullmatch(text, i, end + 3)
            if match is not None:
                yield start + i, match
            i = end + 3
            continue
        i += 1


def _body_comments(
    lines: list[str], first: int
) -> Iterator[tuple[Span, re.Match[str], list[tuple[str, Span]]]]:
    """(comment span, match, words with their spans) of every real suppression in Markdown
    given as its ``lines``, the first of which is line ``first`` of the file."""
    starts = [0]  # offset of each body line in ``source``
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    source = "\n".join(lines)

    def pos(offset: int) -> Pos:
        index = bisect.bisect_right(starts, offset) - 1
        return Pos(first + index, offset - starts[index] + 1)

    def span(begin: int, end: int) -> Span:
        last = pos(end - 1)
        return Span(pos(begin), Pos(last.line, last.column + 1))

    for html, begin, end in text_blocks(lines):  # code blocks and code spans are code
        end = min(end, len(lines))
        if not any(MARKER in lines[i].lower() for i in range(begin, end)):
            continue
        text = source[starts[begin] : starts[end] - 1]
        scan = _comments_in_html if html else _comments_in_inline
        for offset, match in scan(text, starts[begin]):
            codes = offset + match.start("codes") - match.start()
            words = [
                (w.group(), span(codes + w.start(), codes + w.end()))
                for w in _WORD.finditer(match.group("codes"))
            ]
            yield span(offset, offset + len(match.group())), match, words


def find_suppressions(skill: Skill) -> list[Suppression]:
    """The suppression comments of a skill: in the body of SKILL.md and in every other
    Markdown file of the skill (the whole file: it has no frontmatter), codes resolved."""
    out: list[Suppression] = []
    doc = skill.doc
    if doc is not None and MARKER in doc.text.lower():
        out.extend(_resolve(_body_comments(doc.lines[doc.body_line - 1 :], doc.body_line), None))

    for entry in skill.files:
        if (
            entry.kind not in ("file", "symlink")
            or entry.rel.rsplit("/", 1)[-1].lower() == "skill.md"  # this one, or a nested skill's
            or not entry.rel.lower().endswith(MARKDOWN_SUFFIXES)
        ):
            continue
        text = read_text(skill, entry)
        if text is None or MARKER not in text.lower():
            continue

        out.extend(_resolve(_body_comments(split_lines(text), 1), entry.path))
    return out


def _resolve(
    found: Iterator[tuple[Span, re.Match[str], list[tuple[str, Span]]]], path: Path | None
) -> Iterator[Suppression]:
    for comment, match, words in found:
        codes: set[str] = set()
        unknown: list[tuple[str, Span]] = []
        for word, where in words:
            named = get_rule(word)
            if named is None:
                unknown.append((word, where))
            else:
                codes.add(named.code)
        yield Suppression(
            span=comment,
            next_line=match.group(1).lower() == "disable-next-line",
            codes=frozenset(codes) if words else None,
            words=words,
            unknown=unknown,
            path=path,
        )


def apply_suppressions(
    diagnostics: list[Diagnostic], skills: list[SkillSummary], rules: list[Rule], ctx: Context
) -> list[Diagnostic]:
    """Drop suppressed diagnostics; add SK120 for suppressions that silenced nothing.

    The comments come from each skill's summary (found when it was checked), so collection
    diagnostics can be silenced too. A code counts as unused only when its rule ran (an
    ignored rule cannot prove a suppression stale); a code-less comment is unused when it
    silenced nothing at all.
    """
    by_file: dict = {}
    found_for: list[tuple[SkillSummary, list[Suppression]]] = []
    for skill in skills:
        found = skill.suppressions
        for suppression in found:  # a summary's comments start each run unused
            suppression.used, suppression.unused, suppression.unused_all = set(), [], False
        if found and skill.skill_md is not None:
            for suppression in found:
                by_file.setdefault(suppression.path or skill.skill_md, []).append(suppression)
            found_for.append((skill, found))
    if not by_file:
        return diagnostics
    kept = []
    for diag in diagnostics:
        in_file = by_file.get(diag.path)
        hit = next((s for s in in_file if s.covers(diag)), None) if in_file else None
        if hit is None:
            kept.append(diag)
        else:
            hit.used.add(diag.code)
    if not any(r.reads is Input.SUPPRESSIONS for r in rules):
        return kept  # nobody reports unused comments: no need to find them

    enabled = {r.code for r in rules}
    for skill, found in found_for:
        for suppression in found:
            if suppression.codes is None:
                suppression.unused_all = not suppression.used
            else:
                for word, where in suppression.words:
                    named = get_rule(word)
                    if named and named.code in enabled and named.code not in suppression.used:
                        suppression.unused.append((word, where))
        kept.extend(run_rules(SuppressionsInput(skill, found), rules, ctx, skill.display_root))
    return kept
