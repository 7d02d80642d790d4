"""Parsing SKILL.md: real positions of keys and values, and no input that crashes or hangs.

Positions are checked against the text of the file itself (BOM, CRLF, lone CR and the
characters YAML 1.1 counts as line breaks included); the property tests feed arbitrary bytes
and YAML-ish frontmatters through the command and require a well-formed report every time.
"""

from __future__ import annotations

import codecs
import json
import os
import tempfile
from pathlib import Path

import pytest
from conftest import calls_made, invoke, lint_json, run_skillcheck
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillcheck.schemas import load_schema
from skillcheck.source.frontmatter import parse_document
from skillcheck.source.skill import Pos, Span

DESC = "Extracts text and tables from PDF files. Use when the user asks about PDFs."
# functions a lint of a refused frontmatter may call (~52,000 today); expanding the billion
# laughs' aliases calls hundreds of millions
LINT_CALLS = 500_000


def _doc(text: str | bytes):
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return parse_document(Path("SKILL.md"), raw)


def _lint_file(root: Path, raw: bytes, *args: str, name: str = "pdf-tools") -> tuple[int, dict]:
    skill = root / name
    skill.mkdir(parents=True, exist_ok=True)
    (skill / "SKILL.md").write_bytes(raw)
    return lint_json("--isolated", *args, str(skill), cwd=root)


def _found(report: dict, code: str) -> list[tuple[int, int, int, int]]:
    return [
        (d["line"], d["column"], d["end_line"], d["end_column"])
        for d in report["diagnostics"]
        if d["code"] == code
    ]


# --- positions of keys and values ------------------------------------------------------------

FRONTMATTER = (
    "---\n"
    "name: pdf-tools\n"
    f'description: "{DESC}"\n'
    "metadata:\n"
    "  owner: docs-team\n"
    "license: |\n"
    "  MIT\n"
    "---\n"
    "# PDF tools\n"
)


def _check_spans(doc) -> None:
    fm = doc.frontmatter
    assert fm.close_line == 8
    assert fm.key("name").span == Span(Pos(2, 1), Pos(2, 5))
    assert fm.node("name").span == Span(Pos(2, 7), Pos(2, 16))
    assert fm.key("description").span == Span(Pos(3, 1), Pos(3, 12))
    # a quoted value's span includes its quotes
    assert fm.node("description").span == Span(Pos(3, 14), Pos(3, 16 + len(DESC)))
    owner_key, owner_value = fm.node("metadata").items()[0]
    assert owner_key.span == Span(Pos(5, 3), Pos(5, 8))
    assert owner_value.span == Span(Pos(5, 10), Pos(5, 19))
    # a block scalar starts at its indicator and ends where the block ends
    assert fm.node("license").span.start == Pos(6, 10)
    assert doc.body_line == 9
    assert doc.lines[doc.body_line - 1] == "# PDF tools"


def test_key_and_value_positions() -> None:
    _check_spans(_doc(FRONTMATTER))


def test_positions_after_a_bom_are_those_of_the_text() -> None:
    # the BOM is reported (SK901) at 1:1 and is not a column of line 1
    doc = _doc(codecs.BOM_UTF8 + FRONTMATTER.encode())
    assert [i.kind for i in doc.text_issues] == ["bom"]
    _check_spans(doc)


def test_positions_with_crlf_line_endings() -> None:
    doc = _doc(FRONTMATTER.replace("\n", "\r\n"))
    assert [i.kind for i in doc.text_issues] == ["crlf"]
    assert doc.text_issues[0].span.start == Pos(1, 4)  # the CR after the opening ---
    _check_spans(doc)


