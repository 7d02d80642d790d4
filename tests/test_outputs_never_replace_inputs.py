"""No command replaces what it reads with what it writes (issue 29, item 4): an ``--output``
inside a linted skill, or equal to an input file, is refused before anything is written,
by the one check pack already made (``atomic.holder_of``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke, write_skill


@pytest.mark.parametrize("command", ["lint", "catalog"])
@pytest.mark.parametrize(
    "output", ["skills/pdf-tools/SKILL.md", "skills/pdf-tools/report.txt", "skills/pdf-tools"]
)
def test_an_output_inside_a_skill_is_refused(tmp_path: Path, command: str, output: str) -> None:
    skill = write_skill(tmp_path / "skills", "pdf-tools")
    before = {p: p.read_bytes() for p in skill.rglob("*") if p.is_file()}
    result = invoke(command, "--isolated", "skills", "-o", output, cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert "is inside skill" in result.stderr and "write the output elsewhere" in result.stderr
    assert {p: p.read_bytes() for p in skill.rglob("*") if p.is_file()} == before


def test_an_output_equal_to_an_input_file_is_refused(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skills", "pdf-tools")
    notes = tmp_path / "notes.md"  # a file PATH that belongs to no skill (pre-commit)
    notes.write_text("mine\n")
    result = invoke("lint", "--isolated", "notes.md", "skills", "-o", "notes.md", cwd=tmp_path)
    assert result.exit_code == 2 and "is the input notes.md" in result.stderr
    assert notes.read_text() == "mine\n"
    assert (skill / "SKILL.md").read_text().startswith("---\nname: pdf-tools")


@pytest.mark.parametrize("command", ["lint", "catalog"])
def test_an_output_beside_the_skills_is_written(tmp_path: Path, command: str) -> None:
    write_skill(tmp_path / "skills", "pdf-tools")
    result = invoke(command, "--isolated", "skills", "-o", "report.out", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "report.out").stat().st_size > 0
