"""Bundles read back: verification that trusts nothing, safe unpacking, and the loader API.

Moved out of ``bundle.py`` (the writers and the strict archive readers) because it also reads
well-known directories (``skillcheck.package.wellknown``), which are written with ``bundle.py``: the
import graph stays acyclic.

A runtime loader's progressive-disclosure loop, served from a verified artifact::

    from skillcheck.package.loader import open_bundle

    bundle = open_bundle(bundle_path)  # verifies everything; raises BundleError otherwise
    prompt = bundle.catalog_xml()  # level 1: every skill's name and description
    skill = bundle.skill("pdf-processing")  # the model picked a skill
    instructions = bundle.read_text(skill.name)  # level 2: SKILL.md, on activation
    forms = bundle.read_text(skill.name, "references/FORMS.md")  # level 3: on demand

Every read re-checks the file's digest against the verified manifest.
"""

from __future__ import annotations

import gzip
import os
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck.package.archive import (
    _CHUNK,
    DEFAULT_LIMITS,
    INDEX_NAME,
    INSTALLED_NAME,
    MANIFEST_NAME,
    BundleError,
    BundleIOError,
    Limits,
    _check_zip_directory,
    _parse_expect,
)
from skillcheck.package.bundle import _write_new_file, building_dir
from skillcheck.package.bundlecheck import (
    VerifyResult,
    _Checker,
    _expectations,
    _open_regular,
    _Sink,
    _verify_file,
    _walk_dir,
    _zip_read_exact,
    parse_manifest,
)
from skillcheck.package.catalog import (
    SKILL_FILE,
    CatalogError,
    file_digest,
    open_in_root,
    read_in_root,
    render_markdown,
    render_xml_entries,
    show,
)
from skillcheck.package.wellknown import FetchError, read_member, verify_directory


def _file_chunks(root: Path, rel: str) -> Iterator[bytes]:
    try:
        fd = open_in_root(root, rel)
    except CatalogError as exc:
        raise BundleError(str(exc)) from None
    with os.fdopen(fd, "rb") as f:
        while chunk := f.read(_CHUNK):
            yield chunk


def _verify_dir(path: Path, limits: Limits, expect: str | None, **options: Any) -> VerifyResult:
    if os.path.lexists(path / INDEX_NAME) or os.path.lexists(
        path / ".well-known" / "agent-skills" / INDEX_NAME
    ):
        try:
            return verify_directory(path, limits, expect, **options)
        except FetchError as exc:
            raise BundleError(str(exc)) from None
    present = [n for n in (MANIFEST_NAME, INSTALLED_NAME) if os.path.lexists(path / n)]
    if len(present) != 1:
        raise BundleError(
            f"{path}: a bundle directory holds exactly one of index.json (well-known), "
            f"manifest.json (unpacked bundle) or {INSTALLED_NAME} (skillcheck install)"
        )
    # an install DEST may hold other skills too: only those we installed are checked
    kind = "directory" if present[0] == MANIFEST_NAME else "installed"
    try:
        data = read_in_root(path, present[0], limits.max_manifest_bytes)
    except CatalogError as exc:
        raise BundleError(str(exc)) from None
    digest = file_digest(data)
    if expect is not None and digest != expect:
        raise BundleError(f"{present[0]} digest is {digest}, expected {expect}")
    manifest = parse_manifest(data, limits)
    allowed = {present[0]: "file"}
    for entry in manifest["skills"]:
        allowed[entry["name"]] = "dir"
    for item in sorted(os.scandir(path), key=lambda e: e.name):
        want = allowed.get(item.name)
        if want is None and kind == "installed":
            continue
        st = item.stat(follow_symlinks=False)
        ok = stat.S_ISDIR(st.st_mode) if want == "dir" else stat.S_ISREG(st.st_mode)
        if want is None or not ok:
            raise BundleError(f"unexpected entry {show(item.name)} in {path}")
    checker = _Checker(_expectations(manifest), limits, check_modes=False, where="directory")
    for entry in manifest["skills"]:
        name = entry["name"]
        if not (path / name).is_dir():
            raise BundleError(f"skill directory {show(name)} is missing")
        for m in _walk_dir(path, name, limits):
            checker.member(m, lambda m=m: _file_chunks(path, m.name))
    checker.finish()
    return VerifyResult(
        path, kind, digest, manifest, len(checker.refs), checker.total, checker.refs, data
    )


