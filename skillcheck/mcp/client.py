"""The host side of SEP-2640, done for hosts: fetch a server's skills and verify them.

``fetch`` lists the skills (``skills/list``, every page), checks each entry before reading
anything (``protocol.check_entry``), reads every listed file with ``resources/read`` and
checks its size and digest, refuses a read answered for another URI or with more than one
file, compares SKILL.md's frontmatter with the listing, and, when the server reads
directories, refuses a skill whose directories hold files its manifest does not list (the
manifest must be complete). Every request has a deadline, and a stdio server's messages are
read with a size bound, so a slow, endless or oversized answer is a one-line refusal, not a
hang or an exhausted memory. ``install`` then lints each verified skill in a private
directory and moves it into place whole (``package.bundle.building_dir``), or writes nothing.

A target is ``mcp:<command> [args...]`` (a server started on stdio, split as a shell would)
or ``mcp:http(s)://host/path`` (streamable HTTP; plain http only to loopback).
"""

from __future__ import annotations

import base64
import binascii
import os
import shlex
import subprocess
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from skillcheck import api
from skillcheck.errors import RefusedContent, SkillcheckError, UsageError
from skillcheck.mcp.protocol import (
    EXTENSION_ID,
    MAX_SKILL_BYTES,
    SCHEME,
    Entry,
    EntryError,
    check_entry,
    check_file,
    check_frontmatter,
)
from skillcheck.package.bundle import _write_new_file, building_dir
from skillcheck.package.catalog import SKILL_FILE, render_xml_entries, show
from skillcheck.package.install import url_problem

PREFIX = "mcp:"
DEFAULT_TIMEOUT = 30.0  # seconds for one request's answer
MAX_PAGES = 1000  # skills/list pages followed at most
MAX_DIRECTORIES = 1000  # directory resources read per skill at most


class McpError(RefusedContent):
    """A server, or what it served, that cannot be trusted: one line, exit 1."""


class McpConnectError(SkillcheckError):
    """A server that cannot be started or reached: an I/O failure, exit 2."""


def is_target(source: str) -> bool:
    return source.startswith(PREFIX)


@dataclass
class Fetched:
    """One skill, verified: every listed file, read and checked."""

    entry: Entry
    files: dict[str, bytes]

    @property
    def name(self) -> str:
        return self.entry.name


@dataclass
class FetchReport:
    target: str
    skills: list[Fetched] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # one line per skill not taken


def _message_bound(max_bytes: int) -> int:
    """The largest JSON-RPC message read: a file of ``max_bytes`` as JSON text can take six
    bytes per byte (``\\u0001``), plus room for the envelope."""
    return 6 * max_bytes + (1 << 20)


@asynccontextmanager
async def _bounded_stdio(argv: list[str], max_message: int, overflow: list[str]) -> AsyncIterator:
    """The SDK's stdio transport, but reading bytes with a bound on one message (the SDK's
    reader keeps an unterminated line without limit). The server's stderr is discarded: it
    is the server's, and may hold terminal escapes."""
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    try:
        process = await anyio.open_process(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
    except OSError as exc:
        raise McpConnectError(f"cannot start {show(argv[0])}: {exc.strerror or exc}") from None
    read_writer, read_stream = anyio.create_memory_object_stream[Any](0)
    write_stream, write_reader = anyio.create_memory_object_stream[Any](0)

    async def reader() -> None:
        assert process.stdout is not None
        buffer = bytearray()
        async with read_writer:
            try:
                async for chunk in process.stdout:
                    buffer += chunk
                    while (cut := buffer.find(b"\n")) >= 0:
                        line = bytes(buffer[:cut])
                        del buffer[: cut + 1]
                        try:
                            message: Any = SessionMessage(
                                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                            )
                        except ValueError as exc:
                            message = exc
                        await read_writer.send(message)
                    if len(buffer) > max_message:
                        overflow.append(f"a message longer than {max_message:,} bytes")
                        return
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                return

    async def writer() -> None:
        assert process.stdin is not None
        async with write_reader:
            try:
                async for item in write_reader:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode("utf-8") + b"\n")
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                return

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(reader)
            tg.start_soon(writer)
            try:
                yield read_stream, write_stream
            finally:
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            if process.stdin is not None:
                await process.stdin.aclose()  # a well-behaved server ends on EOF
            with anyio.move_on_after(2):
                await process.wait()
            if process.returncode is None:
                process.kill()
            await process.aclose()


