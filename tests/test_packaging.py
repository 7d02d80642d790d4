"""How skillcheck is distributed: the wheel, the pre-commit hook manifest and the GitHub
Action, and that each of them installs this project, never the unrelated ``skillcheck``
distribution on PyPI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, copy_checkout, skillcheck_command, write_skill

DIST_NAME = "agent-skillcheck"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
HOMEPAGE = PYPROJECT["project"]["urls"]["Homepage"]
ACTION = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
HOOKS = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The wheel pip builds from a copy of this checkout (the source tree stays clean)."""
    source = copy_checkout(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("*.whl")
    return zipfile.ZipFile(built)


@pytest.mark.slow  # builds a wheel (once for the module)
def test_wheel_metadata_names_this_project(wheel: zipfile.ZipFile) -> None:
    assert Path(wheel.filename).name.startswith("agent_skillcheck-")
    dist_info = next(n.split("/")[0] for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
    metadata = Parser().parsestr(wheel.read(f"{dist_info}/METADATA").decode("utf-8"))
    assert metadata["Name"] == DIST_NAME
    assert metadata["License-Expression"] == "MIT"
    assert metadata["Requires-Python"] == ">=3.11"
    assert f"Homepage, {HOMEPAGE}" in metadata.get_all("Project-URL")
    assert any(
        c.startswith("Topic :: Software Development") for c in metadata.get_all("Classifier")
    )
    assert wheel.read(f"{dist_info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    entry_points = wheel.read(f"{dist_info}/entry_points.txt").decode()
    assert re.search(r"^skillcheck = skillcheck\._entry:main$", entry_points, re.MULTILINE)


@pytest.mark.slow  # builds a wheel (once for the module)
def test_wheel_ships_every_schema_and_nothing_but_the_package(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    schemas = sorted((ROOT / "skillcheck" / "schemas").glob("*.json"))
    assert schemas, "no schema in skillcheck/schemas"
    for schema in schemas:
        member = f"skillcheck/schemas/{schema.name}"
        assert member in names
        json.loads(wheel.read(member))  # shipped whole
    assert "skillcheck/report/sarif.py" in names
    top = {name.split("/")[0] for name in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"skillcheck"}


@pytest.mark.slow  # builds a wheel (once for the module)
def test_wheel_ships_the_token_estimators_vocabulary(wheel: zipfile.ZipFile) -> None:
    # without it the estimator cannot price a word (skillcheck/tokens/vocab.py, package-data)
    shipped = wheel.read("skillcheck/data/cl100k_words.bin")
    assert shipped == (ROOT / "skillcheck" / "data" / "cl100k_words.bin").read_bytes()


# --- pre-commit hook manifest -------------------------------------------------------------


def test_precommit_manifest_is_valid_for_pre_commit() -> None:
    from pre_commit.clientlib import load_manifest

    hooks = {hook["id"]: hook for hook in load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))}
    assert set(hooks) == {"skillcheck", "skillcheck-fix"}
    for hook in hooks.values():
        assert hook["language"] == "python"  # pre-commit pip-installs this repository
        assert hook["require_serial"] is True  # one run sees every changed file
        assert hook["pass_filenames"] is True
    assert hooks["skillcheck"]["entry"] == "skillcheck lint"
    assert hooks["skillcheck-fix"]["entry"] == "skillcheck lint --fix"


@pytest.mark.parametrize(
    ("path", "matches"),
    [
        ("SKILL.md", True),
        ("pdf-tools/SKILL.md", True),
        ("anywhere/deep/pdf-tools/skill.md", True),
        ("skills/pdf-tools/references/guide.md", True),
        (".claude/skills/pdf-tools/scripts/extract.py", True),
        (".agents/skills/pdf-tools/assets/logo.png", True),
        (".github/skills/x/SKILL.md", True),
        ("src/app.py", False),
        ("docs/skills.md", False),
        ("myskills/x.md", False),
        ("NOTSKILL.md", False),
    ],
)
def test_precommit_files_pattern(path: str, matches: bool) -> None:
    for hook in HOOKS:
        assert bool(re.search(hook["files"], path)) is matches


# --- GitHub Action ------------------------------------------------------------------------

EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _steps() -> list[dict]:
    return ACTION["runs"]["steps"]


def test_action_inputs_are_declared_used_and_never_spliced_into_scripts() -> None:
    assert ACTION["runs"]["using"] == "composite"
    declared = set(ACTION["inputs"])
    assert {"paths", "targets", "strict", "sarif-file", "version"} <= declared
    text = (ROOT / "action.yml").read_text(encoding="utf-8")
    used = {
        m.group(1).removeprefix("inputs.")
        for m in EXPRESSION.finditer(text)
        if m.group(1).startswith("inputs.")
    }
    assert used == declared  # no typo, no input left unused
    for step in _steps():
        if "run" in step:
            # inputs reach scripts through env: an expression in the script text would let
            # an input value inject shell code
            assert "${{" not in step["run"], step.get("name")
            assert step["shell"] == "bash"
    for value in ACTION["outputs"].values():
        for m in EXPRESSION.finditer(value["value"]):
            step_id = m.group(1).split(".")[1]
            assert step_id in {s.get("id") for s in _steps()}


def test_action_installs_this_project() -> None:
    assert any(s.get("uses", "").startswith("actions/setup-python@") for s in _steps())
    install = next(s for s in _steps() if s.get("id") == "install")
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    targets = [line.split()[-1] for line in install["run"].splitlines() if "pip install" in line]
    # a pinned release of this distribution, or the action's own checkout
    assert sorted(targets) == sorted([f'"{DIST_NAME}==$VERSION"', '"$ACTION_PATH"'])


def _lint_step(tmp_path: Path, inputs: dict[str, str]) -> tuple[subprocess.CompletedProcess, Path]:
    """Run the action's lint step as the runner does (bash -e), with the installed command."""
    step = next(s for s in _steps() if s.get("id") == "lint")
    script = tmp_path / "lint.sh"
    script.write_text(step["run"], encoding="utf-8")
    output = tmp_path / "github-output"
    output.write_text("")
    values = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    values.update(inputs)
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "NO_COLOR": "1",
        "GITHUB_OUTPUT": str(output),
        "SKILLCHECK": shutil.which("skillcheck") or skillcheck_command()[0],
        "PATHS": values["paths"],
        "TARGETS": values["targets"],
        "STRICT": values["strict"],
        "SARIF_FILE": values["sarif-file"],
        "HTML_REPORT": values["html-report"],
    }
    done = subprocess.run(
        [shutil.which("bash") or "bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return done, output


@pytest.mark.slow  # runs the Action's script end to end
@pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("skillcheck") is None,
    reason="needs bash and the installed skillcheck command",
)
def test_action_lint_step_annotates_and_writes_sarif(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    write_skill(tmp_path / "my skills", "pdf-tools")
    write_skill(tmp_path / "other", "bad-skill", frontmatter="name: other\ndescription: x\n")

    # one path per line (one holds a space), SARIF asked for: findings fail the step
    done, output = _lint_step(
        tmp_path, {"paths": "my skills/pdf-tools\nother\n", "sarif-file": "out.sarif"}
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    assert any("file=other/bad-skill/SKILL.md,line=2" in line for line in lines)
    assert not any("pdf-tools" in line for line in lines)
    sarif = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    assert "SK206" in {r["ruleId"] for r in sarif["runs"][0]["results"]}
    assert output.read_text().splitlines() == ["sarif-file=out.sarif", "html-report="]

    # space-separated paths of a clean skill: the step passes and prints nothing
    (tmp_path / "out.sarif").unlink()
    done, _output = _lint_step(tmp_path, {"paths": "other/../my?skills  my*"})
    assert done.returncode == 2  # taken literally: neither globbed nor joined
    done, _output = _lint_step(tmp_path, {"paths": "'my skills/pdf-tools'"})
    assert done.returncode == 2
    (tmp_path / "clean").mkdir()
    write_skill(tmp_path / "clean", "pdf-tools")
    done, _output = _lint_step(tmp_path, {"paths": "clean/pdf-tools  clean/pdf-tools/SKILL.md"})
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert not (tmp_path / "out.sarif").exists()

    # strict: the warnings of an otherwise valid skill fail the step
    write_skill(tmp_path / "warn", "warn-skill", frontmatter="name: warn-skill\ndescription: x\n")
    done, _output = _lint_step(tmp_path, {"paths": "warn"})
    assert done.returncode == 0, done.stdout + done.stderr
    done, _output = _lint_step(
        tmp_path, {"paths": "warn", "strict": "true", "targets": "claude-code"}
    )
    assert done.returncode == 1
    assert "::warning file=warn/warn-skill/SKILL.md" in done.stdout

    # a bad input is a clear error, not a silent pass
    done, _output = _lint_step(tmp_path, {"strict": "yes"})
    assert done.returncode == 2
    assert "input strict must be true or false" in done.stdout


@pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("skillcheck") is None,
    reason="needs bash and the installed skillcheck command",
)
def test_action_lint_step_annotates_a_missing_path_and_still_writes_sarif(tmp_path: Path) -> None:
    import jsonschema

    write_skill(tmp_path / "skills", "pdf-tools")
    done, _output = _lint_step(tmp_path, {"paths": "skills nope", "sarif-file": "out.sarif"})
    assert done.returncode == 2
    error = next(line for line in done.stdout.splitlines() if line.startswith("::error "))
    assert error.startswith("::error title=skillcheck::") and "nope" in error
    sarif = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text("utf-8"))
    jsonschema.validate(sarif, schema)
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False and invocation["exitCode"] == 2
    assert "nope" in invocation["toolExecutionNotifications"][0]["message"]["text"]
    assert sarif["runs"][0]["results"] == []
    # without SARIF: the annotation still says why
    done, _output = _lint_step(tmp_path, {"paths": "nope"})
    assert done.returncode == 2
    assert any(line.startswith("::error title=skillcheck::") for line in done.stdout.splitlines())


@pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("skillcheck") is None,
    reason="needs bash and the installed skillcheck command",
)
def test_action_writes_the_html_report_and_uploads_it(tmp_path: Path) -> None:
    write_skill(tmp_path / "other", "bad-skill", frontmatter="name: other\ndescription: x\n")
    done, output = _lint_step(tmp_path, {"paths": "other", "html-report": "out/report.html"})
    assert done.returncode == 2  # the report's folder does not exist: an I/O error, not a pass
    (tmp_path / "out").mkdir()
    done, output = _lint_step(tmp_path, {"paths": "other", "html-report": "out/report.html"})
    assert done.returncode == 1, done.stderr  # findings: the annotation run fails the step
    page = (tmp_path / "out/report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "bad-skill" in page
    assert output.read_text().splitlines() == ["sarif-file=", "html-report=out/report.html"]
    upload = next(s for s in _steps() if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"] == {
        "name": "${{ inputs.html-artifact }}",
        "path": "${{ inputs.html-report }}",
        "if-no-files-found": "error",
    }
    # uploaded when the lint step failed on findings, never when there is no report
    assert upload["if"] == "${{ !cancelled() && inputs.html-report != '' }}"


# --- one home, and never the other project ------------------------------------------------


def test_readme_action_and_hook_point_at_this_repository() -> None:
    slug = HOMEPAGE.removeprefix("https://github.com/")
    uses = re.findall(r"uses: ([\w.-]+/[\w.-]+)@", README)
    assert slug in uses
    assert re.search(rf"^\s*- repo: {re.escape(HOMEPAGE)}$", README, re.MULTILINE)
    from skillcheck.report.sarif import INFORMATION_URI

    assert INFORMATION_URI == HOMEPAGE


def test_nothing_tells_users_to_install_the_other_skillcheck() -> None:
    """README, action and every message in the package name this distribution."""
    texts = {"README.md": README, "action.yml": (ROOT / "action.yml").read_text("utf-8")}
    for source in sorted((ROOT / "skillcheck").rglob("*.py")):
        texts[str(source.relative_to(ROOT))] = source.read_text(encoding="utf-8")
    found = 0
    for where, text in texts.items():
        for command in re.findall(r"pip install ([^\n&|;`]+)", text):
            found += 1
            for arg in command.split():
                name = re.split(r"[\[=<>~!]", arg.strip("'\""), maxsplit=1)[0]
                assert name != "skillcheck", f"{where} installs the unrelated project: {command}"
    assert found >= 4