def verify(
    path: Path,
    expect_digest: str | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    allow_unverified: bool = False,
    base_url: str | None = None,
) -> VerifyResult:
    """Check a bundle file (tar.gz or zip) or a bundle directory (well-known or unpacked)
    without trusting it; raise ``BundleError`` with a one-line reason on the first problem.

    Checks: the optional pinned digest (of the file; of index.json/manifest.json for a
    directory) first; the manifest (see ``parse_manifest``); every member a regular file with a
    safe relative path, no duplicate or case-colliding names, listed in the manifest with its
    size, mode and digest; nothing listed missing; member count and uncompressed size bounded;
    a well-known directory is any Agent Skills Discovery RFC publication, checked by
    ``wellknown.verify_directory`` (``allow_unverified`` accepts a v0.1.0 index, which has no
    digests; ``base_url`` is where its index is served, for absolute URLs).
    """
    path = Path(path)
    expect = _parse_expect(expect_digest)
    if not os.path.lexists(path):
        raise BundleIOError(f"{path}: no such file or directory")
    try:
        try:
            if path.is_dir():
                return _verify_dir(
                    path, limits, expect, allow_unverified=allow_unverified, base_url=base_url
                )
            return _verify_file(path, limits, expect)
        except OSError as exc:  # the library raises only its own error type
            where = exc.filename if exc.filename is not None else path
            raise BundleIOError(f"{where}: cannot read: {exc.strerror or exc}") from None
    except BundleError as exc:  # every message names the bundle
        message = str(exc)
        if message.startswith(str(path)):
            raise
        raise type(exc)(f"{path}: {message}") from None


# --- unpacking -----------------------------------------------------------------------------


def _check_unpack_dest(bundle: Path, dest: Path, force: bool) -> None:
    """Refuse a destination that cannot be replaced: not a directory, non-empty without
    ``force``, the working directory or one of its parents, or one holding the bundle."""
    if not os.path.lexists(dest):
        return
    if dest.is_symlink() or not dest.is_dir():
        raise BundleIOError(f"{dest}: exists and is not a directory")
    if not any(os.scandir(dest)):
        return
    if not force:
        raise BundleIOError(f"{dest}: is not empty (use --force to replace it)")
    real = os.path.realpath(dest)
    inside = [(bundle, "holds the bundle"), (Path.cwd(), "holds the working directory")]
    for path, why in inside:
        try:
            other = os.path.realpath(path)
            if os.path.commonpath([real, other]) == real:
                raise BundleIOError(f"{dest}: {why}; refusing to replace it")
        except ValueError:  # different drives
            continue


