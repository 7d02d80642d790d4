"""SK904–SK909: file names that do not survive every file system, archive and checkout.

Every entry of the skill (files and folders, as the walk found them) is judged by its own
name, so a bad folder name is reported once, not once per file in it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from skillcheck.analysis.paths import fold, show, tree_of
from skillcheck.rules.base import Context, rule
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import WHOLE_FILE, Finding, Memo, Severity, Skill, SkillFile

_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL"]
    + [f"{p}{n}" for p in ("COM", "LPT") for n in [*"0123456789", "¹", "²", "³"]]
)
_WINDOWS_CHARS = LazyPattern(r'[<>:"|?*\\]')


_ENTRIES: Memo[list[tuple[SkillFile, str]]] = Memo("portability-entries")


def _entries(skill: Skill) -> list[tuple[SkillFile, str]]:
    """(entry, its name) for the skill's own entries; listed once, shared by the rules here."""
    entries = skill.memos.get(_ENTRIES)
    if entries is None:
        tree = tree_of(skill)
        entries = [(e, e.rel.rpartition("/")[2]) for e in skill.files if tree.owned(e.rel)]
        skill.memos.put(_ENTRIES, entries)
    return entries


def _kind(entry: SkillFile) -> str:
    return "folder" if entry.kind == "dir" else "file"


@rule(
    "SK904",
    "case-collision",
    Severity.ERROR,
    "Two names in one folder differ only in case or Unicode normalization.",
    what="""
        Reports an entry whose name equals another entry's name in the same folder when case
        is ignored and Unicode is normalized (`README.md` and `Readme.md`; `café.md` written
        with a precomposed `é` and with `e` + U+0301).
    """,
    why="""
        macOS and Windows file systems treat such names as one file: cloning or unzipping the
        skill there silently keeps only one of them, and which one depends on the order of
        extraction. `skillcheck pack` refuses to archive them.
    """,
    bad="""
        my-skill/references/API.md
        my-skill/references/api.md
    """,
    good="""
        my-skill/references/api.md
        my-skill/references/api-v1.md
    """,
)
def case_collision(skill: Skill, ctx: Context) -> Iterator[Finding]:
    seen: dict[tuple[str, str], str] = {}
    for entry, name in _entries(skill):
        parent = entry.rel.rpartition("/")[0]
        key = (parent, fold(name))
        other = seen.get(key)
        if other is None:
            seen[key] = name
            continue
        how = "case" if other.casefold() == name.casefold() else "Unicode normalization"
        yield Finding(
            f"{show(entry.rel)} and {show(other)} in the same folder differ only in {how}:"
            " macOS and Windows keep only one of them on checkout or unzip; rename one",
            span=WHOLE_FILE,
            path=entry.path,
        )


