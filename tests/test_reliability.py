"""Reliability (issue 12): no data loss, no hang, no crash, no false pass, one meaning per exit
code. Each test covers a class (every writer, every archive reader, every scan), not one
reproducer."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import os
import re
import stat
import struct
import subprocess
import tarfile
import threading
import time
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import (
    ROOT,
    assert_linear,
    cpu_seconds,
    invoke,
    run_skillcheck,
    skillcheck_command,
    write_skill,
)

from skillcheck.package.archive import BundleError
from skillcheck.package.catalog import dumps_manifest, file_digest, skill_digest
from skillcheck.package.loader import open_bundle

DESCRIPTION = "Extracts text from PDF files. Use when the user asks about PDFs."


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A directory with one skill, the working directory of the CLI runs. Its one finding is
    a fixable warning, so that every writer (--diff too) has something to write."""
    skill = write_skill(tmp_path / "skills", "demo", body="# Steps\n\nDo the thing.\n")
    md = skill / "SKILL.md"
    md.write_text(md.read_text().replace("\n---\n", "\n--- \n", 1))
    return tmp_path


# --- 1. outputs: never replace what is not a regular file ---------------------------------

# every command and format that writes a file with -o/--output
WRITERS: dict[str, list[str]] = {
    "lint-text": ["lint", "--no-cache", "skills"],
    "lint-json": ["lint", "--no-cache", "--format", "json", "skills"],
    "lint-sarif": ["lint", "--no-cache", "--format", "sarif", "skills"],
    "lint-diff": ["lint", "--no-cache", "--diff", "skills"],
    "catalog-json": ["catalog", "--no-cache", "skills"],
    "catalog-xml": ["catalog", "--no-cache", "--format", "xml", "skills"],
    "catalog-markdown": ["catalog", "--no-cache", "--format", "markdown", "skills"],
    "pack-tar": ["pack", "--no-cache", "skills"],
    "pack-zip": ["pack", "--no-cache", "--format", "zip", "skills"],
}


