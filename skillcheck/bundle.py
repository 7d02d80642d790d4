"""Bundles: reproducible packing, verification that trusts nothing, safe unpacking, and
the loader API (DESIGN §10).

Layouts:

- **tar.gz bundle**: ``manifest.json`` first, then ``<skill-name>/<path>`` for every shipped
  file, in byte order of the member name.
- **zip bundle**: ``manifest.json`` first, then ``<skill-name>/<path>`` (zips written before
  the manifest became a member carried it in the archive comment; those still verify). For
  claude.ai uploads, one zip per skill: ``wellknown.pack_uploads``.
- **well-known directory**: what the Agent Skills Discovery RFC defines, written and read
  by ``skillcheck.wellknown``; ``loader.verify`` and ``loader.open_bundle`` hand such a
  directory to it.
- **unpacked bundle**: what ``loader.unpack`` writes: ``manifest.json`` and ``<name>/<path>``.

Archives are reproducible: regular-file members only, sorted, mode 0644 or 0755, uid/gid 0,
empty owner names, one mtime (``SOURCE_DATE_EPOCH``, else ``DEFAULT_MTIME``), gzip level 9
with no file name and a zero time in its header, PAX ``path`` records for names that ustar
cannot hold. The tar reader is our own: it accepts only what such archives contain and
bounds every size before reading it.

Verification, unpacking and the loader API live in ``skillcheck.loader``.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import os
import re
import shutil
import stat
import struct
import time
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

from skillcheck.atomic import make_temp_dir
from skillcheck.catalog import (
    CatalogError,
    collision_key,
    dumps_manifest,
    file_digest,
    path_problem,
    read_in_root,
    read_shipped,
    rfc_path_problem,
    shipped_files,
    show,
    skill_digest,
)
from skillcheck.errors import EXIT_ERROR, RefusedContent
from skillcheck.model import Skill, SkillFile

# 1980-01-01T00:00:00Z: the earliest time a zip entry can carry (and what Python wheels use)
DEFAULT_MTIME = 315532800
MANIFEST_NAME = "manifest.json"  # in a bundle and an unpacked bundle
INDEX_NAME = "index.json"  # in a well-known directory
INSTALLED_NAME = ".skillcheck-installed.json"  # our manifest of what `install` put in DEST
FORMATS = ("tar.gz", "zip")
GZIP_LEVEL = 9

_BLOCK = 512
_RECORD = 20 * _BLOCK  # tar pads the archive to whole records, as tar(1) does
_ZERO_BLOCK = bytes(_BLOCK)
_CHUNK = 1 << 20
_ZIP_COMMENT_MAX = 0xFFFF


@dataclass(frozen=True)
class Limits:
    """Bounds that keep a hostile bundle from exhausting memory, disk or time."""

    max_members: int = 10_000  # files in a bundle (all skills together)
    max_total_bytes: int = 256 * 1024 * 1024  # uncompressed size of all files
    max_manifest_bytes: int = 16 * 1024 * 1024
    max_header_bytes: int = 64 * 1024  # one PAX or GNU long-name header

    max_padding_bytes: int = 1024 * 1024  # zeros after a tar's end-of-archive marker

    @property
    def max_stream_bytes(self) -> int:
        """Decompressed bytes of a tar stream: files, manifest, headers (ours take at most
        2 KiB per member) and end padding. Every part is bounded on its own before it is
        read; this is the backstop."""
        return (
            self.max_total_bytes
            + self.max_manifest_bytes
            + 4096 * (self.max_members + 1)
            + self.max_padding_bytes
        )


DEFAULT_LIMITS = Limits()


class BundleError(RefusedContent):
    """A bundle cannot be written, verified or read. The message is one line."""


class BundleIOError(BundleError):
    """Not the bundle's content but the file system or the call: a missing bundle or
    directory, an unwritable or non-empty destination (the CLI exits 2, not 1)."""

    exit_code = EXIT_ERROR


def default_mtime() -> int:
    """``SOURCE_DATE_EPOCH`` when set (reproducible-builds.org), else ``DEFAULT_MTIME``."""
    value = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if not value:
        return DEFAULT_MTIME
    try:
        mtime = int(value)
    except ValueError:
        raise BundleIOError(f"SOURCE_DATE_EPOCH={value!r} is not an integer") from None
    return _check_mtime(mtime)


def _check_mtime(mtime: int) -> int:
    if not 0 <= mtime < 8**11:
        raise BundleIOError(f"mtime {mtime} is outside 0..{8**11 - 1}")
    return mtime


def _parse_expect(expect_digest: str | None) -> str | None:
    if expect_digest is None:
        return None
    value = expect_digest.strip().lower()
    hex_ = value.removeprefix("sha256:")
    if len(hex_) != 64 or any(c not in "0123456789abcdef" for c in hex_):
        raise BundleIOError(f"expected digest {expect_digest!r} is not sha256:<64 hex digits>")
    return "sha256:" + hex_


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
_FEED = 1 << 20  # bytes handed to zlib at once: few calls, bounded copies


class _GzipWriter:
    """gzip framing around one raw deflate stream, byte for byte what ``gzip.GzipFile``
    writes with the same settings (deflate's output does not depend on how its input is
    split). Small writes are gathered into large blocks, so compressing costs what zlib
    costs."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.deflate = zlib.compressobj(
            GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS, zlib.DEF_MEM_LEVEL, 0
        )
        self.crc = 0
        self.size = 0
        self.parts: list[bytes] = []
        self.pending = 0
        out.write(_GZIP_HEADER)

    def write(self, data: bytes) -> None:
        if len(data) >= _FEED:  # a large file goes to zlib as it is, not copied
            self._flush()
            self._compress(data)
            return
        self.parts.append(data)
        self.pending += len(data)
        if self.pending >= _FEED:
            self._flush()

    def _flush(self) -> None:
        if self.parts:
            data = b"".join(self.parts)
            self.parts.clear()
            self.pending = 0
            self._compress(data)

    def _compress(self, data: bytes) -> None:
        self.crc = zlib.crc32(data, self.crc)
        self.size += len(data)
        self.out.write(self.deflate.compress(data))

    def close(self) -> None:
        self._flush()
        self.out.write(self.deflate.flush())
        self.out.write(struct.pack("<II", self.crc, self.size & 0xFFFFFFFF))


