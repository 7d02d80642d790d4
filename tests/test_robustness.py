"""Hostile input, end to end: each input below is linted by the installed command in every
output format, then catalogued and packed, and every run must end in bounded time with the
right exit code, the expected diagnostics at their places, no traceback, nothing raw on the
terminal, and well-formed output (JSON and SARIF valid against their schemas, JUnit XML that
parses, one GitHub workflow command per diagnostic and nothing else).

The inputs are built once per module in a temporary directory: FIFOs, sockets, loops,
unreadable files, 50 MB files and undecodable file names cannot be committed. Each case is a
directory holding one or more skills, and each run handles one case.

Catalog and pack run with every rule ignored, so they get past their lint gate and must
cope with the hostile content themselves (exit 1 with a one-line reason, or a manifest that
validates and a bundle that verifies).

Cost: 17 cases, ~120 runs of 0.2-3 s CPU, started ahead on a pool of one worker per core.
The 20,000-key frontmatter (20,000 diagnostics) runs in the three formats whose size grows
per diagnostic in their own way, the 50 MB file in text, JSON and SARIF (each run reads its
first 8 MiB and reports 4 diagnostics), both through catalog and pack too.
Reports of more than 600 diagnostics are validated on their first and last 300.
The wall bound per run is a hang detector, not a speed test.
"""

from __future__ import annotations

import codecs
import json
import os
import random
import re
import shutil
import socket
import subprocess
import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import run_skillcheck, skillcheck_command, write_skill
from test_discover import _unprivileged

# every hostile tree through every command and format, and trees changing during runs
pytestmark = pytest.mark.slow

FORMATS = ("text", "json", "sarif", "github", "junit", "html")
SARIF_SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
TIMEOUT = 120.0  # a hang guard: then the subprocess is killed and the test fails
DESC = "Extracts text and tables from PDF files. Use when the user asks about PDFs."
# properties are escaped (`:` is %3A), so the first `::` after the name ends them; the
# message may hold `::` (the runner reads one command per line)
GITHUB_LINE = re.compile(r"^::(error|warning|notice) file=[^:\r\n]*::[^\r\n]*$")
# a config that switches every rule off, so catalog and pack get past their lint gate
# and must cope with the hostile content themselves
NO_RULES = 'ignore = ["ALL"]\n'


def _fm(name: str, extra: str = "") -> str:
    return f"name: {name}\ndescription: {DESC}\n{extra}"


def _skill_md(directory: Path, raw: bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_bytes(raw)
    return directory


def _unix_socket(path: Path) -> None:
    """A socket file on disk (it stays after the socket is closed)."""
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
    finally:
        sock.close()


# --- the inputs -----------------------------------------------------------------------------


def build_billion_laughs(case: Path) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{cur}: &{cur} [{','.join(['*' + prev] * 9)}]")
    write_skill(case, "billion-laughs", frontmatter=_fm("billion-laughs", "\n".join(lines) + "\n"))


def build_deep_flow(case: Path) -> None:
    deep = "[" * 10_000 + "]" * 10_000
    write_skill(case, "deep-flow", frontmatter=_fm("deep-flow", f"nested: {deep}\n"))


def build_alias_chain(case: Path) -> None:
    # each anchor wraps the previous alias: expanding the last one nests 2,000 lists
    lines = ["a0: &a0 lol"] + [f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, 2_000)]
    lines.append("metadata: *a1999")
    write_skill(case, "alias-chain", frontmatter=_fm("alias-chain", "\n".join(lines) + "\n"))


def build_deep_block_yaml(case: Path) -> None:
    # compact block sequences: `- - - v` nests one level per dash
    write_skill(
        case, "deep-block-yaml", frontmatter=_fm("deep-block-yaml", "x:\n" + "- " * 10_000 + "v\n")
    )


def build_many_keys(case: Path) -> None:
    keys = "".join(f"key{i:05d}: value {i}\n" for i in range(20_000))
    write_skill(case, "many-keys", frontmatter=_fm("many-keys", keys))


