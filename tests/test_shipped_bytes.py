"""``pack`` ships exactly the bytes its lint gate judged (issue 29, item 1): a file that
changes between lint's read and pack's (in place or replaced by rename; with a cold or a
warm cache; into a bundle or a well-known directory) is refused, never shipped.

The change is injected at one precise point, deterministically: pack's own read of the file
(``catalog.read_in_root``) first rewrites it, as an editor saving at that instant would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import invoke, write_skill

from skillcheck.engine import cache as cache_module
from skillcheck.package import bundle, catalog

# an SK702 error (a GitHub token), made up for the test
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CLEAN = "# Guide\n\nUse the public API with your own credentials.\n"
DIRTY = f"# Guide\n\nUse the token {TOKEN} for the API.\n"


@pytest.fixture
def skill(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return write_skill(
        tmp_path / "skills",
        "pdf-tools",
        body="# Steps\n\nRead [the guide](references/guide.md).\n",
        files={"references/guide.md": CLEAN, "assets/logo.txt": "logo\n"},
    )


def _change_when_pack_reads(
    monkeypatch: pytest.MonkeyPatch, path: Path, content: str, how: str
) -> list[Path]:
    """Rewrite ``path`` the first time pack reads it (its manifest read); returns the list
    of paths pack read, so a test can tell the change happened."""
    real = catalog.read_in_root
    seen: list[Path] = []

    def read_in_root(root: Path, rel: str, *args, **kwargs) -> bytes:
        if root / rel == path and not seen:
            if how == "in-place":
                with open(path, "r+b") as handle:
                    handle.truncate(0)
                    handle.write(content.encode())
            else:
                new = path.with_name(".new")
                new.write_text(content)
                os.replace(new, path)
            seen.append(path)
        return real(root, rel, *args, **kwargs)

    monkeypatch.setattr(catalog, "read_in_root", read_in_root)
    monkeypatch.setattr(bundle, "read_in_root", read_in_root)  # the bundle's own read
    return seen


def _pack(tmp_path: Path, dest: str, *cache: str):
    where = ["--well-known", "site"] if dest == "well-known" else ["--output", "out.tar.gz"]
    return invoke("pack", "--isolated", "--jobs", "1", *cache, "skills", *where, cwd=tmp_path)


def _shipped_anything(tmp_path: Path) -> bool:
    site = tmp_path / "site"
    return (tmp_path / "out.tar.gz").exists() or (site.exists() and any(site.iterdir()))


def test_the_dirty_version_is_refused_by_the_gate(skill: Path, tmp_path: Path) -> None:
    (skill / "references/guide.md").write_text(DIRTY)
    result = _pack(tmp_path, "bundle", "--no-cache")
    assert result.exit_code == 1 and "SK702" in result.stderr


@pytest.mark.parametrize("how", ["in-place", "renamed"])
@pytest.mark.parametrize("dest", ["bundle", "well-known"])
@pytest.mark.parametrize("cache", ["no-cache", "warm-cache", "lint-cache"])
@pytest.mark.parametrize("file", ["references/guide.md", "SKILL.md"])
def test_a_file_changed_after_lint_read_it_is_never_shipped(
    skill: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    how: str,
    dest: str,
    cache: str,
    file: str,
) -> None:
    target = skill / file
    original = target.read_text()
    dirty = original + f"\nToken: {TOKEN}\n" if file == "SKILL.md" else DIRTY
    options = ["--no-cache"] if cache == "no-cache" else ["--cache-dir", str(tmp_path / "c")]
    if cache == "warm-cache":
        assert _pack(tmp_path, dest, *options).exit_code == 0  # a clean pack fills the cache
        (tmp_path / "out.tar.gz").unlink(missing_ok=True)
        os.utime(target)  # the identity changes: lint checks the content again
    if cache == "lint-cache":  # a lint run fills it, its entries settled at once: pack
        # takes every skill's record as lint left it and reads the file only to ship it
        monkeypatch.setattr(cache_module, "RACY_NS", 0)
        lint = invoke("lint", "--isolated", "--jobs", "1", *options, "skills", cwd=tmp_path)
        assert lint.exit_code == 0, lint.output
    seen = _change_when_pack_reads(monkeypatch, target, dirty, how)
    result = _pack(tmp_path, dest, *options)
    assert seen == [target], "the change was injected"
    assert result.exit_code == 1, result.stderr
    # read by lint and by the bundle's write: refused at the read that saw the change
    changed = ("changed while it was being checked", "changed since the manifest was built")
    assert any(message in result.stderr for message in changed), result.stderr
    if cache == "no-cache":
        assert not _shipped_anything(tmp_path)
    else:  # the well-known directory of the first pack stays as it was
        assert not (tmp_path / "out.tar.gz").exists()
        assert TOKEN not in "".join(
            p.read_text(errors="replace") for p in (tmp_path / "site").rglob("*") if p.is_file()
        )


def test_an_asset_no_rule_read_that_changes_size_is_refused(
    skill: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = skill / "assets/logo.txt"
    seen = _change_when_pack_reads(monkeypatch, target, "logo, bigger\n", "in-place")
    result = _pack(tmp_path, "bundle", "--no-cache")
    assert seen == [target]
    assert result.exit_code == 1 and "changed while it was being checked" in result.stderr
    assert not (tmp_path / "out.tar.gz").exists()