def _transport(target: str, max_message: int, overflow: list[str]) -> Any:
    rest = target[len(PREFIX) :].strip()
    if rest.startswith(("http://", "https://")):
        from mcp.client.streamable_http import streamable_http_client

        problem = url_problem(rest)
        if problem:
            raise UsageError(f"{show(rest)}: {problem}")
        return streamable_http_client(rest, max_sse_event_size=max_message)
    try:
        argv = shlex.split(rest)
    except ValueError as exc:
        raise UsageError(f"{show(target)}: {exc}") from None
    if not argv:
        raise UsageError("mcp: needs a command (mcp:<command> [args...]) or a URL")
    return _bounded_stdio(argv, max_message, overflow)


class _Session:
    """One connection: requests with a deadline, answers as plain JSON."""

    def __init__(
        self, client: Any, timeout: float, overflow: list[str], directory_read: bool = False
    ) -> None:
        self.client = client
        self.directory_read = directory_read
        self.timeout = timeout
        self.overflow = overflow

    async def request(self, method: str, params: dict[str, Any], what: str) -> dict[str, Any]:
        import anyio
        from mcp.shared.exceptions import MCPError
        from pydantic import TypeAdapter

        request = _request_type(method)(method=method, params=params)
        try:
            with anyio.fail_after(self.timeout):
                answer = await self.client.session.send_request(
                    request, TypeAdapter(dict[str, Any])
                )
        except TimeoutError:
            raise McpError(f"{what}: no answer within {self.timeout:g} s") from None
        except MCPError as exc:
            if self.overflow:
                raise McpError(f"{what}: the server sent {self.overflow[0]}") from None
            raise McpError(f"{what}: the server answered error {exc.code}: {exc.message}") from None
        except ValueError as exc:  # an answer that is no JSON-RPC result
            raise McpError(f"{what}: malformed answer: {str(exc).splitlines()[0]}") from None
        return answer


_REQUEST_TYPES: dict[str, type] = {}


def _request_type(method: str) -> type:
    """A typed request for ``method`` whose params keep every field (the SDK's generic
    ``Request`` serializes only the base params)."""
    if method not in _REQUEST_TYPES:
        from typing import Literal

        import mcp_types as types
        from pydantic import ConfigDict

        class Params(types.RequestParams):
            model_config = ConfigDict(extra="allow")

        class Typed(types.Request[Params, Literal[method]]):  # type: ignore[valid-type]
            params: Params

        _REQUEST_TYPES[method] = Typed
    return _REQUEST_TYPES[method]


@asynccontextmanager
async def connect(target: str, timeout: float, max_bytes: int) -> AsyncIterator[_Session]:
    """A session with the server ``target`` names, whose declaration has been checked."""
    from mcp import Client

    overflow: list[str] = []
    transport = _transport(target, _message_bound(max_bytes), overflow)
    client = Client(transport, read_timeout_seconds=timeout, cache=None)
    entered = False
    try:
        async with client:
            entered = True
            caps = client.server_capabilities
            declared = caps.extensions or {}
            if EXTENSION_ID not in declared:
                raise McpError(f"{show(target)}: the server does not declare {EXTENSION_ID}")
            if caps.resources is None:
                raise McpError(f"{show(target)}: the server does not declare resources")
            settings = declared[EXTENSION_ID]
            directory_read = isinstance(settings, dict) and settings.get("directoryRead") is True
            yield _Session(client, timeout, overflow, directory_read)
    except BaseException as exc:
        raise _explain(exc, entered, target, overflow) from None