def _write_tar_gz(out: BinaryIO, members: Iterable[tuple[str, bytes, bool]], mtime: int) -> None:
    gz = _GzipWriter(out)
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
    from skillcheck.atomic import write_atomic_stream

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
    target = os.path.realpath(output)
    for skill in skills:
        root = os.path.realpath(skill.root)
        if os.path.commonpath([root, target]) == root:
            raise BundleIOError(
                f"{output}: is inside skill {skill.display_root}; write the bundle elsewhere"
            )


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
    if fmt not in FORMATS:
        raise BundleIOError(f"unknown bundle format {fmt!r} (choose tar.gz or zip)")
    mtime = default_mtime() if mtime is None else _check_mtime(mtime)
    output = Path(output)
    _check_outside_skills(skills, output)
    plan = _plan(skills, manifest)
    manifest_bytes = dumps_manifest(manifest)
    parse_manifest(manifest_bytes)  # never write a bundle that verify would refuse
    order = sorted(
        ((f"{p.entry['name']}/{fe['path']}", p, fe, sf) for p in plan for fe, sf in p.files),
        key=lambda item: item[0].encode("utf-8"),
    )

    def members() -> Iterator[tuple[str, bytes, bool]]:
        for name, packed, fe, sf in order:
            yield name, _content(packed, fe, sf), bool(fe["executable"])

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
    # never cleaned automatically: killed between the two renames, it holds the only copy
    old = make_temp_dir(dest, ".old", clean=False)
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


# --- reading archives without trusting them --------------------------------------------------


@dataclass
class _Member:
    name: str
    kind: str  # file, symlink, hardlink, device, fifo, dir, other
    size: int
    mode: int
    ref: Any = None  # where to read it again: tar data offset, zip member name, file path


_KIND_REASONS = {
    "symlink": "is a symbolic link",
    "hardlink": "is a hard link",
    "device": "is a device file",
    "fifo": "is a FIFO",
    "dir": "is a directory entry (a bundle holds regular files only)",
    "sparse": "is a sparse file",
    "other": "has an unsupported member type",
}

_TAR_KINDS = {
    b"0": "file",
    b"\0": "file",
    b"7": "file",  # contiguous file: a regular file to every reader
    b"1": "hardlink",
    b"2": "symlink",
    b"3": "device",
    b"4": "device",
    b"5": "dir",
    b"6": "fifo",
}


class _Bounded:
    """A decompressed stream that refuses to produce more than ``limit`` bytes, so a
    decompression bomb costs at most ``limit`` bytes of work, never memory beyond a chunk."""

    def __init__(self, raw: IO[bytes] | gzip.GzipFile, limit: int) -> None:
        self.raw = raw
        self.limit = limit
        self.pos = 0

    def read(self, n: int) -> bytes:
        parts = []
        want = n
        while want > 0:
            ask = min(want, _CHUNK, self.limit - self.pos + 1)
            try:
                data = self.raw.read(ask)
            except (OSError, EOFError, zlib.error) as exc:
                raise BundleError(f"corrupt gzip stream: {exc}") from None
            if not data:
                break
            self.pos += len(data)
            if self.pos > self.limit:
                raise BundleError(
                    f"decompresses to more than {self.limit} bytes (decompression bomb?)"
                )
            parts.append(data)
            want -= len(data)
        return b"".join(parts)


def _octal(field: bytes, what: str) -> int:
    if field[:1] and field[0] & 0x80:
        raise BundleError(f"tar header {what} uses base-256 numbers (not supported)")
    text = field.split(b"\0", 1)[0].strip(b" ")
    if not text:
        return 0
    if any(c not in b"01234567" for c in text):
        raise BundleError(f"corrupt tar header ({what} is not an octal number)")
    return int(text, 8)


def _cstr(field: bytes) -> bytes:
    return field.split(b"\0", 1)[0]


