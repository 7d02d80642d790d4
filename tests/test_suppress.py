"""Suppressions: inline comments in SKILL.md, SK120 for stale ones, and per-path-ignores."""

from __future__ import annotations

from pathlib import Path

from conftest import lint_json, write_skill

FRONT = (
    "name: pdf-tools\ndescription: Extracts text from PDF files. Use when the user asks about"
    " PDFs.\n"
)


def _found(*args: str, cwd: Path) -> list[tuple[str, int, int, str]]:
    _code, report = lint_json(*args, cwd=cwd)
    return sorted((d["path"], d["line"], d["column"], d["code"]) for d in report["diagnostics"])


def _skill(tmp_path: Path, body: str, frontmatter: str = FRONT, name: str = "pdf-tools") -> Path:
    return write_skill(tmp_path, name, frontmatter=frontmatter, body=body)


# The body starts on line 5 (--- / name / description / ---).


def test_disable_next_line_silences_only_the_next_line(tmp_path: Path) -> None:
    body = (
        "# Steps\n"  # 5
        "<!-- skillcheck-disable-next-line SK501 -->\n"  # 6
        "See [a](missing.md).\n"  # 7: silenced
        "See [b](gone.md).\n"  # 8: reported
    )
    _skill(tmp_path, body)
    assert _found("--isolated", ".", cwd=tmp_path) == [("pdf-tools/SKILL.md", 8, 9, "SK501")]


def test_disable_covers_the_whole_file_by_code_slug_or_everything(tmp_path: Path) -> None:
    links = "See [a](missing.md).\n\nSee [b](gone.md).\n"
    for comment in (
        "<!-- skillcheck-disable SK501 -->",
        "<!-- skillcheck-disable broken-link -->",
        "<!-- skillcheck-disable SK999, broken-link -->",  # the unknown word is reported alone
        "<!--skillcheck-disable-->",
        "<!-- SkillCheck-Disable sk501 -->",
    ):
        _skill(tmp_path, f"# Steps\n\n{links}\n{comment}\n")
        found = _found("--isolated", ".", cwd=tmp_path)
        assert [f for f in found if f[3] == "SK501"] == [], comment
    assert found == []
    _skill(tmp_path, f"# Steps\n\n{links}\n<!-- skillcheck-disable SK999, broken-link -->\n")
    assert _found("--isolated", ".", cwd=tmp_path) == [("pdf-tools/SKILL.md", 11, 25, "SK120")]


def test_a_suppression_shown_as_code_does_not_act(tmp_path: Path) -> None:
    body = (
        "# Steps\n"  # 5
        "\n"  # 6
        "```markdown\n"  # 7
        "<!-- skillcheck-disable SK501 -->\n"  # 8
        "```\n"  # 9
        "\n"  # 10
        "~~~~\n"  # 11
        "<!-- skillcheck-disable -->\n"  # 12
        "~~~~\n"  # 13
        "\n"  # 14
        "    <!-- skillcheck-disable SK501 -->\n"  # 15: indented code block
        "\n"  # 16
        "Write `<!-- skillcheck-disable SK501 -->` or ``<!-- skillcheck-disable ` -->``.\n"  # 17
        "Also \\`<!-- skillcheck-disable-next-line SK501 -->\\` here:\n"  # 18: escaped: real
        "See [a](missing.md) and [b](gone.md).\n"  # 19
    )
    _skill(tmp_path, body)
    found = _found("--isolated", ".", cwd=tmp_path)
    # only the real comment on line 18 acts, on line 19; the examples neither act nor count
    # as unused suppressions
    assert found == []
    body = body.replace("Also \\`<!-- skillcheck-disable-next-line SK501 -->\\` here:\n", "x\n")
    _skill(tmp_path, body)
    assert _found("--isolated", ".", cwd=tmp_path) == [
        ("pdf-tools/SKILL.md", 19, 9, "SK501"),
        ("pdf-tools/SKILL.md", 19, 29, "SK501"),
    ]