def build_huge(case: Path) -> None:
    skill = case / "huge-skill"
    skill.mkdir(parents=True)
    chunk = b"Extract the text, then check every table against the source.\n" * 16_384
    with open(skill / "SKILL.md", "wb") as out:
        out.write(f"---\n{_fm('huge-skill')}---\n# Steps\n\n".encode())
        while out.tell() < 50 * 1024 * 1024:
            out.write(chunk)


# After the deep block, a broken link at the top level: the nesting must neither crash the
# parser nor hide what follows it (the parser has no nesting limit and reads the nest in
# linear time: the link inside it is reported too).
# (another folder than the nest's link: links into one missing folder are one finding)
TAIL = "\n\nThen read [the guide](guides/missing.md).\n"


def build_deep_quotes(case: Path) -> None:
    body = "# Steps\n\n" + "> " * 10_000 + "[deep](references/deep.md)" + TAIL
    write_skill(case, "deep-quotes", body=body)


def build_deep_lists(case: Path) -> None:
    body = "# Steps\n\n" + "- " * 10_000 + "[deep](references/deep.md)\n\n" + "1. " * 10_000
    write_skill(case, "deep-lists", body=body + "item" + TAIL)


def build_binary_skill_md(case: Path) -> None:
    _skill_md(case / "binary-skill", random.Random(6).randbytes(64 * 1024))


def build_binary_references(case: Path) -> None:
    noise = random.Random(7)
    write_skill(
        case,
        "binary-refs",
        body="# Steps\n\nRead [the guide](references/guide.md#usage), [data](assets/blob.bin)"
        " and run `scripts/run.py`.\n",
        files={
            "references/guide.md": noise.randbytes(200_000),
            "assets/blob.bin": noise.randbytes(50_000),
            "scripts/run.py": b"#!" + noise.randbytes(4_000),
        },
    )


def build_nul_bytes(case: Path) -> None:
    raw = f"---\nname: nul-bytes\ndescription: {DESC}\x00 more\n---\n# Ste\x00ps\n\nDo\x00 it.\n"
    _skill_md(case / "nul-bytes", raw.encode())
    write_skill(case, "nul-body", body="# Steps\n\nDo \x00 it [x](a\x00b.md).\n")


def build_utf16(case: Path) -> None:
    for label, encoding, bom in (
        ("le-bom", "utf-16-le", codecs.BOM_UTF16_LE),
        ("be-bom", "utf-16-be", codecs.BOM_UTF16_BE),
        ("le-plain", "utf-16-le", b""),
        ("be-plain", "utf-16-be", b""),
    ):
        name = f"utf16-{label}"
        text = f"---\n{_fm(name)}---\n# Steps\n\nDo the thing.\n"
        _skill_md(case / name, bom + text.encode(encoding))


def build_fifos_and_sockets(case: Path) -> None:
    (case / "fifo-skill").mkdir(parents=True)
    os.mkfifo(case / "fifo-skill" / "SKILL.md")
    (case / "socket-skill").mkdir()
    _unix_socket(case / "socket-skill" / "SKILL.md")
    skill = write_skill(
        case,
        "holds-specials",
        body="# Steps\n\nRead [the pipe](references/pipe.md) and [the socket](scripts/sock).\n",
        files={"references/.keep": ""},
    )
    (skill / "scripts").mkdir()
    os.mkfifo(skill / "references" / "pipe.md")
    _unix_socket(skill / "scripts" / "sock")
    os.mkfifo(case / "pipe-beside-skills")  # outside any skill, in the searched tree


def build_symlink_loops(case: Path) -> None:
    skill = write_skill(
        case,
        "loopy",
        body="# Steps\n\nSee [a](loop-a), [self](self), [deep](dirloop/dirloop/SKILL.md),"
        " [up](up/loopy/SKILL.md) and `references/loop-a`.\n",
    )
    (skill / "loop-a").symlink_to("loop-b")
    (skill / "loop-b").symlink_to("loop-a")
    (skill / "self").symlink_to("self")
    (skill / "dirloop").symlink_to(".", target_is_directory=True)
    (skill / "up").symlink_to("..", target_is_directory=True)
    (case / "self-skill").mkdir()
    (case / "self-skill" / "SKILL.md").symlink_to("SKILL.md")
    (case / "tree-a").symlink_to("tree-b")
    (case / "tree-b").symlink_to("tree-a")
    (case / "around").symlink_to(".", target_is_directory=True)