def test_positions_with_lone_cr_line_endings() -> None:
    # YAML, CommonMark and editors all end a line at a lone CR
    doc = _doc(FRONTMATTER.replace("\n", "\r"))
    assert [i.kind for i in doc.text_issues] == ["cr"]
    _check_spans(doc)


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_yaml_only_line_breaks_do_not_shift_later_positions(separator: str) -> None:
    # YAML 1.1 breaks lines at these characters; the file's lines (and editors) do not
    text = FRONTMATTER.replace(f'"{DESC}"', f'"Extracts text.{separator}Use when asked."')
    fm = _doc(text).frontmatter
    assert fm.error is None
    assert fm.key("metadata").span == Span(Pos(4, 1), Pos(4, 9))
    assert fm.node("metadata").items()[0][0].span.start == Pos(5, 3)


def test_yaml_error_positions_in_the_file(tmp_path: Path) -> None:
    cases = {
        # the commonest real-world error: an unquoted ': ' inside a value
        "description: Use when: the user asks about PDFs\n": (3, 22),
        # an unclosed quote is reported where it opens, not at the closing ---
        'description: "Extracts text from PDF files.\nlicense: MIT\n': (3, 14),
        # a continuation line that lost its indentation
        "description: Extracts text from PDF files.\nUse when the user asks.\n": (4, 1),
        # a tab used for indentation
        "metadata:\n\towner: docs\n": (4, 1),
        # a character YAML refuses anywhere (reported by the reader, not the parser)
        'license: "MIT\x01"\n': (3, 14),
        # ... where libyaml counts bytes, not characters: astral characters come first here
        'description: "\U00010000 é"\nlicense: "MIT\x01"\n': (4, 14),
    }
    for index, (yaml, position) in enumerate(cases.items()):
        raw = f"---\nname: pdf-tools\n{yaml}---\n# Body\n".encode()
        for variant in (raw, raw.replace(b"\n", b"\r\n"), codecs.BOM_UTF8 + raw):
            root = tmp_path / f"{index}-{len(variant)}-{variant[:1].hex()}"
            _code, report = _lint_file(root, variant)
            found = _found(report, "SK105")
            assert [f[:2] for f in found] == [position], (yaml, variant[:5], report)


def test_invalid_utf8_position_counts_characters(tmp_path: Path) -> None:
    raw = f"---\nname: pdf-tools\ndescription: {DESC}\n---\n# Résumé \xe9tapes\n".encode()
    raw = raw.replace("\xe9tapes".encode(), b"\xe9tapes")
    _code, report = _lint_file(tmp_path, raw)
    # "# Résumé " is 9 characters (11 bytes): the bad byte is the 10th character
    assert _found(report, "SK903") == [(5, 10, 5, 11)]
    assert "0xe9" in report["diagnostics"][0]["message"]


