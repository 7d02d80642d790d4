"""Issue 27: classes of false or unreadable findings seen on repositories nobody tuned on,
each from a minimal skill of ours."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import invoke, lint_json, write_skill

DESC = "description: Formats reports. Use when the user asks for a report.\n"


def _codes(report: dict, code: str) -> list[dict]:
    return [d for d in report["diagnostics"] if d["code"] == code]


# --- item 9: a missing target is reported once per file --------------------------------------


def test_a_path_named_many_times_is_one_finding_with_its_other_places(tmp_path: Path) -> None:
    body = "\nRun scripts/gone.py, then scripts/gone.py again.\n\nAnd `scripts/gone.py`.\n"
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body)
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    found = _codes(report, "SK507")
    assert len(found) == 1
    assert found[0]["message"].endswith("(and 2 more places in this file)")
    assert (found[0]["line"], found[0]["column"]) == (6, 5)
    assert [(r["line"], r["column"]) for r in found[0]["related"]] == [(6, 27), (8, 6)]


def test_sarif_lists_the_other_places_as_related_locations(tmp_path: Path) -> None:
    body = "\nRun scripts/gone.py and scripts/gone.py.\n"
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body)
    result = invoke("lint", "--isolated", "--format", "sarif", ".", cwd=tmp_path)
    results = json.loads(result.stdout)["runs"][0]["results"]
    sk507 = [r for r in results if r["ruleId"] == "SK507"]
    assert len(sk507) == 1
    related = sk507[0]["relatedLocations"]
    assert [r["physicalLocation"]["region"]["startColumn"] for r in related] == [25]


def test_a_long_line_naming_one_path_thousands_of_times_gives_one_finding(
    tmp_path: Path,
) -> None:
    body = "\n" + " ".join(["scripts/gone.py"] * 5000) + "\n"
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body)
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    found = _codes(report, "SK507")
    assert len(found) == 1 and len(found[0]["related"]) == 4999


def test_different_targets_and_different_files_stay_apart(tmp_path: Path) -> None:
    body = "\nRun scripts/one.py and scripts/two.py. See [guide](references/guide.md).\n"
    guide = "Run scripts/one.py.\n"
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body, {"references/guide.md": guide})
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    found = _codes(report, "SK507")
    assert len(found) == 3
    assert all(d["related"] == [] for d in found)


def test_links_into_one_missing_folder_are_one_finding(tmp_path: Path) -> None:
    body = "\n" + "".join(f"- [case {n}](references/case/c{n}.md)\n" for n in range(5))
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body, {"references/other.md": "x\n"})
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    found = _codes(report, "SK501")
    assert len(found) == 1
    assert "'references/case/'" in found[0]["message"]
    assert found[0]["message"].endswith("(and 4 more places in this file)")
    assert found[0]["severity"] == "error"


# --- item 1: a SKILL.md that is not a skill ----------------------------------------------------

FRAGMENT = "## Extra steps for the enterprise flavor\n\nSee [setup](references/setup.md).\n"


def test_a_build_time_overlay_of_a_real_skill_is_one_warning_naming_exclude(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    write_skill(tmp_path / "skills", "fmt", f"name: fmt\n{DESC}")
    overlay = tmp_path / "skill-flavors" / "enterprise" / "fmt"
    overlay.mkdir(parents=True)
    (overlay / "SKILL.md").write_text(FRAGMENT, encoding="utf-8")
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    about = [d for d in report["diagnostics"] if "skill-flavors" in d["path"]]
    assert [(d["code"], d["severity"]) for d in about] == [("SK103", "warning")]
    assert "exclude" in about[0]["message"] and "skills/fmt" in about[0]["message"]


def test_a_skill_md_without_frontmatter_inside_another_skill_is_a_fragment(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    outer = write_skill(
        tmp_path, "fmt", f"name: fmt\n{DESC}", files={"rules/R1/SKILL.md": FRAGMENT}
    )
    _code, report = lint_json("--isolated", str(outer / "rules" / "R1"), cwd=tmp_path)
    assert [(d["code"], d["severity"]) for d in report["diagnostics"]] == [("SK103", "warning")]


def test_a_lone_skill_md_without_frontmatter_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    lone = tmp_path / "skills" / "fmt"
    lone.mkdir(parents=True)
    (lone / "SKILL.md").write_text(FRAGMENT, encoding="utf-8")
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    found = _codes(report, "SK103")
    assert [d["severity"] for d in found] == ["error"]
    assert _codes(report, "SK501")  # the rest of the skill is checked as before


# --- item 3: a link that leaves the skill to nothing is broken --------------------------------


def test_a_parent_link_to_nothing_is_a_broken_link_error(tmp_path: Path) -> None:
    body = "\nSee [query](../query/SKILL.md) and [style](../shared/style.md).\n"
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body)
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "style.md").write_text("# Style\n", encoding="utf-8")
    _code, report = lint_json("--isolated", "fmt", cwd=tmp_path)
    broken = _codes(report, "SK501")
    assert [(d["severity"], d["column"]) for d in broken] == [("error", 13)]
    assert "works" not in broken[0]["message"]
    assert "does not exist there either" in broken[0]["message"]
    outside = _codes(report, "SK502")
    assert [(d["severity"], d["column"]) for d in outside] == [("warning", 44)]


# --- item 6: SK709 says when `$N` is rewritten, with advice for the snippet's language -------


def _sk709(tmp_path: Path, body: str) -> list[dict]:
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body)
    _code, report = lint_json(
        "--isolated", "--target", "claude-code", "--select", "SK709", ".", cwd=tmp_path
    )
    return report["diagnostics"]


def test_sk709_says_a_missing_argument_stays_as_written(tmp_path: Path) -> None:
    [diag] = _sk709(tmp_path, "\nBudget: $1,000 a month.\n")
    assert "nothing when absent" not in diag["message"]
    assert "at least 2 arguments" in diag["message"]
    assert "stays as written" in diag["message"]


def test_sk709_advice_for_sql_is_not_a_shell_brace(tmp_path: Path) -> None:
    body = "\n```sql\nSELECT * FROM users WHERE id = $1;\n```\n"
    [diag] = _sk709(tmp_path, body)
    assert "${1}" not in diag["message"]
    assert "references/" in diag["message"]


def test_sk709_advice_for_shell_is_the_brace_form(tmp_path: Path) -> None:
    body = '\n```bash\necho "first: $1"\n```\n'
    [diag] = _sk709(tmp_path, body)
    assert "'${1}'" in diag["message"]


# --- item 7: SK902 for claude-api -------------------------------------------------------------


def _sk902(tmp_path: Path, raw: bytes) -> list[tuple[str, str]]:
    skill = tmp_path / "fmt"
    skill.mkdir(exist_ok=True)
    (skill / "SKILL.md").write_bytes(raw)
    _code, report = lint_json(
        "--isolated", "--target", "claude-api", "--select", "SK902", ".", cwd=tmp_path
    )
    return [(d["code"], d["severity"]) for d in report["diagnostics"]]


def test_sk902_one_crlf_in_the_body_under_an_lf_frontmatter_is_a_warning(tmp_path: Path) -> None:
    raw = f"---\nname: fmt\n{DESC}---\n\n# Steps\r\n\nDo it.\n".encode()
    assert _sk902(tmp_path, raw) == [("SK902", "warning")]


def test_sk902_crlf_around_the_frontmatter_is_still_an_error(tmp_path: Path) -> None:
    raw = f"---\r\nname: fmt\r\n{DESC}---\r\n\r\n# Steps\r\n".encode()
    assert _sk902(tmp_path, raw) == [("SK902", "error")]


# --- item 2: a skill at a repository's root -----------------------------------------------------


def test_sk206_at_a_repository_root_names_the_folder_it_is_installed_into(
    tmp_path: Path,
) -> None:
    checkout = write_skill(tmp_path, "fmt-skill-main", f"name: fmt\n{DESC}")
    (checkout / ".git").mkdir()
    _code, report = lint_json("--isolated", ".", cwd=checkout)
    [diag] = _codes(report, "SK206")
    assert diag["severity"] == "info"
    assert "installed" in diag["message"] and "'fmt'" in diag["message"]


def test_sk206_inside_a_repository_is_still_an_error(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_skill(tmp_path / "skills", "fmt-tools", f"name: fmt\n{DESC}")
    _code, report = lint_json("--isolated", ".", cwd=tmp_path)
    assert [d["severity"] for d in _codes(report, "SK206")] == ["error"]


# --- item 5: SK706 / SK708 --------------------------------------------------------------------

SHEBANG_PY = "#!/usr/bin/env python3\n'''Usage: ./convert.py INPUT'''\nprint('ok')\n"


def test_sk706_a_script_run_through_python_is_not_reported(tmp_path: Path) -> None:
    body = "\nRun `python ./scripts/convert.py in.csv`.\n\nUsage: `./scripts/convert.py in.csv`\n"
    skill = write_skill(
        tmp_path, "fmt", f"name: fmt\n{DESC}", body, {"scripts/convert.py": SHEBANG_PY}
    )
    (skill / "scripts" / "convert.py").chmod(0o644)
    _code, report = lint_json("--isolated", "--select", "SK706", ".", cwd=tmp_path)
    assert report["diagnostics"] == []


def test_sk706_a_script_only_run_directly_is_still_reported(tmp_path: Path) -> None:
    body = "\nRun `./scripts/convert.py in.csv`.\n"
    skill = write_skill(
        tmp_path, "fmt", f"name: fmt\n{DESC}", body, {"scripts/convert.py": SHEBANG_PY}
    )
    (skill / "scripts" / "convert.py").chmod(0o644)
    _code, report = lint_json("--isolated", "--select", "SK706", ".", cwd=tmp_path)
    assert [d["code"] for d in report["diagnostics"]] == ["SK706"]


def test_sk708_input_only_in_an_explicit_interactive_mode(tmp_path: Path) -> None:
    script = (
        "import sys\n\n"
        "def main(mode):\n"
        '    if mode == "interactive":\n'
        '        name = input("Name? ")\n'
        "    else:\n"
        "        name = sys.argv[2]\n"
        "    print(name)\n"
    )
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", files={"scripts/ask.py": script})
    _code, report = lint_json("--isolated", "--select", "SK708", ".", cwd=tmp_path)
    assert report["diagnostics"] == []
    (tmp_path / "fmt" / "scripts" / "ask.py").write_text(
        'name = input("Name? ")\nprint(name)\n', encoding="utf-8"
    )
    _code, report = lint_json("--isolated", "--select", "SK708", ".", cwd=tmp_path)
    assert [d["code"] for d in report["diagnostics"]] == ["SK708"]


# --- item 5: SK305 on quoted user speech --------------------------------------------------------


def _sk305(tmp_path: Path, description: str) -> list[dict]:
    write_skill(tmp_path, "fmt", f"name: fmt\ndescription: {description}\n")
    _code, report = lint_json("--isolated", "--select", "SK305", ".", cwd=tmp_path)
    return report["diagnostics"]


def test_sk305_words_that_continue_a_quoted_request_are_the_users(tmp_path: Path) -> None:
    said = 'Reviews code. Use when the user says "critically review" my code.'
    assert _sk305(tmp_path, said) == []
    asked = "Plans projects. Use when the user asks 'what should I build' or wants ideas."
    assert _sk305(tmp_path, asked) == []


def test_sk305_the_description_own_first_person_is_still_reported(tmp_path: Path) -> None:
    mine = 'Reviews code. Use when the user says "review". I check my code too.'
    assert [d["code"] for d in _sk305(tmp_path, mine)] == ["SK305"]


# --- item 5: SK506 advice for a misnamed manifest ----------------------------------------------


def test_sk506_a_misnamed_requirements_file_is_told_to_be_renamed(tmp_path: Path) -> None:
    body = "\nRun `python scripts/run.py`.\n"
    files = {"scripts/run.py": "print(1)\n", "scripts/requirement.txt": "requests\n"}
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body, files)
    _code, report = lint_json("--isolated", "--select", "SK506", ".", cwd=tmp_path)
    [diag] = report["diagnostics"]
    assert "rename it to 'requirements.txt'" in diag["message"]
    assert "delete it" not in diag["message"]


# --- item 5: SK802 on descriptions that route to each other -------------------------------------


def test_sk802_descriptions_that_name_each_other_are_set_apart(tmp_path: Path) -> None:
    same = "Extracts text and tables from PDF files and scanned PDF documents."
    write_skill(tmp_path, "pdf-read", f"name: pdf-read\ndescription: {same}\n")
    write_skill(tmp_path, "pdf-scan", f"name: pdf-scan\ndescription: {same} Say so.\n")
    _code, report = lint_json("--isolated", "--select", "SK802", ".", cwd=tmp_path)
    assert [d["code"] for d in report["diagnostics"]] == ["SK802"]
    routed = f"{same} For scanned pages use pdf-scan instead."
    write_skill(tmp_path, "pdf-read", f"name: pdf-read\ndescription: {routed}\n")
    _code, report = lint_json("--isolated", "--select", "SK802", ".", cwd=tmp_path)
    assert report["diagnostics"] == []


def test_a_skill_without_frontmatter_below_a_collection_skill_md_is_still_an_error(
    tmp_path: Path,
) -> None:
    # held-out finding: `skills/SKILL.md` beside `skills/<name>/` is the collection's own file
    (tmp_path / ".git").mkdir()
    write_skill(tmp_path, "skills", f"name: skills\n{DESC}")
    lone = tmp_path / "skills" / "fmt"
    lone.mkdir(parents=True)
    (lone / "SKILL.md").write_text("version: 1.0.0\n# Fmt\n\nFormats.\n", encoding="utf-8")
    _code, report = lint_json("--isolated", str(lone), cwd=tmp_path)
    assert [d["severity"] for d in _codes(report, "SK103")] == ["error"]


def test_sk703_the_checkout_of_a_repository_root_skill_is_not_junk(tmp_path: Path) -> None:
    checkout = write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}")
    (checkout / ".git").mkdir()
    (checkout / "scripts" / ".git").mkdir(parents=True)
    _code, report = lint_json("--isolated", "--select", "SK703", ".", cwd=checkout)
    assert [d["path"] for d in report["diagnostics"]] == ["scripts/.git"]


# --- item 4: SK507 / SK512 on examples ----------------------------------------------------------


def _sk(tmp_path: Path, code: str, body: str, files: dict[str, str] | None = None) -> list[str]:
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body, files)
    _code, report = lint_json("--isolated", "--select", code, ".", cwd=tmp_path)
    return [d["message"].split(" ", 1)[0] for d in report["diagnostics"]]


def test_sk507_a_file_of_another_skill_named_with_that_skill(tmp_path: Path) -> None:
    body = (
        "\nFill the form with the `pdf` skill's `scripts/fill_form.py`.\n"
        "The brand-guidelines skill keeps its palette in references/colors.md.\n"
        "Another skill may hold `references/other.md`.\n"
        "Then run `scripts/gone.py`; the `fmt` skill's `scripts/mine.py` too.\n"
    )
    assert _sk(tmp_path, "SK507", body) == ["'scripts/gone.py'", "'scripts/mine.py'"]


def test_sk507_a_path_through_a_folder_the_user_makes(tmp_path: Path) -> None:
    body = (
        "\nCreate a virtualenv, then `scripts/.venv/bin/python scripts/run.py`.\n"
        "Or `scripts/node_modules/.bin/tsx scripts/run.ts`.\n"
    )
    files = {"scripts/run.py": "print(1)\n", "scripts/run.ts": "1\n"}
    assert _sk(tmp_path, "SK507", body, files) == []


def test_sk507_advice_for_the_readers_own_skill_in_a_guide_on_writing_skills(
    tmp_path: Path,
) -> None:
    body = (
        "\nKeep SKILL.md short. Move long material into `references/migration.md` and link"
        " it.\nPut helper code in your `scripts/validate.py`.\n"
        "Run `scripts/gone.py` to create the report.\n"
    )
    assert _sk(tmp_path, "SK507", body) == ["'scripts/gone.py'"]


def test_sk507_advice_words_outside_a_guide_on_writing_skills_are_still_checked(
    tmp_path: Path,
) -> None:
    body = "\nMove the output into `references/migration.md`.\n"
    assert _sk(tmp_path, "SK507", body) == ["'references/migration.md'"]


def test_sk512_a_jsx_component_is_not_a_link(tmp_path: Path) -> None:
    body = (
        '\nEmbed it with <Video src="/video.mp4" /> in the page.\n\nSee <a href="/docs/x">x</a>.\n'
    )
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body)
    _code, report = lint_json("--isolated", "--select", "SK512", ".", cwd=tmp_path)
    [found] = report["diagnostics"]
    assert "'/docs/x' is relative" in found["message"] and found["line"] == 8


def test_sk512_links_of_a_sample_document_are_not_reported(tmp_path: Path) -> None:
    body = "\nWrite the page from [the template](assets/page.md); see [guide](references/g.md).\n"
    files = {
        "assets/page.md": "# Home\n\n[About](/about) and [Docs](/docs/intro).\n",
        "references/g.md": "# Guide\n\n[OAuth](/docs/oauth).\n",
    }
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body, files)
    _code, report = lint_json("--isolated", "--select", "SK512", ".", cwd=tmp_path)
    assert [d["path"] for d in report["diagnostics"]] == ["fmt/references/g.md"]


# --- recall: machine-local paths in extension-less scripts and .mjs templates -----------------


def test_sk508_reads_extensionless_scripts_and_mjs_templates(tmp_path: Path) -> None:
    body = "\nRun `scripts/sync` or serve [the template](assets/server.mjs).\n"
    files = {
        "scripts/sync": "#!/bin/sh\ncp /Users/alice/notes.txt .\n",
        "scripts/NOTES": "Written on /Users/alice/laptop.\n",  # not a script: no #! line
        "assets/server.mjs": "import x from '/home/bob/lib/x.mjs';\n",
    }
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body, files)
    _code, report = lint_json("--isolated", "--select", "SK508", ".", cwd=tmp_path)
    found = sorted((d["path"], d["line"]) for d in report["diagnostics"])
    assert found == [("fmt/assets/server.mjs", 1), ("fmt/scripts/sync", 2)]


# --- recall: SK112 on null metadata values ---------------------------------------------------


def test_sk112_reports_null_metadata_values(tmp_path: Path) -> None:
    front = f"name: fmt\n{DESC}metadata:\n  author: null\n  owner: ~\n  team:\n  version: '1'\n"
    write_skill(tmp_path, "fmt", front)
    _code, report = lint_json("--isolated", "--select", "SK112", ".", cwd=tmp_path)
    found = [
        (d["line"], d["severity"], d["message"].split(" is ")[0]) for d in report["diagnostics"]
    ]
    assert found == [
        (5, "warning", "metadata.author"),
        (6, "warning", "metadata.owner"),
        (7, "warning", "metadata.team"),
    ]
    assert "empty" in report["diagnostics"][2]["message"]


# --- recall: Cargo's target/ is junk (SK703) and is not packed ---------------------------------


def test_sk703_reports_cargo_build_output_beside_a_cargo_toml(tmp_path: Path) -> None:
    files = {
        "scripts/tool/Cargo.toml": "[package]\nname = 'tool'\n",
        "scripts/tool/src/main.rs": "fn main() {}\n",
        "scripts/tool/target/CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n",
        "scripts/tool/target/debug/tool": "binary\n",
        # a folder named target that no Cargo.toml builds is content
        "references/target/notes.md": "# Notes\n",
    }
    body = "\nBuild with `cargo build` in scripts/tool; see [notes](references/target/notes.md).\n"
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body, files)
    _code, report = lint_json("--isolated", "--select", "SK703", ".", cwd=tmp_path)
    assert [(d["path"], d["message"].split(" is ")[0]) for d in report["diagnostics"]] == [
        ("fmt/scripts/tool/target", "scripts/tool/target/")
    ]
    result = invoke("pack", "--isolated", "-o", str(tmp_path / "out.tar.gz"), "fmt", cwd=tmp_path)
    assert result.exit_code == 0, result.output
    import tarfile

    with tarfile.open(tmp_path / "out.tar.gz") as tar:
        names = tar.getnames()
    assert not any("/target/" in n and "scripts" in n for n in names)
    assert any(n.endswith("references/target/notes.md") for n in names)


def test_sk507_a_path_right_after_its_owner_or_a_shape_is_not_the_skills(tmp_path: Path) -> None:
    body = (
        "\nThe script ships under the plugin's `scripts/interface/`.\n"
        "Switch to `build-server` `references/auth.md` for the provider.\n"
        "Keep depth at `references/category/file.md`.\n"
        "Run `fmt` `scripts/gone.py`.\n"
    )
    assert _sk(tmp_path, "SK507", body) == ["'scripts/gone.py'"]


# --- tuning half: SK715 on an arrow of a tree diagram ------------------------------------------


def test_sk715_an_arrow_in_a_tree_diagram_is_not_a_redirect(tmp_path: Path) -> None:
    body = "\nThe layout:\n\n- apps/api/CLAUDE.md -> AGENTS.md\n- then `echo rule > AGENTS.md`\n"
    write_skill(tmp_path, "fmt", f"name: fmt\n{DESC}", body)
    _code, report = lint_json("--isolated", "--select", "SK715", ".", cwd=tmp_path)
    assert [d["line"] for d in report["diagnostics"]] == [9]
