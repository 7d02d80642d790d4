"""``skillcheck lsp``: the Language Server over stdio (the 'lsp' extra)."""

from __future__ import annotations

import click

from skillcheck.cli.common import fail, handle_errors


@click.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk over stdin/stdout (the default and only way).")
@handle_errors
def lsp_command(stdio: bool) -> None:
    """Run the Language Server over stdio (needs the 'lsp' extra: pygls)."""
    try:
        from skillcheck.lsp.server import main
    except ImportError as exc:
        fail(
            f"the language server needs pygls ({exc}); install it with"
            " pip install 'agent-skillcheck[lsp]'"
        )
    main()