def unpack(
    path: Path,
    dest: Path,
    expect_digest: str | None = None,
    force: bool = False,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> VerifyResult:
    """Verify the bundle file ``path``, then extract it to ``dest``.

    ``dest`` gets ``manifest.json`` and ``<name>/<path>`` for every file (modes 0644/0755),
    so ``verify(dest)`` and ``open_bundle(dest)`` work on it. Extraction happens in a new
    directory beside ``dest`` (the archive is checked again while writing) which is then
    renamed into place: nothing is written outside ``dest`` and a failure or an interrupt
    leaves ``dest`` as it was. An existing non-empty ``dest`` is replaced only with ``force``.
    """
    path, dest = Path(path), Path(dest)
    if path.is_dir():
        raise BundleIOError(f"{path}: is a directory; unpack takes a bundle file")
    result = verify(path, expect_digest, limits=limits)  # nothing is written for a bad bundle
    _check_unpack_dest(path, dest, force)
    parent = Path(os.path.abspath(dest)).parent
    if not parent.is_dir():
        raise BundleIOError(f"{parent}: directory does not exist")
    with building_dir(Path(os.path.abspath(dest)), ".unpack") as tmp:
        # the second pass pins the digest the first one saw: a bundle swapped in between fails
        _verify_file(path, limits, result.digest, _Sink(tmp))
        _write_new_file(tmp, MANIFEST_NAME, result.manifest_bytes, False)
    return result


# --- the loader API ------------------------------------------------------------------------


@dataclass(frozen=True)
class BundledSkill:
    """One skill as its verified manifest entry describes it."""

    name: str
    description: str
    digest: str
    files: tuple[str, ...]
    references: tuple[str, ...]
    entry: dict[str, Any] = field(repr=False, compare=False)


class Bundle:
    """A verified bundle or bundle directory, read lazily (see ``open_bundle``)."""

    def __init__(self, result: VerifyResult, limits: Limits = DEFAULT_LIMITS) -> None:
        self.path = result.path
        self.kind = result.kind
        self.digest = result.digest
        self.manifest = result.manifest
        self._refs = result.refs
        self._limits = limits
        self._skills = {
            e["name"]: BundledSkill(
                name=e["name"],
                description=e["description"],
                digest=e["digest"],
                files=tuple(fe["path"] for fe in e["files"]),
                references=tuple(e.get("references", ())),
                entry=e,
            )
            for e in self.manifest["skills"]
        }

    def __repr__(self) -> str:
        return f"Bundle({str(self.path)!r}, kind={self.kind!r}, skills={len(self._skills)})"

    def names(self) -> list[str]:
        """Skill names, sorted."""
        return sorted(self._skills)

    def skills(self) -> list[BundledSkill]:
        return [self._skills[name] for name in self.names()]

    def skill(self, name: str) -> BundledSkill:
        try:
            return self._skills[name]
        except KeyError:
            raise BundleError(f"no skill named {show(name)} in {self.path}") from None

    def _file(self, name: str, path: str) -> tuple[str, dict[str, Any]]:
        for fe in self.skill(name).entry["files"]:
            if fe["path"] == path:
                return f"{name}/{path}", fe
        raise BundleError(f"skill {show(name)} has no file {show(path)}")

    def read_bytes(self, name: str, path: str = SKILL_FILE) -> bytes:
        """One file of one skill, read from the bundle now and checked against its digest."""
        member, fe = self._file(name, path)
        ref = self._refs[member]
        try:
            if self.kind == "tar.gz":
                with _open_regular(self.path) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as gz:
                    gz.seek(ref)  # decompresses up to the member: bounded by verification
                    data = gz.read(fe["size"])
            elif self.kind.startswith("well-known"):
                data = read_member(ref, self._limits)
            elif self.kind == "zip":
                with _open_regular(self.path) as raw:
                    _check_zip_directory(raw, self._limits)  # the file may have been swapped
                    with zipfile.ZipFile(raw) as zf:
                        data = _zip_read_exact(zf, zf.getinfo(ref), fe["size"])
            else:
                data = read_in_root(self.path, ref, self._limits.max_total_bytes)
        except BundleError:
            raise
        except (
            OSError,
            EOFError,
            zlib.error,
            KeyError,
            ValueError,
            RuntimeError,
            NotImplementedError,
            struct.error,
            zipfile.BadZipFile,
            CatalogError,
        ) as exc:
            raise BundleError(f"cannot read {show(member)} from {self.path}: {exc}") from None
        if file_digest(data) != fe["digest"]:
            raise BundleError(f"{show(member)} changed since the bundle was verified")
        return data

    def read_text(self, name: str, path: str = SKILL_FILE) -> str:
        """``read_bytes`` decoded as UTF-8 (a BOM is dropped)."""
        try:
            return self.read_bytes(name, path).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise BundleError(f"{show(name + '/' + path)} is not UTF-8 text") from None

    def catalog_xml(self, location_prefix: str = "") -> str:
        """The ``<available_skills>`` block (as skills-ref's ``to_prompt`` writes it), each
        location being ``{location_prefix}{name}/SKILL.md``. With the absolute path of an
        unpacked copy plus ``/`` as prefix it equals ``to_prompt`` on the unpacked skills."""
        return render_xml_entries(
            (s.name, s.description, f"{location_prefix}{s.name}/{SKILL_FILE}")
            for s in self.skills()
        )

    def catalog_markdown(self) -> str:
        return render_markdown(self.manifest)


def open_bundle(
    path: Path | str,
    expect_digest: str | None = None,
    *,
    limits: Limits = DEFAULT_LIMITS,
    base_url: str | None = None,
) -> Bundle:
    """Verify a bundle file, an unpacked bundle, or a well-known directory (any RFC
    publication; see ``verify``) and return it for lazy reading."""
    return Bundle(verify(Path(path), expect_digest, limits=limits, base_url=base_url), limits)
