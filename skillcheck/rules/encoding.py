"""SK9xx: encoding and line endings of SKILL.md."""

from __future__ import annotations

import re
from codecs import BOM_UTF8
from collections.abc import Iterator

from skillcheck.analysis.edits import proven_fix
from skillcheck.rules.base import Context, rule
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import Document, Finding, Fix, Impact, Outcome, Severity, Skill
from skillcheck.targets import TARGETS, impacts, where

# claude.ai's and package_skill.py's frontmatter match (RUNTIMES.md, claude-api)
_LF_FRONTMATTER = LazyPattern(r"---\n(.*?)\n---", re.DOTALL)


@rule(
    "SK901",
    "byte-order-mark",
    Severity.WARNING,
    "SKILL.md starts with a UTF-8 byte order mark.",
    what="""
        Reports a UTF-8 BOM (`EF BB BF`) at the start of SKILL.md, as some Windows editors
        write it.
    """,
    why="""
        With a BOM the first line is no longer exactly `---`: Claude Code before 2.1.239
        silently ignored such a skill, claude.ai and skills-ref report a missing frontmatter,
        and Codex rejects it.
    """,
    bad="""
        \\ufeff---
        name: pdf-tools
    """,
    good="""
        ---
        name: pdf-tools
    """,
    fixable=True,
)
def byte_order_mark(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None:
        return
    for issue in doc.text_issues:
        if issue.kind == "bom":
            select = where(lambda t: t.bom if t.bom is not Outcome.OK else None)
            select["agentskills"] = Impact(Outcome.DEGRADED, Severity.WARNING)
            yield Finding(
                "SKILL.md starts with a UTF-8 byte order mark; save it as UTF-8 without BOM",
                span=issue.span,
                impact=select,
                fix=remove_bom(doc),
            )


@rule(
    "SK902",
    "line-endings",
    Severity.WARNING,
    "SKILL.md uses CRLF or CR line endings.",
    what="""
        Reports Windows (CRLF) or old Mac (lone CR) line endings in SKILL.md, at the first one.
        For `claude-api` it is an error only when the line endings defeat that loader's
        frontmatter match (`^---\\n(.*?)\\n---`): CRs in the body below an LF frontmatter
        leave the match intact and stay a warning.
    """,
    why="""
        claude.ai and `package_skill.py` match the frontmatter with `^---\\n(.*?)\\n---`,
        which CRLF around the frontmatter defeats, so the upload fails with "no
        frontmatter"; lone CRs are not line breaks to CommonMark renderers. LF reads the
        same everywhere.
    """,
    bad="""
        ---\\r\\n
        name: pdf-tools\\r\\n
    """,
    good="""
        ---\\n
        name: pdf-tools\\n
    """,
    fixable=True,
)
def line_endings(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None:
        return
    # the frontmatter as claude.ai and package_skill.py match it: found there, a CR further
    # down (one CRLF in the body) rejects nothing
    matched = _LF_FRONTMATTER.match(doc.text) is not None
    for issue in doc.text_issues:
        if issue.kind in ("crlf", "cr"):
            select = where(lambda t: t.crlf if t.crlf is not Outcome.OK else None)
            if matched:
                select = dict.fromkeys(select, Impact(Outcome.OK, Severity.WARNING))
            select["agentskills"] = Impact(Outcome.OK, Severity.WARNING)
            yield Finding(
                f"SKILL.md has {issue.detail}; convert it to LF (git: * text=auto eol=lf)",
                span=issue.span,
                impact=select,
                fix=normalize_newlines(doc),
            )


@rule(
    "SK903",
    "encoding",
    Severity.ERROR,
    "SKILL.md is not valid UTF-8.",
    what="""
        Reports SKILL.md files in UTF-16 or UTF-32 (with or without a BOM), invalid UTF-8 byte
        sequences (at the first one) and NUL bytes. skillcheck decodes with replacement
        characters and goes on checking.
    """,
    why="""
        The specification's loaders read UTF-8: skills-ref crashes on other bytes, Codex
        (`read_to_string`) and claude.ai (`read_text`) reject the file, and a UTF-16 file has
        no `---` line that any of them can see. Claude Code, the Copilot CLI, OpenClaw,
        OpenSkills and the skills CLI load it with replacement characters in place of the
        bad bytes.
    """,
    bad="""
        SKILL.md saved as "UTF-16 LE" by an editor, or containing a Latin-1 byte 0xE9.
    """,
    good="""
        SKILL.md saved as UTF-8.
    """,
)
def encoding(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None:
        return
    for issue in doc.text_issues:
        if issue.kind in ("utf16", "utf32"):
            message = f"SKILL.md is encoded as {issue.detail}; save it as UTF-8"
        elif issue.kind == "invalid-utf8":
            message = f"{issue.detail}: SKILL.md is not valid UTF-8; save it as UTF-8"
        elif issue.kind == "nul":
            message = "NUL byte in SKILL.md; it is binary to most tools, remove it"
        else:
            continue
        select: dict[str, Outcome | Impact | None] = {n: t.non_utf8 for n, t in TARGETS.items()}
        if issue.kind == "nul":
            # skills-ref reads a NUL fine; in the frontmatter its YAML reader rejects it (SK105)
            select["skills-ref"] = None
        yield Finding(message, span=issue.span, impact=impacts(select))


# --- the fixes of SK901 and SK902 (applied by fix.py) ---------------------------------


def remove_bom(doc: Document) -> Fix | None:
    """SK901: drop the UTF-8 byte order mark."""
    if not doc.raw.startswith(BOM_UTF8):
        return None
    return proven_fix(doc, 0, len(BOM_UTF8), b"", "remove the UTF-8 byte order mark", None)


def normalize_newlines(doc: Document) -> Fix | None:
    """SK902: every CRLF and lone CR becomes LF (one edit from the first CR to the last)."""
    if doc.truncated or any(i.kind in ("utf16", "utf32") for i in doc.text_issues):
        return None
    raw = doc.raw
    first = raw.find(b"\r")
    if first < 0:
        return None
    last = raw.rfind(b"\r")
    end = last + 2 if raw[last + 1 : last + 2] == b"\n" else last + 1
    region = raw[first:end]
    replacement = region.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return proven_fix(doc, first, end, replacement, "convert line endings to LF", None)
