"""Console entry point: answers `--version` before importing click (~35 ms), then hands over."""

from __future__ import annotations

import atexit
import gc
import os
import sys

from skillcheck import __version__

# The cyclic collector's first-generation threshold for a command run. A run allocates
# millions of short-lived objects that reference counting frees, and at the default of 700
# the collector ran thousands of times for little garbage: 50,000 took ~8 ms off a warm lint
# of 1,000 skills (272 -> 265 ms) and ~0.7 s of CPU off a cold lint of the real-world corpus,
# peak memory unchanged (+2 MB). Set here, not in the engine: a program that uses
# skillcheck.api keeps its own settings.
GC_THRESHOLD = 50_000


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"skillcheck {__version__}\n")
        return
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    from skillcheck.cli import cli

    try:
        cli(prog_name="skillcheck")  # click's standalone mode always ends in SystemExit
    except SystemExit as exc:
        leave(exc)


def leave(exc: SystemExit) -> None:  # never returns (not NoReturn: `typing` costs 9 ms)
    """End the process as the interpreter would on ``exc``, without freeing what the run
    built: tearing down every object and module took 27 ms of a 270 ms warm lint of 1,000
    skills, and more after a cold lint, for memory the system takes back anyway (mypy ends
    the same way). Everything else a normal exit does is done first, in its order: with
    another thread alive, an exit status that is not a number, or no way to run the exit
    handlers, the exit is the interpreter's own."""
    import threading  # here, not at the top: `--version` starts without it

    code = 0 if exc.code is None else exc.code
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if type(code) is not int or run_exit_handlers is None or threading.active_count() > 1:
        raise exc  # the interpreter waits for the thread, prints the message
    try:
        run_exit_handlers()  # multiprocessing's among them: a spawned pool's semaphores
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:
        raise exc from None  # a closed pipe: the interpreter reports it as it always does
    os._exit(code)
