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


def test_an_entry_that_vanishes_after_listing_is_not_an_error(tmp_path, monkeypatch) -> None:
    """An editor's temp file renamed away between the listing and its stat is simply gone:
    no SK100 'cannot be read', which would fail the run."""
    import os

    from conftest import lint_json, write_skill

    from skillcheck.source import load

    skill = write_skill(tmp_path, "pdf-tools", files={".SKILL.md.tmp": "x", "tmpdir/a": "y"})
    real_scandir = os.scandir

    def scandir_then_vanish(path):
        with real_scandir(path) as it:
            entries = list(it)
        for name in (".SKILL.md.tmp", "tmpdir"):
            doomed = skill / name
            if doomed.is_dir():
                (doomed / "a").unlink()
                doomed.rmdir()
            elif doomed.exists():
                doomed.unlink()

        class Listing(list):
            def __enter__(self):
                return iter(self)

            def __exit__(self, *exc):
                return False

        return Listing(entries)

    class OsWithRacyScandir:  # only load's view of os changes; discovery lists as usual
        def __getattr__(self, name):
            return getattr(os, name)

        scandir = staticmethod(scandir_then_vanish)

    monkeypatch.setattr(load, "os", OsWithRacyScandir())
    code, report = lint_json("--isolated", ".", cwd=tmp_path)
    assert [d["code"] for d in report["diagnostics"]] == []
    assert code == 0
