"""``skillcheck verify`` and ``skillcheck unpack``: read a bundle without trusting it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from skillcheck.cli.common import emit, handle_errors


@click.command()
@click.argument("bundle")
@click.option("--expect-digest", metavar="sha256:HEX", help="Refuse unless the archive has it.")
@click.option(
    "--allow-unverified",
    is_flag=True,
    help="Accept a v0.1.0 index (no digests: its content cannot be verified).",
)
@click.option("--base-url", metavar="URL", help="URL a well-known DIR is served at.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Seconds to wait for one answer of an MCP server.",
)
@click.option(
    "--signature",
    "public_key",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="KEY",
    help="Also require a signature this public key (PEM) verifies.",
)
@click.option(
    "--trust-chain",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="CERT",
    help="Also require a signature whose certificate chains to CERT (certificate mode).",
)
@handle_errors
def verify(
    bundle, expect_digest, allow_unverified, base_url, timeout, public_key, trust_chain
) -> None:
    """Verify a bundle, a well-known directory (anyone's), or the skills an MCP server
    serves (mcp:COMMAND [ARGS...] or mcp:URL), without trusting it. With --signature or
    --trust-chain, also a skill directory's or a bundle's OpenSSF Model Signing signature."""
    from skillcheck.report import safe

    trust = _trust(public_key, trust_chain)
    if bundle.startswith("mcp:"):
        _verify_mcp(bundle, timeout, trust)
        return
    from skillcheck.package.loader import verify as run_verify

    bundle = Path(bundle)
    if trust is not None and _verify_signed_skills(bundle, trust):
        return
    result = run_verify(bundle, expect_digest, allow_unverified=allow_unverified, base_url=base_url)
    for warning in result.warnings:
        click.echo(f"skillcheck: warning: {safe(warning)}", err=True)
    emit(safe(result.summary()) + "\n", None)
    if trust is not None:
        from skillcheck.package.signing import verify as verify_signature

        verify_signature(bundle, trust)
        emit(safe(f"Signature of {bundle} verified") + "\n", None)


def _trust(public_key: Path | None, chain: tuple[Path, ...]) -> Any:
    if public_key is None and not chain:
        return None
    from skillcheck.errors import UsageError
    from skillcheck.package.signing import Trust, need_library

    if public_key is not None and chain:
        raise UsageError("give --signature KEY or --trust-chain CERT, not both")
    need_library()
    return Trust(public_key, tuple(chain))


def _verify_signed_skills(path: Path, trust: Any) -> bool:
    """Skill directories (not a bundle or publication): each one's signature. Whether
    ``path`` was such a directory."""
    from skillcheck.package.archive import INDEX_NAME, MANIFEST_NAME
    from skillcheck.package.signing import skills_under
    from skillcheck.package.signing import verify as verify_signature
    from skillcheck.report import safe

    if not path.is_dir() or (path / MANIFEST_NAME).is_file() or (path / INDEX_NAME).is_file():
        return False
    for skill in skills_under(path):
        verify_signature(skill, trust)
        emit(safe(f"Signature of {skill} verified") + "\n", None)
    return True


def _verify_mcp(target: str, timeout: float, trust: Any = None) -> None:
    """SEP-2640's host checks on every skill the server lists, then the lint gate."""
    import sys

    from skillcheck.cli.common import load_settings
    from skillcheck.cli.serve import need_mcp
    from skillcheck.errors import EXIT_FINDINGS
    from skillcheck.mcp.client import verify as run_verify
    from skillcheck.report import safe

    need_mcp()
    check = None
    if trust is not None:
        from skillcheck.package.signing import signature_check

        check = signature_check(trust)
    result = run_verify(target, load_settings(None, False, None), timeout=timeout, check=check)
    for line in result.refused:
        click.echo(f"skillcheck: {safe(line)}", err=True)
    for name, _, files, size in result.installed:
        click.echo(safe(f"Verified {name}: {files} file{'s' * (files != 1)}, {size} bytes"))
    if result.refused or not result.installed:
        if not result.installed and not result.refused:
            click.echo("skillcheck: the server lists no skill", err=True)
        sys.exit(EXIT_FINDINGS)


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
