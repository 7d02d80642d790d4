"""`skillcheck lsp`: a real Language Server Protocol session over stdio with the installed
command (a minimal JSON-RPC client; every wait is bounded)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import assert_linear, cpu_seconds, skillcheck_command, write_skill
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcheck.lsp import analysis

pytest.importorskip("pygls")

WAIT = 30.0  # seconds for any one reply from the server


def _uri(path: Path) -> str:
    return path.resolve().as_uri()


class Client:
    """Speaks JSON-RPC with Content-Length framing to a server process."""

    def __init__(self, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [*skillcheck_command(), "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env={**os.environ, "NO_COLOR": "1"},
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            assert length is not None
            self.messages.put(json.loads(out.read(length)))

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode("utf-8")
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any) -> Any:
        self.next_id += 1
        ident = self.next_id
        self.send({"id": ident, "method": method, "params": params})
        reply = self.wait(lambda m: m.get("id") == ident and "method" not in m)
        assert "error" not in reply, reply
        return reply.get("result")

    def wait(self, match: Any, timeout: float = WAIT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no matching message from the server in time")
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            if message is None:
                raise AssertionError("the server closed its output")
            if match(message):
                return message

    def diagnostics(self, uri: str, version: int | None = None) -> list[dict[str, Any]]:
        message = self.wait(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri
                and (version is None or m["params"].get("version") == version)
            )
        )
        return message["params"]["diagnostics"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=WAIT)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()


@pytest.fixture
def client(tmp_path: Path):
    started = Client(tmp_path)
    yield started
    started.close()


def _initialize(client: Client, root: Path) -> dict[str, Any]:
    result = client.request(
        "initialize",
        {
            "processId": os.getpid(),
            "rootUri": _uri(root),
            "workspaceFolders": [{"uri": _uri(root), "name": "skills"}],
            "capabilities": {},
        },
    )
    client.notify("initialized", {})
    return result


def _open(client: Client, path: Path, text: str, version: int = 1) -> str:
    uri = _uri(path)
    client.notify(
        "textDocument/didOpen",
        {"textDocument": {"uri": uri, "languageId": "markdown", "version": version, "text": text}},
    )
    return uri


def _change(client: Client, uri: str, text: str, version: int) -> None:
    client.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
    )


def _codes(diagnostics: list[dict[str, Any]]) -> set[str]:
    return {d["code"] for d in diagnostics}


def _apply(text: str, edits: list[dict[str, Any]]) -> str:
    """Apply LSP text edits (ASCII text: UTF-16 units are characters)."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(pos: dict[str, int]) -> int:
        return starts[pos["line"]] + pos["character"]

    for edit in sorted(edits, key=lambda e: offset(e["range"]["start"]), reverse=True):
        begin, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:begin] + edit["newText"] + text[end:]
    return text


GOOD = "---\nname: pdf-tools\ndescription: Extract text from PDF files. Use for PDFs.\n---\n"


