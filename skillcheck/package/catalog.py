"""Catalog manifest: which files a skill ships, their digests, and the renderings.

The manifest is skillcheck's own document, identified by ``MANIFEST_SCHEMA``:
per skill its frontmatter fields, tokens and every file with size, mode and digest. It is
not the Agent Skills Discovery RFC's index: ``pack --well-known`` writes that
(``skillcheck.package.wellknown``), with this manifest beside it.
It is built on the loaded ``Skill`` model; nothing here re-walks a skill directory.

Every read of a skill file goes through ``read_shipped``, which opens the file relative to
the skill root one path component at a time without following links, so a file swapped for
a symlink after the walk cannot make us read outside the skill.
"""

from __future__ import annotations

import dataclasses
import errno
import functools
import hashlib
import html
import itertools
import os
import posixpath
import re
import stat
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from skillcheck.analysis.figures import count_lines, skill_figures
from skillcheck.analysis.links import skill_md_link_uses
from skillcheck.analysis.tools import split_tools
from skillcheck.engine.runner import Extra
from skillcheck.errors import RefusedContent
from skillcheck.settings import Settings
from skillcheck.source.jsontext import dumps_indented
from skillcheck.source.junk import (
    ARCHIVE_SUFFIXES,
    BYTECODE_SUFFIXES,
    EGG_INFO,
    ENV_PREFIX,
    JUNK_DIRS,
    JUNK_FILES,
    OPAQUE_DIRS,
    ROOT_JUNK_DIRS,
    marked_junk_dirs,
)
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import MAX_FILE_READ, MAX_READ, read_fd
from skillcheck.source.skill import Figures, Memo, Skill, SkillFile
from skillcheck.source.text import decode_text

# identifies our manifest (catalog output, manifest.json of bundles and well-known dirs)
MANIFEST_SCHEMA = "https://skillcheck.dev/schemas/manifest/1.0.0/schema.json"
SKILL_FILE = "SKILL.md"
SKILLIGNORE = ".skillignore"

MAX_FILE_BYTES = 256 * 1024 * 1024  # a single shipped file larger than this is refused
MAX_SKILLIGNORE_BYTES = 1024 * 1024

# Never shipped (gitignore syntax, relative to the skill root). A `.skillignore` is applied
# after these, so a `!pattern` there can re-include a file (not a file under an excluded
# directory: as in git, a file cannot be re-included if a parent directory is excluded).
DEFAULT_EXCLUDES: tuple[str, ...] = (
    *(f"{name}/" for name in JUNK_DIRS),  # version control, caches, dependencies, virtualenvs
    *JUNK_FILES,  # OS junk
    *(f"*{suffix}" for suffix in BYTECODE_SUFFIXES),
    f"{ENV_PREFIX}*",  # secrets
    *(f"/{name}/" for name in ROOT_JUNK_DIRS),  # build output
    f"*{EGG_INFO}/",
    *(f"*{suffix}" for suffix in ARCHIVE_SUFFIXES),  # nested archives
    "/.skillignore",  # packaging metadata of the skill itself
)
# (any directory holding a pyvenv.cfg, and Cargo's target/, are excluded too: ``_ignore_spec``)

