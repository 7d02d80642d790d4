"""Rule documentation is generated from the registry: README table, `rule` pages, `rules`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, invoke

from skillcheck.rules import all_rules

RULES = all_rules()
README = ROOT / "README.md"


def _docs(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skillcheck.report.docs", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_readme_rule_table_is_current() -> None:
    result = _docs("--check-readme")
    assert result.returncode == 0, (
        "README.md's rule table is stale: run `python -m skillcheck.report.docs --write-readme`\n"
        + result.stderr
    )
    table = README.read_text(encoding="utf-8").split("<!-- rules-table:start -->")[1]
    rows = [line for line in table.split("<!-- rules-table:end -->")[0].splitlines() if line]
    assert len(rows) == 2 + len(RULES)  # header, separator, one row per rule
    for rule, row in zip(RULES, rows[2:], strict=True):
        assert row.startswith(f"| {rule.code} | `{rule.slug}` | {rule.severity} |")
        assert ("| yes |" in row) is rule.fixable


def test_a_stale_table_is_detected_and_rewritten(tmp_path: Path) -> None:
    copy = tmp_path / "README.md"
    text = README.read_text(encoding="utf-8")
    first = f"| {RULES[0].code} |"
    stale = "\n".join(line for line in text.splitlines() if not line.startswith(first)) + "\n"
    copy.write_text(stale, encoding="utf-8")
    result = _docs("--check-readme", str(copy))
    assert result.returncode == 1 and "stale" in result.stderr
    assert _docs("--write-readme", str(copy)).returncode == 0
    assert copy.read_text(encoding="utf-8") == text
    assert _docs("--check-readme", str(copy)).returncode == 0


def test_a_readme_without_markers_is_an_error(tmp_path: Path) -> None:
    copy = tmp_path / "README.md"
    copy.write_text("# no table here\n", encoding="utf-8")
    result = _docs("--write-readme", str(copy))
    assert result.returncode == 2 and "rules-table:start" in result.stderr
    assert copy.read_text(encoding="utf-8") == "# no table here\n"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_every_rule_page_has_what_why_example_and_fix(rule) -> None:
    for name in (rule.code, rule.slug, rule.code.lower()):
        result = invoke("rule", name)
        assert result.exit_code == 0
        page = result.stdout
        assert page.startswith(f"# {rule.code} {rule.slug}\n")
        for heading in ("## What it does", "## Why is this bad?", "## Example", "Use instead:"):
            assert f"\n{heading}\n" in page, f"{rule.code}: no {heading!r}"
        assert f"Fixable: {'yes' if rule.fixable else 'no'}." in page
    for part in ("summary", "what", "why", "bad", "good"):
        text = getattr(rule, part)
        assert text.strip(), f"{rule.code}: empty {part}"
        assert text in page
    assert rule.bad != rule.good, f"{rule.code}: the example and its fix are the same"


def test_an_unknown_rule_is_a_usage_error() -> None:
    result = invoke("rule", "SK999")
    assert result.exit_code == 2 and "SK999" in result.stderr


def test_rules_json_matches_the_registry() -> None:
    result = invoke("rules", "--format", "json")
    listed = json.loads(result.stdout)
    assert [(r["code"], r["slug"], r["fixable"]) for r in listed] == [
        (r.code, r.slug, r.fixable) for r in RULES
    ]
    # whether `fixable` is true is checked against the fixes rules really attach:
    # test_rule_unit.py::test_exactly_the_fixable_rules_attach_fixes


def test_rules_text_lists_every_rule_of_the_registry() -> None:
    lines = invoke("rules").stdout.splitlines()
    assert len(lines) == len(RULES)
    for rule, line in zip(RULES, lines, strict=True):
        assert line.split()[:3] == [rule.code, rule.slug, str(rule.severity)]
        assert rule.summary in line
        assert ("(fixable)" in line) is rule.fixable
        assert ("(off by default)" in line) is not rule.default_enabled
