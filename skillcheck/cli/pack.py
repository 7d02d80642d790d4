"""``skillcheck pack``: lint, then write a bundle, a well-known directory or upload zips."""

from __future__ import annotations

from pathlib import Path

import click

from skillcheck.cli.common import (
    allow_option,
    allowed_codes,
    common_skill_options,
    handle_errors,
    let_through_note,
    profile_option,
    refusal_shown,
    rule_selection_options,
    shipping_settings,
)


@click.command()
@common_skill_options
@rule_selection_options
@click.option(
    "--output", "-o", type=click.Path(path_type=Path), help="Write one bundle archive to FILE."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tar.gz", "zip"]),
    default="tar.gz",
    show_default=True,
    help="Archive format for --output and for the archives of --well-known.",
)
@click.option(
    "--well-known",
    "well_known",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write a directory to serve as /.well-known/agent-skills/.",
)
@click.option(
    "--uploads",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write one upload-ready zip per skill into DIR (claude.ai, the Skills API).",
)
@click.option("--base-url", metavar="URL", help="URL DIR is served at: absolute artifact URLs.")
@click.option("--strict", is_flag=True, default=None, help="Refuse on any finding.")
@click.option(
    "--mtime",
    type=int,
    metavar="EPOCH",
    help="Timestamp of every entry (default: SOURCE_DATE_EPOCH, else 1980-01-01).",
)
@allow_option
@handle_errors
@profile_option
def pack(
    paths,
    config_file,
    isolated,
    target,
    quiet,
    jobs,
    no_cache,
    cache_dir,
    output,
    fmt,
    well_known,
    uploads,
    base_url,
    strict,
    mtime,
    allow,
) -> None:
    """Pack skills into a byte-reproducible bundle, a well-known directory (the Agent Skills
    Discovery RFC) or one upload zip per skill."""
    from skillcheck.api import check_destination
    from skillcheck.api import pack as run_pack
    from skillcheck.report import safe

    check_destination(output, well_known, uploads, base_url)
    settings = shipping_settings(config_file, isolated, target, jobs, no_cache, cache_dir, strict)
    with refusal_shown(quiet) as progress:
        packed = run_pack(
            paths,
            settings,
            output=output,
            well_known=well_known,
            uploads=uploads,
            fmt=fmt,
            base_url=base_url,
            mtime=mtime,
            progress=progress,
            allow=allowed_codes(allow),
        )
    for name, digest in packed.uploads:
        click.echo(f"{packed.where / name} {digest}")
    if not quiet:
        note = let_through_note(packed.let_through)
        if note:
            click.echo(note, err=True)
        tail = f" ({packed.digest})" if packed.digest else ""
        plural = "s" * (packed.count != 1)
        click.echo(
            f"Packed {packed.count} skill{plural} into {safe(str(packed.where))}{tail}", err=True
        )
