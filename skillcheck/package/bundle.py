"""Bundles: reproducible packing, verification that trusts nothing, safe unpacking, and
the loader API.

Layouts:

- **tar.gz bundle**: ``manifest.json`` first, then ``<skill-name>/<path>`` for every shipped
  file, in byte order of the member name.
- **zip bundle**: ``manifest.json`` first, then ``<skill-name>/<path>`` (zips written before
  the manifest became a member carried it in the archive comment; those still verify). For
  claude.ai uploads, one zip per skill: ``wellknown.pack_uploads``.
- **well-known directory**: what the Agent Skills Discovery RFC defines, written and read
  by ``skillcheck.package.wellknown``; ``loader.verify`` and ``loader.open_bundle`` hand such a
  directory to it.
- **unpacked bundle**: what ``loader.unpack`` writes: ``manifest.json`` and ``<name>/<path>``.

Archives are reproducible: regular-file members only, sorted, mode 0644 or 0755, uid/gid 0,
empty owner names, one mtime (``SOURCE_DATE_EPOCH``, else ``DEFAULT_MTIME``), gzip level 6
with no file name and a zero time in its header, compressed in 1 MiB blocks (see
``_GzipWriter``: the bytes depend on the tar stream and zlib alone), PAX ``path`` records for
names that ustar cannot hold. The tar reader is our own: it accepts only what such archives
contain and bounds every size before reading it.

Constants, limits, errors and the strict readers live in ``skillcheck.package.archive``; manifest
parsing and verification in ``skillcheck.package.bundlecheck``; unpacking and the loader API in
``skillcheck.package.loader``.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import itertools
import json
import os
import shutil
import struct
import time
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from skillcheck.package.archive import (
    _BLOCK,
    _RECORD,
    _ZERO_BLOCK,
    DEFAULT_MTIME,
    FORMATS,
    GZIP_LEVEL,
    INDEX_NAME,
    MANIFEST_NAME,
    BundleError,
    BundleIOError,
    _check_mtime,
    default_mtime,
)
from skillcheck.package.bundlecheck import _sha256_file, parse_manifest
from skillcheck.package.catalog import (
    CatalogError,
    dumps_manifest,
    file_digest,
    read_in_root,
    read_shipped,
    shipped_files,
    show,
)
from skillcheck.source.atomic import hold, holder_of, make_temp_dir, release, write_atomic_stream
from skillcheck.source.machine import available_cpus
from skillcheck.source.skill import Skill, SkillFile

# --- writing -------------------------------------------------------------------------------


def _pax_record(key: str, value: str) -> bytes:
    payload = f" {key}={value}\n".encode()
    size = len(payload) + 1
    while size != len(payload) + len(str(size)):  # the length counts its own digits
        size = len(payload) + len(str(size))
    return str(size).encode("ascii") + payload


# A ustar header after its type flag: empty link name, magic and version, empty owner names,
# devmajor and devminor 0, empty prefix, padding to 512 bytes.
_USTAR_TAIL = bytes(100) + b"ustar\x0000" + bytes(64) + b"0000000\0" * 2 + bytes(167)
# the checksum counts its own field as eight spaces
_USTAR_TAIL_SUM = sum(_USTAR_TAIL) + 8 * ord(" ")


def _ustar_header(name: bytes, size: int, mode: int, mtime: int, typeflag: bytes) -> bytes:
    # name, mode, uid 0, gid 0, size and mtime, each octal field NUL-terminated
    head = name.ljust(100, b"\0") + b"%07o\0%07o\0%07o\0%011o\0%011o\0" % (
        mode,
        0,
        0,
        size,
        mtime,
    )
    checksum = sum(head) + typeflag[0] + _USTAR_TAIL_SUM
    return head + b"%06o\0 " % checksum + typeflag + _USTAR_TAIL


def _pad(size: int) -> bytes:
    return bytes(-size % _BLOCK)


def _tar_member(name: str, size: int, executable: bool, mtime: int) -> bytes:
    """The header block(s) of a regular file: ustar, preceded by a PAX ``path`` record when
    the name is not ASCII or longer than ustar's 100 bytes."""
    encoded = name.encode("utf-8")
    out = b""
    if len(encoded) > 100 or not name.isascii():
        records = _pax_record("path", name)
        out = _ustar_header(b"././@PaxHeader", len(records), 0o644, 0, b"x")
        out += records + _pad(len(records))
        # readers without PAX support still get a harmless ASCII name
        fallback = "".join(c if c.isascii() and c.isprintable() else "_" for c in name)
        encoded = fallback[:100].encode("ascii")
    return out + _ustar_header(encoded, size, 0o755 if executable else 0o644, mtime, b"0")


