"""Skills over MCP (SEP-2640): `skillcheck serve`, and the host checks of `verify mcp:` and
`install mcp:`, against the MCP SDK's own client, hostile servers and FastMCP's independent
implementation. Every wait is bounded by a timeout that only guards against a hang."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import FIXTURES, run_skillcheck, skillcheck_command, write_skill

pytest.importorskip("mcp")

from skillcheck.mcp import client as mcp_client
from skillcheck.mcp.protocol import EntryError, check_entry, file_uri

HERE = Path(__file__).resolve().parent
HOSTILE = HERE / "mcp_hostile.py"
FASTMCP = HERE / "mcp_fastmcp.py"
EXAMPLES = FIXTURES / "valid"
GUARD = 120.0  # seconds: a hang guard, never an expectation


def _sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _command(*args: str) -> str:
    return "mcp:" + subprocess.list2cmdline([*args])


def _serve_command(path: Path) -> list[str]:
    return [*skillcheck_command(), "serve", "--isolated", str(path)]


def _settings() -> Any:
    from skillcheck.engine.config import build_settings
    from skillcheck.settings import load_config

    return build_settings(load_config(None, isolated=True))


def _files_on_disk(skill: Path) -> dict[str, bytes]:
    return {
        p.relative_to(skill).as_posix(): p.read_bytes()
        for p in sorted(skill.rglob("*"))
        if p.is_file()
    }


async def _request(client: Any, method: str, params: dict[str, Any]) -> dict[str, Any]:
    from pydantic import TypeAdapter

    request = mcp_client._request_type(method)(method=method, params=params)
    return await client.session.send_request(request, TypeAdapter(dict[str, Any]))


def _read_bytes(contents: Any) -> bytes:
    if hasattr(contents, "text"):
        return contents.text.encode("utf-8")
    return base64.b64decode(contents.blob)


# --- the server, driven by the MCP SDK's own client ---------------------------------------


def test_sdk_client_over_stdio_lists_gets_and_reads_every_example_skill() -> None:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command = _serve_command(EXAMPLES)
    params = StdioServerParameters(command=command[0], args=command[1:])

    async def session() -> dict[str, dict[str, bytes]]:
        seen: dict[str, dict[str, bytes]] = {}
        with anyio.fail_after(GUARD):
            async with Client(params) as client:
                caps = client.server_capabilities
                assert caps.extensions == {
                    "io.modelcontextprotocol/skills": {"directoryRead": True}
                }
                assert caps.resources is not None
                listing = await _request(client, "skills/list", {})
                assert listing["resultType"] == "complete"
                for entry in listing["skills"]:
                    got = await _request(client, "skills/get", {"uri": entry["uri"]})
                    assert got["skill"] == entry
                    name = entry["frontmatter"]["name"]
                    assert entry["uri"] == f"skill://{name}/SKILL.md"
                    files = seen.setdefault(name, {})
                    for resource in entry["resources"]:
                        result = await client.read_resource(resource["uri"])
                        (contents,) = result.contents
                        assert contents.uri == resource["uri"]
                        data = _read_bytes(contents)
                        assert len(data) == resource["size"]
                        assert _sha(data) == resource["digest"]
                        files[resource["uri"].removeprefix(f"skill://{name}/")] = data
                    root = await _request(
                        client, "resources/directory/read", {"uri": f"skill://{name}"}
                    )
                    children = {c["name"]: c["mimeType"] for c in root["resources"]}
                    assert children["SKILL.md"] == "text/markdown"
                    tops = {rel.split("/")[0] for rel in files}
                    assert set(children) == tops
        return seen

    seen = anyio.run(session)
    expected = {p.name for p in EXAMPLES.iterdir() if (p / "SKILL.md").is_file()}
    assert set(seen) == expected
    for name, files in seen.items():
        assert files == _files_on_disk(EXAMPLES / name)  # every byte, every file


def _in_process(tmp_path: Path, skills: Path) -> Any:
    from skillcheck.mcp.server import Served

    return Served(skills, _settings(), log=lambda line: None)


def _run_in_process(served: Any, body: Any) -> Any:
    import anyio
    from mcp import Client

    from skillcheck.mcp.server import build_server

    async def go() -> Any:
        with anyio.fail_after(GUARD):
            async with Client(build_server(served)) as client:
                return await body(client)

    return anyio.run(go)


def test_raw_bytes_are_served_as_committed(tmp_path: Path) -> None:
    """CRLF, a BOM and bytes that are not UTF-8 reach the client unchanged: digests are of
    the raw bytes, text goes as text only when it is UTF-8, anything else as a blob."""
    png = b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary"
    crlf = b"\xef\xbb\xbf# Notes\r\n\r\nKeep CRLF.\r\n"
    skill = write_skill(
        tmp_path / "skills",
        "release-notes",
        body="# Steps\n\nSee [notes](references/notes.md) and ![logo](assets/logo.png).\n",
        files={"references/notes.md": crlf, "assets/logo.png": png},
    )
    served = _in_process(tmp_path, tmp_path / "skills")

    async def body(client: Any) -> dict[str, Any]:
        listing = await _request(client, "skills/list", {})
        (entry,) = listing["skills"]
        out = {}
        for res in entry["resources"]:
            result = await client.read_resource(res["uri"])
            out[res["uri"]] = (res, result.contents[0])
        return out

    reads = _run_in_process(served, body)
    for rel, data in _files_on_disk(skill).items():
        res, contents = reads[file_uri("release-notes", rel)]
        assert res["digest"] == _sha(data) and res["size"] == len(data)
        assert _read_bytes(contents) == data
    assert hasattr(reads[file_uri("release-notes", "assets/logo.png")][1], "blob")
    assert hasattr(reads[file_uri("release-notes", "references/notes.md")][1], "text")


def test_server_answers_nothing_outside_what_it_lists(tmp_path: Path) -> None:
    from mcp.shared.exceptions import MCPError

    write_skill(tmp_path / "skills", "release-notes")
    (tmp_path / "secret.txt").write_text("not a skill file")
    served = _in_process(tmp_path, tmp_path / "skills")

    async def body(client: Any) -> list[int]:
        codes = []
        for method, params in [
            ("resources/read", {"uri": "skill://release-notes/../../secret.txt"}),
            ("resources/read", {"uri": "skill://release-notes/%2E%2E/secret.txt"}),
            ("resources/read", {"uri": f"skill://{tmp_path}/secret.txt"}),
            ("resources/read", {"uri": "file:///etc/passwd"}),
            ("resources/read", {"uri": "skill://release-notes/missing.md"}),
            ("skills/get", {"uri": "skill://other/SKILL.md"}),
            ("resources/directory/read", {"uri": "skill://release-notes/SKILL.md"}),
        ]:
            try:
                await _request(client, method, params)
            except MCPError as exc:
                codes.append(exc.code)
        return codes

    assert _run_in_process(served, body) == [-32602] * 7


def test_serve_refuses_what_the_pack_gate_refuses(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "release-notes", frontmatter="name: other-name\n")
    result = run_skillcheck("serve", "--isolated", str(tmp_path / "skills"))
    assert result.returncode == 1
    assert b"refusing" in result.stderr


def test_serve_never_serves_a_link_out_of_a_skill(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skills", "release-notes")
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink(tmp_path / "secret.txt", skill / "notes.md")
    result = run_skillcheck("serve", "--isolated", str(tmp_path / "skills"))
    assert result.returncode == 1
    assert b"outside" not in result.stdout


def test_reload_swaps_in_a_changed_tree_only_once_it_passes_the_gate(tmp_path: Path) -> None:
    skill = write_skill(tmp_path / "skills", "release-notes", files={"notes.md": "one\n"})
    served = _in_process(tmp_path, tmp_path / "skills")
    first = served.snapshot.skills["release-notes"].entry()
    assert served.refresh() is False  # nothing changed

    (skill / "notes.md").write_text("two, longer\n")
    (skill / "extra.md").write_text("added\n")
    assert served.refresh() is True
    files = served.snapshot.skills["release-notes"].files
    assert files["notes.md"] == (12, _sha(b"two, longer\n"))
    assert "extra.md" in files
    good = served.snapshot

    text = (skill / "SKILL.md").read_text()
    (skill / "SKILL.md").write_text(text.replace("name: release-notes", "name: Bad_Name"))
    assert served.refresh() is False  # refused by the gate: the last good one stays
    assert served.snapshot is good
    assert served.snapshot.skills["release-notes"].entry() != first
    served.close()


def test_serve_a_bundle_lists_the_same_skills_as_the_tree(tmp_path: Path) -> None:
    from skillcheck.mcp.server import Served

    bundle = tmp_path / "skills.tar.gz"
    assert run_skillcheck("pack", "--isolated", str(EXAMPLES), "-o", str(bundle)).returncode == 0
    tree = Served(EXAMPLES, _settings(), log=lambda line: None)
    packed = Served(bundle, _settings(), log=lambda line: None)
    entries = {k: v.entry() for k, v in tree.snapshot.skills.items()}
    assert entries == {k: v.entry() for k, v in packed.snapshot.skills.items()}
    tree.close()
    packed.close()


def test_streamable_http_on_loopback_verifies(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*_serve_command(EXAMPLES), "--http", "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        found: list[str] = []
        ready = threading.Event()

        def watch() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                text = line.decode(errors="replace")
                if "serving MCP at " in text:
                    found.append(text.split("serving MCP at ", 1)[1].strip())
                    ready.set()

        threading.Thread(target=watch, daemon=True).start()
        assert ready.wait(GUARD), "the server never said where it listens"
        url = found[0]
        assert url.startswith("http://127.0.0.1:")
        result = run_skillcheck("verify", "mcp:" + url, timeout=GUARD)
        assert result.returncode == 0, result.stderr
        assert result.stdout.decode().count("Verified ") == 3
    finally:
        proc.terminate()
        proc.wait(GUARD)


# --- the host side: what a server may not get away with --------------------------------------

REFUSALS = {
    "wrong-digest": "does not match the manifest's digest",
    "dotdot": "'..', '.' or empty path segment",
    "absolute": "absolute path",
    "outside": "is outside the skill",
    "name-mismatch": "differs from the last path segment",
    "frontmatter": "frontmatter differs from the listing (field 'description')",
    "dynamic": "no digests, nothing can be verified",
    "too-many": "more than 512",
    "oversized": "more than the 32 bytes the manifest lists",
    "unlisted-read": "a file the manifest does not list",
    "unlisted-dir": "which the skill's manifest does not list",
    "slow": "no answer within",
}


@pytest.fixture(scope="module")
def hostile_report() -> mcp_client.FetchReport:
    target = _command(sys.executable, str(HOSTILE), *REFUSALS, "blob")
    return mcp_client.fetch_sync(target, timeout=30)


def test_each_hostile_skill_is_refused_with_one_line(hostile_report) -> None:
    assert sorted(f.name for f in hostile_report.skills) == ["alpha", "blob"]
    assert len(hostile_report.refused) == len(REFUSALS)
    for mode, reason in REFUSALS.items():
        lines = [line for line in hostile_report.refused if f"skill://{mode}/" in line]
        if mode == "name-mismatch":
            lines = [line for line in hostile_report.refused if "other-name" in line]
        assert len(lines) == 1, (mode, hostile_report.refused)
        assert reason in lines[0] and "\n" not in lines[0]


def test_install_from_a_hostile_server_leaves_only_verified_skills(
    tmp_path: Path, hostile_report
) -> None:
    dest = tmp_path / "dest"
    result = mcp_client.install(hostile_report, dest, _settings())
    assert [name for name, *_ in result.installed] == ["alpha", "blob"]
    assert sorted(os.listdir(dest)) == ["alpha", "blob"]  # nothing half-written beside
    for name in ("alpha", "blob"):
        fetched = next(f for f in hostile_report.skills if f.name == name)
        assert _files_on_disk(dest / name) == fetched.files


def test_install_cli_from_a_hostile_server_exits_1(tmp_path: Path) -> None:
    target = _command(sys.executable, str(HOSTILE), "wrong-digest", "dotdot")
    result = run_skillcheck("install", target, str(tmp_path / "dest"), timeout=GUARD)
    assert result.returncode == 1
    assert sorted(os.listdir(tmp_path / "dest")) == ["alpha"]
    errors = result.stderr.decode().splitlines()
    assert len(errors) == 2 and all(line.startswith("skillcheck: ") for line in errors)


def test_install_refuses_a_verified_skill_that_fails_lint(tmp_path: Path) -> None:
    """Digests prove consistency, not quality: a verified skill still passes the lint gate
    (the same as pack's) before it is installed."""
    target = _command(sys.executable, str(HOSTILE), "lint-error")
    report = mcp_client.fetch_sync(target, timeout=GUARD)
    assert sorted(f.name for f in report.skills) == ["alpha", "lint-error"]
    result = mcp_client.install(report, tmp_path / "dest", _settings())
    assert [name for name, *_ in result.installed] == ["alpha"]
    (line,) = result.refused
    assert line.startswith("'lint-error': not installed: lint: SK303 ")
    assert sorted(os.listdir(tmp_path / "dest")) == ["alpha"]


def test_an_endless_answer_is_refused_within_the_bound() -> None:
    target = _command(sys.executable, str(HOSTILE), "endless")
    with pytest.raises(mcp_client.McpError, match="longer than"):
        mcp_client.fetch_sync(target, timeout=GUARD, max_bytes=64 * 1024)


def test_a_server_that_cannot_start_is_exit_2_in_one_line(tmp_path: Path) -> None:
    result = run_skillcheck("verify", "mcp:" + str(tmp_path / "no-such-server"))
    assert result.returncode == 2
    assert result.stderr.decode().count("\n") == 1
    assert b"cannot start" in result.stderr


def test_a_server_without_the_extension_is_refused() -> None:
    code = (
        "import anyio; from mcp.server.lowlevel import Server; "
        "from mcp.server.stdio import stdio_server\n"
        "async def r(c, p): return None\n"
        "s = Server('plain', on_list_resources=r)\n"
        "async def m():\n"
        "    async with stdio_server() as (a, b):\n"
        "        await s.run(a, b, s.create_initialization_options())\n"
        "anyio.run(m)\n"
    )
    with pytest.raises(
        mcp_client.McpError, match=r"does not declare io\.modelcontextprotocol/skills"
    ):
        mcp_client.fetch_sync(_command(sys.executable, "-c", code), timeout=GUARD)


@pytest.mark.parametrize(
    "change",
    [
        {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a"}, "resources": []},
        {"uri": "skill://a/SKILL.md", "frontmatter": {"name": "a", "description": "d"}},
        {
            "uri": "skill://a/SKILL.md",
            "frontmatter": {"name": "a", "description": "d"},
            "resources": [{"uri": "skill://a/x.md", "digest": "sha256:" + "0" * 64, "size": 1}],
        },
        {
            "uri": "skill://a/SKILL.md",
            "frontmatter": {"name": "a", "description": "d"},
            "resources": [{"uri": "skill://a/SKILL.md", "digest": "md5:00", "size": 1}],
        },
        {
            "uri": "skill://a/SKILL.md",
            "frontmatter": {"name": "a", "description": "d"},
            "resources": [{"uri": "skill://a/SKILL.md", "digest": "sha256:" + "0" * 64}] * 2,
        },
    ],
    ids=["no description", "no resources", "no SKILL.md listed", "bad digest", "no size"],
)
def test_malformed_entries_are_refused(change: dict[str, Any]) -> None:
    with pytest.raises(EntryError):
        check_entry(change)


# --- interoperability with FastMCP's SEP-2640 implementation ---------------------------------


def _isolated(argv: list[str]) -> list[str]:
    """Run a third-party program with no network but loopback, where this machine can."""
    if (
        shutil.which("unshare")
        and subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0
    ):
        return ["unshare", "-n", *argv]
    return argv


def test_our_client_verifies_fastmcps_server() -> None:
    pytest.importorskip("fastmcp")
    server = _isolated([sys.executable, str(FASTMCP), "serve", str(EXAMPLES)])
    result = run_skillcheck("verify", _command(*server), timeout=GUARD)
    assert result.returncode == 0, result.stderr
    verified = sorted(line.split(":")[0] for line in result.stdout.decode().splitlines())
    expected = sorted(
        f"Verified {p.name}" for p in EXAMPLES.iterdir() if (p / "SKILL.md").is_file()
    )
    assert verified == expected


def test_fastmcps_client_verifies_our_server(tmp_path: Path) -> None:
    pytest.importorskip("fastmcp")
    dest = tmp_path / "fetched"
    dest.mkdir()
    argv = _isolated([sys.executable, str(FASTMCP), "fetch", str(dest), *_serve_command(EXAMPLES)])
    result = subprocess.run(argv, capture_output=True, timeout=GUARD)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    names = sorted(p.name for p in EXAMPLES.iterdir() if (p / "SKILL.md").is_file())
    assert sorted(line["uri"] for line in lines) == [f"skill://{n}/SKILL.md" for n in names]
    for name in names:  # FastMCP's client checked every digest; the bytes are the files'
        assert _files_on_disk(dest / name) == _files_on_disk(EXAMPLES / name)


def test_the_loader_api_serves_verified_skills_only(hostile_report) -> None:
    skills = mcp_client.McpSkills(hostile_report)
    assert skills.names() == ["alpha", "blob"]
    assert skills.refused == hostile_report.refused
    assert skills.read_text("alpha").startswith("---\nname: alpha\n")
    assert (
        skills.read_bytes("blob", "references/guide.md") == b"# Guide\n\nGroup changes by type.\n"
    )
    assert skills.entry("alpha").resources["SKILL.md"].uri == "skill://alpha/SKILL.md"
    assert "<name>\nalpha\n</name>" in skills.catalog_xml()
    for name, path in [("wrong-digest", "SKILL.md"), ("alpha", "references/other.md")]:
        with pytest.raises(mcp_client.McpError):
            skills.read_bytes(name, path)


# --- what serve never does (README, Reliability) -------------------------------------------


def _tree_state(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root``, hidden ones included: a file's bytes, else None."""
    return {
        p.relative_to(root).as_posix(): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def test_serve_writes_nothing_but_its_private_snapshot_and_removes_it(tmp_path: Path) -> None:
    """Serving a tree writes nothing into it (no cache, no output) and nowhere but its own
    temporary snapshot, which is gone once the server ends."""
    write_skill(tmp_path / "skills", "release-notes", files={"notes.md": "one\n"})
    temp, home = tmp_path / "tmp", tmp_path / "home"
    temp.mkdir()
    home.mkdir()
    before = _tree_state(tmp_path / "skills")
    # no cache folder named: a cache would go to the tree (its project root) or to HOME
    env = {
        k: v for k, v in os.environ.items() if k not in ("SKILLCHECK_CACHE_DIR", "XDG_CACHE_HOME")
    }
    proc = subprocess.Popen(
        [*skillcheck_command(), "serve", "--isolated", "."],
        cwd=tmp_path / "skills",
        env={**env, "TMPDIR": str(temp), "HOME": str(home)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"},
        },
    }
    proc.stdin.write(json.dumps(initialize).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())  # the event: serving, its snapshot made
    assert answer["id"] == 1 and "result" in answer, answer
    assert [p.name.startswith("skillcheck-serve-") for p in temp.iterdir()] == [True]
    _out, err = proc.communicate(b"", timeout=GUARD)  # closes its input: it ends
    assert proc.returncode == 0, err
    assert list(temp.iterdir()) == [] and list(home.iterdir()) == []
    assert _tree_state(tmp_path / "skills") == before


def test_a_skill_over_the_serving_bounds_is_left_out_and_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillcheck.mcp import server

    monkeypatch.setattr(server, "MAX_RESOURCES", 2)  # SEP-2640's bound, made small
    write_skill(tmp_path / "skills", "release-notes")
    write_skill(tmp_path / "skills", "many-files", files={"a.md": "a\n", "b.md": "b\n"})
    lines: list[str] = []
    served = server.Served(tmp_path / "skills", _settings(), log=lines.append)
    try:
        assert sorted(served.snapshot.skills) == ["release-notes"]
        assert any("many-files" in line and "more than the 2" in line for line in lines), lines
    finally:
        served.close()
