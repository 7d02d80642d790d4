"""Resolve paths inside a skill without touching the file system.

Links, path mentions, frontmatter path fields and symlinks are all resolved here, purely
from the walk that ``load`` already made (``skill.files``: names, kinds and symlink targets,
never following a link). Nothing is opened, stat'ed or read, so a link to ``/etc/passwd``,
a symlink to ``/`` or a loop costs a dictionary lookup, and nothing outside the skill is
ever looked at. Resolution works component by component like the kernel's: a symlink is
replaced by its target before a following ``..`` is applied. The one look outside a skill is
``plugin_root``: whether a folder above it has a `.claude-plugin/plugin.json` (a stat).
"""

from __future__ import annotations

import functools
import os
import posixpath
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from skillcheck.source import outside
from skillcheck.source.junk import OPAQUE_DIRS
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import Memo, Skill, SkillFile

MAX_HOPS = 40  # symlinks followed in one resolution, as Linux's ELOOP limit

Status = Literal["found", "missing", "outside", "loop", "unknown"]

_DRIVE = LazyPattern(r"^[A-Za-z]:[\\/]")
_SCHEME = LazyPattern(r"^[A-Za-z][A-Za-z0-9+.-]+:")


def fold(name: str) -> str:
    """Names a case-insensitive, normalization-insensitive file system (macOS, Windows)
    treats as the same."""
    return unicodedata.normalize("NFC", name).casefold()


# Top-level folders of macOS, Linux and Windows-on-Unix file systems: an absolute path that
# starts with one of them names a place on a machine. Any other ``/docs/oauth`` is a
# site-relative link copied from a web page (or a slash command), not a file of this machine.
MACHINE_ROOTS = frozenset(
    {
        "Users", "home", "root", "etc", "tmp", "var", "opt", "usr", "private", "Volumes",
        "Library", "System", "Applications", "mnt", "media", "srv", "bin", "sbin", "lib",
        "lib64", "dev", "proc", "sys", "run", "nix", "snap", "workspace", "workspaces",
        "data", "app",
    }
)  # fmt: skip


def machine_path(path: str) -> bool:
    """Whether an absolute POSIX path names a place on a machine (``/Users/…``, ``/etc/x``)
    rather than a page of a web site (``/docs/oauth``)."""
    first = path.lstrip("/").split("/", 1)[0]
    return first in MACHINE_ROOTS or first.lower() in MACHINE_ROOTS


def has_scheme(dest: str) -> bool:
    """``https:``, ``mailto:``, ``data:`` ...; a drive letter (``C:``) is not a scheme."""
    return bool(_SCHEME.match(dest)) and not _DRIVE.match(dest)


@dataclass
class Resolution:
    status: Status
    rel: str = ""  # the path inside the skill it resolves to ("" = the skill root)
    entry: SkillFile | None = None  # the entry found (None for the root or when not found)
    # names written with the wrong case or normalization: (as written, on disk)
    case: list[tuple[str, str]] = field(default_factory=list)
    via: list[SkillFile] = field(default_factory=list)  # symlinks followed
    reason: str = ""  # why it is missing / outside
    missing: str = ""  # the path (inside the skill) of the first component that is missing
    wanted: str = ""  # with ``missing``: the whole path asked for inside the skill
    # finds a close on-disk name for a missing component: run when the suggestion is asked
    # for (by the message of a reported path), as a difflib search is most of what
    # resolving a missing path costs
    suggest: Callable[[], str | None] | None = field(default=None, repr=False, compare=False)

    @functools.cached_property
    def suggestion(self) -> str | None:
        """A close on-disk name for a missing component (None: there is none)."""
        return self.suggest() if self.suggest is not None else None

    @property
    def ok(self) -> bool:
        return self.status == "found" and not self.case

    @property
    def kind(self) -> str:
        return "dir" if self.entry is None else self.entry.kind


PLUGIN_MANIFEST = (".claude-plugin", "plugin.json")


def plugin_root(directory: Path, skill: Skill | None = None) -> Path | None:
    """The nearest folder at or above ``directory`` holding `.claude-plugin/plugin.json`
    (found by stat alone, nothing is read), up to the repository root (a `.git`). With
    ``skill``, every path looked at is recorded on it (``source.outside``): the skill's
    results then depend on them."""
    found, looked = _plugin_root(str(directory))
    if skill is not None:
        for path, state in looked:
            outside.look(skill, path, state)
    return found


def load_group(root: Path) -> tuple[str, str]:
    """The set of skills a runtime loads together with the skill at ``root``: its plugin
    (Claude Code namespaces a plugin's skills as `plugin:skill`, so they collide only with
    each other), else its skills root (the folder holding the skill directory)."""
    plugin = plugin_root(root.parent)
    if plugin is not None:
        return ("plugin", str(plugin))
    return ("root", str(root.parent))


def forget_outside() -> None:
    """Forget the plugin roots found so far: a run looks around its skills afresh (a
    long-lived process, the language server or a library caller, lints many times)."""
    _plugin_root.cache_clear()


