"""catalog and pack read the skills' files after lint checked them, possibly in worker
processes or from the result cache: the bundle is the same whichever way the skills were
checked, and a skill edited between its check and its packing is never shipped on the
strength of an old verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke
from skillgen import generate

SKILLS = 30  # above engine.PARALLEL_MIN, so --jobs 2 really starts workers


def _pack(tree: Path, out: Path, *options: str):
    return invoke("pack", "--isolated", *options, "-o", str(out), str(tree))


def test_bundle_and_catalog_are_identical_with_workers_with_cache_and_without(
    tmp_path: Path,
) -> None:
    tree = tmp_path / "skills"
    generate(tree, SKILLS, seed=3)
    cache = tmp_path / "cache"
    one = _pack(tree, tmp_path / "one.tar.gz", "--jobs", "1", "--no-cache")
    assert one.exit_code == 0, one.output
    two = _pack(tree, tmp_path / "two.tar.gz", "--jobs", "2", "--cache-dir", str(cache))
    assert two.exit_code == 0, two.output
    # the second cached run loads every skill again from disk
    warm = _pack(tree, tmp_path / "warm.tar.gz", "--jobs", "2", "--cache-dir", str(cache))
    assert warm.exit_code == 0, warm.output
    bundle = (tmp_path / "one.tar.gz").read_bytes()
    assert (tmp_path / "two.tar.gz").read_bytes() == bundle
    assert (tmp_path / "warm.tar.gz").read_bytes() == bundle

    catalogs = [
        invoke("catalog", "--isolated", *options, str(tree)).stdout
        for options in (["--jobs", "1", "--no-cache"], ["--jobs", "2", "--cache-dir", str(cache)])
    ]
    assert catalogs[0] == catalogs[1]
    assert '"tokens"' in catalogs[0]


def test_a_skill_edited_after_its_check_is_never_packed_on_the_old_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pack --output never loads the skills again: each file is read once, into the
    bundle, and must have the digest the checked skill's manifest entry recorded. A file
    edited after the check (here: after the cache said the skill was unchanged) refuses the
    pack, naming the file, and leaves no bundle."""
    import skillcheck.package.bundle as bundle

    tree = tmp_path / "skills"
    made = generate(tree, SKILLS, seed=4)
    cache = tmp_path / "cache"
    first = _pack(tree, tmp_path / "first.tar.gz", "--cache-dir", str(cache))
    assert first.exit_code == 0, first.output

    # The next run takes every result from the cache; one skill is edited just before its
    # files are read for the bundle, as an editor saving mid-run would.
    victim = made[len(made) // 2]
    real = bundle.read_in_root

    def edited_meanwhile(root: Path, rel: str, *rest):  # type: ignore[no-untyped-def]
        if root == victim and rel == "SKILL.md":
            skill_md = victim / "SKILL.md"
            skill_md.write_bytes(skill_md.read_bytes() + b"\n[gone](references/missing.md)\n")
        return real(root, rel, *rest)

    monkeypatch.setattr(bundle, "read_in_root", edited_meanwhile)
    out = tmp_path / "second.tar.gz"
    second = _pack(tree, out, "--jobs", "2", "--cache-dir", str(cache))
    assert second.exit_code == 1, second.output
    assert "changed since the manifest was built" in second.stderr
    assert str(victim / "SKILL.md") in second.stderr
    assert "Traceback" not in second.output
    assert not out.exists()

    # packed again, the edit is checked: its broken link refuses the pack
    monkeypatch.setattr(bundle, "read_in_root", real)
    third = _pack(tree, out, "--jobs", "2", "--cache-dir", str(cache))
    assert third.exit_code == 1, third.output
    assert "SK501" in third.stderr and victim.name in third.stderr
    assert not out.exists()


def test_fix_with_workers_edits_exactly_what_one_process_edits(tmp_path: Path) -> None:
    """--fix plans its edits on skills loaded again in the main process after workers
    checked them: the files written and the report equal those of a one-process run."""
    import shutil

    generate(tmp_path / "one" / "skills", SKILLS, seed=5, findings=1.0)
    shutil.copytree(tmp_path / "one", tmp_path / "two")
    runs = {}
    for name, jobs in (("one", "1"), ("two", "2")):
        result = invoke(
            "lint", "--isolated", "--fix", "--jobs", jobs, "skills", cwd=tmp_path / name
        )
        runs[name] = (result.exit_code, result.stdout, result.stderr)
    assert runs["one"] == runs["two"]
    assert "Fixed " in runs["one"][1]  # the tree had fixable findings, and they were fixed
    files = {
        name: {
            p.relative_to(tmp_path / name): p.read_bytes()
            for p in sorted((tmp_path / name).rglob("*"))
            if p.is_file()
        }
        for name in ("one", "two")
    }
    assert files["one"] == files["two"]
