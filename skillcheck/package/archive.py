"""Bundle archives: their constants, size limits and errors, and the readers that trust
nothing (our own tar reader, zip directory checks), bounding every size before reading it.

Moved out of ``bundle.py`` (which writes archives) with ``bundlecheck.py`` (which checks
what they hold): the reading side imports nothing from the writing side.
"""

from __future__ import annotations

import gzip
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from skillcheck.errors import EXIT_ERROR, RefusedContent
from skillcheck.package.catalog import (
    show,
)

# 1980-01-01T00:00:00Z: the earliest time a zip entry can carry (and what Python wheels use)
DEFAULT_MTIME = 315532800
MANIFEST_NAME = "manifest.json"  # in a bundle and an unpacked bundle
INDEX_NAME = "index.json"  # in a well-known directory
INSTALLED_NAME = ".skillcheck-installed.json"  # our manifest of what `install` put in DEST
FORMATS = ("tar.gz", "zip")
# gzip and `git archive`'s default. Measured on 1,000 generated skills (2026-11-24): a warm
# pack in 1.57 s instead of 1.95 s at level 9, for 4 % more bytes. Bytes are reproducible for
# a given zlib, not across levels: this release changes every bundle anyway (the manifest).
GZIP_LEVEL = 6

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


def open_zip(f: IO[bytes], limits: Limits) -> zipfile.ZipFile:
    """An untrusted zip, opened only once every byte of it is accounted for
    (``_check_zip_directory``); a file zipfile cannot read is a ``BundleError``."""
    _check_zip_directory(f, limits)
    try:
        return zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise BundleError(f"not a valid zip archive: {exc}") from None


def check_zip_member(info: zipfile.ZipInfo) -> None:
    """Refuse a member the readers cannot decode: encrypted, or another compression."""
    if info.flag_bits & 0x1:
        raise BundleError(f"member {show(info.filename)} is encrypted")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise BundleError(f"member {show(info.filename)} uses an unsupported compression method")


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