def _parse_pax(data: bytes) -> dict[str, bytes]:
    records: dict[str, bytes] = {}
    pos = 0
    while pos < len(data):
        space = data.find(b" ", pos, pos + 20)
        try:
            length = int(data[pos:space]) if space > pos else 0
        except ValueError:
            length = 0
        record = data[pos : pos + length]
        if length <= space - pos or len(record) != length or not record.endswith(b"\n"):
            raise BundleError("corrupt PAX header")
        key, sep, value = record[space - pos + 1 : -1].partition(b"=")
        if not sep:
            raise BundleError("corrupt PAX header")
        records[key.decode("utf-8", "replace")] = value
        pos += length
    return records


def _decode_name(raw: bytes) -> str:
    # undecodable bytes become lone surrogates, which path_problem then rejects
    return raw.decode("utf-8", "surrogateescape")


class _TarReader:
    """A strict, bounded reader of gzip-compressed ustar/PAX archives."""

    def __init__(self, fileobj: IO[bytes], limits: Limits) -> None:
        self.limits = limits
        self.gz = gzip.GzipFile(fileobj=fileobj, mode="rb")
        self.stream = _Bounded(self.gz, limits.max_stream_bytes)
        self.pos = 0  # offset in the decompressed stream
        self.data_end = 0  # where the current member's padded data ends

    def _read(self, n: int) -> bytes:
        data = self.stream.read(n)
        self.pos += len(data)
        return data

    def _read_exact(self, n: int, what: str) -> bytes:
        data = self._read(n)
        if len(data) != n:
            raise BundleError(f"truncated archive (in {what})")
        return data

    def _skip_to(self, pos: int) -> None:
        while self.pos < pos:
            if not self._read(min(_CHUNK, pos - self.pos)):
                raise BundleError("truncated archive (in member data)")

    def _header(self, block: bytes) -> tuple[bytes, int, int, bytes]:
        stored = _octal(block[148:156], "checksum")
        if stored != sum(block[:148]) + 256 + sum(block[156:]):
            # some old tars summed signed bytes
            signed = struct.unpack("148b", block[:148]) + struct.unpack("356b", block[156:])
            if stored != sum(signed) + 256:
                raise BundleError("corrupt tar header (bad checksum)")
        magic = block[257:263]
        if magic not in (b"ustar\x00", b"ustar "):
            raise BundleError("not a ustar/PAX tar archive")
        name = _cstr(block[0:100])
        if magic == b"ustar\x00" and _cstr(block[345:500]):
            name = _cstr(block[345:500]) + b"/" + name
        return name, _octal(block[100:108], "mode"), _octal(block[124:136], "size"), block[156:157]

    def members(self) -> Iterator[_Member]:
        pax: dict[str, bytes] = {}
        long_name: bytes | None = None
        pending = 0  # extended headers since the last member
        count = 0
        while True:
            self._skip_to(self.data_end)
            block = self._read(_BLOCK)
            if len(block) != _BLOCK:
                raise BundleError("truncated archive (no end-of-archive marker)")
            if block == _ZERO_BLOCK:
                self._check_trailer()
                return
            raw_name, mode, size, typeflag = self._header(block)
            if typeflag in (b"x", b"L", b"K"):
                pending += 1
                if pending > 3:  # one each of x, L, K is all a member can use
                    raise BundleError("more than 3 extended headers before a member")
                self.data_end = self.pos + size + (-size % _BLOCK)
                if size > self.limits.max_header_bytes:
                    raise BundleError(f"oversized extended header ({size} bytes)")
                data = self._read_exact(size, "an extended header")
                if typeflag == b"x":
                    pax.update(_parse_pax(data))
                elif typeflag == b"L":
                    long_name = _cstr(data)
                else:  # GNU long link name: only links use it, and links are refused
                    pax["linkpath"] = _cstr(data)
                continue
            if typeflag == b"g":
                raise BundleError("global PAX header (not supported)")
            if "size" in pax:  # a PAX size applies to the member that follows its header
                if not pax["size"].isdigit():
                    raise BundleError("corrupt PAX header (size)")
                size = int(pax["size"])
            data_start = self.pos
            self.data_end = data_start + size + (-size % _BLOCK)
            if "hdrcharset" in pax and pax["hdrcharset"] != b"ISO-IR 10646 2000 UTF-8":
                raise BundleError("member names are not UTF-8 (PAX hdrcharset)")
            name_bytes = pax.get("path", long_name if long_name is not None else raw_name)
            kind = _TAR_KINDS.get(typeflag, "other")
            if any(key.startswith("GNU.sparse") for key in pax) or typeflag == b"S":
                kind = "sparse"
            pax, long_name, pending = {}, None, 0
            count += 1
            if count > self.limits.max_members:
                raise BundleError(f"more than {self.limits.max_members} members")
            yield _Member(_decode_name(name_bytes), kind, size, mode, data_start)

    def chunks(self, member: _Member) -> Iterator[bytes]:
        if self.pos != member.ref:
            raise BundleError("internal error: member data read out of order")
        left = member.size
        while left:
            data = self._read(min(_CHUNK, left))
            if not data:
                raise BundleError(f"truncated archive (in {show(member.name)})")
            left -= len(data)
            yield data

    def _check_trailer(self) -> None:
        # after the end-of-archive block only zero padding may follow: data hidden there
        # would be seen by readers that ignore the marker (tar -i); and a bounded amount,
        # so that gigabytes of compressed zeros cost nothing to reject
        end = self.pos
        while data := self._read(_CHUNK):
            if data.count(0) != len(data):
                raise BundleError("data after the end-of-archive marker")
            if self.pos - end > self.limits.max_padding_bytes:
                raise BundleError(
                    f"more than {self.limits.max_padding_bytes} bytes of padding after the "
                    "end-of-archive marker (decompression bomb?)"
                )


