"""Every file skillcheck writes goes through here (reports, catalogs, bundles, fixes, cache).

A regular file (or a new path) is written to a temporary file beside it, fsynced, then
renamed into place: a reader or a crash sees the old file or the new one, never half of one.
Anything else at the path is never replaced by a rename:

- a symbolic link is followed: its final target gets the same treatment (the link stays);
- a character device, FIFO or socket (``-o /dev/null``, ``-o >(gzip)``) is written through,
  after the whole content has been produced in an anonymous temporary file, so a failure
  part-way writes nothing to it;
- a directory is refused (``IsADirectoryError``).

Temporary files are named ``.<name>.<pid>.<random>.tmp`` and locked while written (see
``hold``); one nobody holds whose process is gone (a killed run) is removed by the next write
beside it, so they cannot accumulate.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import BinaryIO, TypeVar

from skillcheck.source.lazy import LazyPattern

T = TypeVar("T")

# our temporary names, ``.<name>.<pid>.<random><suffix>``: files being written (.tmp), skill
# directories being built (.tmp, .install, .unpack), and the previous directory during a
# swap (.old); never a skill, never linted
TEMP_SUFFIXES = (".tmp", ".install", ".unpack", ".old")
_TEMP_NAME = LazyPattern(
    r"\.(.+)\.([0-9]+)\.[A-Za-z0-9_]+(" + "|".join(re.escape(s) for s in TEMP_SUFFIXES) + ")"
)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: leftovers are judged by pid and age alone
    fcntl = None  # type: ignore[assignment]


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is one of our temporary names (a leftover, or a write under way)."""
    return _TEMP_NAME.fullmatch(name) is not None


def hold(path: Path | str) -> int | None:
    """Lock our new temporary file or directory ``path`` while it is filled, so that no
    cleaner takes it for a leftover: the lock dies with the process (even by SIGKILL), so a
    killed run's leftover is unlocked and removed by the next run at once. Returns the
    descriptor to ``release`` when done (None where there is no flock)."""
    if fcntl is None:  # pragma: no cover
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def _held(path: str) -> bool:
    """Whether a live process holds ``path`` (see ``hold``)."""
    if fcntl is None:  # pragma: no cover
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    if os.name == "nt":  # os.kill there terminates the process: never probe, keep the file
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: alive, someone else's
        return True
    return True


