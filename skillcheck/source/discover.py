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
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck.errors import UsageError
from skillcheck.source.junk import DISCOVERY_SKIP_DIRS
from skillcheck.source.text import decode_text

MAX_DEPTH = 24


@dataclass
class Problem:
    """Something the search could not look at; reported as SK100."""

    path: Path
    message: str
    warning: bool = False


@dataclass
class Discovery:
    skills: list[Path] = field(default_factory=list)  # absolute, links not resolved
    problems: list[Problem] = field(default_factory=list)


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

    def load_gitignore(self, directory: Path) -> None:
        path = directory / ".gitignore"
        try:
            if not path.is_file():
                return
            lines = decode_text(path.read_bytes()).splitlines()
        except OSError:
            return
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        self.specs[directory] = spec
        self._by_parts[_parts_key(directory)] = spec

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

    def active(self) -> bool:
        """Whether any pattern can exclude anything (else ``ignored`` is always False)."""
        return bool(self.specs) or (self.exclude is not None and self.exclude_root is not None)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        if self.exclude is not None and self.exclude_root is not None:
            rel = os.path.relpath(path, self.exclude_root).replace(os.sep, "/")
            if not rel.startswith("../") and self.exclude.match_file(rel + ("/" if is_dir else "")):
                return True
        if not self._by_parts:
            return False
        # every proper ancestor of ``path`` with a .gitignore, as ``path.relative_to(base)``
        # would find them (its own .gitignore does not apply to the directory itself)
        parts = path.parts
        key = _parts_key(path)
        for depth in range(len(parts) - 1, -1, -1):
            spec = self._by_parts.get(key[:depth])
            if spec is not None and spec.match_file(
                "/".join(parts[depth:]) + ("/" if is_dir else "")
            ):
                return True
        return False


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
) -> Discovery:
    """Find the skill directories named by ``paths``; raise PathError for a missing PATH.

    ``on_skill`` is called with each skill directory as it is found (in search order; the
    result lists them sorted), so checking can start before the search ends.
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
            hits = _search(path, ignores, add, result, respect_gitignore)
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
) -> int:
    """Search ``top`` for skills; returns how many skill directories it found."""
    hits = 0
    # paths are strings until something is found: a Path per directory costs more than
    # listing it, and a tree of 10,000 skills has 40,000 directories
    stack: list[tuple[str, int]] = [(os.fspath(top), 0)]
    top_text = stack[0][0]
    while stack:
        directory, depth = stack.pop()
        try:
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
            ignores.load_gitignore(Path(directory))
        if "SKILL.md" in names or any(name.lower() == "skill.md" for name in names):
            add(top if directory == top_text else Path(directory))
            hits += 1
        filtering = ignores.active()
        subdirs = []
        for entry in entries:
            if entry.name in DISCOVERY_SKIP_DIRS:
                continue
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
            except OSError:
                continue
            sub = entry.path
            if filtering and ignores.ignored(Path(sub), True):
                continue
            if depth + 1 > MAX_DEPTH:
                result.problems.append(
                    Problem(
                        Path(sub),
                        f"deeper than {MAX_DEPTH} directory levels; not searched",
                        warning=True,
                    )
                )
                continue
            subdirs.append((entry.name, sub))
        subdirs.sort(reverse=True)
        stack.extend((sub, depth + 1) for _name, sub in subdirs)
    return hits
