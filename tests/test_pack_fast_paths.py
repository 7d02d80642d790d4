"""The fast paths of catalog and pack give what the slow, obvious ways give.

- the tar.gz writer's gzip layer is byte for byte the documented block stream (obvious code);
- the manifest's schema verdict is jsonschema's, whatever the manifest holds;
- which files ship is what gitignore matching (pathspec) says, whatever the patterns;
- (a warm ``pack`` reads each shipped file once: ``test_pack_cache.py``);
- the budget figures count the body and the references as ``estimate_tokens`` does.
"""

from __future__ import annotations

import copy
import gzip
import json
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any

import jsonschema
import pathspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillcheck.analysis.figures import skill_figures
from skillcheck.package import bundle
from skillcheck.package.archive import GZIP_LEVEL, BundleError
from skillcheck.package.bundle import pack_bundle
from skillcheck.package.bundlecheck import parse_manifest
from skillcheck.package.catalog import (
    DEFAULT_EXCLUDES,
    CatalogError,
    build_manifest,
    collision_key,
    shipped_files,
)
from skillcheck.package.loader import verify
from skillcheck.schemas import load_schema
from skillcheck.source.load import OPAQUE_DIRS, load_skill
from skillcheck.tokens import estimate_tokens

SKILL_MD = b"---\nname: demo\ndescription: A demo skill. Use when testing bundles.\n---\n# Demo\n"
SCHEMA = load_schema("manifest.schema.json")
SLOW = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


def _write(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _manifest(root: Path) -> tuple[list, dict]:
    skills = [load_skill(root, root.name)]
    return skills, build_manifest(skills, root.parent, generator="skillcheck test")


# --- the gzip layer --------------------------------------------------------------------------


def _regzip(archive: bytes) -> bytes:
    """The archive's tar stream compressed again as documented, by the obvious code: gzip's
    header with no file name and a zero time; 1 MiB blocks, each a raw deflate stream at
    GZIP_LEVEL primed with the 32 KiB before it and sync-flushed; an empty final block; the
    CRC-32 and the size. ``gzip.decompress`` reads it as one stream."""
    raw = gzip.decompress(archive)
    flag = {9: b"\x02", 1: b"\x04"}.get(GZIP_LEVEL, b"\x00")
    out = [b"\x1f\x8b\x08\x00\x00\x00\x00\x00" + flag + b"\xff"]
    for start in range(0, len(raw), 1 << 20):
        before = raw[max(0, start - (1 << 15)) : start]
        args = (GZIP_LEVEL, zlib.DEFLATED, -15, 8, 0) + ((before,) if before else ())
        compressor = zlib.compressobj(*args)
        out.append(compressor.compress(raw[start : start + (1 << 20)]))
        out.append(compressor.flush(zlib.Z_SYNC_FLUSH))
    out.append(zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, -15).flush())
    out.append(struct.pack("<II", zlib.crc32(raw), len(raw) & 0xFFFFFFFF))
    return b"".join(out)


