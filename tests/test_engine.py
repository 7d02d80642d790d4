"""A bug inside a rule is an internal error: exit 2, one line naming the rule, no traceback."""

from __future__ import annotations

import dataclasses

import pytest
from click.testing import CliRunner

from skillcheck.rules import all_rules
from skillcheck.rules.base import registry


@pytest.mark.parametrize("code", ["SK113", "SK801", "SK100"])  # skill, collection, discovery
def test_a_failing_rule_exits_2_naming_the_rule(tmp_path, monkeypatch, code) -> None:
    from conftest import write_skill

    from skillcheck.cli import cli

    write_skill(tmp_path, "pdf-tools")
    all_rules()
    original = registry()[code]

    def boom(*_args, **_kwargs):
        raise ZeroDivisionError("deliberate")
        yield  # a generator, like every check

    monkeypatch.setitem(registry(), code, dataclasses.replace(original, check=boom))
    monkeypatch.delenv("SKILLCHECK_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["lint", "--isolated", "."])
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr
    assert f"internal error: rule {code} ({original.slug}) failed" in result.stderr
    assert "ZeroDivisionError: deliberate" in result.stderr