def test_session_open_change_code_action_shutdown_exit(client: Client, tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "pdf-tools")
    skill_md = skill / "SKILL.md"
    on_disk = skill_md.read_bytes()
    result = _initialize(client, tmp_path)
    capabilities = result["capabilities"]
    assert capabilities["codeActionProvider"]
    assert capabilities["hoverProvider"]
    assert "completionProvider" in capabilities

    # the buffer, not the disk: a bad name only in the editor
    bad = GOOD.replace("name: pdf-tools", "name: PDF_Tools") + "\n# Steps\n\nDo it.\n"
    uri = _open(client, skill_md, bad)
    first = client.diagnostics(uri, 1)
    assert "SK201" in _codes(first) or any(c.startswith("SK2") for c in _codes(first)), first
    name_diag = next(d for d in first if d["code"].startswith("SK2"))
    assert name_diag["range"]["start"]["line"] == 1
    assert name_diag["source"] == "skillcheck"

    # a change fixes the name and leaves a fixable finding: trailing space after `---`
    fixable_text = GOOD.replace("---\nname", "--- \nname", 1) + "\n# Steps\n\nDo it.\n"
    _change(client, uri, fixable_text, 2)
    second = client.diagnostics(uri, 2)
    assert not any(c.startswith("SK2") for c in _codes(second)), second
    fixable = [d for d in second if d.get("data", {}).get("fixable")]
    assert fixable, second
    target = fixable[0]

    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": target["range"],
            "context": {"diagnostics": [target]},
        },
    )
    quick = [
        a for a in actions if a["kind"] == "quickfix" and a["title"].startswith(target["code"])
    ]
    assert quick, actions
    fixed = _apply(fixable_text, quick[0]["edit"]["changes"][uri])
    assert fixed.startswith("---\nname")
    # "fix all" rewrites the file as --fix would
    [whole] = [a for a in actions if a["kind"] == "source.fixAll"]
    assert _apply(fixable_text, whole["edit"]["changes"][uri]) == fixed
    # reopening the fixed text: the finding is gone
    _change(client, uri, fixed, 3)
    assert target["code"] not in _codes(client.diagnostics(uri, 3))

    # hover on the finding shows the rule's documentation
    _change(client, uri, fixable_text, 4)
    client.diagnostics(uri, 4)
    shown = client.request(
        "textDocument/hover",
        {"textDocument": {"uri": uri}, "position": target["range"]["start"]},
    )
    assert shown is not None and f"# {target['code']}" in shown["contents"]["value"]

    assert client.request("shutdown", None) is None
    client.notify("exit", None)
    assert client.proc.wait(timeout=WAIT) == 0
    assert skill_md.read_bytes() == on_disk  # the server never writes


def test_debounced_changes_publish_the_last_buffer_once(client: Client, tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "pdf-tools")
    _initialize(client, tmp_path)
    uri = _open(client, skill / "SKILL.md", GOOD + "\nBody.\n")
    client.diagnostics(uri, 1)
    for version in range(2, 7):  # a burst of typing
        _change(client, uri, GOOD.replace("pdf-tools", f"Bad_{version}") + "\nBody.\n", version)
    last = client.diagnostics(uri)
    message = json.dumps(last)
    assert "Bad_6" in message
    # nothing was published for the intermediate versions: the server answers a request
    # only after the notifications sent before it, so whatever the burst made comes first
    client.next_id += 1
    ident = client.next_id
    client.send({"id": ident, "method": "shutdown"})
    while (extra := client.messages.get(timeout=WAIT)) is not None and extra.get("id") != ident:
        assert extra.get("params", {}).get("version") in (None, 6), extra


def test_disable_for_this_line_and_other_markdown_files(client: Client, tmp_path: Path) -> None:
    skill = write_skill(
        tmp_path,
        "pdf-tools",
        body="# Steps\n\nRead [the guide](references/guide.md).\n\n"
        "See [more](references/missing.md).\n",
        files={"references/guide.md": "# Guide\n\nSee [nothing](nothing.md).\n"},
    )
    _initialize(client, tmp_path)
    text = (skill / "SKILL.md").read_text()
    uri = _open(client, skill / "SKILL.md", text)
    found = client.diagnostics(uri, 1)
    broken = [d for d in found if d["range"]["start"]["line"] == text.count("\n") - 1]
    assert broken, found
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": broken[0]["range"],
            "context": {"diagnostics": broken[:1]},
        },
    )
    disable = [a for a in actions if a["title"] == f"Disable {broken[0]['code']} for this line"]
    assert disable, actions
    silenced = _apply(text, disable[0]["edit"]["changes"][uri])
    _change(client, uri, silenced, 2)
    assert broken[0]["code"] not in _codes(client.diagnostics(uri, 2))

    # a reference file of the skill is checked from its buffer too
    guide = skill / "references" / "guide.md"
    guide_text = guide.read_text()
    guide_uri = _open(client, guide, guide_text)
    [link] = client.diagnostics(guide_uri, 1)  # the broken link in guide.md
    assert link["range"]["start"]["line"] == 2
    _change(client, guide_uri, "# Guide\n\nNo links.\n", 2)
    assert client.diagnostics(guide_uri, 2) == []
    # "disable for this line" works in a reference file too
    _change(client, guide_uri, guide_text, 3)
    [link] = client.diagnostics(guide_uri, 3)
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": guide_uri},
            "range": link["range"],
            "context": {"diagnostics": [link]},
        },
    )
    [disable] = [a for a in actions if a["title"] == f"Disable {link['code']} for this line"]
    _change(client, guide_uri, _apply(guide_text, disable["edit"]["changes"][guide_uri]), 4)
    assert client.diagnostics(guide_uri, 4) == []


