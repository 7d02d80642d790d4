"""Every read and write of a path skillcheck did not create goes through one checked opener
(``load.open_regular``): regular files only, a non-blocking open that never follows a link,
a bounded read. A FIFO or device planted where the cache keeps its files is a miss, never a
hang (issue 29, item 7)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from conftest import run_skillcheck, write_skill

from skillcheck.source import atomic, load

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")

HANG_GUARD = 120  # seconds: generous, only so that a hang fails instead of blocking the suite


def _tree(root: Path) -> None:
    write_skill(root, "alpha-notes")
    write_skill(
        root,
        "beta-notes",
        "name: beta-notes\ndescription: Extracts text from PDF files. Use when the user asks"
        " about PDFs.\n",
        body="# Steps\n\nRead [the guide](references/guide.md).\n",
    )


def _lint(project: Path, cache: Path) -> tuple[int, str, str]:
    done = run_skillcheck(
        "lint",
        "--isolated",
        "--format",
        "json",
        "--cache-dir",
        str(cache),
        "skills",
        cwd=project,
        timeout=HANG_GUARD,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


@pytest.mark.parametrize("planted", ["entries", "collection"])
def test_a_fifo_planted_in_the_cache_is_a_miss_not_a_hang(tmp_path: Path, planted: str) -> None:
    _tree(tmp_path / "skills")
    cache = tmp_path / "cache"
    expected = _lint(tmp_path, cache)
    assert expected[0] == 1 and "SK501" in expected[1]  # beta-notes' broken link
    targets = list(cache.glob("*/collection.json"))
    if planted == "entries":
        targets = [p for p in cache.glob("*/*.json") if p.name != "collection.json"]
    assert targets
    for path in targets:
        path.unlink()
        os.mkfifo(path)
    assert _lint(tmp_path, cache) == expected  # a hang raises TimeoutExpired
    for path in targets:
        assert stat.S_ISFIFO(os.lstat(path).st_mode)  # never written into, never replaced


def test_the_opener_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        load.read_regular(fifo)  # returns at once: O_NONBLOCK
    with pytest.raises(OSError, match="not a regular file"):
        load.read_regular(tmp_path)
    if os.path.exists("/dev/zero"):
        with pytest.raises(OSError, match="not a regular file"):
            load.read_regular("/dev/zero", follow_symlinks=True)
    real = tmp_path / "real"
    real.write_bytes(b"0123456789")
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(OSError, match="symbolic link"):
        load.read_regular(link)
    assert load.read_regular(link, follow_symlinks=True) == (b"0123456789", 10)
    assert load.read_regular(real, 4) == (b"0123", 10)  # bounded, with the real size


def test_a_write_that_must_not_write_through_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "entry.json"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="not a regular file"):
        atomic.write_atomic(fifo, b"{}", write_through=False)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not [p for p in tmp_path.iterdir() if p != fifo]  # no temporary file left


def test_a_frontmatter_schema_that_is_a_fifo_does_not_hang_the_run_key(tmp_path: Path) -> None:
    from skillcheck.engine.cache import run_key

    fifo = tmp_path / "schema.json"
    os.mkfifo(fifo)
    key = run_key(["SK101"], ("agentskills",), {"frontmatter-schema": str(fifo)}, tmp_path)
    fifo.unlink()
    fifo.write_text(json.dumps({"type": "object"}))
    assert run_key(["SK101"], ("agentskills",), {"frontmatter-schema": str(fifo)}, tmp_path) != key


def test_a_cache_file_larger_than_any_we_write_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache reads at most ``MAX_FILE_BYTES`` of an entry (README: "256 MB at most"):
    a larger file is a miss, never read whole."""
    from skillcheck.engine import cache

    key = cache.cache_key()
    assert key is not None
    entry = tmp_path / "entry.json"
    entry.write_bytes(cache.seal(b'{"fine": true}', key))
    assert cache._read_json(entry, key) == {"fine": True}
    monkeypatch.setattr(cache, "MAX_FILE_BYTES", entry.stat().st_size - 1)
    assert cache._read_json(entry, key) is None