def build_deep_trees(case: Path) -> None:
    deep_rel = "/".join(["d"] * 200)
    skill = write_skill(
        case,
        "deep-inside",
        body=f"# Steps\n\nRead [the deep file]({deep_rel}/notes.md).\n",
        files={f"{deep_rel}/notes.md": "# Notes\n"},
    )
    assert (skill / deep_rel / "notes.md").is_file()
    above = case / "/".join(["up"] * 200)
    write_skill(above, "deep-below", frontmatter=_fm("deep-below"))


HOSTILE_NAMES = [
    b"new\nline",
    b"ansi\x1b[31mred\x1b]0;title\x07",
    b"::error file=x.md,line=1::injected",
    b"bad-utf8-\xff\xfe",
]


def build_hostile_names(case: Path) -> None:
    case.mkdir(parents=True, exist_ok=True)
    for raw in HOSTILE_NAMES:
        directory = os.path.join(os.fsencode(case), raw)
        os.mkdir(directory)
        text = f"---\n{_fm('odd-name')}---\n# Steps\n\nDo the thing.\n"
        with open(os.path.join(directory, b"SKILL.md"), "wb") as out:
            out.write(text.encode())
    skill = write_skill(
        case,
        "odd-files",
        body="# Steps\n\nRead [notes](references/a::b.md) and [x](references/%0Aevil.md).\n",
        files={"references/a::b.md": "# A\n"},
    )
    for raw in HOSTILE_NAMES:
        with open(os.path.join(os.fsencode(skill / "references"), raw + b".md"), "wb") as out:
            out.write(b"# Ref\n")


LOCKED = "locked"  # every path built under this name is made unreadable (mode 000)


def build_unreadable(case: Path) -> None:
    _skill_md(case / "locked-skill-md", f"---\n{_fm('locked-skill-md')}---\n# Steps\n".encode())
    (case / "locked-skill-md" / "SKILL.md").rename(case / "locked-skill-md" / LOCKED)
    (case / "locked-skill-md" / "SKILL.md").symlink_to(LOCKED)  # read through a link too
    skill = write_skill(
        case,
        "locked-parts",
        body="# Steps\n\nRead [the guide](references/guide.md) and [notes](assets/locked).\n",
        files={"references/guide.md": "# Guide\n", "assets/locked": "# Notes\n"},
    )
    (skill / "references").rename(skill / LOCKED)
    (skill / "references").symlink_to(LOCKED, target_is_directory=True)
    write_skill(case / LOCKED, "hidden-skill", frontmatter=_fm("hidden-skill"))


def _locked(case: Path) -> list[Path]:
    return sorted(case.rglob(LOCKED))


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], None]
    codes: tuple[str, ...]  # diagnostics the run must report
    formats: tuple[str, ...] = FORMATS
    args: tuple[str, ...] = (".",)
    unprivileged: bool = False  # run without the capabilities that let root read anything
    places: tuple[tuple[str, str, int, int], ...] = ()  # (code, path, line, column) reported
    absent: tuple[str, ...] = ()  # codes that would be false positives here


