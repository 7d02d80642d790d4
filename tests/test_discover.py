"""Discovery: which skill directories a PATH names, what is skipped, and that nothing on disk
(FIFOs, sockets, loops, unreadable directories) crashes or hangs the search."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from conftest import invoke, lint_json, run_skillcheck, skillcheck_command, write_skill

from skillcheck.source.discover import PathError, discover

DESC = "Extracts text and tables from PDF files. Use when the user asks about PDFs."


def _names(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root).as_posix() for p in paths]


def _skill(root: Path, rel: str) -> Path:
    """A clean skill at ``root/rel`` whose name is its directory's."""
    name = rel.rsplit("/", 1)[-1]
    return write_skill(root, rel, frontmatter=f"name: {name}\ndescription: {DESC} Named {name}.\n")


def test_a_skill_directory(tmp_path: Path) -> None:
    skill = _skill(tmp_path, "pdf-tools")
    assert discover([skill]).skills == [skill]


def test_a_tree_of_skills_sorted(tmp_path: Path) -> None:
    for rel in ("b-skill", "a-skill", "team/c-skill", "team/deep/er/d-skill"):
        _skill(tmp_path, rel)
    found = discover([tmp_path])
    assert _names(found.skills, tmp_path) == [
        "a-skill",
        "b-skill",
        "team/c-skill",
        "team/deep/er/d-skill",
    ]
    assert found.problems == []


def test_files_inside_a_skill_map_to_it_once(tmp_path: Path) -> None:
    """pre-commit passes the changed files: each maps to its skill, linted once."""
    pdf = write_skill(
        tmp_path,
        "pdf-tools",
        files={"scripts/extract.py": "print()\n", "references/REFERENCE.md": "# Ref\n"},
    )
    csv = _skill(tmp_path, "csv-tools")
    outside = tmp_path / "README.md"
    outside.write_text("# Not a skill\n")
    files = [
        pdf / "SKILL.md",
        pdf / "scripts" / "extract.py",
        pdf / "references" / "REFERENCE.md",
        pdf / "scripts",
        csv / "SKILL.md",
        outside,
    ]
    found = discover(files)
    assert found.skills == [csv, pdf]
    code, report = lint_json("--isolated", *map(str, files), cwd=tmp_path)
    assert [s["path"] for s in report["skills"]] == ["csv-tools", "pdf-tools"]
    assert code == 0


def test_a_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(PathError, match="no-such-dir"):
        discover([tmp_path / "no-such-dir"])


def test_vcs_dependency_and_virtualenv_directories_are_skipped(tmp_path: Path) -> None:
    _skill(tmp_path, "real-skill")
    for rel in (
        ".git/hooks-skill",
        "node_modules/pkg/vendored-skill",
        "web/node_modules/other-skill",
        "__pycache__/cached-skill",
    ):
        _skill(tmp_path, rel)
    venv = tmp_path / "env"  # a virtualenv under any name: recognised by pyvenv.cfg
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    _skill(venv / "lib", "packaged-skill")
    old_style = tmp_path / "oldenv"  # or by bin/activate
    (old_style / "bin").mkdir(parents=True)
    (old_style / "bin" / "activate").write_text("# activate\n")
    _skill(old_style, "another-skill")
    assert _names(discover([tmp_path]).skills, tmp_path) == ["real-skill"]