def _explain(exc: BaseException, entered: bool, target: str, overflow: list[str]) -> BaseException:
    """What a failure of a session means, as one of our errors where it is one."""
    from mcp.shared.exceptions import MCPError

    if isinstance(exc, BaseExceptionGroup):  # the SDK's task groups wrap what was raised
        exc = _first(exc)
    if entered or isinstance(exc, SkillcheckError | KeyboardInterrupt):
        return exc
    if overflow:
        return McpError(f"{show(target)}: the server sent {overflow[0]}")
    if isinstance(exc, MCPError | OSError | ValueError | TimeoutError):
        reason = exc.message if isinstance(exc, MCPError) else str(exc) or type(exc).__name__
        return McpConnectError(f"{describe(target)}: cannot connect: {reason}")
    return exc


def _first(group: BaseExceptionGroup) -> BaseException:
    """The one error worth a line: ours if any, else the first."""
    leaves: list[BaseException] = []

    def walk(exc: BaseException) -> None:
        if isinstance(exc, BaseExceptionGroup):
            for inner in exc.exceptions:
                walk(inner)
        else:
            leaves.append(exc)

    walk(group)
    for exc in leaves:
        if isinstance(exc, SkillcheckError):
            return exc
    return leaves[0]


async def _list(session: _Session) -> list[Any]:
    entries: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        params = {"cursor": cursor} if cursor else {}
        page = await session.request("skills/list", params, "skills/list")
        skills = page.get("skills")
        if not isinstance(skills, list):
            raise McpError("skills/list: the answer has no 'skills' array")
        entries.extend(skills)
        cursor = page.get("nextCursor")
        if not cursor:
            return entries
        if not isinstance(cursor, str) or cursor in seen:
            raise McpError("skills/list: the server repeats a page cursor")
        seen.add(cursor)
    raise McpError(f"skills/list: more than {MAX_PAGES} pages")


