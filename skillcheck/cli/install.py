"""``skillcheck install``: fetch, verify and install published skills, then lint them."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from skillcheck.cli.common import (
    Progress,
    allow_option,
    allowed_codes,
    handle_errors,
    load_settings,
    run_options,
    security_screen,
)
from skillcheck.errors import EXIT_CLEAN, EXIT_FINDINGS


@click.command()
@click.argument("source")
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--skill", "skills", multiple=True, metavar="NAME", help="Install only NAME.")
@click.option("--dry-run", is_flag=True, help="Fetch and verify; write nothing.")
@click.option("--force", is_flag=True, help="Replace skills already in DEST.")
@click.option(
    "--allow-unverified",
    is_flag=True,
    help="Install from a v0.1.0 index (no digests: content cannot be verified).",
)
@click.option("--base-url", metavar="URL", help="URL a local SOURCE directory is served at.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=256 * 1024 * 1024,
    show_default=True,
    help="Largest download, and largest unpacked skill.",
)
@click.option(
    "--require-signature",
    "public_key",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="KEY",
    help="Refuse a skill unless its skill.oms.sig verifies with this public key.",
)
@allow_option
@handle_errors
def install(
    source,
    dest,
    skills,
    dry_run,
    force,
    allow_unverified,
    base_url,
    timeout,
    max_bytes,
    public_key,
    allow,
) -> None:
    """Install skills published by the Agent Skills Discovery RFC (an origin, an index URL
    or a directory), or served over MCP (mcp:COMMAND [ARGS...] or mcp:URL), into
    DEST/<name>/, verified, atomically; then lint them. A skill with a security error is
    refused before anything of it is written, unless --allow names the rule."""
    if source.startswith("mcp:"):
        select = list(skills) or None
        sys.exit(_install_mcp(source, dest, select, dry_run, force, timeout, public_key))
    check = None
    if public_key is not None:
        from skillcheck.package.signing import Trust, artifact_signature_check, need_library

        need_library()
        check = artifact_signature_check(Trust(public_key))
    screen = security_screen(allowed_codes(allow))
    from skillcheck import api
    from skillcheck.report import safe

    # on a terminal only, as for lint: never in a pipe or a CI log
    fetching = Progress("skillcheck: installing") if Progress.wanted(False) else None
    try:
        report = api.install(
            source,
            dest,
            skills=skills,
            dry_run=dry_run,
            force=force,
            allow_unverified=allow_unverified,
            base_url=base_url,
            timeout=timeout,
            max_bytes=max_bytes,
            progress=fetching,
            waiting=lambda note: click.echo(f"skillcheck: {safe(note)}", err=True),
            check=check,
            screen=screen,
        )
    finally:
        if fetching is not None:
            fetching.done()
    for warning in report.warnings:
        click.echo(f"skillcheck: warning: {safe(warning)}", err=True)
    for name, reason, _ in report.failed:
        click.echo(f"skillcheck: {safe(name)}: not installed: {safe(reason)}", err=True)
    verb = "Would install" if dry_run else "Installed"
    for item in report.installed:
        tail = "" if item.verified else ", UNVERIFIED"
        click.echo(
            safe(
                f"{verb} {item.name} -> {item.path} ({item.files} file{'s' * (item.files != 1)}, "
                f"{item.size} bytes{tail})"
            )
        )
    for name in report.current:
        click.echo(safe(f"{name} is up to date in {dest}"))
    code = max((c for _, _, c in report.failed), default=EXIT_CLEAN)
    if report.installed and not dry_run:
        from skillcheck.report import ReportOptions, render

        settings = load_settings(None, False, None)
        settings = run_options(settings, 1, True, None)
        checking = Progress("skillcheck: checking") if Progress.wanted(False) else None
        try:
            result = api.lint([item.path for item in report.installed], settings, progress=checking)
        finally:
            if checking is not None:
                checking.done()
        options = ReportOptions(cwd=Path.cwd(), color=False, quiet=True, fix_hint=False)
        text = render("text", result, options)
        if text.strip():
            click.echo(text, err=True, nl=False)
        if result.failed(settings.strict):
            code = max(code, EXIT_FINDINGS)
    sys.exit(code)


def _install_mcp(
    target: str,
    dest: Path,
    select: list[str] | None,
    dry_run: bool,
    force: bool,
    timeout: float,
    public_key: Path | None,
) -> int:
    """SEP-2640's host checks, the lint gate, a required signature, then each skill moved
    into place whole."""
    from skillcheck.cli.serve import need_mcp
    from skillcheck.mcp.client import fetch_sync
    from skillcheck.mcp.client import install as run_install
    from skillcheck.report import safe

    need_mcp()
    check = None
    if public_key is not None:
        from skillcheck.package.signing import Trust, need_library, signature_check

        need_library()
        check = signature_check(Trust(public_key))
    settings = load_settings(None, False, None)
    report = fetch_sync(target, select=select, timeout=timeout)
    result = run_install(report, dest, settings, force=force, dry_run=dry_run, check=check)
    for line in result.refused:
        click.echo(f"skillcheck: {safe(line)}", err=True)
    verb = "Would install" if dry_run else "Installed"
    for name, path, files, size in result.installed:
        plural = "s" * (files != 1)
        click.echo(safe(f"{verb} {name} -> {path} ({files} file{plural}, {size} bytes)"))
    if not result.installed and not result.refused:
        click.echo("skillcheck: the server lists no skill", err=True)
    return EXIT_FINDINGS if result.refused or not result.installed else EXIT_CLEAN
