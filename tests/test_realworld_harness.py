"""bench/realworld: the corpus builder and the lint harness, on a tiny repository made here.

The real corpus is never needed: a git repository with one skill (CRLF, BOM, an executable
script, a symlink) stands in for a fetched snapshot.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "bench" / "realworld" / "build.py"
RUN = ROOT / "bench" / "realworld" / "run.py"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

FILES: dict[str, bytes] = {
    "skills/demo-skill/SKILL.md": (
        b"---\r\nname: demo-skill\r\ndescription: Demonstrates the corpus builder. Use when "
        b"testing it.\r\n---\r\n\r\nSee [missing](references/missing.md).\r\n"
    ),
    "skills/demo-skill/references/bom.md": b"\xef\xbb\xbf# With a BOM\n",
    "skills/demo-skill/scripts/run.sh": b"#!/bin/sh\necho hi\n",
    "skills/other/SKILL.md": b"---\nname: other\ndescription: Another skill, for the test.\n---\n",
}
# Committed after the files: checkout and git archive would rewrite LF to CRLF and drop *.md.
ATTRIBUTES = b"* text eol=crlf\n*.md export-ignore\n"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    out = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    )
    return out.stdout.decode().strip()


@pytest.fixture
def snapshot(tmp_path: Path) -> tuple[Path, str]:
    """A mirror root holding owner+demo/repo with one commit; (mirror root, commit)."""
    repo = tmp_path / "mirror" / "owner+demo" / "repo"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q")
    _git(repo, "config", "core.autocrlf", "false")
    for rel, data in FILES.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    os.chmod(repo / "skills/demo-skill/scripts/run.sh", 0o755)
    os.symlink("SKILL.md", repo / "skills/demo-skill/LINK.md")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "demo")
    (repo / ".gitattributes").write_bytes(ATTRIBUTES)
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-q", "-m", "attributes")
    return tmp_path / "mirror", _git(repo, "rev-parse", "HEAD")


def _build(tmp_path: Path, mirror: Path, commit: str) -> subprocess.CompletedProcess[str]:
    listing = tmp_path / "repos.txt"
    listing.write_text(f"# test\nowner/demo {commit} vendor\n")
    return subprocess.run(
        [sys.executable, str(BUILD), "--mirror", str(mirror), "--list", str(listing),
         "--dest", str(tmp_path / "corpus")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_build_is_byte_exact_with_modes_and_symlinks(tmp_path: Path, snapshot) -> None:
    mirror, commit = snapshot
    proc = _build(tmp_path, mirror, commit)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "corpus" / "owner__demo"
    for rel, data in FILES.items():
        assert (out / rel).read_bytes() == data, rel  # CRLF, LF and BOM kept, nothing ignored
    assert (out / ".gitattributes").read_bytes() == ATTRIBUTES
    assert os.stat(out / "skills/demo-skill/scripts/run.sh").st_mode & 0o777 == 0o755
    assert os.stat(out / "skills/demo-skill/SKILL.md").st_mode & 0o777 == 0o644
    assert os.readlink(out / "skills/demo-skill/LINK.md") == "SKILL.md"
    manifest = json.loads((tmp_path / "corpus" / "MANIFEST.json").read_text())
    entry = manifest["repos"]["owner/demo"]
    assert entry["commit"] == commit and entry["skill_md"] == 2 and entry["symlinks"] == 1
    assert entry["missing_blobs"] == []


def test_build_names_a_missing_snapshot_or_commit(tmp_path: Path, snapshot) -> None:
    mirror, commit = snapshot
    other = "0" * 40
    proc = _build(tmp_path, mirror, other)
    assert proc.returncode == 1
    assert f"does not have the pinned commit {other}" in proc.stderr
    proc = _build(tmp_path, tmp_path / "nowhere", commit)
    assert proc.returncode == 2 and "no snapshot of owner/demo" in proc.stderr


def test_run_reports_samples_compares_and_scores(tmp_path: Path, snapshot) -> None:
    mirror, commit = snapshot
    assert _build(tmp_path, mirror, commit).returncode == 0
    corpus = tmp_path / "corpus"
    saved, sample = tmp_path / "run.json", tmp_path / "sample.md"
    cmd = [sys.executable, str(RUN), "--corpus", str(corpus),
           "--skillcheck", f"{sys.executable} -m skillcheck", "--no-cache", "--json", str(saved),
           "--sample", "3", "--seed", "4", "--sample-md", str(sample)]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert "timing: wall" in text and "peak RSS" in text
    assert "SK501" in text  # the broken link, in the per-rule table and the sample
    assert "owner__demo" in text
    assert "   >    6 | See [missing](references/missing.md)." in text  # line with context
    report = json.loads(saved.read_text())["report"]
    assert any(d["code"] == "SK501" for d in report["diagnostics"])

    # Same run compared with itself: no deltas. Same seed from the saved run: same sample.
    again = subprocess.run(
        [sys.executable, str(RUN), "--corpus", str(corpus), "--from-json", str(saved),
         "--compare", str(saved), "--sample", "3", "--seed", "4",
         "--sample-md", str(tmp_path / "again.md")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    rows = [line.split() for line in again.stdout.split("## Compared")[1].splitlines()[2:]]
    assert rows and all(r[4] == "+0" and r[5] == "0" and r[6] == "0" for r in rows)
    assert (tmp_path / "again.md").read_text() == sample.read_text()

    # Judge every item true, then score.
    judged = sample.read_text().replace("verdict: \n", "verdict: true — checked\n")
    (tmp_path / "judged.md").write_text(judged)
    score = subprocess.run(
        [sys.executable, str(RUN), "--score", str(tmp_path / "judged.md")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert score.returncode == 0, score.stderr
    assert "| SK501 | error | 1 | 1 | 0 | 100 % |" in score.stdout


def test_review_allocation_covers_every_rule_and_respects_counts() -> None:
    sys.path.insert(0, str(RUN.parent))
    try:
        import run as harness  # bench/realworld/run.py
    finally:
        sys.path.remove(str(RUN.parent))
    counts = {"SK502": 6340, "SK801": 1141, "SK206": 875, "SK702": 7, "SK301": 1}
    share = harness.allocate(counts, 150)
    assert sum(share.values()) == 150
    assert all(1 <= share[k] <= counts[k] for k in counts)
    assert share["SK502"] > share["SK801"] > share["SK702"]
    assert harness.allocate({"A": 2, "B": 1}, 150) == {"A": 2, "B": 1}
