"""The runtime grid of the text report: one mark per skill and target, the rules on request."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import FIXTURES, invoke

SYNCED = FIXTURES / "invalid/SK207-name-reserved-synced/synced"  # Claude Code drops it
RENAMED = FIXTURES / "invalid/SK206-name-directory-mismatch/pdf"  # name != directory
VALID = FIXTURES / "valid/csv-insights"


def _tree(tmp_path: Path) -> Path:
    for source in (SYNCED, RENAMED, VALID):
        shutil.copytree(source, tmp_path / "skills" / source.name)
    return tmp_path / "skills"


def _grid(stdout: str) -> dict[str, dict[str, str]]:
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Runtimes ("))
    header = lines[start + 1].split()
    assert header[0] == "skill"
    rows = {}
    for line in lines[start + 2 :]:
        if not line or line.startswith(" ") or " other skill" in line or line.startswith("("):
            if not line:
                break
            continue
        name, *marks = line.split()
        rows[name] = dict(zip(header[1:], marks, strict=True))
    return rows


def test_the_grid_shows_each_outcome_the_json_report_gives(tmp_path: Path) -> None:
    _tree(tmp_path)
    args = ("lint", "--isolated", "--target", "all", "skills")
    text = invoke(*args, cwd=tmp_path).stdout
    data = json.loads(invoke(*args, "--format", "json", cwd=tmp_path).stdout)
    marks = {"ok": "ok", "degraded": "deg", "rejected": "REJ", "dropped": "DROP"}
    expected = {
        skill["path"]: {t: marks[o] for t, o in skill["outcomes"].items()}
        for skill in data["skills"]
        if set(skill["outcomes"].values()) != {"ok"}
    }
    grid = _grid(text)
    assert grid == expected
    assert grid["skills/synced"]["claude-code"] == "DROP"
    assert grid["skills/pdf"]["copilot"] == "DROP" and grid["skills/pdf"]["skills-ref"] == "REJ"
    assert "1 other skill: ok in every runtime checked" in text  # csv-insights
    assert "SK207:" not in text  # the rules only on request


def test_outcome_rules_name_the_rules_behind_each_mark(tmp_path: Path) -> None:
    _tree(tmp_path)
    text = invoke(
        "lint", "--isolated", "--target", "all", "--outcome-rules", "skills", cwd=tmp_path
    ).stdout
    lines = text.splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith("skills/synced "))
    assert lines[row + 1] == "    SK207: claude-code"


def test_no_grid_with_one_target_or_in_quiet_mode(tmp_path: Path) -> None:
    _tree(tmp_path)
    assert "Runtimes" not in invoke("lint", "--isolated", "skills", cwd=tmp_path).stdout
    quiet = invoke("lint", "--isolated", "--target", "all", "-q", "skills", cwd=tmp_path)
    assert "Runtimes" not in quiet.stdout
