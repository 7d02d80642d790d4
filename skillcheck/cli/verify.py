"""``skillcheck verify`` and ``skillcheck unpack``: read a bundle without trusting it."""

from __future__ import annotations

from pathlib import Path

import click

from skillcheck.cli.common import allow_option, allowed_codes, emit, handle_errors, security_screen


@click.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--expect-digest", metavar="sha256:HEX", help="Refuse unless the archive has it.")
@click.option(
    "--allow-unverified",
    is_flag=True,
    help="Accept a v0.1.0 index (no digests: its content cannot be verified).",
)
@click.option("--base-url", metavar="URL", help="URL a well-known DIR is served at.")
@allow_option
@handle_errors
def verify(bundle, expect_digest, allow_unverified, base_url, allow) -> None:
    """Verify a bundle, or a well-known directory (anyone's), without trusting it; refuse
    it when a skill in it has a security error, unless --allow names the rule."""
    from skillcheck.errors import RefusedContent
    from skillcheck.package.loader import Bundle
    from skillcheck.package.loader import verify as run_verify
    from skillcheck.report import safe

    result = run_verify(bundle, expect_digest, allow_unverified=allow_unverified, base_url=base_url)
    for warning in result.warnings:
        click.echo(f"skillcheck: warning: {safe(warning)}", err=True)
    opened = Bundle(result)
    check = security_screen(allowed_codes(allow))
    for skill in opened.skills():
        files = {
            fe["path"]: opened.read_bytes(skill.name, fe["path"]) for fe in skill.entry["files"]
        }
        refused = check(skill.name, files)
        if refused is not None:
            raise RefusedContent(f"{bundle}: {skill.name}: {refused}")
    emit(safe(result.summary()) + "\n", None)


@click.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--expect-digest", metavar="sha256:HEX", help="Refuse unless the archive has it.")
@click.option("--force", is_flag=True, help="Replace a non-empty DEST.")
@handle_errors
def unpack(bundle, dest, expect_digest, force) -> None:
    """Verify a bundle, then extract it into DEST atomically."""
    from skillcheck.package.loader import unpack as run_unpack

    run_unpack(bundle, dest, expect_digest=expect_digest, force=force)
    from skillcheck.report import safe

    click.echo(safe(f"Unpacked {bundle} into {dest}"), err=True)
