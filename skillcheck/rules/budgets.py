"""SK6xx: token, line and size budgets of progressive disclosure.

A runtime shows every skill's catalog entry (name + description) in every prompt, loads the
body when the skill is chosen, and reads reference files on demand. Each tier has a budget
(the specification's ~100 tokens, < 5000 tokens and < 500 lines); all of them are set under
``budgets`` in the configuration.

When a run reports the figures (tokens per tier, lines: ``--statistics``, the JSON report,
``pack``), :func:`skill_figures` computes them once per skill and caches them on the skill, and
the rules here read that count. Otherwise a rule counts a text only when the tokenizer's
ceiling (``Tokenizer.ceiling``) cannot prove it under the budget. The tokenizer comes from the
``tokenizer`` option (config ``tokenizer`` or ``--tokenizer``); ``skillcheck.tokens`` loads each
one once per process.
"""

from __future__ import annotations

from collections.abc import Iterator

from skillcheck.analysis.figures import (
    FIGURES,
    body_lines_of,
    body_split,
    catalog_text,
    count_lines,
    reference_texts,
    toc_in,
    tokenizer_for,
)
from skillcheck.rules.base import (
    Context,
    Input,
    Option,
    budget,
    budget_option,
    rule,
    tokenizer_spec,
    usable_frontmatter,
    value_span,
)
from skillcheck.source.skill import (
    Finding,
    Impact,
    Outcome,
    Pos,
    Severity,
    Skill,
    SkillSummary,
    Span,
)
from skillcheck.targets import every
from skillcheck.tokens import DEFAULT_TOKENIZER, EstimateTokenizer, Tokenizer

# Defaults of the `budgets` table (config.schema.json names the keys).
# The token cost of a description at the spec's 1,024-character limit: English descriptions
# run at a median 5.1 characters per token (621 descriptions over 200 characters from nine
# vendor and community repositories), so 1,024 characters + a name is about 200 tokens. The
# spec's "~100 tokens" is a rough average (real catalog entries: median 55, p90 116 tokens on
# 894 skills), not a limit: 100 flagged one vendor skill in seven. 200 is p98 of those skills.
CATALOG_TOKENS = 200
BODY_TOKENS = 5000  # spec: "< 5000 tokens recommended"
BODY_LINES = 500  # spec and Anthropic: SKILL.md under 500 lines
REFERENCE_LINES = 100  # Anthropic: a table of contents in reference files over 100 lines
# Claude Code's Read tool refuses a file over 25,000 tokens in one call (its own tokenizer,
# which counts more than cl100k_base for the same text); 10,000 keeps a reference readable
# in one call with room to spare, and is twice the body budget.
REFERENCE_TOKENS = 10_000
FILE_BYTES = 8 * 1024 * 1024  # what skillcheck reads and scans of one file
UPLOAD_LIMIT = 30_000_000  # claude.ai / Skills API: "30 MB" (the smaller reading of it)
SKILL_BYTES = UPLOAD_LIMIT

# the options the SK6xx rules read (the defaults above); SK307 reads `budgets` too
TOKENIZER = Option(
    "tokenizer",
    {"type": "string", "pattern": "^(estimate|tiktoken:[A-Za-z0-9_]+)$"},
    DEFAULT_TOKENIZER,
    "How tokens are counted: `estimate` (built in, no dependency) or `tiktoken:ENCODING`"
    " (needs tiktoken); `--tokenizer` on the command line wins.",
)


def _over(tokenizer: Tokenizer, text: str, limit: int, lines: list[str] | None = None) -> int:
    """The tokens of ``text`` if they are over ``limit``, else 0: counted only when the
    tokenizer's ceiling cannot prove them under it (most texts are far under). For a run
    that reports figures (``--statistics``, the JSON report, ``pack``) the runner counted
    every tier first (``skill_figures``), and the rules read those counts instead."""
    if isinstance(tokenizer, EstimateTokenizer):  # it also proves texts by counting part
        return tokenizer.over(text, limit, lines)
    if tokenizer.ceiling(text, limit) <= limit:
        return 0
    count = tokenizer.count(text)
    return count if count > limit else 0


