"""SK3xx: the `description` field."""

from __future__ import annotations

import re
from collections.abc import Iterator

from skillcheck.analysis.edits import Values, line_text, proven_fix, raw_matches, span_offsets
from skillcheck.rules.base import (
    Context,
    budget,
    budget_option,
    key_span,
    rule,
    usable_frontmatter,
    value_span,
)
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import (
    Document,
    Finding,
    Fix,
    Frontmatter,
    Impact,
    Node,
    Outcome,
    Pos,
    Severity,
    Skill,
    Span,
)
from skillcheck.targets import TARGETS, impact, impacts, titles, where

DEFAULT_MIN_CHARS = 40
# what one character counts toward DEFAULT_MIN_CHARS: Chinese and Japanese write a word in
# one or two characters, Korean in two or three syllables, English in about five letters
CJK_WEIGHT = 3
HANGUL_WEIGHT = 2


def _description(skill: Skill) -> tuple[Frontmatter, Node, str] | None:
    """The frontmatter, the description node and its text, when it is a non-empty scalar."""
    fm = usable_frontmatter(skill)
    node = fm.node("description") if fm else None
    if fm is None or node is None:
        return None
    node = node.resolved()
    if node.kind != "scalar" or node.tag == "null" or not node.value.strip():
        return None
    return fm, node, node.value


def _required(outcome_for_optional: Outcome | None = None) -> dict[str, Impact]:
    select: dict[str, Outcome | None] = {}
    for t in TARGETS.values():
        if t.description_required:
            select[t.name] = Outcome.DROPPED if t.bad_name is Outcome.DROPPED else Outcome.REJECTED
        else:
            select[t.name] = outcome_for_optional
    return impacts(select)


