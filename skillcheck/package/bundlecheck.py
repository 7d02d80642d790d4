"""What a bundle holds, checked against its manifest: the manifest's parsing (with a fast
path for its JSON Schema), member-by-member checks and whole-archive verification.

Moved out of ``bundle.py``; the loader (``skillcheck.package.loader``) and the writers use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from skillcheck.package.archive import (
    _CHUNK,
    _KIND_REASONS,
    DEFAULT_LIMITS,
    MANIFEST_NAME,
    BundleError,
    BundleIOError,
    Limits,
    _Member,
    _TarReader,
    _zip_kind,
    check_zip_member,
    open_zip,
)
from skillcheck.package.catalog import (
    MANIFEST_SCHEMA,
    collision_key,
    path_problem,
    rfc_path_problem,
    show,
    skill_digest,
)
from skillcheck.schemas import load_schema
from skillcheck.schemas.subset import is_valid

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


def _schema() -> dict[str, Any]:
    global _SCHEMA
    if _SCHEMA is None:
        _SCHEMA = load_schema("manifest.schema.json")
    return _SCHEMA


def _validator() -> Any:
    global _VALIDATOR
    if _VALIDATOR is None:
        import jsonschema  # lazy: heavy, and only verify needs it

        _VALIDATOR = jsonschema.Draft202012Validator(_schema())
    return _VALIDATOR


def _subset_refuses(manifest: Any) -> bool | None:
    """Whether the subset validator (``schemas.subset``) refuses ``manifest``, in a fraction
    of jsonschema's time; None when the schema outgrew the subset. It refuses more than
    jsonschema (integers must be ints, not 1.0 or True)."""
    try:
        return not is_valid(manifest, _schema())
    except ValueError:
        return None


def _schema_error(manifest: Any) -> tuple[Any, bool]:
    """(jsonschema's best error for ``manifest`` or None, whether the subset validator refused
    it). What the subset validator refuses goes to jsonschema for the verdict and the
    message, so a manifest jsonschema accepts but the subset refuses holds such a number."""
    refused = _subset_refuses(manifest)
    if refused is None:  # jsonschema alone decides
        return _best_error(manifest), False
    return (_best_error(manifest) if refused else None), refused


def _best_error(manifest: Any) -> Any:
    from jsonschema.exceptions import best_match

    return best_match(_validator().iter_errors(manifest))


def valid_pack_record(record: Any) -> bool:
    """Whether ``record`` (read back from the result cache) has the shape of
    ``catalog.pack_record``: an error, or a manifest entry the schema accepts (checked as a
    one-skill manifest) with its links; anything else is a cache miss."""
    if type(record) is not dict:
        return False
    if "error" in record:
        return type(record["error"]) is str and type(record.get("vanished")) is bool
    entry, links = record.get("entry"), record.get("links")
    if type(entry) is not dict or type(links) is not dict:
        return False
    if not all(type(k) is str and type(v) is str for k, v in links.items()):
        return False
    manifest = {"$schema": MANIFEST_SCHEMA, "generator": "skillcheck", "skills": [entry]}
    # a refused record is a miss: no message is needed, so jsonschema is not asked for one
    refused = _subset_refuses(manifest)
    return not refused if refused is not None else _best_error(manifest) is None


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
    error, refused = _schema_error(manifest)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        message = " ".join(error.message.split())
        if len(message) > 160:
            message = message[:160] + "…"
        raise BundleError(f"manifest does not match its schema at {where}: {message}")
    _check_sizes(manifest)
    if refused:
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


def _upload_hint(infos: list[zipfile.ZipInfo]) -> str:
    """What a manifest-less zip most likely is: a claude.ai upload (one top-level folder
    holding SKILL.md, as ``pack --uploads`` writes) carries no manifest by design."""
    tops = {info.filename.split("/", 1)[0] for info in infos}
    if len(tops) == 1 and f"{next(iter(tops))}/SKILL.md" in {i.filename for i in infos}:
        return (
            "; this looks like a claude.ai upload zip, which has none: check its skill with"
            " `skillcheck lint` after unzipping it, or compare the digest `pack --uploads` printed"
        )
    return ""


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
        with open_zip(f, limits) as zf:
            infos = zf.infolist()
            if expected is None:
                if infos and infos[0].filename == MANIFEST_NAME:
                    info = infos.pop(0)
                    check_zip_member(info)  # zipfile raises RuntimeError on an encrypted one
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
                        + _upload_hint(infos)
                    )
                manifest = parse_manifest(manifest_bytes, limits)
                expected = _expectations(manifest)
            checker = _Checker(expected, limits, sink=sink)
            for info in infos:
                check_zip_member(info)
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
