"""Skill directory -> Skill: read SKILL.md safely and list what the directory holds.

Nothing here follows a link out of the skill or opens anything but a regular file: a FIFO
named SKILL.md would block ``open`` forever, and a symlink could point at ``/etc/passwd``.
"""

from __future__ import annotations

import errno
import os
import stat
from operator import attrgetter
from pathlib import Path

from skillcheck.source.discover import Listings
from skillcheck.source.frontmatter import parse_document
from skillcheck.source.junk import OPAQUE_DIRS
from skillcheck.source.skill import FileKind, Memo, Skill, SkillFile
from skillcheck.source.text import decode_text, is_binary

MAX_READ = 8 * 1024 * 1024  # bytes of SKILL.md read at most

SKILL_MD = "SKILL.md"
MAX_WALK_DEPTH = 32
MAX_WALK_ENTRIES = 20_000


def kind_of(mode: int) -> FileKind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "other"


def is_within(path: Path, root: Path) -> bool:
    """Whether ``path`` (resolved) lies inside ``root`` (resolved)."""
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def link_readable(resolved: Path, real_root: Path, trees: tuple[str, ...]) -> bool:
    """Whether a SKILL.md linked to ``resolved`` is read: the file lies in its skill
    (``real_root``, resolved) or in one of the linted ``trees``, as runtimes follow the link;
    a link to anywhere else is never opened."""
    return is_within(resolved, real_root) or any(is_within(resolved, Path(t)) for t in trees)


# what a read asks for when the size is unknown or was passed: under malloc's mmap
# threshold (128 kB), see read_fd
_READ_CHUNK = 1 << 16


