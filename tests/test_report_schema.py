"""schemas/report.schema.json documents `lint --format json` exactly: every fixture case's
report validates against it, and the schema rejects what the report must never hold."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from conftest import FIXTURES, lint_json

from skillcheck.schemas import load_schema

CASES = sorted(p for p in (FIXTURES / "invalid").iterdir() if p.is_dir())


@pytest.fixture(scope="module")
def validator():
    import jsonschema

    schema = load_schema("report.schema.json")
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _report(case: Path) -> dict:
    config = case / "skillcheck.toml"
    args = ["--config", str(config)] if config.exists() else ["--isolated"]
    _code, report = lint_json(*args, ".", cwd=case)
    return report


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_fixture_report_matches_the_schema(validator, case: Path) -> None:
    report = _report(case)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(report)]
    assert errors == []


def test_the_valid_examples_for_every_target_match_the_schema(validator) -> None:
    _code, report = lint_json("--isolated", "--target", "all", str(FIXTURES / "valid"))
    validator.validate(report)
    assert set(report["targets"]) == set(report["skills"][0]["outcomes"])


@pytest.mark.parametrize(
    ("label", "mutate"),
    [
        ("unknown top-level key", lambda r: r.update(extra=1)),
        ("unknown outcome", lambda r: r["skills"][0]["outcomes"].update(codex="broken")),
        ("unknown target", lambda r: r["skills"][0]["outcomes"].update(vscode="ok")),
        ("line 0", lambda r: r["diagnostics"][0].update(line=0)),
        ("bad code", lambda r: r["diagnostics"][0].update(code="E501")),
        ("missing field", lambda r: r["diagnostics"][0].pop("end_column")),
        ("unknown severity", lambda r: r["diagnostics"][0].update(severity="fatal")),
        ("negative count", lambda r: r["summary"].update(errors=-1)),
    ],
)
def test_the_schema_is_strict(validator, label: str, mutate) -> None:
    report = _report(FIXTURES / "invalid" / "SK206-name-directory-mismatch")
    validator.validate(report)
    broken = copy.deepcopy(report)
    mutate(broken)
    assert not validator.is_valid(broken), label