def test_completion_offers_frontmatter_keys_of_the_configured_targets(
    client: Client, tmp_path: Path
) -> None:
    (tmp_path / "skillcheck.toml").write_text('target = ["agentskills", "claude-code"]\n')
    skill = write_skill(tmp_path, "pdf-tools")
    _initialize(client, tmp_path)
    text = GOOD.replace("---\n\n", "") + "\n"
    text = "---\nname: pdf-tools\ndescription: Extract text from PDFs.\n\n---\nBody.\n"
    uri = _open(client, skill / "SKILL.md", text)
    client.diagnostics(uri, 1)
    listed = client.request(
        "textDocument/completion",
        {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 0}},
    )
    labels = {item["label"] for item in listed["items"]}
    assert {"license", "allowed-tools", "disable-model-invocation"} <= labels
    assert "name" not in labels  # already written
    values = client.request(
        "textDocument/completion",
        {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 6}},
    )
    assert [item["label"] for item in values["items"]] == ["pdf-tools"]


def test_a_config_error_is_a_diagnostic_and_the_server_goes_on(
    client: Client, tmp_path: Path
) -> None:
    skill = write_skill(tmp_path, "pdf-tools")
    _initialize(client, tmp_path)
    (tmp_path / "skillcheck.toml").write_text('target = "nowhere"\n')
    uri = _open(client, skill / "SKILL.md", GOOD + "\nBody.\n")
    found = client.diagnostics(uri, 1)
    assert len(found) == 1 and "nowhere" in found[0]["message"], found
    (tmp_path / "skillcheck.toml").unlink()
    _change(client, uri, GOOD + "\nBody!\n", 2)
    assert client.diagnostics(uri, 2) == []
    assert client.request("shutdown", None) is None
    client.notify("exit", None)
    assert client.proc.wait(timeout=WAIT) == 0


def test_duplicate_names_are_reported_on_save(client: Client, tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    other = write_skill(tmp_path, "pdf-viewer")
    _initialize(client, tmp_path)
    skill_md = other / "SKILL.md"
    text = skill_md.read_text()
    uri = _open(client, skill_md, text)
    assert "SK801" not in _codes(client.diagnostics(uri, 1))
    # the user renames the skill to a name another skill has, and saves
    renamed = text.replace("name: pdf-viewer", "name: pdf-tools")
    _change(client, uri, renamed, 2)
    client.diagnostics(uri, 2)
    skill_md.write_text(renamed)  # the editor writes the file, then tells the server
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    found = client.diagnostics(uri, 2)
    assert "SK801" in _codes(found), found


def test_a_check_that_fails_is_one_diagnostic_and_the_server_goes_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """An exception while checking one document (a bug in a rule) is reported on that document;
    the next check runs normally."""
    from skillcheck.lsp import analysis
    from skillcheck.lsp.server import SkillServer

    skill = write_skill(tmp_path, "pdf-tools")
    uri = _uri(skill / "SKILL.md")
    server = SkillServer()
    real = analysis.check_buffer

    def broken(path: Path, text: str) -> analysis.Checked:
        raise RuntimeError("a rule exploded")

    monkeypatch.setattr(analysis, "check_buffer", broken)
    failed = server.check(uri, 1, GOOD, False)
    assert failed is not None and "a rule exploded" in (failed.problem or "")
    monkeypatch.setattr(analysis, "check_buffer", real)
    again = server.check(uri, 2, GOOD.replace("pdf-tools", "Bad_Name"), False)
    assert again is not None and again.problem is None
    assert any(d.code.startswith("SK2") for d in again.diagnostics)


def test_a_selection_over_hundreds_of_findings_gets_one_shared_fix_quickly(
    client: Client, tmp_path: Path
) -> None:
    """One edit moves every key outside the specification under `metadata`: it is offered
    once, not once a key, and "disable" comments for the first findings only (each is proved
    by parsing the file with it: 400 keys took 1.35 s, quadratic)."""
    skill = write_skill(tmp_path, "pdf-tools")
    keys = "".join(f"key{i}: v\n" for i in range(400))
    text = GOOD.replace("PDFs.\n---\n", f"PDFs.\n{keys}---\n")
    text += "\n# Steps\n\nDo it.\n"
    _initialize(client, tmp_path)
    uri = _open(client, skill / "SKILL.md", text)
    diagnostics = client.diagnostics(uri, 1)
    moved = [d for d in diagnostics if d["code"] == "SK108"]
    assert len(moved) == 400
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 410, "character": 0}},
            "context": {"diagnostics": moved},
        },
    )
    quick = [a for a in actions if a["kind"] == "quickfix" and a["title"].startswith("SK108")]
    assert len(quick) == 1, [a["title"] for a in quick]
    moved_text = _apply(text, quick[0]["edit"]["changes"][uri])
    assert "metadata:\n  key0: v\n" in moved_text and "\nkey399: v" not in moved_text
    disables = [a for a in actions if a["title"].startswith("Disable ")]
    assert 0 < len(disables) <= 20  # each is proved by a parse: a bounded number of them