def _check_zip_directory(f: IO[bytes], limits: Limits) -> None:
    """Count the central directory's entries before zipfile parses (and allocates) them.

    zipfile reads the whole directory whatever the end record's count says, so a flood is
    refused here: the end record must be where the directory ends (no prepended or hidden
    data), and the directory is walked header by header up to the member bound.
    """
    f.seek(0, os.SEEK_END)
    size = f.tell()
    start = max(0, size - 22 - _ZIP_COMMENT_MAX)
    f.seek(start)
    tail = f.read()
    pos = len(tail)
    while True:
        pos = tail.rfind(b"PK\x05\x06", 0, pos)
        if pos < 0:
            raise BundleError("not a zip archive (no end-of-central-directory record)")
        if pos + 22 <= len(tail):
            (comment_len,) = struct.unpack("<H", tail[pos + 20 : pos + 22])
            if pos + 22 + comment_len == len(tail):
                break
    disk, cd_disk, on_disk, total, cd_size, cd_offset = struct.unpack(
        "<HHHHII", tail[pos + 4 : pos + 20]
    )
    if (
        total == 0xFFFF
        or cd_size == 0xFFFFFFFF
        or cd_offset == 0xFFFFFFFF
        or (pos >= 20 and tail[pos - 20 : pos - 16] == b"PK\x06\x07")
    ):
        raise BundleError("zip64 archives are not supported")
    if disk or cd_disk or on_disk != total:
        raise BundleError("multi-disk zip archives are not supported")
    if total > limits.max_members + 1:  # + 1: a manifest.json member
        raise BundleError(f"more than {limits.max_members} members")
    if cd_offset + cd_size != start + pos:
        raise BundleError("zip central directory is not where its end record says")
    if cd_size > (limits.max_members + 1) * 4096:
        raise BundleError("zip central directory is too large")
    f.seek(cd_offset)
    directory = f.read(cd_size)
    count = offset = 0
    entries: list[tuple[int, bytes, bytes]] = []  # (local header offset, name, fields)
    while offset < len(directory):
        if directory[offset : offset + 4] != b"PK\x01\x02" or offset + 46 > len(directory):
            raise BundleError("corrupt zip central directory")
        name_len, extra_len, comment_len = struct.unpack(
            "<HHH", directory[offset + 28 : offset + 34]
        )
        (local,) = struct.unpack("<I", directory[offset + 42 : offset + 46])
        name = directory[offset + 46 : offset + 46 + name_len]
        # flags, method, time, date, crc, compressed and uncompressed size: as in the local header
        entries.append((local, name, directory[offset + 8 : offset + 28]))
        offset += 46 + name_len + extra_len + comment_len
        count += 1
        if count > limits.max_members + 1:
            raise BundleError(f"more than {limits.max_members} members")
    if count != total:
        raise BundleError("zip end record and central directory disagree on the entry count")
    _check_zip_layout(f, entries, cd_offset)
    f.seek(0)


def _check_zip_layout(f: IO[bytes], entries: list[tuple[int, bytes, bytes]], end: int) -> None:
    """Account for every byte before the central directory: the local entries the central
    directory lists, back to back from offset 0, each with the same name, sizes and checksum.
    A reader that streams local headers (Java's ZipInputStream, several unzip tools) then
    sees exactly the members that were verified: no hidden entry, no gap, no overlap."""
    position = 0
    for local, name, fields in sorted(entries):
        where = show(name.decode("utf-8", "replace"))
        if local != position:
            what = "overlaps the previous one" if local < position else "follows unlisted bytes"
            raise BundleError(f"zip member {where} {what} (a hidden or overlapping entry)")
        f.seek(local)
        header = f.read(30)
        if len(header) < 30 or header[:4] != b"PK\x03\x04":
            raise BundleError(f"zip member {where} has no local header where listed")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        (flags,) = struct.unpack("<H", fields[:2])
        descriptor = bool(flags & 0x8)
        if header[6:10] != fields[:4] or f.read(name_len) != name:
            raise BundleError(f"zip member {where}: local header and central directory disagree")
        if not descriptor and header[14:26] != fields[8:20]:
            raise BundleError(f"zip member {where}: local header and central directory disagree")
        (size,) = struct.unpack("<I", fields[12:16])
        position = local + 30 + name_len + extra_len + size
        if descriptor:  # crc and sizes after the data, optionally signed
            f.seek(position)
            tail = f.read(16)
            signed = tail[:4] == b"PK\x07\x08"
            values = tail[4:16] if signed else tail[:12]
            if values != fields[8:20]:
                raise BundleError(
                    f"zip member {where}: data descriptor and central directory disagree"
                )
            position += 16 if signed else 12
    if position != end:
        raise BundleError("zip archive has unlisted bytes before its central directory")


