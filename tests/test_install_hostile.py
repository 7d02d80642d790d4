"""``install`` against servers that misbehave: every failure is a one-line refusal naming the
URL, for that skill only; the deadline bounds a whole request; the loopback rules judge the
address a connection uses. Every server here listens on 127.0.0.1, is started by the test and
stops with it."""

from __future__ import annotations

import json
import os
import socket
import socketserver
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import invoke, lint_json, run_skillcheck, skillcheck_command
from test_wellknown import publish, source_files

WK = "/.well-known/agent-skills/"

# a scripted answer: raw bytes, or a function given the connection (and the stop event)
Answer = bytes | Callable[[socket.socket, threading.Event], None]


class RawServer(socketserver.ThreadingTCPServer):
    """Serves ``root`` over HTTP/1.0, except the paths of ``script``, answered with raw bytes
    (malformed on purpose) or by a function; records every path asked for."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root: Path, script: dict[str, Answer]) -> None:
        super().__init__(("127.0.0.1", 0), _RawHandler)
        self.root = root
        self.script = script
        self.asked: list[str] = []
        self.connections = 0
        self.stop = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _RawHandler(socketserver.BaseRequestHandler):
    server: RawServer

    def handle(self) -> None:
        self.server.connections += 1
        sock = self.request
        sock.settimeout(10)
        head = b""
        try:
            while b"\r\n\r\n" not in head and len(head) < 65536:
                data = sock.recv(4096)
                if not data:
                    return
                head += data
        except OSError:
            return
        line = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        path = line[1] if len(line) > 1 else ""
        self.server.asked.append(path)
        answer = self.server.script.get(path)
        try:
            if callable(answer):
                answer(sock, self.server.stop)
            elif answer is not None:
                sock.sendall(answer)
            else:
                sock.sendall(_file_answer(self.server.root, path))
        except OSError:
            pass  # the client hung up: what some of these tests expect


def _file_answer(root: Path, path: str) -> bytes:
    file = root / path.lstrip("/")
    if ".." in path or not file.is_file():
        return b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n"
    data = file.read_bytes()
    return b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)


@pytest.fixture
def raw_server() -> Iterator[Callable[..., RawServer]]:
    servers: list[tuple[RawServer, threading.Thread]] = []

    def start(root: Path, script: dict[str, Answer] | None = None) -> RawServer:
        server = RawServer(root, script or {})
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.daemon = True
        thread.start()
        servers.append((server, thread))
        return server

    yield start
    for server, thread in servers:
        server.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(10)


def _site(tmp_path: Path) -> tuple[Path, Path]:
    wk = publish(tmp_path)
    return wk.parent.parent, tmp_path / "skills"


def _artifact(root: Path, name: str) -> str:
    index = json.loads((root / WK.strip("/") / "index.json").read_bytes())
    return next(WK + e["url"] for e in index["skills"] if e["name"] == name)


def _chunked(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body


MALFORMED: dict[str, tuple[bytes, str]] = {
    "bad chunk size": (_chunked(b"zz\r\nabc\r\n0\r\n\r\n"), "malformed chunked encoding"),
    "truncated chunk": (_chunked(b"100\r\nabc"), "truncated or malformed chunked"),
    "truncated body": (
        b"HTTP/1.0 200 OK\r\nContent-Length: 100\r\n\r\nabc",
        "the response ended early (3 of 100 bytes)",
    ),
    "bad status line": (b"HTTP/1.1 abc OK\r\n\r\n", "not an HTTP response"),
    "more than 100 headers": (
        b"HTTP/1.0 200 OK\r\n" + b"X-Filler: x\r\n" * 101 + b"\r\n",
        "malformed HTTP response",
    ),
    "100 KB header line": (
        b"HTTP/1.0 200 OK\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n",
        "longer than 65536 bytes",
    ),
    "HTTP/0.9 answer": (b"just some bytes, no status line\n", "not an HTTP response"),
    "closed without answer": (b"", "closed the connection without an answer"),
}


@pytest.mark.parametrize("victim", ["alpha", "beta"])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_answer_refuses_that_skill_only(
    tmp_path: Path, raw_server, case: str, victim: str
) -> None:
    root, skills = _site(tmp_path)
    answer, reason = MALFORMED[case]
    server = raw_server(root, {_artifact(root, victim): answer})
    dest = tmp_path / "dest"
    result = invoke("install", server.url, str(dest))
    assert result.exit_code == 2, result.output
    other = "beta" if victim == "alpha" else "alpha"
    url = server.url + _artifact(root, victim)
    lines = [line for line in result.stderr.splitlines() if "not installed" in line]
    assert len(lines) == 1 and lines[0].startswith(f"skillcheck: {victim}: not installed: ")
    assert f"'{url}'" in lines[0] and reason in lines[0], lines[0]
    assert "internal error" not in result.output and "Traceback" not in result.output
    # the other skill is installed, recorded and linted; nothing of the victim is in DEST
    assert {p.name for p in dest.iterdir()} == {other, ".skillcheck-installed.json"}
    assert source_files(dest / other) == source_files(skills / other)
    record = json.loads((dest / ".skillcheck-installed.json").read_bytes())
    assert [s["name"] for s in record["skills"]] == [other]


@pytest.mark.parametrize("bad", [" ", "\r\n", "\x00"])
def test_an_artifact_url_with_spaces_or_controls_is_refused_by_name(
    tmp_path: Path, raw_server, bad: str
) -> None:
    root, skills = _site(tmp_path)
    index_path = root / WK.strip("/") / "index.json"
    index = json.loads(index_path.read_bytes())
    index["skills"][0]["url"] = f"alpha{bad}x.tar.gz"
    index_path.write_text(json.dumps(index))
    server = raw_server(root)
    dest = tmp_path / "dest"
    result = invoke("install", server.url, str(dest))
    assert result.exit_code == 1, result.output
    assert "skillcheck: alpha: not installed: " in result.stderr
    assert "may not hold spaces or control characters" in result.stderr
    assert "internal error" not in result.output
    assert source_files(dest / "beta") == source_files(skills / "beta")
    assert not (dest / "alpha").exists()
    assert not any("alpha" in path for path in server.asked)  # never sent


@pytest.mark.parametrize(
    "location", ["file:///etc/passwd", "data:,hello", "gopher://127.0.0.1/x", "javascript:alert(1)"]
)
def test_a_redirect_to_another_scheme_is_refused_for_that_reason(
    tmp_path: Path, raw_server, location: str
) -> None:
    root, skills = _site(tmp_path)
    redirect = f"HTTP/1.0 302 Found\r\nLocation: {location}\r\nContent-Length: 0\r\n\r\n"
    server = raw_server(root, {_artifact(root, "alpha"): redirect.encode()})
    dest = tmp_path / "dest"
    result = invoke("install", server.url, str(dest))
    assert result.exit_code == 1, result.output
    line = next(x for x in result.stderr.splitlines() if "alpha: not installed" in x)
    assert f"redirects to '{location}'" in line
    assert "only https (and http to loopback) URLs are fetched" in line
    assert "redirects:" not in line.replace(f"redirects to '{location}'", "")
    assert "more than 5 redirects" not in result.stderr
    assert source_files(dest / "beta") == source_files(skills / "beta")


def test_dry_run_fails_where_the_real_run_fails(tmp_path: Path, raw_server) -> None:
    root, _ = _site(tmp_path)
    server = raw_server(root)
    dest = tmp_path / "dest"
    dest.write_text("a regular file, not a directory\n")
    for extra in (["--dry-run"], []):
        result = invoke("install", server.url, str(dest), *extra)
        assert result.exit_code == 2, (extra, result.output)
        assert "Would install" not in result.stdout and "Installed" not in result.stdout
        assert f"{dest}: not a directory" in result.stderr
    assert dest.read_text() == "a regular file, not a directory\n"


def _drip(head: bytes, then: bytes = b"") -> Callable[[socket.socket, threading.Event], None]:
    """Send ``head`` at once, then ``then`` one byte at a time forever (0.1 s apart, well
    under the per-read timeout) until the client hangs up or the test ends."""

    def answer(sock: socket.socket, stop: threading.Event) -> None:
        sock.sendall(head)
        index = 0
        while not stop.wait(0.1):
            sock.sendall(then[index % len(then) : index % len(then) + 1])
            index += 1

    return answer


@pytest.mark.parametrize(
    "answer",
    [
        _drip(b"", b"HTTP/1.0 200 OK\r\nX-Slow: " + b"a" * 50_000),  # the headers drip
        _drip(b"HTTP/1.0 200 OK\r\nContent-Length: 5000\r\n\r\n", b" "),  # the body drips
    ],
    ids=["headers", "body"],
)
def test_the_deadline_bounds_the_whole_request(tmp_path: Path, raw_server, answer) -> None:
    root, _ = _site(tmp_path)
    server = raw_server(root, {WK + "index.json": answer})
    dest = tmp_path / "dest"
    # --timeout 0.5 bounds each read (none waits that long here); the request as a whole
    # gets 2 s; the hang guard is thirty times that
    result = run_skillcheck("install", server.url, str(dest), "--timeout", "0.5", timeout=60)
    assert result.returncode == 2, result.stderr
    assert b"took longer than 2 s" in result.stderr
    assert not dest.exists()


@pytest.mark.parametrize(
    "host",
    ["2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0.0.0.0", "0", "[::ffff:127.0.0.1]"],
)
def test_loopback_is_judged_on_the_address_used_not_its_spelling(raw_server, host: str) -> None:
    from skillcheck.package.archive import BundleError
    from skillcheck.package.install import HttpSource

    server = raw_server(Path("/nonexistent"))
    port = server.server_address[1]
    remote = HttpSource("https://skills.example.com/.well-known/agent-skills/index.json")
    with pytest.raises(BundleError, match="may not point at a loopback address"):
        remote.fetch(f"https://{host}:{port}/alpha.tar.gz", 100)
    assert server.connections == 0  # refused before any connection


# --- one DEST, its record, and what a killed run leaves ------------------------------------


RECORD = ".skillcheck-installed.json"


def test_a_symlinked_record_is_refused_and_its_target_untouched(tmp_path: Path, raw_server) -> None:
    root, _ = _site(tmp_path)
    server = raw_server(root)
    dest = tmp_path / "dest"
    dest.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours\n")
    (dest / RECORD).symlink_to(outside)
    result = invoke("install", server.url, str(dest))
    assert result.exit_code == 2, result.output
    assert f"{dest / RECORD}: a symlink, not a regular file" in result.stderr
    assert outside.read_text() == "not yours\n"
    assert sorted(p.name for p in dest.iterdir()) == [RECORD]  # nothing installed
    assert (dest / RECORD).is_symlink()


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_record_that_is_a_fifo_or_device_is_refused_without_hanging(
    tmp_path: Path, raw_server, kind: str
) -> None:
    root, _ = _site(tmp_path)
    server = raw_server(root)
    dest = tmp_path / "dest"
    dest.mkdir()
    if kind == "fifo":
        os.mkfifo(dest / RECORD)
    else:
        (dest / RECORD).symlink_to("/dev/zero")  # a link to a device: refused as a link
    for extra in (["--dry-run"], []):
        result = run_skillcheck("install", server.url, str(dest), *extra, timeout=60)
        assert result.returncode == 2, result.stderr
        assert b"not a regular file" in result.stderr
    assert sorted(p.name for p in dest.iterdir()) == [RECORD]


def _lock_held_by_test(dest: Path) -> int:
    import fcntl

    fd = os.open(dest, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def test_installs_into_one_dest_take_turns(tmp_path: Path, raw_server) -> None:
    root, skills = _site(tmp_path)
    server = raw_server(root)
    dest = tmp_path / "dest"
    dest.mkdir()
    fd = _lock_held_by_test(dest)  # as an install under way holds it
    proc = subprocess.Popen(
        [*skillcheck_command(), "install", server.url, str(dest), "--skill", "alpha"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()  # the event: it says it waits (EOF if it did not)
        assert b"waiting for another install into" in line, line
        assert sorted(p.name for p in dest.iterdir()) == []  # nothing written while waiting
    finally:
        os.close(fd)
    assert proc.wait(timeout=60) == 0
    assert source_files(dest / "alpha") == source_files(skills / "alpha")


def test_concurrent_installs_keep_every_skill_and_leave_nothing_behind(
    tmp_path: Path, raw_server
) -> None:
    root, skills = _site(tmp_path)
    server = raw_server(root)
    dest = tmp_path / "dest"
    runs = [["--skill", "alpha"], ["--skill", "beta"]] + [["--force"]] * 4
    procs = [
        subprocess.Popen(
            [*skillcheck_command(), "install", server.url, str(dest), *extra],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for extra in runs
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode in (0, 1), err  # 1: "exists" for a skill installed meanwhile
    record = json.loads((dest / RECORD).read_bytes())
    assert [s["name"] for s in record["skills"]] == ["alpha", "beta"]
    assert sorted(p.name for p in dest.iterdir()) == [RECORD, "alpha", "beta"]
    assert {n: source_files(dest / n) for n in ("alpha", "beta")} == {
        n: source_files(skills / n) for n in ("alpha", "beta")
    }


_KILLED = """
import sys
from pathlib import Path
from skillcheck.package.bundle import building_dir
from skillcheck.source.atomic import write_atomic_stream
what, target = sys.argv[1], Path(sys.argv[2])
def block(_out=None):
    print("ready", flush=True)
    sys.stdin.read()  # until killed
