"""Human output and JSON stay inert and encodable whatever a skill's file names hold."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import run_skillcheck, write_skill
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcheck.report import junit
from skillcheck.source import display as display_module
from skillcheck.source.display import display_path


def test_text_output_never_starts_a_line_with_a_workflow_command(tmp_path) -> None:
    write_skill(tmp_path, "::error file=x::boom", frontmatter="name: x\ndescription: a\n")
    write_skill(tmp_path, "evil\nname", frontmatter="name: y\ndescription: b\n")
    proc = run_skillcheck("lint", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 1
    lines = proc.stdout.decode("utf-8").splitlines()
    assert lines, "expected diagnostics"
    assert not [line for line in lines if line.lstrip().startswith("::")]
    assert any("\\x3a:error file=x::boom/SKILL.md" in line for line in lines)
    assert b"\x1b" not in proc.stdout


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses non-UTF-8 file names")
def test_json_output_with_undecodable_file_names_is_valid_utf8_json(tmp_path) -> None:
    name = os.fsdecode(b"bad\xffname")
    write_skill(tmp_path, name, frontmatter="name: y\ndescription: b\n")
    out = tmp_path / "report.json"
    proc = run_skillcheck(
        "lint",
        "--format",
        "json",
        "--output",
        str(out),
        ".",
        cwd=tmp_path,
        env={"PYTHONIOENCODING": "utf-8:strict"},
    )
    assert proc.returncode == 1, proc.stderr
    report = json.loads(out.read_bytes().decode("utf-8"))
    assert {d["path"] for d in report["diagnostics"]} == {"bad\\xffname/SKILL.md"}


_PART = st.sampled_from(["a", "b", "ab", "..", ".", "x y", "é", "a\\b", "\udcff"])


@settings(max_examples=500, deadline=None)
@given(st.booleans(), st.lists(_PART, max_size=4), st.booleans(), st.lists(_PART, max_size=4))
def test_display_path_is_relative_to_where_it_applies(
    absolute: bool, parts: list[str], base_absolute: bool, base_parts: list[str]
) -> None:
    # display_path compares parts itself on POSIX (a report shows every skill's paths): it
    # must say what Path.relative_to says, "." for the directory itself, else the whole path
    path = Path(("/" if absolute else "") + "/".join(parts))
    base = Path(("/" if base_absolute else "") + "/".join(base_parts)) if base_parts else Path("/")
    try:
        expected = path.relative_to(base).as_posix() or "."
    except ValueError:
        expected = path.as_posix()
    assert display_path(path, base) == expected


@pytest.mark.parametrize(
    "pattern",
    [display_module._UNSAFE, junit._NOT_XML],
    ids=["safe: what it escapes", "junit: what XML cannot carry"],
)
def test_printable_text_holds_nothing_to_escape(pattern) -> None:
    """``safe`` and the JUnit reporter return printable text as it is, without running their
    patterns (whose wide classes take milliseconds to compile): that is exact only while
    every character the patterns match is one ``str.isprintable`` refuses."""
    every = "".join(map(chr, range(sys.maxunicode + 1)))  # surrogates included
    matched = "".join(m.group() for m in pattern.finditer(every))
    assert matched  # the pattern did scan
    assert [hex(ord(c)) for c in matched if c.isprintable()] == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=()), max_size=40))
def test_safe_text_is_the_same_through_the_fast_path(text: str) -> None:
    slow = display_module._UNSAFE.sub(
        lambda m: (
            f"\\u{ord(m.group()):04x}" if ord(m.group()) > 0xFF else f"\\x{ord(m.group()):02x}"
        ),
        display_module.display(text),
    )
    assert display_module.safe(text) == slow
    assert junit._xml(text) == junit._NOT_XML.sub("", slow)
