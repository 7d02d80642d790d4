"""SK305-SK309 on the shapes real descriptions take: quoted user phrases, CJK text, blocks."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import invoke, lint_json, write_skill


def found(tmp_path: Path, description: str, code: str) -> list[dict]:
    write_skill(tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\ndescription: {description}\n")
    _code, report = lint_json("--isolated", "--select", code, ".", cwd=tmp_path)
    return [d for d in report["diagnostics"] if d["code"] == code]


@pytest.mark.parametrize(
    "description",
    [
        'Tailors a résumé to a posting. Use when the user says "tailor my resume".',
        "Tailors a résumé to a posting. Use when the user asks 'how do I apply' or 'fix my CV'.",
        "Tailors a résumé. Use for prompts like “rewrite my summary” or ‘help me apply’.",
        "Streams genomic file I/O on data frames. Use for I/O-bound pipelines.",
        "Checks the user's files. Use when the user's CV needs work.",
        "Calls Bedrock models (us.anthropic.claude-sonnet). Use for Bedrock requests.",
        "Generates changelogs. Use when you need release notes for your project.",
        "Fixes builds. Use it if your CI fails; whenever you see a red check.",
    ],
)
def test_quoted_user_phrases_and_io_are_not_the_descriptions_voice(
    tmp_path: Path, description: str
) -> None:
    assert found(tmp_path, description, "SK305") == []


@pytest.mark.parametrize(
    ("description", "word", "column"),
    [
        ('I can tailor a résumé. Use when the user says "tailor my resume".', "I", 14),
        ("Tailors a résumé to your posting. Use when asked 'fix my CV'.", "your", 34),
        ("Use when asked. You can tailor a résumé with it.", "You", 30),
    ],
)
def test_the_descriptions_own_first_or_second_person_is_reported(
    tmp_path: Path, description: str, word: str, column: int
) -> None:
    diags = found(tmp_path, description, "SK305")
    assert [(d["line"], d["column"]) for d in diags] == [(3, column)]
    assert f"({word!r})" in diags[0]["message"]


@pytest.mark.parametrize(
    "description",
    [
        "从PDF文件中提取文本和表格。当用户询问PDF文件时使用。",
        "从PDF文件中提取文本和表格。使用场景：合同、发票和论文。",
        "从PDF文件中提取文本和表格，适用于扫描件和加密文档。",
        "PDFファイルからテキストを抽出します。ユーザーがPDFについて質問した場合に使用します。",
        "PDF 파일에서 텍스트를 추출합니다. 사용자가 PDF에 대해 물어볼 때 사용합니다.",
        "Extrae texto de archivos PDF. Use cuando se solicite el texto de un PDF.",
        "Extrait le texte des fichiers PDF, à utiliser lorsque l'utilisateur parle de PDF.",
    ],
)
def test_chinese_japanese_and_korean_triggers_count(tmp_path: Path, description: str) -> None:
    assert found(tmp_path, description, "SK306") == []


def test_a_chinese_description_without_a_trigger_is_reported(tmp_path: Path) -> None:
    diags = found(tmp_path, "把CSV文件汇总成一份简短的报告，包括行数和列类型。", "SK306")
    assert [(d["line"], d["column"], d["severity"]) for d in diags] == [(3, 14, "info")]


def test_cjk_characters_count_more_toward_the_minimum_length(tmp_path: Path) -> None:
    assert found(tmp_path, "提取PDF文本。当用户询问PDF时使用。", "SK307") == []
    diags = found(tmp_path, "PDF工具", "SK307")
    assert [(d["line"], d["column"]) for d in diags] == [(3, 14)]
    assert "5 characters (worth 9 Latin letters)" in diags[0]["message"]
    assert "at least 40" in diags[0]["message"]


def test_latin_length_is_unchanged(tmp_path: Path) -> None:
    diags = found(tmp_path, "PDF helper for files", "SK307")
    assert "is 20 characters; say what" in diags[0]["message"]


@pytest.mark.parametrize("style", [">", "|"])
def test_a_block_whose_only_fault_is_its_final_newline_is_told_to_strip_it(
    tmp_path: Path, style: str
) -> None:
    description = f"{style}\n  Extracts text from PDF files. Use when the user asks about PDFs."
    diags = found(tmp_path, description, "SK309")
    assert [(d["line"], d["column"]) for d in diags] == [(3, 14)]
    assert f"write '{style}-' instead of '{style}'" in diags[0]["message"]
    result = invoke("lint", "--isolated", "--select", "SK309", "--fix", ".", cwd=tmp_path)
    assert result.exit_code == 0
    text = (tmp_path / "pdf-tools/SKILL.md").read_text(encoding="utf-8")
    assert f"description: {style}-\n" in text
    _code, report = lint_json("--isolated", "--select", "SK309", ".", cwd=tmp_path)
    assert report["diagnostics"] == []
