"""Reporters: one module per output format, each ``write(result, options, sink)``, which
passes the report's text to ``sink`` in chunks as it is made (a report of 100,000 findings
is never one string in memory), and ``render(result, options) -> str``, the same text whole."""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillcheck.source.display import display as display
from skillcheck.source.display import display_path as display_path
from skillcheck.source.display import inert_lines as inert_lines
from skillcheck.source.display import safe as safe

FORMATS = ("text", "json", "sarif", "github", "junit", "html")


@dataclass
class ReportOptions:
    cwd: Path
    color: bool = False
    quiet: bool = False
    statistics: bool = False
    fix_hint: bool = True  # mention --fix in the summary
    strict: bool = False  # every finding fails (JUnit marks warnings and info as failures)
    show_fixes: bool = False  # text: say under each fixable finding what --fix does
    outcome_rules: bool = False  # text: the rules behind each mark of the runtime grid
    # findings left out by --min-severity, by severity name (the text summary counts them)
    hidden: dict[str, int] | None = None


Sink = Callable[[str], object]


def write(fmt: str, result, options: ReportOptions, sink: Sink) -> None:
    """Pass the report in format ``fmt`` to ``sink``, chunk by chunk, in order."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    module = importlib.import_module(f"skillcheck.report.{fmt}")
    module.write(result, options, sink)


def render(fmt: str, result, options: ReportOptions) -> str:
    parts: list[str] = []
    write(fmt, result, options, parts.append)
    return "".join(parts)


class Chunks:
    """Lines gathered into chunks of about ``size`` characters before they go to ``sink``:
    a report passes on a few hundred writes, not one per line."""

    __slots__ = ("parts", "sink", "size", "used")

    def __init__(self, sink: Sink, size: int = 1 << 16) -> None:
        self.sink = sink
        self.size = size
        self.parts: list[str] = []
        self.used = 0

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.used += len(text)
        if self.used >= self.size:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.sink("".join(self.parts))
            self.parts.clear()
            self.used = 0


@functools.lru_cache(maxsize=256)
def rel(path: Path, cwd: Path) -> str:
    """``display_path`` made encodable for any output (remembered: a report names the same
    few files in most of its findings, and ``relative_to`` costs more than the lookup; 256
    entries, since 4,096 held 26 MB more at the peak of a 6,700-skill report)."""
    return display(display_path(path, cwd))


def repository_root(cwd: Path) -> Path:
    """The git work tree holding ``cwd`` (a ``.git`` directory or file), else ``cwd``.

    CI annotations and SARIF locations are relative to the repository root, wherever the
    command was run from.
    """
    for directory in (cwd, *cwd.parents):
        if os.path.lexists(directory / ".git"):
            return directory
    return cwd