def _zip_kind(info: zipfile.ZipInfo) -> str:
    if info.is_dir():
        return "dir"
    mode = info.external_attr >> 16
    fmt = stat.S_IFMT(mode)
    if info.create_system != 3 or not fmt or stat.S_ISREG(fmt):
        return "file"
    return {
        stat.S_IFLNK: "symlink",
        stat.S_IFDIR: "dir",
        stat.S_IFIFO: "fifo",
        stat.S_IFCHR: "device",
        stat.S_IFBLK: "device",
    }.get(fmt, "other")


# --- checking members against the manifest ---------------------------------------------------


@dataclass
class _Expect:
    skill: str
    path: str
    digest: str
    size: int | None
    executable: bool | None


class _Sink:
    """Where ``unpack`` writes verified members: a fresh directory of its own."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def open(self, name: str) -> tuple[IO[bytes], Path]:
        parts = name.split("/")
        current = self.root
        for part in parts[:-1]:
            current = current / part
            if not current.is_dir():
                os.mkdir(current)
                os.chmod(current, 0o755)
        path = current / parts[-1]
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags | getattr(os, "O_BINARY", 0), 0o600)
        return os.fdopen(fd, "wb"), path


@dataclass
class _Checker:
    """Checks each member against the manifest; the only place members are judged."""

    expected: dict[str, _Expect]
    limits: Limits
    check_modes: bool = True
    sink: _Sink | None = None
    where: str = "archive"
    seen: dict[str, str] = field(default_factory=dict)  # collision key -> name
    dirs: dict[str, str] = field(default_factory=dict)  # collision key of parents -> name
    refs: dict[str, Any] = field(default_factory=dict)  # name -> how to read it again
    total: int = 0
    count: int = 0

    def member(self, m: _Member, chunks: Callable[..., Iterator[bytes]]) -> None:
        self.count += 1
        if self.count > self.limits.max_members:
            raise BundleError(f"more than {self.limits.max_members} members")
        if m.kind == "dir":  # tar and zip spell directory entries with a trailing slash
            m.name = m.name.rstrip("/")
        problem = path_problem(m.name)
        if problem:
            raise BundleError(f"unsafe member path {show(m.name)}: {problem}")
        if m.kind != "file":
            reason = _KIND_REASONS.get(m.kind, _KIND_REASONS["other"])
            raise BundleError(f"member {show(m.name)} {reason}")
        key = collision_key(m.name)
        if key in self.seen:
            what = "duplicate member" if self.seen[key] == m.name else "case-colliding members"
            raise BundleError(f"{what} {show(self.seen[key])} and {show(m.name)}")
        if key in self.dirs:
            raise BundleError(
                f"member {show(m.name)} collides with directory {show(self.dirs[key])}"
            )
        parts = m.name.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            pkey = collision_key(prefix)
            if pkey in self.seen:
                raise BundleError(f"member {show(m.name)} is below file {show(self.seen[pkey])}")
            self.dirs.setdefault(pkey, prefix)
        self.seen[key] = m.name
        expect = self.expected.get(m.name)
        if expect is None:
            raise BundleError(f"member {show(m.name)} is not listed in the manifest")
        if expect.size is not None and m.size != expect.size:
            raise BundleError(
                f"size mismatch for {show(m.name)}: {m.size} bytes, the manifest says {expect.size}"
            )
        self.total += m.size
        if self.total > self.limits.max_total_bytes:
            raise BundleError(
                f"files total more than {self.limits.max_total_bytes} bytes (decompression bomb?)"
            )
        if (
            self.check_modes
            and expect.executable is not None
            and bool(m.mode & 0o111) != expect.executable
        ):
            raise BundleError(f"mode of {show(m.name)} does not match the manifest's `executable`")
        digest = hashlib.sha256()
        size = 0
        out, path = self.sink.open(m.name) if self.sink else (None, None)
        try:
            for chunk in chunks():
                size += len(chunk)
                if size > m.size:
                    raise BundleError(f"{show(m.name)} is longer than its declared size")
                digest.update(chunk)
                if out is not None:
                    out.write(chunk)
        finally:
            if out is not None:
                out.close()
        if size != m.size:
            raise BundleError(f"{show(m.name)} is shorter than its declared size")
        if "sha256:" + digest.hexdigest() != expect.digest:
            raise BundleError(
                f"digest mismatch for {show(m.name)}: content differs from the manifest"
            )
        if path is not None:
            os.chmod(path, 0o755 if expect.executable else 0o644)
        self.refs[m.name] = m.ref

    def finish(self) -> None:
        missing = sorted(set(self.expected) - set(self.refs), key=lambda n: n.encode("utf-8"))
        if missing:
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise BundleError(
                f"{show(missing[0])} is listed in the manifest but missing "
                f"from the {self.where}{more}"
            )


_VALIDATOR: Any = None
_SCHEMA: dict[str, Any] | None = None
_FAST_CHECK: list[Callable[[Any], bool] | None] = []  # [] until compiled; [None]: cannot be


def _schema() -> dict[str, Any]:
    global _SCHEMA
    if _SCHEMA is None:
        schema_path = Path(__file__).parent / "schemas" / "manifest.schema.json"
        _SCHEMA = json.loads(schema_path.read_text(encoding="utf-8"))
    return _SCHEMA


def _validator() -> Any:
    global _VALIDATOR
    if _VALIDATOR is None:
        import jsonschema  # lazy: heavy, and only verify needs it

        _VALIDATOR = jsonschema.Draft202012Validator(_schema())
    return _VALIDATOR


# --- a fast path for the manifest schema -------------------------------------------------------
#
# jsonschema walks a 1,000-skill manifest in about a second. The schema uses a handful of
# keywords, so it is compiled once into plain Python checks that accept a manifest only when
# jsonschema would (they may refuse more: integers must be ints, not 1.0); anything they refuse
# goes to jsonschema, which then gives the verdict and the message. A schema using any other
# keyword gets no fast path at all.

_ANNOTATIONS = frozenset({"$schema", "$id", "$comment", "$defs", "title", "description"})
_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "object": lambda x: isinstance(x, dict),
    "array": lambda x: isinstance(x, list),
    "string": lambda x: isinstance(x, str),
    "integer": lambda x: type(x) is int,
    "boolean": lambda x: type(x) is bool,
    "null": lambda x: x is None,
}


def _compile_schema(schema: Any, root: dict[str, Any], defs: dict[str, Any]) -> Any:
    """A check ``f(instance) -> bool`` for ``schema`` (see above), or None when the schema
    uses something the fast path does not implement."""
    if not isinstance(schema, dict):
        return None
    if schema is not root and "$id" in schema:  # "#/..." would then mean that resource
        return None
    checks: list[Callable[..., bool]] = []  # (x) -> bool; the rest are bound defaults
    plain_contains = not {"minContains", "maxContains"} & set(schema)  # "at least one"
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "type":
            check = _TYPE_CHECKS.get(value) if isinstance(value, str) else None
            if check is None:
                return None
            checks.append(check)
        elif key == "$ref":
            if not isinstance(value, str) or not value.startswith("#/$defs/"):
                return None
            name = value.removeprefix("#/$defs/")
            target = root.get("$defs", {}).get(name)
            if target is None:
                return None
            if name not in defs:
                defs[name] = None  # a recursive reference fails the compilation below
                defs[name] = _compile_schema(target, root, defs)
            ref = defs[name]
            if ref is None:
                return None
            checks.append(ref)
        elif key == "required" and isinstance(value, list):
            names = tuple(value)
            checks.append(lambda x, n=names: not isinstance(x, dict) or all(k in x for k in n))
        elif key == "properties" and isinstance(value, dict):
            props = {}
            for name, sub in value.items():
                props[name] = _compile_schema(sub, root, defs)
                if props[name] is None:
                    return None

            def properties(x: Any, props: dict[str, Any] = props) -> bool:
                if not isinstance(x, dict):
                    return True
                return all(check(x[name]) for name, check in props.items() if name in x)

            checks.append(properties)
        elif key == "items" and isinstance(value, dict):
            item = _compile_schema(value, root, defs)
            if item is None:
                return None
            checks.append(lambda x, f=item: not isinstance(x, list) or all(map(f, x)))
        elif key == "contains" and isinstance(value, dict) and plain_contains:
            item = _compile_schema(value, root, defs)
            if item is None:
                return None
            checks.append(lambda x, f=item: not isinstance(x, list) or any(map(f, x)))
        elif key == "const" and isinstance(value, str):
            checks.append(lambda x, c=value: isinstance(x, str) and x == c)
        elif key == "pattern" and isinstance(value, str):
            regex = re.compile(value)  # what jsonschema does: re.search
            checks.append(lambda x, r=regex: not isinstance(x, str) or r.search(x) is not None)
        elif key in ("minLength", "maxLength", "minItems") and type(value) is int:
            kind: type = list if key == "minItems" else str
            if key == "maxLength":
                checks.append(lambda x, n=value, k=kind: not isinstance(x, k) or len(x) <= n)
            else:
                checks.append(lambda x, n=value, k=kind: not isinstance(x, k) or len(x) >= n)
        elif key == "minimum" and type(value) is int:
            checks.append(lambda x, n=value: type(x) is int and x >= n)
        else:
            return None
    return _all_of(checks)


def _all_of(checks: list[Callable[[Any], bool]]) -> Callable[[Any], bool]:
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda x: first(x) and second(x)
    head, rest = checks[0], _all_of(checks[1:])
    return lambda x: head(x) and rest(x)


def _fast_schema_check() -> Callable[[Any], bool] | None:
    if not _FAST_CHECK:
        _FAST_CHECK.append(_compile_schema(_schema(), _schema(), {}))
    return _FAST_CHECK[0]


def _schema_error(manifest: Any) -> Any:
    """jsonschema's best error for ``manifest``, or None when it is valid."""
    check = _fast_schema_check()
    if check is not None and check(manifest):
        return None
    from jsonschema.exceptions import best_match

    return best_match(_validator().iter_errors(manifest))


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise BundleError(f"manifest has duplicate key {show(key)}")
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise BundleError(f"manifest contains {name}, which is not JSON")


