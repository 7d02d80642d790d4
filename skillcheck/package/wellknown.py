"""The Agent Skills Discovery RFC v0.2.0 as merged (cloudflare/agent-skills-discovery-rfc,
README at commit 1bd1167): publishing a well-known directory, and reading anyone's
publication without trusting it.

A publication is ``index.json`` = ``{"$schema": RFC_SCHEMA, "skills": [entry...]}`` where each
entry has ``name``, ``type`` (``skill-md`` or ``archive``), ``description``, ``url`` and
``digest`` (``sha256:`` + hex SHA-256 of the artifact's raw bytes). ``url`` resolves per
RFC 3986 against the index URL. An archive holds the skill's files at its root.

skillcheck writes beside the index its own manifest (``manifest.json``, identified by
``catalog.MANIFEST_SCHEMA``: per-file digests, sizes, modes, tokens); when a publication
carries it, every artifact must match it file for file. RFC clients ignore it.

Reading is one pipeline for ``verify DIR``, ``install`` and the loader: parse the index
(unknown ``$schema`` refused; none = v0.1.0, which has no digests and is read only when
the caller accepts unverified content), fetch each artifact through a ``Source`` (a local
directory, or HTTP in ``skillcheck.package.install``), check its digest before anything else, then
open archives with the strict, bounded readers of ``skillcheck.package.bundle``.
"""

from __future__ import annotations

import io
import json
import os
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillcheck.errors import SkillcheckError, UsageError
from skillcheck.package.archive import (
    DEFAULT_LIMITS,
    INDEX_NAME,
    MANIFEST_NAME,
    BundleError,
    BundleIOError,
    Limits,
    _check_mtime,
    _TarReader,
    _zip_kind,
    check_zip_member,
    default_mtime,
    open_zip,
)
from skillcheck.package.bundle import (
    _atomic_write,
    _check_outside_skills,
    _content,
    _is_ours,
    _plan,
    _write_new_file,
    _write_tar_gz,
    _write_zip,
    building_dir,
)
from skillcheck.package.bundlecheck import (
    VerifyResult,
    _no_duplicate_keys,
    _reject_constant,
    _zip_chunks,
    parse_manifest,
)
from skillcheck.package.catalog import (
    MANIFEST_SCHEMA,
    SKILL_FILE,
    CatalogError,
    collision_key,
    dumps_manifest,
    file_digest,
    path_problem,
    read_in_root,
    rfc_path_problem,
    show,
    skill_digest,
)
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import Skill

RFC_SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
WELL_KNOWN = "/.well-known/agent-skills/"
TYPES = ("skill-md", "archive")
ARCHIVE_FORMATS = ("tar.gz", "zip")
_NAME_RE = LazyPattern(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_DIGEST_RE = LazyPattern(r"^sha256:[0-9a-f]{64}$")
# where a local directory is imagined to be served, to resolve its URLs per RFC 3986
_LOCAL_ORIGIN = "https://publication.invalid"
_CONTENT_TYPES = {
    "application/gzip": "tar.gz",
    "application/x-gzip": "tar.gz",
    "application/x-tar+gzip": "tar.gz",
    "application/x-gtar": "tar.gz",
    "application/zip": "zip",
    "application/x-zip-compressed": "zip",
}


class UnverifiableError(BundleError):
    """A v0.1.0 index (no ``$schema``): it carries no digests, so nothing can be verified."""


class SelectionError(UsageError):
    """A skill asked for by name is not in the index: a usage problem (exit 2)."""


class FetchError(SkillcheckError):
    """An artifact or index could not be fetched (network, HTTP status, missing file): an
    I/O problem (exit 2), not a verdict on the content."""


# --- publishing -----------------------------------------------------------------------------


def url_text_problem(url: str) -> str | None:
    """Why ``url`` is not a URL as written, or None: a space or control character (urllib
    would drop a CR-LF silently, and send a space or NUL raw) must be percent-encoded."""
    if any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in url):
        return "a URL may not hold spaces or control characters (percent-encode them)"
    return None


