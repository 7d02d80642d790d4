"""What the commands share: the one place errors become an exit status, the shared options,
settings from configuration and command line, output, colour and the progress line."""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from skillcheck.errors import (
    EXIT_ERROR,
    EXIT_FINDINGS,
    EXIT_INTERRUPTED,
    InternalError,
    SkillcheckError,
    UsageError,
)
from skillcheck.targets import TARGETS, checked_label

if TYPE_CHECKING:  # at run time only inside the functions: `skillcheck --help` stays cheap
    from skillcheck.settings import Settings


def fail(message: str) -> None:
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
            fail(_internal(str(exc)) if isinstance(exc, InternalError) else str(exc))
        except BrokenPipeError:
            _quiet_stdout()
            sys.exit(EXIT_ERROR)
        except OSError as exc:  # a full disk, a read-only directory, a closed stdout ...
            if debug:
                raise
            fail(os_message(exc))
        except Exception as exc:
            if debug:
                raise
            fail(_internal(f"{type(exc).__name__}: {exc}"))

    return wrapper


def profile_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--profile``: print to stderr where the run spent its time, per stage (discovery,
    loading, each rule, the cache, the report, packing), once the command is over, whatever
    its exit status. Goes below ``handle_errors``: the table comes before an error's line."""

    @functools.wraps(func)
    def wrapper(*args: Any, profile: bool = False, **kwargs: Any) -> Any:
        if not profile:
            return func(*args, **kwargs)
        from skillcheck.api_lint import timing

        timing.start()
        try:
            return func(*args, **kwargs)
        finally:
            found = timing.active()
            timing.stop()
            if found is not None:
                lines = found.summary()
                click.echo("skillcheck: profile (seconds; stages charged their own time)", err=True)
                for line in lines:
                    click.echo(line, err=True)

    return click.option(
        "--profile",
        is_flag=True,
        help="Print where the run spent its time, per stage, to stderr.",
    )(wrapper)


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


def split_codes(values: tuple[str, ...]) -> list[str] | None:
    if not values:
        return None
    return [item.strip() for value in values for item in value.split(",") if item.strip()]


def check_output(output: Path | None, skills: Any, paths: Any) -> None:
    """Refuse (usage error) an ``--output`` inside a skill being read or equal to an input
    file: ``lint -o SKILL.md`` must not replace the skill with its report. ``skills`` have
    ``root`` and ``display_root``; ``paths`` are the command line's PATHs."""
    if output is None:
        return
    from skillcheck.source.atomic import holder_of

    roots = [(skill.root, f"is inside skill {skill.display_root}") for skill in skills]
    roots += [(Path(p), f"is the input {p}") for p in paths if not Path(p).is_dir()]
    where = holder_of(output, roots)
    if where is not None:
        raise UsageError(f"{output}: {where}; write the output elsewhere")


def emit(text: str, output: Path | None) -> None:
    emit_chunks(lambda sink: sink(text), output)


def emit_chunks(produce: Callable[[Callable[[str], object]], object], output: Path | None) -> None:
    """Write what ``produce(sink)`` passes to ``sink``, chunk by chunk, to stdout or (whole
    or not at all) to ``output``: a long report is never held as one text."""
    if output is None:
        if sys.stdout is None:  # started with stdout closed
            raise UsageError("<stdout>: cannot write: it is closed")
        try:
            produce(sys.stdout.write)
            sys.stdout.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:  # closed (ValueError) or failing stdout
            reason = exc.strerror if isinstance(exc, OSError) else "it is closed"
            raise UsageError(f"<stdout>: cannot write: {reason or exc}") from None
        return
    from skillcheck.source.atomic import write_atomic_stream

    def write(file: Any) -> None:
        produce(lambda chunk: file.write(chunk.encode("utf-8")))

    try:
        write_atomic_stream(output, write)
    except OSError as exc:
        raise UsageError(f"{output}: cannot write: {exc.strerror or exc}") from None


