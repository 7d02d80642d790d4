"""Click commands: parse options, call the API, choose a reporter. Thin by design."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from skillcheck import __version__
from skillcheck.errors import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    InternalError,
    SkillcheckError,
    UsageError,
)


def _fail(message: str) -> None:
    from skillcheck.report import safe  # paths and names in messages may hold escapes

    click.echo(f"skillcheck: error: {safe(message)}", err=True)
    sys.exit(EXIT_ERROR)


def handle_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """The one place errors become an exit status: a SkillcheckError exits with its own code
    (refused content: 1, one line naming the file; usage, configuration, I/O: 2); an
    unexpected exception is an internal error (2). A traceback only when SKILLCHECK_DEBUG=1."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        debug = os.environ.get("SKILLCHECK_DEBUG") == "1"
        try:
            return func(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("skillcheck: interrupted", err=True)
            sys.exit(EXIT_INTERRUPTED)
        except SkillcheckError as exc:
            if exc.exit_code == EXIT_FINDINGS:  # a verdict on the input, not a failure
                from skillcheck.report import safe  # a file name may hold terminal escapes

                click.echo(f"skillcheck: {safe(str(exc))}", err=True)
                sys.exit(EXIT_FINDINGS)
            if debug:
                raise
            # InternalError already names the rule and the exception
            _fail(_internal(str(exc)) if isinstance(exc, InternalError) else str(exc))
        except BrokenPipeError:
            _quiet_stdout()
            sys.exit(EXIT_ERROR)
        except OSError as exc:  # a full disk, a read-only directory, a closed stdout ...
            if debug:
                raise
            _fail(os_message(exc))
        except Exception as exc:
            if debug:
                raise
            _fail(_internal(f"{type(exc).__name__}: {exc}"))

    return wrapper


def _internal(what: str) -> str:
    return (
        f"internal error: {what} (set SKILLCHECK_DEBUG=1 for the traceback, and please report it)"
    )


def os_message(exc: OSError) -> str:
    """One line for an OS error: the path it concerns (both of a rename) and the reason."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is None:
        return reason
    if exc.filename2 is not None:
        return f"{exc.filename} -> {exc.filename2}: {reason}"
    return f"{exc.filename}: {reason}"


def _quiet_stdout() -> None:
    """stdout is gone (a closed pipe): point it at /dev/null so the interpreter's final
    flush does not print a second error."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _split(values: tuple[str, ...]) -> list[str] | None:
    if not values:
        return None
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        if sys.stdout is None:  # started with stdout closed
            raise UsageError("<stdout>: cannot write: it is closed")
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:  # closed (ValueError) or failing stdout
            reason = exc.strerror if isinstance(exc, OSError) else "it is closed"
            raise UsageError(f"<stdout>: cannot write: {reason or exc}") from None
        return
    from skillcheck.source.atomic import write_atomic

    try:
        write_atomic(output, text.encode("utf-8"))
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror or exc}") from None


def _use_color(no_color: bool, output: Path | None) -> bool:
    """Colour on a terminal; NO_COLOR (or --no-color) turns it off, FORCE_COLOR on even when
    piped (CI logs that render colour); a report written to a file never has it."""
    if no_color or output is not None or os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout is not None and sys.stdout.isatty()


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


