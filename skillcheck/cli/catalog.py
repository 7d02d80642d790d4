"""``skillcheck catalog``: lint, then write the catalog manifest (json, xml or markdown)."""

from __future__ import annotations

from pathlib import Path

import click

from skillcheck.cli.common import (
    check_output,
    common_skill_options,
    emit,
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
    "--format",
    "fmt",
    type=click.Choice(["json", "xml", "markdown"]),
    default="json",
    show_default=True,
    help="json manifest, <available_skills> block, or a list.",
)
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write to FILE.")
@click.option("--strict", is_flag=True, default=None, help="Refuse on any finding.")
@handle_errors
@profile_option
def catalog(
    paths, config_file, isolated, target, quiet, jobs, no_cache, cache_dir, fmt, output, strict
) -> None:
    """Write skillcheck's catalog manifest (not the discovery RFC's index: pack --well-known)."""
    from skillcheck.api import check_for_shipping, manifest
    from skillcheck.package.catalog import dumps_manifest, render_markdown, render_xml

    settings = shipping_settings(config_file, isolated, target, jobs, no_cache, cache_dir, strict)
    with refusal_shown(quiet) as progress:
        # the XML block reads the loaded skills; the manifest, each one's cached pack record
        records = fmt != "xml"
        result = check_for_shipping(paths, settings, progress=progress, records=records)
    check_output(output, result.skills, paths)
    if fmt == "xml":
        emit(render_xml(result.loaded) + "\n", output)
    else:
        data = manifest(result, settings, paths)
        if fmt == "markdown":
            emit(render_markdown(data), output)
        else:
            emit(dumps_manifest(data).decode("utf-8"), output)
    # after the output is written: a write that fails says only why
    note = None if quiet else let_through_note(result.counts())
    if note:
        click.echo(note, err=True)
