"""Text and paths made safe to show: terminal escapes, undecodable names, CI commands.

Moved out of ``report/__init__.py`` so the engine, the fixes and the rules (below the
reporters) show paths and values the same way; ``skillcheck.report`` re-exports them.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from skillcheck.source.lazy import LazyPattern

# C0/C1 controls (but tab), DEL, bidi/zero-width marks that reorder or hide text, and lone
# surrogates (undecodable file-name bytes), which no UTF-8 output can encode; compiled on
# first use, as its wide classes cost milliseconds at every start-up
_UNSAFE = LazyPattern(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff"
    "\ud800-\udfff\U000e0000-\U000e007f]"  # and Unicode tag characters (hidden ASCII)
)


def safe(text: str) -> str:
    """Make skill-controlled text inert on a terminal: escapes become visible ``\\x1b``,
    undecodable file-name bytes ``\\xNN``."""
    if text.isprintable():
        # nothing to escape: every character _UNSAFE matches is in a Unicode category
        # isprintable refuses (Cc, Cf, Cs, Cn), and the pattern's wide class takes 4 ms to
        # compile (a tab takes the path below, and is kept)
        return text
    return _UNSAFE.sub(
        lambda m: (
            f"\\u{ord(m.group()):04x}" if ord(m.group()) > 0xFF else f"\\x{ord(m.group()):02x}"
        ),
        display(text),
    )


def inert_lines(text: str) -> str:
    """Lines of human output that no CI log can take for a command.

    GitHub Actions runs any log line that starts with ``::`` (after blanks) as a workflow
    command; a skill directory named ``::error …`` must not be able to print one.
    """
    out = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("::"):
            indent = len(line) - len(stripped)
            line = line[:indent] + "\\x3a" + stripped[1:]
        out.append(line)
    return "\n".join(out)


def display(text: str) -> str:
    """Text that any UTF-8 writer can encode: undecodable file-name bytes (lone surrogates
    from os.fsdecode) become ``\\xNN``."""
    if text.isascii():
        return text
    return _SURROGATE.sub(_show_surrogate, text)


_SURROGATE = LazyPattern("[\ud800-\udfff]")


def _show_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's escape of one undecodable byte
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def cell_width(text: str) -> int:
    """Columns ``text`` takes on a terminal: wide and full-width characters (CJK, most
    emoji) take two, combining marks and format characters none, others one. Carets under
    a quoted line are placed by this, not by code points."""
    if text.isascii():
        return len(text)
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to at most ``limit`` characters for a message, keeping its head and its
    last words (where a value's difference often is), with ``…`` between."""
    if len(text) <= limit:
        return text
    tail = max(limit // 4, 1)
    return text[: limit - tail - 1] + "…" + text[-tail:]


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest of ``choices`` to a misspelt ``value``
    (case ignored; every choice it begins, for a shortened one), or nothing when none is
    close."""
    import difflib  # only on the error path: start-up need not pay for it

    by_key = {choice.lower(): choice for choice in choices}
    key = value.strip().lower()
    # a shortened name (`claude`) may stand for several: name each of them
    close = [k for k in by_key if k.startswith(key)][:3] if len(key) >= 3 else []
    close = close or difflib.get_close_matches(key, list(by_key), n=1, cutoff=0.6)
    if not close:
        return ""
    return "; did you mean " + " or ".join(repr(by_key[k]) for k in close) + "?"


def display_path(path: Path, cwd: Path | None = None) -> str:
    """A path relative to the current directory when it lies below it, else absolute."""
    base = cwd or Path.cwd()
    if os.name != "nt" and base.parts:
        # what relative_to does on POSIX, compared as tuples: a report shows every skill's
        # paths, and relative_to costs ~5 us each (Windows folds case: it keeps that path)
        parts, prefix = path.parts, base.parts
        if parts[: len(prefix)] == prefix:
            return "/".join(parts[len(prefix) :]) or "."
        return path.as_posix()
    try:
        return path.relative_to(base).as_posix() or "."
    except ValueError:
        return path.as_posix()
