"""pack reuses fresh lint results: each skill's manifest entry is derived where the skill is
checked and cached with its lint result, so a pack of unchanged skills neither checks nor
loads them again, and reads each shipped file once. Whatever the cache holds, the bundle is
the one a run without cache writes, and the gate (refuse on errors) still holds.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import invoke, write_skill
from skillgen import generate

from skillcheck.engine import cache as cache_module
from skillcheck.engine import runner
from skillcheck.package import bundle, catalog
from skillcheck.package.archive import BundleError
from skillcheck.package.bundle import Source, write_bundle
from skillcheck.package.catalog import build_manifest
from skillcheck.source.load import load_skill


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written before a run count as settled: entries store their identity at once."""
    monkeypatch.setattr(cache_module, "RACY_NS", 0)


def pack(tree: Path, out: Path, cache: Path | None, *extra: str) -> Any:
    cache_args = ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    return invoke("pack", "--isolated", "-q", *cache_args, *extra, "-o", str(out), str(tree))


def counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every read of a shipped file, for the manifest (catalog) or the bundle alike."""
    reads: list[tuple[str, str]] = []
    real = catalog.read_in_root

    def counting(root: Path, rel: str, *args: Any) -> bytes:
        reads.append((str(root), rel))
        return real(root, rel, *args)

    monkeypatch.setattr(catalog, "read_in_root", counting)
    monkeypatch.setattr(bundle, "read_in_root", counting)
    return reads


def counting_loads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    loads: list[Path] = []
    real = runner.load_skill

    def counting(root: Path, *args: Any, **kwargs: Any) -> Any:
        loads.append(root)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(runner, "load_skill", counting)
    return loads


def test_a_warm_pack_loads_no_skill_and_reads_each_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None
) -> None:
    tree = tmp_path / "skills"
    generate(tree, 12)
    cache = tmp_path / "cache"
    assert pack(tree, tmp_path / "cold.tar.gz", None).exit_code == 0
    reads = counting_reads(monkeypatch)
    first = pack(tree, tmp_path / "first.tar.gz", cache)
    assert first.exit_code == 0, first.output
    # where the skill is checked (the manifest) and into the bundle: twice at most
    assert len(reads) == 2 * len(set(reads)) == 2 * 5 * 12
    reads.clear()
    loads = counting_loads(monkeypatch)
    warm = pack(tree, tmp_path / "warm.tar.gz", cache)
    assert warm.exit_code == 0, warm.output
    assert loads == []
    assert len(reads) == len(set(reads)) == 5 * 12  # into the bundle only
    cold = (tmp_path / "cold.tar.gz").read_bytes()
    assert (tmp_path / "first.tar.gz").read_bytes() == cold
    assert (tmp_path / "warm.tar.gz").read_bytes() == cold


def test_workers_and_the_cache_give_the_same_bundle(tmp_path: Path, settled: None) -> None:
    tree = tmp_path / "skills"
    generate(tree, 30)  # enough for worker processes (runner.PARALLEL_MIN)
    cache = tmp_path / "cache"
    outputs = []
    for name, cache_dir, jobs in [
        ("one", None, "1"),
        ("workers", cache, "2"),  # fills the cache from the workers
        ("warm", cache, "2"),
        ("warm1", cache, "1"),
    ]:
        out = tmp_path / f"{name}.tar.gz"
        result = pack(tree, out, cache_dir, "--jobs", jobs)
        assert result.exit_code == 0, result.output
        outputs.append(out.read_bytes())
    assert all(data == outputs[0] for data in outputs)


def test_a_file_no_rule_reads_is_shipped_as_it_is_now(tmp_path: Path, settled: None) -> None:
    """Touched and rewritten with the same size, an asset keeps the skill's lint result (the
    rules never read it) but not its manifest entry: the bundle holds the new bytes."""
    tree = tmp_path / "skills"
    skill = write_skill(tree, "demo", files={"assets/logo.bin": b"\x00old-bytes"})
    cache = tmp_path / "cache"
    assert pack(tree, tmp_path / "a.tar.gz", cache).exit_code == 0
    asset = skill / "assets" / "logo.bin"
    asset.write_bytes(b"\x00new-bytes")
    os.utime(asset, ns=(1_000_000_000, 1_000_000_000))  # not what the entry recorded
    warm = pack(tree, tmp_path / "warm.tar.gz", cache)
    assert warm.exit_code == 0, warm.output
    assert pack(tree, tmp_path / "cold.tar.gz", None).exit_code == 0
    assert (tmp_path / "warm.tar.gz").read_bytes() == (tmp_path / "cold.tar.gz").read_bytes()
    assert (tmp_path / "warm.tar.gz").read_bytes() != (tmp_path / "a.tar.gz").read_bytes()


def test_a_skill_that_cannot_be_shipped_is_refused_cached_or_not(
    tmp_path: Path, settled: None
) -> None:
    tree = tmp_path / "skills"
    write_skill(tree, "demo", files={".skillignore": "SKILL.md\n"})
    cache = tmp_path / "cache"
    seen = []
    for cache_dir in (None, cache, cache):
        out = tmp_path / "out.tar.gz"
        result = pack(tree, out, cache_dir)
        assert result.exit_code == 1
        assert not out.exists()
        seen.append(result.stderr)
    assert "SKILL.md is not shipped" in seen[0]
    assert seen[0] == seen[1] == seen[2]


def test_the_gate_holds_on_a_warm_cache(tmp_path: Path, settled: None) -> None:
    tree = tmp_path / "skills"
    write_skill(tree, "demo", body="# Steps\n\nSee [the guide](references/missing.md).\n")
    cache = tmp_path / "cache"
    for _ in range(2):
        out = tmp_path / "out.tar.gz"
        result = pack(tree, out, cache)
        assert result.exit_code == 1
        assert "SK501" in result.output or "missing.md" in result.output
        assert not out.exists()


def test_a_file_changed_after_the_manifest_is_refused_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    """The digest check stops the bundle midway: no output, and the compressing thread ends."""
    tree = tmp_path / "skills"
    generate(tree, 3)
    skills = [load_skill(p, p.name) for p in sorted(tree.iterdir())]
    manifest = build_manifest(skills, tree, generator="skillcheck test")
    sources = {s.name or "": Source(s.root, s.display_root, {}) for s in skills}
    victim = next(p for p in sorted(skills[-1].root.rglob("*")) if p.is_file())
    victim.write_bytes(victim.read_bytes() + b"changed")
    out = tmp_path / "out.tar.gz"
    with pytest.raises(BundleError, match="changed since the manifest was built"):
        write_bundle(manifest, sources, out)
    assert not out.exists()
    assert list(tmp_path.glob("*.tmp*")) == []
    assert not any(t.name == "skillcheck-gzip" for t in threading.enumerate())


@pytest.mark.parametrize(
    "damaged",
    [
        "not a record",
        {"entry": {"name": 5}, "links": {}},
        {"entry": {}, "links": {"a": 1}},
        {"error": 3, "vanished": False},
        {"entry": None},
    ],
)
def test_a_damaged_record_in_the_cache_is_a_miss(
    tmp_path: Path, settled: None, damaged: object
) -> None:
    """A cache entry whose pack record is not what pack_record writes is derived again:
    never an error, never a different bundle."""
    tree = tmp_path / "skills"
    generate(tree, 3)
    cache = tmp_path / "cache"
    assert pack(tree, tmp_path / "cold.tar.gz", None).exit_code == 0
    assert pack(tree, tmp_path / "fill.tar.gz", cache).exit_code == 0
    entries = [p for p in cache.glob("*/*.json") if p.name != "collection.json"]
    assert len(entries) == 3
    key = cache_module.cache_key()
    assert key is not None
    for path in entries:
        record = json.loads(path.read_bytes())["record"]
        assert record["extra"][0] == catalog.PACK_RECORD
        record["extra"][1] = damaged  # sealed with the user's key: the damage is what is tested
        path.write_bytes(cache_module.seal(json.dumps(record).encode(), key))
    warm = pack(tree, tmp_path / "warm.tar.gz", cache)
    assert warm.exit_code == 0, warm.output
    assert (tmp_path / "warm.tar.gz").read_bytes() == (tmp_path / "cold.tar.gz").read_bytes()


def lint(tree: Path, cache: Path | None, *extra: str) -> Any:
    cache_args = ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    return invoke("lint", "--isolated", "-q", *cache_args, *extra, str(tree))


@pytest.mark.parametrize("fmt", ["text", "sarif", "json"])
def test_a_pack_after_a_lint_loads_no_skill_and_ships_the_same_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None, fmt: str
) -> None:
    """The order a CI job runs them: lint, then pack of the same unchanged tree with the
    same configuration. Whatever format lint reported in, its cache entries hold what the
    pack needs (figures, manifest entry): the pack checks and loads no skill again."""
    tree = tmp_path / "skills"
    generate(tree, 12)
    cache = tmp_path / "cache"
    assert pack(tree, tmp_path / "cold.tar.gz", None).exit_code == 0
    assert lint(tree, cache, "--format", fmt).exit_code == 0
    reads = counting_reads(monkeypatch)
    loads = counting_loads(monkeypatch)
    after = pack(tree, tmp_path / "after.tar.gz", cache)
    assert after.exit_code == 0, after.output
    assert loads == []
    assert len(reads) == len(set(reads)) == 5 * 12  # into the bundle only
    assert (tmp_path / "after.tar.gz").read_bytes() == (tmp_path / "cold.tar.gz").read_bytes()


def test_a_lint_with_its_cache_reports_what_one_without_it_reports(
    tmp_path: Path, settled: None
) -> None:
    """What lint computes for a later pack (token figures, manifest entries) changes no
    byte of its own report, cold or warm, in any format."""
    tree = tmp_path / "skills"
    generate(tree, 12)
    # a skill no catalog takes (its name): its cached record is an error, never lint's
    write_skill(tree, "Bad_Name", frontmatter="name: Bad_Name\ndescription: Does a thing.\n")
    cache = tmp_path / "cache"
    for fmt in ("text", "json", "sarif", "github", "junit"):
        plain = lint(tree, None, "--format", fmt)
        cold = lint(tree, cache / fmt, "--format", fmt)
        warm = lint(tree, cache / fmt, "--format", fmt)
        assert plain.exit_code == cold.exit_code == warm.exit_code == 1
        assert plain.stdout == cold.stdout == warm.stdout, fmt


def test_a_file_changed_after_a_lint_is_not_shipped_on_its_record(
    tmp_path: Path, settled: None
) -> None:
    """A lint's cached records vouch only for the files it read: a file edited since (its
    identity differs) is checked again by pack, and the bundle holds the new bytes."""
    tree = tmp_path / "skills"
    skill = write_skill(tree, "demo", files={"references/guide.md": "# Guide\n\nOld.\n"})
    cache = tmp_path / "cache"
    assert lint(tree, cache).exit_code == 0
    guide = skill / "references" / "guide.md"
    guide.write_text("# Guide\n\nNew text.\n")
    os.utime(guide, ns=(1_000_000_000, 1_000_000_000))
    warm = pack(tree, tmp_path / "warm.tar.gz", cache)
    assert warm.exit_code == 0, warm.output
    assert pack(tree, tmp_path / "cold.tar.gz", None).exit_code == 0
    assert (tmp_path / "warm.tar.gz").read_bytes() == (tmp_path / "cold.tar.gz").read_bytes()


@pytest.mark.parametrize("fmt", ["json", "markdown"])
def test_a_catalog_after_a_lint_loads_no_skill_and_writes_the_same_manifest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settled: None, fmt: str
) -> None:
    tree = tmp_path / "skills"
    generate(tree, 12)
    cache = tmp_path / "cache"
    args = ["catalog", "--isolated", "--format", fmt, str(tree)]
    cold = invoke(*args[:1], "--no-cache", *args[1:])
    assert cold.exit_code == 0, cold.output
    assert lint(tree, cache).exit_code == 0
    loads = counting_loads(monkeypatch)
    reads = counting_reads(monkeypatch)
    after = invoke(*args[:1], "--cache-dir", str(cache), *args[1:])
    assert after.exit_code == 0, after.output
    assert loads == [] and reads == []
    assert after.stdout == cold.stdout
