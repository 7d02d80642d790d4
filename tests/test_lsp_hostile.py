"""`skillcheck lsp` driven over pipes with raw bytes: malformed frames, malformed parameters,
requests before ``initialize``, files that are FIFOs or devices, checks that take long,
``exit`` during a check. The server must answer every request and never stop for good."""

from __future__ import annotations

import itertools
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import skillcheck_command
from hypothesis import given, settings
from hypothesis import strategies as st
from test_lsp import WAIT, Client, _initialize, _open, _uri

from skillcheck.lsp import analysis
from skillcheck.lsp.framing import MAX_MESSAGE, FramedReader

pytest.importorskip("pygls")


class RawClient(Client):
    def __init__(self, cwd: Path, command: list[str] | None = None) -> None:
        if command is None:
            super().__init__(cwd)
            return
        real = skillcheck_command
        try:  # Client starts `skillcheck lsp`; this one starts ``command``
            import test_lsp

            test_lsp.skillcheck_command = lambda: command  # type: ignore[assignment]
            super().__init__(cwd)
        finally:
            test_lsp.skillcheck_command = real  # type: ignore[assignment]

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def ask(self, method: str, params: Any) -> dict[str, Any]:
        """Send a request; its reply, result or error."""
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        return self.wait(lambda m: m.get("id") == ident and "method" not in m)


@pytest.fixture
def raw_client(tmp_path: Path):
    started = RawClient(tmp_path)
    yield started
    started.close()


def _hover(uri: str, line: Any = 0, character: Any = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def _skill(root: Path) -> Path:
    skill = root / "s"
    skill.mkdir()
    (skill / "SKILL.md").write_text(
        "---\nname: s\ndescription: Does things. Use when asked to do things.\n---\n# S\n"
    )
    return skill


def test_a_request_before_initialize_gets_32002_without_a_traceback(
    raw_client: RawClient, tmp_path: Path
) -> None:
    reply = raw_client.ask("textDocument/hover", _hover(_uri(tmp_path / "x.md")))
    assert reply["error"]["code"] == -32002, reply
    assert "traceback" not in str(reply).lower()
    _initialize(raw_client, tmp_path)  # and the session goes on
    assert "result" in raw_client.ask("textDocument/hover", _hover(_uri(tmp_path / "x.md")))


@pytest.mark.parametrize(
    "position", [{"line": "a", "character": 0}, {"line": -1, "character": 0}, {"line": 0}, None]
)
def test_malformed_parameters_are_answered_with_an_error(
    raw_client: RawClient, tmp_path: Path, position: Any
) -> None:
    _initialize(raw_client, tmp_path)
    uri = _uri(_skill(tmp_path) / "SKILL.md")
    params = {"textDocument": {"uri": uri}, "position": position}
    reply = raw_client.ask("textDocument/hover", params)
    assert reply["error"]["code"] == -32602, reply
    assert "traceback" not in str(reply).lower()
    assert "result" in raw_client.ask("textDocument/hover", _hover(uri))


BAD_FRAMES = {
    "non-numeric length": b"Content-Length: abc\r\n\r\n{}",
    "too short": b'Content-Length: 5\r\n\r\n{"jsonrpc": "2.0", "id": 900, "method": "shutdown"}',
    "too long": b'Content-Length: 500\r\n\r\n{"jsonrpc": "2.0", "id": 901, "method": "shutdown"}',
    "5,000 digits": b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}",
    "larger than allowed": b"Content-Length: %d\r\n\r\n{}" % (MAX_MESSAGE + 1),
    "no header at all": b'{"jsonrpc": "2.0", "id": 902, "method": "shutdown"}\r\n\r\n',
    "not JSON": b"Content-Length: 4\r\n\r\nnope",
}