def _write(project: Path, args: list[str], output: Path) -> int:
    return invoke(*args, "--output", str(output), cwd=project).exit_code


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_output_through_a_symlink_writes_the_target_and_keeps_the_link(
    project: Path, writer: str
) -> None:
    target = project / "real.out"
    target.write_bytes(b"old")
    link = project / "link.out"
    link.symlink_to("real.out")
    dangling = project / "dangling.out"
    dangling.symlink_to("new.out")
    assert _write(project, WRITERS[writer], link) in (0, 1)
    assert link.is_symlink() and os.readlink(link) == "real.out"
    assert target.read_bytes() not in (b"old", b"")
    assert _write(project, WRITERS[writer], dangling) in (0, 1)
    assert dangling.is_symlink() and (project / "new.out").read_bytes()


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_output_to_a_fifo_is_written_through(project: Path, writer: str) -> None:
    fifo = project / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert _write(project, WRITERS[writer], fifo) in (0, 1)
    reader.join(30)
    assert received and received[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert not [p.name for p in project.iterdir() if p.name.endswith(".tmp")]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_output_to_a_character_device_stays_a_device(project: Path, writer: str) -> None:
    null = project / "null"
    try:
        os.mknod(null, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a copy of /dev/null
    except (PermissionError, AttributeError):
        pytest.skip("creating a device node needs root")
    assert _write(project, WRITERS[writer], null) in (0, 1)
    assert stat.S_ISCHR(os.lstat(null).st_mode)


def test_output_to_a_directory_is_refused(project: Path) -> None:
    (project / "dir").mkdir()
    for writer in ("lint-json", "catalog-json", "pack-tar"):
        result = invoke(*WRITERS[writer], "--output", "dir", cwd=project)
        assert result.exit_code == 2, writer
        assert "dir" in result.stderr and "internal error" not in result.stderr


def test_fix_through_a_symlinked_skill_md_keeps_the_link(tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "demo")
    real = skill / "real.md"
    (skill / "SKILL.md").rename(real)
    real.write_text(f"---\nname: demo\ndescription: {DESCRIPTION}\n--- \n# Steps\n\nDo it.\n")
    (skill / "SKILL.md").symlink_to("real.md")
    invoke("lint", "--fix", "--select", "ALL", str(skill), cwd=tmp_path)
    assert (skill / "SKILL.md").is_symlink()
    assert "--- \n" not in real.read_text()


def test_cache_writes_never_follow_a_planted_symlink(tmp_path: Path) -> None:
    """Outputs the user names are followed through a link; files skillcheck names itself in
    a shared folder (the cache) are not: a planted link must not redirect the write."""
    skill = write_skill(tmp_path / "skills", "demo")
    cache = tmp_path / "cache"
    args = ["lint", "--cache-dir", str(cache), str(skill)]
    assert invoke(*args).exit_code == 0
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    entries = [p for p in cache.rglob("*.json")]
    assert entries
    for entry in entries:
        entry.unlink()
        entry.symlink_to(victim)
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nMore.\n")
    assert invoke(*args).exit_code == 0
    assert victim.read_text() == "precious"


# --- 2. temporary files of a killed run do not accumulate ----------------------------------


def test_stale_temporary_files_of_dead_runs_are_removed(project: Path) -> None:
    old = time.time() - 3600
    dead_pid = 4_000_000  # above any pid_max: no such process
    stale = project / f".out.tar.gz.{dead_pid}.abc123.tmp"
    stale.write_bytes(b"half a bundle")
    stale_dir = project / f".wk.{dead_pid}.abc123.tmp"
    (stale_dir / "demo").mkdir(parents=True)
    live = project / f".out.tar.gz.{os.getpid()}.def456.tmp"  # a run still going
    live.write_bytes(b"in progress")
    # killed just now (kill -9): removed at once; a writer on another host would hold a lock
    fresh = project / f".out.tar.gz.{dead_pid}.fresh1.tmp"
    fresh.write_bytes(b"x")
    theirs = project / ".out.tar.gz.tmp"  # not our naming
    theirs.write_bytes(b"x")
    for path in (stale, stale_dir, live, theirs):
        os.utime(path, (old, old))
    assert invoke("pack", "--no-cache", "skills", "-o", "out.tar.gz", cwd=project).exit_code == 0
    assert invoke("pack", "--no-cache", "skills", "--well-known", "wk", cwd=project).exit_code == 0
    assert not stale.exists() and not stale_dir.exists() and not fresh.exists()
    assert live.exists() and theirs.exists()


def test_a_failed_write_leaves_no_temporary_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import skillcheck.package.bundle as bundle

    def boom(*_args, **_kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bundle, "_write_tar_gz", boom)
    result = invoke("pack", "--no-cache", "skills", "-o", "out.tar.gz", cwd=project)
    assert result.exit_code == 2
    assert "out.tar.gz: No space left on device" in result.stderr
    assert sorted(p.name for p in project.iterdir()) == ["skills"]


# --- 3. unpack --force never deletes the bundle or the working directory --------------------


def test_unpack_force_refuses_a_dest_holding_the_bundle_or_the_cwd(project: Path) -> None:
    assert invoke("pack", "--no-cache", "skills", "-o", "b.tar.gz", cwd=project).exit_code == 0
    inner = project / "skills" / "b.tar.gz"
    (project / "b.tar.gz").rename(inner)
    before = inner.read_bytes()
    cases = [
        (["unpack", "--force", "skills/b.tar.gz", "skills"], project),
        (["unpack", "--force", "../b.tar.gz", ".."], project / "skills" / "demo"),
        (["unpack", "--force", "b.tar.gz", "."], project / "skills"),
        (["unpack", "--force", str(inner), str(project)], project / "skills" / "demo"),
    ]
    for args, cwd in cases:
        result = invoke(*args, cwd=cwd)
        assert result.exit_code == 2, args
        assert "refusing" in result.stderr and "internal error" not in result.stderr
        assert inner.read_bytes() == before
        assert (project / "skills" / "demo" / "SKILL.md").exists()


# --- 4. --fix never modifies a file that is not UTF-8 --------------------------------------


@pytest.mark.parametrize("bad", [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])
def test_fix_leaves_a_non_utf8_skill_md_byte_for_byte(tmp_path: Path, bad: bytes) -> None:
    skill = tmp_path / "demo"
    skill.mkdir()
    # every safe fix has something to do: BOM, CRLF and a lone CR, delimiter whitespace,
    # description padding, an unquoted value, a field to move under metadata
    raw = (
        b"\xef\xbb\xbf---\r\nname: demo\r\ndescription: '  " + DESCRIPTION.encode() + b"  '\r\n"
        b"version: 1.0\r\nallowed-tools: [Read, Bash]\r\n--- \r\n# Steps\r\rDo it " + bad + b".\r\n"
    )
    (skill / "SKILL.md").write_bytes(raw)
    result = invoke("lint", "--fix", "--select", "ALL", "--target", "all", str(skill))
    assert result.exit_code in (0, 1)
    assert (skill / "SKILL.md").read_bytes() == raw
    diff = invoke("lint", "--diff", "--select", "ALL", "--target", "all", str(skill))
    assert diff.stdout == ""


# --- 5. every scan over file content is linear --------------------------------------------

# (file, text of size ~n): inputs that made a regex or a per-hit scan quadratic, and the
# neighbours of each pattern family (comments, links, mentions, paths, headings, code spans,
# HTML attributes, secrets)
PATHOLOGICAL: dict[str, tuple[str, Callable[[int], str]]] = {
    "unclosed-comments": ("SKILL.md", lambda n: "<!--" * (n // 4)),
    "dashes-in-comment": ("SKILL.md", lambda n: "<!--" + "-" * n),
    "mention-line": ("SKILL.md", lambda n: "scripts/b.py " * (n // 13)),
    "mention-after-example": ("SKILL.md", lambda n: "e.g. " + "scripts/x " * (n // 10)),
    "nested-mentions": ("SKILL.md", lambda n: "scripts/" * (n // 8)),
    "word-run-then-backslash": ("SKILL.md", lambda n: "a" * n + " \\\n"),
    "backslash-then-word-run": ("SKILL.md", lambda n: "x \\" + "a" * n + " \n"),
    "unc-prefix": ("SKILL.md", lambda n: "\\\\" + "a" * n + "\n"),
    "drive-letters": ("SKILL.md", lambda n: "C:\\" * (n // 3)),
    "home-path": ("SKILL.md", lambda n: "/home/" + "a/" * (n // 2)),
    "heading-spaces": ("SKILL.md", lambda n: "# a" + " \t" * (n // 2) + "x\n"),
    "open-links": ("SKILL.md", lambda n: "[a](" * (n // 4)),
    "open-destination": ("SKILL.md", lambda n: "[a](" + "a" * n + "\n"),
    "link-closers": ("SKILL.md", lambda n: "](" * (n // 2)),
    "definitions": ("SKILL.md", lambda n: "[a]: " + "a" * n + " x\n"),
    "code-span-runs": ("SKILL.md", lambda n: "`` " + "` " * (n // 2) + "\n"),
    "html-attributes": ("SKILL.md", lambda n: "<a " + "a=b " * (n // 4) + "\n"),
    "html-hrefs": ("SKILL.md", lambda n: "<a href=" * (n // 8)),
    "list-markers": ("SKILL.md", lambda n: "- " * (n // 2) + "x\n"),
    "deep-quotes": ("SKILL.md", lambda n: "> " * (n // 2) + "[a](b.md)\n"),
    "toc-items": ("SKILL.md", lambda n: "Contents\n\n- " + "](#a" * (n // 4) + "\n"),
    # each broken link's name was looked for in all of SKILL.md (SK501's output-folder test)
    "line-of-broken-links": ("SKILL.md", lambda n: "[x](out/a.md) " * (n // 14) + "\n"),
    "broken-links-many-names": (
        "SKILL.md",
        lambda n: "".join(f"[x](out/f{i}.md) w/f{i}.md " for i in range(n // 30)) + "\n",
    ),
    "repeated-broken-definitions": ("SKILL.md", lambda n: "[a]: out/b.md\n" * (n // 14)),
    "reference-comments": ("references/r.md", lambda n: "<!--" * (n // 4)),
    "reference-mentions": ("references/r.md", lambda n: "scripts/b.py " * (n // 13)),
    "reference-backslash": ("references/r.md", lambda n: "a" * n + " \\\n"),
    "script-token-run": ("scripts/a.py", lambda n: "sk-ant-a01-" + "a-" * (n // 2) + "\n"),
    "script-slack": ("scripts/a.py", lambda n: "xoxb-12345678-" * (n // 14) + "\n"),
    "script-pipe-to-shell": ("scripts/a.py", lambda n: "curl " * (n // 5) + "| sh\n"),
    # each drive letter's path ran to the end of a long word (SK508)
    "drive-letters-in-a-word": ("SKILL.md", lambda n: "C:\\$sk-" * (n // 7)),
    # the awk and code-span tests read the whole line again for each `$N` on it (SK709)
    "positional-parameters": ("SKILL.md", lambda n: "$1. scripts/ %A" * (n // 15)),
    # a tag never closed was read to the end of the text from each one (HTML links)
    "unclosed-link-tags": ("SKILL.md", lambda n: "<a x=" * (n // 5)),
    "reference-unclosed-link-tags": ("references/r.md", lambda n: "<img x=" * (n // 7)),
    # each backslash word searched back to its line's start for a drive path (SK508)
    "backslash-words-on-a-line": ("SKILL.md", lambda n: "x\\y " * (n // 4)),
    # a mention after a character a path holds (`%`, `+`, `@`) ran to the end of the word
    # from each one (SK506, SK507)
    "mentions-in-one-word": ("SKILL.md", lambda n: "scripts/%" * (n // 9)),
    # each broken link of a reference split the whole file again (SK501's template test)
    "reference-broken-html-links": ("references/r.md", lambda n: "&<a href=-->\n" * (n // 13)),
    # a quote was tried from each opening mark to the end of its line (SK305)
    "description-open-quotes": ("description", lambda n: "“a " * (n // 3)),
    "description-mixed-quotes": ("description", lambda n: "“a ‘b «c 「d " * (n // 12)),
    "description-apostrophes": ("description", lambda n: " 'a'b" * (n // 5)),
    "description-trigger-words": ("description", lambda n: "when you " * (n // 9)),
}


# cases whose quadratic term shows only on larger inputs
LONG_LINES = {
    "mention-line",
    "reference-mentions",
    "reference-broken-html-links",
    "backslash-words-on-a-line",
}


def _check_cost(tmp_path: Path, rel: str, make: Callable[[int], str]) -> Callable[[int], float]:
    """CPU seconds of every skill rule on a skill whose file ``rel`` holds ``make(n)``."""
    from skillcheck.engine.check import check_skill
    from skillcheck.rules import Context, Input, all_rules
    from skillcheck.source.load import load_skill
    from skillcheck.targets import TARGETS

    rules = [r for r in all_rules() if r.reads is Input.SKILL]
    made = itertools.count()

    def cost(n: int) -> float:
        text = make(n)
        root = tmp_path / f"s{n}-{next(made)}" / "demo"
        write_skill(
            root.parent,
            "demo",
            # "description": one line of text as the frontmatter's folded description
            frontmatter=f"name: demo\ndescription: >-\n  {text}\n"
            if rel == "description"
            else None,
            body="See [r](references/r.md) and scripts/a.py.\n" if rel != "SKILL.md" else text,
            files={"references/r.md": "# R\n", "scripts/a.py": "print(1)\n"},
        )
        if rel not in ("SKILL.md", "description"):
            (root / rel).write_text(text, encoding="utf-8")
        ctx = Context(targets=tuple(TARGETS))
        return cpu_seconds(lambda: check_skill(load_skill(root, "demo"), rules, ctx))

    return cost


@pytest.mark.slow  # times every rule on inputs of up to 240,000 characters
@pytest.mark.parametrize("case", sorted(PATHOLOGICAL))
def test_every_rule_is_linear_on_pathological_input(tmp_path: Path, case: str) -> None:
    rel, make = PATHOLOGICAL[case]
    # the unclosed-comment scan took 1.5 s at 20,000 before it was made linear; the per-hit
    # prefix search of SK507 needs longer lines to show
    n = 60_000 if case in LONG_LINES else 20_000
    assert_linear(_check_cost(tmp_path, rel, make), n, slack=0.5, what=case)


# Markdown the parser reads where a position mapping or a definition pass could grow faster
# than the text: columns after wide characters on one long line, repeated definitions (read
# beside the parser), deep nests
MARKDOWN_PATHOLOGICAL: dict[str, Callable[[int], str]] = {
    "wide-line-of-links": lambda n: "[é](references/q.md) `ü` 表 <b id=x> " * (n // 36),
    "repeated-definitions": lambda n: "[a]: b.md\n" * (n // 10) + "[a]\n",
    "repeated-definitions-in-items": lambda n: "- [a]: b.md\n  > [A]: c.md\n" * (n // 26),
    "deep-quotes-and-lists": lambda n: "> - " * (n // 4) + "[a](b.md) é\n",
    "open-brackets": lambda n: "[" * n + "](b.md)\n",
}


@pytest.mark.slow  # times the parser on 240,000 characters
@pytest.mark.parametrize("case", sorted(MARKDOWN_PATHOLOGICAL))
def test_markdown_parse_is_linear(case: str) -> None:
    from skillcheck.source import markdown

    def cost(n: int) -> float:
        lines = MARKDOWN_PATHOLOGICAL[case](n).split("\n")
        # the segments are computed on demand: time them too
        return cpu_seconds(lambda: markdown.parse(lines).segments)

    assert_linear(cost, 60_000, what=case)


def _collection_cost(tmp_path: Path) -> Callable[[int], float]:
    """CPU seconds of SK802 on two skills sharing a description of about n characters (the
    skills' summaries made beforehand, untimed)."""
    from skillcheck.engine.check import check_collection, check_skill
    from skillcheck.engine.summary import summarise
    from skillcheck.rules import Context, all_rules
    from skillcheck.source.load import load_skill
    from skillcheck.targets import TARGETS

    rules = all_rules()
    sk802 = [r for r in rules if r.code == "SK802"]
    ctx = Context(targets=tuple(TARGETS))
    made = itertools.count()

    def cost(n: int) -> float:
        # SK802 reads the names a description writes to tell two similar ones apart
        description = "Reads PDF files with Alpha Beta Gamma tools. " * (n // 46)
        tree = tmp_path / f"c{n}-{next(made)}"
        for name in ("pdf-one", "pdf-two"):
            write_skill(tree, name, frontmatter=f"name: {name}\ndescription: {description}\n")
        skills = [load_skill(tree / name, name) for name in ("pdf-one", "pdf-two")]
        summaries = [summarise(skill, check_skill(skill, rules, ctx), ctx) for skill in skills]
        found: list = []
        seconds = cpu_seconds(lambda: found.extend(check_collection(summaries, sk802, ctx)))
        assert [d.code for d in found] == ["SK802"]
        return seconds

    return cost


@pytest.mark.slow  # times SK802 on 800,000 characters
def test_the_collection_rules_are_linear_in_a_long_description(tmp_path: Path) -> None:
    # it sliced the text before each capitalised word (25 s for a 1.3 MB description)
    assert_linear(_collection_cost(tmp_path), 200_000, what="SK802")


# --- 6. one skill's bad input never aborts the run -----------------------------------------


@pytest.mark.parametrize(
    "yaml_field",
    [
        "r: &r [*r]",
        "r: &r {a: *r}",
        "r: &r\n  a:\n    - *r",
        "r: &r\n  <<: *r",
        "r: &r [[[*r]]]",
        "metadata: &m\n  x: [1, *m]",
    ],
)
def test_recursive_yaml_alias_is_that_skills_error(tmp_path: Path, yaml_field: str) -> None:
    write_skill(
        tmp_path, "bad", frontmatter=f"name: bad\ndescription: {DESCRIPTION}\n{yaml_field}\n"
    )
    write_skill(tmp_path, "other", body="See [x](missing.md).\n")
    result = invoke("lint", "--no-cache", "--format", "json", str(tmp_path))
    assert result.exit_code == 1, result.stderr
    report = json.loads(result.stdout)
    codes = {(d["path"].split("/")[-2], d["code"]) for d in report["diagnostics"]}
    assert ("bad", "SK115") in codes
    assert ("other", "SK501") in codes


# --- 7. ordinary OS conditions are one-line messages, exit 2 ---------------------------------


def _one_line(stderr: str, *needles: str) -> None:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    for needle in needles:
        assert needle in lines[0], stderr


@pytest.mark.parametrize("writer", ["lint-json", "catalog-json", "catalog-xml", "pack-tar"])
def test_full_disk_is_a_clean_error(project: Path, writer: str) -> None:
    # a private copy of /dev/full: code that replaces its output would replace only the copy
    full = project / "full"
    try:
        os.mknod(full, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except (PermissionError, AttributeError):
        pytest.skip("creating a device node needs root")
    result = invoke(*WRITERS[writer], "--output", "full", cwd=project)
    assert result.exit_code == 2
    _one_line(result.stderr, "full", "No space left on device")
    assert stat.S_ISCHR(os.lstat(full).st_mode)


def test_unwritable_destinations_are_clean_errors(project: Path) -> None:
    assert invoke("pack", "--no-cache", "skills", "-o", "b.tar.gz", cwd=project).exit_code == 0
    readonly = Path("/proc/self")  # no one may create anything there, root included
    cases = [
        ["pack", "--no-cache", "skills", "-o", f"{readonly}/x.tar.gz"],
        ["pack", "--no-cache", "skills", "--well-known", f"{readonly}/wk"],
        ["catalog", "--no-cache", "skills", "-o", f"{readonly}/x.json"],
        ["lint", "--no-cache", "skills", "-o", f"{readonly}/x.txt"],
        ["unpack", "b.tar.gz", f"{readonly}/d"],
    ]
    for args in cases:
        result = invoke(*args, cwd=project)
        assert result.exit_code == 2, args
        _one_line(result.stderr, str(readonly))


def test_closed_stdout_is_a_clean_error(project: Path) -> None:
    command = " ".join(skillcheck_command())
    for args in ("lint --no-cache skills", "catalog --no-cache skills", "rules"):
        done = subprocess.run(
            ["sh", "-c", f"exec {command} {args} >&-"],
            cwd=project,
            capture_output=False,
            stderr=subprocess.PIPE,
            timeout=60,
        )
        assert done.returncode == 2, args
        stderr = done.stderr.decode()
        assert "internal error" not in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("kind", ["fifo", "directory", "device", "missing"])
def test_config_that_is_not_a_file_says_what_it_is(project: Path, kind: str) -> None:
    path = project / "conf.toml"
    expected = {
        "fifo": "not a regular file",
        "directory": "is a directory",
        "device": "not a regular file",
        "missing": "no such configuration file",
    }[kind]
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "device":
        path = Path("/dev/zero")
    done = run_skillcheck("lint", "--config", str(path), "skills", cwd=project, timeout=60)
    assert done.returncode == 2
    _one_line(done.stderr.decode(), str(path), expected)


# --- 8. a skill that could not be fully checked does not pass ------------------------------


@pytest.mark.parametrize("bound", ["entries", "depth"])
def test_partly_checked_skill_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: str
) -> None:
    import skillcheck.source.load as load

    skill = write_skill(tmp_path, "demo")
    if bound == "entries":
        monkeypatch.setattr(load, "MAX_WALK_ENTRIES", 20)
        for i in range(30):
            (skill / "assets").mkdir(exist_ok=True)
            (skill / "assets" / f"f{i:02}.txt").write_text("x")
    else:
        monkeypatch.setattr(load, "MAX_WALK_DEPTH", 3)
        (skill / "a" / "b" / "c" / "d").mkdir(parents=True)
        (skill / "a" / "b" / "c" / "d" / "key.txt").write_text("x")
    result = invoke("lint", "--no-cache", "--jobs", "1", "--format", "json", str(skill))
    assert result.exit_code == 1
    found = [d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == "SK100"]
    assert found and all(d["severity"] == "error" for d in found)


# --- 9. the cache trust model ----------------------------------------------------------------


def test_action_never_uses_a_restored_cache() -> None:
    """A cache restored from another branch or fork could hold entries without findings: the
    Action's runs read no cache at all."""
    action = (ROOT / "action.yml").read_text(encoding="utf-8")
    runs = re.findall(r'"\$SKILLCHECK" lint[^\n]*(?:\\\n[^\n]*)*', action)
    assert runs
    for run in runs:
        assert "--no-cache" in run, run
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "### Cache trust model" in readme


# --- 10-12. bundles: every byte of a zip accounted for, bounded reads, integer sizes -------


def _zip_bundle(tmp_path: Path) -> bytes:
    write_skill(tmp_path / "src", "demo", files={"scripts/run.sh": "#!/bin/sh\necho hi\n"})
    out = tmp_path / "b.zip"
    assert (
        invoke(
            "pack", "--no-cache", "--format", "zip", "-o", str(out), str(tmp_path / "src")
        ).exit_code
        == 0
    )
    return out.read_bytes()


def _eocd(data: bytes) -> tuple[int, int, int]:
    end = data.rindex(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack("<II", data[end + 12 : end + 20])
    return end, cd_size, cd_offset


def _local_record(name: str, payload: bytes) -> bytes:
    """The local header and data of a one-member zip, as a streaming reader sees them."""
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w") as zf:
        zf.writestr(name, payload)
    data = raw.getvalue()
    return data[: _eocd(data)[2]]


def _shift(data: bytes, at: int, inserted: bytes) -> bytes:
    """Insert bytes at ``at`` (before the central directory) and fix every offset after it."""
    end, _cd_size, cd_offset = _eocd(data)
    central = bytearray(data[cd_offset:end])
    pos = 0
    while pos < len(central):
        (offset,) = struct.unpack("<I", central[pos + 42 : pos + 46])
        if offset >= at:
            central[pos + 42 : pos + 46] = struct.pack("<I", offset + len(inserted))
        name_len, extra_len, comment_len = struct.unpack("<HHH", central[pos + 28 : pos + 34])
        pos += 46 + name_len + extra_len + comment_len
    tail = bytearray(data[end:])
    tail[16:20] = struct.pack("<I", cd_offset + len(inserted))
    return data[:at] + inserted + data[at:cd_offset] + bytes(central) + bytes(tail)


def _tamper(data: bytes, how: str) -> bytes:
    _end, _size, cd_offset = _eocd(data)
    hidden = _local_record("demo/scripts/evil.sh", b"#!/bin/sh\nrm -rf ~\n")
    if how == "hidden-entry-before-central-directory":
        return _shift(data, cd_offset, hidden)
    if how == "hidden-entry-first":
        return _shift(data, 0, hidden)
    if how == "gap-between-entries":
        second = data.index(b"PK\x03\x04", 4)
        return _shift(data, second, b"\0" * 64)
    if how == "local-size-differs":
        out = bytearray(data)
        (size,) = struct.unpack("<I", out[18:22])
        out[18:22] = struct.pack("<I", size + 1)
        return bytes(out)
    if how == "local-name-differs":
        out = bytearray(data)
        name_len = struct.unpack("<H", out[26:28])[0]
        out[30 + name_len - 1] ^= 0x01
        return bytes(out)
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    [
        "hidden-entry-before-central-directory",
        "hidden-entry-first",
        "gap-between-entries",
        "local-size-differs",
        "local-name-differs",
    ],
)
def test_zip_with_unaccounted_bytes_is_refused(tmp_path: Path, how: str) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(_tamper(_zip_bundle(tmp_path), how))
    result = invoke("verify", str(bad))
    assert result.exit_code == 1, result.stdout
    assert str(bad) in result.stderr
    dest = tmp_path / "dest"
    assert invoke("unpack", str(bad), str(dest)).exit_code == 1
    assert not dest.exists()
    with pytest.raises(BundleError):
        open_bundle(bad)


def test_loader_zip_reads_are_bounded_by_the_manifest(tmp_path: Path) -> None:
    path = tmp_path / "b.zip"
    path.write_bytes(_zip_bundle(tmp_path))
    loaded = open_bundle(path)
    # swapped on disk for a zip whose SKILL.md inflates to 64 MiB
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demo/SKILL.md", bytes(64 << 20))
    path.write_bytes(raw.getvalue())
    tracemalloc.start()
    try:
        with pytest.raises(BundleError, match="longer than its declared size"):
            loaded.read_bytes("demo")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def _tar_bundle(size: object) -> bytes:
    data = f"---\nname: demo\ndescription: {DESCRIPTION}\n---\n# Demo\n".encode()
    entry: dict = {"path": "SKILL.md", "digest": file_digest(data), "executable": False}
    if size != "missing":
        entry["size"] = size
    manifest = {
        "version": "0.2.0",
        "generator": "skillcheck test",
        "skills": [
            {
                "name": "demo",
                "description": DESCRIPTION,
                "digest": skill_digest([("SKILL.md", entry["digest"])]),
                "files": [entry],
            }
        ],
    }
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, payload in (("manifest.json", dumps_manifest(manifest)), ("demo/SKILL.md", data)):
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(payload))
    return gzip.compress(raw.getvalue(), mtime=0)


@pytest.mark.parametrize("size", ["missing", "float", "bool", "string"])
def test_manifest_sizes_must_be_integers(tmp_path: Path, size: str) -> None:
    data = f"---\nname: demo\ndescription: {DESCRIPTION}\n---\n# Demo\n".encode()
    value = {"missing": "missing", "float": float(len(data)), "bool": True, "string": "79"}[size]
    path = tmp_path / "b.tar.gz"
    path.write_bytes(_tar_bundle(value))
    result = invoke("verify", str(path))
    assert result.exit_code == 1
    assert str(path) in result.stderr
    with pytest.raises(BundleError):
        open_bundle(path)


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
@pytest.mark.parametrize("damage", ["truncated", "garbage", "removed", "directory"])
def test_every_loader_failure_is_a_bundle_error(tmp_path: Path, fmt: str, damage: str) -> None:
    write_skill(tmp_path / "src", "demo")
    path = tmp_path / f"b.{fmt}"
    args = ["pack", "--no-cache", "--format", fmt, "-o", str(path), str(tmp_path / "src")]
    assert invoke(*args).exit_code == 0
    loaded = open_bundle(path)
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(os.urandom(len(data)))
    elif damage == "removed":
        path.unlink()
    else:
        path.unlink()
        path.mkdir()
    with pytest.raises(BundleError):
        loaded.read_bytes("demo")


# --- 13. no raw terminal escapes in human-readable lines ----------------------------------


def test_bundle_commands_escape_control_characters(project: Path) -> None:
    name = "b\x1b]0;owned\x07\x1b[31m.tar.gz"
    outputs = []
    for args in (
        ["pack", "--no-cache", "skills", "-o", name],
        ["verify", name],
        ["unpack", name, "out\x1b[2J"],
    ):
        result = invoke(*args, cwd=project)
        assert result.exit_code == 0, (args, result.stderr)
        outputs += [result.stdout, result.stderr]
    (project / name).write_bytes(b"not a bundle")
    for args in (["verify", name], ["unpack", name, "x"], ["verify", "missing\x1b[1m.zip"]):
        result = invoke(*args, cwd=project)
        assert result.exit_code in (1, 2)
        outputs += [result.stdout, result.stderr]
    for text in outputs:
        assert "\x1b" not in text and "\x07" not in text


def test_catalog_xml_has_no_raw_control_characters(tmp_path: Path) -> None:
    write_skill(
        tmp_path,
        "demo",
        frontmatter='name: demo\ndescription: "Extracts text\\e[31m from PDF files. Use when'
        ' the user asks about PDFs."\n',
    )
    result = invoke("catalog", "--no-cache", "--format", "xml", str(tmp_path))
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\ufffd[31m" in result.stdout


# --- exit codes: one meaning each, per command ---------------------------------------------


def test_exit_codes_per_command(project: Path) -> None:
    def code(*args: str) -> int:
        return invoke(*args, cwd=project).exit_code

    assert code("pack", "--no-cache", "skills", "-o", "b.tar.gz") == 0
    (project / "corrupt.zip").write_bytes(b"PK\x03\x04 not really")
    (project / "full").mkdir()
    (project / "full" / "x").write_text("x")
    table = [
        # usage, configuration, I/O: 2
        (["lint", "--no-cache", "missing-dir"], 2),
        (["lint", "--no-cache", "skills", "-o", "missing-dir/x.txt"], 2),
        (["catalog", "--no-cache", "skills", "-o", "missing-dir/x.json"], 2),
        (["pack", "--no-cache", "skills", "-o", "missing-dir/x.tar.gz"], 2),
        (["verify", "missing.zip"], 2),
        (["unpack", "missing.zip", "d"], 2),
        (["unpack", "b.tar.gz", "full"], 2),
        (["lint", "--no-such-option"], 2),
        (["verify", "--expect-digest", "md5:x", "b.tar.gz"], 2),
        (["pack", "--no-cache", "skills", "-o", "skills/demo/x.tar.gz"], 2),
        (["pack", "--no-cache", "skills", "-o", "x.tar.gz", "--mtime", "-1"], 2),
        (["rule", "SK9999"], 2),
        # content refused: 1
        (["verify", "corrupt.zip"], 1),
        (["verify", "--expect-digest", "sha256:" + "0" * 64, "b.tar.gz"], 1),
        (["unpack", "corrupt.zip", "d"], 1),
        # clean: 0
        (["lint", "--no-cache", "skills"], 0),
        (["verify", "b.tar.gz"], 0),
        # a well-known DIR and its parents are created (the discovery RFC issue)
        (["pack", "--no-cache", "skills", "--well-known", "missing-dir/wk"], 0),
    ]
    for args, expected in table:
        assert code(*args) == expected, args
    write_skill(project / "bad", "bad", body="See [x](missing.md).\n")
    assert code("lint", "--no-cache", "bad") == 1
    assert code("catalog", "--no-cache", "bad") == 1
    assert code("pack", "--no-cache", "bad", "-o", "x.tar.gz") == 1


def test_readme_documents_the_exit_codes() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Exit codes", 1)[1].split("\n#", 1)[0]
    rows = {
        line.split("|")[1].strip(" `") for line in section.splitlines() if line.startswith("| `")
    }
    assert rows == {"0", "1", "2", "130"}