@functools.lru_cache(maxsize=4096)
def _plugin_root(directory: str) -> tuple[Path | None, tuple[tuple[str, str], ...]]:
    """(the plugin root, the paths looked at and what was there), once per folder and run."""
    manifest = os.path.join(directory, *PLUGIN_MANIFEST)
    state = outside.state(manifest)
    if outside.is_file(state):
        return Path(directory), ((manifest, state),)
    parent = os.path.dirname(directory)
    git = os.path.join(directory, ".git")
    git_state = outside.state(git)
    looked = ((manifest, state), (git, git_state))
    if parent == directory or outside.exists(git_state):
        return None, looked
    found, above = _plugin_root(parent)
    return found, looked + above


def is_repository_root(directory: Path) -> bool:
    """Whether ``directory`` is the root of a git checkout (it holds `.git`; stat only)."""
    return os.path.exists(os.path.join(directory, ".git"))


class Tree:
    """The skill's walk as a directory tree: ``children[dir_rel][name] -> SkillFile``."""

    def __init__(self, skill: Skill) -> None:
        self.root = skill.root
        self.skill = skill  # outside looks (the plugin root) are recorded on it
        self._in_plugin: str | bool | None = False  # not looked up yet
        self.entries: dict[str, SkillFile] = {}
        self.children: dict[str, dict[str, SkillFile]] = {"": {}}
        for entry in skill.files:
            self.entries[entry.rel] = entry
            parent, _, name = entry.rel.rpartition("/")
            self.children.setdefault(parent, {})[name] = entry
            if entry.kind == "dir":
                self.children.setdefault(entry.rel, {})
        # directories whose contents the walk did not list: nothing below them is known
        self.unlisted: set[str] = {
            e.rel
            for e in skill.files
            if e.kind == "dir" and e.rel.rpartition("/")[2] in OPAQUE_DIRS
        }
        self.incomplete = False
        root = str(skill.root)
        for path, reason in skill.walk_errors:
            text = str(path)
            if "more than" in reason:
                self.incomplete = True
            if text == root:
                self.incomplete = True
            elif text.startswith(root + "/"):
                self.unlisted.add(text[len(root) + 1 :])
        self._folded: dict[str, dict[str, list[str]]] = {}
        # skills nested in this one are linted on their own: their files are not ours
        self.nested: list[str] = sorted(
            {
                e.rel.rpartition("/")[0]
                for e in skill.files
                if "/" in e.rel and e.rel.rpartition("/")[2].lower() == "skill.md"
            }
        )

    def in_plugin(self) -> str | None:
        """The skill's folder relative to its plugin's root (``skills/pdf``), None outside a
        plugin: what ``${CLAUDE_PLUGIN_ROOT}/skills/pdf/x`` must start with to name a file
        of this skill."""
        if self._in_plugin is False:
            plugin = plugin_root(self.root.parent, self.skill)
            self._in_plugin = (
                None if plugin is None else Path(os.path.relpath(self.root, plugin)).as_posix()
            )
        return self._in_plugin  # type: ignore[return-value]

    def owned(self, rel: str) -> bool:
        """Whether ``rel`` belongs to this skill (not to a nested skill)."""
        if not self.nested:
            return True
        return not any(rel == n or rel.startswith(n + "/") for n in self.nested)

    def folded(self, directory: str) -> dict[str, list[str]]:
        table = self._folded.get(directory)
        if table is None:
            table = {}
            for name in self.children.get(directory, {}):
                table.setdefault(fold(name), []).append(name)
            self._folded[directory] = table
        return table

    def resolve(self, path: str, base: str = "") -> Resolution:
        """Resolve ``path`` (POSIX, already unescaped) written in directory ``base``."""
        if path.startswith("/") and not machine_path(path):
            return Resolution("outside", reason="site")
        if path.startswith("/") or _DRIVE.match(path) or path.startswith("\\\\"):
            return Resolution("outside", reason="absolute")
        if path == "~" or path.startswith("~/"):
            return Resolution("outside", reason="home")
        joined = f"{base}/{path}" if base else path
        entry = self.entries.get(joined)
        if entry is not None and entry.kind != "symlink":
            # listed by the walk, which never enters a linked folder: a plain path, done
            return Resolution("found", rel=joined, entry=entry)
        parts = [p for p in base.split("/") if p] + path.split("/")
        return self._walk(parts)

    def resolve_link(self, entry: SkillFile) -> Resolution:
        """Where the symlink ``entry`` leads."""
        target = entry.link_target
        if target is None:
            return Resolution("missing", reason="unreadable link")
        parent = entry.rel.rpartition("/")[0]
        if target.startswith("/") or _DRIVE.match(target):
            return Resolution("outside", reason="absolute", via=[entry])
        result = self._walk([p for p in parent.split("/") if p] + target.split("/"), [entry])
        return result

    def _walk(self, parts: list[str], via: list[SkillFile] | None = None) -> Resolution:
        stack: list[str] = []
        queue = list(reversed(parts))  # popped from the end
        result = Resolution("found", via=list(via or []))
        hops = len(result.via)
        entry: SkillFile | None = None
        while queue:
            part = queue.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if not stack:
                    result.status = "outside"
                    result.reason = "symlink" if result.via else "parent"
                    return result
                stack.pop()
                entry = self.entries.get("/".join(stack)) if stack else None
                continue
            directory = "/".join(stack)
            if directory in self.unlisted:
                result.status = "unknown"
                return result
            name = part
            found = self.children.get(directory, {}).get(name)
            if found is None:
                same = self.folded(directory).get(fold(name), [])
                if len(same) >= 1:
                    name = same[0]
                    found = self.children[directory][name]
                    result.case.append((part, name))
            if found is None:
                result.status = "unknown" if self.incomplete else "missing"
                result.missing = posixpath.join(directory, part) if directory else part
                # the rest of the path as asked for: `.gitbook/assets/a.png`, not `.gitbook`
                rest = posixpath.normpath(posixpath.join(result.missing, *reversed(queue)))
                result.wanted = rest if not rest.startswith("..") else result.missing
                result.reason = "missing"
                result.suggest = functools.partial(self._suggest, directory, part)
                result.rel = "/".join(stack)
                return result
            if found.kind == "symlink":
                hops += 1
                result.via.append(found)
                if hops > MAX_HOPS:
                    result.status = "loop"
                    return result
                target = found.link_target
                if target is None:
                    result.status = "missing"
                    result.reason = "unreadable link"
                    result.missing = found.rel
                    return result
                if target.startswith("/") or _DRIVE.match(target):
                    result.status = "outside"
                    result.reason = "symlink"
                    return result
                queue.extend(reversed(target.split("/")))
                continue
            if queue and any(p not in ("", ".") for p in queue) and found.kind != "dir":
                result.status = "missing"
                result.reason = "not a directory"
                result.missing = found.rel
                return result
            stack.append(name)
            entry = found
        result.rel = "/".join(stack)
        result.entry = entry if stack else None
        return result

    def _suggest(self, directory: str, name: str) -> str | None:
        names = list(self.children.get(directory, {}))
        if not names:
            return None
        skeleton = confusable_skeleton(name)
        for candidate in names:
            if confusable_skeleton(candidate) == skeleton:
                return candidate
        import difflib  # only when a name is missing

        close = difflib.get_close_matches(name, names, n=1, cutoff=0.75)
        return close[0] if close else None