CASES = [
    Case("billion-laughs", build_billion_laughs, ("SK115",)),
    Case("deep-flow", build_deep_flow, ("SK115",)),
    Case("alias-chain", build_alias_chain, ("SK115",)),
    Case("deep-block-yaml", build_deep_block_yaml, ("SK115",)),
    # 20,000 diagnostics: the formats whose size grows per diagnostic in their own way
    # (a fix per SARIF result, a line per annotation); text and JUnit print what JSON holds
    Case(
        "many-keys",
        build_many_keys,
        ("SK108",),
        formats=("json", "sarif", "github"),
        places=(("SK108", "many-keys/SKILL.md", 4, 1), ("SK108", "many-keys/SKILL.md", 20_003, 1)),
        absent=("SK115",),  # 20,000 plain keys are not a "billion laughs"
    ),
    # each run reads 8 MiB of the 50 MB and reports 4 diagnostics: GitHub and JUnit output
    # of those adds nothing the other formats do not already show
    Case(
        "huge",
        build_huge,
        ("SK116",),
        formats=("text", "json", "sarif"),
        places=(("SK116", "huge-skill/SKILL.md", 1, 1),),
    ),
    Case(
        "deep-quotes",
        build_deep_quotes,
        ("SK501",),
        places=(
            ("SK501", "deep-quotes/SKILL.md", 7, 20_008),  # inside the nest
            ("SK501", "deep-quotes/SKILL.md", 9, 23),  # after it
        ),
    ),
    Case(
        "deep-lists",
        build_deep_lists,
        ("SK501",),
        places=(
            ("SK501", "deep-lists/SKILL.md", 7, 20_008),
            ("SK501", "deep-lists/SKILL.md", 11, 23),
        ),
    ),
    Case("binary-skill-md", build_binary_skill_md, ("SK903",)),
    # random bytes in a .md file read as Windows paths and links unless taken for binary
    Case("binary-references", build_binary_references, (), absent=("SK501", "SK507", "SK508")),
    Case("nul-bytes", build_nul_bytes, ("SK105", "SK903")),
    Case(
        "utf16",
        build_utf16,
        ("SK903",),
        places=tuple(
            ("SK903", f"utf16-{label}/SKILL.md", 1, 1)
            for label in ("le-bom", "be-bom", "le-plain", "be-plain")
        ),
    ),
    Case(
        "fifos-and-sockets",
        build_fifos_and_sockets,
        ("SK101", "SK511"),
        places=(
            ("SK101", "fifo-skill/SKILL.md", 1, 1),
            ("SK101", "socket-skill/SKILL.md", 1, 1),
            ("SK511", "holds-specials/references/pipe.md", 1, 1),
            ("SK511", "holds-specials/scripts/sock", 1, 1),
        ),
    ),
    Case(
        "symlink-loops",
        build_symlink_loops,
        ("SK100", "SK101", "SK509"),
        args=(".", "tree-a"),
        places=(
            ("SK100", "tree-a", 1, 1),
            ("SK101", "self-skill/SKILL.md", 1, 1),
            ("SK509", "loopy/loop-a", 1, 1),
            ("SK509", "loopy/self", 1, 1),
            ("SK509", "loopy/dirloop", 1, 1),
        ),
    ),
    # the link to the file 200 levels down is fine: the file is there
    Case("deep-trees", build_deep_trees, ("SK100",), absent=("SK501",)),
    Case("hostile-names", build_hostile_names, ("SK908",)),
    Case(
        "unreadable",
        build_unreadable,
        ("SK100", "SK101"),
        unprivileged=True,
        places=(
            ("SK100", LOCKED, 1, 1),
            ("SK100", f"locked-parts/{LOCKED}", 1, 1),
            ("SK101", "locked-skill-md/SKILL.md", 1, 1),
        ),
    ),
]
COMMANDS = (*FORMATS, "catalog", "pack")


# --- running --------------------------------------------------------------------------------


@dataclass
class Run:
    command: list[str]
    returncode: int
    stdout: bytes
    stderr: bytes
    bundle: Path | None = None
    parsed: dict | None = None  # the JSON report, once parsed


def _execute(case: Case, cwd: Path, command: str, prefix: list[str], env: dict[str, str]) -> Run:
    """One run of the installed command (as ``run_skillcheck`` runs it, but with the
    environment copied beforehand: pytest edits os.environ while worker threads start)."""
    if command in FORMATS:
        args = ["lint", "--isolated", "--target", "all", "--format", command, *case.args]
    else:
        config = cwd.parent / f"{case.name}.no-rules.toml"
        args = [command, "--config", str(config), *case.args]
    bundle = None
    if command == "pack":
        bundle = cwd.parent / f"{case.name}.tar.gz"
        args += ["--output", str(bundle)]
    full = [*prefix, *skillcheck_command(), *args]
    done = subprocess.run(full, cwd=cwd, capture_output=True, timeout=TIMEOUT, env=env)
    return Run(full, done.returncode, done.stdout, done.stderr, bundle)


