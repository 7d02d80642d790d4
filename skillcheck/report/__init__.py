"""Reporters: one module per output format, each ``render(result, options) -> str``."""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from pathlib import Path

FORMATS = ("text", "json", "sarif", "github", "junit")

# C0/C1 controls (but tab), DEL, and bidi/zero-width marks that reorder or hide text
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def safe(text: str) -> str:
    """Make skill-controlled text inert on a terminal: escapes become visible ``\\x1b``."""
    return _UNSAFE.sub(
        lambda m: (
            f"\\u{ord(m.group()):04x}" if ord(m.group()) > 0xFF else f"\\x{ord(m.group()):02x}"
        ),
        text,
    )


@dataclass
class ReportOptions:
    cwd: Path
    color: bool = False
    quiet: bool = False
    statistics: bool = False
    fix_hint: bool = True  # mention --fix in the summary


def render(fmt: str, result, options: ReportOptions) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    module = importlib.import_module(f"skillcheck.report.{fmt}")
    return module.render(result, options)


def rel(path: Path, cwd: Path) -> str:
    try:
        return path.relative_to(cwd).as_posix() or "."
    except ValueError:
        return path.as_posix()
