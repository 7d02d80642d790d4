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


# the clock three seconds ahead: files written just now look older than the cache's two
# seconds of doubt (a same-tick edit), without waiting for them to age
_CLOCK_AHEAD = """
import time
_now = time.time_ns
time.time_ns = lambda: _now() + 3_000_000_000
"""


def _modules_after(*args: str, prelude: str = "") -> tuple[str, set[str]]:
    code = prelude + _PROBE.replace("ARGS", repr(list(args)))
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
    assert "typing" not in imported  # 9 ms: the entry point annotates without it


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
    # files younger than two seconds are compared by content, which parses them again: the
    # cold run's clock is ahead, so the entry it writes trusts their identity
    args = ("lint", "--isolated", "--cache-dir", cache, str(skill))
    _out, cold = _modules_after(*args, prelude=_CLOCK_AHEAD)
    assert not {"multiprocessing", "concurrent.futures.process"} & cold
    assert "yaml" in cold  # the first run parses SKILL.md
    _out, warm = _modules_after(*args)
    assert not {"multiprocessing", "concurrent.futures.process", "yaml"} & warm


# every regular expression compiled by a module of skillcheck while it is imported
_COMPILES_AT_IMPORT = r"""
import importlib, json, pkgutil, re, sys
made = []
compile = re.compile
def spy(pattern, flags=0):
    caller = sys._getframe(1).f_code.co_filename.replace("\\", "/")
    if "/skillcheck/" in caller:
        made.append([caller.rsplit("/skillcheck/", 1)[1], str(pattern)[:60]])
    return compile(pattern, flags)
re.compile = spy
import skillcheck
for module in pkgutil.walk_packages(skillcheck.__path__, "skillcheck."):
    importlib.import_module(module.name)
print(json.dumps(made))
"""


def test_importing_skillcheck_compiles_no_regular_expression() -> None:
    """Module-level patterns are ``LazyPattern``s: compiling them took 11 ms of every run,
    and a warm lint uses none of them."""
    result = subprocess.run(
        [sys.executable, "-I", "-c", _COMPILES_AT_IMPORT], capture_output=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


_COMPILED_AT_EXIT = r"""
import atexit, sys
from skillcheck.source import lazy
atexit.register(
    lambda: sys.stderr.write(f"\nCOMPILED:{sum(p._compiled is not None for p in lazy._MADE)}"
                             f"/{len(lazy._MADE)}")
)
from skillcheck._entry import main
sys.argv = ["skillcheck", *sys.argv[1:]]
main()
"""


def _compiled_after(*args: str, cwd: Path, prelude: str = "") -> tuple[int, int]:
    code = prelude + _COMPILED_AT_EXIT
    result = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, timeout=120
    )
    done, made = result.stderr.decode().rsplit("COMPILED:", 1)[1].split("/")
    return int(done), int(made)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")
def test_patterns_are_compiled_once_before_workers_are_forked(tmp_path: Path) -> None:
    for i in range(30):  # more than PARALLEL_MIN: a pool starts
        write_skill(tmp_path, f"skill-{i:02d}")
    done, made = _compiled_after(
        "lint", "--isolated", "--no-cache", "--jobs", "2", ".", cwd=tmp_path
    )
    assert done == made > 100  # all of them, in the process that forked the workers
    # one skill checked here compiles only what its rules use; a warm run none at all
    cache = str(tmp_path / "cache")
    one = str(tmp_path / "skill-00")
    args = ("lint", "--isolated", "--cache-dir", cache, one)
    # the clock ahead: the entry trusts the files' identity (see _CLOCK_AHEAD)
    done, made = _compiled_after(*args, cwd=tmp_path, prelude=_CLOCK_AHEAD)
    assert 0 < done < made
    done, made = _compiled_after(*args, cwd=tmp_path)
    assert done <= 2  # display's check of a path for lone surrogates, at most
