"""pre-commit runs skillcheck on every commit: `skillcheck --version` must stay cheap.

The entry point is started exactly as the console script starts it (the installed script
itself, and the `console_scripts` entry point it names), and the modules it imported are read
back from the interpreter.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import write_skill

HEAVY = ("yaml", "jsonschema", "pyromark")

# load the console script's entry point by its metadata, call it, then list sys.modules
_PROBE = r"""
import atexit, json, sys
from importlib.metadata import entry_points
# a stale *.egg-info may list it twice; the console script runs the one target they share
[target] = {e.value for e in entry_points(group="console_scripts") if e.name == "skillcheck"}
[ep] = [e for e in entry_points(group="console_scripts") if e.value == target][:1]
sys.argv = ["skillcheck", *ARGS]
# at exit: a command's run ends in os._exit, after the exit handlers
atexit.register(lambda: sys.stderr.write("\nMODULES:" + json.dumps(sorted(sys.modules))))
ep.load()()
"""


def _modules_after(*args: str) -> tuple[str, set[str]]:
    code = _PROBE.replace("ARGS", repr(list(args)))
    # -I: no current directory on sys.path, as for the console script
    result = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr
    return result.stdout.decode(), set(json.loads(result.stderr.decode().rsplit("MODULES:", 1)[1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_version_through_the_entry_point_imports_no_heavy_module() -> None:
    out, modules = _modules_after("--version")
    assert out.startswith("skillcheck ")
    assert _heavy(modules) == []
    assert "skillcheck" in modules  # the probe did run our entry point


def test_version_through_the_installed_script_imports_no_heavy_module() -> None:
    script = shutil.which("skillcheck")
    if script is None:
        pytest.skip("the skillcheck console script is not on PATH")
    with open(script, "rb") as handle:
        if handle.read(2) != b"#!":
            pytest.skip("the console script is not a Python script on this platform")
    # -X importtime lists every module the script imports, in the order it imports them
    result = subprocess.run(
        [sys.executable, "-X", "importtime", script, "--version"], capture_output=True, timeout=60
    )
    assert result.returncode == 0
    assert result.stdout.decode().startswith("skillcheck ")
    imported = {
        line.split("|")[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "skillcheck" in imported
    assert _heavy(imported) == []


def test_the_heavy_modules_are_imported_when_needed(tmp_path: Path) -> None:
    """The probe can see them: linting a skill imports yaml (so the test above can fail)."""
    skill = write_skill(tmp_path, "pdf-tools")
    _out, modules = _modules_after("lint", "--isolated", "--no-cache", str(skill))
    assert "yaml" in modules
    # the Language Server's libraries stay out of lint (they come with the `lsp` extra)
    assert not {m for m in modules if m.split(".")[0] in ("pygls", "lsprotocol", "cattrs")}


def test_linting_a_few_skills_starts_no_worker_machinery(tmp_path: Path) -> None:
    """The pre-commit case: one skill is checked in the main process, and a warm run takes
    it from the cache without parsing it (no multiprocessing, no yaml)."""
    skill = write_skill(tmp_path, "pdf-tools")
    cache = str(tmp_path / "cache")
    _out, cold = _modules_after("lint", "--isolated", "--cache-dir", cache, str(skill))
    assert not {"multiprocessing", "concurrent.futures.process"} & cold
    assert "yaml" in cold  # the first run parses SKILL.md
    # files younger than two seconds are compared by content, which parses them again:
    # wait until the entry's identity can be trusted
    time.sleep(2.1)
    _out, _warm = _modules_after("lint", "--isolated", "--cache-dir", cache, str(skill))
    _out, warm = _modules_after("lint", "--isolated", "--cache-dir", cache, str(skill))
    assert not {"multiprocessing", "concurrent.futures.process", "yaml"} & warm
