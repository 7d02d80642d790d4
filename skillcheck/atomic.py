"""Atomic file writes: a temporary file beside the target, fsync, then rename.

A reader (or a crash) sees either the old file or the new one, never half of one.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, TypeVar

T = TypeVar("T")


def write_atomic_stream(
    path: Path, write: Callable[[BinaryIO], T], *, mode: int | None = None, durable: bool = True
) -> T:
    """Call ``write`` with a temporary file (opened ``w+b``) beside ``path``, then put it in
    place; return what ``write`` returned. On any failure, or an interrupt, the temporary
    file is removed and ``path`` is left as it was.

    ``mode`` defaults to the existing file's mode, else what the umask gives a new file.
    ``durable=False`` skips the fsync, for files that may be lost but never half-read (the
    result cache: a file a crash empties fails to parse and is ignored).
    """
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
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
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):  # best effort: the original error is what matters
            os.unlink(tmp)
        raise
    return result


def write_atomic(path: Path, data: bytes, *, mode: int | None = None, durable: bool = True) -> None:
    write_atomic_stream(path, lambda handle: handle.write(data), mode=mode, durable=durable)
