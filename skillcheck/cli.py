"""Click commands: parse options, call the API, choose a reporter. Thin by design."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from skillcheck import __version__

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class UsageProblem(Exception):
    """A problem with how skillcheck was called or configured: exit 2."""


def _fail(message: str) -> None:
    from skillcheck.report import safe  # paths and names in messages may hold escapes

    click.echo(f"skillcheck: error: {safe(message)}", err=True)
    sys.exit(EXIT_ERROR)


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn expected failures into one line on stderr and exit 2; a traceback only when
    SKILLCHECK_DEBUG=1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from skillcheck.config import ConfigError
        from skillcheck.discover import PathError

        try:
            return func(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("skillcheck: interrupted", err=True)
            sys.exit(130)
        except (ConfigError, PathError, UsageProblem) as exc:
            if os.environ.get("SKILLCHECK_DEBUG") == "1":
                raise
            _fail(str(exc))
        except BrokenPipeError:
            sys.exit(EXIT_ERROR)
        except Exception as exc:
            if os.environ.get("SKILLCHECK_DEBUG") == "1":
                raise
            from skillcheck.lint import InternalError

            # InternalError already names the rule and the exception; others need their type
            what = str(exc) if isinstance(exc, InternalError) else f"{type(exc).__name__}: {exc}"
            _fail(
                f"internal error: {what} (set SKILLCHECK_DEBUG=1 for the traceback, and please"
                " report it)"
            )

    return wrapper


def _split(values: tuple[str, ...]) -> list[str] | None:
    if not values:
        return None
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from skillcheck.atomic import write_atomic

    try:
        write_atomic(output, text.encode("utf-8"))
    except OSError as exc:
        raise UsageProblem(f"{output}: cannot write: {exc.strerror or exc}") from None


def _use_color(no_color: bool, output: Path | None) -> bool:
    if no_color or output is not None or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def common_skill_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Options meaning the same on every command that reads skills (lint, catalog, pack)."""
    decorators = [
        click.argument("paths", nargs=-1, type=click.Path(path_type=Path)),
        click.option(
            "--config",
            "config_file",
            type=click.Path(path_type=Path),
            help="Read configuration from FILE instead of searching for one.",
        ),
        click.option("--isolated", is_flag=True, help="Ignore all configuration files."),
        click.option(
            "--target",
            "target",
            metavar="NAME[,NAME...]",
            help="Runtimes that load the skills (default: agentskills; 'all').",
        ),
        click.option("--quiet", "-q", is_flag=True, help="Print diagnostics only."),
        click.option(
            "--jobs",
            "-j",
            type=click.IntRange(min=0),
            default=0,
            metavar="N",
            help="Processes checking skills (default 0: one per available CPU).",
        ),
        click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache."),
        click.option(
            "--cache-dir",
            type=click.Path(path_type=Path, file_okay=False),
            metavar="DIR",
            help="Where the result cache lives (default: $SKILLCHECK_CACHE_DIR, else"
            " $XDG_CACHE_HOME/skillcheck, else .skillcheck_cache in the project root).",
        ),
    ]
    for decorator in reversed(decorators):
        func = decorator(func)
    return func


def _settings(config_file, isolated, target, **overrides):
    from skillcheck.config import build_settings, load_config

    config = load_config(config_file, isolated=isolated)
    return build_settings(config, target=target, **overrides)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, "--version", prog_name="skillcheck", message="%(prog)s %(version)s"
)
def cli() -> None:
    """Lint, catalog and package Agent Skills."""