async def _read(session: _Session, entry: Entry, rel: str) -> bytes:
    res = entry.resources[rel]
    answer = await session.request("resources/read", {"uri": res.uri}, show(res.uri))
    contents = answer.get("contents")
    if not isinstance(contents, list) or len(contents) != 1 or not isinstance(contents[0], dict):
        raise McpError(f"{show(res.uri)}: the answer is not exactly one file")
    item = contents[0]
    if item.get("uri") != res.uri:
        raise McpError(
            f"{show(res.uri)}: the server answered with {show(str(item.get('uri')))}, "
            "a file the manifest does not list there"
        )
    if isinstance(item.get("text"), str):
        text = item["text"]
        if len(text) > res.size:  # every character is at least one byte
            raise McpError(f"{show(res.uri)}: more than the {res.size} bytes the manifest lists")
        return text.encode("utf-8", "surrogatepass")
    if isinstance(item.get("blob"), str):
        blob = item["blob"]
        if len(blob) > 4 * (res.size // 3 + 1):
            raise McpError(f"{show(res.uri)}: more than the {res.size} bytes the manifest lists")
        try:
            return base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise McpError(f"{show(res.uri)}: the blob is not base64") from None
    raise McpError(f"{show(res.uri)}: the answer has neither text nor blob")


async def _unlisted(session: _Session, entry: Entry) -> str | None:
    """A file the server's directories show under the skill that its manifest does not list."""
    listed = set(entry.resources)
    dirs = {""} | {rel.rsplit("/", 1)[0] for rel in listed if "/" in rel}
    pending = [""]
    seen: set[str] = set()
    while pending:
        rel_dir = pending.pop()
        if rel_dir in seen:
            continue
        seen.add(rel_dir)
        if len(seen) > MAX_DIRECTORIES:
            return f"more than {MAX_DIRECTORIES} directories"
        uri = entry.root + (f"/{quote(rel_dir, safe='/')}" if rel_dir else "")
        answer = await session.request("resources/directory/read", {"uri": uri}, show(uri))
        children = answer.get("resources")
        if not isinstance(children, list):
            raise McpError(f"{show(uri)}: directory answer has no 'resources' array")
        for child in children:
            curi = child.get("uri") if isinstance(child, dict) else None
            if not isinstance(curi, str) or not curi.startswith(uri + "/"):
                raise McpError(f"{show(uri)}: directory lists {show(str(curi))}, outside it")
            rel = unquote(curi[len(entry.root) + 1 :])
            if child.get("mimeType") == "inode/directory":
                if rel not in dirs:
                    return f"directory {show(curi)}"
                pending.append(rel)
            elif rel not in listed:
                return show(curi)
    return None


async def fetch(
    target: str,
    *,
    select: list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_SKILL_BYTES,
    progress: Callable[[str], None] | None = None,
) -> FetchReport:
    """Every (selected) skill the server lists, verified; a skill that fails any check is in
    ``refused`` with a one-line reason and none of its bytes are kept. A server that cannot
    be used at all raises McpError (or UsageError for a target that cannot be started)."""
    report = FetchReport(target)
    async with connect(target, timeout, max_bytes) as session:
        raw_entries = await _list(session)
        entries: list[Entry] = []
        for raw in raw_entries:
            try:
                entry = check_entry(raw, max_bytes=max_bytes)
            except EntryError as exc:
                report.refused.append(str(exc))
                continue
            if select is None or entry.name in select:
                entries.append(entry)
        names = [e.name for e in entries]
        for entry in entries:
            if names.count(entry.name) > 1:
                report.refused.append(
                    f"{show(entry.uri)}: another listed skill is also named {show(entry.name)}"
                )
                continue
            if progress is not None:
                progress(entry.name)
            try:
                files = {}
                for rel in sorted(entry.resources):
                    data = await _read(session, entry, rel)
                    check_file(entry, rel, data)
                    files[rel] = data
                check_frontmatter(entry, files[SKILL_FILE])
                if session.directory_read:
                    extra = await _unlisted(session, entry)
                    if extra is not None:
                        raise EntryError(
                            f"{show(entry.uri)}: the server serves {extra}, "
                            "which the skill's manifest does not list"
                        )
            except (EntryError, McpError) as exc:
                report.refused.append(str(exc))
                continue
            report.skills.append(Fetched(entry, files))
        for name in select or ():
            if name not in names:
                report.refused.append(f"{show(name)}: the server lists no such skill")
    return report


def fetch_sync(target: str, **options: Any) -> FetchReport:
    import anyio

    return anyio.run(lambda: fetch(target, **options))


def stage(fetched: Fetched, root: Path) -> Path:
    """Write a verified skill into ``root/<name>`` (a private directory), for linting."""
    target = root / fetched.name
    os.mkdir(target)
    for rel, data in sorted(fetched.files.items()):
        _write_new_file(target, rel, data, False)
    return target


@dataclass
class McpInstall:
    installed: list[tuple[str, Path, int, int]] = field(default_factory=list)  # name, path,
    # files, bytes
    refused: list[str] = field(default_factory=list)  # one line per skill not taken


def install(
    report: FetchReport,
    dest: Path,
    settings: Any,
    *,
    force: bool = False,
    dry_run: bool = False,
    check: Callable[[Path], str | None] | None = None,
) -> McpInstall:
    """Lint each verified skill (the same gate as ``pack``) in a private directory, then move
    it into ``dest/<name>`` whole; a skill that fails writes nothing. ``check``, given the
    staged directory, may refuse it too (a signature check)."""
    result = McpInstall(refused=list(report.refused))
    with tempfile.TemporaryDirectory(prefix="skillcheck-mcp-") as tmp:
        for fetched in report.skills:
            target = dest / fetched.name
            if os.path.lexists(target) and not force:
                result.refused.append(f"{target}: exists (use --force to replace it)")
                continue
            staged = stage(fetched, Path(tmp))
            try:
                api.check_for_shipping([staged], settings)
            except api.Refused as exc:
                worst = max(exc.result.diagnostics, key=lambda d: d.severity)
                more = len(exc.result.diagnostics) - 1
                result.refused.append(
                    f"{show(fetched.name)}: not installed: lint: {worst.code} {worst.message}"
                    + (f" (and {more} more)" if more else "")
                )
                continue
            problem = check(staged) if check is not None else None
            if problem:
                result.refused.append(f"{show(fetched.name)}: not installed: {problem}")
                continue
            size = sum(len(d) for d in fetched.files.values())
            if not dry_run:
                dest.mkdir(parents=True, exist_ok=True)
                with building_dir(target, ".install") as building:
                    for rel, data in sorted(fetched.files.items()):
                        _write_new_file(building, rel, data, False)
            result.installed.append((fetched.name, target, len(fetched.files), size))
    return result


def describe(target: str) -> str:
    return show(target if len(target) < 100 else target[:97] + "...")


__all__ = [
    "PREFIX",
    "SCHEME",
    "FetchReport",
    "Fetched",
    "McpError",
    "McpSkills",
    "fetch",
    "fetch_sync",
    "install",
    "is_target",
    "open_mcp",
]


def verify(
    target: str,
    settings: Any,
    *,
    select: list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_SKILL_BYTES,
    check: Callable[[Path], str | None] | None = None,
) -> McpInstall:
    """``install`` without writing: everything fetched, verified and linted."""
    report = fetch_sync(target, select=select, timeout=timeout, max_bytes=max_bytes)
    with tempfile.TemporaryDirectory(prefix="skillcheck-mcp-") as tmp:
        return install(report, Path(tmp) / "dest", settings, dry_run=True, check=check)


class McpSkills:
    """The skills an MCP server serves, fetched and verified, for a runtime embedding
    Python (see ``open_mcp``): the progressive-disclosure loop of ``package.loader.Bundle``.

    A snapshot: every file is read and checked when the server is opened (an installer's
    reading of SEP-2640; a host reading lazily keeps the entries instead)."""

    def __init__(self, report: FetchReport) -> None:
        self.target = report.target
        self.refused = list(report.refused)  # one line per skill that failed a check
        self._skills = {f.name: f for f in report.skills}

    def names(self) -> list[str]:
        return sorted(self._skills)

    def entry(self, name: str) -> Entry:
        """The checked SEP-2640 entry: URI, frontmatter, files with sizes and digests."""
        try:
            return self._skills[name].entry
        except KeyError:
            raise McpError(
                f"no verified skill named {show(name)} from {describe(self.target)}"
            ) from None

    def read_bytes(self, name: str, path: str = SKILL_FILE) -> bytes:
        self.entry(name)
        try:
            return self._skills[name].files[path]
        except KeyError:
            raise McpError(f"skill {show(name)} has no file {show(path)}") from None

    def read_text(self, name: str, path: str = SKILL_FILE) -> str:
        try:
            return self.read_bytes(name, path).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise McpError(f"{show(name + '/' + path)} is not UTF-8 text") from None

    def catalog_xml(self, location_prefix: str = "") -> str:
        """The ``<available_skills>`` block, each location ``{prefix}{name}/SKILL.md``."""
        return render_xml_entries(
            (
                name,
                str(self.entry(name).frontmatter["description"]),
                f"{location_prefix}{name}/{SKILL_FILE}",
            )
            for name in self.names()
        )


def open_mcp(
    target: str,
    *,
    select: list[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_SKILL_BYTES,
) -> McpSkills:
    """Fetch and verify the skills of the MCP server ``target`` (``mcp:COMMAND ...`` or
    ``mcp:URL``). Skills that fail a check are left out and listed in ``refused``; a server
    that cannot be used raises McpError or McpConnectError."""
    return McpSkills(fetch_sync(target, select=select, timeout=timeout, max_bytes=max_bytes))
