"""Rule selection means the same on the command line and in a configuration file.

`--select/--extend-select/--ignore` are declared once for every command that lints (lint,
catalog, pack, serve) and resolved by the same code as the file's `select`, `extend-select`
and `ignore`: codes, prefixes, slugs and ALL select the same rules, and an unknown selector
is exit 2 with the same "did you mean" either way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import invoke, write_skill


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A skill with an error (SK206), a warning (SK307) and an info (SK306)."""
    write_skill(tmp_path, "pdf", frontmatter="name: pdf-tools\ndescription: Reads PDF files.\n")
    return tmp_path


def _toml(selection: dict[str, list[str]]) -> str:
    return "".join(f"{key} = {json.dumps(values)}\n" for key, values in selection.items())


def _id(selection: dict[str, list[str]]) -> str:
    return " ".join(f"{key}={','.join(values)}" for key, values in selection.items())


def _arguments(selection: dict[str, list[str]]) -> list[str]:
    return [arg for key, values in selection.items() for v in values for arg in (f"--{key}", v)]


def _codes(root: Path, *args: str) -> tuple[int, list[str]]:
    result = invoke("lint", "--format", "json", *args, ".", cwd=root)
    report = json.loads(result.stdout)
    return result.exit_code, sorted({d["code"] for d in report["diagnostics"]})


SELECTIONS = [
    {"select": ["SK206"]},
    {"select": ["name-directory-mismatch"]},
    {"select": ["SK3"]},
    {"select": ["sk2", "description-too-short"]},
    {"select": ["SK20", "SK1"]},
    {"ignore": ["SK3"]},
    {"ignore": ["description-no-trigger", "SK206"]},
    {"select": ["SK2"], "extend-select": ["SK306"]},
    {"select": ["ALL"], "ignore": ["SK30"]},
    {"extend-select": ["SK604"], "ignore": ["name-directory-mismatch"]},
]


@pytest.mark.parametrize("selection", SELECTIONS, ids=_id)
def test_a_selection_selects_the_same_rules_from_the_command_line_and_the_file(
    broken: Path, selection: dict[str, list[str]]
) -> None:
    from_cli = _codes(broken, "--isolated", *_arguments(selection))
    (broken / "skillcheck.toml").write_text(_toml(selection))
    from_file = _codes(broken)
    assert from_cli == from_file
    assert from_cli != _codes(broken, "--isolated")  # each selection changes the result


@pytest.mark.parametrize(
    ("key", "value", "meant"),
    [
        ("select", "name-directory-mismach", "name-directory-mismatch"),
        ("ignore", "SK99", "SK909"),
        ("extend-select", "descripton-too-short", "description-too-short"),
    ],
)
def test_an_unknown_selector_is_exit_2_with_the_same_hint_either_way(
    broken: Path, key: str, value: str, meant: str
) -> None:
    reason = f"unknown rule or prefix {value!r}; did you mean {meant!r}? (see `skillcheck rules`)"
    from_cli = invoke("lint", "--isolated", f"--{key}", value, ".", cwd=broken)
    assert from_cli.exit_code == 2
    assert from_cli.stderr.strip() == f"skillcheck: error: --{key}: {reason}"
    config = broken / "skillcheck.toml"
    config.write_text(_toml({key: [value]}))
    from_file = invoke("lint", ".", cwd=broken)
    assert from_file.exit_code == 2
    assert from_file.stderr.strip() == f"skillcheck: error: {config}: {key}: {reason}"


@pytest.mark.parametrize("command", ["catalog", "pack"])
@pytest.mark.parametrize(
    "selection",
    [{"ignore": ["SK206"]}, {"select": ["SK3"]}, {"select": ["SK3"], "extend-select": ["SK604"]}],
    ids=_id,
)
def test_the_commands_that_lint_first_take_the_same_selection(
    broken: Path, tmp_path_factory: pytest.TempPathFactory, command: str, selection: dict
) -> None:
    # SK206 is an error: selected, the lint gate refuses; deselected, the output is written
    out = tmp_path_factory.mktemp("out")
    args = ["--output", str(out / "a.tar.gz")] if command == "pack" else []
    refused = invoke(command, "--isolated", *args, ".", cwd=broken)
    assert refused.exit_code == 1
    from_cli = invoke(command, "--isolated", *_arguments(selection), *args, ".", cwd=broken)
    assert from_cli.exit_code == 0, from_cli.stderr
    (broken / "skillcheck.toml").write_text(_toml(selection))
    from_file = invoke(command, *args, ".", cwd=broken)
    assert from_file.exit_code == 0, from_file.stderr
    if command == "catalog":
        assert from_cli.stdout == from_file.stdout
