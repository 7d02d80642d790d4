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
    click.echo(f"skillcheck: error: {message}", err=True)
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
            _fail(
                f"internal error: {type(exc).__name__}: {exc} (set SKILLCHECK_DEBUG=1 for the"
                " traceback, and please report it)"
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
    type=click.Choice(["text", "json"]),
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
@click.option("--statistics", is_flag=True, help="Count diagnostics per rule.")
@click.option("--no-color", is_flag=True, help="Never colour the output.")
@handle_errors
def lint(
    paths,
    config_file,
    isolated,
    target,
    quiet,
    fmt,
    output,
    select,
    extend_select,
    ignore,
    strict,
    statistics,
    no_color,
) -> None:
    """Check skills for spec conformance and runtime compatibility."""
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
    )
    result = run_lint(list(paths) or [Path(".")], settings)
    if not result.skills and not result.diagnostics and fmt == "text":
        click.echo(
            "skillcheck: warning: no skills found (a skill is a directory with a SKILL.md)",
            err=True,
        )
    options = ReportOptions(
        cwd=Path.cwd(), color=_use_color(no_color, output), quiet=quiet, statistics=statistics
    )
    _emit(render(fmt, result, options), output)
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


# --- catalog, pack, verify, unpack ---------------------------------------------------------
