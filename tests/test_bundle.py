"""Bundles: round trip, reproducibility, hostile archives, unpack safety, loader API (issue 4)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import random
import re
import stat
import struct
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillcheck.package import archive, bundlecheck, loader
from skillcheck.package.archive import DEFAULT_MTIME, MANIFEST_NAME, BundleError
from skillcheck.package.bundle import pack_bundle
from skillcheck.package.catalog import (
    MANIFEST_SCHEMA,
    build_manifest,
    collision_key,
    dumps_manifest,
    file_digest,
    read_shipped,
    shipped_files,
    skill_digest,
)
from skillcheck.package.loader import open_bundle, unpack, verify
from skillcheck.package.wellknown import publish
from skillcheck.source.load import load_skill
from skillcheck.source.skill import Skill

GENERATOR = "skillcheck 0.0.test"
SKILL_MD = b"---\nname: demo\ndescription: A demo skill. Use when testing bundles.\n---\n# Demo\n"


def load(root: Path) -> Skill:
    return load_skill(root.absolute(), str(root))


def write_tree(root: Path, files: dict[str, tuple[bytes, bool]]) -> None:
    for rel, (data, executable) in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.chmod(path, 0o755 if executable else 0o644)


def skill_md(name: str, body: str = "# Steps\n\nDo it.\n") -> bytes:
    return (
        f"---\nname: {name}\ndescription: Handles {name} things. Use when asked about {name}.\n"
        f"---\n{body}"
    ).encode()


def manifest_for(roots: list[Path], root: Path) -> tuple[list[Skill], dict]:
    skills = [load(r) for r in roots]
    return skills, build_manifest(skills, root, generator=GENERATOR)


def sha256(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def tree_digest(top: Path) -> str:
    """Paths, kinds, modes and contents of everything under ``top``."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in sorted(filenames + dirnames):
            path = Path(dirpath) / name
            st_ = os.lstat(path)
            h.update(f"{path.relative_to(top).as_posix()}\0{st_.st_mode:o}\0".encode())
            if stat.S_ISREG(st_.st_mode):
                h.update(path.read_bytes())
    return h.hexdigest()


def snapshot(top: Path) -> dict[str, str]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            out[path.relative_to(top).as_posix()] = (
                file_digest(path.read_bytes()) if path.is_file() and not path.is_symlink() else ""
            )
    return out


def unpacked_files(top: Path) -> dict[str, tuple[bytes, bool]]:
    out = {}
    for dirpath, _, filenames in os.walk(top):
        for name in filenames:
            path = Path(dirpath) / name
            out[path.relative_to(top).as_posix()] = (
                path.read_bytes(),
                bool(os.stat(path).st_mode & 0o111),
            )
    return out


# --- round trip -----------------------------------------------------------------------------------

NAME = st.text(
    alphabet=st.characters(categories=("L", "N"), max_codepoint=0x2FFF) | st.sampled_from("-_. "),
    min_size=1,
    max_size=10,
).filter(
    lambda n: (
        not n.startswith(".") and n.strip() == n and collision_key(n) != collision_key("SKILL.md")
    )
)