@rule(
    "SK301",
    "description-missing",
    Severity.ERROR,
    "The frontmatter has no `description`.",
    what="""
        Checks that the frontmatter has a `description` key.
    """,
    why="""
        The description is the only text an agent sees before choosing a skill. The spec
        requires it; the client guide says to skip a skill without one; skills-ref, claude.ai
        and Codex reject it and Copilot drops it. Claude Code falls back to the first paragraph
        of the body.
    """,
    bad="""
        ---
        name: pdf-tools
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text and tables from PDF files. Use when the user asks about PDFs.
        ---
    """,
)
def description_missing(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    if fm is None or fm.node("description") is not None:
        return
    # a near-miss key (descripton:) is reported by SK108 with the suggestion
    yield Finding(
        "the frontmatter has no 'description'; say what the skill does and when to use it",
        span=key_span(fm, "name") if fm.key("name") else key_span(fm, "description"),
        impact=_required(Outcome.DEGRADED),
    )


@rule(
    "SK302",
    "description-empty",
    Severity.ERROR,
    "`description` is empty or null.",
    what="""
        Checks that `description` has some non-blank text.
    """,
    why="""
        An empty description is a missing description to every loader, and skills-ref says so
        ("Field 'description' must be a non-empty string").
    """,
    bad="""
        description: ""
    """,
    good="""
        description: Extracts text from PDF files. Use when the user asks about PDFs.
    """,
)
def description_empty(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    node = fm.node("description") if fm else None
    if fm is None or node is None:
        return
    node = node.resolved()
    if node.kind == "scalar" and (node.tag == "null" or not node.value.strip()):
        select = _required(Outcome.DEGRADED)
        if node.value.strip():  # `null` / `~`: the text "null" to strictyaml (skills-ref)
            select = {k: v for k, v in select.items() if not TARGETS[k].all_strings}
        yield Finding(
            "'description' is empty; say what the skill does and when to use it",
            span=key_span(fm, "description"),
            impact=select,
        )


@rule(
    "SK303",
    "description-too-long",
    Severity.ERROR,
    "`description` is longer than 1024 characters.",
    what="""
        Checks the description's length against each target's limit, measured the way that
        target measures: skills-ref counts the unstripped value, claude.ai the stripped value,
        Codex the value with whitespace runs collapsed.
    """,
    why="""
        The specification caps descriptions at 1024 characters and skills-ref, claude.ai, Codex
        and Copilot enforce it. Every description is always in the prompt; long ones crowd out
        the others.
    """,
    bad="""
        description: (1,300 characters of text)
    """,
    good="""
        description: Extracts text and tables from PDF files. Use when the user asks about PDFs.
        (the rest moves into the body)
    """,
)
def description_too_long(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _description(skill)
    if found is None:
        return
    _fm, node, value = found
    select = {}
    for t in TARGETS.values():
        if t.description_max is None:
            continue
        if t.all_strings:
            length = len(value)  # skills-ref measures the value before stripping
        elif t.name == "codex":
            length = len(" ".join(value.split()))
        else:
            length = len(value.strip())
        if length > t.description_max:
            select[t.name] = Outcome.REJECTED
    if select:
        yield Finding(
            f"the description is {len(value.strip())} characters; the limit is 1024. Keep what"
            " decides when to use the skill and move the rest into the body",
            span=node.span,
            impact=impacts(select),
        )


_TAG = LazyPattern(r"</?[A-Za-z][^<>]*>|[<>]")


@rule(
    "SK304",
    "description-angle-brackets",
    Severity.WARNING,
    "`description` contains `<` or `>` (XML-like text).",
    what="""
        Reports `<` and `>` in the description, such as `<file>` placeholders or XML tags.
    """,
    why="""
        claude.ai and the Skills API reject a description with angle brackets. The description
        is pasted into the `<available_skills>` block of the prompt; OpenSkills writes it into
        AGENTS.md unescaped, where a tag can close or forge prompt structure.
    """,
    bad="""
        description: Converts <input> files to PDF.
    """,
    good="""
        description: Converts input files (DOCX, HTML) to PDF.
    """,
)
def description_angle_brackets(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _description(skill)
    if found is None:
        return
    _fm, node, value = found
    match = _TAG.search(value)
    if match is None:
        return
    select = where(lambda t: t.angle_brackets if t.angle_brackets is not Outcome.OK else None)
    select["agentskills"] = Impact(Outcome.OK, Severity.WARNING)
    yield Finding(
        f"the description contains {match.group()!r}; claude.ai rejects '<' and '>', reword"
        " without them",
        span=value_span(node, match.start(), len(match.group())),
        impact=select,
    )


# not "I/O", "I/O-bound", "TCP/IP" or "us.anthropic.claude-…" (a slash or a dotted name)
_FIRST = LazyPattern(r"(?<![/.])\b(I|I'm|I'll|I've|me|my|we|we'll|our|us)\b(?![/.]\w)")
_SECOND = LazyPattern(r"(?<![/.])\b(you|your|you're|you'll)\b(?![/.]\w)", re.IGNORECASE)
# "Use when you need…", "if your build fails": a trigger clause speaks of the user, which is
# what the description should say; it runs to the end of its sentence
_TRIGGER_CLAUSE = LazyPattern(
    r"\b(?:when|whenever|if|once|before|after|while|unless|until)\b[^.;!?]*", re.IGNORECASE
)
# Quoted phrases are what a user says ("tailor my resume", 'how do I set this up'): the
# description quotes them as triggers, in the user's own first or second person. A single
# quote opens only after a space or bracket and closes before one, so "user's" is no quote;
# an apostrophe between letters inside it ('I'm on Linux') does not close it. A quote does not
# hold its own opening mark: each opening mark is then tried to the next one at most, not to
# the end of its line (a line of unclosed quotes took quadratic time).
_QUOTED = LazyPattern(
    r"\"[^\"\n]*\"|“[^“”\n]*”|‘[^‘’\n]*’|«[^«»\n]*»|「[^「」\n]*」"
    r"|(?:(?<=[\s(\[:,])|^)'(?:[^'\n]|(?<=\w)'(?=\w))*'(?=[\s.,;:!?)\]]|$)"
)


# a labelled list of what users say ("USE FOR: add telemetry to my app, ...", "Triggers:
# ..."), quoted or not, runs to the end of its line: the user's words, not the description's
_TRIGGER_LIST = LazyPattern(
    r"\b(?:(?:do not|don't) )?(?:use (?:it |this (?:skill )?)?for|triggers?(?: phrases)?"
    r"|trigger words|keywords)\s*:[^\n]*",
    re.IGNORECASE,
)


def _unquoted(value: str) -> str:
    """``value`` with quoted phrases and labelled trigger lists blanked out (same length:
    offsets stay valid)."""
    chars = list(value)
    for match in _QUOTED.finditer(value):
        end = match.end()
        # `"critically review" my code`: the user's words go on after the quote
        tail = _SPOKEN_TAIL.match(value, end)
        if tail is not None:
            end = tail.end()
        chars[match.start() : end] = " " * (end - match.start())
    blank = "".join(chars)
    return _TRIGGER_LIST.sub(lambda m: " " * len(m.group()), blank)


# after a quoted phrase, the rest of the user's sentence in the first person, up to the next
# punctuation or quote (`"critically review" my code`, `'fix' our tests`)
_SPOKEN_TAIL = LazyPattern(r"[ \t]+(?:my|me|mine|our|us|I)\b[^.,;:!?\"“”‘’«»\n]*")


@rule(
    "SK305",
    "description-person",
    Severity.WARNING,
    "`description` speaks in the first or second person.",
    what="""
        Reports descriptions written as "I can help…", "We…", "You can use this…".
        Quoted phrases are skipped: a description that quotes what a user says
        (`Use when the user says "tailor my resume"`) is still in the third person; in
        single quotes an apostrophe between letters (`'I'm on Linux and need a device'`)
        belongs to the phrase, and first-person words right after a quote continue it,
        up to the next punctuation (`Use when the user says "critically review" my code`).
        So are
        words beside a slash or in a dotted name (`I/O`, `us.anthropic.claude-…`), and
        "you" in a trigger clause (`Use when you need…`, `if your build fails`), which
        speaks of the user as a trigger should, and a labelled list of what users say, to
        the end of its line (`USE FOR: add telemetry to my app`, `DO NOT USE FOR: ...`,
        `Triggers: ...`).
    """,
    why="""
        The description is injected into the system prompt, where "I" and "you" confuse who is
        speaking. Anthropic requires the third person ("Processes Excel files…"); agentskills.io
        recommends the imperative ("Use this skill when…"); both reject "I" and "you can".
    """,
    bad="""
        description: I can help you fill in PDF forms.
    """,
    good="""
        description: Fills in PDF forms. Use when the user needs to complete a PDF form.
    """,
)
def description_person(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _description(skill)
    if found is None:
        return
    _fm, node, value = found
    text = _unquoted(value)
    outside_triggers = _TRIGGER_CLAUSE.sub(lambda m: " " * len(m.group()), text)
    for pattern, person, searched in (
        (_FIRST, "first", text),
        (_SECOND, "second", outside_triggers),
    ):
        match = pattern.search(searched)
        if match:
            yield Finding(
                f"the description uses the {person} person ({match.group()!r}); describe the"
                " skill in the third person: 'Extracts…. Use when…'",
                span=value_span(node, match.start(), len(match.group())),
            )
            return


_TRIGGER = LazyPattern(
    r"\b(when|whenever|if the user|if you|if asked|use (it |this )?(for|to|on|with|in)|"
    r"for (tasks|requests|questions|work)|triggers?|invoke|asks?|requests?|needs?)\b"
    # Chinese: 当…时 / 在…时使用 (when), 使用场景 / 适用场景 / 适用于 (use cases, applies
    # to), 用于 (used for), 如果 (if), 触发 (trigger); Japanese: …場合 / …とき / …時に / …際に
    # (when), 使用して / 使います (use), トリガー; Korean: …때 (when), …경우 (in case)
    r"|当|时使用|時使用|使用场景|使用場景|适用|適用|用于|用於|如果|触发|觸發"
    r"|場合|とき|時に|際に|使用して|使います|トリガー|때|경우"
    # "when" in Spanish, Portuguese, French, German, Italian, Russian
    r"|\b(?:cuando|quando|lorsque|quand|wenn|sobald|когда)\b",
    re.IGNORECASE,
)


@rule(
    "SK306",
    "description-no-trigger",
    Severity.INFO,
    "`description` does not say when to use the skill.",
    what="""
        Looks for a clause that says when the skill applies ("Use when…", "when the user
        asks…", "for requests about…"), in English, Chinese ("当用户…时使用", "使用场景",
        "适用于"), Japanese ("…場合に使用", "…ときに"), Korean ("…할 때", "…경우") or the
        word "when" in Spanish, Portuguese, French, German, Italian or Russian.
    """,
    why="""
        Agents choose skills from descriptions alone. The specification says a description
        covers what the skill does *and when to use it*; Anthropic and the client guide agree
        a "when" clause with keywords is what makes a skill trigger.
    """,
    bad="""
        description: Extracts text and tables from PDF files.
    """,
    good="""
        description: Extracts text and tables from PDF files. Use when the user mentions PDFs,
          forms or document extraction.
    """,
)
def description_no_trigger(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _description(skill)
    if found is None:
        return
    fm, node, value = found
    if _TRIGGER.search(value):
        return
    when = fm.values.get("when_to_use")
    if (
        isinstance(when, str)
        and when.strip()
        and all("when_to_use" in TARGETS[t].known_fields for t in ctx.targets)
    ):
        return  # every active runtime reads the trigger from `when_to_use` (Claude Code)
    yield Finding(
        "the description does not say when to use the skill; add 'Use when …' with the words"
        " a user would say",
        span=node.span,
    )


def _weighted_length(text: str) -> int:
    """Length in Latin-letter equivalents: a Han or kana character carries about a word
    (three), a Hangul syllable about half of one (two); everything else counts one."""
    total = 0
    for ch in text:
        code = ord(ch)
        if 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x3040 <= code <= 0x30FF:
            total += CJK_WEIGHT
        elif 0xAC00 <= code <= 0xD7AF:
            total += HANGUL_WEIGHT
        else:
            total += 1
    return total


@rule(
    "SK307",
    "description-too-short",
    Severity.WARNING,
    "`description` is too short to choose the skill by.",
    what="""
        Reports descriptions shorter than 40 characters (configurable). Chinese and Japanese
        characters count three each and Hangul syllables two, since they carry about a
        word (or half of one) where English needs several letters:
        `提取PDF文本。当用户询问PDF时使用。` (20 characters) is long enough, `PDF工具` is not.
    """,
    why="""
        A two-word description ("PDF helper") gives the agent nothing to match a request
        against, so the skill is never chosen, or chosen for the wrong task. Good descriptions
        run from about 50 to 500 characters.
    """,
    bad="""
        description: PDF helper
    """,
    good="""
        description: Extracts text and tables from PDF files. Use when the user asks about PDFs.
    """,
    options=[
        budget_option(
            "description-min-chars",
            DEFAULT_MIN_CHARS,
            "The shortest accepted description, in characters (a Chinese or Japanese"
            " character counts for more).",
            minimum=0,
        )
    ],
)
def description_too_short(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _description(skill)
    if found is None:
        return
    _fm, node, value = found
    minimum = budget(ctx, "description-min-chars") or 0
    text = value.strip()
    length = len(text)
    if length >= minimum:
        return
    weighted = _weighted_length(text) if not text.isascii() else length
    if weighted >= minimum:
        return
    plural = "s" * (length != 1)
    counted = "" if weighted == length else f" (worth {weighted} Latin letters)"
    yield Finding(
        f"the description is {length} character{plural}{counted}; say what the skill"
        f" does and when to use it in at least {minimum}",
        span=value_span(node),
    )


@rule(
    "SK308",
    "description-listing-truncated",
    Severity.WARNING,
    "`description` plus `when_to_use` exceeds Claude Code's 1,536-character listing.",
    what="""
        For Claude Code, adds the lengths of `description` and `when_to_use` and reports when
        the sum exceeds 1,536 characters.
    """,
    why="""
        Claude Code truncates the pair at 1,536 characters in the skill listing the model sees,
        so whatever comes last (usually the trigger keywords) is cut.
    """,
    bad="""
        description: (1,200 characters)
        when_to_use: (600 characters)
    """,
    good="""
        description: (400 characters)
        when_to_use: (300 characters)
    """,
)
def description_listing_truncated(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _description(skill)
    if found is None:
        return
    fm, node, value = found
    extra = fm.values.get("when_to_use")
    total = len(value) + (len(extra) if isinstance(extra, str) else 0)
    for t in TARGETS.values():
        if t.listing_max is not None and total > t.listing_max:
            yield Finding(
                f"description and when_to_use total {total} characters; {t.title} cuts the"
                f" listing at {t.listing_max}, so the end is lost",
                span=node.span,
                impact={t.name: impact(Outcome.DEGRADED)},
            )


@rule(
    "SK309",
    "description-whitespace",
    Severity.WARNING,
    "`description` spans several lines or has leading/trailing whitespace.",
    what="""
        Reports a description whose value (after YAML parsing) contains line breaks, as a `|`
        block scalar gives, or starts or ends with whitespace. A one-paragraph `>` (or `|`)
        block whose only fault is the line break YAML keeps at its end is told to use `>-`
        (the strip indicator), which the fix writes.
    """,
    why="""
        Codex and Claude Code list the value on one line, skills-ref counts the unstripped
        length against the 1024 limit, claude.ai strips it, and the catalog block shows the
        raw breaks: the same description reads differently in each runtime.
    """,
    bad="""
        description: |
          Extracts text from PDF files.
          Use when the user asks about PDFs.
    """,
    good="""
        description: Extracts text from PDF files. Use when the user asks about PDFs.
    """,
    fixable=True,
)
def description_whitespace(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _description(skill)
    if found is None:
        return
    _fm, node, value = found
    if "\n" in value.strip():
        lines = value.strip().count("\n") + 1
        joining = [t.name for t in TARGETS.values() if t.joins_description_lines]
        select = impacts(dict.fromkeys(joining, Outcome.DEGRADED))
        select["agentskills"] = impact(Outcome.OK, Severity.WARNING)
        yield Finding(
            f"the description has {lines} lines; {titles(joining)} join them and the catalog"
            " shows the breaks, write one paragraph on one line (or use '>-')",
            span=node.span,
            impact=select,
        )
    elif value != value.strip():
        if node.style in (">", "|") and value == value.strip() + "\n":
            # a clipped block scalar keeps its final line break: the "strip" indicator drops it
            message = (
                f"the '{node.style}' block keeps a line break at the end of the description;"
                f" write '{node.style}-' instead of '{node.style}' to strip it"
            )
        else:
            message = "the description has leading or trailing whitespace; remove it"
        yield Finding(
            message,
            span=node.span,
            impact={
                "agentskills": impact(Outcome.OK, Severity.WARNING),
                "skills-ref": impact(Outcome.OK, Severity.WARNING),
            },
            fix=strip_description(skill.doc, node),
        )


@rule(
    "SK310",
    "description-not-string",
    Severity.ERROR,
    "`description` is a list or a mapping, not text.",
    what="""
        Checks that `description` is a single scalar value.
    """,
    why="""
        A list or mapping is not a description to any loader: skills-ref, claude.ai and Codex
        reject it, others show Python or JSON syntax to the agent.
    """,
    bad="""
        description:
          - Extracts text
          - Fills forms
    """,
    good="""
        description: Extracts text and fills forms in PDF files.
    """,
)
def description_not_string(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    node = fm.node("description") if fm else None
    if node is None or node.resolved().kind == "scalar":
        return
    select = _required(Outcome.DEGRADED)
    # loaders that type-check the value refuse it ("Skill description must be a string")
    select |= where(lambda t: Outcome.REJECTED if "description" in t.string_fields else None)
    select |= where(lambda t: Outcome.DEGRADED if t.coerce_description else None)
    yield Finding(
        f"'description' is a {node.resolved().kind}; write it as one line of text",
        span=node.span,
        impact=select,
    )


# --- the fix of SK309 (applied by fix.py) -----------------------------------------------


# a block scalar header: indicator, then indentation digit and chomping in either order
_BLOCK_HEADER = LazyPattern(r"([|>])(?:([1-9])([+-])?|([+-])([1-9])?)?")


def strip_description(doc: Document | None, node: Node) -> Fix | None:
    """SK309: remove leading/trailing whitespace from a quoted or block-scalar description."""
    if (
        doc is None
        or node.kind != "scalar"
        or node.anchor
        or node.explicit_tag
        or not isinstance(node.value, str)
    ):
        return None
    target = node.value.strip()
    if not target or target == node.value:
        return None

    def expect(values: Values) -> Values:
        values["description"] = target
        return values

    if node.style in ("'", '"'):
        text = line_text(doc, node.span)
        offsets = span_offsets(doc, node.span)
        if text is None or offsets is None or len(text) < 2 or not raw_matches(doc, *offsets, text):
            return None
        quote, inner = text[0], text[1:-1]
        if text[-1] != quote:
            return None
        replacement = (quote + inner.strip(" \t") + quote).encode("utf-8")
    elif node.style in ("|", ">"):
        # a clipped or kept block scalar ends with a line break: the '-' indicator strips it
        line = doc.lines[node.span.start.line - 1] if node.span.start.line <= len(doc.lines) else ""
        header = _BLOCK_HEADER.match(line, node.span.start.column - 1)
        if header is None or "-" in header.group(0):
            return None
        old = header.group(0)
        new = header.group(1) + (header.group(2) or header.group(5) or "") + "-"
        span = Span(node.span.start, Pos(node.span.start.line, node.span.start.column + len(old)))
        offsets = span_offsets(doc, span)
        if offsets is None or not raw_matches(doc, *offsets, old):
            return None
        replacement = new.encode("utf-8")
    else:
        return None
    return proven_fix(
        doc, *offsets, replacement, "remove whitespace around the description", expect
    )
