"""The figures of a skill: tokens per tier (catalog entry, body, references) and lines, as
one tokenizer counts them, computed once per skill and cached on it; the ``--statistics``
table of a run. The SK6xx budget rules, the runner, the summaries and the catalog read them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from skillcheck.source.display import safe
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import read_text
from skillcheck.source.markdown import is_markdown
from skillcheck.source.skill import Document, Memo, Skill, SkillFile, SkillSummary
from skillcheck.tokens import DEFAULT_TOKENIZER, EstimateTokenizer, Tokenizer, get_tokenizer

TOC_WINDOW = 50  # a table of contents must start within the first 50 lines to be seen first


def tokenizer_for(spec: str) -> Tokenizer:
    """The tokenizer for ``spec``; ``get_tokenizer`` keeps one instance per spec and process.

    Raises ValueError (a user-facing message) for a bad spec; ``build_settings`` checks the
    spec before any skill is read, so a run never gets this far with one.
    """
    return get_tokenizer(spec)


@dataclass(frozen=True)
class ReferenceFigures:
    """A Markdown file of the skill other than SKILL.md."""

    rel: str
    path: Path
    lines: int
    tokens: int
    has_toc: bool


@dataclass(frozen=True)
class SkillFigures:
    """Tokens per tier and lines of one skill, as one tokenizer counts them."""

    tokenizer: str
    catalog_tokens: int | None  # name + description; None without a string description
    body_tokens: int
    body_lines: int
    references: tuple[ReferenceFigures, ...]

    @property
    def reference_tokens(self) -> int:
        return sum(r.tokens for r in self.references)

    @property
    def largest_reference(self) -> int:
        return max((r.tokens for r in self.references), default=0)


def count_lines(lines: list[str]) -> int:
    """Lines as an editor shows them: a final line break does not start another line."""
    if lines and lines[-1] == "":
        return len(lines) - 1
    return len(lines)


def catalog_text(skill: Skill) -> str | None:
    """What a runtime puts in the catalog for the skill: name and description."""
    description = skill.description
    if description is None:
        return None
    name = skill.name or skill.dir_name
    return f"{name}\n{description.strip()}"


def is_reference(skill: Skill, rel: str, path: Path) -> bool:
    return is_markdown(rel) and path != skill.skill_md


_FENCE = LazyPattern(r"^ {0,3}(`{3,}|~{3,})")
_TOC_HEADING = LazyPattern(
    r"^ {0,3}(?:#{1,6}[ \t]+|\*\*|__)?(?:table[ \t]+of[ \t]+)?contents\b[^\w]*$", re.IGNORECASE
)
_TOC_ITEM = LazyPattern(r"^\s*(?:[-*+]|\d+[.)])\s+.*\]\(#[^)\s]+\)")


def has_toc(lines: list[str]) -> bool:
    """A "Contents" / "Table of contents" heading, or a list of two or more links to the
    file's own ``#anchors``, starting within the first ``TOC_WINDOW`` lines."""
    fence: str | None = None
    items = 0
    for index, line in enumerate(lines):
        match = _FENCE.match(line)
        if match:
            marker = match.group(1)
            if fence is None:
                fence = marker[0] * 3
            elif marker.startswith(fence):
                fence = None
            continue
        if fence is not None:
            continue
        if index < TOC_WINDOW and _TOC_HEADING.match(line):
            return True
        if _TOC_ITEM.match(line):
            items += 1
            if items >= 2:
                return True
        elif line.strip() and items:
            items = 0  # the list ended before it had two entries
        if index >= TOC_WINDOW and not items:
            return False
    return False


FIGURES: Memo[SkillFigures] = Memo("figures")  # per tokenizer spec


def body_lines_of(doc: Document) -> int:
    """``count_lines`` of the SKILL.md body's lines."""
    count = len(doc.lines) - doc.body_line + 1
    return count - 1 if count > 0 and doc.lines[-1] == "" else max(count, 0)


def body_split(doc: Document) -> list[str]:
    """``doc.body.split("\\n")``, without splitting it again when the document has it."""
    fm = doc.frontmatter
    if fm is None or fm.close_line is None:  # the body is the text as read (CR and all)
        return doc.body.split("\n")
    return doc.lines[doc.body_line - 1 :]  # the body is these lines joined with "\n"


def reference_texts(skill: Skill) -> Iterator[tuple[SkillFile, str]]:
    """Each readable Markdown file of the skill other than SKILL.md, with its text."""
    for entry in skill.files:
        if entry.kind == "file" and is_reference(skill, entry.rel, entry.path):
            text = read_text(skill, entry)
            if text is not None:
                yield entry, text


