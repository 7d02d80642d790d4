"""Command-line conveniences: --exit-zero, fix markers, --min-severity, colour, the summary's
targets, init, --show-settings, configuration messages, catalog/pack rule selection, progress."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from conftest import invoke, run_skillcheck, write_skill

CRLF_SKILL = (
    "---\r\nname: pdf-tools\r\ndescription: Extracts text from PDF files. Use when the user"
    " asks about PDFs.\r\n---\r\n# Steps\r\n\r\nDo the thing.\r\n"
)


@pytest.fixture
def crlf(tmp_path: Path) -> Path:
    """A skill whose only finding is fixable (SK902, CRLF line endings: a warning)."""
    skill = tmp_path / "pdf-tools"
    skill.mkdir()
    (skill / "SKILL.md").write_bytes(CRLF_SKILL.encode())
    return tmp_path


def test_exit_zero_reports_and_exits_0(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf", frontmatter="name: pdf-tools\ndescription: Does PDFs.\n")
    failing = invoke("lint", "--isolated", "--no-cache", ".", cwd=tmp_path)
    assert failing.exit_code == 1
    result = invoke("lint", "--isolated", "--no-cache", "--exit-zero", ".", cwd=tmp_path)
    assert result.exit_code == 0
    assert "SK206 [error]" in result.stdout


def test_fixable_marker_show_fixes_and_what_fix_changed(crlf: Path) -> None:
    plain = invoke("lint", "--isolated", "--no-cache", ".", cwd=crlf).stdout
    [line] = [x for x in plain.splitlines() if "SK902" in x]
    assert line.endswith("(line-endings) [*]")
    assert "1 fixable with --fix [*]" in plain
    assert "= fix:" not in plain
    shown = invoke("lint", "--isolated", "--no-cache", "--show-fixes", ".", cwd=crlf).stdout
    assert "  = fix: convert line endings to LF" in shown
    quiet = invoke("lint", "--isolated", "--no-cache", "--show-fixes", "-q", ".", cwd=crlf).stdout
    assert "  = fix: convert line endings to LF" in quiet

    fixed = run_skillcheck("lint", "--isolated", "--no-cache", "--fix", ".", cwd=crlf)
    assert fixed.returncode == 0, fixed.stderr
    assert (
        "skillcheck: fixed 1 finding in pdf-tools/SKILL.md: convert line endings to LF"
        in fixed.stderr.decode()
    )


def test_min_severity_hides_and_counts(tmp_path: Path) -> None:
    # SK206 error, SK307 warning (short description), SK306 info
    write_skill(tmp_path, "pdf", frontmatter="name: pdf-tools\ndescription: x\n")
    every = invoke("lint", "--isolated", "--no-cache", ".", cwd=tmp_path).stdout
    assert "[warning]" in every and "[info]" in every
    errors = invoke(
        "lint", "--isolated", "--no-cache", "--min-severity", "error", ".", cwd=tmp_path
    ).stdout
    assert "[warning]" not in errors and "[info]" not in errors and "[error]" in errors
    assert errors.rstrip().endswith("1 warning and 1 info hidden by --min-severity.")
    code, report = (
        (
            r := invoke(
                "lint",
                "--isolated",
                "--no-cache",
                "--format",
                "json",
                "--min-severity",
                "warning",
                ".",
                cwd=tmp_path,
            )
        ).exit_code,
        json.loads(r.stdout),
    )
    assert code == 1
    assert {d["severity"] for d in report["diagnostics"]} == {"error", "warning"}
    # --strict fails on what is reported: info hidden, warnings shown
    strict = invoke(
        "lint",
        "--isolated",
        "--no-cache",
        "--strict",
        "--min-severity",
        "error",
        ".",
        cwd=tmp_path,
    )
    assert strict.exit_code == 1


def test_force_color_colours_a_pipe_and_no_color_wins(crlf: Path) -> None:
    env = {"NO_COLOR": ""}
    piped = run_skillcheck("lint", "--isolated", "--no-cache", ".", cwd=crlf, env=env)
    assert b"\x1b[" not in piped.stdout
    forced = run_skillcheck(
        "lint", "--isolated", "--no-cache", ".", cwd=crlf, env={**env, "FORCE_COLOR": "1"}
    )
    assert b"\x1b[33m[warning]\x1b[0m" in forced.stdout
    both = run_skillcheck(
        "lint",
        "--isolated",
        "--no-cache",
        ".",
        cwd=crlf,
        env={"NO_COLOR": "1", "FORCE_COLOR": "1"},
    )
    assert b"\x1b[" not in both.stdout


def test_summary_names_the_targets_and_says_when_the_spec_is_left_out(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    default = invoke("lint", "--isolated", "--no-cache", ".", cwd=tmp_path).stdout
    assert default.strip() == "All checks passed: 1 skill (target: agentskills)."
    two = invoke(
        "lint", "--isolated", "--no-cache", "--target", "claude-code,codex", ".", cwd=tmp_path
    ).stdout
    assert two.strip() == (
        "All checks passed: 1 skill (targets: claude-code, codex; the Agent Skills"
        " specification was not checked: add --target agentskills)."
    )
    assert two.count("not checked") == 1


def test_init_detects_targets_writes_a_valid_config_and_never_overwrites(tmp_path: Path) -> None:
    for rel in (".claude/skills", ".github/skills", ".agents/skills", ".cursor/skills"):
        (tmp_path / rel).mkdir(parents=True)
    write_skill(tmp_path / ".claude" / "skills", "pdf-tools")
    result = invoke("init", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    config = tmp_path / "skillcheck.toml"
    values = tomllib.loads(config.read_text())
    assert values["target"] == ["agentskills", "claude-code", "copilot", "codex", "cursor"]
    # the written file is what lint reads, and it validates
    lint = invoke("lint", "--no-cache", ".", cwd=tmp_path)
    assert lint.exit_code == 0, lint.output
    assert "(targets: agentskills, claude-code, copilot, codex, cursor)" in lint.stdout
    config.write_text('target = "codex"\n')
    again = run_skillcheck("init", cwd=tmp_path)
    assert again.returncode == 2
    assert b"already exists (use --force" in again.stderr
    assert config.read_text() == 'target = "codex"\n'
    assert run_skillcheck("init", "--force", cwd=tmp_path).returncode == 0
    assert "claude-code" in config.read_text()


def test_init_without_runtime_directories_targets_the_spec(tmp_path: Path) -> None:
    assert invoke("init", str(tmp_path)).exit_code == 0
    assert tomllib.loads((tmp_path / "skillcheck.toml").read_text())["target"] == ["agentskills"]


def test_show_settings_names_where_each_value_comes_from(tmp_path: Path) -> None:
    (tmp_path / "skillcheck.toml").write_text('target = ["agentskills", "codex"]\nstrict = true\n')
    out = invoke("lint", "--show-settings", "--tokenizer", "estimate", ".", cwd=tmp_path).stdout
    config = str((tmp_path / "skillcheck.toml").resolve())
    assert f'target = ["agentskills", "codex"]  # {config}' in out
    assert f"strict = true  # {config}" in out
    assert 'tokenizer = "estimate"  # --tokenizer' in out
    assert 'name-charset = "ascii"  # default' in out
    out = invoke("lint", "--show-settings", "--target", "cursor", "--ignore", "SK5", cwd=tmp_path)
    assert 'target = ["cursor"]  # --target' in out.stdout
    assert '"SK501"' in out.stdout.split("ignore = ", 1)[1]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('ingore = ["SK306"]\n', "unknown key 'ingore'; did you mean 'ignore'?"),
        ("[budgets]\nbody-line = 3\n", "unknown key 'body-line'; did you mean 'body-lines'?"),
        (
            '[tool.skillcheck]\nignore = ["SK306"]\n',
            "[tool.skillcheck] is read only from pyproject.toml",
        ),
    ],
)
def test_config_errors_suggest_the_fix(tmp_path: Path, text: str, message: str) -> None:
    write_skill(tmp_path, "pdf-tools")
    (tmp_path / "skillcheck.toml").write_text(text)
    result = run_skillcheck("lint", ".", cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr.decode()


def test_a_bad_target_in_config_reads_like_the_command_line(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    cli = run_skillcheck("lint", "--isolated", "--target", "claude-code,nowhere", ".", cwd=tmp_path)
    reason = cli.stderr.decode().split("--target: ", 1)[1]
    assert reason.startswith("unknown target 'nowhere'; known targets: agentskills")
    for value in ('"nowhere"', '["claude-code", "nowhere"]'):
        (tmp_path / "skillcheck.toml").write_text(f"target = {value}\n")
        result = run_skillcheck("lint", ".", cwd=tmp_path)
        assert result.returncode == 2
        assert result.stderr.decode().endswith(f"key 'target': {reason}")


def test_catalog_and_pack_take_select_and_ignore(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf", frontmatter="name: pdf-tools\ndescription: Does PDFs.\n")
    refused = invoke("catalog", "--isolated", "--no-cache", ".", cwd=tmp_path)
    assert refused.exit_code == 1
    ok = invoke("catalog", "--isolated", "--no-cache", "--ignore", "SK206", ".", cwd=tmp_path)
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["skills"]
    only = invoke("catalog", "--isolated", "--no-cache", "--select", "SK1", ".", cwd=tmp_path)
    assert only.exit_code == 0, only.output
    bundle = tmp_path / "out.tar.gz"
    packed = invoke(
        "pack",
        "--isolated",
        "--no-cache",
        "--ignore",
        "name-directory-mismatch",
        "-o",
        str(bundle),
        ".",
        cwd=tmp_path,
    )
    assert packed.exit_code == 0, packed.output
    assert bundle.is_file()
    assert invoke("pack", "--help").stdout.count("--select") == 1


def test_the_features_are_in_help() -> None:
    lint_help = invoke("lint", "--help").stdout
    for flag in ("--exit-zero", "--show-fixes", "--min-severity", "--show-settings"):
        assert flag in lint_help
    top = invoke("--help").stdout
    assert "init" in top and "lsp" in top
    assert "--select" in invoke("catalog", "--help").stdout


def test_every_command_is_found_under_its_own_name() -> None:
    # the group loads a command's module by a table: a wrong entry would run another command
    import click

    from skillcheck.cli import COMMANDS, cli

    context = click.Context(cli)
    assert cli.list_commands(context) == sorted(COMMANDS)
    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert command is not None and command.name == name
    assert cli.get_command(context, "nope") is None


# --- progress on a terminal ---------------------------------------------------------------

_WITH_NO_DELAY = (
    "import sys, skillcheck.cli.common as c; c.Progress.DELAY = 0; "
    "from skillcheck._entry import main; sys.argv = ['skillcheck', *sys.argv[1:]]; main()"
)


def _run_with_tty_stderr(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Run skillcheck with stderr on a pseudo-terminal and stdout on a pipe."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _WITH_NO_DELAY, *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=follower,
        env={**os.environ, "NO_COLOR": "1"},
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        elif proc.poll() is not None:
            break
    os.close(leader)
    out = proc.stdout.read() if proc.stdout else b""
    code = proc.wait(timeout=60)
    if proc.stdout:
        proc.stdout.close()
    return code, out, seen


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_progress_on_a_terminal_only_and_never_with_a_machine_format(tmp_path: Path) -> None:
    for index in range(3):
        write_skill(tmp_path, f"skill-{index}")
    code, out, err = _run_with_tty_stderr(["lint", "--isolated", "--no-cache", "."], tmp_path)
    assert code == 0, err
    assert b"skillcheck: checking: 1 skill" in err
    assert b"/3 skills" in err  # done/total once the search is over: never a frozen count
    assert err.endswith(b"\r\x1b[2K")  # erased before the report
    assert b"checking" not in out
    code, out, err = _run_with_tty_stderr(
        ["lint", "--isolated", "--no-cache", "--format", "json", "."], tmp_path
    )
    assert code == 0 and b"checking" not in err
    json.loads(out)
    # stderr piped: nothing
    piped = subprocess.run(
        [sys.executable, "-c", _WITH_NO_DELAY, "lint", "--isolated", "--no-cache", "."],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert piped.returncode == 0 and b"checking" not in piped.stderr


def test_progress_line_counts_done_of_total_and_estimates_the_rest() -> None:
    from skillcheck.cli.common import Progress

    progress = Progress("skillcheck: checking")
    for _ in range(4):
        progress.found()
    assert progress.line(progress.started) == "4 skills"
    progress.checked()
    assert progress.line(progress.started) == "1/4 skills (still searching)"
    progress.searched()
    # one skill in 10 s: the other three take about 30 s more
    assert progress.line(progress.started + 10) == "1/4 skills, about 30 s left"
    progress.checked(3)
    assert progress.line(progress.started + 40) == "4/4 skills"


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_install_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    for index in range(2):
        write_skill(tmp_path / "skills", f"skill-{index}", body="# Steps\n\nDo the work.\n")
    published = invoke("pack", "--isolated", "skills", "--well-known", "site", cwd=tmp_path)
    assert published.exit_code == 0, published.stderr
    code, out, err = _run_with_tty_stderr(["install", "site", "dest"], tmp_path)
    assert code == 0, err
    assert b"skillcheck: installing: 1 skill" in err
    assert b"Installed skill-0" in out and b"installing" not in out
    piped = subprocess.run(
        [sys.executable, "-c", _WITH_NO_DELAY, "install", "site", "dest2"],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
    )
    assert piped.returncode == 0, piped.stderr
    assert b"installing" not in piped.stderr and b"checking" not in piped.stderr
