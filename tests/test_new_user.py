"""What a new user tripped on (issue 30 §3): each case as the user met it."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import invoke, write_skill


def test_pack_uploads_applies_the_claude_api_gate(tmp_path: Path) -> None:
    """An upload zip is for claude.ai: its reserved words and rejected keys refuse the pack
    even when the configured target is only the specification."""
    skills = tmp_path / "skills"
    write_skill(
        skills,
        "claude-helper",
        frontmatter="name: claude-helper\ndescription: Helps. Use when asked.\nversion: '1'\n",
    )
    out = tmp_path / "uploads"
    result = invoke("pack", str(skills), "--uploads", str(out), "--isolated")
    assert result.exit_code == 1
    assert "SK207" in result.stderr and "SK108" in result.stderr
    assert not out.exists() or not any(out.iterdir())


def test_verify_of_an_upload_zip_says_what_it_is(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "pdf-tools")
    out = tmp_path / "uploads"
    assert invoke("pack", str(skills), "--uploads", str(out), "--isolated").exit_code == 0
    result = invoke("verify", str(out / "pdf-tools.zip"))
    assert result.exit_code == 1
    assert "no manifest" in result.stderr
    assert "claude.ai upload zip" in result.stderr


def test_reserved_word_message_names_the_new_name(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "claude-pdf-helper",
        frontmatter="name: claude-pdf-helper\ndescription: Helps. Use when asked.\n",
    )
    code, report = _lint(tmp_path, "--target", "claude-api")
    assert code == 1
    messages = [d["message"] for d in report if d["code"] == "SK207"]
    assert messages and "rename it, e.g. 'pdf-helper'" in messages[0]


def _lint(path: Path, *args: str) -> tuple[int, list[dict]]:
    result = invoke("lint", "--isolated", "--format", "json", *args, str(path))
    report = json.loads(result.stdout)
    return result.exit_code, report["diagnostics"]


def test_caret_sits_under_the_span_on_wide_characters_in_every_file(tmp_path: Path) -> None:
    """Columns are code points; the caret is placed in terminal cells (CJK and emoji take
    two), and a finding in a reference file is quoted like one in SKILL.md."""
    write_skill(
        tmp_path,
        "wide-text",
        body="# 手順\n\nSee [手順書](references/なし.md), [the guide](references/guide.md).\n",
        files={"references/guide.md": "# Guide\n\n日本語 😀 [broken](nope.md)\n"},
    )
    result = invoke("lint", "--isolated", "--no-cache", str(tmp_path))
    lines = result.stdout.splitlines()
    for quoted, target, cells in (("See [", "references/なし.md", 13), ("日本語", "nope.md", 19)):
        at = next(i for i, line in enumerate(lines) if quoted in line and " | " in line)
        caret = lines[at + 1].split(" | ", 1)[1]
        # See [手順書]( is 13 cells; 日本語 😀 [broken]( is 19; なし is two wide characters
        width = len(target) + sum(1 for c in target if ord(c) > 0x2E80)
        assert caret == " " * cells + "^" * width, (lines[at], caret)


def test_github_annotation_of_a_span_ending_at_a_line_start_ends_the_line_before() -> None:
    from skillcheck.engine.lint import LintResult
    from skillcheck.report import ReportOptions, render
    from skillcheck.source.discover import Discovery
    from skillcheck.source.skill import Diagnostic, Severity

    cwd = Path("/nonexistent-root")
    # lines 3 to 6 whole: the exclusive end is (7, 1)
    diag = Diagnostic(
        "SK309", "description-whitespace", Severity.WARNING, "m", cwd / "S", 3, 1, 7, 1
    )
    result = LintResult([], [diag], ("agentskills",), {}, Discovery())
    out = render("github", result, ReportOptions(cwd=cwd))
    assert out == "::warning file=S,line=3,endLine=6,title=SK309 description-whitespace::m\n"


def test_github_format_prints_totals_beside_the_annotations(tmp_path: Path) -> None:
    from conftest import run_skillcheck

    write_skill(tmp_path, "pdf-tools", frontmatter="name: other\ndescription: Reads PDFs.\n")
    done = run_skillcheck("lint", "--isolated", "--format", "github", ".", cwd=tmp_path)
    assert done.returncode == 1
    assert all(line.startswith("::") for line in done.stdout.decode().splitlines())
    assert b"skillcheck: Found 1 error" in done.stderr
    clean = tmp_path / "clean"
    write_skill(clean, "pdf-tools")
    done = run_skillcheck("lint", "--isolated", "--format", "github", ".", cwd=clean)
    assert (done.returncode, done.stdout) == (0, b"")
    assert b"All checks passed: 1 skill" in done.stderr


def test_init_recognises_plugin_repositories(tmp_path: Path) -> None:
    one = tmp_path / "one"
    (one / ".claude-plugin").mkdir(parents=True)
    (one / "skills").mkdir()
    result = invoke("init", str(one))
    assert result.exit_code == 0, result.stderr
    assert 'target = ["agentskills", "claude-code"]' in result.stdout
    assert "detected from .claude-plugin" in result.stdout
    market = tmp_path / "market"
    (market / "plugins" / "pdf" / ".codex-plugin").mkdir(parents=True)
    (market / "plugins" / "pdf" / ".cursor-plugin").mkdir(parents=True)
    result = invoke("init", str(market))
    assert result.exit_code == 0, result.stderr
    assert 'target = ["agentskills", "codex", "cursor"]' in result.stdout
    assert "plugins/pdf/.codex-plugin" in result.stdout


def test_misspelt_target_and_rule_names_get_a_suggestion(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    result = invoke("lint", "--isolated", "--target", "claude", str(tmp_path))
    assert result.exit_code == 2
    assert "did you mean 'claude-code' or 'claude-api'?" in result.stderr
    result = invoke("lint", "--isolated", "--select", "name-directory-mismach", str(tmp_path))
    assert result.exit_code == 2
    assert "did you mean 'name-directory-mismatch'?" in result.stderr
    result = invoke("rule", "SK2O6")
    assert result.exit_code == 2 and "did you mean 'SK206'?" in result.stderr
    result = invoke("lint", "--isolated", "--target", "zzz", str(tmp_path))
    assert result.exit_code == 2 and "did you mean" not in result.stderr


def test_pack_and_catalog_say_what_their_gate_let_through(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "pdf-tools", frontmatter="name: pdf-tools\ndescription: PDF things\n")
    result = invoke("pack", "--isolated", str(skills), "-o", str(tmp_path / "b.tar.gz"))
    assert result.exit_code == 0, result.stderr
    assert "let through 1 warning" in result.stderr and "--strict refuses them" in result.stderr
    result = invoke("catalog", "--isolated", str(skills))
    assert result.exit_code == 0 and "let through 1 warning" in result.stderr
    quiet = invoke("pack", "-q", "--isolated", str(skills), "-o", str(tmp_path / "c.tar.gz"))
    assert quiet.exit_code == 0 and "let through" not in quiet.stderr


def test_a_symlinked_skill_directory_left_out_of_the_search_is_reported(tmp_path: Path) -> None:
    write_skill(tmp_path / "elsewhere", "pdf-tools")
    tree = tmp_path / "tree"
    write_skill(tree, "other-tool")
    (tree / "pdf-tools").symlink_to(tmp_path / "elsewhere" / "pdf-tools")
    code, diagnostics = _lint(tree)
    assert code == 0  # a warning: the skills that were searched decide the exit
    skipped = [d for d in diagnostics if d["code"] == "SK100"]
    assert len(skipped) == 1 and skipped[0]["severity"] == "warning"
    assert "symlink to a skill directory" in skipped[0]["message"]
    assert skipped[0]["path"].endswith("pdf-tools")


def test_fix_never_applies_a_rename(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter="name: pdf-tool\ndescription: Reads PDFs. Use for PDFs.\n",
    )
    before = (skill / "SKILL.md").read_bytes()
    result = invoke("lint", "--isolated", "--fix", str(tmp_path))
    assert result.exit_code == 1 and "SK206" in result.stdout
    assert (skill / "SKILL.md").read_bytes() == before


def test_quoted_one_line_description_is_told_about_its_quotes(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "plain-ok",
        frontmatter="name: plain-ok\ndescription: 'Reads PDFs. Use for PDFs.'\n",
    )
    write_skill(
        tmp_path,
        "needs-quotes",
        frontmatter="name: needs-quotes\ndescription: 'Reads PDFs: use for PDFs.'\n",
    )
    write_skill(
        tmp_path,
        "folded",
        frontmatter="name: folded\ndescription: >-\n  Reads PDFs. Use for PDFs.\n",
    )
    _code, diagnostics = _lint(tmp_path, "--target", "openskills")
    by_skill = {
        Path(d["path"]).parent.name: d["message"] for d in diagnostics if d["code"] == "SK111"
    }
    assert "remove the quotes (YAML reads it the same without them)" in by_skill["plain-ok"]
    assert "YAML needs them here, so reword" in by_skill["needs-quotes"]
    assert "write it as one plain line" in by_skill["folded"]
    assert "one plain line" not in by_skill["plain-ok"] + by_skill["needs-quotes"]


def test_messages_quote_long_values_shortened(tmp_path: Path) -> None:
    long = "Reads PDF files " * 60 + "--- and more. Use for PDFs."
    write_skill(tmp_path, "long-one", frontmatter=f"name: long-one\ndescription: {long}\n")
    _code, diagnostics = _lint(tmp_path, "--target", "skills-ref")
    [cut] = [d["message"] for d in diagnostics if d["code"] == "SK110"]
    assert "…" in cut and len(cut) < 300


def test_a_missing_folder_is_named_with_the_whole_path(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "gb-skill",
        body="See [ref](references/a.md).\n",
        files={"references/a.md": "# A\n\nRead [the notes](../.gitbook/notes/x.md).\n"},
    )
    _code, diagnostics = _lint(tmp_path)
    [broken] = [d["message"] for d in diagnostics if d["code"] == "SK501"]
    # the folder that is missing is named as such, not as if it were the file
    assert "'.gitbook/': that folder does not exist in the skill" in broken