def test_gitignored_skills_are_skipped(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("drafts/\n*.tmp/\n")
    _skill(tmp_path, "skills/kept")
    _skill(tmp_path, "skills/drafts/ignored-draft")
    _skill(tmp_path, "skills/scratch.tmp")
    (tmp_path / "skills" / "team").mkdir()
    (tmp_path / "skills" / "team" / ".gitignore").write_text("private/\n")
    _skill(tmp_path, "skills/team/private")
    _skill(tmp_path, "skills/team/public")
    # the .gitignore files above the PATH count too, as git applies them
    found = discover([tmp_path / "skills"])
    assert _names(found.skills, tmp_path) == ["skills/kept", "skills/team/public"]
    everything = discover([tmp_path / "skills"], respect_gitignore=False)
    assert len(everything.skills) == 5


def test_gitignore_verdicts_hold_across_a_large_tree(tmp_path: Path) -> None:
    """A .gitignore asked about many folders is screened by one joined regex; negations,
    anchored and directory-only patterns still decide exactly as git does."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text(
        "# generated\nbuild/\n*.tmp/\n**/drafts/*\n!**/drafts/keep-*\n/top-only/\nnotes\n"
    )
    for i in range(40):  # far more folders than the screen waits for, before the rest
        _skill(tmp_path, f"group-{i:02}/skill-{i:02}")
        _skill(tmp_path, f"group-{i:02}/build/built-{i:02}")
    for rel in (
        "zz/drafts/keep-me",  # re-included by the negation
        "zz/drafts/other",
        "zz/nested/top-only/anchored-elsewhere",  # `/top-only/` is anchored at the root
        "top-only/at-root",
        "zz/scratch.tmp/wip",
        "zz/notes/a-note",
        "zz/plain",
    ):
        _skill(tmp_path, rel)
    found = _names(discover([tmp_path]).skills, tmp_path)
    assert found == [
        *(f"group-{i:02}/skill-{i:02}" for i in range(40)),
        "zz/drafts/keep-me",
        "zz/nested/top-only/anchored-elsewhere",
        "zz/plain",
    ]
    if shutil.which("git"):  # git itself agrees on every folder left out
        left_out = [
            "group-00/build/",
            "zz/drafts/other/",
            "top-only/",
            "zz/scratch.tmp/",
            "zz/notes/",
        ]
        kept = ["zz/drafts/keep-me/", "zz/nested/top-only/", "group-39/skill-39/"]
        shutil.rmtree(tmp_path / ".git")
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        checked = subprocess.run(
            ["git", "-C", str(tmp_path), "check-ignore", *left_out, *kept],
            capture_output=True,
            text=True,
        )
        assert checked.stdout.split() == left_out


def test_a_byte_order_mark_does_not_hide_the_first_gitignore_pattern(tmp_path: Path) -> None:
    """git drops a UTF-8 BOM at the start of a .gitignore; so does discovery."""
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_bytes(b"\xef\xbb\xbfdrafts/\n")
    _skill(tmp_path, "skills/kept")
    _skill(tmp_path, "skills/drafts/ignored-draft")
    assert _names(discover([tmp_path / "skills"]).skills, tmp_path) == ["skills/kept"]


def test_config_exclude(tmp_path: Path) -> None:
    _skill(tmp_path, "skills/kept")
    _skill(tmp_path, "skills/experimental/wip")
    _skill(tmp_path, "vendor/third-party")
    (tmp_path / "skillcheck.toml").write_text('exclude = ["experimental/", "/vendor"]\n')
    code, report = lint_json(".", cwd=tmp_path)
    assert [s["path"] for s in report["skills"]] == ["skills/kept"]
    assert code == 0


def test_directory_symlinks_are_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    target = _skill(elsewhere, "linked-skill")
    tree = tmp_path / "tree"
    _skill(tree, "own-skill")
    (tree / "link").symlink_to(elsewhere, target_is_directory=True)
    (tree / "loop").symlink_to(tree, target_is_directory=True)
    assert _names(discover([tree]).skills, tmp_path) == ["tree/own-skill"]
    # a symlink given explicitly is the user's choice, and keeps its own name
    explicit = tmp_path / "alias-skill"
    explicit.symlink_to(target, target_is_directory=True)
    assert discover([explicit]).skills == [explicit]


def test_symlink_loops_are_diagnostics(tmp_path: Path) -> None:
    _skill(tmp_path, "pdf-tools")
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "pdf-tools" / "SKILL-loop.md").symlink_to(tmp_path / "pdf-tools" / "SKILL-loop.md")
    result = run_skillcheck(
        "lint", "--isolated", "--format", "json", ".", "a", cwd=tmp_path, timeout=60
    )
    report = json.loads(result.stdout)
    sk100 = [d for d in report["diagnostics"] if d["code"] == "SK100"]
    assert [(d["path"], d["severity"]) for d in sk100] == [("a", "error")]
    assert "symbolic links" in sk100[0]["message"]
    assert [s["path"] for s in report["skills"]] == ["pdf-tools"]
    assert result.returncode == 1


def test_a_dangling_symlink_as_path(tmp_path: Path) -> None:
    (tmp_path / "gone").symlink_to(tmp_path / "nowhere")
    code, report = lint_json("--isolated", "gone", cwd=tmp_path)
    assert [(d["code"], d["path"], d["line"], d["column"]) for d in report["diagnostics"]] == [
        ("SK100", "gone", 1, 1)
    ]
    assert code == 1


def test_fifos_and_sockets_never_hang(tmp_path: Path) -> None:
    """A FIFO named SKILL.md would block open() forever; sockets cannot be opened at all."""
    fifo_skill = tmp_path / "fifo-skill"
    fifo_skill.mkdir()
    os.mkfifo(fifo_skill / "SKILL.md")
    socket_skill = tmp_path / "socket-skill"
    socket_skill.mkdir()
    ok_skill = _skill(tmp_path, "ok-skill")  # a skill that merely holds a FIFO and a socket
    os.mkfifo(ok_skill / "pipe")
    sockets = []
    for path in (socket_skill / "SKILL.md", ok_skill / "listener.sock"):
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(path))
        sockets.append(sock)
    try:
        # the tree, and the FIFO itself as pre-commit would pass it
        result = run_skillcheck(
            "lint",
            "--isolated",
            "--format",
            "json",
            ".",
            "fifo-skill/SKILL.md",
            cwd=tmp_path,
            timeout=60,
        )
    finally:
        for sock in sockets:
            sock.close()
    report = json.loads(result.stdout)
    found = [(d["code"], d["path"], d["line"], d["column"]) for d in report["diagnostics"]]
    assert ("SK101", "fifo-skill/SKILL.md", 1, 1) in found
    assert ("SK101", "socket-skill/SKILL.md", 1, 1) in found
    messages = {d["path"]: d["message"] for d in report["diagnostics"] if d["code"] == "SK101"}
    assert "FIFO" in messages["fifo-skill/SKILL.md"]
    assert "socket" in messages["socket-skill/SKILL.md"]
    assert [s["path"] for s in report["skills"]] == ["fifo-skill", "ok-skill", "socket-skill"]
    assert result.returncode == 1


def _unprivileged() -> list[str] | None:
    """A command prefix under which file permissions apply, or None when there is none.

    As root, chmod 000 does not stop reading (CAP_DAC_OVERRIDE); dropping the two DAC
    capabilities with setpriv makes root obey permissions like any user.
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    caps = "-dac_override,-dac_read_search"
    prefix = [setpriv, f"--inh-caps={caps}", f"--bounding-set={caps}"]
    probe = subprocess.run([*prefix, "true"], capture_output=True)
    return prefix if probe.returncode == 0 else None


def test_an_unreadable_directory_is_a_diagnostic(tmp_path: Path) -> None:
    prefix = _unprivileged()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    _skill(tmp_path, "tree/open-skill")
    _skill(tmp_path, "tree/locked/hidden-skill")
    skill = _skill(tmp_path, "lone-skill")
    (skill / "references").mkdir()
    locked = [tmp_path / "tree" / "locked", skill / "references"]
    for path in locked:
        path.chmod(0)
    try:
        result = subprocess.run(
            [
                *prefix,
                *skillcheck_command(),
                "lint",
                "--isolated",
                "--format",
                "json",
                "tree",
                "lone-skill/SKILL.md",
            ],
            cwd=tmp_path,
            capture_output=True,
            timeout=60,
            env={**os.environ, "NO_COLOR": "1"},
        )
    finally:
        for path in locked:
            path.chmod(0o755)
    report = json.loads(result.stdout)
    sk100 = {d["path"]: d for d in report["diagnostics"] if d["code"] == "SK100"}
    assert set(sk100) == {"tree/locked", "lone-skill/references"}
    assert all(
        d["severity"] == "error" and "Permission denied" in d["message"] for d in sk100.values()
    )
    assert [s["path"] for s in report["skills"]] == ["lone-skill", "tree/open-skill"]
    assert result.returncode == 1


def test_depth_is_bounded(tmp_path: Path) -> None:
    deep = tmp_path / "/".join(["d"] * 30)
    _skill(deep, "too-deep")
    _skill(tmp_path, "shallow")
    found = discover([tmp_path])
    assert _names(found.skills, tmp_path) == ["shallow"]
    assert len(found.problems) == 1
    assert "deeper than" in found.problems[0].message


@pytest.mark.parametrize("command", ["lint", "pack"])
def test_a_skill_below_the_depth_bound_is_an_error_never_a_pass(
    tmp_path: Path, command: str
) -> None:
    # issue 29, item 3: "Found 1 warning in 0 skills", exit 0, while pack said "no skills"
    _skill(tmp_path / "/".join(["d"] * 26), "too-deep")
    args = (
        ["--output", str(tmp_path.parent / f"{tmp_path.name}.tar.gz")] if command == "pack" else []
    )
    result = invoke(command, "--isolated", str(tmp_path), *args)
    assert result.exit_code == 1, result.output
    assert "SK100" in result.output and "deeper than" in result.output
    assert "no skills found" not in result.output


def test_lint_dot_inside_a_skill_uses_the_real_directory_name(tmp_path: Path) -> None:
    skill = _skill(tmp_path, "pdf-tools")
    code, report = lint_json("--isolated", ".", cwd=skill)
    assert report["skills"][0]["path"] == "."
    assert report["diagnostics"] == []
    assert code == 0


def test_a_directory_path_with_no_skill_is_an_error(tmp_path: Path) -> None:
    """A CI job pointed at the wrong folder must not pass green (skills-ref fails it too);
    the other PATHs of the run are still checked."""
    empty = tmp_path / "docs"
    empty.mkdir()
    (empty / "README.md").write_text("# Not a skill\n")
    _skill(tmp_path, "skills/pdf-tools")
    code, report = lint_json("--isolated", "docs", "skills", cwd=tmp_path)
    assert code == 1
    assert [s["path"] for s in report["skills"]] == ["skills/pdf-tools"]
    [diag] = report["diagnostics"]
    assert (diag["code"], diag["severity"], diag["path"]) == ("SK100", "error", "docs")
    assert "no skill found under this directory" in diag["message"]


def test_a_folder_inside_a_skill_names_that_skill(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "pdf-tools", files={"scripts/x.py": "print()\n"})
    assert discover([skill / "scripts"]).skills == [skill]
    assert discover([skill / "scripts"]).problems == []


def test_a_file_path_outside_any_skill_stays_ignored(tmp_path: Path) -> None:
    """pre-commit passes every changed file: one that belongs to no skill is not a finding."""
    (tmp_path / "README.md").write_text("# Not a skill\n")
    code, report = lint_json("--isolated", "README.md", cwd=tmp_path)
    assert (code, report["diagnostics"], report["skills"]) == (0, [], [])


def test_a_skill_md_symlinked_into_the_linted_tree_is_read(tmp_path: Path) -> None:
    """Runtimes and skills-ref follow the link: its content is linted (a warning for the
    link); outside the directories being linted it is never opened (an error)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "pdf.md").write_text(
        "---\nname: pdf-tools\ndescription: " + DESC + "\n---\n# PDF\n\nSee [api](api.md).\n"
    )
    skill = tmp_path / "skills" / "pdf-tools"
    skill.mkdir(parents=True)
    os.symlink("../../docs/pdf.md", skill / "SKILL.md")
    code, report = lint_json("--isolated", ".", cwd=tmp_path)
    found = sorted((d["code"], d["severity"], d["path"]) for d in report["diagnostics"])
    assert found == [
        ("SK101", "warning", "skills/pdf-tools/SKILL.md"),
        ("SK501", "error", "skills/pdf-tools/SKILL.md"),  # the target's text was linted
    ]
    assert code == 1
    code, report = lint_json("--isolated", "skills", cwd=tmp_path)
    [diag] = report["diagnostics"]
    assert (diag["code"], diag["severity"]) == ("SK101", "error")
    assert "outside the skill" in diag["message"]