def _description_span(skill: Skill) -> Span:
    fm = usable_frontmatter(skill)
    node = fm.node("description") if fm else None
    if node is None:
        return Span(Pos(1, 1), Pos(1, 4))
    return value_span(node.resolved())


def _first_body_line(skill: Skill) -> int:
    doc = skill.doc
    assert doc is not None
    for number in range(doc.body_line, len(doc.lines) + 1):
        if doc.lines[number - 1].strip():
            return number
    return doc.body_line


def _size(n: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


# --- rules -----------------------------------------------------------------------------------


@rule(
    "SK601",
    "catalog-tokens",
    Severity.WARNING,
    "The catalog entry (name + description) is over its token budget (200).",
    what="""
        Counts the tokens of what a runtime lists for the skill before it is chosen: the
        `name` and the `description`. Reported at the description when the count exceeds
        `budgets.catalog-tokens`.

        Where the default comes from: the specification allows a description of up to 1,024
        characters, and English descriptions average about 5 characters per token (median
        5.1 on 621 real descriptions), so a description at the spec's limit costs about 200
        tokens. The spec's "~100 tokens" for the metadata tier is an average, not a limit
        (real catalog entries: median 55, p90 116 tokens over 894 skills from nine vendor and
        community repositories); a default of 100 warned on one vendor skill in seven that
        the spec allows. At 200 the rule reports entries that cost more than any
        spec-conforming English description: text in scripts that need more tokens per
        character (CJK, Cyrillic) or long descriptions that SK303 also reports.
    """,
    why="""
        Every skill's catalog entry is in the prompt of every conversation, used or not. The
        specification budgets this metadata tier at about 100 tokens per skill (its client
        guide says 50–100); long descriptions crowd the other skills out of a runtime's listing
        budget (Claude Code gives the whole listing about 1% of the context window). Lower
        `budgets.catalog-tokens` to 100 to hold a collection to the spec's average.
    """,
    bad="""
        description: This skill provides a comprehensive, end-to-end toolkit for every kind of
          PDF work you can imagine, including (200 more words of features and history)...
    """,
    good="""
        description: Extracts text and tables from PDF files and fills PDF forms. Use when the
          user mentions PDFs, forms or document extraction.
    """,
    options=[
        budget_option(
            "catalog-tokens",
            CATALOG_TOKENS,
            "Most tokens in a skill's catalog entry (`name` + `description`), which is in every"
            " prompt; 200 is the cost of a description at the specification's 1,024-character"
            " limit.",
        ),
        TOKENIZER,
    ],
)
def catalog_tokens(skill: Skill, ctx: Context) -> Iterator[Finding]:
    limit = budget(ctx, "catalog-tokens")
    if skill.doc is None or usable_frontmatter(skill) is None or limit is None:
        return
    spec = tokenizer_spec(ctx)
    figures = skill.memos.get(FIGURES, spec)
    if figures is not None:
        count = figures.catalog_tokens or 0
    else:
        catalog = catalog_text(skill)
        count = 0 if catalog is None else _over(tokenizer_for(spec), catalog, limit)
    if count <= limit:
        return
    yield Finding(
        f"the catalog entry (name + description) is {count} tokens, over the budget of {limit}"
        f" ({spec}); it is in every prompt: keep what the skill does and when to"
        " use it, move the rest into the body",
        span=_description_span(skill),
    )


@rule(
    "SK602",
    "body-tokens",
    Severity.WARNING,
    "The SKILL.md body is over its token budget (5000).",
    what="""
        Counts the tokens of the SKILL.md body (everything after the frontmatter), which a
        runtime loads whole when the skill is activated. Reported at the first line of the body.
    """,
    why="""
        The specification recommends a body under 5000 tokens: the body shares the context
        window with the conversation, and detail the task at hand does not need belongs in
        reference files the agent reads on demand (progressive disclosure).
    """,
    bad="""
        SKILL.md: 9,000 tokens of instructions, API tables and worked examples
    """,
    good="""
        SKILL.md: the workflow in 2,000 tokens, linking to
          references/api.md and references/examples.md for the detail
    """,
    options=[
        budget_option(
            "body-tokens",
            BODY_TOKENS,
            "Most tokens in the SKILL.md body, loaded when the skill is chosen (the"
            " specification recommends under 5,000).",
        ),
        TOKENIZER,
    ],
)
def body_tokens(skill: Skill, ctx: Context) -> Iterator[Finding]:
    limit = budget(ctx, "body-tokens")
    doc = skill.doc
    if doc is None or limit is None:
        return
    spec = tokenizer_spec(ctx)
    figures = skill.memos.get(FIGURES, spec)
    if figures is not None:
        count = figures.body_tokens
    else:
        count = _over(tokenizer_for(spec), doc.body, limit, body_split(doc))
    if count <= limit:
        return
    line = _first_body_line(skill)
    yield Finding(
        f"the body is {count} tokens, over the budget of {limit}"
        f" ({spec}); it is loaded whole when the skill is used: move detail into"
        " reference files under references/ and link to them",
        span=Span(Pos(line, 1), Pos(line, 2)),
    )


@rule(
    "SK603",
    "body-lines",
    Severity.WARNING,
    "The SKILL.md body is longer than 500 lines.",
    what="""
        Counts the lines of the SKILL.md body. Reported at the first line past the budget.
    """,
    why="""
        The specification and Anthropic's authoring guide keep SKILL.md under 500 lines: a
        long body costs context on every activation, and agents that read files in pages
        may never see its end. Split the detail into reference files.
    """,
    bad="""
        SKILL.md: 820 lines (workflow, full API reference, troubleshooting)
    """,
    good="""
        SKILL.md: 180 lines of workflow
        references/api.md, references/troubleshooting.md: the rest, linked from SKILL.md
    """,
    options=[
        budget_option(
            "body-lines",
            BODY_LINES,
            "Most lines in the SKILL.md body (the specification and Anthropic: under 500).",
        )
    ],
)
def body_lines(skill: Skill, ctx: Context) -> Iterator[Finding]:
    limit = budget(ctx, "body-lines")
    doc = skill.doc
    if doc is None or limit is None:
        return
    count = body_lines_of(doc)
    if count <= limit:
        return
    line = doc.body_line + limit  # the first body line past the budget
    yield Finding(
        f"the body is {count} lines, over the budget of {limit}; line {line} and"
        " below are past it: move detail into reference files and link to them",
        span=Span(Pos(line, 1), Pos(line, 2)),
    )


@rule(
    "SK604",
    "reference-no-toc",
    Severity.INFO,
    "A long reference file has no table of contents near its top.",
    what="""
        Reports a Markdown file of the skill other than SKILL.md that is longer than
        `budgets.reference-lines` and has no table of contents: neither a "Contents" /
        "Table of contents" heading nor a list of at least two links to the file's own
        `#anchors`, starting within its first 50 lines.
    """,
    why="""
        Agents often preview a reference file (its first lines) before reading more. Anthropic's
        authoring guide asks for a table of contents at the top of reference files over 100
        lines, so the agent sees the whole scope of the file even from a partial read.
    """,
    bad="""
        # API reference
        ## Authentication
        (300 lines)
    """,
    good="""
        # API reference
        - [Authentication](#authentication)
        - [Pagination](#pagination)
        - [Errors](#errors)
        ## Authentication
        (300 lines)
    """,
    options=[
        budget_option(
            "reference-lines",
            REFERENCE_LINES,
            "Markdown references longer than this need a table of contents (Anthropic).",
        )
    ],
    notes="""
        Off by default (`extend-select = ["SK604"]` turns it on): it is authoring advice, not a
        fault any runtime acts on (Claude Code's Read tool returns 2,000 lines at once), and on
        a corpus of 6,700 public skills it was one finding in six (6,262 of 39,087), drowning
        the findings that matter.
    """,
    default_enabled=False,
)
def reference_no_toc(skill: Skill, ctx: Context) -> Iterator[Finding]:
    limit = budget(ctx, "reference-lines")
    if limit is None:
        return
    for entry, text in reference_texts(skill):
        lines = text.split("\n")
        count = count_lines(lines)
        if count > limit and not toc_in(text, lines):
            yield Finding(
                f"{entry.rel} is {count} lines (over {limit}) and has no table of contents;"
                " add a list of links to its sections at the top so a partial read shows what"
                " it covers",
                span=Span(Pos(1, 1), Pos(1, 2)),
                path=entry.path,
            )


@rule(
    "SK605",
    "reference-tokens",
    Severity.WARNING,
    "A reference file is over its token budget (10,000).",
    what="""
        Counts the tokens of each Markdown file of the skill other than SKILL.md.
    """,
    why="""
        A reference file is read into the context when the agent needs it. Claude Code's Read
        tool refuses files over 25,000 tokens in one call (its tokenizer counts more tokens than
        `cl100k_base` for the same text), so the agent pages through a long file or reads only
        part of it. Split large references by topic and link each from SKILL.md.
    """,
    bad="""
        references/api.md: 40,000 tokens covering every endpoint
    """,
    good="""
        references/api-auth.md, references/api-orders.md, references/api-billing.md
    """,
    options=[
        budget_option(
            "reference-tokens",
            REFERENCE_TOKENS,
            "Most tokens in one reference file: Claude Code's Read tool refuses a file over"
            " 25,000 of its own tokens in one call.",
        ),
        TOKENIZER,
    ],
)
def reference_tokens(skill: Skill, ctx: Context) -> Iterator[Finding]:
    limit = budget(ctx, "reference-tokens")
    if limit is None:
        return
    spec = tokenizer_spec(ctx)
    figures = skill.memos.get(FIGURES, spec)
    if figures is not None:
        over = [(ref.rel, ref.path, ref.tokens) for ref in figures.references]
    else:
        tokenizer = tokenizer_for(spec)
        over = [
            (entry.rel, entry.path, _over(tokenizer, text, limit, None))
            for entry, text in reference_texts(skill)
        ]
    for rel, path, count in over:
        if count > limit:
            yield Finding(
                f"{rel} is {count} tokens, over the budget of {limit}"
                f" ({spec}); split it by topic into smaller files linked from"
                " SKILL.md",
                span=Span(Pos(1, 1), Pos(1, 2)),
                path=path,
            )


@rule(
    "SK606",
    "file-too-large",
    Severity.WARNING,
    "A file of the skill is larger than the file size budget (8 MiB).",
    what="""
        Reports each file other than SKILL.md larger than `budgets.file-bytes` (SKILL.md has
        its own budgets and SK116).
    """,
    why="""
        Every install, upload and bundle copies each file of a skill. Files this large are
        usually datasets, media or build output that belong outside the skill (downloaded or
        generated when needed); skillcheck also scans only the first 8 MiB of a file for
        secrets and hidden text.
    """,
    bad="""
        assets/training-data.csv   (250 MB)
    """,
    good="""
        scripts/fetch_data.py      (downloads the data set when the skill needs it)
    """,
    options=[
        budget_option("file-bytes", FILE_BYTES, "Largest size of one file of the skill (8 MiB).")
    ],
)
def file_too_large(skill: Skill, ctx: Context) -> Iterator[Finding]:
    limit = budget(ctx, "file-bytes")
    if limit is None:
        return
    for entry in skill.files:
        if entry.kind == "file" and entry.path != skill.skill_md and entry.size > limit:
            yield Finding(
                f"{entry.rel} is {entry.size:,} bytes ({_size(entry.size)}), over the budget of"
                f" {limit:,} bytes; keep large data outside the skill and fetch or generate it"
                " when needed",
                span=Span(Pos(1, 1), Pos(1, 2)),
                path=entry.path,
            )


@rule(
    "SK607",
    "skill-too-large",
    Severity.WARNING,
    "The skill's files total more than the size budget (30 MB, the Anthropic upload limit).",
    what="""
        Adds up the sizes of the skill's regular files and reports, at SKILL.md, a total over
        `budgets.skill-bytes`, naming the largest files. Directories skillcheck does not look
        into (`.git`, `node_modules`, virtualenvs, `__pycache__`) are not counted; SK703
        reports them.
    """,
    why="""
        claude.ai and the Anthropic Skills API reject a skill upload of 30 MB or more, so for
        the `claude-api` target this is an error; other runtimes load it, but every install
        copies it.
    """,
    bad="""
        assets/demo.mp4        (28 MB)
        assets/screens/*.png   (6 MB)
    """,
    good="""
        assets/screens/*.png   (6 MB)   # the video is linked by URL instead
    """,
    options=[
        budget_option(
            "skill-bytes",
            SKILL_BYTES,
            "Largest total size of the skill's files, in bytes; over 30,000,000 `claude-api`"
            " rejects the upload whatever the budget.",
        )
    ],
)
def skill_too_large(skill: Skill, ctx: Context) -> Iterator[Finding]:
    limit = budget(ctx, "skill-bytes")
    files = [e for e in skill.files if e.kind == "file"]
    total = sum(e.size for e in files)
    rejected = total >= UPLOAD_LIMIT
    if limit is None or (total <= limit and not rejected):
        return
    largest = sorted(files, key=lambda e: (-e.size, e.rel))[:3]
    shown = ", ".join(f"{e.rel} ({_size(e.size)})" for e in largest)
    if rejected:
        head = f"the skill's files total {total:,} bytes ({_size(total)}); claude.ai and the"
        head += " Skills API reject uploads of 30 MB or more"
    else:
        head = f"the skill's files total {total:,} bytes ({_size(total)}), over the budget of"
        head += f" {limit:,} bytes"
    over_budget = Impact(Outcome.OK, Severity.WARNING) if total > limit else None
    yield Finding(
        f"{head}; the largest: {shown}. Move large files out of the skill",
        span=Span(Pos(1, 1), Pos(1, 2)),
        impact=every(over_budget, {"claude-api": Outcome.REJECTED if rejected else over_budget}),
    )


@rule(
    "SK608",
    "collection-catalog-tokens",
    Severity.WARNING,
    "The catalog entries of all linted skills together exceed the collection budget.",
    what="""
        Adds up the catalog tokens (name + description) of every skill linted in the run and
        reports a total over `budgets.collection-catalog-tokens`, at the description of the
        skill with the largest entry. Off unless that budget is set.
    """,
    why="""
        A runtime lists every installed skill in every prompt. A collection meant to be
        installed together has a fixed cost per conversation whatever the task; Claude Code
        budgets its whole skill listing at about 1% of the context window and truncates
        beyond it, so some skills are never seen.
    """,
    bad="""
        120 skills whose descriptions total 14,000 tokens (budget 8,000)
    """,
    good="""
        the same skills with descriptions trimmed to what each does and when to use it
    """,
    options=[
        budget_option(
            "collection-catalog-tokens",
            None,
            "Most tokens in the catalog entries of all linted skills together; the rule does"
            " nothing until it is set.",
        ),
        TOKENIZER,
    ],
    reads=Input.COLLECTION,
    # each skill's catalog tokens are counted while it is checked, once a limit is set
    figures_when=lambda ctx: budget(ctx, "collection-catalog-tokens") is not None,
)
def collection_catalog_tokens(
    skills: list[SkillSummary], ctx: Context
) -> Iterator[tuple[SkillSummary, Finding]]:
    limit = budget(ctx, "collection-catalog-tokens")
    if limit is None:
        return
    spec = tokenizer_spec(ctx)
    counted = []
    for skill in skills:
        if not skill.has_doc or skill.figures is None:
            continue
        count = skill.figures.catalog  # counted when the skill was checked (summary.summarise)
        if count is not None:
            counted.append((count, skill))
    total = sum(count for count, _skill in counted)
    if total <= limit:
        return
    ranked = sorted(counted, key=lambda item: (-item[0], item[1].display_root))
    top_count, top = ranked[0]
    others = ", ".join(f"{s.display_root} ({n})" for n, s in ranked[1:3])
    yield (
        top,
        Finding(
            f"the catalog entries of the {len(counted)} skills total {total} tokens, over the"
            f" collection budget of {limit} ({spec}); this skill's is the largest ({top_count})"
            + (f", then {others}" if others else "")
            + ": shorten the longest descriptions",
            span=top.description_span or Span(Pos(1, 1), Pos(1, 4)),
        ),
    )
