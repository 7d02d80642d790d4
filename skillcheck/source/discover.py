"""Paths given on the command line -> skill directories.

A PATH may be a skill directory, a tree of skills (searched recursively), or any file inside
a skill (pre-commit passes changed files: each maps to the nearest enclosing directory that
holds a SKILL.md, and each skill is linted once). A directory PATH under which no skill is
found is reported (SK100, an error); a file PATH that belongs to no skill is ignored. The
search never follows directory symlinks, skips VCS and dependency directories, virtualenvs
and ignored paths, bounds its depth, and never opens what it finds: FIFOs and sockets are
only stat'ed.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck.errors import UsageError
from skillcheck.source.atomic import is_temp_name
from skillcheck.source.junk import DISCOVERY_SKIP_DIRS
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.text import decode_text

MAX_DEPTH = 24


@dataclass
class Problem:
    """Something the search could not look at; reported as SK100."""

    path: Path
    message: str
    warning: bool = False  # a note (a link not followed), never a bound of the search


@dataclass
class Discovery:
    skills: list[Path] = field(default_factory=list)  # absolute, links not resolved
    problems: list[Problem] = field(default_factory=list)


class Listings:
    """Directory listings that discovery and the scan of each skill share in one run, so
    that each directory of a skill is listed once. Discovery lends a skill's directory to
    the scan it starts (``lend``), which lists the skill's folders and leaves them for
    discovery to take when its search gets there (``leave``, ``take``). Only one skill's
    folders are held: lending the directory of a skill outside it (not nested in it) drops
    what is left of them.
    """

    def __init__(self) -> None:
        self._held: dict[str, list[os.DirEntry[str]]] = {}
        self._skill = ""  # the directory of the skill whose folders are held

    def lend(self, directory: str, entries: list[os.DirEntry[str]]) -> None:
        if not (self._skill and directory.startswith(self._skill + os.sep)):
            self._held.clear()
            self._skill = directory
        self._held[directory] = entries

    def leave(self, directory: str, entries: list[os.DirEntry[str]]) -> None:
        self._held[directory] = entries

    def take(self, directory: str) -> list[os.DirEntry[str]] | None:
        return self._held.pop(directory, None)


class PathError(UsageError):
    """A PATH argument that does not exist: a usage error (exit 2)."""


def absolute(path: Path) -> Path:
    # abspath keeps symlink names: the directory a loader sees is the link, not its target
    return Path(os.path.abspath(path))


def _has_skill_md(directory: Path) -> bool:
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    return any(name.lower() == "skill.md" for name in names)


def _is_virtualenv(directory: str, names: set[str]) -> bool:
    return "pyvenv.cfg" in names or (
        "bin" in names and os.path.exists(os.path.join(directory, "bin", "activate"))
    )


class _Ignores:
    """gitignore files found on the way down, plus the config's ``exclude``."""

    def __init__(self, exclude: Any | None, exclude_root: Path | None) -> None:
        self.exclude = exclude
        self.exclude_root = exclude_root
        self.specs: dict[Path, Any] = {}
        # the same specs by their directory's path parts: ``ignored`` looks up the ancestors
        # of a path (a few) instead of trying every .gitignore found so far (hundreds)
        self._by_parts: dict[tuple[str, ...], Any] = {}
        # per spec (by id, kept alive beside it): how often it was asked, and then one regex
        # that finds a path no pattern of the spec matches in one search instead of one
        # search per pattern (see ``_screen``)
        self._screens: dict[int, list[Any]] = {}

    def load_gitignore(self, directory: Path) -> Any | None:
        """Read ``directory``'s .gitignore; its spec, or None when it has none."""
        path = directory / ".gitignore"
        try:
            if not path.is_file():
                return None
            lines = decode_text(path.read_bytes()).splitlines()
        except OSError:
            return None
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        self.specs[directory] = spec
        self._by_parts[_parts_key(directory)] = spec
        self._screens[id(spec)] = [spec, 0, None]
        return spec

    def load_ancestors(self, start: Path) -> None:
        """The .gitignore files between the repository root and ``start``."""
        chain = []
        for directory in [start, *start.parents]:
            chain.append(directory)
            if (directory / ".git").exists():
                break
        else:
            chain = [start]
        for directory in reversed(chain):
            self.load_gitignore(directory)

    def excluded(self, path: Path | str, is_dir: bool) -> bool:
        """Whether the config's ``exclude`` matches ``path``."""
        if self.exclude is None or self.exclude_root is None:
            return False
        rel = os.path.relpath(path, self.exclude_root).replace(os.sep, "/")
        return not rel.startswith("../") and bool(
            self.exclude.match_file(rel + ("/" if is_dir else ""))
        )

    def ignored(self, path: Path, is_dir: bool) -> bool:
        if self.excluded(path, is_dir):
            return True
        if not self._by_parts:
            return False
        # every proper ancestor of ``path`` with a .gitignore, as ``path.relative_to(base)``
        # would find them (its own .gitignore does not apply to the directory itself)
        parts = path.parts
        key = _parts_key(path)
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._by_parts.get(key[:depth])
            if spec is not None and self.matches(spec, "/".join(parts[depth:]), is_dir):
                return True
        return False

    def chain(self, directory: Path) -> list[tuple[int, Any]]:
        """The specs that apply below ``directory`` (its own and its ancestors'), each with
        the length of its directory's path plus a separator: ``sub[length:]`` is the path
        of a descendant ``sub`` relative to it, as ``ignored`` would join it."""
        out = []
        parts = directory.parts
        key = _parts_key(directory)
        for depth in range(len(parts), -1, -1):
            spec = self._by_parts.get(key[:depth])
            if spec is not None:
                out.append((_prefix_length(Path(*parts[:depth])), spec))
        return out

    def matches(self, spec: Any, rel: str, is_dir: bool) -> bool:
        """``spec.match_file`` of ``rel`` (a "/"-joined relative path), screened first."""
        from pathspec.util import normalize_file

        file = rel + ("/" if is_dir else "")
        state = self._screens.get(id(spec))
        if state is not None:
            state[1] += 1
            if state[1] == SCREEN_AFTER:
                state[2] = _screen(spec)
            screen = state[2]
            if screen is not None and screen.search(normalize_file(file)) is None:
                return False  # no pattern matches: the spec neither ignores nor re-includes it
        return bool(spec.match_file(file))


