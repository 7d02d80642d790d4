"""Console entry point: answers `--version` before importing click (~35 ms), then hands over."""

from __future__ import annotations

import sys

from skillcheck import __version__


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        sys.stdout.write(f"skillcheck {__version__}\n")
        return
    from skillcheck.cli import cli

    cli(prog_name="skillcheck")