def _check_sizes(manifest: dict[str, Any]) -> None:
    """Every file of a bundle has an integer ``size``: the loader reads exactly that much."""
    for entry in manifest["skills"]:
        for fe in entry["files"]:
            size = fe.get("size")
            if type(size) is not int:
                where = show(f"{entry['name']}/{fe['path']}")
                found = "no size" if size is None else f"size {json.dumps(size)}"
                raise BundleError(f"manifest file {where} has {found}; an integer is required")


def parse_manifest(
    data: bytes, limits: Limits = DEFAULT_LIMITS, *, rfc_paths: bool = False
) -> dict[str, Any]:
    """Parse and check a manifest without trusting it: strict UTF-8 JSON without duplicate
    keys, valid against ``manifest.schema.json``, unique names, safe and non-colliding paths
    (the RFC's path rules too when ``rfc_paths``), bounded counts and sizes, and every skill
    digest equal to the one its files' digests give."""
    if len(data) > limits.max_manifest_bytes:
        raise BundleError(f"manifest is larger than {limits.max_manifest_bytes} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise BundleError("manifest is not UTF-8") from None
    try:
        manifest = json.loads(
            text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant
        )
    except (ValueError, RecursionError) as exc:
        raise BundleError(f"manifest is not valid JSON: {str(exc).splitlines()[0]}") from None
    error = _schema_error(manifest)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        message = " ".join(error.message.split())
        if len(message) > 160:
            message = message[:160] + "…"
        raise BundleError(f"manifest does not match its schema at {where}: {message}")
    _check_sizes(manifest)
    check = _fast_schema_check()
    if check is not None and not check(manifest):
        # jsonschema takes 1.0 for an integer and True for 1; the loader must not
        raise BundleError("manifest holds a non-integer number where an integer is required")
    names: set[str] = set()
    files = 0
    total = 0
    for entry in manifest["skills"]:
        name = entry["name"]
        if name in names:
            raise BundleError(f"manifest lists skill {show(name)} twice")
        names.add(name)
        keys: set[str] = set()
        for fe in entry["files"]:
            path = fe["path"]
            problem = (rfc_path_problem if rfc_paths else path_problem)(path)
            if problem:
                raise BundleError(f"manifest path {show(name + '/' + path)}: {problem}")
            key = collision_key(path)
            if key in keys:
                raise BundleError(
                    f"manifest lists {show(name + '/' + path)} twice (or case-colliding)"
                )
            keys.add(key)
            total += fe.get("size", 0)
        files += len(entry["files"])
        if skill_digest((fe["path"], fe["digest"]) for fe in entry["files"]) != entry["digest"]:
            raise BundleError(f"skill digest of {show(name)} does not match its files' digests")
    if files > limits.max_members:
        raise BundleError(f"manifest lists more than {limits.max_members} files")
    if total > limits.max_total_bytes:
        raise BundleError(f"manifest files total more than {limits.max_total_bytes} bytes")
    return manifest


def _expectations(manifest: dict[str, Any], prefix: bool = True) -> dict[str, _Expect]:
    expected = {}
    for entry in manifest["skills"]:
        for fe in entry["files"]:
            name = f"{entry['name']}/{fe['path']}" if prefix else fe["path"]
            expected[name] = _Expect(
                entry["name"], fe["path"], fe["digest"], fe.get("size"), fe.get("executable")
            )
    return expected


# --- verification ----------------------------------------------------------------------------


@dataclass(frozen=True)
class VerifyResult:
    """What ``verify`` established about a bundle."""

    path: Path
    # "tar.gz", "zip", "well-known", "directory" (an unpacked bundle) or "installed" (a DEST)
    kind: str
    digest: str  # sha256 of the bundle file; of index.json / manifest.json for a directory
    manifest: dict[str, Any]
    files: int
    size: int  # bytes of all files, uncompressed
    refs: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    manifest_bytes: bytes = field(default=b"", repr=False, compare=False)
    warnings: tuple[str, ...] = field(default=(), compare=False)  # e.g. skipped index entries

    @property
    def skills(self) -> list[str]:
        return [entry["name"] for entry in self.manifest["skills"]]

    def summary(self) -> str:
        skills = len(self.manifest["skills"])
        return (
            f"{self.path}: OK ({self.kind}, {skills} skill{'s' * (skills != 1)}, "
            f"{self.files} file{'s' * (self.files != 1)}, {self.size} bytes, {self.digest})"
        )


def _sha256_file(f: IO[bytes]) -> str:
    f.seek(0)
    digest = hashlib.sha256()
    while chunk := f.read(_CHUNK):
        digest.update(chunk)
    f.seek(0)
    return "sha256:" + digest.hexdigest()


def _detect(f: IO[bytes]) -> str:
    head = f.read(4)
    f.seek(0)
    if head[:2] == b"\x1f\x8b":
        return "tar.gz"
    if head in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    raise BundleError("not a bundle (neither a gzip-compressed tar nor a zip archive)")


def _check_archive(
    f: IO[bytes],
    kind: str,
    limits: Limits,
    sink: _Sink | None,
    expected: dict[str, _Expect] | None = None,
) -> tuple[dict[str, Any] | None, bytes | None, _Checker]:
    """Check an archive's members. ``expected`` None: a bundle, whose manifest comes first
    (tar) or in the comment (zip); otherwise a per-skill package checked against it."""
    manifest = manifest_bytes = None
    if kind == "tar.gz":
        reader = _TarReader(f, limits)
        members = reader.members()
        if expected is None:
            first = next(members, None)
            if first is None or first.name != MANIFEST_NAME or first.kind != "file":
                found = "nothing" if first is None else show(first.name)
                raise BundleError(f"manifest.json must be the first member (found {found})")
            if first.size > limits.max_manifest_bytes:
                raise BundleError(f"manifest.json is larger than {limits.max_manifest_bytes} bytes")
            manifest_bytes = b"".join(reader.chunks(first))
            manifest = parse_manifest(manifest_bytes, limits)
            expected = _expectations(manifest)
        checker = _Checker(expected, limits, sink=sink)
        for m in members:
            checker.member(m, lambda m=m: reader.chunks(m))
    else:
        _check_zip_directory(f, limits)
        try:
            zf = zipfile.ZipFile(f)
        except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
            raise BundleError(f"not a valid zip archive: {exc}") from None
        with zf:
            infos = zf.infolist()
            if expected is None:
                if infos and infos[0].filename == MANIFEST_NAME:
                    info = infos.pop(0)
                    if info.file_size > limits.max_manifest_bytes:
                        raise BundleError(
                            f"manifest.json is larger than {limits.max_manifest_bytes} bytes"
                        )
                    manifest_bytes = _zip_read(zf, info, limits.max_manifest_bytes)
                elif zf.comment:
                    manifest_bytes = zf.comment
                else:
                    raise BundleError(
                        "no manifest (no archive comment, no first member manifest.json)"
                    )
                manifest = parse_manifest(manifest_bytes, limits)
                expected = _expectations(manifest)
            checker = _Checker(expected, limits, sink=sink)
            for info in infos:
                if info.flag_bits & 0x1:
                    raise BundleError(f"member {show(info.filename)} is encrypted")
                if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                    raise BundleError(
                        f"member {show(info.filename)} uses an unsupported compression method"
                    )
                m = _Member(
                    info.filename,
                    _zip_kind(info),
                    info.file_size,
                    info.external_attr >> 16,
                    info.filename,
                )
                checker.member(m, lambda info=info: _zip_chunks(zf, info))
    checker.finish()
    return manifest, manifest_bytes, checker


def _zip_chunks(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    try:
        with zf.open(info) as fh:
            while chunk := fh.read(_CHUNK):
                yield chunk
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as exc:
        raise BundleError(f"corrupt zip member {show(info.filename)}: {exc}") from None


def _zip_read_exact(zf: zipfile.ZipFile, info: zipfile.ZipInfo, size: int) -> bytes:
    """A member's first ``size`` + 1 bytes at most: what the manifest says it holds, plus
    one to tell a longer member (a bomb swapped in after verification) without reading it."""
    try:
        with zf.open(info) as fh:
            data = fh.read(size + 1)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError) as exc:
        raise BundleError(f"corrupt zip member {show(info.filename)}: {exc}") from None
    if len(data) > size:
        raise BundleError(f"{show(info.filename)} is longer than its declared size")
    return data


def _zip_read(zf: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    data = b"".join(_zip_chunks(zf, info))
    if len(data) > limit:
        raise BundleError(f"{show(info.filename)} is larger than {limit} bytes")
    return data


def _open_regular(path: Path) -> IO[bytes]:
    """Open a bundle file for reading; a FIFO or device there fails instead of blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise BundleIOError(f"{path}: cannot open: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise BundleIOError(f"{path}: not a regular file")
    return os.fdopen(fd, "rb")


def _verify_file(
    path: Path, limits: Limits, expect: str | None, sink: _Sink | None = None
) -> VerifyResult:
    with _open_regular(path) as f:
        digest = _sha256_file(f)
        if expect is not None and digest != expect:
            raise BundleError(f"bundle digest is {digest}, expected {expect}")
        kind = _detect(f)
        manifest, manifest_bytes, checker = _check_archive(f, kind, limits, sink)
    assert manifest is not None and manifest_bytes is not None
    return VerifyResult(
        path, kind, digest, manifest, len(checker.refs), checker.total, checker.refs, manifest_bytes
    )


def _walk_dir(root: Path, top: str, limits: Limits) -> Iterator[_Member]:
    """Every entry under ``root/top`` as a member, without following any link."""
    stack = [top]
    count = 0
    while stack:
        rel_dir = stack.pop()
        try:
            entries = sorted(os.scandir(root / rel_dir), key=lambda e: e.name)
        except OSError as exc:
            raise BundleError(f"{root / rel_dir}: cannot read: {exc.strerror or exc}") from None
        for entry in entries:
            count += 1
            if count > limits.max_members:
                raise BundleError(f"more than {limits.max_members} files")
            rel = f"{rel_dir}/{entry.name}"
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                stack.append(rel)
                continue
            if stat.S_ISREG(st.st_mode):
                kind = "file"
            elif stat.S_ISLNK(st.st_mode):
                kind = "symlink"
            elif stat.S_ISFIFO(st.st_mode):
                kind = "fifo"
            elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                kind = "device"
            else:
                kind = "other"
            yield _Member(rel, kind, st.st_size, st.st_mode, rel)
