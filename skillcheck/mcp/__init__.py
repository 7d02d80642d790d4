"""Skills over MCP (SEP-2640, extension ``io.modelcontextprotocol/skills``).

``protocol``: what both sides share and imports no MCP library (URIs, entries, the host's
checks). ``server``: ``skillcheck serve``, a tree, bundle or well-known directory served from
a verified snapshot. ``client``: the host side done for hosts (``verify mcp:...``, ``install``,
``api.open_mcp``). The MCP library (the official ``mcp`` SDK, extra ``agent-skillcheck[mcp]``)
is imported only by ``server`` and ``client``, inside the calls that need it.
"""