def base_url_problem(base_url: str | None) -> str | None:
    """Why ``base_url`` cannot prefix the artifact URLs of a publication, or None."""
    if not base_url:
        return None
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        return f"--base-url {base_url!r} is not an absolute http(s) URL"
    return None


def publish(
    skills: list[Skill],
    manifest: dict[str, Any],
    out_dir: Path,
    base_url: str | None = None,
    mtime: int | None = None,
    archive_format: str = "tar.gz",
) -> dict[str, Any]:
    """Write ``out_dir`` to serve as ``/.well-known/agent-skills/``; return the RFC index.

    A skill that ships only ``SKILL.md`` is ``type: "skill-md"`` at ``{name}/SKILL.md``; any
    other is ``type: "archive"`` at ``{name}.tar.gz`` (or ``.zip``), files at the archive
    root, reproducible. ``url`` is relative to the index, or ``base_url`` + the same path when
    given (``base_url`` = where ``out_dir`` is served). ``manifest`` (``catalog.
    build_manifest``) is written beside the index as ``manifest.json``. The directory is built
    beside ``out_dir`` (parents created) and renamed into place; an existing ``out_dir`` is
    replaced only when empty or written by skillcheck.
    """
    if archive_format not in ARCHIVE_FORMATS:
        raise BundleError(f"unknown archive format {archive_format!r} (choose tar.gz or zip)")
    mtime = default_mtime() if mtime is None else _check_mtime(mtime)
    problem = base_url_problem(base_url)
    if problem:
        raise BundleError(problem)
    prefix = base_url.rstrip("/") + "/" if base_url else ""
    out_dir = Path(out_dir)
    _check_outside_skills(skills, out_dir)
    plan = _plan(skills, manifest)
    for packed in plan:
        for fe, _ in packed.files:
            problem = rfc_path_problem(fe["path"])
            if problem:
                raise BundleError(
                    f"{packed.skill.display_root}/{fe['path']}: {problem} "
                    "(required for the well-known layout)"
                )
    parent = out_dir.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BundleIOError(f"{parent}: cannot create: {exc.strerror or exc}") from None
    if os.path.lexists(out_dir) and (out_dir.is_symlink() or not _is_ours(out_dir)):
        raise BundleIOError(
            f"{out_dir}: exists and is not a skillcheck output directory; refusing to replace it"
        )
    manifest_bytes = dumps_manifest(manifest)
    parse_manifest(manifest_bytes, rfc_paths=True)  # never publish what verify would refuse
    with building_dir(out_dir.absolute()) as tmp:
        entries = []
        for packed in plan:
            name = packed.entry["name"]
            members = sorted(
                (
                    (fe["path"], _content(packed, fe, sf), bool(fe["executable"]))
                    for fe, sf in packed.files
                ),
                key=lambda m: m[0].encode("utf-8"),
            )
            if [m[0] for m in members] == [SKILL_FILE]:
                kind, rel, data = "skill-md", f"{name}/{SKILL_FILE}", members[0][1]
            else:
                kind, rel = "archive", f"{name}.{archive_format}"
                out = io.BytesIO()
                if archive_format == "tar.gz":
                    _write_tar_gz(out, members, mtime)
                else:
                    _write_zip(out, members, mtime, b"")
                data = out.getvalue()
            _write_new_file(tmp, rel, data, False)
            entries.append(
                {
                    "name": name,
                    "type": kind,
                    "description": packed.entry["description"],
                    "url": prefix + rel,
                    "digest": file_digest(data),
                }
            )
        index = {"$schema": RFC_SCHEMA, "skills": entries}
        _write_new_file(tmp, INDEX_NAME, dumps_manifest(index), False)
        _write_new_file(tmp, MANIFEST_NAME, manifest_bytes, False)
    return index


