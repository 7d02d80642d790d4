"""`skillcheck lint --fix` / `--diff`: exact edits, idempotent, atomic, and proven safe.

The property tests generate SKILL.md files with every fixable problem in random
combinations (BOM, mixed CRLF/CR/LF, whitespace after `---`, padded quoted or clipped block
descriptions, allowed-tools lists and comma strings, implicitly typed values, unknown keys)
and check, against an independent rendering of the expected file: the fixed bytes are
exactly the expected ones, every fix edits only bytes of the place its finding names, the
fixed file parses to the same values apart from the intended change, the fixed rules no
longer fire, and a second --fix changes nothing (the file is not even rewritten).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import assert_linear, cpu_seconds, invoke, lint_json, run_skillcheck, write_skill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillcheck.source.frontmatter import parse_document

FIXED_RULES = {"SK108", "SK112", "SK114", "SK309", "SK403", "SK901", "SK902"}
DESC = "Extracts text from PDF files. Use when the user asks about PDFs."


def _codes(root: Path, *args: str) -> list[str]:
    _code, report = lint_json("--isolated", *args, ".", cwd=root)
    return sorted(d["code"] for d in report["diagnostics"])


def _skill_md(root: Path, raw: bytes, name: str = "pdf-tools") -> Path:
    skill = root / name
    skill.mkdir(parents=True, exist_ok=True)
    path = skill / "SKILL.md"
    path.write_bytes(raw)
    return path


def _fix(root: Path, *args: str):
    return invoke("lint", "--isolated", "--fix", *args, ".", cwd=root)


# --- each fix, byte for byte ---------------------------------------------------------------


def test_bom_crlf_and_delimiter_whitespace(tmp_path: Path) -> None:
    raw = (
        b"\xef\xbb\xbf--- \r\nname: pdf-tools\r\ndescription: " + DESC.encode() + b"\r\n---\t\r\n"
        b"# Steps\r\n\r\nDo it.\rDone.\r\n"
    )
    path = _skill_md(tmp_path, raw)
    result = _fix(tmp_path)
    assert path.read_bytes() == (
        b"---\nname: pdf-tools\ndescription: "
        + DESC.encode()
        + b"\n---\n# Steps\n\nDo it.\nDone.\n"
    )
    assert result.exit_code == 0
    assert (
        "Fixed 5 findings. All checks passed: 1 skill (target: agentskills)." in result.stdout
    )  # BOM, CRLF, CR, 2x ws


def test_description_whitespace_quoted_and_block(tmp_path: Path) -> None:
    cases = {
        f'description: "  {DESC}\t "\n': f'description: "{DESC}"\n',
        f"description: ' {DESC}'\n": f"description: '{DESC}'\n",
        f"description: |\n  {DESC}\n": f"description: |-\n  {DESC}\n",
        f"description: >2\n  {DESC}\n": f"description: >2-\n  {DESC}\n",
        f"description: |+\n  {DESC}\n\n": f"description: |-\n  {DESC}\n\n",
    }
    for before, after in cases.items():
        path = write_skill(tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\n{before}")
        _fix(tmp_path)
        assert path.joinpath("SKILL.md").read_text() == f"---\nname: pdf-tools\n{after}---\n" + (
            "# Steps\n\nDo the thing.\n"
        ), before
        assert "SK309" not in _codes(tmp_path)


def test_allowed_tools_become_one_spaced_string(tmp_path: Path) -> None:
    cases = {
        "allowed-tools: Read, Grep,Bash(git:add,commit)\n": (
            "allowed-tools: Read Grep Bash(git:add,commit)\n"
        ),
        "allowed-tools: 'Read, Grep'\n": "allowed-tools: 'Read Grep'\n",
        "allowed-tools:\n  - Read\n  - Bash(git:*)\nlicense: MIT\n": (
            "allowed-tools: Read Bash(git:*)\nlicense: MIT\n"
        ),
        'allowed-tools: ["Bash(git:*)", Read]\n': "allowed-tools: Bash(git:*) Read\n",
    }
    for before, after in cases.items():
        front = f"name: pdf-tools\ndescription: {DESC}\n"
        path = write_skill(tmp_path, "pdf-tools", frontmatter=front + before)
        _fix(tmp_path)
        text = path.joinpath("SKILL.md").read_text()
        assert text == f"---\n{front}{after}---\n# Steps\n\nDo the thing.\n", before
        assert not {"SK403", "SK109"} & set(_codes(tmp_path))


def test_allowed_tools_list_with_a_comment_is_left_alone(tmp_path: Path) -> None:
    front = f"name: pdf-tools\ndescription: {DESC}\nallowed-tools:\n  - Read  # why\n  - Grep\n"
    path = write_skill(tmp_path, "pdf-tools", frontmatter=front)
    before = path.joinpath("SKILL.md").read_bytes()
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    (sk403,) = [d for d in report["diagnostics"] if d["code"] == "SK403"]
    assert sk403["fix"] is None  # reported, but no fix that would drop the comment
    _fix(tmp_path)
    assert path.joinpath("SKILL.md").read_bytes() == before


def test_implicit_types_are_quoted(tmp_path: Path) -> None:
    front = (
        f"name: pdf-tools\ndescription: {DESC}\nmetadata:\n"
        "  version: 1.10\n  beta: yes\n  released: 2024-01-31\n  build: 007\n  none: ~\n"
    )
    path = write_skill(tmp_path, "pdf-tools", frontmatter=front)
    _fix(tmp_path)
    text = path.joinpath("SKILL.md").read_text()
    assert text.startswith(
        f'---\nname: pdf-tools\ndescription: {DESC}\nmetadata:\n  version: "1.10"\n'
        '  beta: "yes"\n  released: "2024-01-31"\n  build: "007"\n  none: ~\n---\n'
    )
    values = parse_document(path / "SKILL.md", text.encode()).frontmatter.values
    assert values["metadata"] == {
        "version": "1.10",
        "beta": "yes",
        "released": "2024-01-31",
        "build": "007",
        "none": None,
    }


def test_many_implicit_types_are_proved_a_batch_a_round(tmp_path: Path) -> None:
    # each fix is proved by parsing the edited frontmatter: a lint offers the first 50 of a
    # file, and --fix proves the next ones in its next rounds
    values = "".join(f"  k{i}: yes\n" for i in range(60))
    path = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=f"name: pdf-tools\ndescription: {DESC}\nmetadata:\n{values}",
    )
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    found = [d for d in report["diagnostics"] if d["code"] == "SK112"]
    assert len(found) == 60 and sum(1 for d in found if d["fix"] is not None) == 50
    result = _fix(tmp_path)
    assert "Fixed 60 findings" in result.output
    assert path.joinpath("SKILL.md").read_text().count(': "yes"') == 60
    assert "SK112" not in _codes(tmp_path)


def test_implicit_types_are_linear_in_a_long_metadata_block(tmp_path: Path) -> None:
    from skillcheck.engine.check import check_skill
    from skillcheck.rules import Context, all_rules
    from skillcheck.source.load import load_skill
    from skillcheck.targets import TARGETS

    rules = [r for r in all_rules() if r.code == "SK112"]
    made = itertools.count()

    def cost(n: int) -> float:
        values = "".join(f"  k{i}: yes\n" for i in range(n))
        root = tmp_path / f"{n}-{next(made)}"
        write_skill(root, "pdf", frontmatter=f"name: pdf\ndescription: {DESC}\nmetadata:\n{values}")
        skill = load_skill(root / "pdf", "pdf")
        return cpu_seconds(lambda: check_skill(skill, rules, Context(targets=tuple(TARGETS))))

    assert_linear(cost, 250, what="SK112 in a long metadata block")


def test_unknown_keys_move_under_metadata(tmp_path: Path) -> None:
    front = f"name: pdf-tools\nauthor: data-team\ndescription: {DESC}\nteam: 'PDF  tools'\n"
    path = write_skill(tmp_path, "pdf-tools", frontmatter=front)
    result = _fix(tmp_path)
    assert (
        path.joinpath("SKILL.md")
        .read_text()
        .startswith(
            f"---\nname: pdf-tools\ndescription: {DESC}\n"
            "metadata:\n  author: data-team\n  team: 'PDF  tools'\n---\n"
        )
    )
    assert "Fixed 2 findings." in result.stdout
    # an existing block metadata keeps its indentation; the keys join after its last entry
    front = (
        f"name: pdf-tools\ndescription: {DESC}\nmetadata:\n    owner: data\n    tier: gold\n"
        "author: me\nlicense: MIT\n"
    )
    path = write_skill(tmp_path, "pdf-tools", frontmatter=front)
    _fix(tmp_path)
    moved = "metadata:\n    owner: data\n    tier: gold\n    author: me\nlicense: MIT\n---\n"
    text = path.joinpath("SKILL.md").read_text()
    assert text.startswith(f"---\nname: pdf-tools\ndescription: {DESC}\n{moved}")


def test_keys_that_are_not_safe_to_move_stay(tmp_path: Path) -> None:
    cases = [
        "descripton: typo\n",  # a near miss of a spec key: renamed by hand, never moved
        "model: opus\n",  # Claude Code reads it at the top level
        "tags:\n  - pdf\n",  # not a scalar
        "author: x\nmetadata:\n  author: y\n",  # already under metadata
        "author: x\nmetadata: {owner: y}\n",  # flow metadata
        "author: x\nmetadata: ~\n",  # metadata that is not a mapping
    ]
    for extra in cases:
        front = f"name: pdf-tools\ndescription: {DESC}\n{extra}"
        path = write_skill(tmp_path, "pdf-tools", frontmatter=front)
        before = path.joinpath("SKILL.md").read_bytes()
        _code, report = lint_json("--isolated", "--target", "all", ".", cwd=tmp_path)
        assert all(d["fix"] is None for d in report["diagnostics"] if d["code"] == "SK108"), extra
        invoke("lint", "--isolated", "--fix", "--select", "SK108", ".", cwd=tmp_path)
        assert path.joinpath("SKILL.md").read_bytes() == before, extra


def test_extra_fields_are_not_moved(tmp_path: Path) -> None:
    path = write_skill(
        tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\ndescription: {DESC}\nauthor: me\n"
    )
    (tmp_path / "skillcheck.toml").write_text('extra-fields = ["author"]\ntarget = "skills-ref"\n')
    before = path.joinpath("SKILL.md").read_bytes()
    result = invoke("lint", "--fix", ".", cwd=tmp_path)
    assert "SK108" in result.stdout  # still rejected by skills-ref, but the team chose the key
    assert path.joinpath("SKILL.md").read_bytes() == before


def test_suppressed_and_ignored_findings_are_not_fixed(tmp_path: Path) -> None:
    front = f"name: pdf-tools\ndescription: {DESC}\nauthor: me\n"
    path = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=front,
        body="# Steps\n\n<!-- skillcheck-disable SK108 -->\n",
    )
    raw = b"\xef\xbb\xbf" + path.joinpath("SKILL.md").read_bytes()
    path.joinpath("SKILL.md").write_bytes(raw)
    _fix(tmp_path, "--ignore", "SK901")
    assert path.joinpath("SKILL.md").read_bytes() == raw


def test_multibyte_text_and_crlf_offsets(tmp_path: Path) -> None:
    raw = (
        '---\r\nname: pdf-tools\r\ndescription: "  Résumé des PDF — 日本語 ✓. Use when asked'
        ' about PDFs.  "\r\nallowed-tools: Read,Grep\r\nmetadata:\r\n  ver: 1.0\r\n---\r\n'
        "# Étapes ✓\r\n"
    ).encode()
    path = _skill_md(tmp_path, raw)
    _fix(tmp_path, "--ignore", "SK902")  # keep CRLF: the other fixes must land exactly
    assert (
        path.read_bytes()
        == (
            '---\r\nname: pdf-tools\r\ndescription: "Résumé des PDF — 日本語 ✓. Use when asked'
            ' about PDFs."\r\nallowed-tools: Read Grep\r\nmetadata:\r\n  ver: "1.0"\r\n---\r\n'
            "# Étapes ✓\r\n"
        ).encode()
    )


def test_edits_that_cannot_be_proven_are_not_offered(tmp_path: Path) -> None:
    cases = {
        # an escaped tab: removing it means rewriting the escape, not trimming spaces
        f'description: "\\t{DESC}"\n': "SK309",
        # an anchored value: quoting it would also change every alias of it
        f"description: {DESC}\nmetadata:\n  version: &v 1.0\n  again: *v\n": "SK112",
    }
    for front, code in cases.items():
        path = write_skill(tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\n{front}")
        _code, report = lint_json("--isolated", ".", cwd=tmp_path)
        found = [d for d in report["diagnostics"] if d["code"] == code]
        assert found and all(d["fix"] is None for d in found), front
        before = path.joinpath("SKILL.md").read_bytes()
        _fix(tmp_path, "--select", code)
        assert path.joinpath("SKILL.md").read_bytes() == before
    path = tmp_path / "pdf-tools" / "SKILL.md"
    path.write_bytes(path.read_text().replace("\n", "\r\n").encode("utf-16"))
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    assert [d["fix"] for d in report["diagnostics"] if d["code"] == "SK902"] == [None]


def test_billion_laughs_with_a_bom_is_fixed_without_expanding(tmp_path: Path) -> None:
    rows = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        rows.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    path = _skill_md(tmp_path, b"\xef\xbb\xbf---\n" + "\n".join(rows).encode() + b"\n---\nBody\n")
    result = _fix(tmp_path, "--select", "SK901,SK115")
    assert path.read_bytes().startswith(b"---\na: &a")
    assert "Fixed 1 finding." in result.stdout and "SK115" in result.stdout


# --- --diff, atomic writes, untouched files --------------------------------------------------


def test_diff_previews_without_writing(tmp_path: Path) -> None:
    front = f"name: pdf-tools\ndescription: {DESC}\nallowed-tools: Read, Grep\n"
    path = write_skill(tmp_path, "pdf-tools", frontmatter=front).joinpath("SKILL.md")
    before, stat = path.read_bytes(), path.stat()
    result = invoke("lint", "--isolated", "--diff", ".", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stdout == (
        "--- pdf-tools/SKILL.md\n+++ pdf-tools/SKILL.md\n@@ -1,7 +1,7 @@\n ---\n name: pdf-tools\n"
        f" description: {DESC}\n-allowed-tools: Read, Grep\n+allowed-tools: Read Grep\n ---\n"
        " # Steps\n \n"
    )
    assert "Would fix 1 finding in 1 file." in result.stderr
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stat.st_mtime_ns
    _fix(tmp_path)
    result = invoke("lint", "--isolated", "--diff", ".", cwd=tmp_path)
    assert (result.exit_code, result.stdout) == (0, "")
    assert "No fixes available." in result.stderr


def test_fix_rounds_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--fix applies at most ``MAX_ROUNDS`` rounds (README: bounded time), leaving what the
    next rounds would fix reported, not looping until the file settles."""
    import skillcheck.fix as fix

    monkeypatch.setattr(fix, "MAX_ROUNDS", 1)
    values = "".join(f"  k{i}: yes\n" for i in range(60))
    path = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=f"name: pdf-tools\ndescription: {DESC}\nmetadata:\n{values}",
    )
    _fix(tmp_path)  # one round: the 50 fixes a lint offers
    assert path.joinpath("SKILL.md").read_text().count(': "yes"') == 50
    assert "SK112" in _codes(tmp_path)