@pytest.mark.parametrize("frame", list(BAD_FRAMES))
def test_a_malformed_frame_is_dropped_and_the_next_request_answered(
    raw_client: RawClient, tmp_path: Path, frame: str
) -> None:
    _initialize(raw_client, tmp_path)
    uri = _uri(_skill(tmp_path) / "SKILL.md")
    for _ in range(2):  # twice: the reader is back in step after each
        raw_client.raw(BAD_FRAMES[frame])
        reply = raw_client.ask("textDocument/hover", _hover(uri))
        assert "result" in reply, reply
    assert raw_client.proc.poll() is None


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_an_unopened_document_that_is_a_fifo_or_device_is_never_read(
    raw_client: RawClient, tmp_path: Path, kind: str
) -> None:
    _initialize(raw_client, tmp_path)
    skill = _skill(tmp_path)
    target = skill / "notes.md"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero")  # endless bytes
    uri = _uri(target)
    for method, params in [
        ("textDocument/hover", _hover(uri)),
        ("textDocument/completion", _hover(uri)),
        (
            "textDocument/codeAction",
            {
                "textDocument": {"uri": uri},
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                "context": {"diagnostics": []},
            },
        ),
    ]:
        reply = raw_client.ask(method, params)
        assert "result" in reply, reply
    # and the server still serves real documents
    assert "result" in raw_client.ask("textDocument/hover", _hover(_uri(skill / "SKILL.md")))


# a server whose checks block until killed: what a check that takes minutes looks like,
# without the minutes; the request budget is one second
_SLOW_SERVER = """
import sys, threading
from skillcheck.lsp import analysis, server
def blocked(path, text):
    print("checking", file=sys.stderr, flush=True)
    threading.Event().wait()
analysis.check_buffer = blocked
server.REQUEST_BUDGET = 1.0
server.main()
"""


@pytest.fixture
def slow_client(tmp_path: Path):
    started = RawClient(tmp_path, [sys.executable, "-c", _SLOW_SERVER])
    yield started
    started.close()


def _wait_for_check(client: Client) -> None:
    assert client.proc.stderr is not None
    line = client.proc.stderr.readline()  # the event: a check has started
    assert line == b"checking\n", line


def test_exit_during_a_check_ends_the_process_at_once(
    slow_client: RawClient, tmp_path: Path
) -> None:
    _initialize(slow_client, tmp_path)
    _open(slow_client, _skill(tmp_path) / "SKILL.md", "---\nname: s\n---\n")
    _wait_for_check(slow_client)
    slow_client.notify("exit", None)  # without shutdown: exit code 1, as the protocol says
    assert slow_client.proc.wait(timeout=WAIT) == 1


def test_a_request_waits_for_a_long_check_a_bounded_time(
    slow_client: RawClient, tmp_path: Path
) -> None:
    _initialize(slow_client, tmp_path)
    uri = _open(slow_client, _skill(tmp_path) / "SKILL.md", "---\nname: s\n---\n")
    _wait_for_check(slow_client)
    reply = slow_client.ask("textDocument/hover", _hover(uri))
    assert reply["error"]["code"] == -32803, reply
    assert "still checking" in reply["error"]["message"]
    # other requests are served meanwhile, and shutdown/exit end it cleanly
    assert "result" in slow_client.ask("textDocument/completion", _hover(uri))
    assert "result" in slow_client.ask("shutdown", None)
    slow_client.notify("exit", None)
    assert slow_client.proc.wait(timeout=WAIT) == 0


