"""The command line end to end, through the installed `skillcheck` command: exit codes, rule
selection, configuration discovery and errors, output files, colour, rule docs, targets."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, run_skillcheck, write_skill

DESC = "Extracts text and tables from PDF files. Use when the user asks about PDFs."
INVALID = FIXTURES / "invalid"


def _json(result: subprocess.CompletedProcess) -> dict:
    return json.loads(result.stdout)


def _codes(result: subprocess.CompletedProcess) -> list[str]:
    return sorted({d["code"] for d in _json(result)["diagnostics"]})


def _assert_usage_error(result: subprocess.CompletedProcess, *needles: str) -> str:
    err = result.stderr.decode()
    assert result.returncode == 2, (result.stdout, err)
    assert err.startswith("skillcheck: error: "), err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


@pytest.fixture
def warned(tmp_path: Path) -> Path:
    """A skill whose only finding is a warning (SK307: description too short)."""
    write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter="name: pdf-tools\ndescription: PDF helper. Use when asked.\n",
    )
    return tmp_path


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A skill with an error (SK206), a warning (SK307) and an info (SK306)."""
    write_skill(tmp_path, "pdf", frontmatter="name: pdf-tools\ndescription: Reads PDF files.\n")
    return tmp_path


# --- exit codes ------------------------------------------------------------------------------


def test_exit_0_on_the_valid_examples() -> None:
    result = run_skillcheck("lint", "--isolated", "--target", "all", str(FIXTURES / "valid"))
    assert result.returncode == 0, result.stdout
    assert result.stdout.decode().strip() == "All checks passed: 3 skills (targets: all)."


def test_exit_0_with_warnings_and_1_with_strict(warned: Path) -> None:
    result = run_skillcheck("lint", "--isolated", ".", cwd=warned)
    assert result.returncode == 0
    assert "pdf-tools/SKILL.md:3:14: SK307 [warning]" in result.stdout.decode()
    assert run_skillcheck("lint", "--isolated", "--strict", ".", cwd=warned).returncode == 1
    (warned / "skillcheck.toml").write_text("strict = true\n")
    assert run_skillcheck("lint", ".", cwd=warned).returncode == 1


def test_exit_1_on_errors(broken: Path) -> None:
    result = run_skillcheck("lint", "--isolated", ".", cwd=broken)
    out = result.stdout.decode()
    assert result.returncode == 1
    assert "pdf/SKILL.md:2:7: SK206 [error] name 'pdf-tools' does not match" in out
    assert "(name-directory-mismatch)" in out
    assert out.rstrip().endswith(
        "Found 1 error, 1 warning and 1 info in 1 skill (target: agentskills)."
    )


def test_text_output_shows_the_line_and_a_caret(broken: Path) -> None:
    out = run_skillcheck("lint", "--isolated", ".", cwd=broken).stdout.decode()
    assert "2 | name: pdf-tools\n  |       ^^^^^^^^^\n  = help: name: pdf\n" in out


def test_exit_2_on_a_missing_path(tmp_path: Path) -> None:
    result = run_skillcheck("lint", "--isolated", "no-such-dir", cwd=tmp_path)
    _assert_usage_error(result, "no-such-dir", "no such file or directory")


# --- rule selection ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), ["SK206", "SK306", "SK307"]),
        (("--select", "SK206"), ["SK206"]),
        (("--select", "name-directory-mismatch"), ["SK206"]),
        (("--select", "SK3"), ["SK306", "SK307"]),
        (("--select", "SK30,SK2"), ["SK206", "SK306", "SK307"]),
        (("--select", "sk2", "--select", "description-too-short"), ["SK206", "SK307"]),
        (("--ignore", "SK3"), ["SK206"]),
        (("--ignore", "description-no-trigger", "--ignore", "SK206"), ["SK307"]),
        (("--select", "SK2", "--extend-select", "SK306"), ["SK206", "SK306"]),
        (("--select", "ALL", "--ignore", "SK30"), ["SK206"]),
    ],
)
def test_select_ignore_extend_select(
    broken: Path, args: tuple[str, ...], expected: list[str]
) -> None:
    result = run_skillcheck("lint", "--isolated", "--format", "json", *args, ".", cwd=broken)
    assert _codes(result) == expected


