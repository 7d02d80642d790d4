"""``skillcheck serve``: skills served over MCP under SEP-2640, from a verified snapshot.

What is served is always a verified artifact, never the live directory: a skills tree is
packed first (``api.pack``, so the same lint gate as ``pack`` and the same shipped-file rules:
default excludes, ``.skillignore``, links out of a skill refused), a bundle or a well-known
directory is opened with ``api.open_bundle`` (which verifies it). Every read comes from that
snapshot and is re-checked against its digest, so a manifest and the bytes served never
disagree, and no URI can reach a file the snapshot does not list (there is no path to join:
a URI is looked up, never resolved on disk). A poll notices changes to the source and swaps
in a new snapshot once it passes the gate; while it does not, the last good one is served.

The MCP side is the official SDK's low-level ``Server``: ``skills/list``, ``skills/get`` and
``resources/directory/read`` are request handlers it dispatches, the capability declaration
is its ``extensions`` map, and the transports (stdio, streamable HTTP) are its own.
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from skillcheck import __version__, api
from skillcheck.errors import SkillcheckError
from skillcheck.mcp.protocol import (
    DIRECTORY_MIME,
    EXTENSION_ID,
    MAX_RESOURCES,
    MAX_SKILL_BYTES,
    file_uri,
    parse_frontmatter,
    skill_path_problem,
    skill_root,
)
from skillcheck.package.archive import INDEX_NAME, MANIFEST_NAME
from skillcheck.package.catalog import SKILL_FILE, show
from skillcheck.settings import Settings
from skillcheck.source.junk import DISCOVERY_SKIP_DIRS

_MIME = {
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".html": "text/html",
    ".csv": "text/csv",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".pdf": "application/pdf",
}
INVALID_PARAMS = -32602
POLL_SECONDS = 1.0


def mime_type(rel: str) -> str:
    return _MIME.get(os.path.splitext(rel)[1].lower(), "application/octet-stream")


@dataclass
class ServedSkill:
    path: str  # the skill path: the name (bundles are flat)
    name: str
    frontmatter: dict[str, Any]
    files: dict[str, tuple[int, str]]  # rel -> (size, digest)

    def entry(self) -> dict[str, Any]:
        """The SEP-2640 ``Skill`` entry."""
        return {
            "uri": file_uri(self.path, SKILL_FILE),
            "frontmatter": self.frontmatter,
            "resources": [
                {"uri": file_uri(self.path, rel), "digest": digest, "size": size}
                for rel, (size, digest) in sorted(self.files.items())
            ],
        }


@dataclass
class Snapshot:
    """What is being served: a verified bundle and the skills in it that can be served."""

    bundle: Any  # skillcheck.package.loader.Bundle
    skills: dict[str, ServedSkill]  # by skill path
    skipped: list[str] = field(default_factory=list)  # one line each: why a skill is not served
    keep: Any = None  # the temporary directory of a packed tree, alive while served

    def __post_init__(self) -> None:
        self._files: dict[str, tuple[ServedSkill, str]] = {}

    def add(self, skill: ServedSkill) -> None:
        self.skills[skill.path] = skill
        for rel in skill.files:
            self._files[file_uri(skill.path, rel)] = (skill, rel)

    def locate(self, uri: str) -> tuple[ServedSkill, str] | None:
        """The skill and relative path ``uri`` names, if it names a listed file (a lookup:
        nothing in a URI is ever joined to a path on disk)."""
        return self._files.get(uri)

    def directory(self, uri: str) -> list[tuple[str, str, str]] | None:
        """The direct children of a directory resource as (uri, name, mime type), or None
        when ``uri`` is no directory of a served skill."""
        for skill in self.skills.values():
            root = skill_root(skill.path)
            if uri != root and not uri.startswith(root + "/"):
                continue
            prefix = unquote(uri[len(root) + 1 :]) + "/" if uri != root else ""
            children: dict[str, str] = {}
            for rel in skill.files:
                if rel.startswith(prefix):
                    head, sep, _ = rel[len(prefix) :].partition("/")
                    children[head] = DIRECTORY_MIME if sep else mime_type(rel)
            if children:
                return [
                    (file_uri(skill.path, prefix + name), name, mime)
                    for name, mime in sorted(children.items())
                ]
        return None


def _is_publication(source: Path) -> bool:
    """A bundle file, an unpacked bundle or a well-known directory (else a skills tree)."""
    if not source.is_dir():
        return True
    return (source / MANIFEST_NAME).is_file() or (source / INDEX_NAME).is_file()


def build_snapshot(source: Path, settings: Settings) -> Snapshot:
    """Check and freeze ``source``; raises the API's errors (Refused for a gate refusal,
    BundleError for an artifact that does not verify, UsageError when there is no skill)."""
    keep = None
    if _is_publication(source):
        bundle = api.open_bundle(source)
    else:
        keep = tempfile.TemporaryDirectory(prefix="skillcheck-serve-")
        try:
            out = Path(keep.name) / "served.tar.gz"
            api.pack([source], settings, output=out)
            bundle = api.open_bundle(out)
        except BaseException:
            keep.cleanup()
            raise
    snapshot = Snapshot(bundle, {}, keep=keep)
    for item in bundle.skills():
        files = {fe["path"]: (fe["size"], fe["digest"]) for fe in item.entry["files"]}
        problem = skill_path_problem(item.name)
        if problem is None and len(files) > MAX_RESOURCES:
            problem = f"{len(files)} files, more than the {MAX_RESOURCES} SEP-2640 allows"
        if problem is None and sum(s for s, _ in files.values()) > MAX_SKILL_BYTES:
            problem = f"more than the {MAX_SKILL_BYTES:,} bytes SEP-2640 allows"
        if problem is None:
            try:
                frontmatter = parse_frontmatter(bundle.read_bytes(item.name))
            except ValueError as exc:
                problem = str(exc)
        if problem is not None:
            snapshot.skipped.append(f"{show(item.name)}: not served: {problem}")
            continue
        snapshot.add(ServedSkill(item.name, item.name, frontmatter, files))
    return snapshot


def fingerprint(source: Path) -> tuple[Any, ...]:
    """Cheap evidence that ``source`` changed: every entry's path, type, size and mtime
    (links are not followed; the walk is bounded by what ``pack`` would read anyway)."""
    seen: list[tuple[str, int, int, int]] = []
    try:
        st = os.lstat(source)
    except OSError:
        return ()
    seen.append(("", st.st_mode, st.st_size, st.st_mtime_ns))
    if source.is_dir():
        for dirpath, dirnames, filenames in os.walk(source):
            # what discovery never enters cannot change what is served (.git, virtualenvs...)
            dirnames[:] = sorted(d for d in dirnames if d not in DISCOVERY_SKIP_DIRS)
            for name in sorted(dirnames + filenames):
                full = os.path.join(dirpath, name)
                try:
                    st = os.lstat(full)
                except OSError:
                    continue
                seen.append((full, st.st_mode, st.st_size, st.st_mtime_ns))
    return tuple(seen)


class Served:
    """The current snapshot of ``source``, swapped for a new one when the source changes
    and the new one passes the gate."""

    def __init__(
        self, source: Path, settings: Settings, log: Callable[[str], None] | None = None
    ) -> None:
        self.source = source
        self.settings = settings
        self.log = log or (lambda line: print(f"skillcheck: {line}", file=sys.stderr))
        self.mark = fingerprint(source)
        self.snapshot = build_snapshot(source, settings)
        self._retired: Snapshot | None = None
        for line in self.snapshot.skipped:
            self.log(line)

    def refresh(self) -> bool:
        """Rebuild when the source changed; whether a new snapshot is served."""
        mark = fingerprint(self.source)
        if mark == self.mark:
            return False
        self.mark = mark
        try:
            fresh = build_snapshot(self.source, self.settings)
        except (SkillcheckError, OSError) as exc:
            self.log(f"{self.source}: changed, still serving the last good version: {exc}")
            return False
        # the snapshot replaced may still be answering a read: its files go one swap later
        if self._retired is not None and self._retired.keep is not None:
            self._retired.keep.cleanup()
        self._retired, self.snapshot = self.snapshot, fresh
        for line in fresh.skipped:
            self.log(line)
        self.log(f"{self.source}: reloaded, serving {len(fresh.skills)} skill(s)")
        return True

    def close(self) -> None:
        for snapshot in (self.snapshot, self._retired):
            if snapshot is not None and snapshot.keep is not None:
                snapshot.keep.cleanup()


def _invalid(message: str) -> Exception:
    from mcp.shared.exceptions import MCPError

    return MCPError(INVALID_PARAMS, message)


def build_server(served: Served) -> Any:
    """The low-level MCP ``Server`` answering from ``served``'s current snapshot."""
    import mcp_types as types
    from mcp.server.lowlevel import Server

    cache = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}

    class UriParams(types.RequestParams):
        uri: str

    class DirectoryParams(types.PaginatedRequestParams):
        uri: str

    async def list_resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=file_uri(s.path, SKILL_FILE),
                    name=s.name,
                    description=s.frontmatter["description"],
                    mime_type="text/markdown",
                    size=s.files[SKILL_FILE][0],
                )
                for s in served.snapshot.skills.values()
            ]
        )

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        snapshot = served.snapshot
        found = snapshot.locate(uri)
        if found is None:
            raise _invalid(f"no file is served at {show(uri)}")
        skill, rel = found
        data = snapshot.bundle.read_bytes(skill.name, rel)  # digest re-checked
        mime = mime_type(rel)
        try:
            text = data.decode("utf-8")  # strict: a BOM stays a character, CRLF stays
        except UnicodeDecodeError:
            blob = base64.b64encode(data).decode("ascii")
            contents: Any = types.BlobResourceContents(uri=uri, mime_type=mime, blob=blob)
        else:
            contents = types.TextResourceContents(uri=uri, mime_type=mime, text=text)
        return types.ReadResourceResult(contents=[contents])

    async def list_skills(ctx: Any, params: Any) -> dict[str, Any]:
        entries = [s.entry() for _, s in sorted(served.snapshot.skills.items())]
        return {**cache, "skills": entries}

    async def get_skill(ctx: Any, params: Any) -> dict[str, Any]:
        uri = params.uri
        for skill in served.snapshot.skills.values():
            if file_uri(skill.path, SKILL_FILE) == uri:
                return {**cache, "skill": skill.entry()}
        raise _invalid(f"no skill is served at {show(uri)}")

    async def read_directory(ctx: Any, params: Any) -> dict[str, Any]:
        children = served.snapshot.directory(params.uri)
        if children is None:
            raise _invalid(f"{show(params.uri)} is not a directory resource")
        resources = [{"uri": u, "name": n, "mimeType": m} for u, n, m in children]
        return {"resultType": "complete", "resources": resources}

    server = Server(
        "skillcheck",
        version=__version__,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )
    server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
    server.add_request_handler("skills/get", UriParams, get_skill)
    server.add_request_handler("resources/directory/read", DirectoryParams, read_directory)
    server.extensions[EXTENSION_ID] = {"directoryRead": True}
    return server


async def _poll(served: Served, interval: float) -> None:
    import anyio

    while True:
        await anyio.sleep(interval)
        await anyio.to_thread.run_sync(served.refresh)


async def serve_stdio(served: Served, poll: float = POLL_SECONDS) -> None:
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(served)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_poll, served, poll)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        tg.cancel_scope.cancel()


async def serve_http(
    served: Served,
    host: str,
    port: int,
    poll: float = POLL_SECONDS,
    ready: Callable[[int], None] | None = None,
) -> None:
    """Streamable HTTP at ``http://host:port/mcp``; ``ready`` gets the bound port."""
    import anyio
    import uvicorn

    server = build_server(served)
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    web = uvicorn.Server(config)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_poll, served, poll)

        async def announce() -> None:
            while not web.started:
                await anyio.sleep(0.05)
            bound = web.servers[0].sockets[0].getsockname()[1] if web.servers else port
            if ready is not None:
                ready(bound)

        tg.start_soon(announce)
        await web.serve()
        tg.cancel_scope.cancel()