def pack_uploads(
    skills: list[Skill], manifest: dict[str, Any], out_dir: Path, mtime: int | None = None
) -> list[tuple[str, str]]:
    """Write ``out_dir/<name>.zip`` per skill: what claude.ai and the Skills API take (one
    top-level folder ``<name>/`` holding SKILL.md), reproducible, no manifest inside or in a
    comment. ``out_dir`` and its parents are created; existing zips of these names are
    replaced atomically. Returns ``(file name, digest)`` pairs."""

    mtime = default_mtime() if mtime is None else _check_mtime(mtime)
    out_dir = Path(out_dir)
    _check_outside_skills(skills, out_dir)
    plan = _plan(skills, manifest)
    parse_manifest(dumps_manifest(manifest))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BundleError(f"{out_dir}: cannot create: {exc.strerror or exc}") from None
    written = []
    for packed in plan:
        name = packed.entry["name"]
        members = sorted(
            (
                (f"{name}/{fe['path']}", _content(packed, fe, sf), bool(fe["executable"]))
                for fe, sf in packed.files
            ),
            key=lambda m: m[0].encode("utf-8"),
        )

        def write(out: Any, members: list[tuple[str, bytes, bool]] = members) -> None:
            _write_zip(out, members, mtime, b"")

        written.append((f"{name}.zip", _atomic_write(out_dir / f"{name}.zip", write, False)))
    return written


# --- reading an index -----------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One skill entry of an index (v0.2.0), or of a v0.1.0 index (``files`` set, no digest)."""

    name: str
    type: str
    description: str
    url: str
    digest: str | None
    files: tuple[str, ...] = ()


@dataclass
class Index:
    schema: str | None  # None: v0.1.0
    entries: list[Entry]
    warnings: list[str] = field(default_factory=list)