def rule_selection_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--select/--ignore for the commands that lint before they write (catalog, pack): kept in
    the click context for _lint_gate, so the commands' own parameters stay as they are."""

    def keep(key: str) -> Callable[..., Any]:
        def callback(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
            ctx.meta.setdefault("skillcheck.rules", {})[key] = _split(value)

        return callback

    func = click.option(
        "--ignore",
        multiple=True,
        metavar="CODES",
        expose_value=False,
        callback=keep("ignore"),
        help="Rules to skip.",
    )(func)
    return click.option(
        "--select",
        multiple=True,
        metavar="CODES",
        expose_value=False,
        callback=keep("select"),
        help="Rules to run: codes, prefixes (SK2), slugs or ALL; replaces the config.",
    )(func)


def _settings(config_file, isolated, target, **overrides):
    from skillcheck.engine.config import build_settings, load_config

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
@click.option(
    "--show-fixes", is_flag=True, help="Under each fixable finding, say what --fix would do."
)
@click.option(
    "--min-severity",
    type=click.Choice(["info", "warning", "error"]),
    default="info",
    show_default=True,
    help="Report (and fail on) findings at this level and above; the summary counts the rest.",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option(
    "--show-settings",
    is_flag=True,
    help="Print the effective configuration and where each value comes from; lint nothing.",
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
    show_fixes,
    min_severity,
    exit_zero,
    show_settings,
) -> None:
    """Check skills for spec conformance and runtime compatibility.

    PATH is a skill, a folder of skills (searched recursively) or a file inside a skill. A
    folder PATH with no skill under it is an error (SK100, exit 1); a file that belongs to
    no skill is ignored.
    """
    from skillcheck.engine.lint import lint as run_lint
    from skillcheck.report import ReportOptions, render

    overrides = {
        "select": _split(select),
        "extend_select": _split(extend_select),
        "ignore": _split(ignore),
        "strict": strict,
        "tokenizer": tokenizer,
    }
    settings = _settings(config_file, isolated, target, **overrides)
    _run_options(settings, jobs, no_cache or fix or diff, cache_dir)
    if show_settings:
        from skillcheck.cli.extra import describe_settings

        click.echo(describe_settings(settings, config_file, isolated, target, overrides, jobs))
        return
    settings.figures = fmt == "json" or statistics
    from skillcheck.cli.extra import Progress

    # on a terminal, for a human report only: never in a pipe or next to a machine format
    wanted = fmt == "text" and Progress.wanted(quiet)
    progress = Progress("skillcheck: checking") if wanted else None
    # --fix and --diff edit the loaded documents: they keep them, in this process
    try:
        result = run_lint(
            list(paths) or [Path(".")], settings, keep=bool(fix or diff), progress=progress
        )
    finally:
        if progress is not None:
            progress.done()
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
        from skillcheck.cli.extra import fix_messages

        for line in [*fix_messages(fixed, Path.cwd()), *fixed.messages(Path.cwd())]:
            click.echo(line, err=True)
        fix_failed = bool(fixed.failures)
    if not result.skills and not result.diagnostics and fmt == "text":
        click.echo(
            "skillcheck: warning: no skills found (a skill is a directory with a SKILL.md)",
            err=True,
        )
    from skillcheck.cli.extra import filter_severity

    result, hidden = filter_severity(result, min_severity)
    options = ReportOptions(
        cwd=Path.cwd(),
        color=_use_color(no_color, output),
        quiet=quiet,
        statistics=statistics,
        strict=settings.strict,
        show_fixes=show_fixes,
        hidden=hidden,
    )
    _emit(render(fmt, result, options), output)
    if fix_failed:
        sys.exit(EXIT_ERROR)
    if exit_zero:
        sys.exit(EXIT_CLEAN)
    sys.exit(EXIT_FINDINGS if result.failed(settings.strict) else EXIT_CLEAN)


@cli.command("rules")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@handle_errors
def rules_command(fmt: str) -> None:
    """List every rule."""
    from skillcheck.report.docs import rules_json, rules_table

    _emit(rules_json() if fmt == "json" else rules_table(), None)


@cli.command("rule")
@click.argument("code_or_slug")
@handle_errors
def rule_command(code_or_slug: str) -> None:
    """Show one rule's documentation."""
    from skillcheck.rules import get_rule

    found = get_rule(code_or_slug)
    if found is None:
        raise UsageError(f"no rule {code_or_slug!r} (see `skillcheck rules`)")
    _emit(found.docs_markdown(), None)


# --- catalog, pack, verify, unpack: built on the same lint run ---------------------------------


@cli.command("init")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False), default=".")
@click.option("--force", is_flag=True, help="Replace an existing skillcheck.toml.")
@handle_errors
def init_command(directory: Path, force: bool) -> None:
    """Write a starter skillcheck.toml, with targets detected from the layout
    (.claude/skills: claude-code, .github/skills: copilot, .agents/skills: codex...)."""
    from skillcheck.cli.extra import write_starter_config

    try:
        path, text = write_starter_config(directory, force)
    except OSError as exc:
        raise UsageError(
            f"{directory}: cannot write skillcheck.toml: {exc.strerror or exc}"
        ) from None
    click.echo(text, nl=False)
    click.echo(f"Wrote {path}", err=True)


@cli.command("lsp")
@click.option("--stdio", is_flag=True, help="Talk over stdin/stdout (the default and only way).")
@handle_errors
def lsp_command(stdio: bool) -> None:
    """Run the Language Server over stdio (needs the 'lsp' extra: pygls)."""
    try:
        from skillcheck.lsp.server import main
    except ImportError as exc:
        _fail(
            f"the language server needs pygls ({exc}); install it with"
            " pip install 'agent-skillcheck[lsp]'"
        )
    main()


def _run_options(settings, jobs: int, no_cache: bool, cache_dir: Path | None) -> None:
    """--jobs and the result cache (not configuration: they change how, not what)."""
    from skillcheck.engine.runner import available_cpus

    settings.jobs = jobs or available_cpus()
    if no_cache:
        settings.cache_dir = None
    elif cache_dir is not None:
        settings.cache_dir = cache_dir
    else:
        from skillcheck.engine.cache import default_directory

        settings.cache_dir = default_directory(settings.config_root or Path.cwd())


def _shipping_settings(config_file, isolated, target, jobs, no_cache, cache_dir, strict):
    chosen = click.get_current_context().meta.get("skillcheck.rules", {})
    settings = _settings(config_file, isolated, target, strict=strict, **chosen)
    _run_options(settings, jobs, no_cache, cache_dir)
    return settings


