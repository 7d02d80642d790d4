"""The `openclaw` target: OpenClaw's loader as data, and SK410 on its `metadata.openclaw` gating.

Every case runs the CLI and reads its JSON report, as a user or CI would.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import lint_json, write_skill

from skillcheck.targets import TARGETS, parse_targets

DESC = "Filters JSON files with jq. Use when the user asks to extract fields from JSON."


def _sk410(tmp_path: Path, metadata: str, *args: str) -> list[tuple[int, int, str, str]]:
    write_skill(tmp_path, "jq-filter", f"name: jq-filter\ndescription: {DESC}\n{metadata}")
    _code, report = lint_json("--isolated", "--target", "openclaw", *args, str(tmp_path))
    return [
        (d["line"], d["column"], d["severity"], d["message"])
        for d in report["diagnostics"]
        if d["code"] == "SK410"
    ]


# what OpenClaw reads in full, in each way its docs and ClawHub write the block
CLEAN = {
    "one-line-json": 'metadata: {"openclaw": {"os": ["darwin", "linux"], "requires":'
    ' {"bins": ["jq"], "env": ["JQ_TOKEN"]}, "primaryEnv": "JQ_TOKEN"}}\n',
    "multi-line-json": (
        'metadata:\n  {\n    "openclaw":\n      {\n'
        '        "requires": { "bins": ["uv"], "env": ["GEMINI_API_KEY"],'
        ' "config": ["browser.enabled"] },\n'
        '        "primaryEnv": "GEMINI_API_KEY",\n      },\n  }\n'
    ),
    "block-yaml": (
        "metadata:\n  openclaw:\n    requires:\n      env:\n        - TODOIST_API_KEY\n"
        "      bins:\n        - curl\n    primaryEnv: TODOIST_API_KEY\n"
        "    install:\n      - kind: brew\n        formula: jq\n        bins: [jq]\n"
        "      - kind: node\n        package: '@scope/tool@1.2.3'\n"
        "      - kind: go\n        module: example.com/tool/cmd@v1.2.3\n"
        "      - kind: uv\n        package: ruff==0.6.0\n"
        "      - kind: download\n        url: https://example.com/tool.tar.gz\n"
        "        os: [linux]\n"
    ),
    "comma-string-os": "metadata:\n  openclaw:\n    os: darwin, linux\n    always: true\n",
    "json-in-a-string": 'metadata: \'{"openclaw": {"os": ["win32"]}}\'\n',
    "no-gating-block": "metadata:\n  author: docs-team\n",
    "empty-lists": 'metadata: {"openclaw": {"requires": [], "install": {}}}\n',
    # a list of objects beside `requires` declares variables (as ClawHub's envVars): no gate
    "env-declarations": (
        "metadata:\n  openclaw:\n    env:\n      - name: API_TOKEN\n        required: false\n"
    ),
}


@pytest.mark.parametrize("case", sorted(CLEAN))
def test_blocks_openclaw_reads_in_full_are_clean(tmp_path: Path, case: str) -> None:
    assert _sk410(tmp_path, CLEAN[case]) == []


def test_an_unknown_os_is_an_error_naming_the_platform_to_use(tmp_path: Path) -> None:
    [(line, column, severity, message)] = _sk410(
        tmp_path, "metadata:\n  openclaw:\n    os: [macos]\n"
    )
    assert (line, column, severity) == (6, 10, "error")
    assert "'macos'" in message and "use 'darwin'" in message
    assert "darwin, linux, win32" in message


def test_an_unknown_os_beside_a_valid_one_is_a_warning(tmp_path: Path) -> None:
    [(_l, _c, severity, message)] = _sk410(
        tmp_path, "metadata:\n  openclaw:\n    os: [darwin, windows]\n"
    )
    assert severity == "warning" and "use 'win32'" in message


def test_json_in_a_string_is_read_and_reported_at_the_string(tmp_path: Path) -> None:
    [(line, column, severity, message)] = _sk410(
        tmp_path, 'metadata: \'{"openclaw": {"os": ["macOS"]}}\'\n'
    )
    assert (line, column, severity) == (4, 11, "error")
    assert "'macOS'" in message


def test_the_openclaw_block_wins_over_a_legacy_one(tmp_path: Path) -> None:
    # OpenClaw reads the first namespace holding an object; the clawdbot block is never read
    found = _sk410(
        tmp_path,
        "metadata:\n  openclaw:\n    os: [linux]\n  clawdbot:\n    os: [macos]\n",
    )
    assert found == []


def test_always_true_skips_the_requirement_gates(tmp_path: Path) -> None:
    meta = 'metadata: {"openclaw": {"always": true, "requires": {"bins": ["node>=18"]}}}\n'
    assert _sk410(tmp_path, meta) == []
    meta = meta.replace("true", "false")
    [(_l, _c, severity, message)] = _sk410(tmp_path, meta)
    assert severity == "error" and "'node>=18'" in message


def test_one_impossible_alternative_in_any_bins_is_a_warning(tmp_path: Path) -> None:
    meta = 'metadata: {"openclaw": {"requires": {"anyBins": ["rg", "ripgrep (rg)"]}}}\n'
    [(_l, _c, severity, _m)] = _sk410(tmp_path, meta)
    assert severity == "warning"
    meta = 'metadata: {"openclaw": {"requires": {"anyBins": ["ripgrep (rg)"]}}}\n'
    [(_l, _c, severity, _m)] = _sk410(tmp_path, meta)
    assert severity == "error"


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("{kind: pip, package: ruff}", "'pip' is not an installer kind"),
        ("{kind: uv}", "of kind 'uv' has no 'package'"),
        ("{kind: go, package: example.com/x}", "of kind 'go' has no 'module'"),
        ("{kind: download, url: 'ftp://example.com/x.tgz'}", "is not an http(s) URL"),
        ("{kind: brew, formula: 'jq --HEAD'}", "is not a Homebrew formula name"),
        ("{formula: jq}", "has no 'kind'"),
        ("{kind: brew, cask: iterm2, os: [macos]}", "this installer is never offered"),
    ],
)
def test_install_entries_openclaw_drops_are_warnings(
    tmp_path: Path, entry: str, expected: str
) -> None:
    [(line, _c, severity, message)] = _sk410(
        tmp_path, f"metadata:\n  openclaw:\n    install:\n      - {entry}\n"
    )
    assert (line, severity) == (7, "warning")
    assert expected in message


def test_gating_keys_at_the_wrong_level_or_misspelled(tmp_path: Path) -> None:
    found = _sk410(
        tmp_path,
        "metadata:\n  openclaw:\n    env: [API_KEY]\n    require:\n      bins: [jq]\n"
        "    requires: [jq]\n    primaryEnv: [API_KEY]\n",
    )
    messages = [m for _l, _c, _s, m in found]
    assert [s for _l, _c, s, _m in found] == ["warning"] * 4
    assert "metadata.openclaw.env belongs under 'requires'" in messages[0]
    assert "did you mean 'requires'?" in messages[1]
    assert "requires is a sequence" in messages[2]
    assert "primaryEnv is not a variable name" in messages[3]


def test_findings_concern_only_the_openclaw_target(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "jq-filter",
        f"name: jq-filter\ndescription: {DESC}\nmetadata:\n  openclaw:\n    os: [macos]\n",
    )
    _code, report = lint_json("--isolated", str(tmp_path))
    assert not [d for d in report["diagnostics"] if d["code"] == "SK410"]
    _code, report = lint_json("--isolated", "--target", "all", str(tmp_path))
    [diag] = [d for d in report["diagnostics"] if d["code"] == "SK410"]
    assert diag["targets"] == ["openclaw"]
    [skill] = report["skills"]
    assert skill["outcomes"]["openclaw"] == "dropped"
    assert skill["outcomes"]["claude-code"] == "ok"


def test_all_includes_openclaw() -> None:
    assert "openclaw" in parse_targets("all")
    assert parse_targets("openclaw") == ("openclaw",)


def test_the_profile_says_what_the_loader_does() -> None:
    oc = TARGETS["openclaw"]
    assert oc.path_placeholders == ("{baseDir}",)
    assert oc.gating_namespaces[0] == "openclaw"
    assert {"clawdbot", "clawdis"} <= set(oc.gating_namespaces)
    assert oc.skill_roots[:2] == ("<workspace>/skills", "<workspace>/.agents/skills")


def test_a_lower_case_skill_md_is_not_loaded_by_openclaw(tmp_path: Path) -> None:
    # ClawHub publishes `skill.md`, but OpenClaw's loader opens `<dir>/SKILL.md` by name
    skill = write_skill(tmp_path, "jq-filter", f"name: jq-filter\ndescription: {DESC}\n")
    (skill / "SKILL.md").rename(skill / "skill.md")
    _code, report = lint_json("--isolated", "--target", "openclaw", str(tmp_path))
    [diag] = [d for d in report["diagnostics"] if d["code"] == "SK102"]
    assert diag["severity"] == "error"
    assert report["skills"][0]["outcomes"] == {"openclaw": "dropped"}


def test_openclaw_reads_past_a_bom(tmp_path: Path) -> None:
    # OpenClaw 2026.9.6, run (bench/runtimes): it strips the BOM and loads the skill
    skill = write_skill(tmp_path, "jq-filter", f"name: jq-filter\ndescription: {DESC}\n")
    path = skill / "SKILL.md"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    _code, report = lint_json("--isolated", "--target", "openclaw", str(tmp_path))
    assert report["skills"][0]["outcomes"] == {"openclaw": "ok"}


def test_advice_never_turns_an_optional_or_library_entry_into_a_gate(tmp_path: Path) -> None:
    meta = (
        'metadata: {"openclaw": {"requires": {"optional_env": ["X_TOKEN"]},'
        ' "install": [{"kind": "pip", "package": "requests"}]}}\n'
    )
    [optional, pip] = [m for _l, _c, _s, m in _sk410(tmp_path, meta)]
    assert "envVars with required: false" in optional and "use bins" not in optional
    assert "a Python command-line tool installs with kind 'uv'" in pip
    # `tools` names agent tools (exec, browser), not programs: 'bins' would never be met
    [(_l, _c, _s, tools)] = _sk410(
        tmp_path, 'metadata: {"openclaw": {"requires": {"tools": ["browser"]}}}\n'
    )
    assert "gates nothing" in tools and "did you mean" not in tools


def test_one_line_json_is_read_when_the_rest_of_the_yaml_is_broken(tmp_path: Path) -> None:
    # `description: Use when: ...` breaks YAML; OpenClaw's line reader still reads metadata
    write_skill(
        tmp_path,
        "jq-filter",
        "name: jq-filter\ndescription: Use when: the user filters JSON\n"
        'metadata: {"openclaw": {"os": ["macos"]}}\n',
    )
    _code, report = lint_json("--isolated", "--target", "openclaw", str(tmp_path))
    [diag] = [d for d in report["diagnostics"] if d["code"] == "SK410"]
    assert (diag["line"], diag["column"], diag["severity"]) == (4, 11, "error")


def test_a_platform_in_the_wrong_case_is_only_a_warning(tmp_path: Path) -> None:
    [(_l, _c, severity, message)] = _sk410(tmp_path, "metadata:\n  openclaw:\n    os: [Linux]\n")
    assert severity == "warning" and "use 'linux'" in message