def _field(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value:
        raise BundleError(f"{where}: `{key}` must be a non-empty string")
    return value


def parse_index(data: bytes, *, allow_unverified: bool = False) -> Index:
    """Parse ``index.json`` without trusting it (strict UTF-8 JSON, no duplicate keys).

    ``$schema`` must be ``RFC_SCHEMA``; another value is refused (the RFC: clients SHOULD
    NOT process an unrecognized schema). No ``$schema`` is a v0.1.0 index, which has no
    digests: refused with ``UnverifiableError`` unless ``allow_unverified``. Entries of an
    unknown ``type`` are skipped with a warning, as the RFC asks; unknown fields are ignored.
    """
    try:
        doc = json.loads(
            data.decode("utf-8"),
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_reject_constant,
        )
    except UnicodeDecodeError:
        raise BundleError("index.json is not UTF-8") from None
    except (ValueError, RecursionError) as exc:
        raise BundleError(f"index.json is not valid JSON: {str(exc).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise BundleError("index.json is not a JSON object")
    schema = doc.get("$schema")
    if schema is None:
        if not allow_unverified:
            raise UnverifiableError(
                "index.json has no $schema: it is a v0.1.0 index, which carries no digests, "
                "so its skills cannot be verified (--allow-unverified accepts them as they are)"
            )
    elif schema != RFC_SCHEMA:
        raise BundleError(
            f"index.json has an unknown $schema {show(str(schema))}; skillcheck knows "
            f"{RFC_SCHEMA} (and v0.1.0, without $schema) and does not process other versions"
        )
    skills = doc.get("skills")
    if not isinstance(skills, list):
        raise BundleError("index.json: `skills` must be an array")
    index = Index(schema, [])
    names: set[str] = set()
    for i, raw in enumerate(skills):
        where = f"index.json skills[{i}]"
        if not isinstance(raw, dict):
            raise BundleError(f"{where}: not an object")
        name = _field(raw, "name", where)
        if len(name) > 64 or not _NAME_RE.match(name):
            raise BundleError(
                f"{where}: name {show(name)} is not a valid skill name (1-64 lowercase letters, "
                "digits and single hyphens, no hyphen at either end)"
            )
        where = f"index.json skill {show(name)}"
        if name in names:
            raise BundleError(f"{where}: listed twice")
        names.add(name)
        description = _field(raw, "description", where)
        if len(description) > 1024:
            raise BundleError(f"{where}: description longer than 1024 characters")
        if schema is None:
            files = raw.get("files")
            if not isinstance(files, list) or not files or SKILL_FILE not in files:
                raise BundleError(f"{where}: `files` must be a non-empty array with SKILL.md")
            for path in files:
                problem = rfc_path_problem(path) if isinstance(path, str) else "not a string"
                if problem:
                    raise BundleError(f"{where}: file {show(str(path))}: {problem}")
            index.entries.append(Entry(name, "v0.1.0", description, "", None, tuple(files)))
            continue
        kind = _field(raw, "type", where)
        if kind not in TYPES:
            index.warnings.append(f"{where}: unknown type {show(kind)}; skipped")
            continue
        url = _field(raw, "url", where)
        digest = _field(raw, "digest", where)
        if not _DIGEST_RE.match(digest):
            raise BundleError(
                f"{where}: digest {show(digest)} is not sha256: + 64 lowercase hex digits"
            )
        index.entries.append(Entry(name, kind, description, url, digest))
    return index


# --- sources --------------------------------------------------------------------------------


class Source:
    """Where a publication is read from. ``fetch`` returns the bytes, the Content-Type (or
    None) and the URL they came from (after redirects); at most ``limit`` bytes."""

    index_url: str

    def fetch(self, url: str, limit: int) -> tuple[bytes, str | None, str]:
        raise NotImplementedError

    def fetch_optional(self, url: str, limit: int) -> bytes | None:
        """The bytes at ``url``, or None when there is nothing there."""
        raise NotImplementedError


class LocalSource(Source):
    """A directory served as ``/.well-known/agent-skills/`` (holding ``index.json``) or as
    a site root (holding ``.well-known/agent-skills/index.json``). URLs resolve inside it:
    relative and path-absolute ones always, absolute ones when under ``base_url`` (the URL
    the directory holding ``index.json`` is served at)."""

    def __init__(self, path: Path, base_url: str | None = None) -> None:
        self.path = self.root = Path(path)
        if os.path.lexists(self.path / INDEX_NAME):
            self.prefix = WELL_KNOWN
        elif os.path.lexists(self.path / ".well-known" / "agent-skills" / INDEX_NAME):
            self.prefix = "/"
        else:
            raise FetchError(
                f"{self.path}: no index.json (nor .well-known/agent-skills/index.json)"
            )
        self.index_url = f"{_LOCAL_ORIGIN}{WELL_KNOWN}{INDEX_NAME}"
        self.base_url = base_url.rstrip("/") + "/" if base_url else None

    def relative(self, url: str) -> str:
        """The path inside the directory that ``url`` (already resolved) names."""
        if self.base_url and url.startswith(self.base_url):
            url = f"{_LOCAL_ORIGIN}{WELL_KNOWN}{url[len(self.base_url) :]}"
        parts = urllib.parse.urlsplit(url)
        if f"{parts.scheme}://{parts.netloc}" != _LOCAL_ORIGIN:
            hint = "" if self.base_url else " (pass --base-url with the URL the index is served at)"
            raise BundleError(f"URL {show(url)} points outside {self.path}{hint}")
        if parts.query:
            raise BundleError(f"URL {show(url)} has a query; a directory cannot serve it")
        path = urllib.parse.unquote(parts.path)
        if not path.startswith(self.prefix):
            raise BundleError(f"URL {show(url)} points outside {self.path}")
        rel = path[len(self.prefix) :]
        problem = path_problem(rel)
        if problem:
            raise BundleError(f"URL {show(url)} names no file in {self.path}: {problem}")
        return rel

    def fetch(self, url: str, limit: int) -> tuple[bytes, str | None, str]:
        try:
            return read_in_root(self.root, self.relative(url), limit), None, url
        except CatalogError as exc:
            raise FetchError(str(exc)) from None

    def fetch_optional(self, url: str, limit: int) -> bytes | None:
        rel = self.relative(url)
        if not os.path.lexists(self.root / rel):
            return None
        try:
            return read_in_root(self.root, rel, limit)
        except CatalogError as exc:
            raise FetchError(str(exc)) from None


# --- artifacts ------------------------------------------------------------------------------


@dataclass
class Artifact:
    """One skill of a publication, its artifact's digest checked and its files read."""

    entry: Entry
    url: str  # resolved
    fmt: str | None  # "tar.gz" / "zip" for an archive
    files: dict[str, tuple[bytes, bool]]  # path -> (content, executable), byte order
    verified: bool = True

    @property
    def size(self) -> int:
        return sum(len(data) for data, _ in self.files.values())


def archive_format(url: str, content_type: str | None, data: bytes) -> str:
    """The RFC's rule: the Content-Type, else (absent or generic) the URL's extension; and
    the bytes must then be what was declared."""
    ctype = (content_type or "").split(";")[0].strip().lower()
    fmt = _CONTENT_TYPES.get(ctype)
    if fmt is None:
        path = urllib.parse.urlsplit(url).path.lower()
        if path.endswith((".tar.gz", ".tgz")):
            fmt = "tar.gz"
        elif path.endswith(".zip"):
            fmt = "zip"
    if fmt is None:
        raise BundleError(
            f"cannot tell the archive format of {show(url)} (Content-Type "
            f"{show(ctype or 'absent')}, no .tar.gz or .zip extension)"
        )
    is_gzip = data[:2] == b"\x1f\x8b"
    is_zip = data[:4] in (b"PK\x03\x04", b"PK\x05\x06")
    if (fmt == "tar.gz" and not is_gzip) or (fmt == "zip" and not is_zip):
        raise BundleError(f"{show(url)} is served as {fmt} but its bytes are not a {fmt} archive")
    return fmt


_LINK_KINDS = {"symlink": "a symbolic link", "hardlink": "a hard link"}


class _Files:
    """Collects an archive's members with the checks every archive gets: safe relative
    paths, regular files only, no duplicate or case-colliding names, bounded total size."""

    def __init__(self, where: str, limits: Limits) -> None:
        self.where = where
        self.limits = limits
        self.files: dict[str, tuple[bytes, bool]] = {}
        self.keys: dict[str, str] = {}
        self.dirs: dict[str, str] = {}
        self.total = 0

    def add(
        self, name: str, kind: str, size: int, executable: bool, read: Callable[..., Any]
    ) -> None:
        while name.startswith("./"):  # `tar -C dir .` writes ./SKILL.md
            name = name[2:]
        if kind == "dir":
            name = name.rstrip("/")
            if name in ("", "."):
                return
        problem = path_problem(name)
        if problem:
            raise BundleError(f"{self.where}: unsafe member path {show(name)}: {problem}")
        if kind == "dir":
            self.dirs.setdefault(collision_key(name), name)
            return
        if kind != "file":
            what = _LINK_KINDS.get(kind, f"not a regular file ({kind})")
            raise BundleError(
                f"{self.where}: member {show(name)} is {what}; skillcheck accepts regular "
                "files only"
            )
        key = collision_key(name)
        if key in self.keys:
            what = "duplicate member" if self.keys[key] == name else "case-colliding members"
            raise BundleError(f"{self.where}: {what} {show(self.keys[key])} and {show(name)}")
        parts = name.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if collision_key(prefix) in self.keys:
                raise BundleError(f"{self.where}: member {show(name)} is below a file")
            self.dirs.setdefault(collision_key(prefix), prefix)
        self.keys[key] = name
        self.total += size
        if self.total > self.limits.max_total_bytes:
            raise BundleError(
                f"{self.where}: files total more than {self.limits.max_total_bytes} bytes "
                "(decompression bomb?)"
            )
        data = b"".join(read())
        if len(data) != size:
            raise BundleError(f"{self.where}: member {show(name)} does not have its declared size")
        self.files[name] = (data, executable)

    def finish(self) -> dict[str, tuple[bytes, bool]]:
        for key, name in self.keys.items():
            if key in self.dirs:
                raise BundleError(f"{self.where}: member {show(name)} collides with a directory")
        if SKILL_FILE not in self.files:
            tops = {n.split("/")[0] for n in self.files}
            hint = ""
            if len(tops) == 1 and f"{next(iter(tops))}/{SKILL_FILE}" in self.files:
                top = show(next(iter(tops)))
                hint = f" (it is inside the folder {top}/; the RFC puts files at the root)"
            raise BundleError(f"{self.where}: no SKILL.md at the archive root{hint}")
        return dict(sorted(self.files.items(), key=lambda item: item[0].encode("utf-8")))


def unpack_archive(
    data: bytes, fmt: str, where: str, limits: Limits = DEFAULT_LIMITS
) -> dict[str, tuple[bytes, bool]]:
    """An archive's files (already digest-checked) with the RFC's archive-safety rules and
    ours: see ``_Files``. Directory entries are accepted (and dropped); links are not."""
    files = _Files(where, limits)
    try:
        if fmt == "tar.gz":
            reader = _TarReader(io.BytesIO(data), limits)
            for m in reader.members():
                files.add(
                    m.name, m.kind, m.size, bool(m.mode & 0o111), lambda m=m: reader.chunks(m)
                )
        else:
            with open_zip(io.BytesIO(data), limits) as zf:
                for info in zf.infolist():
                    check_zip_member(info)
                    mode = info.external_attr >> 16 if info.create_system == 3 else 0
                    files.add(
                        info.filename,
                        _zip_kind(info),
                        info.file_size,
                        bool(mode & 0o111),
                        lambda info=info: _zip_chunks(zf, info),
                    )
    except BundleError as exc:
        message = str(exc)
        if not message.startswith(where):
            message = f"{where}: {message}"
        raise BundleError(message) from None
    return files.finish()


def _check_against_manifest(
    name: str, files: dict[str, tuple[bytes, bool]], mentry: dict[str, Any], modes: bool
) -> None:
    """Our stricter check: the artifact holds exactly the files our manifest lists, with
    their digests, sizes and (``modes``: an archive; a bare SKILL.md has none) modes."""
    expected = {fe["path"]: fe for fe in mentry["files"]}
    for path in sorted(set(expected) ^ set(files)):
        where = "manifest.json" if path in expected else "the artifact"
        other = "the artifact" if path in expected else "manifest.json"
        raise BundleError(f"skill {show(name)}: {show(path)} is in {where} but not in {other}")
    for path, (data, executable) in files.items():
        fe = expected[path]
        if file_digest(data) != fe["digest"] or len(data) != fe.get("size", len(data)):
            raise BundleError(f"skill {show(name)}: {show(path)} differs from manifest.json")
        if modes and "executable" in fe and fe["executable"] != executable:
            raise BundleError(
                f"skill {show(name)}: mode of {show(path)} does not match manifest.json"
            )


def read_skill(
    source: Source,
    index_url: str,
    entry: Entry,
    limits: Limits = DEFAULT_LIMITS,
    mentry: dict[str, Any] | None = None,
) -> Artifact:
    """Fetch one skill's artifact, check its digest before anything else, then read its
    files (archives: see ``unpack_archive``; ``mentry``: our manifest's entry to match)."""
    where = f"skill {show(entry.name)}"
    if entry.digest is None:  # v0.1.0: each listed file from {name}/{path}, unverified
        files: dict[str, tuple[bytes, bool]] = {}
        total = 0
        for path in entry.files:
            url = urllib.parse.urljoin(index_url, f"{entry.name}/{urllib.parse.quote(path)}")
            data, _, _ = source.fetch(url, limits.max_total_bytes - total)
            total += len(data)
            files[path] = (data, False)
        files = dict(sorted(files.items(), key=lambda item: item[0].encode("utf-8")))
        where_from = urllib.parse.urljoin(index_url, entry.name + "/")
        return Artifact(entry, where_from, None, files, verified=False)
    problem = url_text_problem(entry.url)
    if problem:  # before urljoin, which drops tabs and line breaks without a word
        raise BundleError(f"{where}: url {show(entry.url)}: {problem}")
    url = urllib.parse.urljoin(index_url, entry.url)
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise BundleError(f"{where}: url {show(entry.url)} is not an http(s) URL")
    data, content_type, final = source.fetch(url, limits.max_total_bytes)
    actual = file_digest(data)
    if actual != entry.digest:
        raise BundleError(
            f"{where}: digest mismatch: {show(url)} has {actual}, the index says "
            f"{entry.digest} (tampered or stale; nothing of it is used)"
        )
    fmt = None
    if entry.type == "skill-md":
        files = {SKILL_FILE: (data, False)}
    else:
        fmt = archive_format(final, content_type, data)
        files = unpack_archive(data, fmt, where, limits)
    if mentry is not None:
        _check_against_manifest(entry.name, files, mentry, modes=fmt is not None)
    return Artifact(entry, url, fmt, files)


@dataclass
class Publication:
    index_url: str
    index_bytes: bytes
    index: Index
    manifest: dict[str, Any] | None  # ours, when published beside the index
    skills: list[Artifact]

    @property
    def verified(self) -> bool:
        return self.index.schema is not None


def _our_manifest(source: Source, index_url: str, limits: Limits) -> dict[str, Any] | None:
    """Our manifest beside the index, if the publication carries one (a ``manifest.json`` of
    another format is someone else's file, and ignored)."""
    url = urllib.parse.urljoin(index_url, MANIFEST_NAME)
    data = source.fetch_optional(url, limits.max_manifest_bytes)
    if data is None:
        return None
    try:
        schema = json.loads(data).get("$schema")
    except (ValueError, AttributeError, RecursionError):
        return None
    if schema != MANIFEST_SCHEMA:
        return None
    try:
        # the sizes it claims are not a bound on anything: each artifact is bounded as read
        return parse_manifest(data, replace(limits, max_total_bytes=sys.maxsize), rfc_paths=True)
    except BundleError as exc:
        raise BundleError(f"manifest.json beside the index: {exc}") from None


def open_publication(
    source: Source,
    *,
    limits: Limits = DEFAULT_LIMITS,
    allow_unverified: bool = False,
    select: list[str] | None = None,
    expect_digest: str | None = None,
) -> tuple[Publication, list[Entry]]:
    """Read a publication's index (and our manifest when present); return it with the
    entries to read (all, or ``select`` in that order)."""
    index_bytes, _, index_url = source.fetch(source.index_url, limits.max_manifest_bytes)
    digest = file_digest(index_bytes)
    if expect_digest is not None and digest != expect_digest:
        raise BundleError(f"index.json digest is {digest}, expected {expect_digest}")
    index = parse_index(index_bytes, allow_unverified=allow_unverified)
    manifest = _our_manifest(source, index_url, limits) if index.schema else None
    by_name = {e.name: e for e in index.entries}
    if manifest is not None and select is None:
        mnames = {m["name"] for m in manifest["skills"]}
        for name in sorted(mnames ^ set(by_name)):
            where = "manifest.json" if name in mnames else "index.json"
            raise BundleError(f"skill {show(name)} is in {where} only")
    entries = index.entries
    if select is not None:
        unknown = [n for n in select if n not in by_name]
        if unknown:
            raise SelectionError(f"the index lists no skill named {show(unknown[0])}")
        entries = [by_name[n] for n in dict.fromkeys(select)]
    return Publication(index_url, index_bytes, index, manifest, []), entries


def iter_skills(
    source: Source, pub: Publication, entries: list[Entry], limits: Limits = DEFAULT_LIMITS
) -> Iterator[tuple[Entry, Artifact | BundleError | FetchError]]:
    """Each entry with its artifact read (``read_skill``) or the reason it could not be:
    one skill in memory at a time."""
    mentries = {m["name"]: m for m in pub.manifest["skills"]} if pub.manifest else {}
    for entry in entries:
        try:
            yield entry, read_skill(source, pub.index_url, entry, limits, mentries.get(entry.name))
        except (BundleError, FetchError) as exc:
            yield entry, exc


def read_publication(
    source: Source,
    *,
    limits: Limits = DEFAULT_LIMITS,
    allow_unverified: bool = False,
    expect_digest: str | None = None,
) -> Publication:
    """Read a whole publication, every skill in memory (bounded together by ``limits``);
    the first problem raises."""
    pub, entries = open_publication(
        source, limits=limits, allow_unverified=allow_unverified, expect_digest=expect_digest
    )
    total = 0
    for _, artifact in iter_skills(source, pub, entries, limits):
        if isinstance(artifact, Exception):
            raise artifact
        total += artifact.size
        if total > limits.max_total_bytes:
            raise BundleError(f"skills total more than {limits.max_total_bytes} bytes")
        pub.skills.append(artifact)
    return pub


# --- verify DIR and the loader --------------------------------------------------------------


def as_manifest(pub: Publication) -> dict[str, Any]:
    """The verified publication in our manifest's shape (what the loader API reads)."""
    if pub.manifest is not None:
        return pub.manifest
    skills = []
    for a in pub.skills:
        files: list[dict[str, Any]] = [
            {"path": p, "digest": file_digest(d), "size": len(d), "executable": x}
            for p, (d, x) in a.files.items()
        ]
        skills.append(
            {
                "name": a.entry.name,
                "description": a.entry.description,
                "digest": skill_digest((f["path"], f["digest"]) for f in files),
                "files": files,
            }
        )
    return {"$schema": MANIFEST_SCHEMA, "skills": skills}


def verify_directory(
    path: Path,
    limits: Limits = DEFAULT_LIMITS,
    expect: str | None = None,
    *,
    allow_unverified: bool = False,
    base_url: str | None = None,
) -> VerifyResult:
    """``verify`` of a well-known directory: any RFC publication, ours or another's."""
    source = LocalSource(Path(path), base_url)
    pub = read_publication(
        source, limits=limits, allow_unverified=allow_unverified, expect_digest=expect
    )
    refs = {}
    for a in pub.skills:
        for p in a.files:
            refs[f"{a.entry.name}/{p}"] = (source, pub.index_url, a.entry, p)
    kind = "well-known" if pub.verified else "well-known v0.1.0, NOT VERIFIED: no digests"
    return VerifyResult(
        Path(path),
        kind,
        file_digest(pub.index_bytes),
        as_manifest(pub),
        sum(len(a.files) for a in pub.skills),
        sum(a.size for a in pub.skills),
        refs,
        pub.index_bytes,
        tuple(pub.index.warnings),
    )


def read_member(ref: Any, limits: Limits = DEFAULT_LIMITS) -> bytes:
    """One file of a verified well-known directory, read again now: the artifact is fetched
    and its digest checked again, so a file changed since verification is refused."""
    source, index_url, entry, path = ref
    try:
        return read_skill(source, index_url, entry, limits).files[path][0]
    except FetchError as exc:
        raise BundleError(str(exc)) from None
    except KeyError:
        raise BundleError(f"{show(entry.name + '/' + path)} is gone from the artifact") from None
