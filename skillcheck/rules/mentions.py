"""SK506-SK508: the skill's files and the paths its text names.

SK506 finds files nothing reaches; SK507 and SK508 read paths written in the text (not as
links) of SKILL.md, the skill's other Markdown files and its scripts: a path the skill does
not hold, and a path that exists on one machine only. Paths are resolved purely from the
skill's walk (``skillcheck.analysis.paths``); nothing outside the skill is opened.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import unquote

from skillcheck.analysis.links import (
    _CODE_SUFFIXES,
    RESOURCE_DIRS,
    Doc,
    _word_char,
    checked_uses,
    doc_text,
    documents,
    parsed,
)
from skillcheck.analysis.paths import (
    Resolution,
    Tree,
    has_scheme,
    show,
    tree_of,
)
from skillcheck.analysis.reach import (
    misnamed_manifest,
    reached,
    readable_text,
    resource_candidates,
)
from skillcheck.rules.base import Context, rule
from skillcheck.source import markdown
from skillcheck.source.junk import JUNK_DIRS
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.markdown import Link, Markdown, Segment
from skillcheck.source.outline import fast_links, source_lines
from skillcheck.source.skill import (
    WHOLE_FILE,
    Finding,
    Impact,
    Memo,
    Outcome,
    Pos,
    Severity,
    Skill,
    Span,
)
from skillcheck.source.text import LinePositions
from skillcheck.targets import every

# the SK5xx reference rules, split from references.py for size: one family in docs and SARIF
FAMILY = "references"

# a lost reference: every runtime still loads the skill, without what the link promised
_LOST = every(Impact(Outcome.DEGRADED, Severity.ERROR))


# --- SK506 ------------------------------------------------------------------------------------


@rule(
    "SK506",
    "unreferenced-file",
    Severity.WARNING,
    "A file under references/, scripts/ or assets/ is never mentioned.",
    what="""
        Reports files under `references/`, `scripts/` and `assets/` that SKILL.md never links
        to or names (by path, or by file name with its extension, in any letter case), and
        that no file reachable from SKILL.md names either (a helper module imported by a
        documented script, a file linked from a reference: those chains are SK505's
        business). A link to a folder, or a written path of a sub-folder (`assets/templates/`),
        counts for the files in it, and so does naming a top folder as a folder
        (`` `references/` `` alone in code, "the `references` directory"): the agent is told to
        look there. A file that Codex's `agents/openai.yaml` names (the icons of
        `interface`) is used. Dotfiles, `__init__.py`, dependency manifests and build files of
        the code (`package.json`, `requirements.txt`, `pyproject.toml`, `pom.xml`, `*.csproj`,
        `Directory.Build.props` ...), symlinks (SK509/SK510) and junk that SK7xx reports are
        left out. A file whose name is one letter or so away from such a manifest
        (`requirement.txt`) is reported with the advice to rename it, not to link it.
    """,
    why="""
        The agent learns what a skill holds only from SKILL.md: a file it is never told about is
        dead weight in every installed copy and in the upload size. Copilot loads only files
        referenced from SKILL.md. Usually the file is either obsolete or SKILL.md forgot to say
        when to use it.
    """,
    bad="""
        my-skill/
          SKILL.md                    (never mentions scripts/fill_form.py)
          scripts/fill_form.py
    """,
    good="""
        SKILL.md:  To fill a form, run `python scripts/fill_form.py input.pdf values.json`.
    """,
)
def unreferenced_file(skill: Skill, ctx: Context) -> Iterator[Finding]:
    if skill.doc is None:
        return
    candidates = resource_candidates(skill)
    if not candidates:
        return
    found = reached(skill)
    for entry in candidates:
        if entry.rel in found:
            continue
        if _TEST_FILE.search(entry.rel):
            advice = (
                "it looks like a test of the skill's code, which installed copies do not need:"
                " keep tests outside the skill folder"
            )
        elif (manifest := misnamed_manifest(entry.rel)) is not None:
            advice = (
                f"its name looks like a misspelled {show(manifest)}, which pip, npm and"
                f" other tools look for by that exact name: rename it to {show(manifest)}"
            )
        else:
            advice = "link it from SKILL.md with a line on when to use it, or delete it"
        yield Finding(
            f"{show(entry.rel)} is never mentioned in SKILL.md: the agent does not know it"
            f" exists and Copilot does not load it; {advice}",
            span=WHOLE_FILE,
            path=entry.path,
        )


_TEST_FILE = LazyPattern(
    r"(?:^|/)(?:tests?|__tests__)/|(?:^|/)test_[^/]*$|[._]test\.[^/]*$|\.spec\."
)


# --- paths written in the text ------------------------------------------------------------------


class Hit(NamedTuple):
    """A path found in a piece of text: ``text[start:end]`` (a tuple: made by the thousand)."""

    start: int
    end: int
    text: str
    kind: str


Finder = Callable[[str], Iterator[Hit]]


def _link_columns(links: list[Link]) -> dict[int, list[tuple[int, int]]]:
    """Columns covered by link destinations and autolinks, by line."""
    covered: dict[int, list[tuple[int, int]]] = {}
    for link in links:
        span = link.span
        if span.start.line == span.end.line:
            covered.setdefault(span.start.line, []).append((span.start.column, span.end.column))
    return covered


def _covered(covered: dict[int, list[tuple[int, int]]], line: int, column: int) -> bool:
    return any(a <= column < b for a, b in covered.get(line, ()))


def _scan(
    skill: Skill, find: Finder, marks: tuple[str, ...], suspect: Callable[[Doc, Hit], bool]
) -> Iterator[tuple[Doc, Segment, Hit]]:
    """Paths ``find`` finds in the text and code spans of the skill's Markdown files,
    outside link destinations (``find`` finds none in a text without one of ``marks``).

    The raw text is searched first: its hits are a superset of the segments' (code blocks
    and link destinations included, at the same places), so when ``suspect`` clears every
    one of them, or every one it does not clear lies in a link destination (a link to a
    missing file is SK501's, not a mention), the file is not parsed at all.
    """
    for doc in documents(skill):
        text = doc_text(skill, doc)
        if not text:
            continue
        if _clear_unparsed(skill, doc, text, find, suspect):
            continue
        md = parsed(skill, doc)
        if md is None:
            continue
        covered = _link_columns(md.links)
        for segment in md.segments_holding(marks):
            for hit in find(segment.text):
                if not _covered(covered, segment.line, segment.column + hit.start):
                    yield doc, segment, hit


def _clear_unparsed(
    skill: Skill, doc: Doc, text: str, find: Finder, suspect: Callable[[Doc, Hit], bool]
) -> bool:
    """Whether the file's raw text shows that ``_scan`` would yield nothing for it: a
    filter that only decides whether the file must be parsed."""
    return not any(suspect(doc, hit) for hit in find(text)) or _only_in_destinations(
        skill, doc, find, suspect
    )


def _only_in_destinations(
    skill: Skill, doc: Doc, find: Finder, suspect: Callable[[Doc, Hit], bool]
) -> bool:
    """Whether every suspect hit in the file's raw lines starts inside a link destination
    (where ``_scan`` never reports it). Only links from the cheap scan count: their lines
    hold text exactly where the raw lines do, which a parse's positions are not always."""
    source = source_lines(skill, doc.entry)
    if source is None:
        return False
    lines, first_line = source
    text = "\n".join(lines)
    hits = [hit for hit in find(text) if suspect(doc, hit)]
    links = fast_links(lines, first_line) if hits else None
    if not links:
        return False
    covered = _link_columns(links)
    where = LinePositions(text, first_line)
    for hit in hits:  # in order: lines are counted once
        pos = where.pos(hit.start)
        if not _covered(covered, pos.line, pos.column):
            return False
    return True


_MENTION = LazyPattern(r"(?:scripts|references|assets)/[\w.%+@~/-]*[\w%+@~/-]")
# whether one of _FOLDER_WORDS is in a text: one scan that `re` runs from each "/", twice
# as fast as the three substring searches that fail on most texts
_MENTION_HINT = LazyPattern(r"/(?:(?<=scripts/)|(?<=references/)|(?<=assets/))")


def find_mentions(text: str) -> Iterator[Hit]:
    """``scripts/...``, ``references/...`` and ``assets/...`` paths that start a word
    (``./scripts/x``, ``${CLAUDE_SKILL_DIR}/scripts/x`` included; ``myscripts/x`` and
    ``../scripts/x`` not)."""
    if _MENTION_HINT.search(text) is None:
        return
    hits: list[Hit] = []
    for folder in _FOLDER_WORDS:
        start = text.find(folder)
        while start >= 0:
            before = text[start - 1] if start else " "
            # _starts_path, inlined for the usual character before a path
            if (before == "/" and _starts_path(text, start)) or not (
                before == "/" or before.isalnum() or before in _NOT_BEFORE
            ):
                # the start is checked before matching: `scripts/scripts/...` would otherwise
                # match to the end of the run from every `scripts/` in it (quadratic)
                match = _MENTION.match(text, start)
                if match is not None:
                    hits.append(Hit(start, match.end(), match.group(0), "mention"))
                    # nor is a start inside this path (`scripts/a%scripts/b+scripts/...`,
                    # after a character a path holds but does not start after)
                    start = text.find(folder, match.end())
                    continue
            start = text.find(folder, start + 1)
    if len(hits) > 1:
        hits.sort(key=lambda h: h.start)
    yield from hits


_FOLDER_WORDS = tuple(f"{d}/" for d in RESOURCE_DIRS)  # find_mentions' marks
_NOT_BEFORE = frozenset("_./\\~$-")  # with letters and digits: a path does not start here


def _starts_path(text: str, start: int) -> bool:
    before = text[start - 1] if start else " "
    if before == "/" and start >= 2:
        two = text[start - 2]
        third = text[start - 3] if start >= 3 else " "
        return two == "}" or (two == "." and not (_word_char(third) or third in "./-"))
    return not (_word_char(before) or before in "./\\~$-")


_PATH_TAIL = LazyPattern(r"[^\s`'\"<>|*?()\[\]]*")
# the longest path taken in (Linux's PATH_MAX): a run of drive letters without a space
# (`C:\x-C:\x-...`) is a path at each of them, and each must not run to the end of the text
_PATH_MAX = 4096


def _tail_end(text: str, start: int) -> int:
    """Where the path that goes on at ``start`` ends (``_PATH_TAIL`` matches empty too)."""
    tail = _PATH_TAIL.match(text, start, start + _PATH_MAX)
    return tail.end() if tail else start


_HOME = LazyPattern(
    r"/(?:Users|home)/[^\s/`'\"<>()\[\]]+(?:/[^\s`'\"<>()\[\]]*)?|/root/[^\s`'\"<>()\[\]]*"
)
_FILE_URL = LazyPattern(r"file:///?[^\s`'\"<>()\[\]]+")
_WORD_RUN = LazyPattern(r"[\w.\\-]*")
_DRIVE = LazyPattern(r"[A-Za-z]:(?:\\|/Users/)")
_UNC = LazyPattern(r"\\\\[\w.$-]+\\[^\s`'\"<>|*?()\[\]]+")


def _backslash_words(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of ``[\\w.\\\\-]`` holding a backslash, as finditer of
    ``[\\w.\\\\-]*\\\\[\\w.\\\\-]*`` gives them, in linear time: that regex rescans a long
    run without a backslash from each of its characters."""
    at = 0
    while (backslash := text.find("\\", at)) >= 0:
        start = backslash
        while start > at and (_word_char(text[start - 1]) or text[start - 1] in ".\\-"):
            start -= 1
        match = _WORD_RUN.match(text, backslash + 1)
        at = match.end() if match else backslash + 1
        yield start, at


# "/Users/", "/home/", "/root/" or "file:/" (":/Users/" holds the first): one scan that
# `re` runs from each "/", three times faster than the four substring tests
_HOME_OR_FILE_HINT = LazyPattern(r"/(?:Users/|home/|root/|(?<=file:/))")
# find_local_paths finds nothing in a text without one of these
_LOCAL_MARKS = ("\\", "/Users/", "/home/", "/root/", "file:/")


def find_local_paths(text: str) -> Iterator[Hit]:
    """Windows-style paths (drive letters, UNC shares, backslash separators) and absolute
    paths into one person's machine. Each kind is looked for only when its literal marker is
    in the text: most texts cost a few substring tests."""
    hits: list[Hit] = []
    if "\\" in text:
        if ":\\" in text:
            for match in _DRIVE.finditer(text):
                start = match.start()
                if start and (_word_char(text[start - 1]) or text[start - 1] in "\\/"):
                    continue
                end = _tail_end(text, match.end())
                hits.append(Hit(start, end, text[start:end], "drive"))
        if "\\\\" in text:
            for match in _UNC.finditer(text):
                start = match.start()
                if start and (_word_char(text[start - 1]) or text[start - 1] == "\\"):
                    continue
                hits.append(Hit(start, match.end(), match.group(0), "unc"))
        drives = _DrivePaths(text)
        for start, end in _backslash_words(text):
            word = text[start:end]
            if word.startswith("\\") or word.endswith("\\") or "\\\\" in word:
                continue  # an escape, a UNC share or a line-ending backslash
            if start and text[start - 1] in "/~:":
                continue  # part of a drive path or URL, reported as such
            if drives.continues(start):
                continue  # `C:\\Program Files\\x.ini`: the rest of a path with a space
            hits.append(Hit(start, end, word, "back"))
    if _HOME_OR_FILE_HINT.search(text) is not None:
        if "/Users/" in text or "/home/" in text or "/root/" in text:
            if ":/Users/" in text:
                for match in _DRIVE.finditer(text):
                    start = match.start()
                    if match.group(0).endswith("/Users/") and not (
                        start and _word_char(text[start - 1])
                    ):
                        end = _tail_end(text, match.end())
                        hits.append(Hit(start, end, text[start:end], "drive"))
            for match in _HOME.finditer(text):
                start = match.start()
                if start and (_word_char(text[start - 1]) or text[start - 1] in ".~/:-"):
                    continue
                hits.append(Hit(start, match.end(), match.group(0), "home"))
        if "file:/" in text:
            for match in _FILE_URL.finditer(text):
                start = match.start()
                if start and _word_char(text[start - 1]):
                    continue
                hits.append(Hit(start, match.end(), match.group(0), "url"))
    hits.sort(key=lambda h: h.start)
    yield from hits


_PATH_STOPS = LazyPattern(r"[`'\"<>|]")  # what ends a drive path that has spaces


class _DrivePaths:
    """Whether a position continues a drive path begun earlier on its line (a path with
    spaces: nothing that ends a path, such as a backtick or a quote, lies between), asked
    for positions in increasing order: each character is looked at once. Searching back
    from each backslash word to its line's start was quadratic on a long line of them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.seen = 0  # everything before this is accounted for
        self.line = 0  # where the line of ``seen`` starts
        self.drive = -1  # the last `:\` on that line, before ``seen``
        self.stop = -1  # the last character that ends a path on that line, before ``seen``

    def continues(self, start: int) -> bool:
        text = self.text
        if start > self.seen:
            begin = self.seen
            newline = text.rfind("\n", begin, start)
            if newline >= 0:
                self.line = begin = newline + 1
                self.drive = self.stop = -1
            drive = text.rfind(":\\", max(begin - 1, self.line), start)
            if drive >= 0:
                self.drive = drive
            for stop in _PATH_STOPS.finditer(text, begin, start):
                self.stop = stop.start()
            self.seen = start
        return self.drive >= 0 and self.stop < self.drive


@rule(
    "SK507",
    "missing-path-mention",
    Severity.WARNING,
    "A `scripts/`, `references/` or `assets/` path written in the text does not exist.",
    what="""
        Finds paths starting with `scripts/`, `references/` or `assets/` in the text and in
        code spans of SKILL.md and the other Markdown files (`./scripts/x.py` and
        `${CLAUDE_SKILL_DIR}/scripts/x.py` included) and reports those that are not in the
        skill. Paths are taken from the skill root, as the specification writes them (in other
        Markdown files, a path relative to that file is accepted too). Fenced code blocks,
        globs (`scripts/*.py`), placeholders (`assets/<name>.png`), paths written after
        "example", "e.g." or "such as" on their line (`**Examples**: references/finance.md`)
        or after a "Good:" / "Correct:" label (`✓ **Good**: scripts/helper.py`, the right
        shape beside a counter-example),
        paths on a line of counter-examples or hypotheticals (❌, "don't", "bad", "wrong",
        "would be" ...), in a quoted phrase of prose or in the text of a link to a URL, and link
        destinations (SK501 checks those) are not checked, nor a link's text that repeats a
        destination SK501–SK503 report on that line (`[scripts/x.py](scripts/x.py)`). Nor
        are: a path without an extension in prose (`better scripts/tools` means "scripts or
        tools"; in code it is checked), a path on a line ending with a colon right above a
        code block (`**references/tools.md:**` then the content of a file to write), and the
        files the agent never reaches from SKILL.md (copied documentation, notes), paths
        through a folder the user's machine makes (`scripts/.venv/bin/python`,
        `scripts/node_modules/...`), a path on a line that names another skill (quoted,
        bold or hyphenated: "the `pdf` skill's `scripts/fill.py`", "another skill"), a path
        right after its owner ("the plugin's `scripts/x/`", "the repository's", a skill
        name in code: "`build-server` `references/auth.md`"), a shape
        (`references/category/file.md`), and,
        in a guide on writing skills (a file that names `SKILL.md`), a path the sentence
        tells the reader to make in their own skill ("move the details into
        `references/migration.md`", "put it in your `scripts/`"). A
        path is reported once per file, at its first place, with "and N more places in
        this file" (JSON and SARIF list the other places).
    """,
    why="""
        Instructions such as "run `python scripts/extract.py`" are what the agent executes.
        When the script was renamed or never committed, the command fails in the user's
        session; the specification's examples refer to bundled files exactly this way.
    """,
    bad="""
        Run `python scripts/extract_text.py input.pdf`.    # the script is scripts/extract.py
    """,
    good="""
        Run `python scripts/extract.py input.pdf`.
    """,
    folds_repeats=True,
)
def missing_path_mention(skill: Skill, ctx: Context) -> Iterator[Finding]:
    tree = tree_of(skill)
    suspects: dict[tuple[str, str], bool] = {}

    def suspect(doc: Doc, hit: Hit) -> bool:
        key = (doc.base, hit.text)
        known = suspects.get(key)
        if known is None:
            res = _mention_status(tree, doc, hit.text)[0]
            known = res.status in ("missing", "outside", "loop") or bool(res.case)
            suspects[key] = known
        return known

    linked: set[tuple[str, int, str]] | None = None
    shown = _ShownMemo()
    split: dict[str, list[str]] = {}  # each file's lines
    blocks: dict[tuple[str, int], bool] = {}
    messages: dict[tuple[str, str], str | None] = {}
    for doc, segment, hit in _scan(skill, find_mentions, _FOLDER_WORDS, suspect):
        after = segment.text[hit.end : hit.end + 1]
        if after and after in _PLACEHOLDER_AFTER:
            continue
        if linked is None:
            linked = _reported_links(skill)
        if (doc.rel, segment.line, posixpath.normpath(hit.text)) in linked:
            continue  # `[scripts/x.py](scripts/x.py)`: SK501/SK502/SK503 report the link
        if _shown_only(skill, doc, segment, hit, parsed(skill, doc), shown):
            continue  # "Examples: `references/finance.md`" shows a shape, not a file
        if _not_this_skills(skill, doc, segment, hit, shown):
            continue  # another skill's file, the reader's own, or one the user creates
        if not segment.code and "." not in hit.text.rstrip("/").rpartition("/")[2]:
            continue  # prose "better scripts/tools" is "scripts or tools", not a path
        if not doc.is_skill_md and doc.rel not in reached(skill):
            continue  # a file the agent never reaches from SKILL.md (copied docs, notes)
        block_key = (doc.rel, segment.line)
        if block_key not in blocks:
            lines = split.get(doc.rel)
            if lines is None:  # once a file: splitting it again for each path was quadratic
                lines = split[doc.rel] = (doc_text(skill, doc) or "").split("\n")
            blocks[block_key] = _introduces_block(lines, segment.line)
        if blocks[block_key]:
            continue  # "**references/tools.md:**" above a code block shows a file to write
        column = segment.column + hit.start
        span = Span(Pos(segment.line, column), Pos(segment.line, column + len(hit.text)))
        # one message per file and path, made once: a path named 16,000 times costs one
        # resolution, and the engine reports the repeats as one finding (fold_repeats)
        message_key = (doc.base, hit.text)
        if message_key not in messages:
            messages[message_key] = _mention_message(tree, doc, hit.text)
        message = messages[message_key]
        if message is not None:
            yield Finding(message, span=span, path=doc.path)


def _mention_message(tree: Tree, doc: Doc, written: str) -> str | None:
    """SK507's message for a written path that does not resolve, None when it does."""
    res, path = _mention_status(tree, doc, written)
    if res.status == "missing":
        hint_ = ""
        if res.suggestion is not None:
            parent = res.missing.rpartition("/")[0]
            hint_ = f"; did you mean {show(posixpath.join(parent, res.suggestion))}?"
        return f"{show(path)} is not in the skill{hint_}" + (
            "" if hint_ else "; fix the path or add the file"
        )
    if res.status == "found" and res.case:
        return (
            f"{show(path)} differs in case from the file on disk {show(res.rel)}: it is"
            " found on macOS and Windows only; write it as on disk"
        )
    if res.status in ("outside", "loop"):
        return (
            f"{show(path)} leads outside the skill through a symlink; installed copies do"
            " not contain it"
        )
    return None


def _introduces_block(lines: list[str], line: int) -> bool:
    """Whether line ``line`` of a file's ``lines`` ends with a colon and the next non-blank
    line opens a fenced code block: `**references/tools.md:**` then the file's content, as a
    template or a worked example shows a file to create."""
    if line < 1 or line > len(lines):
        return False
    if not lines[line - 1].rstrip().rstrip("*_`").endswith(":"):
        return False
    for following in lines[line : line + 3]:
        if following.strip():
            return following.lstrip().startswith(("```", "~~~"))
    return False


def _reported_links(skill: Skill) -> set[tuple[str, int, str]]:
    """(file, line, path) of the links SK501–SK503 report: the same path written as the
    link's text on that line is not reported again by SK507."""
    out: set[tuple[str, int, str]] = set()
    for use in checked_uses(skill):
        res = use.res
        if res is None or use.link is None or not use.path:
            continue
        if use.backslash or res.status in ("missing", "outside", "loop") or res.case:
            path = posixpath.normpath(use.path.replace("\\", "/"))
            out.add((use.doc.rel, use.link.span.start.line, path))
    return out


_PLACEHOLDER_AFTER = set("<{[*$?")


def _mention_status(tree: Tree, doc: Doc, written: str) -> tuple[Resolution, str]:
    """Resolve a written ``scripts/...`` path from the skill root (or, in another Markdown
    file, from that file's folder)."""
    path = written.rstrip("/")
    if "%" in path:
        path = unquote(path)
    res = tree.resolve(path)
    if not res.ok and doc.base:
        local = tree.resolve(path, doc.base)
        if local.ok:
            res = local
    return res, path


_ASCII_PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_EXTENSION = LazyPattern(r"\.[A-Za-z0-9]{1,8}$")


def _local_path(hit: Hit, code: bool) -> str | None:
    """The path to report for a hit of ``find_local_paths``, or None. ``code=True`` is the
    more permissive reading (backslashes are literal), used on raw text before parsing."""
    text = hit.text.rstrip(".,;:!")  # sentence punctuation after the path
    if hit.kind == "unc":
        return None  # `\\\\server\\share` shows the syntax; no skill names a real share
    if hit.kind == "home":
        user = _home_user(text)
        return text if user is not None and not _generic_user(user) else None
    if hit.kind == "drive":
        # `C:\\Program Files\\...` is where Windows keeps things, the same on every Windows
        # machine; only a user's own folder is one person's
        user = _drive_user(text)
        return text if user is not None and not _generic_user(user) else None
    if hit.kind == "url":
        rest = text[len("file://") :]
        user = _home_user(rest) or _drive_user(rest.lstrip("/"))
        return text if user is not None and not _generic_user(user) else None
    if hit.kind != "back":
        return text
    if not code and all(
        text[i + 1] in _ASCII_PUNCT for i, ch in enumerate(text[:-1]) if ch == "\\"
    ):
        return None  # Markdown escapes such as file\_name
    parts = text.split("\\")
    if text.lower().endswith((".ps1", ".bat", ".cmd", ".exe")):
        return None  # `.\\setup.ps1`: a Windows-only file, written as Windows writes it
    if any(p.startswith(".") and p not in (".", "..") for p in parts[1:]):
        return None  # `vm\\.EVM`: a regular expression's escaped dot, not a folder
    if parts[0] in RESOURCE_DIRS or parts[0] in (".", "..") or _EXTENSION.search(text):
        return text
    return None  # regular expressions, `\n` in strings ...


# user names that stand for "the user" in examples, or that every container or CI machine
# has: `/home/user/...`, `/Users/you/...`, `/home/runner/...` (GitHub Actions), `/home/node`
_GENERIC_USERS = frozenset(
    {
        "user", "username", "name", "me", "you", "yourname", "your-name", "your_name",
        "yourusername", "myuser", "someone", "somebody", "example", "foo", "runner", "node",
        "ubuntu", "ec2-user", "admin", "workspace", "vscode", "codespace", "codespaces",
        "jovyan", "app", "coder", "dev", "developer", "default", "guest", "shared", "public",
        "test",
        # the home of claude.ai's and the Claude API's code-execution sandbox, and of DNAnexus
        # job workers: the same on every run of the platform, not one person's machine
        "claude", "dnanexus",
    }
)  # fmt: skip


def _generic_user(user: str) -> bool:
    lowered = user.lower()
    return (
        len(lowered) == 1
        or lowered in _GENERIC_USERS
        or lowered.startswith(("your", "<", "{", "[", "$", "%", "*", "...", "…"))
        or lowered.endswith((">", "}", "]"))
        # a regular expression (`grep -E '/home/|^/usr/'`), not a path
        or any(c in lowered for c in "|^()+?")
    )


def _home_user(path: str) -> str | None:
    """``alice`` in ``/Users/alice/...`` or ``/home/alice/...``; None for ``/root/...``,
    which every Linux machine and container has."""
    for prefix in ("/Users/", "/home/"):
        if path.startswith(prefix):
            return path[len(prefix) :].split("/", 1)[0] or None
    return None


def _drive_user(path: str) -> str | None:
    """``alice`` in ``C:\\Users\\alice\\...`` or ``C:/Users/alice/...``."""
    parts = re.split(r"[\\/]", path, maxsplit=3)
    if len(parts) >= 3 and len(parts[0]) == 2 and parts[0][1] == ":" and parts[1] == "Users":
        return parts[2] or None
    return None


# words that, before a path on its line, make it an example ("Examples: references/x.md")
_EXAMPLE = LazyPattern(
    r"\bexamples?\b|\be\.g\.|\b(?:such as|for instance|imagine|suppose)\b"
    # a "Good:" label shows the right shape beside a counter-example ("✓ **Good**: `x/y.md`")
    r"|\b(?:good|correct)\b\W{0,3}:",
    re.IGNORECASE,
)
_QUOTES = (('"', '"'), ("“", "”"), ("‘", "’"))


def _in_quotes(quotes: dict[str, list[int]], start: int) -> bool:
    """Whether ``start`` lies inside a quoted phrase of prose (`"tailor scripts/x"`), given
    the sorted offsets of each quote character in the text (``_quote_offsets``)."""
    for open_, close in _QUOTES:
        opens = quotes[open_]
        before = bisect.bisect_left(opens, start)
        if open_ == close:
            if before % 2 == 1 and before < len(opens):
                return True
            continue
        closes = quotes[close]
        closed = bisect.bisect_left(closes, start)
        if before > closed and closed < len(closes):
            return True
    return False


def _quote_offsets(text: str) -> dict[str, list[int]]:
    offsets: dict[str, list[int]] = {}
    for pair in _QUOTES:
        for char in pair:
            if char not in offsets:
                offsets[char] = [i for i, c in enumerate(text) if c == char]
    return offsets


@dataclass
class _ShownMemo:
    """What ``_shown_only`` computes once per line or segment rather than once per path:
    searching a line again for each of its paths is quadratic on a long line of paths."""

    lines: dict[tuple[str, int], tuple[bool, int | None]] = field(default_factory=dict)
    quotes: dict[tuple[str, int, int], dict[str, list[int]]] = field(default_factory=dict)
    other_skill: dict[tuple[str, int], bool] = field(default_factory=dict)  # SK507, by line
    guides: dict[str, bool] = field(default_factory=dict)  # SK507: files that name SKILL.md


_URL_LINK_TEXTS: Memo[dict[int, list[tuple[int, int]]]] = Memo("url-link-texts")  # per file


def _url_link_texts(skill: Skill, doc: Doc, md: Markdown) -> dict[int, list[tuple[int, int]]]:
    """Columns of the text of links to URLs, by line: `[references/x.md](https://…)` names a
    file of another project."""
    out = skill.memos.get(_URL_LINK_TEXTS, doc.rel)
    if out is None:
        out = {}
        for link in md.links:
            if link.start.line == link.span.start.line and has_scheme(link.dest):
                out.setdefault(link.start.line, []).append(
                    (link.start.column, link.span.start.column)
                )
        skill.memos.put(_URL_LINK_TEXTS, out, doc.rel)
    return out


def _shown_only(
    skill: Skill, doc: Doc, segment: Segment, hit: Hit, md: Markdown | None, memo: _ShownMemo
) -> bool:
    """Whether a path found in the text is only shown, not given to the agent: on a line of
    counter-examples or hypotheticals, in a quoted phrase of prose, or in the text of a link
    to a URL."""
    if md is None:
        return False
    line = md.line(segment.line)
    key = (doc.rel, segment.line)
    facts = memo.lines.get(key)
    if facts is None:
        found = _EXAMPLE.search(line)
        facts = (
            bool(markdown.NOT_AN_INSTRUCTION.search(line)),
            None if found is None else found.start(),
        )
        memo.lines[key] = facts
    not_an_instruction, first_example = facts
    if not_an_instruction:
        return True
    cut = segment.column - 1 + hit.start
    # an "example" before the path: searched from the line's first one, so once per line
    if (
        first_example is not None
        and first_example < cut
        and _EXAMPLE.search(line, first_example, cut)
    ):
        return True
    if not segment.code:
        where = (doc.rel, segment.line, segment.column)
        quotes = memo.quotes.get(where)
        if quotes is None:
            quotes = memo.quotes[where] = _quote_offsets(segment.text)
        if _in_quotes(quotes, hit.start):
            return True
    texts = _url_link_texts(skill, doc, md)
    return _covered(texts, segment.line, segment.column + hit.start)


# "the `pdf` skill's scripts/fill.py", "scripts/x.py of the brand-guidelines skill", "skill
# `pdf`": a file of another skill, named with that skill. A name is taken when it is quoted,
# bold or hyphenated (a plain word before "skill" is mostly English: "a writing skill")
_NAMED_SKILL = LazyPattern(
    r"(?:[`'\"]|\*\*)(?P<quoted>[\w:.-]+)(?:[`'\"]|\*\*)\s+skill(?:'s|s)?\b"
    r"|\b(?P<hyphened>[a-z0-9]+(?:-[a-z0-9]+)+)\s+skill(?:'s|s)?\b"
    r"|\b(?P<other>another|other|sibling|companion)\s+skill"
    r"|\bskill\s+(?:[`'\"]|\*\*)(?P<after>[\w:.-]+)(?:[`'\"]|\*\*)",
    re.IGNORECASE,
)
# what a guide on writing skills tells the reader to do with their own files: "move the
# details into `references/migration.md`", "put helper code in your `scripts/validate.py`"
_ADVICE = LazyPattern(
    r"\b(?:your|move|moving|put|place|split|extract|create|add|store|keep|save|organi[sz]e"
    r"|bundle)\b",
    re.IGNORECASE,
)
_SENTENCE_END = LazyPattern(r"[.!?;](?:\s|$)")


def _not_this_skills(skill: Skill, doc: Doc, segment: Segment, hit: Hit, memo: _ShownMemo) -> bool:
    """Whether a written path names no file this skill should hold: a path through a folder
    the user's machine makes (`scripts/.venv/bin/python`, `node_modules/`), a file of
    another skill named with that skill on the line, or, in a guide on writing skills (its
    text names `SKILL.md`), a path the sentence tells the reader to create in their own
    skill."""
    parts = hit.text.split("/")
    if any(part in JUNK_DIRS for part in parts):
        return True
    if parts[-1].partition(".")[0].lower() in _SHAPE_WORDS:
        return True  # `references/category/file.md`: a shape, as SK501 treats `file`
    md = parsed(skill, doc)
    if md is None:
        return False
    line = md.line(segment.line)
    cut = segment.column - 1 + hit.start
    # "the plugin's `scripts/interface/`", "`build-server` `references/x.md`": right before
    # the path, another container or another skill's name owns it
    owner = _OWNED_BEFORE.search(line, max(0, cut - 60), cut)
    if owner is not None and (owner["name"] or "").lower() not in _own_names(skill):
        return True
    key = (doc.rel, segment.line)
    other = memo.other_skill.get(key)
    if other is None:
        own = _own_names(skill)
        other = memo.other_skill[key] = any(
            match["other"]
            or (match["quoted"] or match["hyphened"] or match["after"]).lower()
            not in own | _THIS_SKILL
            for match in _NAMED_SKILL.finditer(line)
        )
    if other:
        return True
    guide = memo.guides.get(doc.rel)
    if guide is None:
        text = doc_text(skill, doc) or ""
        guide = memo.guides[doc.rel] = "SKILL.md" in text
    if not guide:
        return False
    start = 0
    for end in _SENTENCE_END.finditer(line, 0, cut):
        start = end.end()
    return _ADVICE.search(line, start, cut) is not None


def _own_names(skill: Skill) -> set[str]:
    return {n.lower() for n in (skill.name, skill.dir_name) if n}


# the last part of a path that only shows a shape: `references/category/file.md`
_SHAPE_WORDS = frozenset({"file", "filename", "foo", "bar", "xxx", "your-file", "my-file"})
# what owns a path written right after it: "the plugin's", "the repository's", or another
# skill's name in code (`` `build-server` `references/x.md` ``, "`pdf`'s")
_OWNED_BEFORE = LazyPattern(
    r"(?:\b(?:plugin|repo|repository|project|workspace)'s\s+|`(?P<name>[a-z0-9]+(?:-[a-z0-9]+)+)`"
    r"(?:'s)?\s+)[`*]?(?:\./)?\Z",
    re.IGNORECASE,
)
# words before "skill" that name this one, not another
_THIS_SKILL = frozenset({"this", "the", "a", "an", "my", "our", "same", "current", "that"})


@rule(
    "SK508",
    "non-portable-path",
    # info: on the real-world corpus (bench/realworld/REVIEW.md) its findings were right
    # about 1 time in 5 on vendor repositories (error messages quoted in tables, `# BAD`
    # examples in code blocks, Windows-only commands) though mostly right on personal ones
    Severity.INFO,
    "A Windows-style or machine-local absolute path is written in the text.",
    what="""
        Finds, in the text and code spans of SKILL.md and the other Markdown files, paths
        written with backslashes (`scripts\\extract.py`, `C:\\tools\\x.exe`,
        `\\\\server\\share`) and absolute paths into one person's machine (`/Users/alice/...`,
        `/home/bob/...`, `/root/...`, `C:/Users/...`, `file:///...`). Markdown escapes
        (`file\\_name`), regular expressions and links (SK501 and SK502 check those) are left
        alone. Fenced code blocks and the skill's scripts are checked for paths into
        one person's home only (`python3 /home/lucas/tools/x.py`): a command or script that
        uses one fails everywhere else. Scripts are the skill's code files anywhere in it
        (`.py`, `.js`, `.mjs`, `.sh` ..., an `assets/server.mjs` template too) and the files
        without an extension under `scripts/` that start with a `#!` line.

        Paths that are only shown are not reported: on a line of counter-examples or
        hypotheticals (❌, "don't", "never", "avoid", "bad", "wrong", "instead of",
        "hardcoded", "would be"), after "example", "e.g." or "such as" on their line, in a
        quoted phrase of prose, or in the text of a link to a URL. Neither are the user
        names that stand for any user or every container (`/home/user`, `/Users/you`,
        `/home/runner`, `/home/node`, `/home/claude` of Claude's code-execution sandbox,
        `<name>`, `$USER`), regular expressions (`grep -E '/home/|^/usr/'`), `/root/...` (on
        every Linux
        machine), Windows system paths (`C:\\Program Files\\...`: only `C:\\Users\\<name>` is
        one person's), and `\\\\server\\share` (the syntax of a network share).
    """,
    why="""
        Skills run on other machines: Codex, CI and most agent sandboxes are Linux, where a
        backslash is an ordinary character in a file name, and nobody else has `/Users/alice`.
        Anthropic's authoring guidance says to always use forward slashes; the specification
        writes paths relative to the skill root.
    """,
    bad="""
        Run `python scripts\\extract.py /Users/alice/Downloads/report.pdf`.
    """,
    good="""
        Run `python scripts/extract.py path/to/report.pdf`.
    """,
)
def non_portable_path(skill: Skill, ctx: Context) -> Iterator[Finding]:
    def suspect(doc: Doc, hit: Hit) -> bool:
        return _local_path(hit, code=True) is not None

    shown = _ShownMemo()
    for doc, segment, hit in _scan(skill, find_local_paths, _LOCAL_MARKS, suspect):
        text = _local_path(hit, segment.code)
        if text is None or _shown_only(skill, doc, segment, hit, parsed(skill, doc), shown):
            continue
        column = segment.column + hit.start
        span = Span(Pos(segment.line, column), Pos(segment.line, column + len(text)))
        if hit.kind in ("back", "unc") or (hit.kind == "drive" and "\\" in text):
            message = (
                f"{show(text)} is a Windows-style path: backslashes are not separators on"
                " Linux or macOS"
            )
            message += (
                f"; write {show(text.replace(chr(92), '/'))}"
                if hit.kind == "back"
                else "; write paths relative to the skill root with forward slashes"
            )
        else:
            message = (
                f"{show(text)} is an absolute path on one machine; other users and agents do"
                " not have it: use a path relative to the skill root or a placeholder"
            )
        yield Finding(message, span=span, path=doc.path)
    yield from _machine_paths_in_code(skill)


_MACHINE_KINDS = ("home", "drive", "url")
_MACHINE_MARKERS = ("/Users/", "/home/", ":\\Users\\", ":/Users/", "file:/")


def _has_machine_marker(text: str) -> bool:
    """Whether one of _MACHINE_MARKERS is in ``text``: every one but the backslashed one
    holds a match of _HOME_OR_FILE_HINT, whose one scan rules most texts out."""
    if "\\" in text and ":\\Users\\" in text:
        return True
    return _HOME_OR_FILE_HINT.search(text) is not None and any(
        marker in text for marker in _MACHINE_MARKERS
    )


def _machine_lines(text: str) -> Iterator[tuple[int, str, Hit, str]]:
    """(line index, line, hit, path) for each path into one person's home in ``text``."""
    if not _has_machine_marker(text):
        return
    for index, line in enumerate(text.split("\n")):
        if not any(marker in line for marker in _MACHINE_MARKERS):
            continue
        if markdown.NOT_AN_INSTRUCTION.search(line) or _EXAMPLE.search(line):
            continue
        for hit in find_local_paths(line):
            path = _local_path(hit, code=True) if hit.kind in _MACHINE_KINDS else None
            if path is not None:
                yield index, line, hit, path


def _code_file(rel: str) -> bool:
    """Code whose paths SK508 reads: a script file anywhere in the skill (`scripts/x.py`, an
    `assets/server.mjs` template), or a file without an extension under `scripts/` (read
    only when it starts with a `#!` line)."""
    if rel.endswith(_CODE_SUFFIXES):
        return True
    name = rel.rpartition("/")[2]
    return rel.startswith("scripts/") and "." not in name.lstrip(".")


def _machine_paths_in_code(skill: Skill) -> Iterator[Finding]:
    """Paths into one person's home in fenced code blocks (the commands the agent runs:
    `python3 /home/lucas/tools/x.py`) and in the skill's scripts."""
    for doc in documents(skill):
        text = doc_text(skill, doc)
        if not text or not _has_machine_marker(text):
            continue
        md = parsed(skill, doc)
        if md is None:
            continue
        for block in md.code_blocks:
            for index, _line, hit, path in _machine_lines(block.text):
                number = block.span.start.line + index
                raw = md.line(number)
                found = raw.find(hit.text)
                column = found + 1 if found >= 0 else block.span.start.column
                yield Finding(
                    f"{show(path)} in a code block is an absolute path on one machine; the"
                    " command fails for every other user and agent: use a path relative to"
                    " the skill root or a placeholder",
                    span=Span(Pos(number, column), Pos(number, column + len(path))),
                    path=doc.path,
                )
    tree = tree_of(skill)
    for entry in skill.files:
        if entry.kind != "file" or not _code_file(entry.rel) or not tree.owned(entry.rel):
            continue
        text = readable_text(skill, entry)
        if not text or (not entry.rel.endswith(_CODE_SUFFIXES) and not text.startswith("#!")):
            continue
        for index, _line, hit, path in _machine_lines(text):
            yield Finding(
                f"{show(path)} is an absolute path on one machine; the script fails for every"
                " other user and agent: derive the path from the script's own location or"
                " take it as an argument",
                span=Span(Pos(index + 1, hit.start + 1), Pos(index + 1, hit.start + 1 + len(path))),
                path=entry.path,
            )