@cli.command()
@common_skill_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif", "github", "junit"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report to FILE.")
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Rules to run: codes, prefixes (SK2), slugs or ALL; replaces the config.",
)
@click.option("--extend-select", multiple=True, metavar="CODES", help="Rules to add.")
@click.option("--ignore", multiple=True, metavar="CODES", help="Rules to skip.")
@click.option("--strict", is_flag=True, default=None, help="Fail on warnings and info too.")
@click.option(
    "--tokenizer",
    metavar="NAME",
    help="Token counter for budgets: 'estimate' (built-in) or 'tiktoken:ENCODING'.",
)
@click.option(
    "--statistics", is_flag=True, help="Count diagnostics per rule; tokens and lines per skill."
)
@click.option("--no-color", is_flag=True, help="Never colour the output.")
@click.option("--fix", "fix", is_flag=True, help="Apply the safe fixes, then report what remains.")
@click.option(
    "--diff", is_flag=True, help="Print what --fix would change; write nothing (exit 1 if any)."
)
@handle_errors
def lint(
    paths,
    config_file,
    isolated,
    target,
    quiet,
    jobs,
    no_cache,
    cache_dir,
    fmt,
    output,
    select,
    extend_select,
    ignore,
    strict,
    tokenizer,
    statistics,
    no_color,
    fix,
    diff,
) -> None:
    """Check skills for spec conformance and runtime compatibility.

    PATH is a skill, a folder of skills (searched recursively) or a file inside a skill. A
    folder PATH with no skill under it is an error (SK100, exit 1); a file that belongs to
    no skill is ignored.
    """
    from skillcheck.lint import lint as run_lint
    from skillcheck.report import ReportOptions, render

    settings = _settings(
        config_file,
        isolated,
        target,
        select=_split(select),
        extend_select=_split(extend_select),
        ignore=_split(ignore),
        strict=strict,
        tokenizer=tokenizer,
    )
    _run_options(settings, jobs, no_cache or fix or diff, cache_dir)
    settings.figures = fmt == "json" or statistics
    # --fix and --diff edit the loaded documents: they keep them, in this process
    result = run_lint(list(paths) or [Path(".")], settings, keep=bool(fix or diff))
    if diff:
        from skillcheck.fix import preview

        text, message, changed = preview(result, settings, Path.cwd())
        _emit(text, output)
        if not quiet:
            click.echo(message, err=True)
        sys.exit(EXIT_FINDINGS if changed else EXIT_CLEAN)
    fix_failed = False
    if fix:
        from skillcheck.fix import fix_in_place

        fixed = fix_in_place(list(paths) or [Path(".")], settings, result)
        result = fixed.result
        for line in fixed.messages(Path.cwd()):
            click.echo(line, err=True)
        fix_failed = bool(fixed.failures)
    if not result.skills and not result.diagnostics and fmt == "text":
        click.echo(
            "skillcheck: warning: no skills found (a skill is a directory with a SKILL.md)",
            err=True,
        )
    options = ReportOptions(
        cwd=Path.cwd(),
        color=_use_color(no_color, output),
        quiet=quiet,
        statistics=statistics,
        strict=settings.strict,
    )
    _emit(render(fmt, result, options), output)
    if fix_failed:
        sys.exit(EXIT_ERROR)
    sys.exit(EXIT_FINDINGS if result.failed(settings.strict) else EXIT_CLEAN)


@cli.command("rules")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@handle_errors
def rules_command(fmt: str) -> None:
    """List every rule."""
    from skillcheck.docs import rules_json, rules_table

    click.echo(rules_json() if fmt == "json" else rules_table(), nl=False)


@cli.command("rule")
@click.argument("code_or_slug")
@handle_errors
def rule_command(code_or_slug: str) -> None:
    """Show one rule's documentation."""
    from skillcheck.rules import get_rule

    found = get_rule(code_or_slug)
    if found is None:
        raise UsageProblem(f"no rule {code_or_slug!r} (see `skillcheck rules`)")
    click.echo(found.docs_markdown(), nl=False)


# --- catalog, pack, verify, unpack: built on the same lint run ---------------------------------


def _run_options(settings, jobs: int, no_cache: bool, cache_dir: Path | None) -> None:
    """--jobs and the result cache (not configuration: they change how, not what)."""
    from skillcheck.engine import available_cpus

    settings.jobs = jobs or available_cpus()
    if no_cache:
        settings.cache_dir = None
    elif cache_dir is not None:
        settings.cache_dir = cache_dir
    else:
        from skillcheck.cache import default_directory

        settings.cache_dir = default_directory(settings.config_root or Path.cwd())


def _lint_gate(paths, config_file, isolated, target, quiet, jobs, no_cache, cache_dir, strict):
    """Lint before catalog/pack: refuse (exit 1) with the diagnostics on stderr when a skill
    has an error, or any finding under --strict."""
    from skillcheck.lint import lint as run_lint
    from skillcheck.report import ReportOptions, render

    settings = _settings(config_file, isolated, target, strict=strict)
    _run_options(settings, jobs, no_cache, cache_dir)
    settings.figures = True  # the manifest's token counts, as lint's budget rules count them
    result = run_lint(list(paths) or [Path(".")], settings, keep=True)
    if result.failed(settings.strict):
        options = ReportOptions(
            cwd=Path.cwd(),
            color=_use_color(False, None) and sys.stderr.isatty(),
            quiet=quiet,
            fix_hint=True,
        )
        click.echo(render("text", result, options), err=True, nl=False)
        click.echo("skillcheck: refusing: fix the findings above first", err=True)
        sys.exit(EXIT_FINDINGS)
    if not result.skills:
        raise UsageProblem("no skills found (a skill is a directory with a SKILL.md)")
    return result, settings


