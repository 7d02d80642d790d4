"""How a command run ends: through ``os._exit`` once everything a normal exit does is done
(exit handlers, then flushed streams), so the interpreter does not free what the run built; the
interpreter's own exit when another thread is still running."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import write_skill

# A probe around the entry point: an object whose finaliser says when the interpreter frees
# it, an exit handler, text left in stdout's buffer, and (with THREAD) a thread still running
# when the command ends.
_PROBE = """
import atexit, os, sys, threading
class Probe:
    def __del__(self):
        os.write(2, b"<freed>")
probe = Probe()
atexit.register(lambda: sys.stdout.write("<handler>"))  # buffered, flushed after
sys.stdout.write("<buffered>")
if os.environ.get("THREAD"):
    def late():
        # alive until the main thread has finished (the interpreter's exit marks it done
        # before it waits for the other threads), however long the command takes
        threading.main_thread().join()
        os.write(2, b"<thread done>")
    threading.Thread(target=late).start()
from skillcheck._entry import main
sys.argv = ["skillcheck", *sys.argv[1:]]
main()
"""


def _run(args: list[str], cwd: Path, thread: bool = False) -> subprocess.CompletedProcess[bytes]:
    # buffered stdout, as a pipe normally is: text a flush must not lose
    env = {k: v for k, v in os.environ.items() if k not in ("THREAD", "PYTHONUNBUFFERED")}
    if thread:
        env["THREAD"] = "1"
    return subprocess.run(
        [sys.executable, "-c", _PROBE, *args], cwd=cwd, capture_output=True, env=env, timeout=60
    )


def test_a_run_ends_with_its_output_and_handlers_but_frees_nothing(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf", frontmatter="name: pdf-tools\ndescription: Does PDFs.\n")
    result = _run(["lint", "--isolated", "--no-cache", "--format", "json", "."], tmp_path)
    assert result.returncode == 1  # the findings' exit status survives
    assert result.stdout.startswith(b"<buffered>")
    assert b'"SK206"' in result.stdout  # the report, whole
    assert result.stdout.endswith(b"}\n<handler>")  # the handler ran, then stdout was flushed
    assert b"<freed>" not in result.stderr  # the interpreter did not tear the run down


def test_every_exit_status_is_kept(tmp_path: Path) -> None:
    assert _run(["rules"], tmp_path).returncode == 0
    missing = _run(["lint", "--isolated", "no-such-dir"], tmp_path)
    assert missing.returncode == 2
    assert b"no-such-dir" in missing.stderr


def test_a_thread_still_running_gets_the_interpreters_exit(tmp_path: Path) -> None:
    result = _run(["rules"], tmp_path, thread=True)
    assert result.returncode == 0
    # the interpreter waited for the thread, then ran the handlers and freed the objects
    assert b"<thread done>" in result.stderr
    assert result.stdout.endswith(b"<handler>")
    assert b"<freed>" in result.stderr