def toc_in(text: str, lines: list[str]) -> bool:
    # a contents heading needs "contents", a list of anchor links "](#": without either
    # (casefold covers what IGNORECASE matches) there is none to look for
    return ("](#" in text or "contents" in text.casefold()) and has_toc(lines)


def skill_figures(skill: Skill, spec: str = DEFAULT_TOKENIZER) -> SkillFigures:
    """The skill's figures for tokenizer ``spec``, computed on first use and cached."""
    cached = skill.memos.get(FIGURES, spec)
    if cached is not None:
        return cached
    tokenizer = tokenizer_for(spec)
    doc = skill.doc
    catalog = catalog_text(skill) if doc is not None else None
    body_tokens = body_lines = 0
    if doc is not None:
        body_lines = body_lines_of(doc)
        body_tokens = _count(tokenizer, doc.body, body_split(doc))
    refs = []
    for entry, text in reference_texts(skill):
        lines = text.split("\n")
        refs.append(
            ReferenceFigures(
                rel=entry.rel,
                path=entry.path,
                lines=count_lines(lines),
                tokens=_count(tokenizer, text, lines),
                has_toc=toc_in(text, lines),
            )
        )
    figures = SkillFigures(
        tokenizer=spec,
        catalog_tokens=tokenizer.count(catalog) if catalog is not None else None,
        body_tokens=body_tokens,
        body_lines=body_lines,
        references=tuple(refs),
    )
    return skill.memos.put(FIGURES, figures, spec)


def _count(tokenizer: Tokenizer, text: str, lines: list[str]) -> int:
    """``tokenizer.count(text)``; the estimator reuses ``lines`` (``text.split("\\n")``)."""
    if isinstance(tokenizer, EstimateTokenizer):
        return tokenizer.count_split(text, lines)
    return tokenizer.count(text)


# --- statistics ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Limits:
    """The budgets a run checks against (the `budgets` table, else the defaults); None: unset."""

    catalog: int | None
    body: int | None
    lines: int | None
    reference: int | None  # per reference file
    collection: int | None  # the catalog entries of all skills together


def share(value: int | None, limit: int | None) -> float | None:
    """``value`` as a fraction of ``limit`` (1.0 = the whole budget); None when either is."""
    if value is None or not limit:
        return None
    return value / limit


OVER = "OVER"  # the statistics table's mark on a figure past its budget


def _cell(value: int | None, limit: int | None) -> str:
    if value is None:
        return "-"
    part = share(value, limit)
    if part is None:
        return f"{value:,}"
    return f"{value:,} {part:4.0%}" + (f" {OVER}" if value > (limit or 0) else "")


def statistics_table(
    skills: list[SkillSummary], spec: str = DEFAULT_TOKENIZER, limits: Limits | None = None
) -> list[str]:
    """``--statistics``: tokens per tier and body lines of each skill, each with the share of
    its budget used and OVER past it, and the catalog total against the collection budget."""

    limits = limits or Limits(None, None, None, None, None)
    header = ("skill", "catalog", "body", "largest reference", "all references", "body lines")
    budgets = (
        "budget",
        *(f"{n:,}" if n is not None else "none" for n in (limits.catalog, limits.body)),
        f"{limits.reference:,}" if limits.reference is not None else "none",
        "",
        f"{limits.lines:,}" if limits.lines is not None else "none",
    )
    rows: list[tuple[str, ...]] = []
    total = 0
    over = 0
    for skill in skills:
        name = safe(skill.display_root)
        fig = skill.figures
        if not skill.has_doc or fig is None:
            rows.append((name, "-", "-", "-", "-", "-"))
            continue
        total += fig.catalog or 0
        cells = (
            _cell(fig.catalog, limits.catalog),
            _cell(fig.body, limits.body),
            _cell(fig.largest_reference, limits.reference),
            f"{fig.references:,}",
            _cell(fig.lines, limits.lines),
        )
        over += any(cell.endswith(OVER) for cell in cells)
        rows.append((name, *cells))
    if not rows:
        return []
    widths = [max(len(row[i]) for row in [header, budgets, *rows]) for i in range(len(header))]

    def fmt(row: tuple[str, ...]) -> str:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        return "  ".join(cells).rstrip()

    n = len(skills)
    collection = f"Collection catalog: {total:,} tokens in {n} skill{'s' * (n != 1)}"
    if limits.collection is not None:
        collection += f", {_cell(total, limits.collection)} of the budget of {limits.collection:,}"
    return [
        f"Tokens per tier ({spec}), each with the share of its budget used ({OVER}: past it):",
        fmt(header),
        fmt(budgets),
        *(fmt(row) for row in rows),
        collection,
        f"{over} skill{'s' * (over != 1)} over a budget" if over else "No skill over a budget",
    ]