def test_a_buffer_larger_than_lint_reads_is_not_checked_and_says_so(
    raw_client: RawClient, tmp_path: Path
) -> None:
    from skillcheck.lsp.server import MAX_BUFFER

    _initialize(raw_client, tmp_path)
    head = "---\nname: s\ndescription: Does things. Use when asked to do things.\n---\n"
    text = head + "".join(f"## H{i}\n[to](#nope{i})\n" for i in range(MAX_BUFFER // 20))
    assert len(text) > MAX_BUFFER
    uri = _open(raw_client, _skill(tmp_path) / "SKILL.md", text)
    diagnostics = raw_client.diagnostics(uri)
    assert len(diagnostics) == 1 and "not checked" in diagnostics[0]["message"]
    assert "result" in raw_client.ask("textDocument/hover", _hover(uri))


# a server whose checks of a buffer holding "slow<mark>" block until they are stopped, saying
# on stderr when each starts and stops (the events these tests wait for); other buffers are
# checked for real. Its request budget is a hang guard only.
_STOPPABLE_SERVER = """
import sys, threading
from skillcheck.source import stop
from skillcheck.lsp import analysis, server
real = analysis.check_buffer
def slow(path, text):
    if "slow" not in text:
        return real(path, text)
    mark = text.split("slow", 1)[1].split()[0]
    print("checking", mark, file=sys.stderr, flush=True)
    try:
        (stop.STOP.get() or threading.Event()).wait()  # no stop event: blocked for good
        stop.stop_point()
    finally:
        print("stopped", mark, file=sys.stderr, flush=True)
analysis.check_buffer = slow
server.REQUEST_BUDGET = 600.0
server.main()
"""


class StoppableClient(RawClient):
    def __init__(self, cwd: Path) -> None:
        super().__init__(cwd, [sys.executable, "-c", _STOPPABLE_SERVER])
        self.events: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read_events, daemon=True).start()

    def _read_events(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.events.put(line.decode("utf-8", "replace").strip())
        self.events.put(None)

    def expect(self, event: str) -> None:
        """Wait for ``event`` on the server's stderr (other lines are its log)."""
        while True:
            try:
                line = self.events.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"no {event!r} from the server in time") from None
            assert line is not None, f"the server ended before {event!r}"
            if line == event:
                return

    def start(self, method: str, params: Any) -> int:
        """Send a request without waiting for its reply; its id."""
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    def reply(self, ident: int) -> dict[str, Any]:
        return self.wait(lambda m: m.get("id") == ident and "method" not in m)


@pytest.fixture
def stoppable(tmp_path: Path):
    started = StoppableClient(tmp_path)
    yield started
    started.close()


def test_a_cancelled_request_is_answered_32800_and_its_check_stops(
    stoppable: StoppableClient, tmp_path: Path
) -> None:
    _initialize(stoppable, tmp_path)
    skill = _skill(tmp_path)
    notes = skill / "notes.md"
    notes.write_text("slowA\n")  # not opened: the request alone wants its check
    ident = stoppable.start("textDocument/hover", _hover(_uri(notes)))
    stoppable.expect("checking A")
    stoppable.notify("$/cancelRequest", {"id": ident})
    reply = stoppable.reply(ident)
    assert reply["error"]["code"] == -32800, reply
    stoppable.expect("stopped A")  # the work is given up, not only the answer
    # and the worker is free for the next request
    assert "result" in stoppable.ask("textDocument/hover", _hover(_uri(skill / "SKILL.md")))


def test_a_newer_version_stops_the_stale_check(stoppable: StoppableClient, tmp_path: Path) -> None:
    _initialize(stoppable, tmp_path)
    path = _skill(tmp_path) / "SKILL.md"
    uri = _open(stoppable, path, "---\nname: s\n---\nslow1\n")
    stoppable.expect("checking 1")
    ident = stoppable.start("textDocument/hover", _hover(uri))  # waits for version 1
    fixed = "---\nname: s\n---\n# S\n"  # no description: SK... errors, checked for real
    stoppable.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]},
    )
    stoppable.expect("stopped 1")
    reply = stoppable.reply(ident)
    assert reply["error"]["code"] == -32801, reply  # ContentModified: ask again
    diagnostics = stoppable.diagnostics(uri, version=2)
    assert any("description" in d["message"] for d in diagnostics), diagnostics
    assert "result" in stoppable.ask("textDocument/hover", _hover(uri))


@pytest.mark.parametrize("method", ["textDocument/hover", "textDocument/codeAction"])
def test_a_request_is_answered_while_a_long_check_runs(
    stoppable: StoppableClient, tmp_path: Path, method: str
) -> None:
    _initialize(stoppable, tmp_path)
    slow = _skill(tmp_path) / "SKILL.md"
    _open(stoppable, slow, "---\nname: s\n---\nslowA\n")
    stoppable.expect("checking A")
    # a request for another document, whose check needs the worker the long check holds
    other = tmp_path / "t"
    other.mkdir()
    (other / "SKILL.md").write_text("---\nname: t\ndescription: Does t. Use when t.\n---\n# T\n")
    params = _hover(_uri(other / "SKILL.md"))
    if method == "textDocument/codeAction":  # a check, then the fixes: both before A again
        whole = {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}
        params = {
            "textDocument": params["textDocument"],
            "range": whole,
            "context": {"diagnostics": []},
        }
    assert "result" in stoppable.ask(method, params)
    stoppable.expect("stopped A")  # the publishing check gave way...
    stoppable.expect("checking A")  # ...and runs again after the request
    stoppable.notify("exit", None)
    assert stoppable.proc.wait(timeout=WAIT) == 1