@settings(max_examples=25, deadline=None, suppress_health_check=SLOW)
@given(
    sizes=st.lists(
        st.sampled_from([0, 1, 511, 512, 513, 4096, (1 << 20) - 700, 1 << 20, (1 << 20) + 1]),
        min_size=1,
        max_size=4,
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_tar_gz_is_the_documented_block_stream(sizes: list[int], seed: int) -> None:
    """Members around the writer's 1 MiB block size, and across 512-byte tar blocks: the
    archive is the documented stream of the same tar, whatever the threads compressing it."""
    import random

    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "src" / "demo"
        files = {"SKILL.md": SKILL_MD}
        for i, size in enumerate(sizes):
            # half random bytes (incompressible), half repetitive text
            data = rng.randbytes(size // 2) + b"line of text\n" * (size // 26)
            files[f"data/f{i}.bin"] = data + bytes(size - len(data))
        _write(root, files)
        skills, manifest = _manifest(root)
        out = Path(tmp) / "bundle.tar.gz"
        digest = pack_bundle(skills, manifest, out)
        archive = out.read_bytes()
        assert _regzip(archive) == archive
        assert verify(out, expect_digest=digest).files == len(files)
        with pytest.MonkeyPatch.context() as patch:  # one thread, and more than the blocks
            for threads in (1, 7):
                patch.setattr(bundle, "_THREADS", threads)
                assert pack_bundle(skills, manifest, out) == digest


# --- the manifest schema -----------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.sampled_from([-1, 0, 1, 2**40])
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "SKILL.md", "a/b.md", "/abs", "sha256:" + "a" * 64, "x" * 70]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a JSON value: dict keys and list indexes from the top."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            out += _paths(item, (*prefix, index))
    return out


def _valid_manifest() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        _write(root, {"SKILL.md": SKILL_MD, "references/a.md": b"# A\n", "run.sh": b"echo\n"})
        (root / "run.sh").chmod(0o755)
        _skills, manifest = _manifest(root)
    manifest["skills"][0]["metadata"] = {"author": "me"}
    manifest["skills"][0]["tokens"] = {"catalog": 10, "body": 3, "references": 1}
    return manifest


BASE = _valid_manifest()


def _assert_same_verdict(manifest: Any) -> None:
    expected = jsonschema.Draft202012Validator(SCHEMA).is_valid(manifest)
    try:
        parse_manifest(json.dumps(manifest).encode())
        refused_for_schema = False
    except BundleError as exc:
        refused_for_schema = "does not match its schema" in str(exc)
    assert refused_for_schema == (not expected), manifest


def _replaced(manifest: dict, place: tuple, value: Any) -> Any:
    if not place:
        return value
    manifest = copy.deepcopy(manifest)
    parent = manifest
    for step in place[:-1]:
        parent = parent[step]
    if value is _DELETE:
        del parent[place[-1]]
    else:
        parent[place[-1]] = value
    return manifest


_DELETE = object()
# values one step from valid: wrong sign, float for int, bool for int, empty, wrong shape
NEAR_MISSES = [_DELETE, -1, 0, 1, 1.0, 1.5, True, None, "", "x", "SKILL.md", [], {}, [{}]]


def test_schema_verdict_is_jsonschemas_at_every_place() -> None:
    """Every value of a valid manifest deleted or replaced by a near miss: parse_manifest
    refuses it for its schema exactly when jsonschema finds it invalid."""
    for place in _paths(BASE):
        for value in NEAR_MISSES:
            if place or value is not _DELETE:
                _assert_same_verdict(_replaced(BASE, place, value))


@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_schema_verdict_is_jsonschemas(data: st.DataObject) -> None:
    """Any JSON value anywhere in a valid manifest, or a key added anywhere."""
    place = data.draw(st.sampled_from(_paths(BASE)))
    if data.draw(st.booleans()):
        manifest = _replaced(BASE, place, data.draw(JSON))
    else:
        manifest = copy.deepcopy(BASE)
        target = manifest
        for step in place:
            target = target[step]
        if isinstance(target, dict):
            target[data.draw(st.text(max_size=8))] = data.draw(JSON)
    _assert_same_verdict(manifest)


def test_the_schema_message_names_the_place() -> None:
    manifest = copy.deepcopy(BASE)
    manifest["skills"][0]["files"][0]["size"] = -1
    with pytest.raises(BundleError, match=r"schema at skills/0/files/0/size: -1 is less"):
        parse_manifest(json.dumps(manifest).encode())


# --- which files ship ----------------------------------------------------------------------------

SEGMENT = st.sampled_from(
    ["a", "b.md", "B.MD", ".env", "x.pyc", "node_modules", "build", "dist", "ä.md", "c d", "*"]
)
PATTERN = st.sampled_from(
    ["*.md", "!b.md", "a/", "/a", "a/**", "**/b.md", "!*.pyc", "[ab]*", "?.md", "\\!x", "# c", ""]
)


def _reference(entries: list[tuple[str, str]], ignore: list[str]) -> tuple[list[str], set[str]]:
    """git's reading with pathspec alone: an entry is excluded when it or any of its parent
    directories matches (a `!` cannot re-include a file under an excluded directory). The
    files kept, sorted, and the problems shipping them must report."""
    spec = pathspec.GitIgnoreSpec.from_lines([*DEFAULT_EXCLUDES, *ignore])
    kept = []
    problems = set()
    for rel, kind in entries:
        parts = rel.split("/")
        parents = ("/".join(parts[:i]) + "/" for i in range(1, len(parts)))
        if any(spec.match_file(p) for p in parents):
            continue
        if spec.match_file(rel + "/" * (kind == "dir")):
            continue
        if kind == "dir":
            if parts[-1] in OPAQUE_DIRS:  # listed by the walk, never entered
                problems.add("was not walked")
        else:
            kept.append(rel)
    keys = [collision_key(rel) for rel in kept]
    prefixes = {
        collision_key("/".join(r.split("/")[:i])) for r in kept for i in range(1, r.count("/") + 1)
    }
    if len(set(keys)) != len(keys) or prefixes & set(keys):
        problems.add("collides")
    return sorted(kept, key=lambda r: r.encode("utf-8")), problems


@settings(max_examples=60, deadline=None, suppress_health_check=SLOW)
@given(
    tree=st.lists(st.lists(SEGMENT, min_size=1, max_size=3).map("/".join), max_size=8),
    ignore=st.lists(PATTERN, max_size=5),
)
def test_shipped_files_match_gitignore(tree: list[str], ignore: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        files = {"SKILL.md": SKILL_MD, ".skillignore": "\n".join(ignore).encode()}
        for rel in tree:
            # a name that is also a directory elsewhere in the tree cannot be a file
            if not any(other.startswith(rel + "/") for other in tree) and not any(
                rel.startswith(f + "/") for f in files
            ):
                files[rel] = b"x"
        _write(root, files)
        skill = load_skill(root, "demo")
        expected, problems = _reference([(f.rel, f.kind) for f in skill.files], ignore)
        try:
            shipped = [f.rel for f in shipped_files(skill)]
        except CatalogError as exc:
            assert any(problem in str(exc) for problem in problems), (str(exc), problems)
            return
        assert not problems
        assert shipped == expected
        assert [f.rel for f in shipped_files(skill)] == shipped  # asked again: the same list


# --- budget figures ------------------------------------------------------------------------------

LINE = st.sampled_from(
    ["# Title", "", "  indented", "\tTab", "1. step", "text with  two spaces", "end:", "é ü"]
)
BREAK = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=80, deadline=None, suppress_health_check=SLOW)
@given(
    lines=st.lists(st.tuples(LINE, BREAK), max_size=12),
    shape=st.sampled_from(["closed", "unclosed", "none"]),
)
def test_figures_count_as_estimate_tokens(
    lines: list[tuple[str, str]], shape: str, tmp_path: Path
) -> None:
    body = "".join(text + brk for text, brk in lines)
    head = {
        "closed": "---\nname: demo\ndescription: Demo. Use when testing.\n---\n",
        "unclosed": "---\nname: demo\n",
        "none": "",
    }[shape]
    with tempfile.TemporaryDirectory(dir=tmp_path) as tmp:
        root = Path(tmp) / "demo"
        _write(root, {"SKILL.md": (head + body).encode(), "references/r.md": body.encode()})
        skill = load_skill(root, "demo")
        assert skill.doc is not None
        figures = skill_figures(skill)
        assert figures.body_tokens == estimate_tokens(skill.doc.body)
        assert [r.tokens for r in figures.references] == [estimate_tokens(body)]