def test_suppressions_in_list_items_act_and_code_in_them_does_not(tmp_path: Path) -> None:
    body = (
        "# Steps\n"  # 5
        "\n"  # 6
        "- First <!-- skillcheck-disable-next-line SK501 -->\n"  # 7: a tight item's text
        "- See [a](missing.md).\n"  # 8: silenced
        "- Then:\n"  # 9
        "  ```\n"  # 10
        "  <!-- skillcheck-disable SK501 -->\n"  # 11: code in an item
        "  ```\n"  # 12
        "  > <!-- skillcheck-disable-next-line SK501 -->\n"  # 13: in a quote in the item
        "  > See [c](lost.md).\n"  # 14: silenced
        "- See [b](gone.md).\n"  # 15: reported
    )
    _skill(tmp_path, body)
    assert _found("--isolated", ".", cwd=tmp_path) == [("pdf-tools/SKILL.md", 15, 11, "SK501")]


def test_frontmatter_text_is_not_a_suppression(tmp_path: Path) -> None:
    front = FRONT + 'author: "<!-- skillcheck-disable -->"\n'
    _skill(tmp_path, "# Steps\n\nDo the thing.\n", frontmatter=front)
    assert _found("--isolated", ".", cwd=tmp_path) == [("pdf-tools/SKILL.md", 4, 1, "SK108")]


def test_unused_and_unknown_suppressions_are_reported_at_their_words(tmp_path: Path) -> None:
    body = (
        "# Steps\n"  # 5
        "<!-- skillcheck-disable-next-line SK501 SK508 -->\n"  # 6: SK508 unused
        "See [a](missing.md).\n"  # 7
        "<!-- skillcheck-disable-next-line broken-link -->\n"  # 8: nothing on line 9
        "Fine text.\n"  # 9
        "Text <!-- skillcheck-disable SK5O1 --> inline.\n"  # 10: unknown code
        "<!-- skillcheck-disable-next-line -->\n"  # 11: silences nothing
        "\n"  # 12
    )
    _skill(tmp_path, body)
    code, report = lint_json("--isolated", ".", cwd=tmp_path)
    got = sorted(
        (d["line"], d["column"], d["end_line"], d["end_column"], d["code"], d["severity"])
        for d in report["diagnostics"]
    )
    assert got == [
        (6, 41, 6, 46, "SK120", "info"),
        (8, 35, 8, 46, "SK120", "info"),
        (10, 30, 10, 35, "SK120", "info"),
        (11, 1, 11, 38, "SK120", "info"),
    ]
    assert code == 0  # info does not fail the run
    messages = {d["line"]: d["message"] for d in report["diagnostics"]}
    assert "SK508" in messages[6] and "line 7" in messages[6]
    assert "'broken-link'" not in messages[8] and "broken-link" in messages[8]
    assert "'SK5O1'" in messages[10] and "not a rule code or slug" in messages[10]
    assert "silences nothing on the next line" in messages[11]


def test_codes_whose_rule_did_not_run_are_not_called_unused(tmp_path: Path) -> None:
    body = "# Steps\n<!-- skillcheck-disable-next-line SK501 -->\nSee [a](missing.md).\n"
    _skill(tmp_path, body)
    assert _found("--isolated", "--ignore", "SK501", ".", cwd=tmp_path) == []
    assert _found("--isolated", "--select", "SK120", ".", cwd=tmp_path) == []


def test_sk120_is_silenced_by_ignore_but_not_by_a_comment(tmp_path: Path) -> None:
    body = "# Steps\n\n<!-- skillcheck-disable SK120 -->\n<!-- skillcheck-disable SK999 -->\n"
    _skill(tmp_path, body)
    assert _found("--isolated", ".", cwd=tmp_path) == [
        ("pdf-tools/SKILL.md", 7, 25, "SK120"),  # SK120 itself silenced nothing
        ("pdf-tools/SKILL.md", 8, 25, "SK120"),  # SK999 names no rule
    ]
    assert _found("--isolated", "--ignore", "SK120", ".", cwd=tmp_path) == []
    (tmp_path / "skillcheck.toml").write_text('ignore = ["unused-suppression"]\n')
    assert _found(".", cwd=tmp_path) == []