def test_a_stopped_check_raises_between_rules(tmp_path: Path) -> None:
    from skillcheck.source.stop import Stopped, stoppable

    path = _skill(tmp_path) / "SKILL.md"
    text = path.read_text() + "[broken](missing.md)\n"
    event = threading.Event()
    with stoppable(event):
        assert analysis.check_buffer(path, text).diagnostics  # not stopped: checked whole
        event.set()
        with pytest.raises(Stopped):
            analysis.check_buffer(path, text)
    assert analysis.check_buffer(path, text).diagnostics  # outside: nothing stops it


def test_the_loops_that_grow_with_a_file_are_stop_points(tmp_path: Path) -> None:
    """A rule on a long file stops inside its loop, not only between rules: the link scan
    and the heading scan each raise Stopped once the event is set."""
    from skillcheck.analysis.links import analysis as link_analysis
    from skillcheck.source.anchors import QuickAnchors
    from skillcheck.source.load import load_skill
    from skillcheck.source.stop import Stopped, stoppable

    body = "".join(f"## H{i}\n[to](#nope{i})\n" for i in range(50))
    skill_dir = _skill(tmp_path)
    (skill_dir / "SKILL.md").write_text((skill_dir / "SKILL.md").read_text() + body)
    event = threading.Event()
    event.set()
    with stoppable(event):
        with pytest.raises(Stopped):
            link_analysis(load_skill(skill_dir, "s"))
        with pytest.raises(Stopped):
            QuickAnchors(body).has("nope")
    assert link_analysis(load_skill(skill_dir, "s")).uses  # outside: it runs to the end
    assert not QuickAnchors(body).has("nope")


# --- the framing, as a unit --------------------------------------------------------------


class _Chunks:
    """A stream that gives its data in the given pieces (as a pipe may)."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = list(pieces)

    def read1(self, _size: int) -> bytes:
        return self.pieces.pop(0) if self.pieces else b""


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _bodies(data: bytes, cuts: list[int]) -> list[bytes]:
    cuts = sorted({c % (len(data) + 1) for c in cuts} | {0, len(data)})
    reader = FramedReader(_Chunks([data[a:b] for a, b in itertools.pairwise(cuts)]))
    out = []
    while (body := reader.next_message()) is not None:
        out.append(body)
    return out


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@given(
    st.lists(_JSON, min_size=1, max_size=4),
    st.lists(st.integers(min_value=0), max_size=6),
    st.lists(st.sampled_from([*list(BAD_FRAMES.values())[:4], b"garbage\r\n"]), max_size=3),
)
@settings(max_examples=150, deadline=None)
def test_good_frames_survive_bad_ones_however_the_input_is_cut(
    values: list[Any], cuts: list[int], bad: list[bytes]
) -> None:
    import json

    good = [json.dumps({"jsonrpc": "2.0", "value": v}).encode() for v in values]
    data = b"".join(bad) + b"".join(_frame(b) for b in good)
    assert _bodies(data, cuts)[-len(good) :] == good
    # bad frames between good ones cost nothing but themselves
    mixed = b"".join(_frame(g) + b for g, b in zip(good, bad + [b""] * len(good), strict=False))
    got = _bodies(mixed, cuts)
    assert [b for b in got if b in good] == good


def test_the_reader_hands_pygls_well_framed_messages() -> None:
    reader = FramedReader(_Chunks([b"junk" + _frame(b"{}") + _frame(b"[1]")]))
    assert reader.readline() == b"Content-Length: 2\r\n"
    assert reader.readline() == b"\r\n"
    assert reader.read(2) == b"{}"
    assert reader.readline() == b"Content-Length: 3\r\n"
    assert reader.readline() == b"\r\n"
    assert reader.read(3) == b"[1]"
    assert reader.readline() == b""


def test_the_server_ends_when_its_input_ends(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*skillcheck_command(), "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=tmp_path
    )
    _out, _ = proc.communicate(_frame(b'{"jsonrpc": "2.0", "method": "x"}'), timeout=WAIT)
    assert proc.returncode == 0