def read_fd(fd: int, size: int, most: int) -> bytes:
    """The bytes of an open file, at most ``most``; ``size`` is what fstat said (0: unknown,
    as /proc files say).

    Each read asks for the bytes still expected, and a file read to its fstat size is not
    read again just to meet its end. os.read allocates what it is asked for: a 1 MB request
    for a 3 kB file is a buffer mapped and unmapped by malloc every time, 18 us against 5
    for the exact size (measured on 5,000 skill files), a cost paid on every file lint reads.
    """
    chunks = []
    got = 0
    while got < most:
        chunk = os.read(fd, min(size - got if size > got else _READ_CHUNK, most - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
        if 0 < size <= got:
            break  # all of it (a file that grew since is read as it was when sized)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


# every open of a path skillcheck did not create: a FIFO must not block the open (O_NONBLOCK;
# the fstat then refuses it) and a final component swapped for a symlink must not lead the
# read elsewhere (O_NOFOLLOW: the caller resolves a link it means to follow first)
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def open_regular(path: Path | str, *, follow_symlinks: bool = False) -> tuple[int, os.stat_result]:
    """Open a path skillcheck did not create, for reading: (descriptor, its fstat).

    The one checked opener: never blocks (a FIFO opens at once and is refused), never follows
    a symlink at ``path`` unless asked, and gives only a regular file. Raises OSError with a
    readable reason (naming ``path``); the caller closes the descriptor.
    """
    flags = _OPEN_FLAGS | (0 if follow_symlinks else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks and os.path.islink(path):
            raise OSError(errno.ELOOP, "a symbolic link, not followed", str(path)) from None
        raise
    try:
        info = os.fstat(fd)
    except OSError:
        os.close(fd)
        raise
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, f"not a regular file ({kind_of(info.st_mode)})", str(path))
    return fd, info


def read_regular(
    path: Path | str, limit: int = MAX_READ, *, follow_symlinks: bool = False
) -> tuple[bytes, int]:
    """Read at most ``limit`` bytes of a regular file through ``open_regular``; (bytes,
    real size). Raises OSError with a readable reason."""
    fd, info = open_regular(path, follow_symlinks=follow_symlinks)
    try:
        return read_fd(fd, info.st_size, limit), info.st_size
    finally:
        os.close(fd)


MAX_FILE_READ = 8 * 1024 * 1024


def read_file(skill: Skill, entry: SkillFile, limit: int = MAX_FILE_READ) -> bytes | None:
    """The bytes of a regular file of the skill, read once and shared by every rule.

    Returns None for anything that is not a regular file inside the skill: directories,
    FIFOs, sockets, devices, and symlinks that dangle or leave the skill are never opened.
    SKILL.md itself comes from the already-read document.
    """
    if entry.rel in skill.contents:
        return skill.contents[entry.rel]
    data: bytes | None = None
    if skill.doc is not None and skill.skill_md is not None and entry.path == skill.skill_md:
        data = skill.doc.raw
    else:
        target = entry.path
        ok = entry.kind == "file"
        if entry.kind == "symlink":
            try:
                resolved = entry.path.resolve(strict=True)
                ok = is_within(resolved, skill.root.resolve()) and resolved.is_file()
                target = resolved
            except (OSError, RuntimeError):
                ok = False
        if ok:
            try:
                data, _size = read_regular(target, limit)
            except OSError:
                data = None
    skill.contents[entry.rel] = data
    return data


def read_text(skill: Skill, entry: SkillFile) -> str | None:
    """A file's text for the text checks, decoded once per run and shared; None when binary.

    UTF-8 with invalid bytes replaced and a leading BOM dropped, so columns count code
    points as in SKILL.md. SKILL.md gives its already-decoded document text.
    """
    if skill.doc is not None and entry.path == skill.skill_md:
        return skill.doc.text
    data = read_file(skill, entry)
    if data is None or is_binary(data):
        return None
    return decoded_text(skill, entry)


TEXT: Memo[str | None] = Memo("text")  # per file


def decoded_text(skill: Skill, entry: SkillFile) -> str | None:
    """A file's text, read and decoded once per run whichever reader asks first (the text
    checks, the Markdown reader); None when unreadable. SKILL.md gives its document text.

    Decoded by ``decode_text``, so columns count code points as in SKILL.md.
    """
    if skill.doc is not None and entry.path == skill.skill_md:
        return skill.doc.text
    if skill.memos.has(TEXT, entry.rel):
        return skill.memos.get(TEXT, entry.rel)
    data = read_file(skill, entry)
    return skill.memos.put(TEXT, None if data is None else decode_text(data), entry.rel)


def find_skill_md(root: Path) -> Path | None:
    """``SKILL.md`` if present (whatever it is), else a wrong-case variant such as ``skill.md``."""
    exact = root / SKILL_MD
    if os.path.lexists(exact):
        return exact
    try:
        # `skill.md` first: it is the one variant skills-ref also reads
        names = sorted(os.listdir(root), key=lambda n: (n != "skill.md", n))
    except OSError:
        return None
    for name in names:
        if name.lower() == "skill.md":
            return root / name
    return None


# one entry of a skill's listing, as lstat gives it:
# (rel, kind, size, mode, link target, mtime_ns, ctime_ns, inode, absolute path)
Entry = tuple[str, FileKind, int, int, "str | None", int, int, int, str]


_NAME = attrgetter("name")  # a C call per entry, where a lambda is a Python one


def scan(root: Path, listings: Listings | None = None) -> tuple[list[Entry], list[tuple[str, str]]]:
    """Every entry under ``root`` as plain tuples, sorted by rel path, without following
    links; bounded in depth and count. The result cache compares these without building a
    SkillFile per entry; ``walk`` builds them. With ``listings`` (discovery's), the skill's
    directory is the listing discovery lent, and its folders' are left for discovery."""
    entries: list[Entry] = []
    errors: list[tuple[str, str]] = []
    top = os.fspath(root)
    stack: list[tuple[str, str, int]] = [(top, "", 0)]
    while stack:
        directory, prefix, depth = stack.pop()
        try:
            lent = None if listings is None or directory != top else listings.take(top)
            if lent is not None:
                listed = sorted(lent, key=_NAME)
            else:
                with os.scandir(directory) as it:
                    listed = sorted(it, key=_NAME)
                if listings is not None and directory != top:
                    listings.leave(directory, listed)
        except FileNotFoundError:
            if directory == top:
                errors.append((directory, "No such file or directory"))
            continue  # a subfolder gone since it was listed holds nothing to check
        except OSError as exc:
            errors.append((directory, exc.strerror or str(exc)))
            continue
        subdirs = []
        for entry in listed:
            if len(entries) >= MAX_WALK_ENTRIES:
                errors.append(
                    (
                        directory,
                        f"more than {MAX_WALK_ENTRIES:,} entries; the rest were not checked",
                    )
                )
                entries.sort()
                return entries, errors
            name = entry.name
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # gone since the listing (an editor's temp file): nothing to check
            except OSError as exc:
                errors.append((entry.path, exc.strerror or str(exc)))
                continue
            kind = kind_of(info.st_mode)
            link = None
            if kind == "symlink":
                try:
                    link = os.readlink(entry.path)
                except OSError:
                    link = None
            rel = prefix + name
            path = entry.path
            entries.append(
                (
                    rel,
                    kind,
                    info.st_size,
                    info.st_mode,
                    link,
                    info.st_mtime_ns,
                    info.st_ctime_ns,
                    info.st_ino,
                    path,
                )
            )
            if kind == "dir" and name not in OPAQUE_DIRS:
                if depth + 1 >= MAX_WALK_DEPTH:
                    errors.append((path, f"deeper than {MAX_WALK_DEPTH} levels; not checked"))
                    continue
                subdirs.append((path, rel + "/", depth + 1))
        stack.extend(reversed(subdirs))
    entries.sort()
    return entries, errors


def walk(
    root: Path, scanned: tuple[list[Entry], list[tuple[str, str]]] | None = None
) -> tuple[list[SkillFile], list[tuple[Path, str]]]:
    """Every entry under ``root`` as SkillFiles (see ``scan``, whose result may be given)."""
    entries, errors = scanned if scanned is not None else scan(root)
    files = [
        SkillFile(Path(path), rel, kind, size, mode, link, mtime, ctime, inode)
        for rel, kind, size, mode, link, mtime, ctime, inode, path in entries
    ]
    return files, [(Path(path), reason) for path, reason in errors]


def load_skill(
    root: Path,
    display_root: str,
    scanned: tuple[list[Entry], list[tuple[str, str]]] | None = None,
    trees: tuple[str, ...] = (),
) -> Skill:
    """Load one skill directory. Never raises for what the directory holds.

    ``scanned`` is ``scan(root)`` when the caller already listed the directory (the result
    cache looks at the listing before deciding to load). ``trees`` are the directories being
    linted (resolved): a SKILL.md symlinked to a regular file inside one of them is read, as
    runtimes and skills-ref follow the link; a link to anywhere else is never opened.
    """
    skill_md = find_skill_md(root)
    skill = Skill(root=root, display_root=display_root, skill_md=skill_md, doc=None)
    skill.files, skill.walk_errors = walk(root, scanned)
    if skill_md is None:
        skill.read_error = "no SKILL.md"
        return skill
    try:
        info = os.lstat(skill_md)
    except OSError as exc:
        skill.read_error = exc.strerror or str(exc)
        return skill
    target = skill_md
    if stat.S_ISLNK(info.st_mode):
        real_root = root.resolve()
        try:
            link = repr(os.readlink(skill_md))
        except OSError:
            link = "?"
        try:
            resolved = skill_md.resolve(strict=True)
        except (OSError, RuntimeError):
            skill.read_error = f"a dangling or looping symlink (to {link})"
            return skill
        if not link_readable(resolved, real_root, trees):
            skill.read_error = f"a symlink to {link}, outside the skill"
            return skill
        if not is_within(resolved, real_root):
            skill.skill_md_target = resolved
        target = resolved
        try:
            info = os.stat(resolved)
        except OSError as exc:
            skill.read_error = exc.strerror or str(exc)
            return skill
    if not stat.S_ISREG(info.st_mode):
        skill.read_error = f"a {kind_word(kind_of(info.st_mode))}, not a regular file"
        return skill
    try:
        raw, size = read_regular(target)
    except OSError as exc:
        skill.read_error = f"unreadable: {exc.strerror or exc}"
        return skill
    skill.doc = parse_document(skill_md, raw, size)
    return skill


def kind_word(kind: FileKind) -> str:
    return {
        "dir": "directory",
        "fifo": "FIFO (named pipe)",
        "socket": "socket",
        "device": "device file",
    }.get(kind, kind)
