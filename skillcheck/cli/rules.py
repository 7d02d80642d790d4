"""``skillcheck rules`` and ``skillcheck rule``: the rule registry's documentation."""

from __future__ import annotations

import click

from skillcheck.cli.common import emit, handle_errors
from skillcheck.errors import UsageError


@click.command("rules")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@handle_errors
def rules_command(fmt: str) -> None:
    """List every rule."""
    from skillcheck.report.docs import rules_json, rules_table

    emit(rules_json() if fmt == "json" else rules_table(), None)


@click.command("rule")
@click.argument("code_or_slug")
@handle_errors
def rule_command(code_or_slug: str) -> None:
    """Show one rule's documentation and the file that defines it."""
    from skillcheck.rules import all_rules, get_rule
    from skillcheck.source.display import did_you_mean

    found = get_rule(code_or_slug)
    if found is None:
        hint = did_you_mean(code_or_slug, [n for r in all_rules() for n in (r.code, r.slug)])
        raise UsageError(f"no rule {code_or_slug!r}{hint} (see `skillcheck rules`)")
    from skillcheck.targets import targets_help

    emit(
        found.docs_markdown()
        + "\nTarget profiles:\n"
        + targets_help()
        + f"\n\nDefined in `{found.defined_in}`.\n",
        None,
    )
