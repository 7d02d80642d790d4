"""``skillcheck lint``: check skills, optionally fix them, and report in one of five formats;
with --show-settings, the effective configuration instead."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click

from skillcheck.cli.common import (
    Progress,
    check_output,
    common_skill_options,
    emit,
    emit_chunks,
    handle_errors,
    load_settings,
    rule_selection,
    rule_selection_options,
    run_options,
    use_color,
)
from skillcheck.errors import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, UsageError


@click.command()
@common_skill_options
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "sarif", "github", "junit", "html"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option("--output", "-o", type=click.Path(path_type=Path), help="Write the report to FILE.")
@rule_selection_options
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
    "--outcome-rules",
    is_flag=True,
    help="In the runtime grid (several targets), name the rules behind each mark.",
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
    strict,
    tokenizer,
    statistics,
    no_color,
    fix,
    diff,
    show_fixes,
    outcome_rules,
    min_severity,
    exit_zero,
    show_settings,
) -> None:
    """Check skills for spec conformance and runtime compatibility.

    PATH is a skill, a folder of skills (searched recursively) or a file inside a skill. A
    folder PATH with no skill under it is an error (SK100, exit 1); a file that belongs to
    no skill is ignored.
    """
    import dataclasses  # not at the top: `skillcheck --help` need not import it

    from skillcheck import api_lint as api
    from skillcheck.report import ReportOptions, write

    overrides = {
        **rule_selection(),
        "strict": strict,
        "tokenizer": tokenizer,
    }
    if statistics and fmt in NO_STATISTICS:
        raise UsageError(
            f"--statistics: the {fmt} format has no place for statistics;"
            " use --format text, json or html"
        )
    settings = load_settings(config_file, isolated, target, **overrides)
    settings = run_options(settings, jobs, no_cache or fix or diff, cache_dir)
    if show_settings:
        click.echo(api.describe_settings(settings, config_file, isolated, target, overrides, jobs))
        return
    settings = dataclasses.replace(settings, figures=fmt in ("json", "html") or statistics)
    # on a terminal, for a human report only: never in a pipe or next to a machine format
    wanted = fmt == "text" and Progress.wanted(quiet)
    progress = Progress("skillcheck: checking") if wanted else None
    # --fix and --diff edit the loaded documents: they keep them, in this process
    try:
        result = api.lint(
            list(paths) or [Path(".")], settings, keep=bool(fix or diff), progress=progress
        )
    finally:
        if progress is not None:
            progress.done()
    check_output(output, result.skills, paths)
    if diff:
        from skillcheck.fix import preview

        text, message, changed = preview(result, settings, Path.cwd())
        emit(text, output)
        if not quiet:
            click.echo(message, err=True)
        sys.exit(EXIT_FINDINGS if changed else EXIT_CLEAN)
    fix_failed = False
    if fix:
        from skillcheck.fix import fix_in_place

        fixed = fix_in_place(list(paths) or [Path(".")], settings, result)
        result = fixed.result
        for line in [*fix_messages(fixed, Path.cwd()), *fixed.messages(Path.cwd())]:
            click.echo(line, err=True)
        fix_failed = bool(fixed.failures)
    if not result.skills and not result.diagnostics and fmt == "text":
        click.echo(
            "skillcheck: warning: no skills found (a skill is a directory with a SKILL.md)",
            err=True,
        )
    result, hidden = filter_severity(result, min_severity)
    options = ReportOptions(
        cwd=Path.cwd(),
        color=use_color(no_color, output),
        quiet=quiet,
        statistics=statistics,
        strict=settings.strict,
        show_fixes=show_fixes,
        outcome_rules=outcome_rules,
        hidden=hidden,
    )
    emit_chunks(lambda sink: write(fmt, result, options, sink), output)
    if fmt == "github" and not quiet:
        # the annotations alone give a CI log no totals: the text summary goes beside them,
        # on stderr, so the annotation stream stays one workflow command a line
        from skillcheck.report.text import summary

        click.echo(f"skillcheck: {summary(result, options)}", err=True)
    if fix_failed:
        sys.exit(EXIT_ERROR)
    if exit_zero:
        sys.exit(EXIT_CLEAN)
    sys.exit(EXIT_FINDINGS if result.failed(settings.strict) else EXIT_CLEAN)


# formats that cannot carry --statistics (refused rather than silently ignored)
NO_STATISTICS = ("sarif", "github", "junit")


# --- --min-severity ---------------------------------------------------------------------------


def filter_severity(result: Any, minimum: str) -> tuple[Any, dict[str, int] | None]:
    """The result without findings below ``minimum``, and how many of each were left out."""
    if minimum == "info":
        return result, None
    import dataclasses

    from skillcheck.source.skill import Severity

    floor = Severity.parse(minimum)
    kept = [d for d in result.diagnostics if d.severity >= floor]
    hidden = Counter(str(d.severity) for d in result.diagnostics if d.severity < floor)
    return dataclasses.replace(result, diagnostics=kept), dict(hidden)


# --- --fix ------------------------------------------------------------------------------------


def fix_messages(report: Any, cwd: Path) -> list[str]:
    """One line per file --fix rewrote: the file, how many findings, and each change."""
    from skillcheck.report import display_path, safe

    failed = {path for path, _reason in report.failures}
    out = []
    for plan in report.plans:
        if plan.path in failed:
            continue
        changes = list(dict.fromkeys(fix.description for fix in plan.fixes))
        count = f"{plan.findings} finding{'s' * (plan.findings != 1)}"
        out.append(
            f"skillcheck: fixed {count} in {safe(display_path(plan.path, cwd))}: "
            + "; ".join(safe(c) for c in changes)
        )
    return out