class Runs:
    """Every (case, command) run, started ahead on a pool of one worker per core."""

    def __init__(self, root: Path, prefix: list[str] | None) -> None:
        self.root = root
        self.prefix = prefix
        self.pool = ThreadPoolExecutor(max_workers=os.cpu_count() or 2)
        self.futures: dict[tuple[str, str], Future[Run]] = {}
        self.lock = threading.Lock()
        self.env = {**os.environ, "NO_COLOR": "1"}

    def submit(self, case: Case, command: str) -> Future[Run]:
        with self.lock:
            key = (case.name, command)
            if key not in self.futures:
                prefix = self.prefix if case.unprivileged else []
                assert prefix is not None
                self.futures[key] = self.pool.submit(
                    _execute, case, self.root / case.name, command, prefix, self.env
                )
            return self.futures[key]

    def get(self, case: Case, command: str) -> Run:
        return self.submit(case, command).result()

    def report(self, case: Case) -> dict:
        """The case's JSON report, parsed once."""
        run = self.get(case, "json")
        if run.parsed is None:
            run.parsed = json.loads(run.stdout)
        return run.parsed


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    prefix = _unprivileged()
    for case in CASES:
        case.build(root / case.name)
        (root / f"{case.name}.no-rules.toml").write_text(NO_RULES)
    locked = [path for case in CASES for path in _locked(root / case.name)]
    for path in locked:
        path.chmod(0)
    runner = Runs(root, prefix)
    # start the runs this session will ask for, in collection order
    for item in request.session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.module.__name__ == __name__ and "case" in params and "command" in params:
            case, command = params["case"], params["command"]
            if not (case.unprivileged and prefix is None):
                runner.submit(case, command)
    yield runner
    runner.pool.shutdown(wait=True, cancel_futures=True)
    for path in locked:
        path.chmod(0o755)
    shutil.rmtree(root, ignore_errors=True)  # 70 MB that pytest would otherwise keep


# --- checking -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report_validator():
    import jsonschema

    from skillcheck.schemas import load_schema

    return jsonschema.Draft202012Validator(load_schema("report.schema.json"))


@pytest.fixture(scope="module")
def sarif_validator():
    import jsonschema

    return jsonschema.Draft7Validator(json.loads(SARIF_SCHEMA.read_bytes()))


@pytest.fixture(scope="module")
def manifest_validator():
    import jsonschema

    from skillcheck.schemas import load_schema

    return jsonschema.Draft202012Validator(load_schema("manifest.schema.json"))


def _valid(validator, document) -> None:
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


SAMPLE = 300


def _thinned(items: list) -> list:
    """The first and last diagnostics of a long list: jsonschema takes ~0.3 ms for each,
    and the 20,000 of one rule all come from the same code."""
    return items if len(items) <= 2 * SAMPLE else items[:SAMPLE] + items[-SAMPLE:]


def _sane(run: Run) -> str:
    """What every run must satisfy; returns stdout as text."""
    stderr = run.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr[-3000:]
    assert "internal error" not in stderr, stderr[-3000:]
    assert run.returncode in (0, 1), (run.returncode, stderr[-3000:])
    assert "\x1b" not in stderr, "a raw escape reached the terminal"
    assert not any(line.lstrip().startswith("::") for line in stderr.splitlines())
    return run.stdout.decode("utf-8")  # strict: every format is UTF-8


def _params():
    for case in CASES:
        for command in COMMANDS:
            if command in FORMATS and command not in case.formats:
                continue
            yield pytest.param(case, command, id=f"{case.name}-{command}")