# What gzip.GzipFile(filename="", mtime=0) writes first: no file name, a zero time (so the
# archive does not depend on when or where it was made), the level flag, OS "unknown".
_GZIP_HEADER = (
    b"\x1f\x8b\x08\x00\x00\x00\x00\x00"
    + {9: b"\x02", 1: b"\x04"}.get(GZIP_LEVEL, b"\x00")
    + b"\xff"
)
GZIP_BLOCK = 1 << 20  # bytes of the tar stream compressed as one block
GZIP_WINDOW = 1 << 15  # deflate's window: what a block is primed with from the one before
_QUEUED = 4  # blocks compressed ahead of the one being written: memory stays a few MB
_THREADS = 4  # compressing threads at most (fewer on fewer CPUs)


def _deflate(before: bytes = b"") -> Any:
    """A raw deflate compressor at ``GZIP_LEVEL``, its window primed with ``before``."""
    settings = (GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS, zlib.DEF_MEM_LEVEL, 0)
    return zlib.compressobj(*settings, before) if before else zlib.compressobj(*settings)


_LAST_BLOCK = _deflate().flush()  # an empty final deflate block: it ends the stream


def _deflate_block(block: bytes, before: bytes) -> bytes:
    """One block of the stream: its own deflate stream, primed with the ``GZIP_WINDOW``
    bytes ``before`` it (so its matches reach back as they would in one stream), ended by
    a sync flush (byte-aligned, not final), so the blocks concatenate into one stream."""
    compressor = _deflate(before)
    return compressor.compress(block) + compressor.flush(zlib.Z_SYNC_FLUSH)


class _GzipWriter:
    """A gzip stream compressed block by block on several threads, as pigz does.

    The tar stream is cut into ``GZIP_BLOCK`` blocks, each compressed by ``_deflate_block``
    on a thread pool (zlib releases the GIL) while the caller reads and hashes the next
    files; the blocks are written in order, then an empty final block, the CRC-32 and the
    size. The bytes depend only on the tar stream and zlib (not on the threads or on how
    the stream was written), so the archive is as reproducible as one deflate stream, ~0.1 %
    larger, and compressed twice as fast on two CPUs (1,000 skills, 27 MB of tar: 222 ->
    123 ms). At most ``_QUEUED`` blocks wait. ``close`` finishes the stream; ``stop`` ends
    the threads without finishing (on a failure or an interrupt).
    """

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.crc = 0
        self.size = 0
        self.buffer = bytearray()
        self.before = b""
        self.queued: collections.deque[Future[bytes]] = collections.deque()
        self.pool = ThreadPoolExecutor(
            max_workers=min(_THREADS, available_cpus()), thread_name_prefix="skillcheck-gzip"
        )
        out.write(_GZIP_HEADER)

    def write(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) >= GZIP_BLOCK:
            whole = len(self.buffer) - len(self.buffer) % GZIP_BLOCK
            with memoryview(self.buffer) as view:
                for start in range(0, whole, GZIP_BLOCK):
                    self._send(bytes(view[start : start + GZIP_BLOCK]))
            del self.buffer[:whole]

    def _send(self, block: bytes) -> None:
        self.crc = zlib.crc32(block, self.crc)
        self.size += len(block)
        self.queued.append(self.pool.submit(_deflate_block, block, self.before))
        self.before = block[-GZIP_WINDOW:]
        # write what is done, in order; wait only when too many blocks are queued
        while self.queued and (len(self.queued) > _QUEUED or self.queued[0].done()):
            self.out.write(self.queued.popleft().result())

    def close(self) -> None:
        if self.buffer:
            self._send(bytes(self.buffer))
            self.buffer.clear()
        while self.queued:
            self.out.write(self.queued.popleft().result())
        self.out.write(_LAST_BLOCK + struct.pack("<II", self.crc, self.size & 0xFFFFFFFF))
        self.stop()

    def stop(self) -> None:
        """End the threads; blocks not started are dropped (idempotent)."""
        self.queued.clear()
        self.pool.shutdown(wait=True, cancel_futures=True)


