"""A tree of 300 realistic skills is linted with every rule without reading any file twice.

Rules share one read of each file (``skillcheck.source.load.read_file``); the ``reads`` fixture
counts the reads by wrapping ``load.read_regular``. As a second witness, every open of a path
under the tree (``os.open``, ``open``, ``io.open``) is counted too, so a rule that bypassed the
shared reader would be caught even though it never calls ``read_regular``.
"""

from __future__ import annotations

import builtins
import io
import json
import os
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import invoke
from hypothesis import given, settings
from hypothesis import strategies as st
from skillgen import generate

from skillcheck.source.load import read_fd

SKILLS = 300


@pytest.mark.slow  # lints 300 skills
def test_300_skills_every_file_read_exactly_once(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    reads: Counter[str],
) -> None:
    tree = tmp_path / "skills"
    made = generate(tree, SKILLS)
    files = sorted(str(p) for p in tree.rglob("*") if p.is_file())
    assert len(files) == 5 * SKILLS  # SKILL.md, two references, a script, an asset

    opened: Counter[str] = Counter()
    root = str(tree)
    real_os_open, real_open, real_io_open = os.open, builtins.open, io.open

    def note(path: object) -> None:
        if isinstance(path, (str, os.PathLike)):
            name = os.fspath(path)
            if isinstance(name, str) and name.startswith(root):
                opened[name] += 1

    def counting_os_open(path, *args, **kwargs):
        note(path)
        return real_os_open(path, *args, **kwargs)

    def counting_open(file, *args, **kwargs):
        note(file)
        return real_open(file, *args, **kwargs)

    def counting_io_open(file, *args, **kwargs):
        note(file)
        return real_io_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting_os_open)
    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(io, "open", counting_io_open)

    started = time.perf_counter()
    # one process, no cache: the reads are counted here (workers count their own)
    result = invoke(
        "lint",
        "--isolated",
        "--jobs",
        "1",
        "--no-cache",
        "--format",
        "json",
        "--select",
        "ALL",
        str(tree),
    )
    elapsed = time.perf_counter() - started
    monkeypatch.undo()

    report = json.loads(result.stdout)
    assert len(report["skills"]) == SKILLS
    counts = {path: n for path, n in reads.items() if path.startswith(root)}
    twice = {path: n for path, n in counts.items() if n > 1}
    assert not twice, f"files read more than once: {sorted(twice.items())[:5]}"
    for skill in made:
        assert counts.get(str(skill / "SKILL.md")) == 1
    # the security rules look at every file, and they do it through the shared reader
    assert sorted(counts) == files
    reopened = {path: n for path, n in opened.items() if n > 1}
    assert not reopened, f"files opened more than once: {sorted(reopened.items())[:5]}"
    assert set(opened) <= set(files)  # nothing outside the regular files was opened

    codes = Counter(d["code"] for d in report["diagnostics"])
    with capsys.disabled():
        print(
            f"\n[read-once] linted {SKILLS} skills ({len(files)} files) with every rule in"
            f" {elapsed:.1f} s; {sum(counts.values())} reads, max {max(counts.values())} per"
            f" file; diagnostics by rule: {dict(sorted(codes.items()))}"
        )


# --- the one primitive every reader uses -------------------------------------------------------

_SIZES = st.sampled_from([0, 1, 100, 65_535, 65_536, 65_537, 200_000])


@settings(max_examples=60, deadline=None)
@given(length=_SIZES, most=_SIZES, sized=st.booleans())
def test_read_fd_reads_the_file_up_to_most(
    tmp_path_factory: pytest.TempPathFactory, length: int, most: int, sized: bool
) -> None:
    # read_fd asks for the bytes still expected (fstat's size, else 64 kB at a time), and must
    # give the file's first `most` bytes whether the size is known, unknown (0) or a pipe's
    data = bytes(i % 251 for i in range(length))
    path = tmp_path_factory.mktemp("read") / "f"
    path.write_bytes(data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_fd(fd, length if sized else 0, most) == data[:most]
    finally:
        os.close(fd)
    read_end, write_end = os.pipe()
    try:
        os.set_blocking(write_end, False)
        written = os.write(write_end, data[:65_536]) if data else 0
        os.close(write_end)
        write_end = -1
        assert read_fd(read_end, 0, most) == data[:written][:most]
    finally:
        os.close(read_end)
        if write_end >= 0:
            os.close(write_end)


def test_a_file_that_grows_after_fstat_is_read_as_it_was_sized(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"a" * 1000)
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        with open(path, "ab") as grow:
            grow.write(b"b" * 1000)
        assert read_fd(fd, size, 10_000) == b"a" * 1000
        assert read_fd(fd, 0, 10_000) == b"b" * 1000  # the rest, for a reader that asks
    finally:
        os.close(fd)
