"""Nothing a gate did not check may pass (issue 29, item 2): a Markdown file longer than the
reader parses is an error (SK117) at the first line left unread, so a broken link past the
bound never passes with exit 0."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import lint_json, write_skill

from skillcheck.source.markdown import MAX_PARSE_CHARS

FILLER = "Plain prose that links nowhere and names no path at all, line after line.\n"


@pytest.mark.parametrize("where", ["SKILL.md", "references/long.md"])
def test_a_broken_link_past_the_parse_bound_fails_the_gate(tmp_path: Path, where: str) -> None:
    long_text = "# Long\n\n" + FILLER * (MAX_PARSE_CHARS // len(FILLER) + 10)
    long_text += "\nSee [the missing file](references/missing.md).\n"
    if where == "SKILL.md":
        write_skill(tmp_path / "skills", "pdf-tools", body=long_text)
    else:
        write_skill(
            tmp_path / "skills",
            "pdf-tools",
            body="# Steps\n\nRead [the long guide](references/long.md).\n",
            files={where: long_text},
        )
    code, report = lint_json("--isolated", "skills", cwd=tmp_path)
    assert code == 1
    found = [d for d in report["diagnostics"] if d["code"] == "SK117"]
    assert len(found) == 1 and found[0]["path"].endswith(where)
    assert found[0]["severity"] == "error" and "were not checked" in found[0]["message"]
    total = len(long_text.splitlines())
    assert found[0]["line"] < total  # the first line left unread, before the link


def test_a_file_just_under_the_bound_is_parsed_whole(tmp_path: Path) -> None:
    body = "# Long\n\n" + FILLER * ((MAX_PARSE_CHARS - 2_000) // len(FILLER))
    body += "See [the missing file](references/missing.md).\n"
    write_skill(tmp_path / "skills", "pdf-tools", body=body)
    _code, report = lint_json("--isolated", "skills", cwd=tmp_path)
    codes = [d["code"] for d in report["diagnostics"]]
    assert "SK117" not in codes and "SK501" in codes