def _write_tar_gz(out: BinaryIO, members: Iterable[tuple[str, bytes, bool]], mtime: int) -> None:
    gz = _GzipWriter(out)
    try:
        written = 0
        for name, data, executable in members:
            header = _tar_member(name, len(data), executable, mtime)
            gz.write(header)
            gz.write(data)
            padding = -len(data) % _BLOCK
            if padding:
                gz.write(_ZERO_BLOCK[:padding])
            written += len(header) + len(data) + padding
        end = 2 * _BLOCK
        end += -(written + end) % _RECORD
        gz.write(bytes(end))
        gz.close()
    finally:
        gz.stop()  # a member that failed to read (or Ctrl-C): the thread must not outlive us


def _zip_date(mtime: int) -> tuple[int, int, int, int, int, int]:
    # zip stores local date/time from 1980 to 2107; use UTC so every machine agrees
    clamped = min(max(mtime, DEFAULT_MTIME), 4354819199)
    return time.gmtime(clamped)[:6]  # type: ignore[return-value]


def _write_zip(
    out: BinaryIO, members: Iterable[tuple[str, bytes, bool]], mtime: int, manifest: bytes
) -> None:
    date = _zip_date(mtime)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:

        def add(name: str, data: bytes, executable: bool) -> None:
            info = zipfile.ZipInfo(name, date_time=date)
            info.create_system = 3  # Unix, so the mode below is honoured (and fixed)
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=GZIP_LEVEL)

        if manifest:  # a member, never the comment: unzip -l would print it as a banner
            add(MANIFEST_NAME, manifest, False)
        for name, data, executable in members:
            add(name, data, executable)


def _atomic_write(output: Path, write: Callable[[BinaryIO], None], streaming: bool) -> str:
    """Write ``output`` atomically (mode 0644) and return its digest. ``streaming``: ``write``
    only ever appends (no seek, no tell), so the digest is taken on the way out.

    A failure (or an interrupt) removes the temporary file and leaves ``output`` as it was.
    """

    parent = output.parent
    if not parent.is_dir():
        raise BundleIOError(f"{parent}: directory does not exist")
    if output.is_dir():
        raise BundleIOError(f"{output}: is a directory")

    def write_and_hash(f: BinaryIO) -> str:
        if not streaming:  # zipfile seeks back to finish its headers: hash what it left
            write(f)
            return _sha256_file(f)
        hashing = _HashingWriter(f)  # the digest of what is written, without reading it back
        write(hashing)  # type: ignore[arg-type]
        return "sha256:" + hashing.digest.hexdigest()

    return write_atomic_stream(output, write_and_hash, mode=0o644)