def test_diff_shows_invisible_changes_escaped(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "pdf-tools").joinpath("SKILL.md")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes().replace(b"\n", b"\r\n"))
    result = invoke("lint", "--isolated", "--diff", ".", cwd=tmp_path)
    # the BOM is shown escaped; a CRLF ending is kept as it is (so the diff applies)
    out = result.stdout_bytes  # (click's Result.stdout turns CRLF into LF)
    assert b"-\\ufeff---\r\n" in out and b"\n+---\n" in out
    assert "\ufeff".encode() not in out
    assert b"\r" not in out.replace(b"\r\n", b"")
    # a lone CR, which could redraw a line, stays escaped
    path.write_bytes(b"---\nname: pdf-tools\rX\ndescription: " + DESC.encode() + b"\n---\nA\rB\n")
    result = invoke("lint", "--isolated", "--diff", ".", cwd=tmp_path)
    assert b"\\x0d" in result.stdout_bytes
    assert b"\r" not in result.stdout_bytes.replace(b"\r\n", b"")


@pytest.mark.skipif(
    shutil.which("git") is None or shutil.which("patch") is None, reason="needs git and patch"
)
@pytest.mark.parametrize("tool", ["git", "patch"])
def test_a_crlf_to_lf_diff_applies(tmp_path: Path, tool: str) -> None:
    path = write_skill(tmp_path, "pdf-tools").joinpath("SKILL.md")
    lf = path.read_bytes()
    path.write_bytes(lf.replace(b"\n", b"\r\n"))
    diff = run_skillcheck("lint", "--isolated", "--no-cache", "--diff", ".", cwd=tmp_path)
    assert diff.returncode == 1
    assert path.read_bytes() != lf
    if tool == "git":
        subprocess.run(["git", "init", "-q", "."], cwd=tmp_path, check=True)
        command = ["git", "apply", "-p0"]
    else:
        command = ["patch", "-p0"]
    done = subprocess.run(command, cwd=tmp_path, input=diff.stdout, capture_output=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert path.read_bytes() == lf


def test_fix_touches_only_files_with_fixes_and_keeps_modes(tmp_path: Path) -> None:
    bad = write_skill(
        tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\ndescription: {DESC}\nbeta: yes\n"
    ).joinpath("SKILL.md")
    good = write_skill(
        tmp_path,
        "csv-tools",
        frontmatter="name: csv-tools\ndescription: Summarises CSV files. Use when the user"
        " shares a CSV table.\n",
    ).joinpath("SKILL.md")
    os.chmod(bad, 0o640)
    good_stat = good.stat()
    result = _fix(tmp_path)
    assert '\nmetadata:\n  beta: "yes"\n---\n' in bad.read_text()  # moved, then quoted
    assert bad.stat().st_mode & 0o777 == 0o640
    assert (good.stat().st_ino, good.stat().st_mtime_ns) == (
        good_stat.st_ino,
        good_stat.st_mtime_ns,
    )
    assert sorted(p.name for p in bad.parent.iterdir()) == ["SKILL.md"]  # no temp files left
    assert result.exit_code == 0


def test_fix_refuses_a_file_changed_meanwhile(tmp_path: Path, monkeypatch) -> None:
    path = write_skill(
        tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\ndescription: {DESC}\nbeta: yes\n"
    ).joinpath("SKILL.md")
    from skillcheck import fix

    plan = fix.plan_fixes

    def edit_after_planning(result, settings_):
        plans = plan(result, settings_)
        path.write_text(path.read_text() + "Edited by hand.\n")
        return plans

    monkeypatch.setattr(fix, "plan_fixes", edit_after_planning)
    result = _fix(tmp_path)
    assert result.exit_code == 2
    assert "pdf-tools/SKILL.md: not fixed: changed on disk" in result.stderr
    assert path.read_text().endswith("Edited by hand.\n") and "beta: yes" in path.read_text()


def test_fix_follows_a_symlink_inside_the_skill(tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\ndescription: {DESC}\n"
    )
    real = skill / "docs" / "skill.txt"
    real.parent.mkdir()
    (skill / "SKILL.md").rename(real)
    real.write_bytes(real.read_bytes().replace(b"\n", b"\r\n"))
    (skill / "SKILL.md").symlink_to("docs/skill.txt")
    _fix(tmp_path)
    assert (skill / "SKILL.md").is_symlink()
    assert b"\r" not in real.read_bytes()


# --- properties ------------------------------------------------------------------------------

# tools without spaces: a tool with one (`Bash(git add *)`) is never joined (see below)
TOOLS = ["Read", "Grep", "Bash(git:add,commit)", "Bash(git:*)", "WebFetch"]
DESCRIPTIONS = [DESC, "Résumé des PDF — 日本語 ✓. Use when the user asks about PDFs."]
META_KEYS = ["version", "owner", "build", "beta", "released"]
UNKNOWN_KEYS = ["author", "team", "website", "category"]
# (as written, the string it must read as after fixing, written form after fixing)
VALUES = [
    ("data-team", "data-team", "data-team"),
    ('"Data Team"', "Data Team", '"Data Team"'),
    ("1.10", "1.10", '"1.10"'),
    ("yes", "yes", '"yes"'),
    ("2024-01-31", "2024-01-31", '"2024-01-31"'),
]


@dataclass
class Generated:
    raw: bytes  # the file as generated
    expected: bytes  # the file after --fix
    values: dict  # the frontmatter values after --fix


@st.composite
def skill_files(draw) -> Generated:
    desc = draw(st.sampled_from(DESCRIPTIONS))
    pad = st.sampled_from(["", " ", "  ", "\t", " \t "])
    style = draw(st.sampled_from(["plain", "double", "single", "literal", "folded"]))
    if style == "plain":
        d_bad = d_good = [f"description: {desc}"]
    elif style in ("double", "single"):
        q = '"' if style == "double" else "'"
        d_bad = [f"description: {q}{draw(pad)}{desc}{draw(pad)}{q}"]
        d_good = [f"description: {q}{desc}{q}"]
    elif style == "literal":
        d_bad, d_good = ["description: |", f"  {desc}"], ["description: |-", f"  {desc}"]
    else:
        head, tail = desc.split(". ", 1)
        d_bad = ["description: >", f"  {head}.", f"  {tail}"]
        d_good = ["description: >-", f"  {head}.", f"  {tail}"]
    entries: list[tuple[str, list[str], list[str]]] = [
        ("name", ["name: pdf-tools"], ["name: pdf-tools"]),
        ("description", d_bad, d_good),
    ]
    values: dict = {"name": "pdf-tools", "description": desc}
    if draw(st.booleans()):
        tools = draw(st.lists(st.sampled_from(TOOLS), min_size=1, max_size=4, unique=True))
        form = draw(st.sampled_from(["spaced", "comma", "quoted-comma", "block", "flow"]))
        sep = draw(st.sampled_from([", ", ","]))
        good = [f"allowed-tools: {' '.join(tools)}"]
        if form == "spaced":
            bad = good
        elif form == "comma":
            bad = [f"allowed-tools: {sep.join(tools)}"]
        elif form == "quoted-comma":
            bad = [f'allowed-tools: "{sep.join(tools)}"']
            good = [f'allowed-tools: "{" ".join(tools)}"']
        elif form == "block":
            bad = ["allowed-tools:", *(f"  - {t}" for t in tools)]
        else:
            bad = ["allowed-tools: [" + ", ".join(f'"{t}"' for t in tools) + "]"]
        entries.append(("allowed-tools", bad, good))
        values["allowed-tools"] = " ".join(tools)
    meta_keys = draw(st.lists(st.sampled_from(META_KEYS), max_size=3, unique=True))
    unknown = draw(st.lists(st.sampled_from(UNKNOWN_KEYS), max_size=3, unique=True))
    indent = " " * draw(st.sampled_from([2, 4]))
    meta_values = {k: draw(st.sampled_from(VALUES)) for k in meta_keys}
    unknown_values = {k: draw(st.sampled_from(VALUES)) for k in unknown}
    if meta_keys:
        bad = ["metadata:", *(f"{indent}{k}: {v[0]}" for k, v in meta_values.items())]
        entries.append(("metadata", bad, bad))
    for key, value in unknown_values.items():
        entries.append((key, [f"{key}: {value[0]}"], []))
    order = draw(st.permutations(range(len(entries))))
    entries = [entries[i] for i in order]
    if meta_keys or unknown:
        values["metadata"] = {k: v[1] for k, v in {**meta_values, **unknown_values}.items()}
    moved = [f"{n}: {unknown_values[n][2]}" for n, _b, _g in entries if n in unknown_values]
    good_lines: list[str] = []
    for name, _bad, good in entries:
        good_lines.extend(good)
        if name == "metadata":
            good_lines = [
                *good_lines[: -len(good)],
                "metadata:",
                *(f"{indent}{k}: {v[2]}" for k, v in meta_values.items()),
                *(indent + line for line in moved),
            ]
    if moved and not meta_keys:
        good_lines += ["metadata:", *("  " + line for line in moved)]
    bad_lines = [line for _name, bad, _good in entries for line in bad]
    body = ["# Steps", "", "Extract the text — résumé ✓."]
    open_ws, close_ws = draw(pad), draw(pad)
    bad_all = [f"---{open_ws}", *bad_lines, f"---{close_ws}", *body]
    good_all = ["---", *good_lines, "---", *body]
    eols = draw(
        st.lists(
            st.sampled_from(["\n", "\r\n", "\r"]),
            min_size=len(bad_all) - 1,
            max_size=len(bad_all) - 1,
        )
    )
    for i in range(len(eols) - 1):  # CR, then an empty line ending in LF, would read as CRLF
        if eols[i] == "\r" and not bad_all[i + 1] and eols[i + 1].startswith("\n"):
            eols[i] = "\r\n"
    final = draw(st.sampled_from(["", "\n", "\r\n"]))
    text = "".join(line + eol for line, eol in zip(bad_all, [*eols, final], strict=True))
    bom = b"\xef\xbb\xbf" if draw(st.booleans()) else b""
    expected = "\n".join(good_all) + ("\n" if final else "")
    return Generated(bom + text.encode(), expected.encode(), values)


def _lines_bytes(raw: bytes, first: int, last: int) -> tuple[int, int]:
    """Byte range of lines first..last (1-based, inclusive, with their line breaks)."""
    starts = [0] + [m.end() for m in re.finditer(rb"\r\n|\r|\n", raw)]
    starts.append(len(raw))
    return starts[first - 1], starts[min(last, len(starts) - 1)]


def _check_fix_is_local(raw: bytes, diag) -> None:
    fix = diag.fix
    assert fix.path == diag.path and 0 <= fix.start <= fix.end <= len(raw)
    if diag.code == "SK901":
        assert (fix.start, fix.end, fix.replacement) == (0, 3, b"")
    elif diag.code == "SK902":  # every line break becomes LF, nothing else changes
        new = raw[: fix.start] + fix.replacement + raw[fix.end :]
        assert new == raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    elif diag.code == "SK108":  # lines move inside the frontmatter
        body = parse_document(diag.path, raw).frontmatter
        low, high = _lines_bytes(raw, 2, body.close_line - 1)
        assert low <= fix.start and fix.end <= high
    else:  # inside the lines of the value the finding points at
        low, high = _lines_bytes(raw, diag.line, diag.end_line)
        if diag.code == "SK403":  # a block list is rewritten from its key's line
            low = _lines_bytes(raw, max(1, diag.line - 1), diag.line)[0]
        assert low <= fix.start and fix.end <= high, (diag.code, raw[fix.start : fix.end])


def _round_by_round(root: Path, path: Path) -> bytes:
    """Fix like --fix does, one round at a time through the API, checking every fix."""
    from skillcheck.engine.config import build_settings
    from skillcheck.engine.lint import lint
    from skillcheck.fix import apply_fixes
    from skillcheck.settings import Config

    config = build_settings(Config())
    for _ in range(8):
        raw = path.read_bytes()
        result = lint([root], config)
        fixable = [d for d in result.diagnostics if d.fix is not None]
        for diag in fixable:
            assert diag.code in FIXED_RULES
            _check_fix_is_local(raw, diag)
        if not fixable:
            return raw
        new, applied = apply_fixes(raw, (d.fix for d in fixable))
        assert applied and new != raw
        path.write_bytes(new)
    raise AssertionError("fixes did not converge")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(skill_files())
def test_fix_gives_exactly_the_expected_file(case: Generated) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = _skill_md(root, case.raw)
        result = _fix(root, "--format", "json")
        fixed = path.read_bytes()
        assert fixed == case.expected
        report = json.loads(result.stdout)
        assert not FIXED_RULES & {d["code"] for d in report["diagnostics"]}
        doc = parse_document(path, fixed)
        assert doc.frontmatter.values == case.values
        # a second --fix is a no-op: nothing to do, and the file is not rewritten
        before = path.stat()
        again = _fix(root)
        after = path.stat()
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
        assert path.read_bytes() == fixed and "Fixed" not in again.stdout
        # the same result, one round at a time, with every fix local to its finding
        path.write_bytes(case.raw)
        assert _round_by_round(root, path) == case.expected


@settings(max_examples=25, deadline=None)
@given(skill_files())
def test_diff_matches_what_fix_writes(case: Generated) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = _skill_md(root, case.raw)
        result = invoke("lint", "--isolated", "--diff", ".", cwd=root)
        assert path.read_bytes() == case.raw  # nothing written
        assert result.exit_code == (1 if case.raw != case.expected else 0)
        added = [
            line[1:]
            for line in result.stdout.splitlines()
            if line.startswith("+") and line[1:3] != "++"
        ]
        expected_lines = case.expected.decode().splitlines()
        assert all(line in expected_lines for line in added)


@pytest.mark.parametrize(
    "extra",
    [
        "argument-hint: FILE\n",
        "disable-model-invocation: true\n",
        "user-invocable: false\n",
        "model: opus\n",
        "context: fork\n",
        "agent: Explore\n",
        "hooks:\n  PreToolUse: []\n",
        "version: 1.0.0\n",
        "effort: high\n",
    ],
)
def test_keys_a_runtime_acts_on_are_never_advised_or_moved_under_metadata(
    tmp_path: Path, extra: str
) -> None:
    path = write_skill(
        tmp_path, "pdf-tools", frontmatter=f"name: pdf-tools\ndescription: {DESC}\n{extra}"
    )
    before = path.joinpath("SKILL.md").read_bytes()
    _code, report = lint_json("--isolated", "--select", "SK108", ".", cwd=tmp_path)
    (diag,) = report["diagnostics"]
    assert "; move it under 'metadata'" not in diag["message"]
    assert "do not move it under 'metadata'" in diag["message"]
    assert "--target claude-code" in diag["message"]
    assert diag["fix"] is None and diag["severity"] == "warning"
    invoke("lint", "--isolated", "--fix", "--select", "SK108", ".", cwd=tmp_path)
    assert path.joinpath("SKILL.md").read_bytes() == before
    _code, report = lint_json("--isolated", "--target", "claude-code", ".", cwd=tmp_path)
    assert [d for d in report["diagnostics"] if d["code"] == "SK108"] == []


@pytest.mark.parametrize(
    ("value", "severity"),
    [
        ("\n  - Bash(npx expo *)\n  - Read\n", "info"),
        ("[Read, 'Azure MCP/documentation']\n", "info"),
        ("Bash(npx expo *), Read\n", "info"),
        ("Read, Grep,Bash(git add, commit)\n", "info"),
        ("Read, Bash(git:*)\n", "warning"),
    ],
)
def test_allowed_tools_with_a_space_inside_a_tool_are_never_joined_with_spaces(
    tmp_path: Path, value: str, severity: str
) -> None:
    front = f"name: pdf-tools\ndescription: {DESC}\nallowed-tools: {value}"
    path = write_skill(tmp_path, "pdf-tools", frontmatter=front)
    before = path.joinpath("SKILL.md").read_bytes()
    _code, report = lint_json("--isolated", "--select", "SK403", ".", cwd=tmp_path)
    (diag,) = report["diagnostics"]
    assert diag["severity"] == severity
    invoke("lint", "--isolated", "--fix", "--select", "SK403", ".", cwd=tmp_path)
    after = path.joinpath("SKILL.md").read_bytes()
    if severity == "info":
        assert "would split; keep this form" in diag["message"] and diag["fix"] is None
        assert after == before
    else:
        assert b"allowed-tools: Read Bash(git:*)\n" in after


# --- a SKILL.md swapped for a link while --fix runs (issue 29, item 5) --------------------------


def _fixable(tmp_path: Path) -> tuple[Path, Path, bytes]:
    """A skill whose SKILL.md has a fixable finding (CRLF), and a file outside the tree."""
    skill = write_skill(tmp_path / "skills", "pdf-tools")
    md = skill / "SKILL.md"
    md.write_bytes(md.read_bytes().replace(b"\n", b"\r\n"))
    outside = tmp_path / "outside.md"
    return skill, outside, md.read_bytes()


def _swap_for_link(md: Path, outside: Path) -> None:
    outside.write_bytes(md.read_bytes())  # the attacker's copy: the same bytes as were read
    md.unlink()
    md.symlink_to(outside)


@pytest.mark.parametrize("when", ["before-the-read", "between-the-read-and-the-write"])
def test_fix_never_writes_through_a_link_swapped_in_meanwhile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    from skillcheck import fix
    from skillcheck.engine.config import build_settings
    from skillcheck.engine.lint import lint
    from skillcheck.settings import Config

    skill, outside, original = _fixable(tmp_path)
    md = skill / "SKILL.md"
    settings = build_settings(Config(values={}))
    result = lint([tmp_path / "skills"], settings, keep=True)
    plans = fix.plan_fixes(result, settings)
    assert [p.path for p in plans] == [md]
    if when == "before-the-read":
        _swap_for_link(md, outside)
    else:
        real_write = fix.write_atomic

        def swap_then_write(path, data, **kwargs):
            _swap_for_link(md, outside)
            return real_write(path, data, **kwargs)

        monkeypatch.setattr(fix, "write_atomic", swap_then_write)
    failures = fix.write_plans(plans)
    assert outside.read_bytes() == original  # the file outside the tree is never written
    assert [path for path, _reason in failures] == [md]
    assert "run --fix again" in failures[0][1] or "symbolic link" in failures[0][1]
