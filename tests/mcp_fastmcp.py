"""FastMCP's own SEP-2640 implementation, for the interoperability tests (run in a network
namespace of its own where the tests can make one).

``python mcp_fastmcp.py serve ROOT``: FastMCP serving the skills under ROOT on stdio (its
``SkillsDirectoryProvider``). ``python mcp_fastmcp.py fetch DEST COMMAND...``: FastMCP's
client starts COMMAND as a stdio server, lists its skills, reads and verifies every one
(``Client.read_skill``) and writes each into DEST (``Skill.to_directory``); prints one JSON
line per skill: its URI and the digests of its files."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")


def serve(root: str) -> None:
    from fastmcp import FastMCP
    from fastmcp.skills.provider import SkillsDirectoryProvider

    server = FastMCP("fastmcp-skills")
    server.add_provider(SkillsDirectoryProvider(Path(root)))
    server.run("stdio", show_banner=False)


async def fetch(dest: str, command: list[str]) -> None:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from fastmcp.skills.client import SkillsClientExtension

    transport = StdioTransport(command=command[0], args=command[1:])
    async with Client(transport, extensions=[SkillsClientExtension()]) as client:
        for entry in await client.list_skills():
            skill = await client.read_skill(entry.uri)
            skill.to_directory(Path(dest) / entry.frontmatter.name)
            files = {r.uri: r.digest for r in entry.resources}
            print(json.dumps({"uri": entry.uri, "files": files}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    else:
        import anyio

        anyio.run(fetch, sys.argv[2], sys.argv[3:])