@rule(
    "SK905",
    "windows-reserved-name",
    Severity.ERROR,
    "A file or folder name is reserved on Windows (CON, PRN, AUX, NUL, COM1, LPT1 ...).",
    what="""
        Reports names whose part before the first dot is a Windows device name, in any case
        and with any extension: `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`
        (and the superscript-digit variants): `aux.md`, `nul.txt`, `Com1.json`.
    """,
    why="""
        Windows cannot create these files: `git clone` fails with "invalid path", and unzipping
        the skill stops or skips the file, so Windows users of Claude Code, Copilot or Cursor
        get a broken or incomplete skill.
    """,
    bad="""
        my-skill/references/aux.md
    """,
    good="""
        my-skill/references/auxiliary.md
    """,
)
def windows_reserved_name(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for entry, name in _entries(skill):
        stem = name.split(".", 1)[0].rstrip(" ")
        if stem.upper() in _RESERVED:
            yield Finding(
                f"{_kind(entry)} name {show(entry.rel)} is the reserved Windows device name"
                f" {stem.upper()}: Windows checkouts and unzips fail; rename it",
                span=WHOLE_FILE,
                path=entry.path,
            )


@rule(
    "SK906",
    "windows-reserved-character",
    Severity.ERROR,
    'A file or folder name contains a character Windows forbids (`< > : " | ? * \\`).',
    what="""
        Reports names containing `<`, `>`, `:`, `"`, `|`, `?`, `*` or a backslash. A backslash
        in a name usually comes from a zip made on Windows and unpacked elsewhere
        (`scripts\\run.py` as one file name).
    """,
    why="""
        Windows cannot create such names, so `git clone` and unzip fail there; a backslash in
        a name means a folder structure was lost, and links to `scripts/run.py` do not find
        the file. The Agent Skills discovery RFC also forbids `\\` and `?` in file paths.
    """,
    bad="""
        my-skill/references/what-is-new?.md
    """,
    good="""
        my-skill/references/whats-new.md
    """,
)
def windows_reserved_character(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for entry, name in _entries(skill):
        found = sorted(set(_WINDOWS_CHARS.findall(name)))
        if found:
            chars = " ".join(found)
            yield Finding(
                f"{_kind(entry)} name {show(entry.rel)} contains {chars}, which Windows does"
                " not allow in names; rename it",
                span=WHOLE_FILE,
                path=entry.path,
            )


@rule(
    "SK907",
    "trailing-dot-or-space",
    Severity.ERROR,
    "A file or folder name ends with a dot or a space.",
    what="""
        Reports names ending in `.` or a space (`notes.`, `draft `).
    """,
    why="""
        Windows strips a trailing dot or space, so the file gets another name than the links
        use, and git for Windows refuses to check such paths out ("invalid path"). A trailing
        space is also invisible in every listing.
    """,
    bad="""
        my-skill/references/notes.
    """,
    good="""
        my-skill/references/notes.md
    """,
)
def trailing_dot_or_space(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for entry, name in _entries(skill):
        if name.endswith((".", " ")) and name not in (".", ".."):
            what = "a dot" if name.endswith(".") else "a space"
            yield Finding(
                f"{_kind(entry)} name {show(entry.rel)} ends with {what}, which Windows strips;"
                " rename it",
                span=WHOLE_FILE,
                path=entry.path,
            )


@rule(
    "SK908",
    "unprintable-name",
    Severity.ERROR,
    "A file or folder name contains control characters or bytes that are not UTF-8.",
    what="""
        Reports names containing control characters (tab, newline, escape, DEL, C1 controls)
        or bytes that do not decode as UTF-8 (shown as `\\xNN`).
    """,
    why="""
        Control characters break every line-oriented tool (a newline in a name splits it in
        two), can drive a terminal when listed, and Windows forbids them. Names that are not
        UTF-8 cannot be written to a JSON manifest, a zip file or the discovery index, and
        display differently on every system.
    """,
    bad="""
        my-skill/references/notes\\n.md
    """,
    good="""
        my-skill/references/notes.md
    """,
)
def unprintable_name(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for entry, name in _entries(skill):
        if name.isascii() and name.isprintable():
            continue  # no control character (ASCII's are exactly its unprintables), no \xNN
        undecodable = any(0xDC80 <= ord(ch) <= 0xDCFF for ch in name)
        control = any(unicodedata.category(ch) == "Cc" for ch in name)
        if not (undecodable or control):
            continue
        what = " and ".join(
            part
            for part, present in (
                ("control characters", control),
                ("bytes that are not UTF-8", undecodable),
            )
            if present
        )
        yield Finding(
            f"{_kind(entry)} name {show(entry.rel)} contains {what}; rename it with printable"
            " UTF-8 characters",
            span=WHOLE_FILE,
            path=entry.path,
        )


@rule(
    "SK909",
    "non-nfc-name",
    Severity.WARNING,
    "A file or folder name is not in Unicode NFC form.",
    what="""
        Reports names that change under Unicode NFC normalization, typically accented letters
        stored decomposed (`e` + U+0301 instead of `é`), as macOS' older HFS+ file system and
        some archivers write them.
    """,
    why="""
        Links and frontmatter are almost always typed in NFC. macOS finds the file whatever
        the form, Linux does not: a link to `résumé.md` that works on the author's Mac is
        broken in Codex, CI and containers. git on macOS may also show the file as deleted
        and re-added.
    """,
    bad="""
        my-skill/references/re\\u0301sume\\u0301.md      (decomposed)
    """,
    good="""
        my-skill/references/résumé.md                  (NFC), or an ASCII name
    """,
)
def non_nfc_name(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for entry, name in _entries(skill):
        if name.isascii():
            continue  # ASCII is always NFC
        if any(0xDC80 <= ord(ch) <= 0xDCFF for ch in name):
            continue  # SK908
        if not unicodedata.is_normalized("NFC", name):
            fixed = unicodedata.normalize("NFC", name)
            yield Finding(
                f"{_kind(entry)} name {show(entry.rel)} is not in Unicode NFC form; rename it"
                f" to {show(fixed)} (or use an ASCII name) so links typed on other systems"
                " find it",
                span=WHOLE_FILE,
                path=entry.path,
            )
