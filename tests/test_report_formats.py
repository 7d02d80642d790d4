"""The CI formats (SARIF, GitHub annotations, JUnit) and what no skill content may do to any
format: break its structure, inject a workflow command, or put raw escapes on a terminal.

Hostile skills (newlines, ``::``, ``%``, ``,``, ``:``, ANSI escapes in directory names,
names and descriptions) are built in tmp_path: such names must never be committed.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import unquote

import pytest
from conftest import FIXTURES, invoke, run_skillcheck, write_skill
from hypothesis import given, settings
from hypothesis import strategies as st
from test_fixtures import _build as build_case

from skillcheck.engine.lint import LintResult
from skillcheck.report import ReportOptions, render, safe
from skillcheck.rules import all_rules
from skillcheck.source.skill import Diagnostic, Severity, Skill, SkillSummary

SCHEMA_PATH = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "ad6db49878699b091f3eeb765b6e29e92a34bad4da88664d000c923b549c3a25"
CASES = sorted(p for p in (FIXTURES / "invalid").iterdir() if p.is_dir())
LEVELS = {"error": "error", "warning": "warning", "info": "note"}
COMMANDS = {"error": "error", "warning": "warning", "info": "notice"}
# RFC 3986 characters; '%' only as the start of an escape
URI = re.compile(r"^(?:[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$")


# --- helpers ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sarif_validator():
    from jsonschema import Draft7Validator

    schema = json.loads(SCHEMA_PATH.read_bytes())
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def _args(case: Path) -> list[str]:
    config = case / "skillcheck.toml"
    return ["--config", str(config)] if config.exists() else ["--isolated"]


def _lint(fmt: str, *args: str, cwd: Path) -> tuple[int, str]:
    result = invoke("lint", "--format", fmt, *args, cwd=cwd)
    return result.exit_code, result.stdout


def _root(cwd: Path) -> Path:
    """Where SARIF and GitHub paths start: the git work tree holding cwd, else cwd."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return cwd


