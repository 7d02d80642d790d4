"""``skillcheck serve``: skills over MCP (SEP-2640), on stdio or streamable HTTP."""

from __future__ import annotations

from pathlib import Path

import click

from skillcheck.cli.common import (
    handle_errors,
    refusal_shown,
    rule_selection_options,
    shipping_settings,
)
from skillcheck.errors import UsageError


def need_mcp() -> None:
    """The MCP library is an optional extra: say how to get it instead of a traceback."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise UsageError("this command needs the MCP extra: pip install 'agent-skillcheck[mcp]'")


@click.command("serve")
@click.argument("source", type=click.Path(path_type=Path), default=".")
@click.option("--http", "http", is_flag=True, help="Streamable HTTP instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (--http).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True)
@click.option("--config", "config_file", type=click.Path(path_type=Path), help="Configuration.")
@click.option("--isolated", is_flag=True, help="Ignore all configuration files.")
@click.option("--target", metavar="NAME[,NAME...]", help="Runtimes that load the skills.")
@click.option("--strict", is_flag=True, default=None, help="Refuse on any finding.")
@click.option(
    "--poll",
    type=click.FloatRange(min=0.1),
    default=1.0,
    show_default=True,
    help="Seconds between checks of SOURCE for changes.",
)
@rule_selection_options
@handle_errors
def serve(source, http, host, port, config_file, isolated, target, strict, poll) -> None:
    """Serve a skills tree, a bundle or a well-known directory over MCP (SEP-2640): only
    what passes the same lint gate as `pack`, from a verified snapshot, reloaded on change."""
    need_mcp()
    import anyio

    from skillcheck.mcp.server import Served, serve_http, serve_stdio

    if http and host not in ("127.0.0.1", "localhost", "::1"):
        click.echo(
            f"skillcheck: warning: serving on {host}: reachable from other machines", err=True
        )
    settings = shipping_settings(config_file, isolated, target, 1, True, None, strict)
    with refusal_shown(True):
        served = Served(source, settings)
    try:
        if http:

            def ready(bound: int) -> None:
                click.echo(f"skillcheck: serving MCP at http://{host}:{bound}/mcp", err=True)

            anyio.run(serve_http, served, host, port, poll, ready)
        else:
            anyio.run(serve_stdio, served, poll)
    finally:
        served.close()