def test_utf16_file_is_decoded_and_reported(tmp_path: Path) -> None:
    text = f"---\nname: pdf-tools\ndescription: {DESC}\n---\n# PDF tools\n\nRun it.\n"
    code, report = _lint_file(tmp_path, codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    assert [(d["code"], d["line"], d["column"]) for d in report["diagnostics"]] == [("SK903", 1, 1)]
    assert "UTF-16 LE" in report["diagnostics"][0]["message"]
    assert report["skills"][0]["name"] == "pdf-tools"  # decoded and checked all the same
    assert code == 1


def test_a_read_cut_inside_a_character_is_not_an_encoding_error(tmp_path: Path) -> None:
    head = f"---\nname: pdf-tools\ndescription: {DESC}\n---\n#".encode()
    raw = head + "é".encode() * (5 * 1024 * 1024)  # 10 MiB: the 8 MiB read ends mid-"é"?
    if (8 * 1024 * 1024 - len(head)) % 2 == 0:
        raw = b" " + raw
    _code, report = _lint_file(tmp_path, raw, "--select", "SK116,SK903")
    assert [d["code"] for d in report["diagnostics"]] == ["SK116"]


# --- bounds: billion laughs and a 50 MB file ----------------------------------------------


def _counted_lint(root: Path, *args: str, limit: int) -> tuple[int, int, dict]:
    """(functions called, exit code, report) of linting ``root`` in this process; the rules
    and libraries are imported beforehand, uncounted."""
    small = root.parent / "warm-up" / "pdf-tools"
    small.mkdir(parents=True)
    (small / "SKILL.md").write_text(f"---\nname: pdf-tools\ndescription: {DESC}\n---\n")
    lint_json("--isolated", *args, str(small))
    done: list[tuple[int, dict]] = []
    calls = calls_made(lambda: done.append(lint_json("--isolated", *args, str(root))), limit)
    return calls, *done[0]


def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    lines = ['  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"  {name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    text = f"---\nname: pdf-tools\ndescription: {DESC}\nmetadata:\n" + "\n".join(lines)
    skill = tmp_path / "pdf-tools"
    skill.mkdir()
    (skill / "SKILL.md").write_text(text + "\n---\n# PDF tools\n\nRun it.\n")
    calls, code, report = _counted_lint(skill, "--target", "all", limit=LINT_CALLS)
    assert _found(report, "SK115") == [(1, 1, 1, 4)]
    assert (
        "billion laughs"
        in next(d for d in report["diagnostics"] if d["code"] == "SK115")["message"]
    )
    assert code == 1
    assert calls <= LINT_CALLS


def test_a_50_mb_skill_md_is_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skill = tmp_path / "pdf-tools"
    skill.mkdir()
    line = b"Extract the text of every page and quote the page numbers when summarising.\n"
    with open(skill / "SKILL.md", "wb") as handle:
        handle.write(f"---\nname: pdf-tools\ndescription: {DESC}\n---\n# PDF tools\n".encode())
        handle.write(line * (50 * 1024 * 1024 // len(line)))
    read = 0
    real_read = os.read

    def counting_read(fd: int, n: int) -> bytes:
        nonlocal read
        data = real_read(fd, n)
        read += len(data)
        return data

    monkeypatch.setattr(os, "read", counting_read)
    code, report = lint_json("--isolated", "--target", "all", str(skill))
    monkeypatch.undo()
    assert _found(report, "SK116") == [(1, 1, 1, 1)]
    assert "50.0 MiB" in next(d for d in report["diagnostics"] if d["code"] == "SK116")["message"]
    assert code == 1
    # its first 8 MiB are read and checked, the rest never
    assert 8 * 1024 * 1024 <= read < 9 * 1024 * 1024, read


# --- nothing crashes: arbitrary bytes and YAML-ish frontmatters ------------------------------


def _report_validator():
    import jsonschema

    return jsonschema.Draft202012Validator(load_schema("report.schema.json"))


REPORT = _report_validator()  # built once: jsonschema.validate re-checks the schema each call


def _assert_well_formed(result) -> dict:
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    REPORT.validate(report)
    for diag in report["diagnostics"]:
        assert diag["end_line"] >= diag["line"]
    return report


def _lint_bytes_in_process(raw: bytes, *args: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        skill = Path(tmp) / "pdf-tools"
        skill.mkdir()
        (skill / "SKILL.md").write_bytes(raw)
        result = invoke("lint", "--isolated", "--format", "json", *args, str(skill), cwd=Path(tmp))
    return _assert_well_formed(result)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.binary(max_size=600))
def test_arbitrary_bytes_never_crash(raw: bytes) -> None:
    _lint_bytes_in_process(raw, "--target", "all")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.binary(max_size=300))
def test_arbitrary_bytes_after_a_frontmatter_opening(raw: bytes) -> None:
    for prefix in (b"---\n", codecs.BOM_UTF8 + b"---\r\n", b"---\nname: pdf-tools\n"):
        _lint_bytes_in_process(prefix + raw)


_TOKENS = [
    "name",
    "description",
    "license",
    "metadata",
    "allowed-tools",
    "compatibility",
    "when_to_use",
    "user-invocable",
    "descripton",
    "x",
    "<<",
    "? ",
    ": ",
    ":",
    "- ",
    "-",
    "[",
    "]",
    "{",
    "}",
    ",",
    "&a ",
    "*a",
    "&b",
    "*b",
    "!!str ",
    "!!binary ",
    "!custom ",
    "|",
    ">-",
    "|+",
    '"',
    "'",
    "\\",
    "#",
    " # c",
    "---",
    "...",
    "%YAML 1.1",
    "\t",
    "  ",
    "    ",
    "\r",
    "\r\n",
    "\n",
    "\u2028",
    "\u0085",
    "\ufeff",
    "\x00",
    "yes",
    "no",
    "1.0",
    "0x1F",
    "2024-01-31",
    "~",
    "null",
    "é",
    "😀",
    "pdf-tools",
    "Use when: asked",
    "=",
    "@",
    "`",
    "%",
]


@st.composite
def yamlish(draw) -> str:
    lines = draw(
        st.lists(
            st.lists(st.sampled_from(_TOKENS) | st.text(max_size=6), min_size=0, max_size=8),
            min_size=0,
            max_size=10,
        )
    )
    return "\n".join("".join(parts) for parts in lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frontmatter=yamlish(), body=st.sampled_from(["# Steps\n\nRun it.\n", "", "---\n"]))
def test_yamlish_frontmatters_never_crash(frontmatter: str, body: str) -> None:
    raw = f"---\n{frontmatter}\n---\n{body}".encode("utf-8", "surrogatepass")
    report = _lint_bytes_in_process(raw, "--target", "all")
    lines = raw.decode("utf-8", "replace").splitlines()
    for diag in report["diagnostics"]:
        assert 1 <= diag["line"] <= max(len(lines), 1) + 1, diag


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    values=st.lists(st.text(max_size=20), min_size=1, max_size=6),
    bom=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_every_key_position_points_at_the_key(values: list[str], bom: bool, newline: str) -> None:
    """Keys k0, k1, ... with arbitrary double-quoted values: each key's span is its line."""
    body = "".join(f"k{i}: {json.dumps(v, ensure_ascii=False)}\n" for i, v in enumerate(values))
    text = ("\ufeff" if bom else "") + f"---\n{body}---\n# Body\n"
    doc = _doc(text.replace("\n", newline).encode("utf-8", "surrogatepass"))
    fm = doc.frontmatter
    if fm.error is not None:  # a value YAML cannot hold (e.g. a control character)
        line = doc.lines[fm.error[1].start.line - 1]
        assert fm.error[1].start.line >= 2 and fm.error[1].start.column <= len(line) + 1
        return
    for i in range(len(values)):
        span = fm.key(f"k{i}").span
        assert span == Span(Pos(i + 2, 1), Pos(i + 2, 2 + len(str(i))))
        assert doc.lines[i + 1].startswith(f"k{i}: ")
        assert fm.node(f"k{i}").span.start == Pos(i + 2, 4 + len(str(i)))


def test_nasty_files_through_the_installed_command(tmp_path: Path) -> None:
    """End to end: the real command on a few hostile files gives exit 1 and valid JSON."""
    nasty = {
        "nul": b"---\nname: \x00\n---\n",
        "utf32": codecs.BOM_UTF32_LE + "---\nname: x\n---\n".encode("utf-32-le"),
        "deep": b"---\nname: " + b"[" * 5000 + b"\n---\n",
        "alias": b"---\nname: *nope\n---\n",
        "garbage": bytes(range(256)) * 4,
    }
    for label, raw in nasty.items():
        skill = tmp_path / label
        skill.mkdir()
        (skill / "SKILL.md").write_bytes(raw)
    result = run_skillcheck("lint", "--isolated", "--format", "json", str(tmp_path), timeout=60)
    assert result.returncode == 1, result.stderr
    assert b"Traceback" not in result.stderr
    report = json.loads(result.stdout)
    REPORT.validate(report)
    assert {s["path"].rsplit("/", 1)[-1] for s in report["skills"]} == set(nasty)