def use_color(no_color: bool, output: Path | None) -> bool:
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
            help="Runtimes that load the skills (default: agentskills; 'all'): "
            + ", ".join(f"{n} ({checked_label(t)})" for n, t in TARGETS.items())
            + ". 'run' = held to that runtime version, run offline on that date;"
            " 'modelled' = from its docs.",
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
    """--select/--extend-select/--ignore, declared once for every command that lints (lint,
    catalog, pack, serve). The values are kept in the click context and read back with
    ``rule_selection``; the engine resolves them with the configuration's ``select``,
    ``extend-select`` and ``ignore`` (``engine.config.build_settings``), so a selector means
    the same on the command line and in a file."""

    def keep(key: str) -> Callable[..., Any]:
        def callback(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
            ctx.meta.setdefault(_SELECTION, {})[key] = split_codes(value)

        return callback

    selectors = (
        (
            "--select",
            "select",
            "Rules to run: codes, prefixes (SK2), slugs or ALL; replaces the config.",
        ),
        ("--extend-select", "extend_select", "Rules to add."),
        ("--ignore", "ignore", "Rules to skip."),
    )
    options = [
        click.option(
            flag,
            multiple=True,
            metavar="CODES",
            expose_value=False,
            callback=keep(key),
            help=text,
        )
        for flag, key, text in selectors
    ]
    for option in reversed(options):
        func = option(func)
    return func


_SELECTION = "skillcheck.rules"


def rule_selection() -> dict[str, list[str] | None]:
    """The command line's rule selectors (None where an option was not given), as
    ``build_settings`` takes them."""
    chosen = click.get_current_context().meta.get(_SELECTION, {})
    return {key: chosen.get(key) for key in ("select", "extend_select", "ignore")}


def load_settings(
    config_file: Path | None, isolated: bool, target: str | None, **overrides: Any
) -> Settings:
    from skillcheck import api_lint as api

    return api.load_settings(config_file, isolated=isolated, target=target, **overrides)


def run_options(settings: Settings, jobs: int, no_cache: bool, cache_dir: Path | None) -> Settings:
    """``settings`` with --jobs and the result cache (not configuration: they change how,
    not what)."""
    from skillcheck import api_lint as api

    return api.run_settings(settings, jobs=jobs, cache=not no_cache, cache_dir=cache_dir)


def shipping_settings(config_file, isolated, target, jobs, no_cache, cache_dir, strict):
    settings = load_settings(config_file, isolated, target, strict=strict, **rule_selection())
    return run_options(settings, jobs, no_cache, cache_dir)


@contextlib.contextmanager
def refusal_shown(quiet: bool) -> Iterator[Progress | None]:
    """Progress while catalog/pack lint, and the diagnostics on stderr when the library
    refuses (``api.Refused``, exit 1 through ``handle_errors``)."""
    from skillcheck.api import Refused

    # progress only when both streams are a terminal: a piped manifest is for a machine
    shown = Progress.wanted(quiet) and sys.stdout.isatty()
    progress = Progress("skillcheck: checking") if shown else None
    try:
        yield progress
    except Refused as exc:
        from skillcheck.report import ReportOptions, write

        if progress is not None:
            progress.done()
            progress = None
        options = ReportOptions(
            cwd=Path.cwd(),
            color=use_color(False, None) and sys.stderr.isatty(),
            quiet=quiet,
            fix_hint=True,
        )
        # chunk by chunk, as lint writes its report: a refused tree may have 100,000 findings
        write("text", exc.result, options, lambda chunk: click.echo(chunk, err=True, nl=False))
        raise
    finally:
        if progress is not None:
            progress.done()


class Progress:
    """A count on stderr, redrawn at most ten times a second, erased at the end: ``N skills``
    for install (called once per skill), ``done/total skills, about T left`` for a lint run
    (``found``, ``searched``, ``checked``), so a long check never looks frozen.

    Only when stderr is a terminal and the report is for a human (the caller decides): never
    in a pipe, a CI log or next to a machine format."""

    DELAY = 0.5  # short runs print nothing at all

    def __init__(self, label: str) -> None:
        self.label = label
        self.count = 0  # skills found (or, for install, installed)
        self.done_count = 0  # skills checked
        self.total: int | None = None  # known once the search is over
        self.started = time.monotonic()
        self.last = 0.0
        self.shown = False

    @staticmethod
    def wanted(quiet: bool) -> bool:
        return not quiet and sys.stderr.isatty()

    def __call__(self, *_args: Any) -> None:
        self.found()

    def found(self, *_args: Any) -> None:
        self.count += 1
        self._draw()

    def searched(self) -> None:
        self.total = self.count
        self._draw(force=True)

    def checked(self, count: int = 1) -> None:
        self.done_count += count
        self._draw()

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if now - self.started < self.DELAY or (not force and now - self.last < 0.1):
            return
        self.last = now
        self.shown = True
        sys.stderr.write(f"\r\x1b[2K{self.label}: {self.line(now)}…")
        sys.stderr.flush()

    def line(self, now: float) -> str:
        """The words after the label: a count while only found skills are known, then
        done/total with an estimate of the time left from the rate so far."""
        noun = "skill" if self.count == 1 else "skills"
        if self.total is None:
            if not self.done_count:
                return f"{self.count} {noun}"
            return f"{self.done_count}/{self.count} {noun} (still searching)"
        text = f"{self.done_count}/{self.total} {noun}"
        elapsed = now - self.started
        if 0 < self.done_count < self.total and elapsed >= 1:
            left = elapsed / self.done_count * (self.total - self.done_count)
            text += f", about {_duration(left)} left"
        return text

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def let_through_note(counts: dict[Any, int]) -> str | None:
    """The line catalog and pack print after a gate that passed with findings, which would
    otherwise go unseen: how many, and how to see or refuse them."""
    from skillcheck.source.skill import Severity

    parts = [
        f"{counts[s]} {word}{'s' * (counts[s] != 1 and word != 'info')}"
        for s, word in (
            (Severity.ERROR, "error"),
            (Severity.WARNING, "warning"),
            (Severity.INFO, "info"),
        )
        if counts.get(s)
    ]
    if not parts:
        return None
    return (
        f"skillcheck: let through {' and '.join(parts)}: `skillcheck lint` lists them,"
        " --strict refuses them"
    )


def allow_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--allow CODE``: the shipping gates' explicit, per-rule exception (pack, install,
    verify), one declaration for the three commands."""
    return click.option(
        "--allow",
        "allow",
        multiple=True,
        metavar="CODE",
        help="Do not refuse for findings of this rule (a code or slug; repeatable), e.g. a"
        " security scanner's own test skills.",
    )(command)


def allowed_codes(allow: Sequence[str]) -> frozenset[str]:
    """The rule codes ``--allow`` names; a word naming no rule is a usage error."""
    from skillcheck.rules import get_rule

    codes = set()
    for word in allow:
        found = get_rule(word)
        if found is None:
            raise UsageError(f"--allow {word}: no such rule (see `skillcheck rules`)")
        codes.add(found.code)
    return frozenset(codes)


def security_screen(allow: frozenset[str]) -> Callable[[str, dict[str, bytes]], str | None]:
    """What install and verify run on each skill's bytes: the security rules (api.screen);
    the findings go to stderr and the skill is refused unless every one is allowed."""
    from skillcheck.api import LintResult, screen
    from skillcheck.report import ReportOptions, render
    from skillcheck.source.skill import Severity

    settings = load_settings(None, True, None)

    def show(result: LintResult, root: Path) -> None:
        options = ReportOptions(cwd=root, color=False, quiet=True, fix_hint=False)
        click.echo(render("text", result, options), err=True, nl=False)

    def check(name: str, files: dict[str, bytes]) -> str | None:
        result = screen({name: files}, settings, allow, show)
        if result is None:
            return None
        codes = sorted({d.code for d in result.diagnostics if d.severity is Severity.ERROR})
        return (
            f"refused: security findings ({', '.join(codes)}); review the skill, and pass"
            f" --allow CODE only for a finding you have judged safe"
        )

    return check
