"""SK707-SK709: commands run on invocation, interactive scripts, argument substitution."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import lint_json, write_skill


def found(tmp_path: Path, *args: str) -> list[tuple[str, int, int, str]]:
    _code, report = lint_json("--isolated", *args, ".", cwd=tmp_path)
    return [(d["code"], d["line"], d["column"], d["severity"]) for d in report["diagnostics"]]


# --- SK707 ------------------------------------------------------------------------------------


def test_inline_and_block_commands_are_reported_at_the_bang(tmp_path: Path) -> None:
    body = "# Steps\n\n- Branch: !`git branch`\n\n```!\ngit status\n```\n\nSay wow!`x`.\n"
    write_skill(tmp_path, "pdf-tools", body=body)
    assert found(tmp_path, "--select", "SK707") == [
        ("SK707", 7, 11, "info"),
        ("SK707", 9, 1, "info"),
    ]


# --- SK708 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "content", "line", "column"),
    [
        ("scripts/a.py", 'x = 1\nname = input("Name? ")\n', 2, 8),
        ("scripts/a.py", "import getpass\n\npw = getpass.getpass()\n", 3, 6),
        ("scripts/a.sh", "#!/bin/sh\necho hi\nread -p 'Name? ' name\n", 3, 1),
        ("scripts/a.sh", "#!/bin/bash\necho hi\n  read -s -p 'Password: ' pw\n", 3, 3),
        ("scripts/a.js", "const rl = x;\n\nrl.question('Name? ', cb)\n", 3, 3),
        ("scripts/a.ps1", "$x = 1\n\n$name = Read-Host 'Name'\n", 3, 9),
        ("ask.py", "x = 1\n\ny = input()\n", 3, 5),
        # one of each prompt form: a line is searched only when it holds one of the words
        # these forms contain (invocation._PROMPT_WORDS)
        ("scripts/a.py", "x = raw_input('?')\n", 1, 5),
        ("scripts/a.py", "x = click.prompt('?')\n", 1, 5),
        ("scripts/a.py", "ok = typer.confirm('?')\n", 1, 6),
        ("scripts/a.py", "x = IntPrompt.ask('?')\n", 1, 5),
        ("scripts/a.py", "x = questionary.select('?', c)\n", 1, 5),
        ("scripts/a.py", "a = inquirer.prompt(qs)\n", 1, 5),
        ("scripts/a.sh", "#!/bin/sh\nselect opt in a b; do break; done\n", 2, 1),
        ("scripts/a.js", "const a = await prompts({ type: 'text' })\n", 1, 17),
        ("scripts/a.js", "const a = readlineSync.question('?')\n", 1, 11),
        ("scripts/a.ts", "const a = prompt('Name?')\n", 1, 11),
        # `CI` only as a word is a non-interactive path: `SCI` is not
        ("scripts/a.py", "MAGIC = SCI = 1\nx = input('?')\n", 2, 5),
    ],
)
def test_prompts_in_scripts_are_reported(
    tmp_path: Path, rel: str, content: str, line: int, column: int
) -> None:
    write_skill(tmp_path, "pdf-tools", files={rel: content})
    assert found(tmp_path, "--select", "SK708") == [("SK708", line, column, "warning")]


@pytest.mark.parametrize(
    ("rel", "content"),
    [
        ("scripts/a.py", "import sys\nif sys.stdin.isatty():\n    x = input('?')\n"),
        ("scripts/a.py", "# ask with input() later\ndata = sys.stdin.read()\n"),
        ("scripts/a.py", "def input(prompt):\n    return prompt\n"),
        ("scripts/a.py", "if args.interactive:\n    x = input('?')\n"),
        ("scripts/a.py", "value = self.input('x')\n"),
        ("scripts/a.sh", "#!/bin/sh\nwhile read -r line; do echo $line; done < f\n"),
        ("scripts/a.sh", "#!/bin/sh\n[ \"$1\" = --yes ] || read -p 'Sure? ' a\n"),
        ("scripts/a.py", "if not os.environ.get('CI'):\n    x = input('?')\n"),
        ("assets/app/main.py", "x = input('?')\n"),  # a template the skill copies, not run
        ("references/example.py", "x = input('?')\n"),
    ],
)
def test_scripts_with_a_non_interactive_path_or_no_prompt_are_not_reported(
    tmp_path: Path, rel: str, content: str
) -> None:
    write_skill(tmp_path, "pdf-tools", files={rel: content})
    assert found(tmp_path, "--select", "SK708") == []


# --- SK709 ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "column", "kind"),
    [
        ("Run `awk '{print $2}' file`.", 18, "an awk field"),
        ("It costs $0.50 per call.", 10, "an amount of money"),
        ("Budget: $1,000 a month, $2,000 a year.", 9, "an amount of money"),
        ("Plans start at $5.99.", 16, "an amount of money"),
        ("Use `sed -E 's/(a)/$1/'` here.", 20, "a positional parameter"),
    ],
)
def test_dollar_digits_that_claude_code_would_rewrite(
    tmp_path: Path, line: str, column: int, kind: str
) -> None:
    write_skill(tmp_path, "pdf-tools", body=f"# Steps\n\n{line}\n")
    _code, report = lint_json(
        "--isolated", "--target", "claude-code", "--select", "SK709", ".", cwd=tmp_path
    )
    diags = report["diagnostics"]
    assert [(d["line"], d["column"], d["severity"]) for d in diags] == [(7, column, "warning")]
    assert f"({kind})" in diags[0]["message"]
    assert diags[0]["targets"] == ["claude-code"]


def test_only_for_claude_code_and_not_for_intended_arguments(tmp_path: Path) -> None:
    body = "# Steps\n\nCosts $0.50 or $0.70.\nRun `fix-issue $1`.\n"
    write_skill(tmp_path, "pdf-tools", body=body)
    assert found(tmp_path, "--select", "SK709") == []  # default target: not Claude Code
    assert found(tmp_path, "--target", "claude-code", "--select", "SK709") == [
        ("SK709", 7, 7, "warning"),  # one finding per line
        ("SK709", 8, 16, "warning"),
    ]
    # a skill that takes arguments means its `$1`; an amount of money is still rewritten
    front = "name: pdf-tools\ndescription: Fixes an issue. Use when asked.\nargument-hint: ISSUE\n"
    write_skill(tmp_path, "pdf-tools", frontmatter=front, body=body)
    assert found(tmp_path, "--target", "claude-code", "--select", "SK709") == [
        ("SK709", 8, 7, "warning")
    ]


@pytest.mark.parametrize(
    "line",
    [
        "Write `${1}` or `$(1)`.",
        "Use $ARGUMENTS.",
        "Fix issue #$1 now.",
        "Price: 5$ or $x.",
        # rewritten only by an invocation of 26 or 249 arguments
        "Deals over $25,000 need approval; revenue was $248.4M.",
        "Plans start at $20.",
    ],
)
def test_what_claude_code_leaves_alone_is_not_reported(tmp_path: Path, line: str) -> None:
    write_skill(tmp_path, "pdf-tools", body=f"# Steps\n\n{line}\n")
    assert found(tmp_path, "--target", "claude-code", "--select", "SK709") == []


def test_a_skill_teaching_the_argument_syntax_is_told_its_lesson_is_rewritten(
    tmp_path: Path,
) -> None:
    body = (
        "# Writing commands\n\n"
        "Use the `$ARGUMENTS` placeholder to receive everything the user typed.\n"
        "Positional arguments are `$1`, `$2` and so on.\n"
        "Fix the issue: $ARGUMENTS\n"
        "Pass `$ARGUMENTS` through.\n"
        "```\nThe placeholder `$ARGUMENTS` in a fenced example\n```\n"
    )
    write_skill(tmp_path, "pdf-tools", body=body)
    assert found(tmp_path, "--target", "claude-code", "--select", "SK709") == [
        ("SK709", 7, 10, "warning"),
        ("SK709", 8, 27, "warning"),
    ]
    assert found(tmp_path, "--select", "SK709") == []


def test_a_sql_placeholder_on_a_line_about_placeholders_is_not_a_lesson(tmp_path: Path) -> None:
    body = "# Queries\n\nBind every value as a placeholder (`?`, `$1`, `:name`).\n"
    write_skill(tmp_path, "pdf-tools", body=body)
    [(_code, _line, _col, _sev)] = found(tmp_path, "--target", "claude-code", "--select", "SK709")
    _c, report = lint_json(
        "--isolated", "--target", "claude-code", "--select", "SK709", ".", cwd=tmp_path
    )
    assert "(a positional parameter)" in report["diagnostics"][0]["message"]