@pytest.mark.parametrize(("case", "command"), list(_params()))
def test_hostile_input(
    case: Case, command: str, runs: Runs, report_validator, sarif_validator, manifest_validator
) -> None:
    if case.unprivileged and runs.prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    run = runs.get(case, command)
    out = _sane(run)
    if command in FORMATS:
        # the JSON run says what every other format must show
        report = runs.report(case)
        codes = {d["code"] for d in report["diagnostics"]}
        assert set(case.codes) <= codes, sorted(codes)
        found = {(d["code"], d["path"], d["line"], d["column"]) for d in report["diagnostics"]}
        assert set(case.places) <= found, sorted(found)[:20]
        assert not codes & set(case.absent), sorted(codes)
        assert run.returncode == (1 if report["summary"]["errors"] else 0)
        for code in case.codes:
            assert code in out, code
    if command == "json":
        assert all(d["line"] >= 1 and d["column"] >= 1 for d in report["diagnostics"])
        # one fix shared by 20,000 diagnostics must not name 20,000 keys in each of them
        assert all(len(d["fix"]["description"]) < 500 for d in report["diagnostics"] if d["fix"])
        _valid(report_validator, {**report, "diagnostics": _thinned(report["diagnostics"])})
    elif command == "sarif":
        sarif = json.loads(out)
        results = sarif["runs"][0]["results"]
        assert len(results) == len(report["diagnostics"])
        # an edit that fixes many results is given once, not copied into each of them
        fixes = [json.dumps(r["fixes"], sort_keys=True) for r in results if "fixes" in r]
        assert len(fixes) == len(set(fixes))
        sarif["runs"][0]["results"] = _thinned(results)
        _valid(sarif_validator, sarif)
    elif command == "junit":
        suite = ET.fromstring(out)
        assert suite.tag in ("testsuites", "testsuite")
    elif command == "github":
        lines = out.splitlines()
        assert len(lines) == len(report["diagnostics"])
        bad = [line for line in lines if not GITHUB_LINE.match(line)]
        assert not bad, bad[:3]
        assert "\r" not in out
    elif command == "html":
        # the page's two scripts only: the data block (every finding) and its own code
        blocks = re.findall(r"<script([^>]*)>(.*?)</script>", out, re.DOTALL)
        assert [attrs for attrs, _text in blocks] == [
            ' type="application/json" id="skillcheck-data"',
            "",
        ]
        assert len(json.loads(blocks[0][1])["findings"]) == len(report["diagnostics"])
        assert out.count("<script") == 2
    elif command == "text":
        assert "\x1b" not in out
        assert not [line for line in out.splitlines() if line.lstrip().startswith("::")]
    elif command == "catalog" and run.returncode == 0:
        _valid(manifest_validator, json.loads(out))
    elif command == "pack" and run.returncode == 0:
        from skillcheck.package.loader import verify

        verify(run.bundle)


# --- a tree that changes while it is read ---------------------------------------------------

CHURN_SKILLS = 300
CHURN_SECONDS = 4.0  # per phase


def _churn(root: Path, outside: Path, stop: threading.Event, hostile: bool) -> None:
    """Change files of random skills until told to stop.

    Hostile changes delete, truncate and replace files with links and FIFOs; benign ones
    only rewrite content, so every state can still be packed.
    """
    rng = random.Random(11 if hostile else 12)
    while not stop.is_set():
        skill = root / f"skill-{rng.randrange(CHURN_SKILLS):03d}"
        skill_md = skill / "SKILL.md"
        guide = skill / "references" / "guide.md"
        action = rng.randrange(8) if hostile else rng.randrange(2)
        try:
            if not hostile and action == 0:  # rewritten in place (readers may see it empty)
                guide.write_text("# Guide\n\n## Usage\n" + "More detail.\n" * rng.randrange(50))
            elif not hostile:  # replaced atomically, another length
                tmp = skill / ".SKILL.md.tmp"
                tmp.write_text(f"---\n{_fm(skill.name)}---\n# Steps\n" + "Do.\n" * rng.randrange(9))
                os.replace(tmp, skill_md)
            elif action == 0:  # vanish, then come back
                skill_md.unlink()
                skill_md.write_text(f"---\n{_fm(skill.name)}---\n# Back\n")
            elif action == 1:  # replaced atomically with broken YAML
                tmp = skill / ".SKILL.md.tmp"
                tmp.write_text(f"---\nname: [{skill.name}\n---\nbody\n")
                os.replace(tmp, skill_md)
            elif action == 2:  # truncated mid-write
                with open(skill_md, "r+b") as handle:
                    handle.truncate(rng.randrange(1, 60))
            elif action == 3:  # a file becomes a symlink, inside or out of the skill
                guide.unlink(missing_ok=True)
                guide.symlink_to(outside if rng.random() < 0.5 else skill_md)
            elif action == 4:  # a file becomes a FIFO
                guide.unlink(missing_ok=True)
                os.mkfifo(guide)
            elif action == 5:  # a directory vanishes and returns
                shutil.rmtree(skill / "references", ignore_errors=True)
                (skill / "references").mkdir(exist_ok=True)
                guide.write_text("# Guide\n\n## Usage\n")
            elif action == 6:  # the whole skill moves away and back
                away = root / f".away-{skill.name}"
                skill.rename(away)
                away.rename(skill)
            else:  # SKILL.md replaced by a symlink to another skill's
                other = root / f"skill-{rng.randrange(CHURN_SKILLS):03d}" / "SKILL.md"
                skill_md.unlink(missing_ok=True)
                skill_md.symlink_to(other)
        except OSError:
            pass  # racing ourselves (a skill moved away) is part of the game


