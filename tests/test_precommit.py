"""The pre-commit hooks, for real: pre-commit (from PyPI) installs this checkout into its own
virtualenv and runs the hook in a git repository of skills.

The hook repository is a committed copy of this checkout (``copy_checkout``), so the test
sees uncommitted work as CI sees the clean clone: ``try-repo`` on a dirty work tree would
leave out files git does not track yet. PRE_COMMIT_HOME is one directory for the session,
so the hook's environment is built once and shared by every commit below; ``try-repo``
always builds its own, in a temporary store.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import copy_checkout, invoke, write_skill

pytestmark = [
    pytest.mark.skipif(
        shutil.which("git") is None, reason="git is not installed; pre-commit needs it"
    ),
    pytest.mark.slow,  # pre-commit installs the hook into its own environment
]

DESCRIPTION = "description: Extracts text from PDF files. Use when the user asks about PDFs.\n"
GOOD = "name: {name}\n" + DESCRIPTION
BAD = "name: other-name\n" + DESCRIPTION


def _env(home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PRE_COMMIT_HOME": str(home),
        "PRE_COMMIT_COLOR": "never",
        "NO_COLOR": "1",
        # a commit here must not depend on the user's or the machine's git configuration
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _git(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    done = _run(["git", *args], cwd, env)
    assert done.returncode == 0, done.stderr
    return done


def _pre_commit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "pre_commit", *args], cwd, env)


@pytest.fixture(scope="session")
def precommit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory, precommit_home) -> tuple[Path, str]:
    """This checkout, committed in a repository of its own: (path, commit)."""
    repo = copy_checkout(tmp_path_factory.mktemp("hook-repo"))
    env = _env(precommit_home)
    _git(repo, env, "init", "-q")
    _git(repo, env, "add", "-A")
    _git(repo, env, "commit", "-q", "--no-verify", "-m", "snapshot of the checkout")
    return repo, _git(repo, env, "rev-parse", "HEAD").stdout.strip()


def _write_config(path: Path, hook_repo: tuple[Path, str], *hooks: str) -> None:
    repo, rev = hook_repo
    lines = [f"repos:\n  - repo: {repo}\n    rev: {rev}\n    hooks:\n"]
    lines += [f"      - id: {hook}\n" for hook in hooks]
    (path / ".pre-commit-config.yaml").write_text("".join(lines))


@pytest.fixture(scope="session")
def hook_env(tmp_path_factory, hook_repo, precommit_home) -> Iterator[Callable[[], None]]:
    """Start building the hooks' environment in PRE_COMMIT_HOME at once, in the background,
    so that it overlaps with the environment try-repo builds for itself. The fixture's value
    waits for the build to finish."""
    warm_up = tmp_path_factory.mktemp("warm-up")
    env = _env(precommit_home)
    _git(warm_up, env, "init", "-q")
    _write_config(warm_up, hook_repo, "skillcheck", "skillcheck-fix")
    process = subprocess.Popen(
        [sys.executable, "-m", "pre_commit", "install-hooks"],
        cwd=warm_up,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output: list[str] = []

    def ready() -> None:
        if not output:
            output.append(process.communicate(timeout=600)[0])
        assert process.returncode == 0, output[0]

    yield ready
    if process.poll() is None:
        process.kill()
        process.wait()


def _user_repo(path: Path, env: dict[str, str], hook_env: Callable[[], None], hook_repo, *hooks):
    """A git repository using the hooks from ``hook_repo``, with them installed."""
    path.mkdir()
    _git(path, env, "init", "-q")
    _write_config(path, hook_repo, *hooks)
    _git(path, env, "add", ".pre-commit-config.yaml")
    _git(path, env, "commit", "-q", "--no-verify", "-m", "config")
    hook_env()
    done = _pre_commit(path, env, "install", "--install-hooks")
    assert done.returncode == 0, done.stdout + done.stderr
    return path


def _head(path: Path, env: dict[str, str]) -> str:
    return _git(path, env, "rev-parse", "HEAD").stdout.strip()


def test_try_repo_blocks_a_bad_skill_and_lints_each_skill_once(tmp_path, hook_repo, precommit_home):
    env = _env(precommit_home)
    _git(tmp_path, env, "init", "-q")
    skills = tmp_path / "skills"
    write_skill(skills, "bad-skill", frontmatter=BAD, files={"references/guide.md": "# Guide\n"})
    write_skill(skills, "good-skill", frontmatter=GOOD.format(name="good-skill"))
    _git(tmp_path, env, "add", "-A")
    files = [
        "skills/bad-skill/SKILL.md",
        "skills/bad-skill/references/guide.md",
        "skills/good-skill/SKILL.md",
    ]
    done = _pre_commit(
        tmp_path, env, "try-repo", str(hook_repo[0]), "skillcheck", "--files", *files
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "skillcheck" in output and "Failed" in output
    # two files of the bad skill were passed; the skill is linted (and reported) once
    assert output.count("skills/bad-skill/SKILL.md:2:7: SK206 [error]") == 1, output
    assert re.search(
        r"^Found 1 error\b.* in 2 skills \(target: agentskills\)\.$", output, re.MULTILINE
    ), output


def test_commit_hook_passes_good_skills_and_blocks_bad_ones(
    tmp_path, hook_repo, precommit_home, hook_env
):
    env = _env(precommit_home)
    repo = _user_repo(tmp_path / "repo", env, hook_env, hook_repo, "skillcheck")
    skills = repo / ".claude" / "skills"

    write_skill(skills, "good-skill", frontmatter=GOOD.format(name="good-skill"))
    _git(repo, env, "add", "-A")
    before = _head(repo, env)
    done = _run(["git", "commit", "-m", "good skill"], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skillcheck" in done.stdout + done.stderr and "Passed" in done.stdout + done.stderr
    assert _head(repo, env) != before

    write_skill(skills, "bad-skill", frontmatter=BAD)
    _git(repo, env, "add", "-A")
    before = _head(repo, env)
    done = _run(["git", "commit", "-m", "bad skill"], repo, env)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert ".claude/skills/bad-skill/SKILL.md:2:7: SK206 [error]" in output
    assert _head(repo, env) == before  # the commit was blocked

    # a change to another skill only lints that skill: the committed-around bad one is
    # not in the changed files
    _git(repo, env, "commit", "-q", "--no-verify", "-m", "bad skill, bypassing the hook")
    (skills / "good-skill" / "notes.md").write_text("More notes.\n")
    _git(repo, env, "add", "-A")
    done = _run(["git", "commit", "-m", "notes"], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr

    # files outside any skill do not even start skillcheck
    (repo / "app.py").write_text("print('hello')\n")
    _git(repo, env, "add", "-A")
    done = _run(["git", "commit", "-m", "app"], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "(no files to check)Skipped" in done.stdout + done.stderr


def _has_fix() -> bool:
    return "--fix" in invoke("lint", "--help").stdout


@pytest.mark.skipif(not _has_fix(), reason="`skillcheck lint --fix` is not implemented yet")
def test_fix_hook_fixes_then_lets_the_commit_through(tmp_path, hook_repo, precommit_home, hook_env):
    env = _env(precommit_home)
    repo = _user_repo(tmp_path / "repo", env, hook_env, hook_repo, "skillcheck-fix")
    skill = write_skill(repo / "skills", "pdf-tools")
    skill_md = skill / "SKILL.md"
    skill_md.write_bytes(skill_md.read_bytes().replace(b"\n", b"\r\n"))  # SK902, fixable
    _git(repo, env, "add", "-A")
    before = _head(repo, env)
    done = _run(["git", "commit", "-m", "crlf"], repo, env)
    assert done.returncode != 0, done.stdout + done.stderr  # the hook changed a file
    assert _head(repo, env) == before
    assert b"\r\n" not in skill_md.read_bytes()
    _git(repo, env, "add", "-A")
    done = _run(["git", "commit", "-m", "lf"], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr


def test_commit_hook_checks_symlinks_and_links_to_deleted_files(
    tmp_path, hook_repo, precommit_home, hook_env
):
    env = _env(precommit_home)
    repo = _user_repo(tmp_path / "repo", env, hook_env, hook_repo, "skillcheck")
    skill = write_skill(
        repo / ".claude" / "skills",
        "pdf-tools",
        frontmatter=GOOD.format(name="pdf-tools"),
        body="# Steps\n\nRead [the guide](references/guide.md).\n",
        files={"references/guide.md": "# Guide\n", "notes.md": "Notes.\n"},
    )
    _git(repo, env, "add", "-A")
    done = _run(["git", "commit", "-m", "skill"], repo, env)
    assert done.returncode == 0, done.stdout + done.stderr

    # a symlink out of the skill is a file pre-commit would skip without types_or
    os.symlink("/etc/passwd", skill / "passwd.txt")
    _git(repo, env, "add", "-A")
    before = _head(repo, env)
    done = _run(["git", "commit", "-m", "link"], repo, env)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "passwd.txt:1:1: SK509 [error]" in output
    assert _head(repo, env) == before
    (skill / "passwd.txt").unlink()
    _git(repo, env, "add", "-A")

    # deleting the file SKILL.md links to, with another file of the skill in the commit
    (skill / "references" / "guide.md").unlink()
    (skill / "notes.md").write_text("More notes.\n")
    _git(repo, env, "add", "-A")
    done = _run(["git", "commit", "-m", "drop the guide"], repo, env)
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert "SK501 [error] link target 'references/guide.md' does not exist" in output
    assert _head(repo, env) == before