if what == "file":
    write_atomic_stream(target, block)
else:
    with building_dir(target, what) as tmp:
        (tmp / "SKILL.md").write_text("---\\nname: x\\ndescription: half\\n---\\n")
        block()
"""


def _killed_mid_write(what: str, target: Path) -> None:
    """Run a writer of ``target`` (a file, or a directory built with suffix ``what``) and
    kill it with SIGKILL once its temporary file or directory exists."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED, what, str(target)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == b"ready\n"
    proc.kill()
    proc.wait(timeout=30)
    assert proc.stdin is not None
    proc.stdin.close()
    proc.stdout.close()


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def test_a_killed_pack_leaves_a_temp_file_the_next_pack_removes(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    from test_wellknown import make_skills

    make_skills(skills)
    out = tmp_path / "out" / "b.tar.gz"
    out.parent.mkdir()
    _killed_mid_write("file", out)
    assert len(_leftovers(out.parent)) == 1
    result = invoke("pack", str(skills), "-o", str(out), "--isolated")
    assert result.exit_code == 0, result.output
    assert _leftovers(out.parent) == []


def test_a_killed_unpack_leaves_a_directory_the_next_unpack_removes(tmp_path: Path) -> None:
    from test_wellknown import make_skills

    skills = make_skills(tmp_path / "skills")
    bundle = tmp_path / "b.tar.gz"
    assert invoke("pack", str(skills), "-o", str(bundle), "--isolated").exit_code == 0
    dest = tmp_path / "out" / "dest"
    dest.parent.mkdir()
    _killed_mid_write(".unpack", dest)
    assert len(_leftovers(dest.parent)) == 1
    result = invoke("unpack", str(bundle), str(dest))
    assert result.exit_code == 0, result.output
    assert _leftovers(dest.parent) == []


def test_a_killed_install_is_never_linted_and_the_next_install_removes_it(
    tmp_path: Path, raw_server
) -> None:
    root, skills = _site(tmp_path)
    server = raw_server(root)
    dest = tmp_path / "dest"
    assert invoke("install", server.url, str(dest), "--skill", "beta").exit_code == 0
    _killed_mid_write(".install", dest / "alpha")
    # and a swap killed between its two renames: the previous beta is only in .old/d
    dead = (
        subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True
        )
        .stdout.decode()
        .strip()
    )
    old = dest / f".beta.{dead}.abcd1234.old"
    old.mkdir()
    (dest / "beta").rename(old / "d")
    assert len(_leftovers(dest)) == 3  # the two, and the record
    _code, report = lint_json(str(dest))
    assert [s["name"] for s in report["skills"]] == []  # no leftover reported as a skill
    assert invoke("install", server.url, str(dest), "--skill", "alpha").exit_code == 0
    assert _leftovers(dest) == [RECORD]
    assert source_files(dest / "beta") == source_files(skills / "beta")  # put back
    assert source_files(dest / "alpha") == source_files(skills / "alpha")


