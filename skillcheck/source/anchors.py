"""GitHub's heading anchors, and a filter that finds some of them without parsing.

``slugify``/``Slugger`` give the ids GitHub (github-slugger) gives headings; ``has_anchor``
compares a ``#fragment`` with them. ``QuickAnchors`` is a *filter*, not a reader: it answers
only "this anchor is certainly in the text" (from plain top-level ATX headings, found by a
line scan) or "don't know", and a rule that gets "don't know" asks the one reader
(``skillcheck.source.markdown``, via ``outline.outline_for``). Its answers are a subset of the
parse's anchors by construction (see ``_quick_scan``); tests/test_references.py checks the
subset property against the parse.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

from skillcheck.source.lazy import LazyPattern
from skillcheck.source.stop import stop_point


def has_anchor(slugs: Iterable[str], html_ids: set[str], fragment: str) -> bool:
    """Whether ``#fragment`` lands on a heading or an HTML id: compared without case, as
    GitHub's own anchor navigation does, so only anchors that break everywhere are reported."""
    return anchor_key(fragment) in anchor_keys(slugs, html_ids)


def anchor_key(fragment: str) -> str:
    """``#fragment`` as ``anchor_keys`` holds it."""
    wanted = fragment.lower()
    if wanted.startswith("user-content-"):
        wanted = wanted[len("user-content-") :]
    return wanted


def anchor_keys(slugs: Iterable[str], html_ids: set[str]) -> frozenset[str]:
    """Every anchor of a file, for ``has_anchor``: build it once per file and look each
    fragment up in it (a scan per fragment made a file of many anchors quadratic)."""
    return frozenset(slugs) | {i.lower() for i in html_ids}


# --- GitHub anchors -------------------------------------------------------------------------

_ATX = LazyPattern(r"(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = LazyPattern(r" {0,3}(`{3,}|~{3,})")
_CONTAINER = LazyPattern(r"\s*(?:>|[-*+](?=\s)|\d{1,9}[.)](?=\s))")
_RAW_HTML = LazyPattern(r"<(?:script|pre|style|textarea)\b|<[?!]", re.IGNORECASE)
_INLINE_MARKUP = LazyPattern(r"[*_`\[\]<>&\\!]")


_QUICK_FIRST = frozenset("#`~ >-*+0123456789")
# a fence opened inside a list item or a quote: only a real parse knows where it ends
_NESTED_FENCE = LazyPattern(r"[ \t]*(?:(?:>|[-*+]|\d{1,9}[.)])[ \t]*)+(?:```|~~~)")


class QuickAnchors:
    """Anchors of plain top-level ATX headings of a text, found without parsing and only
    as far as the questions asked need: a filter (``has`` True means certainly there).

    Without raw HTML only the lines holding ``#`` headings and fences are looked at
    (``_quick_headings``); with it every line is (``_quick_scan``). ``has`` stops at the
    heading it looks for, so a link to a section near the top of a long file costs a few
    lines. A heading found before a construct only a parse can read (where the scan gives
    up) still counts: what comes later in a file cannot change an earlier heading, or the
    number of the earlier duplicates of its name.
    """

    def __init__(self, text: str) -> None:
        self._found: set[str] = set()
        self._rest = _quick_scan(text) if "<" in text else _quick_headings(text)

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
    for start, end, _ in mark_lines(text, ("#", "```", "~~~") if "~" in text else ("#", "```")):
        line = text[start:end]
        if "#" in line[:4] or "```" in line or "~~~" in line:
            yield line


def _quick_headings(text: str) -> Iterator[str | None]:
    """The anchors of plain top-level ATX headings of a text without raw HTML, in file
    order, then None if it meets a construct only a parse can read."""
    slugger = Slugger()
    fence: str | None = None
    for line in _candidate_lines(text):
        stop_point()
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


def _quick_scan(text: str) -> Iterator[str | None]:
    """Anchors of plain top-level ATX headings, found without parsing, in file order.

    Top-level fenced code and HTML blocks are skipped the way CommonMark ends them; the
    scan yields None and stops when a fence or an HTML block sits inside a list or a quote,
    where only a real parse can tell what it hides. The anchors are a subset of the full
    parse's (headings with inline markup, in lists or quotes, or in setext form are left
    out, and leaving one out only lowers the ``-N`` suffix of later duplicates, whose
    smaller numbers exist anyway), so a fragment found here is certainly there.
    """
    slugger = Slugger()
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
                    yield None
                    return
                until_blank = True
                continue
        if "```" in line or "~~~" in line or "<" in line:
            inner = _CONTAINER.match(line)
            if inner is not None:
                rest = line[inner.end() :].lstrip()
                if rest.startswith(("```", "~~~", "<")) or _CONTAINER.match(rest):
                    yield None
                    return
        if not stripped.startswith("#") or indent > 3:
            continue
        match = _ATX.match(stripped.rstrip("\r"))
        if match is None:
            continue
        title = (match.group(2) or "").strip()
        if not _INLINE_MARKUP.search(title):
            yield slugger.slug(title)


def _slug_char(ch: str) -> bool:
    if ch in " -":
        return True
    cat = unicodedata.category(ch)
    return cat[0] in "LMN" or cat == "Pc"


_ASCII_DROP = LazyPattern(r"[^a-z0-9 _-]")


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


def mark_lines(text: str, marks: tuple[str, ...]) -> Iterator[tuple[int, int, int]]:
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