def _prefix_length(directory: Path) -> int:
    text = os.fspath(directory)
    return len(text) if text.endswith(os.sep) else len(text) + len(os.sep)


# compiling the joined patterns costs about a hundred plain matches: a .gitignore asked
# about fewer paths than this (a leaf folder's) is matched pattern by pattern
SCREEN_AFTER = 64
_NAMED_GROUP = LazyPattern(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
_ESCAPE = LazyPattern(r"\\(.)", re.DOTALL)


def _screen(spec: Any) -> re.Pattern[str] | None:
    """One regex that matches a path when any of ``spec``'s patterns does, or None.

    A path none of a spec's patterns matches gets no verdict from it (the last matching
    pattern decides), which is the case for nearly every directory of a tree: one search of
    the alternation answers that instead of one search per pattern. Named groups (pathspec
    marks directory matches with one) become plain groups so the patterns can be joined;
    anything unusual (backreferences, mixed flags, bytes) keeps the plain per-pattern path.
    """
    sources = []
    flags = None
    for pattern in getattr(spec, "patterns", ()):
        regex = getattr(pattern, "regex", None)
        if getattr(pattern, "include", None) is None or regex is None:
            continue  # pathspec skips these patterns too
        source = regex.pattern
        if not isinstance(source, str) or "(?P=" in source:
            return None
        if any(escaped.isdigit() for escaped in _ESCAPE.findall(source)):
            return None  # a numbered backreference: joining renumbers the groups
        if flags is None:
            flags = regex.flags
        elif regex.flags != flags:
            return None
        sources.append("(?:" + _NAMED_GROUP.sub("(?:", source) + ")")
    if not sources:
        return None
    try:
        return re.compile("|".join(sources), flags or 0)
    except re.error:
        return None


def _parts_key(path: Path) -> tuple[str, ...]:
    """``path.parts`` as ``Path`` compares them (case-insensitively on Windows)."""
    return tuple(os.path.normcase(part) for part in path.parts) if os.name == "nt" else path.parts


def discover(
    paths: list[Path],
    *,
    exclude: list[str] | None = None,
    exclude_root: Path | None = None,
    respect_gitignore: bool = True,
    on_skill: Callable[[Path], None] | None = None,
    listings: Listings | None = None,
) -> Discovery:
    """Find the skill directories named by ``paths``; raise PathError for a missing PATH.

    ``on_skill`` is called with each skill directory as it is found (in search order; the
    result lists them sorted), so checking can start before the search ends; if it scans
    the skill, ``listings`` shares the directories' listings with that scan.
    """
    spec = None
    if exclude:
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines(exclude)
    ignores = _Ignores(spec, exclude_root)
    found: dict[Path, None] = {}

    def add(skill: Path) -> None:
        if skill not in found:
            found[skill] = None
            if on_skill is not None:
                on_skill(skill)

    result = Discovery()
    for given in paths:
        path = absolute(given)
        try:
            info = os.stat(path)  # explicit paths may be symlinks: the user chose them
        except FileNotFoundError:
            if os.path.islink(path):
                result.problems.append(Problem(path, "dangling symlink given as PATH"))
                continue
            raise PathError(f"{given}: no such file or directory") from None
        except OSError as exc:
            result.problems.append(Problem(path, f"cannot be read: {exc.strerror or exc}"))
            continue
        if stat.S_ISDIR(info.st_mode):
            if spec is not None and ignores.ignored(path, True):
                continue
            if respect_gitignore:
                ignores.load_ancestors(path)
            before = len(result.problems)
            hits = _search(path, ignores, add, result, respect_gitignore, listings)
            owner = None if hits else _enclosing_skill(path)
            if owner is not None:
                # a folder inside a skill (`my-skill/scripts`) names that skill, as a file does
                if not (spec is not None and ignores.ignored(owner, True)):
                    add(owner)
            elif not hits and len(result.problems) == before:
                # a directory PATH that holds no skill is a wrong path (a CI job pointed at
                # the wrong folder would otherwise pass green): SK100, an error, exit 1
                result.problems.append(
                    Problem(
                        path,
                        "no skill found under this directory (a skill is a directory with a"
                        " SKILL.md); give the path of a skill or of a folder of skills",
                    )
                )
        else:
            owner = _enclosing_skill(path)
            if owner is not None and not (spec is not None and ignores.ignored(owner, True)):
                add(owner)
    result.skills = sorted(found, key=lambda p: p.as_posix())
    return result


def _enclosing_skill(path: Path) -> Path | None:
    """The nearest directory at or above a file's folder that holds a SKILL.md."""
    if path.name.lower() == "skill.md":
        return path.parent
    for directory in path.parents:
        if _has_skill_md(directory):
            return directory
    return None


def _search(
    top: Path,
    ignores: _Ignores,
    add: Callable[[Path], None],
    result: Discovery,
    respect_gitignore: bool,
    listings: Listings | None = None,
) -> int:
    """Search ``top`` for skills; returns how many skill directories it found."""
    hits = 0
    # paths are strings until something is found: a Path per directory costs more than
    # listing it, and a tree of 10,000 skills has 40,000 directories
    # with each directory, the .gitignore specs that apply below it (``_Ignores.chain``):
    # a subfolder is matched against those alone, by its path relative to each
    chain = ignores.chain(top)
    stack: list[tuple[str, int, list[tuple[int, Any]]]] = [(os.fspath(top), 0, chain)]
    top_text = stack[0][0]
    excluding = ignores.exclude is not None and ignores.exclude_root is not None
    while stack:
        directory, depth, chain = stack.pop()
        try:
            shared = None if listings is None else listings.take(directory)
            if shared is not None:
                entries = shared
            else:
                with os.scandir(directory) as it:
                    entries = list(it)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) and directory != top_text:
                continue  # gone since its parent was listed (a temporary folder): nothing here
            result.problems.append(
                Problem(
                    Path(directory),
                    f"directory cannot be read ({exc.strerror or exc}); skills"
                    " in it were not checked",
                )
            )
            continue
        names = {e.name for e in entries}
        if directory != top_text and _is_virtualenv(directory, names):
            continue
        if respect_gitignore and ".gitignore" in names and directory != top_text:
            spec = ignores.load_gitignore(Path(directory))
            if spec is not None:
                chain = [*chain, (_prefix_length(Path(directory)), spec)]
        if "SKILL.md" in names or (
            # the joined names hold "skill.md" whenever one name is a variant of it
            "skill.md" in "/".join(names).lower()
            and any(name.lower() == "skill.md" for name in names)
        ):
            if listings is not None:
                listings.lend(directory, entries)
            add(top if directory == top_text else Path(directory))
            if listings is not None:
                listings.take(directory)  # back, if no scan took it
            hits += 1
        subdirs = []
        for entry in entries:
            if entry.name in DISCOVERY_SKIP_DIRS or is_temp_name(entry.name):
                continue  # a temporary directory of ours (a write under way, or killed) too
            try:
                if not entry.is_dir(follow_symlinks=False):
                    if entry.is_symlink():
                        _skipped_link(entry, directory, top_text, result)
                    continue
            except OSError:
                continue
            sub = entry.path
            if excluding and ignores.excluded(sub, True):
                continue
            if chain and _ignored_by(ignores, chain, sub):
                continue
            if depth + 1 > MAX_DEPTH:
                # an error, not a warning: a skill below the bound is never checked, and a
                # run that found nothing else must not pass
                result.problems.append(
                    Problem(
                        Path(sub),
                        f"deeper than {MAX_DEPTH} directory levels; not searched, so no skill"
                        " in it was checked (lint a deeper PATH)",
                    )
                )
                continue
            subdirs.append((entry.name, sub))
        subdirs.sort(reverse=True)
        stack.extend((sub, depth + 1, chain) for _name, sub in subdirs)
    return hits


