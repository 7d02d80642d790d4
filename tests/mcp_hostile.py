"""A hostile SEP-2640 server for the tests, built with the official MCP SDK: ``python
mcp_hostile.py [MODE...]`` serves on stdio the skill ``alpha`` as it should be and, for each
MODE, a skill named MODE broken that way (``blob`` is not broken: its files come as base64
blobs; ``lint-error`` verifies but fails lint). ``python mcp_hostile.py endless`` is no MCP
server at all: it answers the first request with a line that never ends."""

from __future__ import annotations

import base64
import hashlib
import sys
from typing import Any

MODES = [
    "wrong-digest",
    "dotdot",
    "absolute",
    "outside",
    "name-mismatch",
    "frontmatter",
    "dynamic",
    "too-many",
    "oversized",
    "unlisted-read",
    "unlisted-dir",
    "slow",
    "blob",
    "lint-error",
]


def description(name: str) -> str:
    text = (
        "Formats release notes from merged pull requests. Use when the user asks for a changelog."
    )
    # verifiable, but longer than the spec allows: only the installing side's lint sees it
    return text + " More." * 200 if name == "lint-error" else text


def skill_files(name: str) -> dict[str, bytes]:
    return {
        "SKILL.md": (
            f"---\nname: {name}\ndescription: {description(name)}\n---\n# Steps\n\nRead"
            f" [the guide](references/guide.md).\n"
        ).encode(),
        "references/guide.md": b"# Guide\n\nGroup changes by type.\n",
    }


EXTENSION = "io.modelcontextprotocol/skills"


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def entry(name: str) -> dict[str, Any]:
    """The listing of skill ``name``: broken as its name says, except ``alpha``."""
    files = skill_files(name)
    path = name
    frontmatter: dict[str, Any] = {"name": name, "description": description(name)}
    resources: Any = [
        {"uri": f"skill://{path}/{rel}", "digest": digest(data), "size": len(data)}
        for rel, data in sorted(files.items())
    ]
    if name == "wrong-digest":
        resources[1]["digest"] = digest(b"something else")
    elif name == "dotdot":
        resources.append(
            {"uri": "skill://dotdot/../alpha/SKILL.md", "digest": digest(b""), "size": 0}
        )
    elif name == "absolute":
        resources.append(
            {"uri": "skill://absolute/%2Fetc%2Fpasswd", "digest": digest(b""), "size": 0}
        )
    elif name == "outside":
        resources.append({"uri": "file:///etc/passwd", "digest": digest(b""), "size": 0})
    elif name == "name-mismatch":
        path = "prefix/other-name"
        for item in resources:
            item["uri"] = item["uri"].replace(f"skill://{name}/", f"skill://{path}/")
    elif name == "frontmatter":
        frontmatter["description"] = "Something its SKILL.md does not say."
    elif name == "dynamic":
        resources = "dynamic"
    elif name == "too-many":
        resources += [
            {"uri": f"skill://too-many/f{i}.md", "digest": digest(b""), "size": 0}
            for i in range(600)
        ]
    return {"uri": f"skill://{path}/SKILL.md", "frontmatter": frontmatter, "resources": resources}


def build(modes: list[str]) -> Any:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    names = ["alpha", *modes]

    class UriParams(types.PaginatedRequestParams):
        uri: str

    cache = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"}

    async def list_resources(ctx: Any, params: Any) -> Any:
        return types.ListResourcesResult(resources=[])

    async def read_resource(ctx: Any, params: Any) -> Any:
        uri = str(params.uri)
        skill, _, rel = uri.removeprefix("skill://").removeprefix("prefix/other-").partition("/")
        skill = "name-mismatch" if skill == "name" else skill
        data = skill_files(skill).get(rel) if skill in names else None
        if data is None:
            raise MCPError(-32602, f"no file at {uri}")
        answered = uri
        if rel != "SKILL.md":
            if skill == "wrong-digest":  # the same length, other bytes
                data = data.replace(b"Group", b"Grope")
            elif skill == "oversized":
                data = data + b"x" * 4096
            elif skill == "unlisted-read":
                answered = "skill://unlisted-read/references/other.md"
            elif skill == "slow":
                await anyio.sleep_forever()
            elif skill == "blob":
                blob = base64.b64encode(data).decode()
                return types.ReadResourceResult(
                    contents=[types.BlobResourceContents(uri=uri, blob=blob)]
                )
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=answered, text=data.decode())]
        )

    async def list_skills(ctx: Any, params: Any) -> dict[str, Any]:
        return {**cache, "skills": [entry(name) for name in names]}

    async def get_skill(ctx: Any, params: Any) -> dict[str, Any]:
        for name in names:
            found = entry(name)
            if found["uri"] == params.uri:
                return {**cache, "skill": found}
        raise MCPError(-32602, f"no skill at {params.uri}")

    async def read_directory(ctx: Any, params: Any) -> dict[str, Any]:
        uri = params.uri
        name = uri.removeprefix("skill://").split("/")[0]
        if uri == f"skill://{name}":
            children = [
                {"uri": f"{uri}/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
                {"uri": f"{uri}/references", "name": "references", "mimeType": "inode/directory"},
            ]
        elif uri == f"skill://{name}/references":
            children = [{"uri": f"{uri}/guide.md", "name": "guide.md", "mimeType": "text/markdown"}]
            if name == "unlisted-dir":
                children.append(
                    {"uri": f"{uri}/extra.sh", "name": "extra.sh", "mimeType": "text/plain"}
                )
        else:
            raise MCPError(-32602, f"{uri} is not a directory")
        return {"resultType": "complete", "resources": children}

    server = Server("hostile", on_list_resources=list_resources, on_read_resource=read_resource)
    server.add_request_handler("skills/list", types.PaginatedRequestParams, list_skills)
    server.add_request_handler("skills/get", UriParams, get_skill)
    server.add_request_handler("resources/directory/read", UriParams, read_directory)
    server.extensions[EXTENSION] = {"directoryRead": True}
    return server


def endless() -> None:
    """Read one request, then answer with a JSON line that never ends."""
    sys.stdin.buffer.readline()
    out = sys.stdout.buffer
    out.write(b'{"jsonrpc": "2.0", "id": 0, "result": {"x": "')
    chunk = b"a" * 65536
    try:
        while True:
            out.write(chunk)
    except (BrokenPipeError, OSError):
        pass


def main() -> None:
    modes = sys.argv[1:]
    if modes == ["endless"]:
        endless()
        return
    import anyio
    from mcp.server.stdio import stdio_server

    server = build(modes)

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(run)


if __name__ == "__main__":
    main()