def test_config_select_is_replaced_by_the_command_line(broken: Path) -> None:
    (broken / "skillcheck.toml").write_text('select = ["SK3"]\nextend-select = ["SK206"]\n')
    assert _codes(run_skillcheck("lint", "--format", "json", ".", cwd=broken)) == [
        "SK206",
        "SK306",
        "SK307",
    ]
    result = run_skillcheck("lint", "--format", "json", "--select", "SK307", ".", cwd=broken)
    assert _codes(result) == ["SK206", "SK307"]  # config extend-select still adds


@pytest.mark.parametrize(
    ("option", "value"),
    [("--select", "SK999"), ("--ignore", "no-such-rule"), ("--extend-select", "XY1")],
)
def test_unknown_rule_is_exit_2(broken: Path, option: str, value: str) -> None:
    result = run_skillcheck("lint", "--isolated", option, value, ".", cwd=broken)
    _assert_usage_error(result, option, repr(value))


def test_unknown_target_is_exit_2(broken: Path) -> None:
    result = run_skillcheck("lint", "--isolated", "--target", "claude-desktop", ".", cwd=broken)
    _assert_usage_error(result, "--target", "'claude-desktop'", "known targets")


# --- configuration -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("pyproject.toml", '[tool.skillcheck]\nignore = ["SK3"]\n'),
        ("skillcheck.toml", 'ignore = ["SK3"]\n'),
        (".skillcheck.toml", 'ignore = ["SK3"]\n'),
    ],
)
def test_config_is_found_walking_up_from_the_current_directory(
    broken: Path, name: str, text: str
) -> None:
    (broken / name).write_text(text)
    subdir = broken / "pdf"
    result = run_skillcheck("lint", "--format", "json", ".", cwd=subdir)
    assert _codes(result) == ["SK206"]
    # --isolated ignores it
    result = run_skillcheck("lint", "--isolated", "--format", "json", ".", cwd=subdir)
    assert _codes(result) == ["SK206", "SK306", "SK307"]


def test_pyproject_without_a_skillcheck_table_is_passed_over(broken: Path) -> None:
    (broken / "skillcheck.toml").write_text('ignore = ["SK3"]\n')
    inner = broken / "pdf"
    (inner / "pyproject.toml").write_text('[project]\nname = "unrelated"\n')
    assert _codes(run_skillcheck("lint", "--format", "json", ".", cwd=inner)) == ["SK206"]