def _skipped_link(entry: os.DirEntry[str], directory: str, top: str, result: Discovery) -> None:
    """A symlink to a skill directory is not searched (links are never followed: loops,
    trees outside PATH); say so, so that a skill is never left out silently. A link inside
    a skill is that skill's own file, which its rules judge (SK509, SK502)."""
    if not (os.path.isdir(entry.path) and os.path.isfile(os.path.join(entry.path, "SKILL.md"))):
        return
    parent = directory
    while True:  # rare (a link to a skill): the ancestors up to PATH are looked at
        if os.path.isfile(os.path.join(parent, "SKILL.md")):
            return
        if parent == top or len(parent) <= len(top):
            break
        parent = os.path.dirname(parent)
    result.problems.append(
        Problem(
            Path(entry.path),
            f"symlink to a skill directory ({os.readlink(entry.path)}); the search does not"
            " follow directory links, so it was not checked: pass it as PATH to check it",
            warning=True,
        )
    )


def _ignored_by(ignores: _Ignores, chain: list[tuple[int, Any]], sub: str) -> bool:
    """Whether a .gitignore of ``chain`` ignores the directory ``sub``."""
    for length, spec in chain:
        rel = sub[length:]
        if os.sep != "/":
            rel = rel.replace(os.sep, "/")
        if ignores.matches(spec, rel, True):
            return True
    return False