_NAME_RE = LazyPattern(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # the RFC's {skill-name} rule
_RFC_PATH_FORBIDDEN = set("\\?#[]")


class CatalogError(RefusedContent):
    """A skill cannot be catalogued or shipped. The message is one line and names the file."""


class VanishedError(CatalogError):
    """A file the walk listed is gone (the skill is being edited)."""


class ChangedError(CatalogError):
    """A file's bytes are not those lint checked (the skill is being edited)."""


# --- digests ----------------------------------------------------------------------------


def file_digest(data: bytes) -> str:
    """``sha256:{hex}`` of a file's raw bytes."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_digest(files: Iterable[tuple[str, str]]) -> str:
    """Our manifest's skill-level digest of ``(path, digest)`` pairs (from a superseded
    draft of the discovery RFC; the merged RFC digests the artifact's bytes instead).

    SHA-256 over the lines ``{path}\\0{hex}\\n`` sorted by path in byte order, where hex is
    the file digest without its ``sha256:`` prefix (both forms are accepted here).
    """
    lines = []
    for path, digest in files:
        hex_ = digest.removeprefix("sha256:")
        lines.append(path.encode("utf-8") + b"\0" + hex_.encode("ascii") + b"\n")
    lines.sort()  # byte order of the path: the NUL separator sorts before every path byte
    return "sha256:" + hashlib.sha256(b"".join(lines)).hexdigest()


# --- path rules ----------------------------------------------------------------------------


def show(text: str, limit: int = 120) -> str:
    """Quote a name from a skill or bundle for a one-line message, escaping anything
    (control, format, separator characters) that could break a terminal or a log line."""
    out = []
    for ch in text[:limit]:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") or ch in "\\'":
            out.append(ch.encode("unicode_escape", "backslashreplace").decode("ascii"))
        else:
            out.append(ch)
    return "'" + "".join(out) + ("…" if len(text) > limit else "") + "'"


def path_problem(rel: str) -> str | None:
    """Why ``rel`` is not a safe relative POSIX path for any layout, or None."""
    if not rel:
        return "empty path"
    if not (rel.isascii() and rel.isprintable()):  # else neither check below can fail
        if any(0xD800 <= ord(ch) <= 0xDFFF for ch in rel):
            return "file name is not valid UTF-8"
        if any(unicodedata.category(ch) == "Cc" for ch in rel):
            return "control character in file name"
    if "\\" in rel:
        return "backslash in path"
    if rel.startswith("/") or re.match(r"^[A-Za-z]:", rel):
        return "absolute path"
    for part in rel.split("/"):
        if part in ("", ".", ".."):
            return "'..', '.' or empty path segment"
        if len(part.encode("utf-8")) > 255:
            return "path segment longer than 255 bytes"
    if len(rel.encode("utf-8")) > 1024:
        return "path longer than 1024 bytes"
    return None


def rfc_path_problem(rel: str) -> str | None:
    """Why ``rel`` breaks the RFC's files-array rules (printable ASCII without \\ ? # [ ])."""
    problem = path_problem(rel)
    if problem:
        return problem
    for ch in rel:
        if not 0x20 <= ord(ch) <= 0x7E or ch in _RFC_PATH_FORBIDDEN:
            return (
                f"character {show(ch)} not allowed by the discovery RFC "
                "(printable ASCII without \\ ? # [ ])"
            )
    return None


def collision_key(rel: str) -> str:
    """Names that one filesystem or another would treat as the same file."""
    return unicodedata.normalize("NFC", rel).casefold()


# --- which files a skill ships ---------------------------------------------------------------


def open_in_root(root: Path, rel: str) -> int:
    """Open ``root/rel`` for reading without following any link under ``root``.

    Each component is opened relative to its parent's descriptor with O_NOFOLLOW, so a
    component swapped for a symlink fails instead of leading outside the skill; O_NONBLOCK
    keeps a FIFO from blocking the open. Returns a descriptor on a regular file.
    """
    return _open_regular_in_root(root, rel)[0]


def _open_regular_in_root(root: Path, rel: str) -> tuple[int, int]:
    """``open_in_root``, with the file's size as fstat gave it."""
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    cloexec = getattr(os, "O_CLOEXEC", 0)
    parts = rel.split("/")
    try:
        if nofollow and os.open in os.supports_dir_fd:
            dir_flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | cloexec
            fd = os.open(root, dir_flags)
            try:
                for part in parts[:-1]:
                    child = os.open(part, dir_flags | nofollow, dir_fd=fd)
                    os.close(fd)
                    fd = child
                ffd = os.open(
                    parts[-1],
                    os.O_RDONLY | nofollow | getattr(os, "O_NONBLOCK", 0) | cloexec,
                    dir_fd=fd,
                )
            finally:
                os.close(fd)
        else:  # pragma: no cover - platforms without dir_fd (Windows): check each component
            current = root
            for part in parts:
                current = current / part
                if stat.S_ISLNK(os.lstat(current).st_mode):
                    raise CatalogError(f"{current}: is a symbolic link")
            ffd = os.open(current, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        # listed by the walk, gone now: the skill is being edited; never pack half of it
        raise VanishedError(
            f"{root / rel}: vanished after it was listed: the skill changed since the manifest"
            " was built; run again once it is stable"
        ) from None
    except OSError as exc:
        raise CatalogError(f"{root / rel}: cannot open: {exc.strerror or exc}") from None
    st = os.fstat(ffd)
    if not stat.S_ISREG(st.st_mode):
        os.close(ffd)
        raise CatalogError(f"{root / rel}: not a regular file")
    return ffd, st.st_size


def read_in_root(root: Path, rel: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``root/rel``, read without following links (see ``open_in_root``)."""
    fd, size = _open_regular_in_root(root, rel)
    try:
        data = read_fd(fd, size, limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise CatalogError(f"{root / rel}: larger than {limit} bytes")
    return data


# a shipped file's bytes, when they are lint's own copy (per file), and the shipped list
_SHIPPED: Memo[bytes] = Memo("shipped")
_SHIPPED_FILES: Memo[tuple[SkillFile, ...]] = Memo("shipped-files")
_READ_BOUND = min(MAX_READ, MAX_FILE_READ)  # lint reads no more of a file than this
_LISTED_SIZES: Memo[dict[str, int]] = Memo("listed-sizes")  # rel -> size, as lint listed it


def read_shipped(skill: Skill, sf: SkillFile) -> bytes:
    """The content a shipped file contributes (for an in-skill symlink: its target's).

    Always read with ``read_in_root``. When lint already holds the very same bytes (SKILL.md's
    document, ``load.read_file``'s cache), they are kept for the rest of the run at no memory
    cost, so pack takes the bundle's member from the read the manifest's digest came from
    instead of reading the file a third time. Bytes lint does not hold are never kept: a
    catalog of many skills must not hold every file in memory.
    """
    rel = sf.link_target or sf.rel
    held = skill.memos.get(_SHIPPED, rel)
    if held is not None:
        return held
    data = read_in_root(skill.root, rel)
    copies = list(_lint_copies(skill, sf, rel))
    for copy in copies:
        if copy == data:
            return skill.memos.put(_SHIPPED, copy, rel)
        if len(copy) >= _READ_BOUND and len(data) > len(copy) and data.startswith(copy):
            return data  # larger than lint reads (SK6xx says so): the part it read is this
    # the verdict is about exactly what is shipped: bytes other than those the rules judged
    # (or, for a file no rule read, of another size than the listing they saw) are refused
    sizes = skill.memos.get_or_make(_LISTED_SIZES, lambda: {f.rel: f.size for f in skill.files})
    if copies or sizes.get(rel, len(data)) != len(data):
        raise ChangedError(
            f"{skill.root / rel}: changed while it was being checked; run again once the"
            " skill is stable"
        )
    return data


def _lint_copies(skill: Skill, sf: SkillFile, rel: str) -> Iterator[bytes]:
    """Bytes lint read of ``sf`` (or of its link target), if any: candidates to share."""
    for key in (sf.rel, rel):
        copy = skill.contents.get(key)
        if copy is not None:
            yield copy
    if SKILL_FILE in (sf.rel, rel) and skill.doc is not None:
        yield skill.doc.raw


# named groups cannot repeat in one regex: they become plain groups in the union below
_NAMED_GROUP = "(?P<{}>"
_UNION_MAX = 1000


@functools.lru_cache(maxsize=16)
def _compile_excludes(lines: tuple[str, ...]) -> tuple[Any, re.Pattern[str] | None]:
    """The gitignore spec of ``lines`` and a regex matching a path iff any of its patterns
    does (None when the patterns cannot be united). Cached: almost every skill has the same
    lines (DEFAULT_EXCLUDES alone), and compiling them costs far more than matching."""
    import pathspec  # lazy: only catalog and pack need it

    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    sources = []
    for pattern in spec.patterns:
        if pattern.include is None:  # a blank line or a comment: matches nothing
            continue
        regex = getattr(pattern, "regex", None)
        if not isinstance(regex, re.Pattern) or not isinstance(regex.pattern, str):
            return spec, None
        if regex.flags != re.UNICODE:
            return spec, None
        source = regex.pattern
        for name in regex.groupindex:
            marker = _NAMED_GROUP.format(name)
            if source.count(marker) != 1:  # the marker also inside a character class?
                return spec, None
            source = source.replace(marker, "(?:")
        sources.append(f"(?:{source})")
    if len(sources) > _UNION_MAX:  # a huge .skillignore: uniting would cost more than it saves
        return spec, None
    try:
        union = re.compile("|".join(sources) or "(?!)")
    except re.error:
        return spec, None
    return spec, union


class _Excludes:
    """DEFAULT_EXCLUDES and the skill's .skillignore, as git reads them.

    A path no pattern matches is not excluded, whichever way the patterns say it: one search
    of the united regex settles the common case; a path some pattern matches goes to
    pathspec for the last-match-wins and negation rules. Directories are looked up once.
    """

    def __init__(self, spec: Any, union: re.Pattern[str] | None) -> None:
        from pathspec.util import normalize_file

        self.spec = spec
        self.union = union
        self.normalize = normalize_file
        self.seen: dict[str, bool] = {}

    def _match(self, path: str) -> bool:
        hit = self.seen.get(path)
        if hit is None:
            if self.union is not None and self.union.search(self.normalize(path)) is None:
                hit = False
            else:
                hit = bool(self.spec.match_file(path))
            self.seen[path] = hit
        return hit

    def excluded(self, rel: str, is_dir: bool = False) -> bool:
        # as in git, a path under an excluded directory stays excluded whatever a later `!`
        # says
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if self._match("/".join(parts[:i]) + "/"):
                return True
        return self._match(rel + ("/" if is_dir else ""))


def _ignore_spec(skill: Skill) -> _Excludes:
    lines = list(DEFAULT_EXCLUDES)
    # a directory holding a pyvenv.cfg is a virtualenv, whatever its name; Cargo's target/
    for parent in marked_junk_dirs([f.rel for f in skill.files]):
        lines.append("/" + _escape_glob(parent) + "/")
    ignore = next((f for f in skill.files if f.rel == SKILLIGNORE and f.kind == "file"), None)
    if ignore is not None:
        raw = read_in_root(skill.root, SKILLIGNORE, MAX_SKILLIGNORE_BYTES)
        lines.extend(decode_text(raw).splitlines())
    try:
        return _Excludes(*_compile_excludes(tuple(lines)))
    except Exception as exc:  # pathspec raises several types for a malformed pattern
        raise CatalogError(f"{skill.root / SKILLIGNORE}: invalid pattern: {exc}") from None


def _escape_glob(text: str) -> str:
    return re.sub(r"([\\*?\[\]!#])", r"\\\1", text)


def _is_excluded(spec: _Excludes, rel: str, is_dir: bool = False) -> bool:
    return spec.excluded(rel, is_dir)


_KIND_WORDS = {
    "fifo": "a FIFO",
    "socket": "a socket",
    "device": "a device file",
    "other": "a special file",
}


def shipped_files(skill: Skill) -> list[SkillFile]:
    """The files a bundle of ``skill`` contains, sorted by path (byte order).

    Applies ``DEFAULT_EXCLUDES`` and the skill's ``.skillignore``. A symlink whose target
    is a regular, shipped file inside the skill is returned as a ``file`` entry whose
    ``link_target`` is the target's path relative to the skill root (its content is the
    target's). Raises ``CatalogError`` for anything that cannot be shipped safely: a symlink
    that escapes the skill, dangles, loops or points at a directory or an excluded file;
    a FIFO, socket or device; an unreadable directory; a file name that is not UTF-8 or has
    control characters; two names that collide on a case-insensitive or normalizing
    filesystem.
    """

    # catalog and pack both ask: work it out once per skill and run (a copy each time, so a
    # caller may change its list)
    cached = skill.memos.get(_SHIPPED_FILES)
    if cached is not None:
        return list(cached)
    spec = _ignore_spec(skill)
    real_root: str | None = None  # resolved when a symlink needs it: most skills have none
    for path, reason in skill.walk_errors:
        rel = _rel_to_root(skill, path)
        if rel is None or not _is_excluded(spec, rel, is_dir=True):
            raise CatalogError(f"{path}: {reason}")
    shipped: list[SkillFile] = []
    seen: dict[str, str] = {}
    for f in sorted(skill.files, key=lambda f: f.rel.encode("utf-8", "surrogatepass")):
        if _is_excluded(spec, f.rel, is_dir=f.kind == "dir"):
            continue
        if f.kind == "dir":
            if posixpath.basename(f.rel) in OPAQUE_DIRS:  # re-included by a `!` pattern
                raise CatalogError(f"{f.path}: directory was not walked; it cannot be shipped")
            continue
        problem = path_problem(f.rel)
        if problem:
            raise CatalogError(f"{f.path}: {problem}")
        if f.kind == "file":
            item = f
        elif f.kind == "symlink":
            if real_root is None:
                real_root = os.path.realpath(skill.root)
            item = _resolve_link(skill, f, real_root, spec)
        else:
            raise CatalogError(
                f"{f.path}: is {_KIND_WORDS.get(f.kind, 'a special file')}; "
                "only regular files can be shipped (remove it or list it in .skillignore)"
            )
        key = collision_key(f.rel)
        if key in seen:
            raise CatalogError(
                f"{f.path}: name collides with {show(seen[key])} on case-insensitive or "
                "normalizing filesystems"
            )
        seen[key] = f.rel
        shipped.append(item)
    # a file and a directory whose names collide ("a" and "A/b") cannot both be unpacked
    for sf in shipped:
        parts = sf.rel.split("/")
        for i in range(1, len(parts)):
            prefix = collision_key("/".join(parts[:i]))
            if prefix in seen:
                raise CatalogError(
                    f"{sf.path}: directory name collides with file {show(seen[prefix])}"
                )
    skill.memos.put(_SHIPPED_FILES, tuple(shipped))
    return shipped


def _rel_to_root(skill: Skill, path: Path) -> str | None:
    try:
        return Path(path).relative_to(skill.root).as_posix()
    except ValueError:
        return None


def _resolve_link(skill: Skill, f: SkillFile, real_root: str, spec: _Excludes) -> SkillFile:
    where = f"{f.path}: symlink to {show(f.link_target or '?')}"
    target = os.path.realpath(f.path)
    if os.path.commonpath([real_root, target]) != real_root or target == real_root:
        raise CatalogError(f"{where} leaves the skill directory; it cannot be shipped")
    try:
        st = os.stat(target)
    except OSError as exc:
        reason = "is a symlink loop" if exc.errno == errno.ELOOP else "dangles"
        raise CatalogError(f"{where} {reason}") from None
    if stat.S_ISDIR(st.st_mode):
        raise CatalogError(
            f"{where} points at a directory; only links to files are shipped "
            "(replace the link with the directory)"
        )
    if not stat.S_ISREG(st.st_mode):
        raise CatalogError(f"{where} points at a special file")
    target_rel = Path(os.path.relpath(target, real_root)).as_posix()
    if _is_excluded(spec, target_rel):
        raise CatalogError(f"{where} points at an excluded file; it would ship its content")
    return SkillFile(
        path=f.path,
        rel=f.rel,
        kind="file",
        size=st.st_size,
        mode=st.st_mode,
        link_target=target_rel,
    )


# --- the manifest ----------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    """A frontmatter value as JSON (dates and other YAML types become strings)."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return (
            value if value == value and value not in (float("inf"), float("-inf")) else str(value)
        )
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return [_jsonable(v) for v in items]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def split_allowed_tools(value: Any) -> list[str] | None:
    """``allowed-tools`` as a list: a space/comma-separated string (commas and spaces
    inside parentheses, as in ``Bash(git log:*)``, do not split) or a YAML list."""
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    if not isinstance(value, str):
        return None
    return split_tools(value)


def skill_references(skill: Skill, shipped: Iterable[str]) -> list[str]:
    """Shipped files the SKILL.md body links to (links, images, definitions, HTML), sorted.

    The links are the references rules' reading of the body, shared with lint (read with
    the cheap exact scan when it can, else parsed).
    """

    names = set(shipped) - {SKILL_FILE}
    refs = set()
    for use in skill_md_link_uses(skill):
        if use.res is None:  # a same-file `#anchor`
            continue
        # as written (a link to an in-skill symlink names the link), else where it resolves
        for candidate in (posixpath.normpath(use.path), use.res.rel):
            if candidate in names:
                refs.add(candidate)
                break
    return sorted(refs, key=lambda r: r.encode("utf-8"))


def skill_entry(
    skill: Skill,
    root: Path,
    *,
    tokenizer: str | None = None,
    figures: Figures | None = None,
) -> dict[str, Any]:
    """One skill's manifest entry (see ``build_manifest``)."""
    # the figures lint reports (and its budget rules check), counted once per skill

    where = skill.display_root
    name = skill.name
    if not name:
        raise CatalogError(f"{where}: SKILL.md has no string `name`; it cannot be catalogued")
    if len(name) > 64 or not _NAME_RE.match(name):
        raise CatalogError(
            f"{where}: name {show(name)} is not a valid discovery-index name "
            "(1-64 lowercase ASCII letters, digits and single hyphens)"
        )
    description = (skill.description or "").strip()
    if not description:
        raise CatalogError(f"{where}: SKILL.md has no non-empty string `description`")
    if len(description) > 1024:
        raise CatalogError(f"{where}: description is longer than 1024 characters")
    files = shipped_files(skill)
    rels = [f.rel for f in files]
    if SKILL_FILE not in rels:
        raise CatalogError(f"{where}: SKILL.md is not shipped (excluded or not a file)")
    refs = skill_references(skill, rels)
    file_entries: list[dict[str, Any]] = []
    for f in files:
        try:
            data = read_shipped(skill, f)
        except VanishedError:
            if f.rel == SKILL_FILE:
                raise
            continue  # gone since the walk (an editor's temp file): not part of the skill now
        file_entries.append(
            {
                "path": f.rel,
                "digest": file_digest(data),
                "size": len(data),
                "executable": bool(f.mode & 0o111),
            }
        )
    # SKILL.md first (RFC "SHOULD be first"), the rest in byte order
    file_entries.sort(key=lambda e: (e["path"] != SKILL_FILE, e["path"].encode("utf-8")))
    entry: dict[str, Any] = {
        "name": name,
        "description": description,
        "digest": skill_digest((e["path"], e["digest"]) for e in file_entries),
        "files": file_entries,
    }
    values = skill.doc.frontmatter.values if skill.doc and skill.doc.frontmatter else {}
    for key in ("license", "compatibility"):
        if values.get(key) is not None:
            entry[key] = _jsonable(values[key])
    if isinstance(values.get("metadata"), dict):
        entry["metadata"] = _jsonable(values["metadata"])
    tools = split_allowed_tools(values.get("allowed-tools"))
    if tools is not None:
        entry["allowed_tools"] = tools
    entry["path"] = entry_path(skill.root, root)
    if tokenizer is not None:
        if figures is None:
            counted = skill_figures(skill, tokenizer)
            figures = Figures(
                counted.catalog_tokens,
                counted.body_tokens,
                counted.reference_tokens,
                counted.body_lines,
                counted.largest_reference,
            )
        entry["tokens"] = {
            "catalog": figures.catalog or 0,
            "body": figures.body,
            "references": figures.references,
        }
    doc = skill.doc
    entry["lines"] = count_lines(doc.lines[doc.body_line - 1 :]) if doc else 0
    entry["references"] = refs
    return entry


def entry_path(skill_root: Path, root: Path) -> str:
    """A manifest entry's ``path``: the skill's directory relative to ``root``."""
    return Path(os.path.relpath(os.path.abspath(skill_root), os.path.abspath(root))).as_posix()


# the name pack's per-skill record is cached under (runner.Extra): a new layout, a new name
PACK_RECORD = "pack-record/1"


def pack_record(skill: Skill, summary: Any, *, tokenizer: str) -> dict[str, Any]:
    """What pack needs of one skill, derived where lint checks it and cached with its result,
    so a pack of unchanged skills loads none of them again: its manifest entry (``path`` is
    the caller's to set, it depends on the command line) and the in-skill files its shipped
    symlinks are read from; or the error that keeps it out of a catalog, raised by
    ``manifest_of_records`` in the order ``build_manifest`` would raise it."""
    try:
        return _entry_and_links(skill, summary, tokenizer)
    except CatalogError as exc:
        return {"error": str(exc), "vanished": isinstance(exc, VanishedError)}


def _entry_and_links(skill: Skill, summary: Any, tokenizer: str) -> dict[str, Any]:
    entry = skill_entry(skill, skill.root, tokenizer=tokenizer, figures=summary.figures)
    links = {sf.rel: sf.link_target for sf in shipped_files(skill) if sf.link_target}
    return {"entry": entry, "links": links}


def cacheable_pack_record(skill: Skill, summary: Any, *, tokenizer: str) -> dict[str, Any] | None:
    """``pack_record`` for a lint run that caches it beside its result, so a later pack or
    catalog of the same unchanged skills reuses it: None (derived again by that pack) for
    anything that depends on the moment rather than on the files (one changed, vanished or
    could not be read while lint read it), and never an error of lint's own."""
    try:
        if any(sf.size > _READ_BOUND for sf in shipped_files(skill)):
            return None  # lint reads no more of a file than this: pack reads it whole
        return _entry_and_links(skill, summary, tokenizer)
    except (VanishedError, ChangedError, OSError, ValueError):
        return None
    except CatalogError as exc:
        return {"error": str(exc), "vanished": False}


def reusable(settings: Settings, paths: Iterable[Path]) -> tuple[Settings, Extra | None]:
    """``settings`` and the Extra for a lint run whose cache entries a later ``pack`` or
    ``catalog`` of the same unchanged skills, with the same configuration, takes as they are:
    with the result cache on, each skill's token figures and pack record are computed where
    it is checked and cached with its result (a run without the cache gains nothing). Only
    for directory PATHs, the form pack takes: a pre-commit run over files stays lean (no
    ignore matcher, no Markdown parse of a clean SKILL.md)."""
    if settings.cache_dir is None or not all(os.path.isdir(p) for p in paths):
        return settings, None
    tokenizer = settings.options.get("tokenizer", "estimate")
    derive = functools.partial(cacheable_pack_record, tokenizer=tokenizer)
    # lint never reads the value back (pack checks what it takes from the cache)
    return dataclasses.replace(settings, figures=True), Extra(PACK_RECORD, derive, needed=False)


def manifest_of_records(
    records: Iterable[tuple[Path, dict[str, Any]]], root: Path, *, generator: str
) -> dict[str, Any]:
    """The manifest of ``(skill root, pack_record)`` pairs in discovery order, as
    ``build_manifest`` builds it from the loaded skills."""
    entries = []
    for skill_root, record in records:
        if "error" in record:
            raise (VanishedError if record.get("vanished") else CatalogError)(record["error"])
        entry = dict(record["entry"])  # the key order is the manifest's: path stays in place
        entry["path"] = entry_path(skill_root, root)
        entries.append(entry)
    return manifest_of(entries, generator)


def manifest_of(entries: list[dict[str, Any]], generator: str) -> dict[str, Any]:
    """The manifest around skill entries: sorted by name, names unique."""
    entries.sort(key=lambda e: e["name"])
    for a, b in itertools.pairwise(entries):
        if a["name"] == b["name"]:
            raise CatalogError(
                f"two skills are named {show(a['name'])} ({a['path']} and {b['path']}); "
                "a catalog needs unique names"
            )
    return {"$schema": MANIFEST_SCHEMA, "generator": generator, "skills": entries}


def build_manifest(
    skills: list[Skill],
    root: Path,
    *,
    tokenizer: str | None = None,
    generator: str,
    figures: Mapping[Path, Figures | None] | None = None,
) -> dict[str, Any]:
    """The catalog manifest of ``skills``, our own document (not the RFC index).

    ``root`` is the directory each skill's ``path`` is relative to; ``generator`` is
    ``"skillcheck X.Y.Z"``; ``tokenizer`` is a tokenizer spec (``"estimate"``,
    ``"tiktoken:cl100k_base"``) that adds the ``tokens`` object (catalog, body and reference
    tiers exactly as lint's budget rules count them), omitted when None. ``lines`` is the
    body's line count as the line budget counts it. ``references`` lists the shipped files
    the body links to.
    ``figures`` gives each skill's token figures by root when lint counted them already (in
    a worker process), with the same tokenizer.
    Skills are sorted by name; two skills with one name raise ``CatalogError``.
    """
    known = figures or {}
    entries = [skill_entry(s, root, tokenizer=tokenizer, figures=known.get(s.root)) for s in skills]
    return manifest_of(entries, generator)


def dumps_manifest(manifest: dict[str, Any]) -> bytes:
    """The manifest's canonical bytes: key order as built, 2-space indent, UTF-8, ``\\n``,
    a trailing newline. The same manifest always gives the same bytes."""
    # json.dumps(indent=2, ensure_ascii=False) at C speed (its indenting encoder is pure
    # Python: a fifth of a warm pack); a NaN, which _jsonable never leaves, fails
    # parse_manifest instead of this call
    return (dumps_indented(manifest) + "\n").encode("utf-8")


# --- renderings ----------------------------------------------------------------------------


_CONTROLS = LazyPattern(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _no_controls(text: str) -> str:
    return _CONTROLS.sub("\ufffd", text)


def render_xml_entries(entries: Iterable[tuple[str, str, str]]) -> str:
    """The ``<available_skills>`` block for ``(name, description, location)`` triples,
    line for line as skills-ref's ``to_prompt`` writes it (name and description escaped
    with ``html.escape``, the location not; no trailing newline). One departure: control
    characters other than tab and line breaks (a terminal escape, invalid in XML anyway)
    become U+FFFD."""
    lines = ["<available_skills>"]
    for name, description, location in entries:
        lines += [
            "<skill>",
            "<name>",
            _no_controls(html.escape(name)),
            "</name>",
            "<description>",
            _no_controls(html.escape(description)),
            "</description>",
            "<location>",
            _no_controls(location),
            "</location>",
            "</skill>",
        ]
    lines.append("</available_skills>")
    return "\n".join(lines)


def skill_md_location(skill_root: Path) -> str:
    """Where skills-ref says a skill's SKILL.md is: the resolved directory joined with
    ``SKILL.md`` if that exists, else ``skill.md``."""
    resolved = Path(skill_root).resolve()
    for name in (SKILL_FILE, "skill.md"):
        if (resolved / name).exists():
            return str(resolved / name)
    raise CatalogError(f"{skill_root}: no SKILL.md")


def render_xml(skills: list[Skill]) -> str:
    """``skills-ref to-prompt`` for ``skills`` in the order given: the exact string its
    ``to_prompt`` returns (the CLI prints it followed by one newline, as click.echo does)."""
    entries = []
    for skill in skills:
        if not skill.name or not (skill.description or "").strip():
            raise CatalogError(f"{skill.display_root}: no string `name` and `description`")
        entries.append(
            (skill.name, (skill.description or "").strip(), skill_md_location(skill.root))
        )
    return render_xml_entries(entries)


def render_markdown(manifest: dict[str, Any]) -> str:
    """A ``- name: description`` line per skill (whitespace runs folded so that a
    multi-line description stays one list item), with a trailing newline."""
    lines = []
    for entry in manifest.get("skills", []):
        description = " ".join(str(entry.get("description", "")).split())
        # no control character (a terminal escape) survives into the listing
        description = "".join(
            "\ufffd" if unicodedata.category(ch) == "Cc" else ch for ch in description
        )
        lines.append(f"- {entry['name']}: {description}")
    return "".join(line + "\n" for line in lines)