@pytest.fixture
def churn_tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for i in range(CHURN_SKILLS):
        name = f"skill-{i:03d}"
        write_skill(
            root,
            name,
            frontmatter=_fm(name),
            body="# Steps\n\nRead [the guide](references/guide.md#usage) and run"
            " `scripts/run.py`.\n",
            files={"references/guide.md": "# Guide\n\n## Usage\n", "scripts/run.py": "print()\n"},
        )
    (tmp_path / "no-rules.toml").write_text(NO_RULES)
    (tmp_path / "secret.txt").write_text("not for the bundle\n")
    return root


@pytest.mark.parametrize("hostile", [True, False], ids=["hostile", "benign"])
def test_files_that_change_or_vanish_during_the_run(
    churn_tree: Path, hostile: bool, report_validator
) -> None:
    """Lint, catalog and pack a tree of 300 skills in a loop while a thread changes it: every
    run ends cleanly, every report is valid, and every bundle written verifies."""
    root = churn_tree
    no_rules, bundle = root.parent / "no-rules.toml", root.parent / "out.tar.gz"
    commands = [
        ["lint", "--isolated", "--format", "json", "."],
        ["catalog", "--config", str(no_rules), "."],
        ["pack", "--config", str(no_rules), ".", "--output", str(bundle)],
    ]
    stop = threading.Event()
    thread = threading.Thread(
        target=_churn, args=(root, root.parent / "secret.txt", stop, hostile), daemon=True
    )
    thread.start()
    seen: list[tuple[str, int]] = []
    try:
        deadline = time.monotonic() + CHURN_SECONDS
        while len(seen) < len(commands) or time.monotonic() < deadline:
            args = commands[len(seen) % len(commands)]
            done = run_skillcheck(*args, cwd=root, timeout=TIMEOUT)
            run = Run(args, done.returncode, done.stdout, done.stderr)
            out = _sane(run)
            seen.append((args[0], run.returncode))
            if not hostile and args[0] in ("pack", "catalog") and run.returncode == 1:
                # pack and catalog refuse rather than ship or list bytes their check or
                # manifest did not describe
                assert (
                    b"changed since the manifest was built" in run.stderr
                    or b"changed while it was being checked" in run.stderr
                ), run.stderr
            elif not hostile:  # nothing vanishes or breaks: lint and catalog succeed
                assert run.returncode == 0, run.stderr.decode()[-2000:]
            if args[0] == "lint":
                report = json.loads(out)
                _valid(report_validator, report)
                assert len(report["skills"]) >= CHURN_SKILLS - 10  # a few may be away
            elif args[0] == "catalog" and run.returncode == 0:
                assert len(json.loads(out)["skills"]) == CHURN_SKILLS
            elif args[0] == "pack" and run.returncode == 0:
                from skillcheck.package.loader import verify

                verify(bundle)  # whatever it packed is whole and consistent
                bundle.unlink()
            elif args[0] == "pack":
                assert not bundle.exists()  # a refused pack leaves no half-written file
    finally:
        stop.set()
        thread.join()
    assert not [p.name for p in root.parent.iterdir() if p.name.startswith(".")]  # no temp files