def _check_sarif(document: dict, validator, report: dict, cwd: Path) -> None:
    """Valid SARIF 2.1.0, and the same findings as the JSON report, at the same places."""
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])
    run = document["runs"][0]
    root = _root(cwd)
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == root.as_uri().rstrip("/") + "/"
    rules = run["tool"]["driver"]["rules"]
    got = []
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        uri = location["artifactLocation"]["uri"]
        assert URI.match(uri), uri
        assert location["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        region = location.get("region", {})
        got.append(
            (
                result["ruleId"],
                result["level"],
                unquote(uri, errors="surrogateescape").rstrip("/"),
                region.get("startLine"),
                region.get("startColumn"),
            )
        )
    expected = []
    for diag in report["diagnostics"]:
        relative = os.path.relpath(os.path.abspath(cwd / diag["path"]), root)
        is_dir = os.path.isdir(cwd / diag["path"])
        expected.append(
            (
                diag["code"],
                LEVELS[diag["severity"]],
                "" if relative == "." else relative,
                None if is_dir else diag["line"],
                None if is_dir else diag["column"],
            )
        )
    assert sorted(got) == sorted(expected)


def _unescape(text: str, property_: bool) -> str:
    """The runner's own unescaping (actions/runner ActionCommand.cs), in its order."""
    pairs = [("%0D", "\r"), ("%0A", "\n")]
    if property_:
        pairs += [("%3A", ":"), ("%2C", ",")]
    for escaped, char in [*pairs, ("%25", "%")]:
        text = text.replace(escaped, char)
    return text


def _parse_command(line: str) -> tuple[str, dict[str, str], str]:
    """Parse one line as the GitHub runner does (ActionCommand.TryParseV2)."""
    line = line.lstrip()
    assert line.startswith("::"), line
    end = line.index("::", 2)
    name, _, properties = line[2:end].partition(" ")
    props = {}
    for item in properties.strip().split(","):
        key, sep, value = item.partition("=")
        if key and sep and value:
            props[key] = _unescape(value, property_=True)
    return name, props, _unescape(line[end + 2 :], property_=False)


HOSTILE_DIRS = [
    "evil\n::error file=owned.md,line=1::injected",
    "per%25cent%0A,comma:colon::x",
    "ansi\x1b[31mred\x1b]0;title\x07",
    "carriage\r\nreturn",
]
HOSTILE_DESCRIPTION = (
    r'"Use when: a %0A b, c \e[2J\e[31m :: ::warning file=x,line=1::fake\n'
    r'::error::second line\r\n%25 end \x9b1m"'
)


def _hostile_tree(root: Path) -> Path:
    """Skills whose directory names, names and descriptions attack every format."""
    (root / ".git").mkdir()  # pin the repository root to the tree itself
    for directory in HOSTILE_DIRS:
        write_skill(
            root,
            directory,
            frontmatter=f'name: "x::y,%\\e[1m"\ndescription: {HOSTILE_DESCRIPTION}\n',
            files={"notes\n::error::n.md": "x\n", "a,b:c%.md": "y\n"},
        )
    write_skill(root, "plain-skill", frontmatter="name: plain-skill\ndescription: <b>hi</b>\n")
    return root


# --- SARIF --------------------------------------------------------------------------------


def test_vendored_sarif_schema_is_the_official_file() -> None:
    assert hashlib.sha256(SCHEMA_PATH.read_bytes()).hexdigest() == SCHEMA_SHA256


@pytest.mark.parametrize(
    "case", [*CASES, FIXTURES / "valid"], ids=[c.name for c in CASES] + ["valid"]
)
def test_sarif_is_valid_for_every_fixture_case(case: Path, sarif_validator, tmp_path) -> None:
    args = _args(case) if case.name != "valid" else ["--isolated", "--target", "all"]
    if (case / "setup.txt").exists():  # entries git cannot hold, made as test_fixtures does
        copy = tmp_path / case.name
        shutil.copytree(case, copy, symlinks=True)
        build_case(copy)
        case, args = copy, _args(copy)
    code, out = _lint("sarif", *args, ".", cwd=case)
    json_code, report = _lint("json", *args, ".", cwd=case)
    assert code == json_code
    _check_sarif(json.loads(out), sarif_validator, json.loads(report), case)


def test_sarif_rules_are_the_registry(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", frontmatter="name: other\ndescription: Reads PDFs.\n")
    _code, out = _lint("sarif", "--isolated", ".", cwd=tmp_path)
    run = json.loads(out)["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "skillcheck"
    assert driver["informationUri"].startswith("https://")
    registry = all_rules()
    assert [r["id"] for r in driver["rules"]] == [r.code for r in registry]
    for meta, rule in zip(driver["rules"], registry, strict=True):
        assert meta["name"] == rule.slug
        assert meta["shortDescription"]["text"] == rule.summary
        assert meta["help"]["markdown"] == rule.docs_markdown()
        assert rule.what in meta["fullDescription"]["text"]
        assert meta["defaultConfiguration"]["level"] == LEVELS[str(rule.severity)]
        assert meta["helpUri"].startswith("https://")
    mismatch = [r for r in run["results"] if r["ruleId"] == "SK206"]
    assert len(mismatch) == 1
    assert driver["rules"][mismatch[0]["ruleIndex"]]["name"] == "name-directory-mismatch"
    assert mismatch[0]["level"] == "error"
    assert "'other'" in mismatch[0]["message"]["text"]
    assert mismatch[0]["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 2,
        "startColumn": 7,
        "endLine": 2,
        "endColumn": 12,
    }


def test_sarif_uris_are_relative_to_the_repository_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write_skill(repo / "sub" / "skills", "my skill", frontmatter="name: other\ndescription: x\n")
    outside = write_skill(tmp_path / "elsewhere", "far-skill", frontmatter="name: far\n")
    _code, out = _lint("sarif", "--isolated", "skills", str(outside), cwd=repo / "sub")
    run = json.loads(out)["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.as_uri() + "/"}}
    locations = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["locations"][0][
            "physicalLocation"
        ]["artifactLocation"]
        for r in run["results"]
    }
    assert locations["sub/skills/my%20skill/SKILL.md"]["uriBaseId"] == "%SRCROOT%"
    far = (outside / "SKILL.md").as_uri()
    assert locations[far] == {"uri": far}  # outside the repository: absolute, no base

    # without a repository, paths start at the current directory
    plain = tmp_path / "plain"
    write_skill(plain, "x-skill", frontmatter="name: other\ndescription: x\n")
    _code, out = _lint("sarif", "--isolated", ".", cwd=plain)
    run = json.loads(out)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == plain.as_uri() + "/"
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert "x-skill/SKILL.md" in uris
    assert all(uri.startswith("x-skill/") for uri in uris)


def _fingerprints(cwd: Path) -> dict[str, str]:
    _code, out = _lint("sarif", "--isolated", ".", cwd=cwd)
    return {
        r["ruleId"]: r["partialFingerprints"]["skillcheck/v1"]
        for r in json.loads(out)["runs"][0]["results"]
    }


def test_sarif_fingerprints_follow_the_line_not_its_number(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    skill = write_skill(tmp_path, "pdf-tools", frontmatter="name: other\ndescription: x\n")
    before = _fingerprints(tmp_path)
    # the offending line moves down two lines and is re-indented: same alert
    text = (skill / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(text.replace("name: other", "license: MIT\n\nname:   other"))
    moved = _fingerprints(tmp_path)
    assert moved["SK206"] == before["SK206"]
    # the offending value changes: a different alert
    (skill / "SKILL.md").write_text(text.replace("name: other", "name: another"))
    assert _fingerprints(tmp_path)["SK206"] != before["SK206"]


def test_sarif_of_hostile_skills_is_valid_and_keeps_paths(tmp_path: Path, sarif_validator):
    root = _hostile_tree(tmp_path)
    _code, out = _lint("sarif", "--isolated", ".", cwd=root)
    _code, report = _lint("json", "--isolated", ".", cwd=root)
    document = json.loads(out)
    _check_sarif(document, sarif_validator, json.loads(report), root)
    assert "\x1b" not in out and "\x9b" not in out
    uris = {
        unquote(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in document["runs"][0]["results"]
    }
    assert f"{HOSTILE_DIRS[0]}/SKILL.md" in uris


# --- GitHub annotations -------------------------------------------------------------------


def test_github_hostile_skills_give_one_annotation_per_diagnostic(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)
    done = run_skillcheck("lint", "--isolated", "--format", "github", ".", cwd=root)
    assert done.returncode == 1, done.stderr
    _code, report = _lint("json", "--isolated", ".", cwd=root)
    diagnostics = json.loads(report)["diagnostics"]
    assert any("\n" in d["path"] for d in diagnostics), "no diagnostic to attack with"

    raw = done.stdout
    assert b"\x1b" not in raw and b"\r" not in raw and b"\xc2\x9b" not in raw
    lines = raw.decode("utf-8").split("\n")
    assert lines[-1] == ""  # each annotation ends its line; nothing follows
    lines = lines[:-1]
    assert len(lines) == len(diagnostics)
    parsed = sorted(
        (_parse_command(line) for line in lines),
        key=lambda p: (p[1]["file"], int(p[1]["line"]), p[1]["title"]),
    )
    diagnostics.sort(key=lambda d: (safe(d["path"]), d["line"], d["code"]))
    for (name, props, data), diag in zip(parsed, diagnostics, strict=True):
        assert name == COMMANDS[diag["severity"]]
        assert set(props) <= {"file", "line", "col", "endLine", "endColumn", "title"}
        assert props["file"] == safe(diag["path"])  # the real path, newlines included
        assert props["line"] == str(diag["line"])
        assert props["title"] == f"{diag['code']} {diag['slug']}"
        assert data.split("\nhelp: ")[0] == safe(diag["message"])


@pytest.mark.parametrize("fmt", ["text", "sarif", "github", "junit"])
def test_file_names_that_are_not_utf8(tmp_path: Path, fmt: str) -> None:
    (tmp_path / ".git").mkdir()
    name = os.fsdecode(b"latin\xe9-dir")
    write_skill(tmp_path, name, frontmatter="name: other\ndescription: Reads PDFs.\n")
    # strict UTF-8 output: a lone surrogate anywhere in the report would be exit 2
    done = run_skillcheck(
        "lint", "--isolated", "--format", fmt, ".", cwd=tmp_path, env={"PYTHONIOENCODING": "utf-8"}
    )
    assert done.returncode == 1, done.stderr
    out = done.stdout.decode("utf-8")
    if fmt == "sarif":
        uris = {
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(out)["runs"][0]["results"]
        }
        assert "latin%E9-dir/SKILL.md" in uris  # the real bytes, percent-encoded
    elif fmt == "github":
        files = {_parse_command(line)[1]["file"] for line in out.splitlines()}
        assert "latin\\xe9-dir/SKILL.md" in files
    elif fmt == "junit":
        assert ET.fromstring(done.stdout).find("testsuite/testcase").get("name") == (
            "latin\\xe9-dir"
        )
    else:
        assert "latin\\xe9-dir/SKILL.md:2:7: SK206" in out


def test_github_clean_run_prints_nothing(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    code, out = _lint("github", "--isolated", ".", cwd=tmp_path)
    assert (code, out) == (0, "")


def test_github_annotation_fields(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_skill(tmp_path / "skills", "pdf-tools", frontmatter="name: other\ndescription: x\n")
    code, out = _lint("github", "--isolated", "pdf-tools", cwd=tmp_path / "skills")
    assert code == 1
    lines = out.splitlines()
    mismatch = next(line for line in lines if "SK206" in line)
    # relative to the repository root, not to the current directory; endColumn inclusive
    assert mismatch.startswith(
        "::error file=skills/pdf-tools/SKILL.md,line=2,col=7,endLine=2,endColumn=11,"
        "title=SK206 name-directory-mismatch::name 'other' does not match"
    )
    assert any(line.startswith("::notice ") and "SK306" in line for line in lines)
    assert any(line.startswith("::warning ") and "SK307" in line for line in lines)


TEXT = st.text(st.characters(exclude_categories=()), max_size=40)


def _result(
    diagnostics: list[Diagnostic], skills: list[Skill] | list[SkillSummary] | None = None
) -> LintResult:
    from skillcheck.source.discover import Discovery

    skills = skills or []
    return LintResult(
        skills, diagnostics, ("agentskills",), {s.root: {} for s in skills}, Discovery()
    )


def _diagnostic(path: Path, message: str, severity=Severity.ERROR, skill=None) -> Diagnostic:
    return Diagnostic(
        "SK206", "name-directory-mismatch", severity, message, path, 3, 5, 3, 9, skill=skill
    )


@settings(max_examples=150, deadline=None)
@given(
    name=TEXT.filter(lambda s: s not in ("", ".", "..") and "/" not in s and "\0" not in s),
    message=TEXT,
)
def test_github_escaping_round_trips_through_the_runner(name: str, message: str) -> None:
    cwd = Path("/nonexistent-root")
    diag = _diagnostic(cwd / name / "SKILL.md", message)
    out = render("github", _result([diag]), ReportOptions(cwd=cwd))
    assert out.endswith("\n") and out.count("\n") == 1  # one command, one line
    command, props, data = _parse_command(out[:-1])
    assert command == "error"
    assert props["file"] == safe(f"{name}/SKILL.md")
    assert data == safe(message)
    assert (props["line"], props["col"], props["endColumn"]) == ("3", "5", "8")


def test_github_multiline_span_has_no_columns() -> None:
    cwd = Path("/nonexistent-root")
    diag = Diagnostic(
        "SK309",
        "description-whitespace",
        Severity.WARNING,
        "two lines",
        cwd / "SKILL.md",
        3,
        14,
        5,
        2,
    )
    out = render("github", _result([diag]), ReportOptions(cwd=cwd))
    # GitHub accepts columns only when the annotation starts and ends on one line
    assert out == (
        "::warning file=SKILL.md,line=3,endLine=5,title=SK309 description-whitespace::two lines\n"
    )


# --- JUnit --------------------------------------------------------------------------------


def _junit(cwd: Path, *args: str) -> tuple[int, ET.Element]:
    code, out = _lint("junit", "--isolated", *args, ".", cwd=cwd)
    return code, ET.fromstring(out.encode("utf-8"))


def test_junit_one_testcase_per_skill_and_one_failure_per_failing_skill(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "pdf-tools")
    write_skill(tmp_path / "skills", "bad-skill", frontmatter="name: Other_Name\ndescription: x\n")
    code, tree = _junit(tmp_path)
    assert code == 1
    suite = tree.find("testsuite")
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    assert set(cases) == {("skills", "pdf-tools"), ("skills", "bad-skill")}
    assert cases[("skills", "bad-skill")].get("file") == "skills/bad-skill/SKILL.md"
    good, bad = cases[("skills", "pdf-tools")], cases[("skills", "bad-skill")]
    assert list(good) == []
    [failure] = bad.findall("failure")  # two errors, one failing test case
    assert failure.get("type") == "SK204 SK206"
    assert failure.get("message").startswith("2 findings: SK204 ")
    lines = failure.text.splitlines()
    for code in ("SK204", "SK206"):
        assert any(x.startswith(f"{code} [error] skills/bad-skill/SKILL.md:2:7: ") for x in lines)
    warnings = bad.find("system-out").text.splitlines()
    assert any(line.startswith("SK307 [warning] skills/bad-skill/SKILL.md:3:") for line in warnings)
    assert any(line.startswith("SK306 [info] ") for line in warnings)
    # the counts add up: 2 test cases, 1 of them failing
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("2", "1", "0")
    assert (tree.get("tests"), tree.get("failures")) == ("2", "1")

    # --strict: every finding fails, as the exit code says
    _code, strict = _junit(tmp_path, "--strict")
    bad = next(c for c in strict.iter("testcase") if c.get("name") == "bad-skill")
    assert bad.find("system-out") is None
    assert {"SK204", "SK206", "SK306", "SK307"} <= set(bad.find("failure").get("type").split())
    assert strict.find("testsuite").get("failures") == "1"


def test_junit_of_hostile_skills_parses(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)
    _code, out = _lint("junit", "--isolated", ".", cwd=root)
    _code, report = _lint("json", "--isolated", ".", cwd=root)
    report = json.loads(report)
    assert "\x1b" not in out
    tree = ET.fromstring(out.encode("utf-8"))
    cases = list(tree.iter("testcase"))
    assert len(cases) == len(report["skills"])
    failing = {d["skill"] for d in report["diagnostics"] if d["severity"] == "error"}
    assert len(list(tree.iter("failure"))) == len(failing)
    assert tree.get("failures") == str(len(failing))
    names = {c.get("name") for c in cases}
    assert {safe(d) for d in HOSTILE_DIRS} <= names


XML_CHARS = re.compile("^[\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*$")


@settings(max_examples=150, deadline=None)
@given(message=TEXT)
def test_junit_never_breaks_on_any_message(message: str) -> None:
    root = Path("/nonexistent-root/pdf-tools")
    skill = Skill(root=root, display_root="pdf-tools", skill_md=root / "SKILL.md", doc=None)
    diag = _diagnostic(root / "SKILL.md", message, skill=root)
    out = render("junit", _result([diag], [skill]), ReportOptions(cwd=root.parent))
    failure = ET.fromstring(out.encode("utf-8")).find("testsuite/testcase/failure")
    assert XML_CHARS.match(failure.get("message")) and XML_CHARS.match(failure.text)
    assert "\x1b" not in out
    printable = "".join(c for c in message if c.isprintable() and c not in "\ufffe\uffff")
    if printable == message and XML_CHARS.match(message):  # nothing to neutralise: kept exactly
        assert failure.get("message") == f"{message} (name-directory-mismatch)"


# --- every format against hostile content ------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "sarif", "junit"])
def test_no_report_line_reads_as_a_workflow_command(tmp_path: Path, fmt: str) -> None:
    """A CI log showing the report must not run skill content as a workflow command: the
    runner reads any line that starts with ``::`` (after blanks) as one."""
    root = _hostile_tree(tmp_path)
    write_skill(root, "::error file=a.md::dir", frontmatter="name: other\ndescription: x\n")
    _code, out = _lint(fmt, "--isolated", ".", cwd=root)
    assert "::error file=a.md::dir" in out  # the content is there, inside a line
    assert [line for line in out.split("\n") if line.lstrip().startswith("::")] == []


def test_text_output_has_no_raw_escape(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)
    done = run_skillcheck("lint", "--isolated", ".", cwd=root)
    assert done.returncode == 1
    assert b"\x1b" not in done.stdout and b"\xc2\x9b" not in done.stdout
    assert b"\\x1b" in done.stdout  # the escape is shown, made visible


def test_json_output_parses_and_keeps_the_values(tmp_path: Path) -> None:
    root = _hostile_tree(tmp_path)
    done = run_skillcheck("lint", "--isolated", "--format", "json", ".", cwd=root)
    report = json.loads(done.stdout)
    assert {s["path"] for s in report["skills"]} == {*HOSTILE_DIRS, "plain-skill"}
    assert "x::y,%\x1b[1m" in {s["name"] for s in report["skills"]}


@pytest.mark.parametrize("fmt", ["sarif", "github", "junit"])
def test_formats_write_to_output_file(tmp_path: Path, fmt: str) -> None:
    write_skill(tmp_path, "pdf-tools", frontmatter="name: other\ndescription: x\n")
    code, out = _lint(fmt, "--isolated", "--output", "report.out", ".", cwd=tmp_path)
    assert (code, out) == (1, "")
    _code, stdout = _lint(fmt, "--isolated", ".", cwd=tmp_path)
    assert (tmp_path / "report.out").read_text(encoding="utf-8") == stdout
    assert "SK206" in stdout


# --- streaming: a report is written as it is made ------------------------------------------


def _many(n_skills: int, per_skill: int) -> LintResult:
    """A result of ``n_skills`` skills with ``per_skill`` findings each, some failing."""
    from skillcheck.source.skill import Figures, Fix

    skills, diagnostics = [], []
    base = Path("/nonexistent-root")
    for i in range(n_skills):
        root = base / f"skill-{i:04d}"
        skills.append(
            SkillSummary(
                root=root,
                display_root=root.name,
                skill_md=root / "SKILL.md",
                has_doc=False,
                name=root.name,
                figures=Figures(10, 20, 30, 40),
            )
        )
        for k in range(per_skill):
            severity = (Severity.ERROR, Severity.WARNING, Severity.INFO)[(i + k) % 3]
            fix = Fix(root / "SKILL.md", k, k + 1, b"x", "an edit") if k % 4 == 0 else None
            diagnostics.append(
                Diagnostic(
                    "SK206",
                    "name-directory-mismatch",
                    severity,
                    f"finding {k} of skill {i}",
                    root / "SKILL.md",
                    k + 1,
                    1,
                    k + 1,
                    4,
                    fix=fix,
                    help="say why",
                    skill=root,
                )
            )
    return _result(diagnostics, skills)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github", "junit"])
def test_every_format_is_written_in_bounded_chunks(fmt: str) -> None:
    """A report of 100,000 findings is never one string: it reaches the output in chunks of
    bounded size, which together are the whole report."""
    from skillcheck.report import write

    result = _many(400, 25)
    options = ReportOptions(cwd=Path("/nonexistent-root"))
    chunks: list[str] = []
    write(fmt, result, options, chunks.append)
    whole = "".join(chunks)
    assert whole == render(fmt, result, options)
    assert len(whole) > 1_000_000
    assert len(chunks) >= 10 and max(map(len, chunks)) < len(whole) / 8


def _junit_whole_tree(result: LintResult, options: ReportOptions) -> str:
    """JUnit as one ElementTree indented as a whole (how the report was made before it was
    streamed): the streamed text must be this text."""
    from skillcheck.report import junit
    from skillcheck.report import rel as rel_path

    suites = ET.Element("testsuites", name="skillcheck")
    suite = ET.SubElement(suites, "testsuite", name="skillcheck")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="skillcheck.version", value=junit.__version__)
    ET.SubElement(properties, "property", name="targets", value=",".join(result.targets))
    by_skill: dict = {}
    orphans = []
    for diag in result.diagnostics:
        (orphans if diag.skill is None else by_skill.setdefault(diag.skill, [])).append(diag)
    cases = [
        (
            rel_path(s.root.parent, options.cwd),
            s.root.name or rel_path(s.root, options.cwd),
            rel_path(s.skill_md, options.cwd) if s.skill_md is not None else None,
            by_skill.get(s.root, []),
        )
        for s in result.skills
    ]
    if orphans:
        cases.append(("skillcheck", "discovery", None, orphans))
    failures = 0
    for folder, name, file, diagnostics in cases:
        suite.append(junit._testcase(folder, name, file, diagnostics, options))
        failures += junit._fails(diagnostics, options)
    for element in (suites, suite):
        element.set("tests", str(len(cases)))
        element.set("failures", str(failures))
        element.set("errors", "0")
        element.set("skipped", "0")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(
    ("n_skills", "per_skill", "orphan"),
    [(0, 0, False), (0, 0, True), (1, 0, False), (3, 2, True), (40, 3, False)],
)
def test_junit_streamed_is_the_whole_tree_text(n_skills, per_skill, orphan, strict) -> None:
    result = _many(n_skills, per_skill)
    if orphan:
        result.diagnostics.append(_diagnostic(Path("/nonexistent-root/x"), "cannot be searched"))
    options = ReportOptions(cwd=Path("/nonexistent-root"), strict=strict)
    assert render("junit", result, options) == _junit_whole_tree(result, options)
