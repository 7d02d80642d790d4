"""Click commands: parse options, call the API, choose a reporter. Thin by design.

The group lives here; each command is one module (what the commands share, including the
one place errors become an exit status, is ``cli.common``). A command's module is imported
only when that command runs, or when ``--help`` lists it: ``skillcheck lint`` reads no other
command's code, and each module imports what it runs inside the command function.
"""

from __future__ import annotations

import click

from skillcheck import __version__

# command name -> (module under skillcheck.cli, the click command in it)
COMMANDS: dict[str, tuple[str, str]] = {
    "catalog": ("catalog", "catalog"),
    "init": ("init", "init_command"),
    "install": ("install", "install"),
    "lint": ("lint", "lint"),
    "lsp": ("lsp", "lsp_command"),
    "pack": ("pack", "pack"),
    "rule": ("rules", "rule_command"),
    "rules": ("rules", "rules_command"),
    "serve": ("serve", "serve"),
    "sign": ("sign", "sign"),
    "unpack": ("verify", "unpack"),
    "verify": ("verify", "verify"),
}


class _Commands(click.Group):
    """The group, loading a command's module when the command is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, name = COMMANDS[cmd_name]
        # __import__ rather than importlib.import_module: the import goes through the
        # interpreter's own machinery, so `python -X importtime` accounts for it
        found = __import__(f"skillcheck.cli.{module}", fromlist=[name])
        command: click.Command = getattr(found, name)
        return command


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, "--version", prog_name="skillcheck", message="%(prog)s %(version)s"
)
def cli() -> None:
    """Lint, catalog and package Agent Skills."""
