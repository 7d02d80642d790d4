"""Shared test helpers: run the installed command, run the CLI in-process, build skills."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@pytest.fixture(autouse=True, scope="session")
def _result_cache_outside_the_checkout(tmp_path_factory: pytest.TempPathFactory):
    """Every run in the suite (in-process or a subprocess) caches into one temporary
    directory: nothing is written into the checkout, and every test also exercises the cache."""
    # the cache's key (in the user's cache home) too: the suite never writes into $HOME
    names = ("SKILLCHECK_CACHE_DIR", "XDG_CACHE_HOME")
    old = {name: os.environ.get(name) for name in names}
    os.environ["SKILLCHECK_CACHE_DIR"] = str(tmp_path_factory.mktemp("skillcheck-cache"))
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache-home"))
    yield
    for name, value in old.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


def skillcheck_command() -> list[str]:
    """The installed console script (end-to-end tests run what users run)."""
    found = shutil.which("skillcheck")
    return [found] if found else [sys.executable, "-m", "skillcheck"]


def run_skillcheck(
    *args: str,
    cwd: Path | None = None,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [*skillcheck_command(), *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        timeout=timeout,
        env=full_env,
    )


def invoke(*args: str, cwd: Path | None = None):
    """Run the CLI in-process (fast); returns click's Result."""
    from skillcheck.cli import cli

    runner = CliRunner()
    old = Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        return runner.invoke(cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def lint_json(*args: str, cwd: Path | None = None) -> tuple[int, dict]:
    result = invoke("lint", "--format", "json", *args, cwd=cwd)
    return result.exit_code, json.loads(result.stdout)


def write_skill(
    root: Path,
    name: str,
    frontmatter: str | None = None,
    body: str = "# Steps\n\nDo the thing.\n",
    files: dict[str, bytes | str] | None = None,
) -> Path:
    """Create ``root/name/SKILL.md`` (with a valid default frontmatter) and extra files."""
    skill = root / name
    skill.mkdir(parents=True, exist_ok=True)
    if frontmatter is None:
        frontmatter = (
            f"name: {name}\ndescription: Extracts text from PDF files. Use when the"
            " user asks about PDFs.\n"
        )
    (skill / "SKILL.md").write_text(f"---\n{frontmatter}---\n{body}", encoding="utf-8")
    for rel, content in (files or {}).items():
        path = skill / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode("utf-8")
        path.write_bytes(content)
    return skill


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each path is read by ``skillcheck.source.load.read_regular`` (the one
    reader of skill files) during the test."""
    from skillcheck.source import load

    counts: Counter[str] = Counter()
    real_read = load.read_regular

    def counting_read(path, *args, **kwargs):
        counts[str(path)] += 1
        return real_read(path, *args, **kwargs)

    monkeypatch.setattr(load, "read_regular", counting_read)
    return counts


@pytest.fixture
def make_skill(tmp_path):
    def make(name: str = "pdf-tools", **kwargs) -> Path:
        return write_skill(tmp_path, name, **kwargs)

    return make


def copy_checkout(dest: Path) -> Path:
    """Copy this checkout's files (tracked, plus untracked ones git does not ignore) to
    ``dest``: what a fresh clone would hold once the work in progress is committed.

    Packaging and pre-commit tests build from the copy, so they never write build output
    into the working tree and see uncommitted work as CI will see it committed. Outside a
    git work tree (an unpacked sdist), the tree is copied minus build and cache output.
    """
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        junk = shutil.ignore_patterns(
            ".git",
            "__pycache__",
            "*.pyc",
            "*.egg-info",
            "build",
            "dist",
            ".venv",
            ".ci-venv",
            ".*_cache",
            ".hypothesis",
        )
        shutil.copytree(ROOT, dest, symlinks=True, ignore=junk, dirs_exist_ok=True)
        return dest
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    names = listed.decode("utf-8", "surrogateescape").split("\0")
    for rel in sorted({name for name in names if name}):
        source, target = ROOT / rel, dest / rel
        if not os.path.lexists(source):  # deleted in the work tree, not yet in the index
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, target)
    return dest