@contextlib.contextmanager
def _refusal_shown(quiet: bool) -> Iterator[Callable[[Path], None] | None]:
    """Progress while catalog/pack lint, and the diagnostics on stderr when the library
    refuses (``api.Refused``, exit 1 through ``handle_errors``)."""
    from skillcheck.api import Refused
    from skillcheck.cli.extra import Progress

    # progress only when both streams are a terminal: a piped manifest is for a machine
    shown = Progress.wanted(quiet) and sys.stdout.isatty()
    progress = Progress("skillcheck: checking") if shown else None
    try:
        yield progress
    except Refused as exc:
        from skillcheck.report import ReportOptions, render

        if progress is not None:
            progress.done()
            progress = None
        options = ReportOptions(
            cwd=Path.cwd(),
            color=_use_color(False, None) and sys.stderr.isatty(),
            quiet=quiet,
            fix_hint=True,
        )
        click.echo(render("text", exc.result, options), err=True, nl=False)
        raise
    finally:
        if progress is not None:
            progress.done()


@cli.command()
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
def catalog(
    paths, config_file, isolated, target, quiet, jobs, no_cache, cache_dir, fmt, output, strict
) -> None:
    """Write skillcheck's catalog manifest (not the discovery RFC's index: pack --well-known)."""
    from skillcheck.api import check_for_shipping, manifest
    from skillcheck.package.catalog import dumps_manifest, render_markdown, render_xml

    settings = _shipping_settings(config_file, isolated, target, jobs, no_cache, cache_dir, strict)
    with _refusal_shown(quiet) as progress:
        result = check_for_shipping(paths, settings, progress=progress)
    if fmt == "xml":
        _emit(render_xml(result.loaded) + "\n", output)
        return
    data = manifest(result, settings, paths)
    if fmt == "markdown":
        _emit(render_markdown(data), output)
    else:
        _emit(dumps_manifest(data).decode("utf-8"), output)


@cli.command()
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
@handle_errors
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
) -> None:
    """Pack skills into a byte-reproducible bundle, a well-known directory (the Agent Skills
    Discovery RFC) or one upload zip per skill."""
    from skillcheck.api import check_destination
    from skillcheck.api import pack as run_pack
    from skillcheck.report import safe

    check_destination(output, well_known, uploads, base_url)
    settings = _shipping_settings(config_file, isolated, target, jobs, no_cache, cache_dir, strict)
    with _refusal_shown(quiet) as progress:
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
        )
    for name, digest in packed.uploads:
        click.echo(f"{packed.where / name} {digest}")
    if not quiet:
        tail = f" ({packed.digest})" if packed.digest else ""
        plural = "s" * (packed.count != 1)
        click.echo(
            f"Packed {packed.count} skill{plural} into {safe(str(packed.where))}{tail}", err=True
        )


@cli.command()
@click.argument("bundle", type=click.Path(path_type=Path))
@click.option("--expect-digest", metavar="sha256:HEX", help="Refuse unless the archive has it.")
@click.option(
    "--allow-unverified",
    is_flag=True,
    help="Accept a v0.1.0 index (no digests: its content cannot be verified).",
)
@click.option("--base-url", metavar="URL", help="URL a well-known DIR is served at.")
@handle_errors
def verify(bundle, expect_digest, allow_unverified, base_url) -> None:
    """Verify a bundle, or a well-known directory (anyone's), without trusting it."""
    from skillcheck.package.loader import verify as run_verify
    from skillcheck.report import safe

    result = run_verify(bundle, expect_digest, allow_unverified=allow_unverified, base_url=base_url)
    for warning in result.warnings:
        click.echo(f"skillcheck: warning: {safe(warning)}", err=True)
    _emit(safe(result.summary()) + "\n", None)


@cli.command()
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


@cli.command()
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
@handle_errors
def install(
    source, dest, skills, dry_run, force, allow_unverified, base_url, timeout, max_bytes
) -> None:
    """Install skills published by the Agent Skills Discovery RFC (an origin, an index URL
    or a directory) into DEST/<name>/, verified, atomically; then lint them."""
    from skillcheck.cli.extra import Progress
    from skillcheck.package.archive import Limits
    from skillcheck.package.install import install as run_install
    from skillcheck.package.install import open_source
    from skillcheck.package.wellknown import FetchError
    from skillcheck.report import safe

    # on a terminal only, as for lint: never in a pipe or a CI log
    fetching = Progress("skillcheck: installing") if Progress.wanted(False) else None
    try:
        src = open_source(source, timeout, base_url)
        report = run_install(
            src,
            dest,
            select=list(skills) or None,
            dry_run=dry_run,
            force=force,
            allow_unverified=allow_unverified,
            limits=Limits(max_total_bytes=max_bytes),
            progress=fetching,
        )
    except FetchError as exc:  # a source that cannot be fetched is a usage problem (exit 2)
        raise UsageError(str(exc)) from None
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
        from skillcheck.engine.lint import lint as run_lint
        from skillcheck.report import ReportOptions, render

        settings = _settings(None, False, None)
        _run_options(settings, 1, True, None)
        checking = Progress("skillcheck: checking") if Progress.wanted(False) else None
        try:
            result = run_lint([item.path for item in report.installed], settings, progress=checking)
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