def test_per_path_ignores_match_relative_to_the_config_file(tmp_path: Path) -> None:
    topics = {"legacy-a": "PDF files", "team/b": "CSV tables", "team/c": "git logs", "d": "images"}
    for rel, topic in topics.items():
        name = rel.rsplit("/", 1)[-1]
        front = (
            f"name: {name}\ndescription: Summarises {topic} for reports. Use when the user asks"
            f" about {topic}.\nauthor: data-team\n"  # SK108 on line 4 of every skill
        )
        write_skill(tmp_path, rel, frontmatter=front)
    (tmp_path / "skillcheck.toml").write_text(
        "[per-path-ignores]\n"
        '"legacy-*/**" = ["SK108"]\n'  # a code
        '"team/b/SKILL.md" = ["unknown-field"]\n'  # a slug, an exact file
        '"c/*" = ["SK1"]\n',  # a prefix; "c/" is not at the config's root, so nothing
        encoding="utf-8",
    )
    team = tmp_path / "team"
    # run from a subdirectory: the patterns still mean paths below the config file
    assert _found("..", cwd=team) == [
        ((tmp_path / "d" / "SKILL.md").as_posix(), 4, 1, "SK108"),
        ("c/SKILL.md", 4, 1, "SK108"),
    ]
    (tmp_path / "skillcheck.toml").write_text(
        '[per-path-ignores]\n"team/" = ["SK1"]\n"/d/**" = ["SK108"]\n', encoding="utf-8"
    )
    assert _found(".", cwd=tmp_path) == [("legacy-a/SKILL.md", 4, 1, "SK108")]


def test_per_path_ignores_reject_unknown_codes(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    (tmp_path / "skillcheck.toml").write_text('[per-path-ignores]\n"*" = ["SK999"]\n')
    from conftest import invoke

    result = invoke("lint", ".", cwd=tmp_path)
    assert result.exit_code == 2
    assert "per-path-ignores" in result.stderr and "SK999" in result.stderr


def test_suppressions_work_in_every_markdown_file_of_a_skill(tmp_path: Path) -> None:
    guide = (
        "# Guide\n"  # 1
        "<!-- skillcheck-disable-next-line SK501 -->\n"  # 2
        "See [a](missing.md).\n"  # 3: silenced
        "See [b](gone.md).\n"  # 4: reported
        "<!-- skillcheck-disable-next-line SK501 -->\n"  # 5: unused
        "No link.\n"  # 6
        "`<!-- skillcheck-disable SK501 -->` is an example\n"  # 7: code, not a comment
        "<!-- skillcheck-disable SK5O1 -->\n"  # 8: unknown code
    )
    write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=FRONT,
        body="Read [the guide](references/guide.md).\n",
        files={"references/guide.md": guide},
    )
    expected = [
        ("pdf-tools/references/guide.md", 4, 9, "SK501"),
        ("pdf-tools/references/guide.md", 5, 35, "SK120"),
        ("pdf-tools/references/guide.md", 8, 25, "SK120"),
    ]
    assert _found("--isolated", "--no-cache", ".", cwd=tmp_path) == expected
    # the same from the result cache (the comments are part of the cached summary)
    assert _found("--isolated", ".", cwd=tmp_path) == expected
    assert _found("--isolated", ".", cwd=tmp_path) == expected
    # a comment in one file never silences another file
    (tmp_path / "pdf-tools" / "references" / "other.md").write_text("See [c](nowhere.md).\n")
    (tmp_path / "pdf-tools" / "SKILL.md").write_text(
        f"---\n{FRONT}---\nRead [the guide](references/guide.md) and [more](references/other.md).\n"
    )
    found = _found("--isolated", "--no-cache", ".", cwd=tmp_path)
    assert ("pdf-tools/references/other.md", 1, 9, "SK501") in found
