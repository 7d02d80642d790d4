"""Every fixture case lints to exactly its expected diagnostics, positions included.

A case is a directory ``fixtures/invalid/<CODE>-<slug>/`` holding one or more skills, an
optional ``skillcheck.toml`` (targets and options for the case) and ``expected.txt``: one
line per diagnostic, ``<path>:<line>:<column>: <CODE> <severity>``, paths relative to the
case directory. The list must match exactly: nothing missing, nothing extra.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, lint_json
from skillcheck.rules import all_rules

CASES = sorted(p for p in (FIXTURES / "invalid").iterdir() if p.is_dir())
VALID = FIXTURES / "valid"


def _expected(case: Path) -> list[str]:
    lines = (case / "expected.txt").read_text(encoding="utf-8").splitlines()
    return sorted(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def _actual(case: Path) -> list[str]:
    config = case / "skillcheck.toml"
    args = ["--config", str(config)] if config.exists() else ["--isolated"]
    _code, report = lint_json(*args, ".", cwd=case)
    return sorted(
        f"{d['path']}:{d['line']}:{d['column']}: {d['code']} {d['severity']}"
        for d in report["diagnostics"]
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_reports_exactly_the_expected_diagnostics(case: Path) -> None:
    assert _actual(case) == _expected(case)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_exercises_its_rule(case: Path) -> None:
    code = case.name.split("-", 1)[0]
    assert any(f" {code} " in line for line in _expected(case)), (
        f"{case.name} does not expect any {code} diagnostic"
    )


def test_every_rule_has_a_fixture() -> None:
    covered = {c.name.split("-", 1)[0] for c in CASES}
    missing = [r.code for r in all_rules() if r.code not in covered]
    assert not missing, f"rules without a fixture case under fixtures/invalid: {missing}"


def test_valid_examples_lint_clean_for_every_target() -> None:
    code, report = lint_json("--isolated", "--target", "all", str(VALID))
    assert report["diagnostics"] == []
    assert code == 0
    assert len(report["skills"]) >= 3
    for skill in report["skills"]:
        assert set(skill["outcomes"].values()) == {"ok"}