def _entries(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.lists(st.tuples(NAME, children), max_size=4, unique_by=lambda t: collision_key(t[0]))


LEAF = st.tuples(st.binary(max_size=600), st.booleans())
TREE = _entries(st.recursive(LEAF, _entries, max_leaves=12))


def _materialize(root: Path, entries: list, prefix: str = "") -> dict[str, tuple[bytes, bool]]:
    files: dict[str, tuple[bytes, bool]] = {}
    for name, node in entries:
        if isinstance(node, list):
            (root / prefix / name).mkdir()
            files.update(_materialize(root, node, f"{prefix}{name}/"))
        else:
            files[f"{prefix}{name}"] = node
            write_tree(root, {f"{prefix}{name}": node})
    return files


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=TREE, fmt=st.sampled_from(["tar.gz", "zip"]))
def test_round_trip_is_lossless(tree: list, fmt: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        root = base / "src" / "demo"
        root.mkdir(parents=True)
        write_tree(root, {"SKILL.md": (SKILL_MD, False)})
        _materialize(root, tree)
        skills, manifest = manifest_for([root], base / "src")
        skill = skills[0]
        expected = {
            sf.rel: (read_shipped(skill, sf), bool(sf.mode & 0o111)) for sf in shipped_files(skill)
        }
        out = base / f"bundle.{fmt}"
        digest = pack_bundle(skills, manifest, out, fmt=fmt)
        result = verify(out, expect_digest=digest)
        assert result.kind == fmt and result.files == len(expected)
        dest = base / "dest"
        unpack(out, dest, expect_digest=digest)
        assert unpacked_files(dest / "demo") == expected  # bytes and exec bits
        assert json.loads((dest / "manifest.json").read_bytes()) == manifest
        verify(dest)  # the unpacked tree verifies as a bundle directory
        again = build_manifest([load(dest / "demo")], dest, generator=GENERATOR)
        assert again["skills"][0]["digest"] == manifest["skills"][0]["digest"]
        assert again["skills"][0]["files"] == manifest["skills"][0]["files"]


def test_round_trip_then_lint_finds_the_same(tmp_path: Path) -> None:
    from skillcheck.engine.lint import lint
    from skillcheck.settings import Settings

    src = tmp_path / "src" / "pdf-tools"
    write_tree(
        src,
        {
            "SKILL.md": (
                skill_md("pdf-tools", "# PDF\n\nSee [forms](references/FORMS.md).\n"),
                False,
            ),
            "references/FORMS.md": (b"# Forms\n\nFill them.\n", False),
            "scripts/run.sh": (b"#!/bin/sh\necho hi\n", True),
        },
    )
    skills, manifest = manifest_for([src], tmp_path / "src")
    out = tmp_path / "b.tar.gz"
    pack_bundle(skills, manifest, out)
    unpack(out, tmp_path / "dest")

    def findings(root: Path) -> list[tuple]:
        result = lint([root], Settings())
        return sorted(
            (d.code, d.path.relative_to(root).as_posix(), d.line, d.column, d.severity)
            for d in result.diagnostics
        )

    assert findings(tmp_path / "dest" / "pdf-tools") == findings(src)


# --- reproducibility -----------------------------------------------------------------------------

REPRO_FILES = {
    "SKILL.md": (skill_md("repro", "# Repro\n\nSee [notes](références/naïve.md).\n"), False),
    "scripts/run.sh": (b"#!/bin/sh\necho run\n", True),
    "scripts/tool.py": (b"print('tool')\n", False),
    "références/naïve.md": ("# Naïve\n\nÜnïcödé.\n".encode(), False),
    "assets/blob.bin": (bytes(range(256)) * 8, False),
    "a/b/c/deep.txt": (b"deep\n", False),
    "long/" + "x" * 120 + ".md": (b"a name longer than ustar's 100 bytes\n", False),
}


def _build_repro(
    root: Path, files: dict, seed: int, mtime: int, umask: int, owner: int | None
) -> Path:
    items = list(files.items())
    random.Random(seed).shuffle(items)
    old = os.umask(umask)
    try:
        for rel, (data, executable) in items:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            if executable:
                os.chmod(path, 0o777 & ~umask | 0o100)
            os.utime(path, (mtime, mtime))
            if owner is not None:
                os.chown(path, owner, owner)
        os.symlink("scripts/tool.py", root / "tool-link.py")
    finally:
        os.umask(old)
    return root


def test_reproducible_across_order_mtime_umask_owner(tmp_path: Path) -> None:
    can_chown = hasattr(os, "geteuid") and os.geteuid() == 0
    # the well-known layout needs RFC (ASCII) paths: its skill leaves the Unicode name out
    ascii_files = {k: v for k, v in REPRO_FILES.items() if k.isascii()}
    conditions = {
        "a": (1, 1_000_000_000, 0o022, 0 if can_chown else None),
        "b": (2, 1_700_000_000, 0o077, 4242 if can_chown else None),
    }
    digests: dict[str, list[str]] = {"tar.gz": [], "zip": [], "well-known": []}
    for side, (seed, mtime, umask, owner) in conditions.items():
        top = tmp_path / side
        root = _build_repro(top / "skills" / "repro", REPRO_FILES, seed, mtime, umask, owner)
        skills, manifest = manifest_for([root], top / "skills")
        for fmt in ("tar.gz", "zip"):
            out = top / f"bundle.{fmt}"
            digest = pack_bundle(skills, manifest, out, fmt=fmt)
            assert digest == sha256(out)
            digests[fmt].append(digest)
        root = _build_repro(top / "ascii" / "repro", ascii_files, seed, mtime, umask, owner)
        skills, manifest = manifest_for([root], top / "ascii")
        url = "https://example.com/.well-known/agent-skills"
        publish(skills, manifest, top / "wk", url)
        digests["well-known"].append(tree_digest(top / "wk"))
    modes = {os.stat(tmp_path / s / "skills/repro/SKILL.md").st_mode for s in conditions}
    assert len(modes) == 2  # the umask really differed
    for fmt, (first, second) in digests.items():
        assert first == second, fmt
    # the archive looks as documented to standard tools
    with tarfile.open(tmp_path / "a" / "bundle.tar.gz") as tar:
        members = tar.getmembers()
    assert members[0].name == "manifest.json"
    assert [m.name for m in members[1:]] == sorted(
        (m.name for m in members[1:]), key=lambda n: n.encode()
    )
    assert {(m.uid, m.gid, m.uname, m.gname, m.mtime) for m in members} == {
        (0, 0, "", "", DEFAULT_MTIME)
    }
    assert {m.mode for m in members} == {0o644, 0o755}
    assert "repro/long/" + "x" * 120 + ".md" in {m.name for m in members}
    raw = (tmp_path / "a" / "bundle.tar.gz").read_bytes()
    assert raw[3] == 0 and raw[4:8] == b"\0\0\0\0"  # gzip: no name, no time
    with zipfile.ZipFile(tmp_path / "a" / "bundle.zip") as zf:
        # the manifest is the first member, never the comment (unzip -l would print it)
        assert zf.comment == b"" and zf.infolist()[0].filename == "manifest.json"
        assert {i.filename.split("/")[0] for i in zf.infolist()[1:]} == {"repro"}
        assert {i.external_attr >> 16 for i in zf.infolist()} == {0o100644, 0o100755}
        assert zf.testzip() is None


def test_source_date_epoch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "demo"
    write_tree(root, {"SKILL.md": (SKILL_MD, False)})
    skills, manifest = manifest_for([root], tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    pack_bundle(skills, manifest, tmp_path / "b.tar.gz")
    pack_bundle(skills, manifest, tmp_path / "b.zip", fmt="zip")
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        assert {m.mtime for m in tar.getmembers()} == {1700000000}
    with zipfile.ZipFile(tmp_path / "b.zip") as zf:
        assert zf.infolist()[0].date_time == (2023, 11, 14, 22, 13, 20)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(BundleError, match="SOURCE_DATE_EPOCH"):
        pack_bundle(skills, manifest, tmp_path / "c.tar.gz")


# --- hostile bundles ------------------------------------------------------------------------------


def _manifest(files: dict[str, bytes], *, name: str = "demo", **override) -> dict:
    entries = [
        {"path": p, "digest": file_digest(d), "size": len(d), "executable": False}
        for p, d in sorted(files.items())
    ]
    skill = {
        "name": name,
        "description": "A demo skill. Use when testing bundles.",
        "digest": skill_digest((e["path"], e["digest"]) for e in entries),
        "files": entries,
        **override,
    }
    return {"$schema": MANIFEST_SCHEMA, "generator": GENERATOR, "skills": [skill]}


def _info(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, **attrs) -> tuple:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    info.mode = 0o644
    for key, value in attrs.items():
        setattr(info, key, value)
    return info, data


def _tar_gz(members: list[tuple], trailer: bytes = b"") -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return gzip.compress(raw.getvalue() + trailer, mtime=0)


def _bundle(
    *extra: tuple, manifest: dict | bytes | None = None, files: dict | None = None
) -> bytes:
    files = {"SKILL.md": SKILL_MD} if files is None else files
    if manifest is None:
        manifest = _manifest(files)
    data = manifest if isinstance(manifest, bytes) else dumps_manifest(manifest)
    members = [_info("manifest.json", data)]
    members += [_info(f"demo/{p}", d) for p, d in files.items()]
    return _tar_gz(members + list(extra))


def _zip(entries: list[tuple[zipfile.ZipInfo | str, bytes]], comment: bytes) -> bytes:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as zf:
        for info, data in entries:
            zf.writestr(info, data)
        zf.comment = comment
    return raw.getvalue()


def _zip_info(name: str, mode: int = 0o100644) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = mode << 16
    return info


def _patch_zip_count(data: bytes) -> bytes:
    """Make the end record claim one entry fewer than the central directory holds."""
    end = data.rindex(b"PK\x05\x06")
    (count,) = struct.unpack("<H", data[end + 10 : end + 12])
    fewer = struct.pack("<H", count - 1)
    return data[: end + 8] + fewer + fewer + data[end + 12 :]


def _encrypted_zip() -> bytes:
    """A zip whose member claims to be encrypted (zipfile cannot write one: set the bit)."""
    data = bytearray(
        _zip([("demo/SKILL.md", SKILL_MD)], dumps_manifest(_manifest({"SKILL.md": SKILL_MD})))
    )
    data[6] |= 1  # local file header: general purpose flags
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 1  # central directory entry: general purpose flags
    return bytes(data)


def _encrypted_manifest_zip() -> bytes:
    """A zip whose first member, manifest.json, claims to be encrypted."""
    manifest = dumps_manifest(_manifest({"SKILL.md": SKILL_MD}))
    data = bytearray(_zip([(MANIFEST_NAME, manifest), ("demo/SKILL.md", SKILL_MD)], b""))
    data[6] |= 1  # the first local header: manifest.json's
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 1  # its central directory entry
    return bytes(data)


def _huge_manifest() -> dict:
    manifest = _manifest({"SKILL.md": SKILL_MD})
    manifest["skills"][0]["files"][0]["size"] = 1 << 40
    return manifest


def _gzip_bomb(mib: int = 4096) -> bytes:
    # a valid bundle followed by 4 GiB of zeros in concatenated gzip members (~4 MiB)
    zeros = gzip.compress(bytes(1 << 20), compresslevel=9, mtime=0)
    return _bundle() + zeros * mib


HOSTILE: dict[str, tuple[Callable[[Path], bytes], str]] = {
    "tar slip": (
        lambda t: _bundle(_info("../evil.txt", b"x")),
        r"unsafe member path '\.\./evil\.txt'",
    ),
    "nested slip": (
        lambda t: _bundle(_info("demo/../../evil.txt", b"x")),
        r"unsafe member path .*'\.\.'",
    ),
    "absolute path": (
        lambda t: _bundle(_info(str(t / "abs-evil.txt"), b"x")),
        "unsafe member path .*: absolute path",
    ),
    "symlink member": (
        lambda t: _bundle(_info("demo/link", kind=tarfile.SYMTYPE, linkname="/etc/passwd")),
        "member 'demo/link' is a symbolic link",
    ),
    "hardlink member": (
        lambda t: _bundle(_info("demo/hard", kind=tarfile.LNKTYPE, linkname="demo/SKILL.md")),
        "member 'demo/hard' is a hard link",
    ),
    "device member": (
        lambda t: _bundle(_info("demo/null", kind=tarfile.CHRTYPE, devmajor=1, devminor=3)),
        "member 'demo/null' is a device file",
    ),
    "fifo member": (
        lambda t: _bundle(_info("demo/pipe", kind=tarfile.FIFOTYPE)),
        "member 'demo/pipe' is a FIFO",
    ),
    "directory member": (
        lambda t: _bundle(_info("demo/sub/", kind=tarfile.DIRTYPE)),
        "is a directory entry",
    ),
    "member not in manifest": (
        lambda t: _bundle(_info("demo/extra.txt", b"smuggled")),
        "member 'demo/extra.txt' is not listed in the manifest",
    ),
    "manifest entry missing": (
        lambda t: _bundle(
            manifest=_manifest({"SKILL.md": SKILL_MD, "gone.md": b"gone"}),
        ),
        "'demo/gone.md' is listed in the manifest but missing from the archive",
    ),
    "digest mismatch": (
        lambda t: _bundle(
            manifest=_manifest({"SKILL.md": SKILL_MD}),
            files={"SKILL.md": SKILL_MD.replace(b"Demo", b"Evil")},
        ),
        "digest mismatch for 'demo/SKILL.md'",
    ),
    "size mismatch": (
        lambda t: _bundle(
            manifest=_manifest({"SKILL.md": SKILL_MD}), files={"SKILL.md": SKILL_MD + b"more"}
        ),
        "size mismatch for 'demo/SKILL.md'",
    ),
    "skill digest mismatch": (
        lambda t: _bundle(manifest=_manifest({"SKILL.md": SKILL_MD}, digest="sha256:" + "0" * 64)),
        "skill digest of 'demo' does not match",
    ),
    "manifest not first": (
        lambda t: _tar_gz([_info("demo/SKILL.md", SKILL_MD), _info("manifest.json", b"{}")]),
        "manifest.json must be the first member",
    ),
    "manifest fails schema": (
        lambda t: _bundle(manifest=_manifest({"SKILL.md": SKILL_MD}, name="Not A Name")),
        "manifest does not match its schema at skills/0/name",
    ),
    "manifest duplicate key": (
        lambda t: _bundle(
            manifest=dumps_manifest(_manifest({"SKILL.md": SKILL_MD})).replace(
                b'"name": "demo",', b'"name": "demo", "name": "other",'
            )
        ),
        "manifest has duplicate key 'name'",
    ),
    "manifest unsafe path": (
        lambda t: _bundle(manifest=_manifest({"SKILL.md": SKILL_MD, "../x": b"x"})),
        "manifest does not match its schema|manifest path",
    ),
    "duplicate member": (
        lambda t: _bundle(_info("demo/SKILL.md", SKILL_MD)),
        "duplicate member 'demo/SKILL.md'",
    ),
    "case-colliding members": (
        lambda t: _bundle(_info("demo/skill.md", SKILL_MD)),
        "case-colliding members 'demo/SKILL.md' and 'demo/skill.md'",
    ),
    "data after end marker": (
        lambda t: _tar_gz(
            [
                _info("manifest.json", dumps_manifest(_manifest({"SKILL.md": SKILL_MD}))),
                _info("demo/SKILL.md", SKILL_MD),
            ],
            trailer=b"\0" * 2048 + b"hidden",
        ),
        "data after the end-of-archive marker",
    ),
    "not an archive": (lambda t: b"#!/bin/sh\nrm -rf /\n", "not a bundle"),
    "truncated": (lambda t: _bundle()[:-30], "corrupt gzip stream|truncated"),
    "gzip bomb": (lambda t: _gzip_bomb(), "padding after the end-of-archive marker"),
    "declared huge sizes": (lambda t: _bundle(manifest=_huge_manifest()), "total more than"),
    "zip slip": (
        lambda t: _zip(
            [("demo/SKILL.md", SKILL_MD), ("../evil.txt", b"x")],
            dumps_manifest(_manifest({"SKILL.md": SKILL_MD})),
        ),
        r"unsafe member path '\.\./evil\.txt'",
    ),
    "zip symlink": (
        lambda t: _zip(
            [("demo/SKILL.md", SKILL_MD), (_zip_info("demo/link", 0o120777), b"/etc/passwd")],
            dumps_manifest(_manifest({"SKILL.md": SKILL_MD})),
        ),
        "member 'demo/link' is a symbolic link",
    ),
    "zip duplicate": (
        lambda t: _zip(
            [("demo/SKILL.md", SKILL_MD), ("demo/SKILL.md", SKILL_MD)],
            dumps_manifest(_manifest({"SKILL.md": SKILL_MD})),
        ),
        "duplicate member",
    ),
    "zip encrypted": (lambda t: _encrypted_zip(), "member 'demo/SKILL.md' is encrypted"),
    "zip encrypted manifest": (
        lambda t: _encrypted_manifest_zip(),
        "member 'manifest.json' is encrypted",
    ),
    "zip entry count lies": (
        lambda t: _patch_zip_count(
            _zip(
                [("demo/SKILL.md", SKILL_MD), ("demo/x", b"")],
                dumps_manifest(_manifest({"SKILL.md": SKILL_MD})),
            )
        ),
        "disagree on the entry count",
    ),
    "zip with prepended data": (
        lambda t: (
            b"PK\x03\x04 hidden data before the archive"
            + _zip([("demo/SKILL.md", SKILL_MD)], dumps_manifest(_manifest({"SKILL.md": SKILL_MD})))
        ),
        "central directory is not where its end record says",
    ),
    "zip without manifest": (lambda t: _zip([("demo/SKILL.md", SKILL_MD)], b""), "no manifest"),
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # zipfile warns about the duplicate name
@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_bundle_is_rejected_and_nothing_is_written(tmp_path: Path, case: str) -> None:
    build, reason = HOSTILE[case]
    work = tmp_path / "work"
    work.mkdir()
    bundle_path = work / "hostile.bin"
    bundle_path.write_bytes(build(tmp_path))
    with pytest.raises(BundleError, match=reason) as info:
        verify(bundle_path)
    assert "\n" not in str(info.value)  # a one-line reason
    before = snapshot(tmp_path)
    dest = work / "out" / "dest"
    dest.parent.mkdir()
    with pytest.raises(BundleError, match=reason):
        unpack(bundle_path, dest)
    assert snapshot(tmp_path) == {**before, "work/out": ""}  # nothing written anywhere
    assert not (tmp_path / "abs-evil.txt").exists() and not (tmp_path / "evil.txt").exists()


def _flood_tar(count: int, typeflag: bytes = b"0") -> bytes:
    """A tar.gz of a valid manifest and ``count`` empty members (or bare PAX headers),
    built fast by hand."""
    data = dumps_manifest(_manifest({"SKILL.md": SKILL_MD}))
    info, _ = _info("manifest.json", data)
    blocks = [info.tobuf(tarfile.USTAR_FORMAT) + data + bytes(-len(data) % 512)]
    template = bytearray(tarfile.TarInfo("demo/f0000000").tobuf(tarfile.USTAR_FORMAT))
    template[156:157] = typeflag
    for i in range(count):
        header = bytearray(template)
        header[0:13] = b"demo/f%07d" % i
        header[148:156] = b" " * 8
        header[148:156] = b"%06o\0 " % sum(header)
        blocks.append(bytes(header))
    return gzip.compress(b"".join(blocks) + bytes(1024), compresslevel=1, mtime=0)


@pytest.mark.parametrize(
    ("typeflag", "count", "reason"),
    [
        (b"0", 100_000, "member 'demo/f0000000' is not listed in the manifest"),  # the first
        (b"x", 20_000, "more than 3 extended headers before a member"),
    ],
    ids=["members", "pax-headers"],
)
def test_member_flood_is_rejected_quickly(
    tmp_path: Path, typeflag: bytes, count: int, reason: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "flood.tar.gz"
    path.write_bytes(_flood_tar(count, typeflag))
    headers = 0
    real_header = archive._TarReader._header

    def counting_header(self: archive._TarReader, block: bytes) -> tuple[bytes, int, int, bytes]:
        nonlocal headers
        headers += 1
        return real_header(self, block)

    monkeypatch.setattr(archive._TarReader, "_header", counting_header)
    with pytest.raises(BundleError, match=reason):
        verify(path)
    assert 0 < headers <= 8, headers  # refused near the start, not after reading them all
    with pytest.raises(BundleError, match=reason):
        unpack(path, tmp_path / "dest")
    assert sorted(os.listdir(tmp_path)) == ["flood.tar.gz"]


def test_member_count_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as zf:
        for i in range(10_050):
            zf.writestr(f"demo/f{i}", b"")
        zf.comment = dumps_manifest(_manifest({"SKILL.md": SKILL_MD}))
    (tmp_path / "flood.zip").write_bytes(raw.getvalue())

    def parsed(*_args: object) -> None:
        raise AssertionError("zipfile parsed the central directory")

    with monkeypatch.context() as patch:
        patch.setattr(zipfile.ZipFile, "_RealGetContents", parsed)
        with pytest.raises(BundleError, match="more than 10000 members"):
            verify(tmp_path / "flood.zip")  # from the end record, before the directory is parsed
    # a manifest may not list more files than the bound either
    files = {f"f{i}.md": b"" for i in range(6)} | {"SKILL.md": SKILL_MD}
    (tmp_path / "six.tar.gz").write_bytes(_bundle(files=files))
    verify(tmp_path / "six.tar.gz")
    with pytest.raises(BundleError, match="more than 5 files"):
        verify(tmp_path / "six.tar.gz", limits=archive.Limits(max_members=5))


def test_verify_refuses_special_files_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.tar.gz")
    with pytest.raises(BundleError, match="not a regular file"):
        verify(tmp_path / "pipe.tar.gz")


def test_decompression_is_bounded(tmp_path: Path) -> None:
    """The backstop under every per-part bound: a decompressed stream never yields more
    than its limit, however large the bomb, and stops after about that much work."""
    limits = archive.Limits(max_total_bytes=1 << 20, max_manifest_bytes=1 << 16, max_members=4)
    bomb = gzip.GzipFile(fileobj=io.BytesIO(_gzip_bomb(64)))
    stream = archive._Bounded(bomb, limits.max_stream_bytes)
    with pytest.raises(BundleError, match="decompresses to more than"):
        while stream.read(1 << 16):
            pass
    assert stream.pos <= limits.max_stream_bytes + (1 << 16)
    # and verify applies it to the whole stream: padding is cut off first here
    path = tmp_path / "bomb.tar.gz"
    path.write_bytes(_gzip_bomb(64))
    with pytest.raises(BundleError, match="decompression bomb"):
        verify(path, limits=limits)


def test_expect_digest(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    write_tree(root, {"SKILL.md": (SKILL_MD, False)})
    skills, manifest = manifest_for([root], tmp_path)
    out = tmp_path / "b.tar.gz"
    digest = pack_bundle(skills, manifest, out)
    assert verify(out, expect_digest=digest.upper().replace("SHA256", "sha256")).digest == digest
    with pytest.raises(BundleError, match="expected sha256:0000"):
        verify(out, expect_digest="sha256:" + "0" * 64)
    with pytest.raises(BundleError, match="not sha256:<64 hex digits>"):
        verify(out, expect_digest="md5:abc")
    with pytest.raises(BundleError, match="expected"):
        unpack(out, tmp_path / "dest", expect_digest="sha256:" + "1" * 64)
    assert not (tmp_path / "dest").exists()


# --- unpack --------------------------------------------------------------------------------------


@pytest.fixture
def packed(tmp_path: Path) -> Path:
    root = tmp_path / "src" / "demo"
    write_tree(root, {"SKILL.md": (SKILL_MD, False), "scripts/x.sh": (b"#!/bin/sh\n", True)})
    skills, manifest = manifest_for([root], tmp_path / "src")
    out = tmp_path / "demo.tar.gz"
    pack_bundle(skills, manifest, out)
    return out


def test_unpack_refuses_non_empty_dest_unless_forced(tmp_path: Path, packed: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    with pytest.raises(BundleError, match="not empty"):
        unpack(packed, dest)
    assert snapshot(dest) == {"keep.txt": file_digest(b"mine")}
    unpack(packed, dest, force=True)
    assert sorted(snapshot(dest)) == [
        "demo",
        "demo/SKILL.md",
        "demo/scripts",
        "demo/scripts/x.sh",
        "manifest.json",
    ]
    assert os.stat(dest / "demo" / "scripts" / "x.sh").st_mode & 0o777 == 0o755
    # an empty DEST is fine without --force; a file is not
    (tmp_path / "empty").mkdir()
    unpack(packed, tmp_path / "empty")
    (tmp_path / "file").write_text("x")
    with pytest.raises(BundleError, match="not a directory"):
        unpack(packed, tmp_path / "file")


def test_failed_or_interrupted_unpack_leaves_dest_as_it_was(
    tmp_path: Path, packed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "old.txt").write_text("old")
    before = sorted(os.listdir(tmp_path))
    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(_bundle(_info("demo/extra.txt", b"x")))
    with pytest.raises(BundleError):
        unpack(bad, dest, force=True)
    calls = []
    real_open = bundlecheck._Sink.open

    def interrupt(self, name):
        calls.append(name)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_open(self, name)

    monkeypatch.setattr(bundlecheck._Sink, "open", interrupt)
    with pytest.raises(KeyboardInterrupt):
        unpack(packed, dest, force=True)
    assert len(calls) == 2
    assert snapshot(dest) == {"old.txt": file_digest(b"old")}
    assert sorted(os.listdir(tmp_path)) == sorted([*before, "bad.tar.gz"])  # no temp dirs left


def test_unpack_rejects_directories(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="is a directory"):
        unpack(tmp_path, tmp_path / "dest")


# --- packing -------------------------------------------------------------------------------------


def test_pack_is_atomic_and_never_touches_the_source(tmp_path: Path) -> None:
    root = tmp_path / "demo"
    write_tree(root, {"SKILL.md": (SKILL_MD, False), "notes.md": (b"v1", False)})
    skills, manifest = manifest_for([root], tmp_path)
    with pytest.raises(BundleError, match="inside skill"):
        pack_bundle(skills, manifest, root / "out.tar.gz")
    with pytest.raises(BundleError, match="inside skill"):
        publish(skills, manifest, root / "wk")
    out = tmp_path / "out.tar.gz"
    out.write_bytes(b"previous bundle")
    (root / "notes.md").write_bytes(b"v2")  # changed after the manifest was built
    with pytest.raises(BundleError, match="changed since the manifest was built"):
        pack_bundle(skills, manifest, out)
    assert out.read_bytes() == b"previous bundle"
    assert sorted(os.listdir(tmp_path)) == ["demo", "out.tar.gz"]  # no temporary file left
    with pytest.raises(BundleError, match="unknown bundle format"):
        pack_bundle(skills, manifest, out, fmt="rar")


def test_pack_ships_the_bytes_lint_checked(tmp_path: Path) -> None:
    """As `skillcheck pack` runs: lint reads every file, the manifest's read agrees with it,
    and pack takes the members from that one read: a file edited after the manifest was built
    does not change the bundle, which holds what was linted and what the manifest says."""
    from skillcheck.engine.lint import lint
    from skillcheck.settings import Settings

    root = tmp_path / "skills" / "demo"
    write_tree(root, {"SKILL.md": (SKILL_MD, False), "notes.md": (b"v1", False)})
    skills = lint([root.parent], Settings(), keep=True).loaded
    manifest = build_manifest(skills, root.parent, generator=GENERATOR)
    (root / "notes.md").write_bytes(b"v2")
    pack_bundle(skills, manifest, tmp_path / "out.tar.gz")
    assert open_bundle(tmp_path / "out.tar.gz").read_bytes("demo", "notes.md") == b"v1"
    # skills loaded again read the file again: it no longer matches the manifest
    with pytest.raises(BundleError, match="changed since the manifest was built"):
        pack_bundle([load(root)], manifest, tmp_path / "again.tar.gz")


def test_pack_refuses_manifest_skill_mismatch(tmp_path: Path) -> None:
    a, b = tmp_path / "alpha", tmp_path / "beta"
    write_tree(a, {"SKILL.md": (skill_md("alpha"), False)})
    write_tree(b, {"SKILL.md": (skill_md("beta"), False)})
    skills, manifest = manifest_for([a, b], tmp_path)
    with pytest.raises(BundleError, match="not being packed"):
        pack_bundle(skills[:1], manifest, tmp_path / "x.tar.gz")
    (a / "new.md").write_text("added after the manifest")
    with pytest.raises(BundleError, match="files changed"):
        pack_bundle([load(a), load(b)], manifest, tmp_path / "x.tar.gz")


# --- loader API ---------------------------------------------------------------------------------


def _loader_skills(tmp_path: Path) -> tuple[list[Skill], dict]:
    src = tmp_path / "src"
    write_tree(
        src / "pdf-processing",
        {
            "SKILL.md": (
                skill_md("pdf-processing", "# PDF\n\nForms: [FORMS](references/FORMS.md).\n"),
                False,
            ),
            "references/FORMS.md": (b"# Forms\n\nFill them in.\n", False),
        },
    )
    write_tree(src / "code-review", {"SKILL.md": (skill_md("code-review"), False)})
    return manifest_for([src / "pdf-processing", src / "code-review"], src)


@pytest.mark.parametrize("layout", ["tar.gz", "zip", "well-known", "unpacked"])
def test_docstring_loader_example_runs(tmp_path: Path, layout: str) -> None:
    skills, manifest = _loader_skills(tmp_path)
    if layout in ("tar.gz", "zip"):
        path = tmp_path / f"skills.{layout}"
        pack_bundle(skills, manifest, path, fmt=layout)
    elif layout == "well-known":
        path = tmp_path / "wk"
        publish(skills, manifest, path)
    else:
        pack_bundle(skills, manifest, tmp_path / "b.tar.gz")
        path = tmp_path / "unpacked"
        unpack(tmp_path / "b.tar.gz", path)
    block = []
    for line in loader.__doc__.split("::\n\n", 1)[1].splitlines():
        if line and not line.startswith("    "):
            break
        block.append(line[4:])
    namespace: dict = {"bundle_path": path}
    exec(compile("\n".join(block), "bundle-docstring", "exec"), namespace)
    assert "<name>\npdf-processing\n</name>" in namespace["prompt"]
    assert namespace["instructions"].startswith("---\nname: pdf-processing")
    assert namespace["forms"] == "# Forms\n\nFill them in.\n"


def test_loader_api(tmp_path: Path) -> None:
    from skills_ref.prompt import to_prompt

    skills, manifest = _loader_skills(tmp_path)
    path = tmp_path / "skills.tar.gz"
    digest = pack_bundle(skills, manifest, path)
    b = open_bundle(path, expect_digest=digest)
    assert b.kind == "tar.gz" and b.digest == digest
    assert b.names() == ["code-review", "pdf-processing"]
    pdf = b.skill("pdf-processing")
    assert pdf.files == ("SKILL.md", "references/FORMS.md")
    assert pdf.references == ("references/FORMS.md",)
    assert b.read_bytes("pdf-processing", "references/FORMS.md") == b"# Forms\n\nFill them in.\n"
    assert b.catalog_markdown().startswith("- code-review: Handles code-review things.")
    with pytest.raises(BundleError, match="no skill named 'nope'"):
        b.skill("nope")
    with pytest.raises(BundleError, match=r"has no file '\.\./SKILL\.md'"):
        b.read_bytes("code-review", "../SKILL.md")
    # the catalog block equals skills-ref's for the unpacked skills
    dest = tmp_path / "dest"
    unpack(path, dest)
    prefix = str(dest.resolve()) + "/"
    assert b.catalog_xml(prefix) == to_prompt([dest / n for n in b.names()])
    # every read is checked again: a bundle replaced after opening is refused
    write_tree(
        tmp_path / "src" / "pdf-processing", {"references/FORMS.md": (b"# Evil\n\nxx in.\n", False)}
    )
    skills2, manifest2 = manifest_for(
        [tmp_path / "src" / "pdf-processing", tmp_path / "src" / "code-review"], tmp_path / "src"
    )
    pack_bundle(skills2, manifest2, path)
    with pytest.raises(BundleError, match="changed since the bundle was verified"):
        b.read_bytes("pdf-processing", "references/FORMS.md")


def test_readme_loader_example_runs(tmp_path: Path) -> None:
    """The README's loader example (a ```python block calling open_bundle), run against a
    bundle of the skills it names: the variable ``bundle_path`` is the bundle's path."""
    readme = Path(__file__).resolve().parent.parent / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
    examples = [b for b in blocks if "open_bundle(" in b]
    assert examples, "the README must show a loader example (a python block with open_bundle)"
    skills, manifest = _loader_skills(tmp_path)
    path = tmp_path / "skills.tar.gz"
    pack_bundle(skills, manifest, path)
    for code in examples:
        exec(compile(code, "README.md", "exec"), {"bundle_path": path})


def test_an_encrypted_manifest_member_is_a_refusal_not_an_internal_error(tmp_path: Path) -> None:
    from conftest import invoke

    path = tmp_path / "bundle.zip"
    path.write_bytes(_encrypted_manifest_zip())
    for args in (["verify", str(path)], ["unpack", str(path), str(tmp_path / "out")]):
        result = invoke(*args)
        assert result.exit_code == 1, result.output
        assert "member 'manifest.json' is encrypted" in result.stderr
        assert "internal error" not in result.output
    assert not (tmp_path / "out").exists()
