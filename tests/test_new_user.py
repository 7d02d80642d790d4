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