class _HashingWriter:
    """A write-only stream that hashes what passes through it."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.digest = hashlib.sha256()

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        return self.out.write(data)


@dataclass
class _Packed:
    entry: dict[str, Any]
    skill: Skill
    files: list[tuple[dict[str, Any], SkillFile]]


def _plan(skills: list[Skill], manifest: dict[str, Any]) -> list[_Packed]:
    """Pair each manifest entry with its skill and shipped files, checking they agree."""
    by_name: dict[str, Skill] = {}
    for skill in skills:
        if skill.name is None:
            raise BundleError(f"{skill.display_root}: skill has no name")
        if skill.name in by_name:
            raise BundleError(f"two skills are named {show(skill.name)}")
        by_name[skill.name] = skill
    plan = []
    listed = set()
    for entry in manifest.get("skills", []):
        name = entry["name"]
        listed_skill = by_name.get(name)
        if listed_skill is None:
            raise BundleError(f"the manifest lists skill {show(name)}, which is not being packed")
        skill = listed_skill
        listed.add(name)
        try:
            shipped = {sf.rel: sf for sf in shipped_files(skill)}
        except CatalogError as exc:
            raise BundleError(str(exc)) from None
        paths = [fe["path"] for fe in entry["files"]]
        if sorted(paths) != sorted(shipped):
            raise BundleError(f"{skill.display_root}: files changed since the manifest was built")
        plan.append(_Packed(entry, skill, [(fe, shipped[fe["path"]]) for fe in entry["files"]]))
    missing = sorted(set(by_name) - listed)
    if missing:
        raise BundleError(f"skill {show(missing[0])} is not in the manifest")
    return plan


def _content(packed: _Packed, fe: dict[str, Any], sf: SkillFile) -> bytes:
    try:
        data = read_shipped(packed.skill, sf)
    except CatalogError as exc:
        raise BundleError(str(exc)) from None
    if file_digest(data) != fe["digest"]:
        raise BundleError(f"{sf.path}: changed since the manifest was built")
    return data


def _check_outside_skills(skills: list[Skill], output: Path) -> None:
    """Refuse an output inside a skill: a pack never touches the source tree."""
    _check_outside_roots([(skill.root, skill.display_root) for skill in skills], output)


def _check_outside_roots(roots: Iterable[tuple[Path, str]], output: Path) -> None:
    """``_check_outside_skills`` for skills known by (root, display root)."""
    display = holder_of(output, roots)
    if display is not None:
        raise BundleIOError(f"{output}: is inside skill {display}; write the bundle elsewhere")


# a member's bytes, given its skill's manifest entry and its file entry
Content = Callable[[dict[str, Any], dict[str, Any]], bytes]


def pack_bundle(
    skills: list[Skill],
    manifest: dict[str, Any],
    output: Path,
    fmt: str = "tar.gz",
    mtime: int | None = None,
) -> str:
    """Write ``skills`` as one reproducible bundle at ``output``; return its digest.

    ``manifest`` is ``catalog.build_manifest(skills, ...)``. Every member must match its
    manifest digest: a file comes from the read the manifest was built from when the run
    still holds those bytes (see ``catalog.read_shipped``), else it is read again, and a
    file changed since then is refused. ``fmt`` is ``"tar.gz"`` or ``"zip"``; ``mtime``
    defaults to ``default_mtime()``. The file appears atomically or not at all.
    """

    def plan() -> Content:
        by_name = {
            p.entry["name"]: (p, dict((fe["path"], sf) for fe, sf in p.files))
            for p in _plan(skills, manifest)
        }

        def content(entry: dict[str, Any], fe: dict[str, Any]) -> bytes:
            packed, files = by_name[entry["name"]]
            return _content(packed, fe, files[fe["path"]])

        return content

    roots = [(skill.root, skill.display_root) for skill in skills]
    return _write_bundle(manifest, output, fmt, mtime, roots, plan)


@dataclass(frozen=True)
class Source:
    """Where the files of one manifest entry are read from, without loading the skill."""

    root: Path  # the skill's directory
    display: str  # how messages name it
    links: dict[str, str]  # shipped path -> the in-skill file it is read from (a symlink's)


def write_bundle(
    manifest: dict[str, Any],
    sources: dict[str, Source],
    output: Path,
    fmt: str = "tar.gz",
    mtime: int | None = None,
) -> str:
    """``pack_bundle`` for a manifest whose skills are not loaded (``catalog.pack_record``):
    ``sources`` gives each skill's directory by name. Each file is read once, from that
    directory without following links out of it, and refused unless its digest is the
    manifest's (changed since the manifest was built)."""

    def plan() -> Content:
        names = {entry["name"] for entry in manifest.get("skills", [])}
        if names != set(sources):
            raise BundleError("the manifest does not list exactly the skills being packed")

        def content(entry: dict[str, Any], fe: dict[str, Any]) -> bytes:
            source = sources[entry["name"]]
            rel = fe["path"]
            try:
                data = read_in_root(source.root, source.links.get(rel, rel))
            except CatalogError as exc:
                raise BundleError(str(exc)) from None
            if file_digest(data) != fe["digest"]:
                raise BundleError(f"{source.root / rel}: changed since the manifest was built")
            return data

        return content

    roots = [(source.root, source.display) for source in sources.values()]
    return _write_bundle(manifest, output, fmt, mtime, roots, plan)