TREE: Memo[Tree] = Memo("tree")


def tree_of(skill: Skill) -> Tree:
    """The skill's tree, built once per run."""
    tree = skill.memos.get(TREE)
    if tree is None:
        tree = skill.memos.put(TREE, Tree(skill))
    return tree


# Letters from other scripts that render like Latin ones (a small, common subset of
# Unicode's confusables): enough to explain why `rеference.md` with a Cyrillic `е` is
# not `reference.md`.
_CONFUSABLES = str.maketrans(
    {
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
        "ј": "j", "ѕ": "s", "ԁ": "d", "ԛ": "q", "ԝ": "w", "һ": "h", "ӏ": "l", "ɡ": "g",
        "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P",
        "С": "C", "Т": "T", "У": "Y", "Х": "X", "І": "I", "Ј": "J", "Ѕ": "S",
        "α": "a", "ο": "o", "ρ": "p", "ν": "v", "ι": "i", "κ": "k", "τ": "t", "υ": "u",
        "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M",
        "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
        "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "−": "-",
    }
)  # fmt: skip


def confusable_skeleton(text: str) -> str:
    """A rough skeleton for look-alike comparison: NFKC, look-alike letters mapped to Latin,
    case folded."""
    return unicodedata.normalize("NFKC", text).translate(_CONFUSABLES).casefold()


def describe_difference(written: str, actual: str) -> str:
    """Name the characters that differ between two look-alike names."""
    notes = []
    for a, b in zip(written, actual, strict=False):
        if a != b:
            notes.append(f"{_char_name(a)} where the file has {_char_name(b)}")
            if len(notes) == 2:
                break
    if len(written) != len(actual) and not notes:
        notes.append(f"{len(written)} characters where the file name has {len(actual)}")
    return "; ".join(notes)


def _char_name(ch: str) -> str:
    name = unicodedata.name(ch, "")
    return f"{ch!r} (U+{ord(ch):04X}{' ' + name if name else ''})"


def show(text: str) -> str:
    """A name as messages quote it: control, format and undecodable characters escaped so
    nothing a skill contains can drive a terminal."""
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
            out.append(f"\\x{code - 0xDC00:02x}")
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "'" + "".join(out).replace("'", "\\'") + "'"


def escapes_to_nothing(skill: Skill, base: str, path: str) -> bool:
    """Whether a ``../`` link written in folder ``base`` of ``skill`` names nothing outside
    the skill either: the one place the outside is looked at, by a single lstat of the
    lexically joined path (as GitHub resolves it, recorded on the skill: ``source.outside``),
    never read. A link that leaves the skill and finds nothing is broken wherever the skill
    is installed."""
    joined = os.path.normpath(os.path.join(skill.root, base, path))
    return not outside.lexists(outside.look(skill, joined))