def clean_stale(directory: Path, name: str | None = None, suffix: str | None = ".tmp") -> None:
    """Remove our temporary files and directories in ``directory`` (for ``name`` with
    ``suffix``, or every one when None) that no live process is filling: made by a process
    that no longer runs here, and unlocked (a writer on another host sharing the directory
    holds its lock). A ``.old`` directory holding the only copy of its target (a swap
    killed between its two renames) is put back, not removed. Best effort: never raises."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        match = _TEMP_NAME.fullmatch(entry.name)
        if not match or (name is not None and match.group(1) != name):
            continue
        if suffix is not None and match.group(3) != suffix:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            alive = _pid_alive(int(match.group(2)))
        except (OSError, OverflowError, ValueError):  # a pid no process can have: not ours
            continue
        if alive or _held(entry.path):
            continue
        try:
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(entry.path)
                continue
            previous = os.path.join(entry.path, "d")
            target = os.path.join(directory, match.group(1))
            old = match.group(3) == ".old"
            if old and os.path.isdir(previous) and not os.path.lexists(target):
                os.rename(previous, target)
            shutil.rmtree(entry.path, ignore_errors=True)
        except OSError:
            continue


def remove_leftovers(directory: Path) -> None:
    """``clean_stale`` for every temporary name in ``directory``."""
    clean_stale(directory, None, None)


def temp_prefix(name: str) -> str:
    """The prefix of our temporary names for ``name``: ``.<name>.<pid>.``."""
    return f".{name}.{os.getpid()}."


def make_temp_dir(target: Path, suffix: str = ".tmp", *, clean: bool = True) -> Path:
    """A new private directory beside ``target`` (to be renamed onto it), after removing
    stale ones of the same naming unless ``clean`` is false (a directory that may hold the
    only copy of something, such as the previous ``target`` during a swap)."""
    parent = target.parent if str(target.parent) else Path(".")
    if clean:
        clean_stale(parent, target.name, suffix)
        clean_stale(parent, target.name, ".old")  # a swap killed half-way is undone first
    try:
        return Path(tempfile.mkdtemp(dir=parent, prefix=temp_prefix(target.name), suffix=suffix))
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(target)) from None


def holder_of(output: Path, roots: Iterable[tuple[Path, str]]) -> str | None:
    """The name (second item) of the first of ``roots`` that ``output`` is, or lies inside
    (both resolved), else None: an output must never replace a skill's file or an input
    (``lint -o SKILL.md``). The one check every command that writes a named output makes."""
    target = os.path.realpath(output)
    for root, name in roots:
        real = os.path.realpath(root)
        if target == real or os.path.commonpath([real, target]) == real:
            return name
    return None


def resolve_output(
    path: Path, follow_symlinks: bool = True, write_through: bool = True
) -> tuple[Path, bool]:
    """Where writing ``path`` really goes, and whether it is replaced by rename (True) or
    written through (False, a device, FIFO or socket). Symbolic links are followed, or
    refused (``OSError`` ELOOP) without ``follow_symlinks``; a device, FIFO or socket is
    refused (``OSError`` EINVAL) without ``write_through``; a directory raises
    ``IsADirectoryError``."""
    path = Path(path)
    if os.path.islink(path):
        if not follow_symlinks:
            raise OSError(errno.ELOOP, "is a symbolic link", str(path))
        path = Path(os.path.realpath(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return path, True
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    if not write_through and not stat.S_ISREG(st.st_mode):
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return path, stat.S_ISREG(st.st_mode)


def write_atomic_stream(
    path: Path,
    write: Callable[[BinaryIO], T],
    *,
    mode: int | None = None,
    durable: bool = True,
    follow_symlinks: bool = True,
    write_through: bool = True,
    expect: tuple[int, int] | None = None,
) -> T:
    """Call ``write`` with a temporary file (opened ``w+b``, seekable), then put its content
    at ``path`` (see the module docstring); return what ``write`` returned. On any failure,
    or an interrupt, the temporary file is removed and ``path`` is left as it was.

    ``mode`` defaults to the existing file's mode, else what the umask gives a new file.
    ``durable=False`` skips the fsync, for files that may be lost but never half-read (the
    result cache: a file a crash empties fails to parse and is ignored).
    ``follow_symlinks=False`` refuses a symlink at ``path`` (files skillcheck names itself,
    in a directory someone else may have planted a link in: the cache).
    ``write_through=False`` refuses a device, FIFO or socket at ``path`` instead of writing
    into it (a file skillcheck names itself: writing into a planted FIFO would block).
    ``expect`` is the (st_dev, st_ino) of the file that was read to make the new content
    (``--fix``): the rename is refused unless ``path`` is still that regular file.
    """
    path, replace = resolve_output(Path(path), follow_symlinks, write_through)
    if not replace:
        try:
            return _write_through(path, write)
        except OSError as exc:
            raise _naming(exc, path, None) from None
    directory = path.parent if str(path.parent) else Path(".")
    if durable:  # the cache (not durable) writes thousands of files: it prunes its own folders
        clean_stale(directory, path.name)
    try:
        fd, tmp = tempfile.mkstemp(prefix=temp_prefix(path.name), suffix=".tmp", dir=directory)
    except OSError as exc:
        raise _naming(exc, path, None) from None
    held = hold(tmp) if durable else None  # the cache (not durable) never cleans its temps
    try:
        with os.fdopen(fd, "w+b") as handle:
            result = write(handle)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        if mode is None:
            try:
                mode = os.stat(path).st_mode & 0o7777
            except FileNotFoundError:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        if expect is not None:
            _check_same(path, expect)
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):  # best effort: the original error is what matters
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _naming(exc, path, tmp) from None
        raise
    finally:
        release(held)
    return result


def _check_same(path: Path, expect: tuple[int, int]) -> None:
    """Refuse (``OSError`` ESTALE) unless ``path`` is the regular file ``expect`` names: it
    was replaced (by a link, another file) since it was read. The rename that follows
    replaces a directory entry and never writes through a link put there meanwhile."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is None or not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != expect:
        raise OSError(errno.ESTALE, "replaced since it was read", str(path))


def _naming(exc: OSError, path: Path, tmp: str | None) -> OSError:
    """``exc`` as an error about the output ``path`` when it concerns our temporary file or
    names no file (a failed write): the user asked for ``path``, not for ``.x.1234.tmp``.
    An error about another file (a source that ``write`` reads) is left as it is."""
    if tmp is not None and exc.filename not in (None, tmp):
        return exc
    return OSError(exc.errno, exc.strerror or str(exc), str(path))


def _write_through(path: Path, write: Callable[[BinaryIO], T]) -> T:
    """A device or FIFO: produce everything first (``write`` may seek), then copy it in."""
    with tempfile.TemporaryFile("w+b") as spool:
        result = write(spool)
        spool.flush()
        spool.seek(0)
        # no O_TRUNC/O_CREAT: the path is not a regular file, and must not become one
        with open(os.open(path, os.O_WRONLY), "wb") as out:
            shutil.copyfileobj(spool, out)
    return result


def write_atomic(
    path: Path,
    data: bytes,
    *,
    mode: int | None = None,
    durable: bool = True,
    follow_symlinks: bool = True,
    write_through: bool = True,
    expect: tuple[int, int] | None = None,
) -> None:
    write_atomic_stream(
        path,
        lambda handle: handle.write(data),
        mode=mode,
        durable=durable,
        follow_symlinks=follow_symlinks,
        write_through=write_through,
        expect=expect,
    )
