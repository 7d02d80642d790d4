"""Path safety under adversarial skill trees built here (git cannot hold most of them).

`..` chains, absolute links, symlink loops, symlinks to /etc, links through symlinked
folders, look-alike names, FIFOs and sockets: every case is reported (no false pass), the
run ends quickly with exit 1 and no traceback (no crash, no hang), and nothing outside the
skill is ever opened: an audit hook records every ``open`` during an in-process lint and a
sentinel file outside the skill must never appear, nor anything under /etc.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

import pytest
from conftest import run_skillcheck, write_skill

from skillcheck.engine.lint import lint
from skillcheck.settings import Settings

FM = "name: {name}\ndescription: Extracts text from PDF files. Use when the user asks about PDFs.\n"

_AUDIT: list[str] | None = None


def _audit(event: str, args: tuple) -> None:
    if _AUDIT is not None and event == "open" and args:
        path = args[0]
        if isinstance(path, (str, bytes, os.PathLike)):
            _AUDIT.append(os.fsdecode(os.fspath(path)))


sys.addaudithook(_audit)  # hooks cannot be removed: it records only while _AUDIT is a list


def where(text: str, needle: str) -> tuple[int, int]:
    index = text.index(needle)
    return text.count("\n", 0, index) + 1, index - (text.rfind("\n", 0, index) + 1) + 1


@pytest.fixture
def hostile(tmp_path: Path) -> tuple[Path, Path]:
    """A skill whose links and symlinks all try to reach ``outside/sentinel.txt`` or /etc."""
    outside = tmp_path / "outside"
    outside.mkdir()
    sentinel = outside / "sentinel.txt"
    sentinel.write_text("secret\n", encoding="utf-8")
    (outside / "page.md").write_text("# Outside\n\n[x](sentinel.txt)\n", encoding="utf-8")
    body = (
        "\n# PDF tools\n\n"
        "1. [dotdot](../outside/sentinel.txt)\n"
        f"2. [chain]({'../' * 200}etc/passwd)\n"
        "3. [inner](references/../../outside/sentinel.txt)\n"
        f"4. [absolute]({sentinel})\n"
        "5. [etc](/etc/passwd)\n"
        f"6. [url](file://{sentinel})\n"
        "7. [through-etc](etc/passwd)\n"
        "8. [through-out](out/sentinel.txt)\n"
        "9. [through-up](up/outside/sentinel.txt)\n"
        "10. [loop](loop-a/x.md)\n"
        "11. [self](self/self/self/self/references/api.md)\n"
        "12. [lookalike](references/аpi.md)\n"
        "13. [pipe](references/pipe.md)\n"
        "14. [page](out/page.md#outside)\n"
        "15. [home](~/notes.md)\n"
        "16. [windows](C:\\Windows\\win.ini)\n\n"
        f"[def]: {outside}/page.md\n"
    )
    skill = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=FM.format(name="pdf-tools"),
        body=body,
        files={"references/api.md": "# API\n"},
    )
    os.symlink("/etc", skill / "etc")
    os.symlink("../outside", skill / "out")
    os.symlink("..", skill / "up")
    os.symlink("loop-b", skill / "loop-a")
    os.symlink("loop-a", skill / "loop-b")
    os.symlink(".", skill / "self")
    os.symlink(str(sentinel), skill / "references" / "sentinel.md")
    os.symlink("/etc/passwd", skill / "references" / "passwd.md")
    os.mkfifo(skill / "references" / "pipe.md")
    return skill, outside


EXPECTED_LINKS = {
    "../outside/sentinel.txt": "SK502",
    "../../../": "SK502",
    "references/../../outside": "SK502",
    "/outside/sentinel.txt)": "SK502",
    "/etc/passwd)": "SK502",
    "file://": "SK502",
    "etc/passwd)": "SK502",
    "out/sentinel.txt": "SK502",
    "up/outside": "SK502",
    "loop-a/x.md": "SK501",
    "references/аpi.md": "SK501",
    "out/page.md": "SK502",
    "~/notes.md": "SK502",
    "C:\\Windows": "SK502",
    "/outside/page.md\n": "SK502",
}


def test_hostile_tree_is_reported_without_crash_or_hang(hostile):
    skill, _outside = hostile
    proc = run_skillcheck("lint", "--isolated", "--format", "json", str(skill), timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert b"Traceback" not in proc.stderr
    report = json.loads(proc.stdout)
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    found = {
        (Path(d["path"]).name, d["line"], d["column"], d["code"]) for d in report["diagnostics"]
    }
    for needle, code in EXPECTED_LINKS.items():
        # the needle may start before the destination (absolute paths): find the line
        line = text.count("\n", 0, text.index(needle)) + 1
        hits = {c for name, ln, _col, c in found if name == "SKILL.md" and ln == line}
        assert code in hits, (needle, hits)
    by_name = {(Path(d["path"]).name, d["code"]) for d in report["diagnostics"]}
    for name in ("etc", "out", "up", "loop-a", "loop-b", "self", "sentinel.md", "passwd.md"):
        assert (name, "SK509") in by_name, name
    assert ("pipe.md", "SK511") in by_name
    # the link to the FIFO is not broken: the file exists, and it is never opened
    pipe_line = text.count("\n", 0, text.index("references/pipe.md")) + 1
    assert not any(ln == pipe_line and name == "SKILL.md" for name, ln, _c, _code in found)
    assert "U+0430 CYRILLIC SMALL LETTER A" in json.dumps(report["diagnostics"])


def test_nothing_outside_the_skill_is_ever_opened(hostile, reads):
    global _AUDIT
    skill, outside = hostile
    _AUDIT = []
    try:
        result = lint([skill], Settings(targets=("agentskills",)))
    finally:
        opened, _AUDIT = _AUDIT, None
    assert result.diagnostics  # the run did look at everything
    assert str(skill / "SKILL.md") in opened  # the hook sees the opens that do happen
    real_skill = str(skill.resolve())
    for path in opened:
        resolved = os.path.realpath(path)
        assert not resolved.startswith(str(outside.resolve())), path
        assert not resolved.startswith("/etc/"), path
        assert not resolved.endswith("pipe.md"), path
    assert reads  # the wrapper sees the reads that do happen
    for path in reads:
        assert os.path.realpath(path).startswith(real_skill + os.sep), path
    assert all(n == 1 for n in reads.values())


def test_links_through_a_symlinked_folder_inside_the_skill_resolve(tmp_path):
    skill = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=FM.format(name="pdf-tools"),
        body="\n# PDF\n\nSee [api](docs/api.md), [gone](docs/gone.md),"
        " [up](docs/../references/api.md).\n",
        files={"references/api.md": "# API\n"},
    )
    os.symlink("references", skill / "docs")
    text = (skill / "SKILL.md").read_text(encoding="utf-8")
    result = lint([skill], Settings())
    got = sorted((d.path.name, d.line, d.column, d.code) for d in result.diagnostics)
    # docs/.. is the skill root (the kernel applies '..' after following the link), so the
    # third link is fine; the folder link itself gets a warning
    assert got == sorted(
        [("SKILL.md", *where(text, "docs/gone.md"), "SK501"), ("docs", 1, 1, "SK510")]
    )


@pytest.mark.parametrize(
    ("on_disk", "written", "code", "detail"),
    [
        ("api.md", "аpi.md", "SK501", "U+0430 CYRILLIC SMALL LETTER A"),
        ("аpi.md", "api.md", "SK501", "U+0061 LATIN SMALL LETTER A"),
        ("résumé.md", "re\u0301sume\u0301.md", "SK503", "Unicode normalization"),
        ("Api.md", "api.md", "SK503", "differs in case"),
    ],
)
def test_look_alike_names_never_pass(tmp_path, on_disk, written, code, detail):
    skill = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=FM.format(name="pdf-tools"),
        body=f"\n# PDF\n\nSee [it](references/{written}).\n",
        files={f"references/{on_disk}": "# Doc\n"},
    )
    result = lint([skill], Settings())
    codes = [(d.code, d.message) for d in result.diagnostics if d.code in ("SK501", "SK503")]
    assert len(codes) == 1 and codes[0][0] == code, codes
    assert detail in codes[0][1]


def test_special_files_are_reported_and_never_opened(tmp_path):
    global _AUDIT
    skill = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=FM.format(name="pdf-tools"),
        body="\n# PDF\n\nRun `scripts/run.py` and read [the notes](references/notes.md).\n",
    )
    (skill / "scripts").mkdir()
    (skill / "references").mkdir()
    os.mkfifo(skill / "scripts" / "run.py")
    os.mkfifo(skill / "references" / "notes.md")
    sock = socket.socket(socket.AF_UNIX)
    old = Path.cwd()
    os.chdir(skill / "scripts")  # AF_UNIX paths are short: bind relative to the folder
    try:
        sock.bind("server.sock")
    finally:
        os.chdir(old)
    _AUDIT = []
    try:
        result = lint([skill], Settings())
    finally:
        opened, _AUDIT = _AUDIT, None
        sock.close()
    got = sorted((d.path.name, d.code) for d in result.diagnostics)
    assert got == [("notes.md", "SK511"), ("run.py", "SK511"), ("server.sock", "SK511")]
    assert not [p for p in opened if p.endswith(("run.py", "notes.md", "server.sock"))]


def test_pathological_markdown_ends_in_bounded_time(tmp_path):
    # 60,000 open brackets, 3,000 nested quotes, 3,000 definitions: bounded time, no crash
    body = "\n" + "[" * 60_000 + "](missing.md)\n\n" + "> " * 3000 + "[x](y.md)\n\n"
    body += "".join(f"[l{i}]: gone-{i}.md\n" for i in range(3000))
    skill = write_skill(tmp_path, "pdf-tools", frontmatter=FM.format(name="pdf-tools"), body=body)
    proc = run_skillcheck("lint", "--isolated", "--select", "SK5", str(skill), timeout=60)
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr
    assert proc.stdout.count(b"SK501") >= 3001


def test_symlink_verdicts(tmp_path):
    skill = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=FM.format(name="pdf-tools"),
        body="\n# PDF\n\nRead [v2](references/v2.md).\n",
        files={"references/v2.md": "# V2\n"},
    )
    refs = skill / "references"
    links = {
        "latest.md": ("v2.md", "SK510"),
        "folder": (".", "SK509"),  # a folder holding the link: a cycle for followers
        "sibling": ("../scripts", "SK510"),
        "dangling.md": ("nope.md", "SK509"),
        "outside.md": ("../../x.md", "SK509"),
        "abs.md": (str(refs / "v2.md"), "SK509"),  # absolute, even if it points inside
        "chain.md": ("latest.md", "SK510"),
    }
    (skill / "scripts").mkdir()
    for name, (target, _code) in links.items():
        os.symlink(target, refs / name)
    result = lint([skill], Settings())
    got = {(d.path.name, d.code) for d in result.diagnostics if d.code in ("SK509", "SK510")}
    assert got == {(name, code) for name, (_t, code) in links.items()}


def test_non_portable_names_built_on_disk(tmp_path):
    skill = write_skill(
        tmp_path,
        "pdf-tools",
        frontmatter=FM.format(name="pdf-tools"),
        body="\n# PDF\n\nExtract text.\n",
    )
    names = {
        b"README.md": None,
        b"readme.md": "SK904",
        b"LPT1.txt": "SK905",
        b"Con": "SK905",
        b"why?.md": "SK906",
        b"scripts\\run.py": "SK906",
        b"trail.": "SK907",
        b"space ": "SK907",
        b"bell\x07.md": "SK908",
        b"latin1-\xe9.md": "SK908",
        "cafe\u0301.md".encode(): "SK909",
    }
    for name in names:
        with open(os.path.join(os.fsencode(skill), name), "wb") as handle:
            handle.write(b"x\n")
    proc = run_skillcheck("lint", "--isolated", "--format", "json", str(skill), timeout=60)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr
    report = json.loads(proc.stdout.decode("utf-8", "surrogateescape"))
    got = sorted(d["code"] for d in report["diagnostics"])
    assert got == sorted(code for code in names.values() if code)
