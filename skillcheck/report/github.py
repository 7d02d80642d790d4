"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` line per
diagnostic, and nothing else, so the runner turns each into an annotation on the file.

Escaping is exactly that of GitHub's toolkit (``@actions/core`` ``command.ts``): in the
message ``%``, CR and LF become ``%25``, ``%0D``, ``%0A``; in properties ``:`` and ``,``
become ``%3A`` and ``%2C`` as well. Since no escaped value can hold a line break, a ``,``
or a ``::``, no skill content can end the command early or start another. Control
characters are first made visible (``safe``), so none reaches the log raw.

File paths are relative to the repository root, as the runner expects.
"""

from __future__ import annotations

from pathlib import Path

from skillcheck.report import Chunks, ReportOptions, Sink, rel, repository_root, safe
from skillcheck.source.skill import Diagnostic, Severity

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(diag: Diagnostic, root: Path) -> str:
    """The workflow command for one diagnostic (one line, without its line break)."""
    # GitHub takes columns only on single-line annotations; its endColumn is the last
    # column of the span, ours the one after
    # our end is exclusive: a span that ends at column 1 ends with the line before
    end_line = (
        diag.end_line - 1 if diag.end_column <= 1 and diag.end_line > diag.line else diag.end_line
    )
    single = end_line == diag.line
    props = {"file": rel(diag.path, root), "line": str(diag.line)}
    if single:
        props["col"] = str(diag.column)
    props["endLine"] = str(end_line)
    if single and end_line == diag.end_line:
        props["endColumn"] = str(max(diag.column, diag.end_column - 1))
    props["title"] = f"{diag.code} {diag.slug}"
    # escape skill content first, then join: the help's line break is ours, not the skill's
    message = safe(diag.message) + (f"\nhelp: {safe(diag.help)}" if diag.help else "")
    fields = ",".join(f"{key}={escape_property(safe(value))}" for key, value in props.items())
    return f"::{COMMANDS[diag.severity]} {fields}::{escape_data(message)}"


def write(result, options: ReportOptions, sink: Sink) -> None:
    root = repository_root(options.cwd)
    out = Chunks(sink)
    for diag in result.diagnostics:
        out.add(_annotation(diag, root) + "\n")
    out.flush()


def render(result, options: ReportOptions) -> str:
    parts: list[str] = []
    write(result, options, parts.append)
    return "".join(parts)