def _catalog_root(paths: tuple[Path, ...]) -> Path:
    """What each skill's ``path`` is relative to: a single directory PATH, else the current
    directory, so the manifest does not depend on where the checkout lives."""
    if len(paths) == 1 and paths[0].is_dir():
        from skillcheck.discover import absolute

        return absolute(paths[0])
    return Path.cwd()


def _manifest(result, settings, paths):
    from skillcheck.catalog import build_manifest

    return build_manifest(
        result.loaded,
        _catalog_root(paths),
        tokenizer=settings.options.get("tokenizer", "estimate"),
        generator=f"skillcheck {__version__}",
        figures={skill.root: skill.figures for skill in result.skills},
    )


def _bundle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """A refused catalog, bundle or verification is a finding about the input: exit 1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from skillcheck.bundle import BundleError
        from skillcheck.catalog import CatalogError

        try:
            return func(*args, **kwargs)
        except (BundleError, CatalogError) as exc:
            from skillcheck.report import safe  # a file name may hold terminal escapes

            click.echo(f"skillcheck: {safe(str(exc))}", err=True)
            sys.exit(EXIT_FINDINGS)

    return wrapper


@cli.command()
@common_skill_options
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
@_bundle_errors
def catalog(
    paths, config_file, isolated, target, quiet, jobs, no_cache, cache_dir, fmt, output, strict
) -> None:
    """Write the catalog manifest (an Agent Skills Discovery index) for loaders."""
    from skillcheck.catalog import dumps_manifest, render_markdown, render_xml

    result, settings = _lint_gate(
        paths, config_file, isolated, target, quiet, jobs, no_cache, cache_dir, strict
    )
    if fmt == "xml":
        _emit(render_xml(result.loaded) + "\n", output)
        return
    manifest = _manifest(result, settings, paths)
    if fmt == "markdown":
        _emit(render_markdown(manifest), output)
    else:
        _emit(dumps_manifest(manifest).decode("utf-8"), output)


@cli.command()
@common_skill_options
@click.option(
    "--output", "-o", type=click.Path(path_type=Path), help="Write one bundle archive to FILE."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tar.gz", "zip"]),
    default="tar.gz",
    show_default=True,
    help="Archive format for --output.",
)
@click.option(
    "--well-known",
    "well_known",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write a directory to serve as /.well-known/agent-skills/.",
)
@click.option("--base-url", metavar="URL", help="Absolute URL prefix for package links.")
@click.option("--strict", is_flag=True, default=None, help="Refuse on any finding.")
@click.option(
    "--mtime",
    type=int,
    metavar="EPOCH",
    help="Timestamp of every entry (default: SOURCE_DATE_EPOCH, else 1980-01-01).",
)
@handle_errors
@_bundle_errors
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
    base_url,
    strict,
    mtime,
) -> None:
    """Pack skills into a byte-reproducible bundle with a manifest and digests."""
    from skillcheck.bundle import pack_bundle, pack_well_known

    if (output is None) == (well_known is None):
        raise UsageProblem("pack needs exactly one of --output FILE or --well-known DIR")
    if base_url and well_known is None:
        raise UsageProblem("--base-url goes with --well-known")
    result, settings = _lint_gate(
        paths, config_file, isolated, target, quiet, jobs, no_cache, cache_dir, strict
    )
    manifest = _manifest(result, settings, paths)
    count = len(result.skills)
    if well_known is not None:
        pack_well_known(result.loaded, manifest, well_known, base_url=base_url, mtime=mtime)
        where = well_known
        digest = ""
    else:
        digest = pack_bundle(result.loaded, manifest, output, fmt=fmt, mtime=mtime)
        where = output
    if not quiet:
        tail = f" ({digest})" if digest else ""
        click.echo(f"Packed {count} skill{'s' * (count != 1)} into {where}{tail}", err=True)


@cli.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--expect-digest", metavar="sha256:HEX", help="Refuse unless the archive has it.")
@handle_errors
@_bundle_errors
def verify(bundle, expect_digest) -> None:
    """Verify a bundle or a well-known directory without trusting it."""
    from skillcheck.bundle import verify as run_verify

    click.echo(run_verify(bundle, expect_digest).summary())


@cli.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.argument("dest", type=click.Path(path_type=Path))
@click.option("--expect-digest", metavar="sha256:HEX", help="Refuse unless the archive has it.")
@click.option("--force", is_flag=True, help="Replace a non-empty DEST.")
@handle_errors
@_bundle_errors
def unpack(bundle, dest, expect_digest, force) -> None:
    """Verify a bundle, then extract it into DEST atomically."""
    from skillcheck.bundle import unpack as run_unpack

    run_unpack(bundle, dest, expect_digest=expect_digest, force=force)
    click.echo(f"Unpacked {bundle} into {dest}", err=True)