def _write_bundle(
    manifest: dict[str, Any],
    output: Path,
    fmt: str,
    mtime: int | None,
    roots: list[tuple[Path, str]],
    plan: Callable[[], Content],
) -> str:
    """Check the destination, the plan (``plan`` pairs the manifest with the files and gives
    the reader of members) and the manifest, then write the bundle atomically."""
    if fmt not in FORMATS:
        raise BundleIOError(f"unknown bundle format {fmt!r} (choose tar.gz or zip)")
    mtime = default_mtime() if mtime is None else _check_mtime(mtime)
    output = Path(output)
    _check_outside_roots(roots, output)
    content = plan()
    manifest_bytes = dumps_manifest(manifest)
    parse_manifest(manifest_bytes)  # never write a bundle that verify would refuse
    order = sorted(
        (
            (f"{entry['name']}/{fe['path']}", entry, fe)
            for entry in manifest["skills"]
            for fe in entry["files"]
        ),
        key=lambda item: item[0].encode("utf-8"),
    )

    def members() -> Iterator[tuple[str, bytes, bool]]:
        for name, entry, fe in order:
            yield name, content(entry, fe), bool(fe["executable"])

    if fmt == "tar.gz":

        def write(out: BinaryIO) -> None:
            entries = itertools.chain([(MANIFEST_NAME, manifest_bytes, False)], members())
            _write_tar_gz(out, entries, mtime)

    else:

        def write(out: BinaryIO) -> None:
            _write_zip(out, members(), mtime, manifest_bytes)

    return _atomic_write(output, write, streaming=fmt == "tar.gz")


def _is_ours(directory: Path) -> bool:
    """An existing output directory we may replace: empty, or written by skillcheck."""
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return False
    if not entries:
        return True
    for name in (INDEX_NAME, MANIFEST_NAME):
        try:
            data = read_in_root(directory, name, 16 * 1024 * 1024)
            generator = json.loads(data).get("generator", "")
        except (CatalogError, ValueError, AttributeError):
            continue
        if isinstance(generator, str) and generator.startswith("skillcheck"):
            return True
    return False


def _swap_dir(tmp: Path, dest: Path) -> None:
    """Move the finished ``tmp`` to ``dest``; an existing ``dest`` is replaced whole."""
    if not os.path.lexists(dest):
        os.rename(tmp, dest)
        return
    # killed between the two renames, it holds the only copy: a later clean puts it back
    old = make_temp_dir(dest, ".old", clean=False)
    held = hold(old)
    try:
        try:
            os.rename(dest, old / "d")
        except BaseException:
            old.rmdir()
            raise
        try:
            os.rename(tmp, dest)
        except BaseException:
            os.rename(old / "d", dest)  # put the previous directory back
            old.rmdir()
            raise
        shutil.rmtree(old, ignore_errors=True)
    finally:
        release(held)


@contextlib.contextmanager
def building_dir(dest: Path, suffix: str = ".tmp") -> Iterator[Path]:
    """A private directory beside ``dest`` to fill; when the block ends normally it replaces
    ``dest`` whole (mode 0755), on any failure it is removed and ``dest`` stays as it was.
    Every writer of a directory (unpack, well-known publishing, install) goes through it."""
    tmp = make_temp_dir(dest, suffix)
    held = hold(tmp)
    try:
        yield tmp
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        _swap_dir(tmp, dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        release(held)


def _write_new_file(root: Path, rel: str, data: bytes, executable: bool) -> None:
    """Create ``root/rel`` (and its directories, mode 0755) with an exact mode."""
    parts = rel.split("/")
    current = root
    for part in parts[:-1]:
        current = current / part
        if not current.is_dir():
            os.mkdir(current)
            os.chmod(current, 0o755)  # exact, whatever the umask
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(current / parts[-1], flags | getattr(os, "O_BINARY", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        os.fchmod(f.fileno(), 0o755 if executable else 0o644)
