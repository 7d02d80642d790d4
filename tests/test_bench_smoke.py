"""The benchmark script still runs end to end and prints every figure (so it cannot rot).

Speed itself is shown by ``bench/run.py`` on real sizes, not asserted here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs the benchmark end to end

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "bench" / "run.py"
GENERATE = ROOT / "bench" / "generate.py"

ROWS = [
    "lint cold, 20 skills",
    "lint cold --jobs 1, 20 skills",
    "lint warm, 20 skills, nothing changed",
    "lint warm, 20 skills, one skill edited",
    "peak RSS, lint 20 skills (largest process)",
    "peak RSS, lint 20 skills (process tree)",
    "skillcheck --version",
    "python -c pass (interpreter floor)",
    "lint one skill, as pre-commit does",
    "catalog -o catalog.json, 20 skills",
    "pack -o out.tar.gz, 20 skills",
    "lint cold, same tree",
    "pack -o out.tar.gz, 20 skills, warm cache",
    "pack -o out.tar.gz, 20 skills, after a lint",
    "tar czf, same files",
    *(f"lint {kind}, 20 skills, --format {fmt}" for fmt in ("json", "sarif", "github", "junit")
      for kind in ("cold", "warm")),
]  # fmt: skip
# a hang guard only: a loaded machine may take minutes for what takes seconds idle
HANG = 900
FIGURE = r"\s+(\d+)\s+(\d+(?:\.\d+)?) (ms|s|MB)\s"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_benchmark_prints_every_row_and_leaves_its_trees_intact(tmp_path: Path) -> None:
    cache = tmp_path / "trees"
    figures = tmp_path / "figures.json"
    argv = ["--sizes", "20", "--runs", "1", "--no-compare", "--no-realworld"]
    argv += ["--cache-dir", str(cache)]
    done = subprocess.run(
        [sys.executable, str(RUN), *argv, "--json", str(figures)],
        capture_output=True,
        text=True,
        timeout=HANG,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "command: python bench/run.py --sizes 20 --runs 1 --no-compare --no-realworld" in out
    assert re.search(r"^machine: \d+ CPUs", out, re.M)
    assert re.search(
        r"^skillcheck \S+ \(.+\), source .+; cache: (yes|no); --jobs: (yes|no)$", out, re.M
    )
    assert "FAILED" not in out
    for label in ROWS:
        line = re.search(rf"^\s*{re.escape(label)}{FIGURE}", out, re.M)
        assert line, f"row {label!r} missing or without a figure:\n{out}"
        assert int(line.group(1)) >= 1
        assert float(line.group(2)) > 0
    assert re.search(r"pack/tar \d+\.\d\d", out)

    document = json.loads(figures.read_text())
    labels = [row["label"] for row in document["rows"]]
    assert sorted(labels) == sorted(ROWS)
    for row in document["rows"]:
        assert row["error"] is None
        assert row["min"] <= row["median"] <= row["max"]
    assert document["trees"]["20"]["files"] == 100

    # The edited skill was restored and no cache was left behind: the cached tree is still
    # exactly what the generator writes.
    fresh = tmp_path / "fresh"
    made = subprocess.run(
        [sys.executable, str(GENERATE), "--count", "20", "--findings", "0.1", str(fresh)],
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert made.returncode == 0, made.stderr
    (cached,) = [p for p in cache.iterdir() if "findings0.1-" in p.name]
    assert (cached / "COMPLETE").is_file()
    assert _files(cached / "skills") == _files(fresh)


def test_benchmark_measures_a_real_world_tree_and_its_growth_samples(tmp_path: Path) -> None:
    # a stand-in for bench/realworld/corpus: 12 skills in two "repositories"
    corpus = tmp_path / "corpus"
    for repo, count in (("a__one", 7), ("b__two", 5)):
        made = subprocess.run(
            [sys.executable, str(GENERATE), "--count", str(count), str(corpus / repo / "skills")],
            capture_output=True,
            text=True,
            timeout=HANG,
        )
        assert made.returncode == 0, made.stderr
    before = _files(corpus)
    figures = tmp_path / "figures.json"
    argv = ["--sizes", "5", "--runs", "1", "--no-compare", "--cache-dir", str(tmp_path / "t")]
    argv += ["--realworld", str(corpus), "--growth", "4,8,50", "--json", str(figures)]
    done = subprocess.run(
        [sys.executable, str(RUN), *argv], capture_output=True, text=True, timeout=HANG
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    for label in (
        "lint cold, 12 real skills",
        "lint warm, 12 real skills, nothing changed",
        "peak RSS, lint 12 real skills (largest process)",
        "lint cold, 4 sampled real skills",
        "lint cold, 8 sampled real skills",
    ):
        assert re.search(rf"^\s*{re.escape(label)}{FIGURE}", out, re.M), f"{label!r}:\n{out}"
    assert "no agnix in this run" in out
    assert "FAILED" not in out
    assert "12 real skills, one skill edited" not in out  # the corpus is never edited
    assert "50: corpus has fewer skills; skipped" in done.stderr
    document = json.loads(figures.read_text())
    assert document["trees"]["realworld"]["skills"] == 12
    assert _files(corpus) == before  # the corpus is measured, never changed
