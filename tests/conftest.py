"""Shared test helpers: run the installed command, run the CLI in-process, build skills."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# hypothesis times each example (200 ms) and the making of its data (too_slow): clocks a
# loaded machine fails; the tests that care about speed count operations instead
settings.register_profile("skillcheck", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("skillcheck")


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


# --- growth checks that a loaded machine does not fail --------------------------------------


def cpu_seconds(work: Callable[[], object]) -> float:
    """CPU seconds of ``work`` in this process, after a collection so that garbage left by
    earlier tests is not charged to it."""
    gc.collect()
    started = time.process_time()
    work()
    return time.process_time() - started


def assert_linear(
    cost: Callable[[int], float], n: int, *, slack: float = 0.2, rounds: int = 6, what: str = ""
) -> None:
    """Fail if ``cost`` (CPU seconds of some work on an input of size ``n``) grows faster than
    linearly from ``n`` to ``4 * n``: linear gives ~4x, quadratic 16x, the bound is 8x.

    A busy machine only ever adds time to a measurement (another process's cache misses, a
    descheduled core), never takes it away, so each size keeps the least of its measurements;
    the two sizes are measured in turn, so a burst of load lands on both, and the check passes
    as soon as the least figures grow linearly. It fails only when every round shows the
    large input more than 8x the small one, which noise alone cannot keep up while a
    quadratic scan always does.
    """
    cost(n)  # imports, compiled patterns and caches are made once, untimed
    small = large = float("inf")
    for _ in range(rounds):
        small = min(small, cost(n))
        large = min(large, cost(4 * n))
        if large <= 8 * small + slack:
            return
    pytest.fail(f"{what}: {small:.3f}s at {n:,}, {large:.3f}s at {4 * n:,} (best of {rounds})")


def calls_made(work: Callable[[], object], limit: int | None = None) -> int:
    """How many functions, Python and built-in, ``work`` calls: a count of operations that,
    unlike a clock, the machine's load does not change. Past ``limit`` calls the work is
    stopped (an exception raised inside it) and the test fails."""
    count = 0

    def profile(_frame: object, event: str, _arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1
            if limit is not None and count > limit:
                sys.setprofile(None)
                raise RuntimeError(f"more than {limit:,} calls")

    sys.setprofile(profile)
    try:
        work()
    except RuntimeError:
        if limit is None or count <= limit:
            raise
    finally:
        sys.setprofile(None)
    if limit is not None and count > limit:
        pytest.fail(f"more than {limit:,} calls")
    return count
