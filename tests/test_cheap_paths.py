"""Cheap paths first: a clean skill costs no Markdown parse and no import it does not need.

The pre-commit hook lints one skill per commit, so what a clean run imports is start-up time
users wait for. The probe runs the command in a fresh interpreter, as the hook does, and
reads back the modules it imported.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from skillgen import generate

from skillcheck.report import safe
from skillcheck.source.anchors import slugify

# what a clean skill never needs: the Markdown parser (its raw text shows nothing a link rule
# could report), gitignore matching (no ignore file), JSON Schema (no frontmatter-schema),
# near-miss suggestions (no misspelt key), the fixer (no --fix) and the packaging (lint goes
# through api_lint, not the whole api: archives, HTTP and the manifest are a fifth of start-up)
NOT_NEEDED = (
    "pyromark",
    "pathspec",
    "jsonschema",
    "difflib",
    "skillcheck.fix",
    "skillcheck.api",
    "skillcheck.package",
)

_PROBE = r"""
import json, sys
from skillcheck.cli import cli
sys.argv = ["skillcheck", *ARGS]
try:
    cli()
except SystemExit as exc:
    code = exc.code
sys.stderr.write("\nMODULES:" + json.dumps(sorted(sys.modules)))
"""


def _lint_in_fresh_interpreter(*args: str, cwd: Path) -> tuple[str, set[str]]:
    code = _PROBE.replace("ARGS", repr(list(args)))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, cwd=cwd, timeout=60, text=True
    )
    modules = set(json.loads(result.stderr.rsplit("MODULES:", 1)[1]))
    return result.stdout, modules


def _loaded(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


def test_linting_one_clean_skill_imports_nothing_it_does_not_need(tmp_path: Path) -> None:
    [skill] = generate(tmp_path, 1)  # a realistic skill: links, anchors, references, a script
    out, modules = _lint_in_fresh_interpreter("lint", str(skill / "SKILL.md"), cwd=tmp_path)
    assert "All checks passed: 1 skill (target: agentskills)." in out
    assert "skillcheck.rules.references" in modules  # the link rules did run
    assert "skillcheck.api_lint" in modules  # the command called the library, not the engine
    assert _loaded(modules, NOT_NEEDED) == []
    # one module per command, and `lint` loads only its own (start-up time)
    assert _loaded(modules, ("skillcheck.cli",)) == [
        "skillcheck.cli",
        "skillcheck.cli.common",
        "skillcheck.cli.lint",
    ]


def test_a_broken_link_is_reported_parsed_only_when_the_scan_cannot_read_it(
    tmp_path: Path,
) -> None:
    """The other side of the shortcut: a destination that may be broken is read exactly,
    by the cheap link scan when it can (no parser), else by a real parse (so the probe above
    can see the parser when it is imported)."""
    [skill] = generate(tmp_path, 1)
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    for link, parsed in (("(references/apl.md)", False), ('(references/apl.md "API")', True)):
        (skill / "SKILL.md").write_text(text.replace("(references/api.md)", link), encoding="utf-8")
        out, modules = _lint_in_fresh_interpreter(
            "lint", "--isolated", str(skill / "SKILL.md"), cwd=tmp_path
        )
        assert "SK501" in out and "references/apl.md" in out
        assert ("pyromark" in modules) is parsed


ASCII = st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=40)


@given(ASCII)
def test_ascii_headings_slug_as_github_does(title: str) -> None:
    # github-slugger on ASCII: lower case, keep letters, digits, '_', '-' and spaces, then
    # each space becomes '-'
    expected = re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")
    assert slugify(title) == expected


@given(st.text(max_size=40))
def test_safe_text_shows_every_control_character(text: str) -> None:
    shown = safe(text)
    assert not any((ord(c) < 0x20 and c != "\t") or 0x7F <= ord(c) <= 0x9F for c in shown)
    if text.isascii() and text.isprintable():
        assert shown == text
