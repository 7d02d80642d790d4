"""A rule is one unit: what it reads, its options and whether it fixes come from its declaration.

The registry (``skillcheck.rules``) is the one source of the configuration schema's rule
options, the defaults a run uses, the rule pages and the README's option table; whether a
rule is ``fixable`` is checked against what it really does on every fixture case.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT, invoke, lint_json
from test_fixtures import _build

from skillcheck.engine.config import build_settings
from skillcheck.report.docs import OPTIONS_END, OPTIONS_START, options_table
from skillcheck.rules import Input, all_rules, option_defaults, rule_options
from skillcheck.schemas import load_schema
from skillcheck.schemas.subset import validate
from skillcheck.settings import Config

RULES = all_rules()
OPTIONS = rule_options()
SCHEMA = load_schema("config.schema.json")
# keys of the run itself (Settings), not options of a rule
RUN_KEYS = {"target", "select", "extend-select", "ignore", "per-path-ignores", "exclude", "strict"}
CASES = sorted(p for p in (FIXTURES / "invalid").iterdir() if p.is_dir())


# --- options ----------------------------------------------------------------------------


def test_the_config_schema_declares_exactly_the_rule_options() -> None:
    """schemas/config.schema.json is kept as a file (it is published for editors, and the
    configuration is validated below the rule layer); it must say what the rules declare."""
    props = SCHEMA["properties"]
    tables = {o.table for o in OPTIONS.values() if o.table}
    top = {o.name for o in OPTIONS.values() if not o.table}
    assert set(props) == RUN_KEYS | tables | top, "schema keys and rule options disagree"
    for option in OPTIONS.values():
        if option.table:
            table = props[option.table]
            assert table["type"] == "object" and table["additionalProperties"] is False
            fragment = table["properties"].get(option.name.split(".", 1)[1])
        else:
            fragment = props[option.name]
        expected = {**option.schema, "description": option.doc}
        assert fragment == expected, f"config.schema.json: {option.name} should be {expected}"
    for table in tables:
        declared = {o.name.split(".", 1)[1] for o in OPTIONS.values() if o.table == table}
        assert set(props[table]["properties"]) == declared, table


def test_the_config_schema_is_the_one_generated_from_the_registry() -> None:
    """Each rule option is declared once, in its rule; the committed schema is generated
    from the registry (`python -m skillcheck.report.docs --write-schema`), byte for byte."""
    import json

    from skillcheck.report.docs import CONFIG_SCHEMA, config_schema_text

    text = CONFIG_SCHEMA.read_text(encoding="utf-8")
    assert text == config_schema_text(json.loads(text)), (
        "schemas/config.schema.json is stale: run python -m skillcheck.report.docs --write-schema"
    )
    # a doc edited by hand in the file is rewritten from the registry
    stale = json.loads(text)
    stale["properties"]["budgets"]["properties"]["body-lines"]["description"] = "old"
    stale["properties"]["tokenizer"]["description"] = "old"
    assert json.loads(config_schema_text(stale)) == json.loads(text)


@pytest.mark.parametrize("option", OPTIONS.values(), ids=list(OPTIONS))
def test_every_default_satisfies_its_own_schema(option) -> None:
    assert option.doc.strip() and "\n" not in option.doc
    if option.default is not None:
        assert not validate(option.default, dict(option.schema)), option.name


def test_a_run_uses_the_declared_defaults() -> None:
    settings = build_settings(Config())
    defaults = option_defaults()
    assert settings.options == defaults  # frontmatter-schema: not set (None)
    assert set(defaults) == {o.table or o.name for o in OPTIONS.values()}
    settings.options["extra-fields"].append("owner")  # a run's lists are its own
    assert OPTIONS["extra-fields"].default == []


def test_an_option_shared_by_rules_is_declared_once() -> None:
    readers = {
        name: [r.code for r in RULES if any(o is option for o in r.options)]
        for name, option in OPTIONS.items()
    }
    assert readers["tokenizer"] == ["SK601", "SK602", "SK605", "SK608"]
    assert readers["duplicate-scope"] == ["SK801", "SK802"]
    for name, codes in readers.items():
        assert codes, f"{name} is read by no rule"


@pytest.mark.parametrize("rule", [r for r in RULES if r.options], ids=lambda r: r.code)
def test_the_rule_page_lists_its_options(rule) -> None:
    page = invoke("rule", rule.code).stdout
    section = page.split("\n## Options\n", 1)[1]
    for option in rule.options:
        default = "not set" if option.default is None else f"`{json.dumps(option.default)}`"
        assert f"- `{option.name}` (default {default}): {option.doc}\n" in section


def test_the_readme_option_table_is_the_registry() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert OPTIONS_START in text and OPTIONS_END in text
    table = text.split(OPTIONS_START, 1)[1].split(OPTIONS_END, 1)[0]
    assert table.strip("\n") == options_table().strip("\n"), (
        "README.md's option table is stale: run `python -m skillcheck.report.docs --write-readme`"
    )
    for name in OPTIONS:
        assert f"| `{name}` |" in table


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[budgets]\nbody-line = 3\n", "unknown key 'body-line'; did you mean 'body-lines'?"),
        ('name-charset = "latin"\n', "key 'name-charset': \"latin\": "),
        ("[budgets]\nbody-lines = 0\n", "key 'budgets.body-lines': 0: "),
        ('duplicate-scope = "all"\n', "key 'duplicate-scope': \"all\": "),
    ],
)
def test_a_bad_option_value_is_a_usage_error(tmp_path: Path, toml: str, message: str) -> None:
    (tmp_path / "skillcheck.toml").write_text(toml, encoding="utf-8")
    result = invoke("lint", ".", cwd=tmp_path)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


# --- what a rule reads ----------------------------------------------------------------------


def test_every_rule_declares_what_it_reads() -> None:
    kinds = {r.code: r.reads for r in RULES}
    assert {kinds[c] for c in ("SK801", "SK802", "SK803", "SK608")} == {Input.COLLECTION}
    assert kinds["SK100"] is Input.DISCOVERY and kinds["SK120"] is Input.SUPPRESSIONS
    assert sum(k is Input.SKILL for k in kinds.values()) == len(RULES) - 6


# --- fixes ---------------------------------------------------------------------------------


def _copy(case: Path, dest: Path) -> Path:
    copy = dest / case.name
    shutil.copytree(case, copy, symlinks=True)
    if (copy / "setup.txt").exists():
        _build(copy)
    return copy


def _diagnostics(case: Path) -> list[dict]:
    config = case / "skillcheck.toml"
    args = ["--config", str(config)] if config.exists() else ["--isolated"]
    return lint_json(*args, ".", cwd=case)[1]["diagnostics"]


def test_exactly_the_fixable_rules_attach_fixes(tmp_path: Path) -> None:
    """Across every fixture case, the rules that attach a fix are those declared fixable, and
    each fixable rule has a case of its own where it does."""
    fixing: set[str] = set()
    for case in CASES:
        found = _diagnostics(_copy(case, tmp_path) if (case / "setup.txt").exists() else case)
        fixing |= {d["code"] for d in found if d["fix"] is not None}
    assert fixing == {r.code for r in RULES if r.fixable}


@pytest.mark.parametrize("rule", [r for r in RULES if r.fixable], ids=lambda r: r.code)
def test_fix_resolves_what_a_fixable_rule_offers(tmp_path: Path, rule) -> None:
    cases = [c for c in CASES if c.name.startswith(f"{rule.code}-")]
    offered = 0
    for case in cases:
        copy = _copy(case, tmp_path)
        found = [d for d in _diagnostics(copy) if d["code"] == rule.code]
        fixes = [d for d in found if d["fix"]]
        if not fixes:
            continue
        offered += len(fixes)
        config = copy / "skillcheck.toml"
        args = ["--config", str(config)] if config.exists() else ["--isolated"]
        result = invoke("lint", "--fix", *args, ".", cwd=copy)
        assert result.exit_code in (0, 1), result.stderr
        left = [d for d in _diagnostics(copy) if d["code"] == rule.code]
        assert not [d for d in left if d["fix"]], f"{case.name}: --fix left {left}"
        assert len(left) <= len(found) - len(fixes), f"{case.name}: {left}"
    assert offered, f"{rule.code} is fixable but no fixture case of its own offers a fix"


def test_a_budget_default_is_declared_once_with_its_option() -> None:
    """A rule reads a budget by its key; the default is the one its ``budget_option``
    declares (and the schema and docs show), and a key never declared is an error."""
    from skillcheck.rules import all_rules
    from skillcheck.rules.base import Context, budget

    declared = {
        o.name.removeprefix("budgets."): o.default
        for r in all_rules()
        for o in r.options
        if o.name.startswith("budgets.")
    }
    assert declared["body-lines"] == 500 and declared["collection-catalog-tokens"] is None
    for key, default in declared.items():
        assert budget(Context(), key) == default
        assert budget(Context(options={"budgets": {key: 7}}), key) == 7
    with pytest.raises(KeyError):
        budget(Context(), "body-line")
