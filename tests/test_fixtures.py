"""Every fixture case lints to exactly its expected diagnostics, positions included.

A case is a directory ``fixtures/invalid/<CODE>-<slug>/`` holding one or more skills, an
optional ``skillcheck.toml`` (targets and options for the case) and ``expected.txt``: one
line per diagnostic, ``<path>:<line>:<column>: <CODE> <severity>``, paths relative to the
case directory. The list must match exactly: nothing missing, nothing extra. A case may also
hold ``setup.txt``: entries created in a temporary copy of the case before linting.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from conftest import FIXTURES, lint_json

from skillcheck.rules import all_rules

CASES = sorted(p for p in (FIXTURES / "invalid").iterdir() if p.is_dir())
VALID = FIXTURES / "valid"


def _expected(case: Path) -> list[str]:
    lines = (case / "expected.txt").read_text(encoding="utf-8").splitlines()
    return sorted(line.strip() for line in lines if line.strip() and not line.startswith("#"))


def _build(root: Path) -> None:
    """Create what git cannot hold (FIFOs) or what must not be committed because it breaks
    checkouts on some systems (reserved or colliding names), listed in ``setup.txt`` as
    ``fifo|file|dir <path>`` lines; paths take Python escapes (``\\x7f``, ``\\u0301``).
    ``repeat-last-line <path> <size>`` grows a committed file to SIZE bytes."""
    for line in (root / "setup.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, _, raw = line.partition(" ")
        if kind == "repeat-last-line":
            # a huge file kept small in git: its last line repeated up to SIZE bytes
            raw, _, size = raw.rpartition(" ")
            _repeat_last_line(root / raw, int(size))
            continue
        path = root / raw.encode("latin-1", "backslashreplace").decode("unicode_escape")
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "dir":
            path.mkdir()
        else:
            path.write_text("placeholder\n", encoding="utf-8")


def _repeat_last_line(path: Path, size: int) -> None:
    data = path.read_bytes()
    last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1] + b"\n"
    count, remainder = divmod(size - len(data), len(last))
    assert remainder == 0, f"{path}: {size} is not reachable by repeating {last!r}"
    path.write_bytes(data + last * count)


def _actual(case: Path) -> list[str]:
    if (case / "setup.txt").exists():
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / case.name
            shutil.copytree(case, copy, symlinks=True)
            _build(copy)
            return _lint_case(copy)
    return _lint_case(case)


def _lint_case(case: Path) -> list[str]:
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