def test_every_reliability_guarantee_names_tests_that_exist() -> None:
    """The README's Reliability section covers every command (what it never writes, never
    follows, what bounds its time), and each guarantee, a bullet or a table row, names tests
    that exist: ``file.py`` a test file, ``file.py::name`` a test defined in that file."""
    import re

    tests = Path(__file__).parent
    readme = (tests.parent / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Reliability\n", 1)[1].split("\n## ", 1)[0]
    headings = " ".join(re.findall(r"^### (.+)$", section, re.M))
    for command in ("lint", "--fix", "pack", "catalog", "cache", "install", "verify", "unpack"):
        assert command in headings, command
    for command in ("serve", "lsp"):
        assert command in headings, command
    defined: dict[str, set[str]] = {
        path.name: set(re.findall(r"^(?:async )?def (test_\w+)", path.read_text("utf-8"), re.M))
        for path in tests.glob("test_*.py")
    }
    everywhere = set().union(*defined.values())
    bullets = [g for g in section.split("\n- ")[1:] if g.startswith("**")]
    rows = [r for r in section.splitlines() if r.startswith("| ") and "never writes" not in r]
    assert len(bullets) >= 10 and len(rows) >= 5
    for guarantee in bullets + rows:
        if "(same test)" in guarantee:
            continue
        named = re.findall(r"`((?:test_\w+\.py)?(?:::)?(?:test_\w+)?)`", guarantee)
        named = [n for n in named if n.startswith("test_")]
        assert named, f"no test named for: {guarantee[:60]}"
        for name in named:
            file, _, test = name.rpartition("::") if "::" in name else ("", "", name)
            if name.endswith(".py"):
                assert name in defined, name
            elif file:
                assert test in defined.get(file, set()), name
            else:
                assert test in everywhere, name
