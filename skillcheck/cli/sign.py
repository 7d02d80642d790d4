"""``skillcheck sign``: OpenSSF Model Signing signatures for skills and bundles, offline."""

from __future__ import annotations

from pathlib import Path

import click

from skillcheck.cli.common import handle_errors


@click.command("sign")
@click.argument("path", type=click.Path(path_type=Path))
@click.option(
    "--key",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Elliptic-curve private key (PEM) that signs.",
)
@click.option(
    "--certificate",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Signing certificate of KEY (certificate mode).",
)
@click.option(
    "--chain",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="Certificates from the signing certificate to a root (certificate mode).",
)
@handle_errors
def sign(path, key, certificate, chain) -> None:
    """Sign a skill directory (each skill of a directory of skills) with a detached
    skill.oms.sig inside it, or a bundle with BUNDLE.oms.sig beside it."""
    from skillcheck.errors import UsageError
    from skillcheck.package.signing import Signer, skills_under
    from skillcheck.package.signing import sign as run_sign
    from skillcheck.report import safe

    if chain and certificate is None:
        raise UsageError("--chain goes with --certificate")
    signer = Signer(key, certificate, tuple(chain))
    for target in skills_under(path):
        out = run_sign(target, signer)
        click.echo(safe(f"Signed {target} -> {out}"))