_CLIENT_CHARS = st.text(
    alphabet=st.sampled_from(["a", " ", "é", "表", "😀", "\ud800", "\U00010348", "\t"]),
    max_size=40,
)
# lines past the 1,024-code-point marks: a short text repeated
_CLIENT_TEXT = st.builds(
    lambda part, times, tail: part * times + tail, _CLIENT_CHARS, st.integers(0, 300), _CLIENT_CHARS
)


@settings(max_examples=300, deadline=None)
@given(_CLIENT_TEXT, st.integers(0, 12_100), st.sampled_from(["utf-8", "utf-16", "utf-32"]))
def test_client_columns_are_the_head_measured(line: str, column: int, encoding: str) -> None:
    """A long line is measured from marks every 1,024 code points: the same figure as
    encoding the whole head."""
    head = line[:column]
    expected = {
        "utf-8": len(head.encode("utf-8", "surrogatepass")),
        "utf-16": len(head.encode("utf-16-le", "surrogatepass")) // 2,
        "utf-32": len(head),
    }[encoding]
    assert analysis.client_units(line, column, encoding) == expected


def test_client_columns_of_many_findings_on_a_long_line_are_linear() -> None:
    """Publishing measured each diagnostic's line head: thousands of findings on a megabyte
    line of non-ASCII text were quadratic."""

    def work(n: int) -> None:
        for line in ("[a](missing.md) é 😀 " * (n // 20), "[a](missing.md) e :) " * (n // 20)):
            for encoding in ("utf-8", "utf-16", "utf-32"):
                for column in range(0, len(line), 20):
                    analysis.client_units(line, column, encoding)

    assert_linear(lambda n: cpu_seconds(lambda: work(n)), 100_000, what="client columns")


def test_a_known_rename_is_offered_and_help_reads_as_help(client: Client, tmp_path: Path) -> None:
    skill = write_skill(tmp_path, "pdf-tools")
    skill_md = skill / "SKILL.md"
    _initialize(client, tmp_path)
    text = GOOD.replace("name: pdf-tools", "name: pdf-tool") + "\n# Steps\n\nDo it.\n"
    uri = _open(client, skill_md, text)
    mismatch = next(d for d in client.diagnostics(uri, 1) if d["code"] == "SK206")
    assert mismatch["message"].endswith("\nhelp: name: pdf-tools")
    actions = client.request(
        "textDocument/codeAction",
        {
            "textDocument": {"uri": uri},
            "range": mismatch["range"],
            "context": {"diagnostics": [mismatch]},
        },
    )
    [rename] = [a for a in actions if a["title"] == "SK206: rename the skill to 'pdf-tools'"]
    assert rename["kind"] == "quickfix" and not rename.get("isPreferred")
    assert _apply(text, rename["edit"]["changes"][uri]).startswith("---\nname: pdf-tools\n")
    # a rename changes meaning: never part of "fix all"
    assert not [a for a in actions if a["kind"] == "source.fixAll"]