def test_explicit_config_file(broken: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    (broken / "skillcheck.toml").write_text('ignore = ["SK2"]\n')
    other = tmp_path_factory.mktemp("conf") / "team.toml"
    other.write_text('select = ["SK206"]\n')
    result = run_skillcheck("lint", "--format", "json", "--config", str(other), ".", cwd=broken)
    assert _codes(result) == ["SK206"]
    missing = run_skillcheck("lint", "--config", "nope.toml", ".", cwd=broken)
    _assert_usage_error(missing, "nope.toml", "no such configuration file")


@pytest.mark.parametrize(
    ("name", "text", "needles"),
    [
        ("skillcheck.toml", 'tagret = "all"\n', ["skillcheck.toml", "'tagret'", "unknown key"]),
        (
            ".skillcheck.toml",
            'target = "claude-desktop"\n',
            [".skillcheck.toml", "'target'", "claude-desktop"],
        ),
        (
            "pyproject.toml",
            '[tool.skillcheck]\nstrict = "yes"\n',
            ["pyproject.toml", "'strict'", "boolean"],
        ),
        ("skillcheck.toml", 'select = "SK1"\n', ["skillcheck.toml", "'select'", "array"]),
        ("skillcheck.toml", 'name-charset = "latin1"\n', ["'name-charset'", "latin1"]),
        ("skillcheck.toml", "[budgets]\nbody-lines = 0\n", ["'budgets.body-lines'", "minimum"]),
        ("skillcheck.toml", 'ignore = ["SK999"]\n', ["skillcheck.toml", "ignore", "'SK999'"]),
        ("skillcheck.toml", "select = [1\n", ["skillcheck.toml", "invalid TOML"]),
        ("pyproject.toml", "[tool]\nskillcheck = 3\n", ["pyproject.toml", "must be a table"]),
    ],
)
def test_bad_configuration_is_exit_2_naming_file_key_and_reason(
    broken: Path, name: str, text: str, needles: list[str]
) -> None:
    (broken / name).write_text(text)
    _assert_usage_error(run_skillcheck("lint", ".", cwd=broken), *needles)
    # the same file named with --config, from elsewhere
    result = run_skillcheck("lint", "--config", str(broken / name), str(broken), cwd=broken.parent)
    _assert_usage_error(result, *needles)


def test_isolated_does_not_read_a_broken_config(broken: Path) -> None:
    (broken / "skillcheck.toml").write_text("select = [1\n")
    (broken / "pyproject.toml").write_text("[tool.skillcheck]\nstrict = 3\n")
    assert run_skillcheck("lint", "--isolated", ".", cwd=broken).returncode == 1


def test_command_line_target_overrides_config(broken: Path) -> None:
    (broken / "skillcheck.toml").write_text('target = "claude-code"\n')
    assert _json(run_skillcheck("lint", "--format", "json", ".", cwd=broken))["targets"] == [
        "claude-code"
    ]
    result = run_skillcheck(
        "lint", "--format", "json", "--target", "codex,copilot", ".", cwd=broken
    )
    assert _json(result)["targets"] == ["codex", "copilot"]


# --- output --------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_output_file(broken: Path, fmt: str) -> None:
    expected = run_skillcheck("lint", "--isolated", "--format", fmt, ".", cwd=broken).stdout
    target = broken / "report.out"
    result = run_skillcheck(
        "lint", "--isolated", "--format", fmt, "--output", str(target), ".", cwd=broken
    )
    assert result.returncode == 1
    assert result.stdout == b""
    assert target.read_bytes() == expected
    assert [p.name for p in broken.iterdir() if p.name.startswith("report")] == ["report.out"]


def test_output_file_that_cannot_be_written(broken: Path) -> None:
    result = run_skillcheck(
        "lint", "--isolated", "--output", str(broken / "no-dir" / "report.txt"), ".", cwd=broken
    )
    _assert_usage_error(result, "report.txt", "cannot write")


def _run_on_a_tty(args: list[str], cwd: Path, env: dict[str, str]) -> bytes:
    """Run the command with stdout on a pseudo-terminal; return what it printed."""
    from conftest import skillcheck_command

    main, secondary = pty.openpty()
    try:
        proc = subprocess.run(
            [*skillcheck_command(), *args],
            cwd=cwd,
            stdout=secondary,
            stderr=subprocess.PIPE,
            env=env,
            timeout=60,
        )
        assert proc.returncode in (0, 1), proc.stderr
        os.close(secondary)
        secondary = -1
        chunks = []
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the terminal is closed and drained
                break
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(main)
        if secondary != -1:
            os.close(secondary)


def test_colour_only_on_a_terminal_and_never_with_no_color(broken: Path) -> None:
    base = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    args = ["lint", "--isolated", "."]
    assert b"\x1b[" in _run_on_a_tty(args, broken, base)
    assert b"\x1b[" not in _run_on_a_tty(args, broken, {**base, "NO_COLOR": "1"})
    assert b"\x1b[" not in _run_on_a_tty([*args, "--no-color"], broken, base)
    piped = subprocess.run(
        [sys.executable, "-m", "skillcheck", *args], cwd=broken, capture_output=True, env=base
    )
    assert b"\x1b[" not in piped.stdout


def test_skill_content_cannot_inject_terminal_escapes(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", frontmatter="name: pdf-tools\x1b[2J\ndescription: x\x07\n")
    out = run_skillcheck("lint", "--isolated", ".", cwd=tmp_path).stdout
    assert b"\x1b" not in out and b"\x07" not in out
    assert b"\\x1b[2J" in out


# --- no traceback without SKILLCHECK_DEBUG ----------------------------------------------------

_CRASH = """
import dataclasses, sys
from skillcheck.rules import all_rules
from skillcheck.rules.base import registry
def boom(skill, ctx):
    raise ValueError("simulated bug")
    yield
all_rules()  # the registry fills as the rule modules are imported
registry()["SK206"] = dataclasses.replace(registry()["SK206"], check=boom)
from skillcheck._entry import main
sys.argv = ["skillcheck", "lint", "--isolated", "."]
main()
"""


def test_an_internal_error_is_one_line_and_exit_2(broken: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SKILLCHECK_DEBUG"}
    result = subprocess.run(
        [sys.executable, "-c", _CRASH], cwd=broken, capture_output=True, env=env, timeout=60
    )
    err = _assert_usage_error(result, "internal error", "SK206", "simulated bug")
    assert "SKILLCHECK_DEBUG=1" in err
    debug = subprocess.run(
        [sys.executable, "-c", _CRASH],
        cwd=broken,
        capture_output=True,
        env={**env, "SKILLCHECK_DEBUG": "1"},
        timeout=60,
    )
    assert debug.returncode != 0
    assert b"Traceback" in debug.stderr and b"simulated bug" in debug.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["lint", "--format", "yaml", "."],
        ["lint", "--no-such-option"],
        ["no-such-command"],
        ["rule"],
    ],
)
def test_click_usage_errors_are_exit_2_without_traceback(broken: Path, args: list[str]) -> None:
    result = run_skillcheck(*args, cwd=broken)
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert b"Error" in result.stderr


# --- rule documentation and entry points ------------------------------------------------------


def test_rules_table() -> None:
    result = run_skillcheck("rules")
    lines = result.stdout.decode().splitlines()
    assert result.returncode == 0
    assert lines[0].split()[:3] == ["SK100", "path-not-checked", "error"]
    assert any(line.split()[:3] == ["SK206", "name-directory-mismatch", "error"] for line in lines)
    rules = json.loads(run_skillcheck("rules", "--format", "json").stdout)
    assert {"code": "SK306", "slug": "description-no-trigger", "severity": "info"}.items() <= next(
        r for r in rules if r["code"] == "SK306"
    ).items()
    assert [r["code"] for r in rules] == sorted(r["code"] for r in rules)


@pytest.mark.parametrize("name", ["SK206", "sk206", "name-directory-mismatch"])
def test_rule_documentation(name: str) -> None:
    result = run_skillcheck("rule", name)
    text = result.stdout.decode()
    assert result.returncode == 0
    assert text.startswith("# SK206 name-directory-mismatch\n")
    for heading in ("## What it does", "## Why is this bad?", "## Example", "Use instead:"):
        assert heading in text
    # where to read or change it: SK206 is not in a file named after its code
    assert text.endswith("\nDefined in `skillcheck/rules/name.py:name_directory_mismatch`.\n")


def test_every_rule_names_the_file_and_function_that_define_it() -> None:
    from skillcheck.rules import all_rules

    package = Path(__file__).resolve().parent.parent
    for found in all_rules():
        path, _, function = found.defined_in.partition(":")
        source = (package / path).read_text(encoding="utf-8")
        assert f"def {function}(" in source and f'"{found.code}"' in source, found.code


def test_rule_documentation_of_an_option() -> None:
    text = run_skillcheck("rule", "name-charset").stdout.decode()
    assert text.startswith("# SK204 name-charset\n")
    assert "## Options" in text and "unicode" in text


def test_unknown_rule_documentation_is_exit_2() -> None:
    _assert_usage_error(run_skillcheck("rule", "SK999"), "'SK999'", "skillcheck rules")


def test_python_dash_m(broken: Path) -> None:
    version = subprocess.run([sys.executable, "-m", "skillcheck", "--version"], capture_output=True)
    assert version.returncode == 0
    assert version.stdout.decode().startswith("skillcheck ")
    lint = subprocess.run(
        [sys.executable, "-m", "skillcheck", "lint", "--isolated", "--format", "json", "."],
        cwd=broken,
        capture_output=True,
    )
    assert lint.returncode == 1
    assert _codes(lint) == ["SK206", "SK306", "SK307"]


# --- targets: per-skill outcomes ---------------------------------------------------------------

TARGETS = [
    "agentskills",
    "skills-ref",
    "claude-code",
    "claude-api",
    "codex",
    "copilot",
    "copilot-cli",
    "cursor",
    "openskills",
    "openclaw",
    "skills-cli",
    "gh-skill",
]


def _skill_md(name: str, extra: str = "", description: str = DESC) -> bytes:
    return (
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n# Steps\n\nRun it.\n".encode()
    )


# directory -> (SKILL.md, the outcome per target where it is not "ok"), per runtime profile
OUTCOME_CASES: dict[str, tuple[bytes, dict[str, str]]] = {
    # Copilot silently drops a name with '.'; the spec, skills-ref and claude.ai refuse the
    # charset; Cursor is lenient; Claude Code, Codex and OpenSkills do not check names
    "pdf.tools": (
        _skill_md("pdf.tools"),
        {
            "copilot": "dropped",
            "agentskills": "rejected",
            "skills-ref": "rejected",
            "claude-api": "rejected",
            "cursor": "degraded",
            "gh-skill": "rejected",
        },
    ),
    # claude.ai and skills-ref reject keys outside the six; lenient loaders ignore them
    "unknown-key": (
        _skill_md("unknown-key", "author: docs\n"),
        {"claude-api": "rejected", "skills-ref": "rejected", "agentskills": "degraded"},
    ),
    # Claude Code, Codex and OpenClaw re-quote the description and load it as written (run:
    # bench/runtimes); OpenSkills reads a regex, not YAML; the strict parsers refuse it
    "malformed-yaml": (
        b"---\nname: malformed-yaml\ndescription: Use when: the user asks\n---\n# S\n\nRun.\n",
        {
            "agentskills": "rejected",
            "skills-ref": "rejected",
            "claude-api": "rejected",
            "copilot": "rejected",
            "copilot-cli": "rejected",
            "cursor": "rejected",
            "skills-cli": "rejected",
            "gh-skill": "rejected",
        },
    ),
    # Claude Code (since 2.1.239), OpenClaw, the Copilot CLI and the skills CLI read past a BOM
    # (run: bench/runtimes); Codex, skills-ref and claude.ai find no frontmatter
    "with-bom": (
        b"\xef\xbb\xbf" + _skill_md("with-bom"),
        {
            "claude-api": "rejected",
            "codex": "rejected",
            "skills-ref": "rejected",
            "agentskills": "degraded",
        },
    ),
    # OpenSkills shows the literal '>-' as the description
    "block-description": (
        _skill_md("block-description", description=f">-\n  {DESC}"),
        {"openskills": "degraded"},
    ),
    # Copilot fails to load a name that differs from its directory; others warn or reject
    "mismatched-dir": (
        _skill_md("other-name"),
        {
            "copilot": "dropped",
            "skills-ref": "rejected",
            "claude-api": "rejected",
            "agentskills": "degraded",
            "cursor": "degraded",
            "openskills": "degraded",
            "gh-skill": "rejected",
        },
    ),
    # Claude Code and the Copilot CLI fall back to the body, OpenSkills lists an empty
    # description; the rest need one
    "no-description": (
        b"---\nname: no-description\n---\n# PDF\n\nExtracts text from PDF files.\n",
        {
            "claude-code": "degraded",
            "copilot": "dropped",
            "copilot-cli": "degraded",
            "agentskills": "rejected",
            "skills-ref": "rejected",
            "claude-api": "rejected",
            "codex": "rejected",
            "cursor": "rejected",
            "openskills": "degraded",
            "openclaw": "rejected",
            "skills-cli": "rejected",
            "gh-skill": "rejected",
        },
    ),
    # OpenClaw compares `os` with process.platform: 'macos' matches no host, the skill never
    # loads; `metadata.openclaw` is the map OpenClaw requires, so the spec's string values do
    # not apply to it (agentskills: ok); skills-ref rejects the flow list `[macos]` (SK109)
    "openclaw-os": (
        _skill_md("openclaw-os", "metadata:\n  openclaw:\n    os: [macos]\n"),
        {"openclaw": "dropped", "skills-ref": "rejected"},
    ),
    # a misspelled requirement is dropped: OpenClaw loads the skill without the gate (the
    # `metadata.openclaw` map itself is no finding for the spec's targets)
    "openclaw-requires": (
        _skill_md("openclaw-requires", 'metadata: {"openclaw": {"requires": {"bin": ["jq"]}}}\n'),
        {"openclaw": "degraded", "skills-ref": "rejected"},
    ),
    # claude.ai reserves the words 'claude' and 'anthropic' in names
    "claude-helper": (_skill_md("claude-helper"), {"claude-api": "rejected"}),
    # what every runtime loads as is
    "clean-skill": (_skill_md("clean-skill"), {}),
}


@pytest.fixture(scope="module")
def outcome_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict]:
    root = tmp_path_factory.mktemp("outcomes")
    for index, (directory, (raw, _expected)) in enumerate(sorted(OUTCOME_CASES.items())):
        skill = root / directory
        skill.mkdir()
        # distinct descriptions: near-duplicates would add findings of their own
        (skill / "SKILL.md").write_bytes(raw.replace(b"PDF files", b"PDF files (%d)" % index))
    result = run_skillcheck(
        "lint", "--isolated", "--target", "all", "--format", "json", ".", cwd=root
    )
    return result.returncode, _json(result)


@pytest.mark.parametrize("directory", sorted(OUTCOME_CASES))
def test_per_target_outcomes(outcome_report: tuple[int, dict], directory: str) -> None:
    _code, report = outcome_report
    expected = {t: OUTCOME_CASES[directory][1].get(t, "ok") for t in TARGETS}
    [entry] = [s for s in report["skills"] if s["path"] == directory]
    assert entry["outcomes"] == expected
    # every target that does not load the skill as is is named by one of its diagnostics
    mine = [d for d in report["diagnostics"] if d["skill"] == directory]
    named = {t for d in mine for t in d["targets"]}
    assert {t for t, outcome in expected.items() if outcome != "ok"} <= named


def test_outcomes_report_and_exit_code(outcome_report: tuple[int, dict]) -> None:
    code, report = outcome_report
    assert report["targets"] == TARGETS
    assert [s["path"] for s in report["skills"]] == sorted(OUTCOME_CASES)
    assert report["summary"]["errors"] > 0
    assert code == 1


def test_valid_examples_are_ok_for_every_target() -> None:
    report = _json(
        run_skillcheck(
            "lint", "--isolated", "--target", "all", "--format", "json", str(FIXTURES / "valid")
        )
    )
    assert len(report["skills"]) >= 3
    assert all(set(s["outcomes"].values()) == {"ok"} for s in report["skills"])
    assert report["summary"] == {
        "skills": len(report["skills"]),
        "errors": 0,
        "warnings": 0,
        "info": 0,
        "fixable": 0,
        "catalog_tokens": sum(s["tokens"]["catalog"] for s in report["skills"]),
    }
    assert all(s["tokens"]["body"] > 0 and s["lines"] > 0 for s in report["skills"])
