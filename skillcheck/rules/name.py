"""SK2xx: the `name` field."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

from skillcheck.analysis.edits import replace_scalar
from skillcheck.analysis.paths import is_repository_root
from skillcheck.rules.base import (
    Context,
    Option,
    key_span,
    rule,
    usable_frontmatter,
    value_span,
)
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import (
    Finding,
    Fix,
    Frontmatter,
    Impact,
    Node,
    Outcome,
    Severity,
    Skill,
    Span,
)
from skillcheck.targets import TARGETS, Target, impact, impacts, titles

_ASCII_NAME = LazyPattern(r"[a-z0-9-]+")
_BAD_ASCII = LazyPattern(r"[^a-z0-9-]")


def _name(skill: Skill) -> tuple[Frontmatter, Node, str] | None:
    """The frontmatter, the name node and its text, when the name is a usable scalar."""
    fm = usable_frontmatter(skill)
    node = fm.node("name") if fm else None
    if fm is None or node is None:
        return None
    node = node.resolved()
    if node.kind != "scalar" or not node.value.strip():
        return None
    return fm, node, node.value


def _reads_as_text(node: Node, target: Target) -> bool:
    """``name: null`` (or ``~``) is no name to YAML 1.1 loaders but the text "null" to
    strictyaml (skills-ref), which then checks it like any name."""
    return node.tag != "null" or target.all_strings


NAME_CHARSET = Option(
    "name-charset",
    {"enum": ["ascii", "unicode"]},
    "ascii",
    "What `name` may hold for the `agentskills` target: `ascii` (lower-case letters, digits,"
    " hyphens) or `unicode` (the skills-ref rule: NFKC, lower case, `str.isalnum()` or `-`).",
)


def _charset(target: Target, ctx: Context) -> str:
    if target.name == "agentskills" and ctx.value(NAME_CHARSET) == "unicode":
        return "nfkc-alnum"
    return target.name_charset


@rule(
    "SK201",
    "name-missing",
    Severity.ERROR,
    "The frontmatter has no `name`, or it is empty.",
    what="""
        Checks that the frontmatter has a non-empty `name`.
    """,
    why="""
        The specification requires `name`. skills-ref, claude.ai and Cursor reject a skill
        without one and Copilot silently drops it; Claude Code, Codex and OpenSkills fall back
        to the directory name.
    """,
    bad="""
        ---
        description: Extracts text from PDF files.
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        ---
    """,
)
def name_missing(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    if fm is None:
        return
    node = fm.node("name")
    select = {t.name: t.bad_name if t.name_required else None for t in TARGETS.values()}
    select = {
        k: (v if v is not Outcome.OK else Outcome.REJECTED)
        for k, v in select.items()
        if v is not None
    }
    hint = f"add 'name: {skill.dir_name}'"
    if node is None:
        yield Finding(
            f"the frontmatter has no 'name'; {hint}",
            span=Span(described.span.start, described.span.end)
            if (described := fm.key("description"))
            else key_span(fm, "name"),
            impact=impacts(select),
        )
        return
    node = node.resolved()
    if node.kind == "scalar" and node.tag == "null" and node.value.strip():
        select = {k: v for k, v in select.items() if not _reads_as_text(node, TARGETS[k])}
    if select and node.kind == "scalar" and (node.tag == "null" or not node.value.strip()):
        yield Finding(f"'name' is empty; {hint}", span=key_span(fm, "name"), impact=impacts(select))


@rule(
    "SK202",
    "name-not-string",
    Severity.ERROR,
    "`name` is a list or a mapping, not a string.",
    what="""
        Checks that `name` is a single scalar value.
    """,
    why="""
        Every loader expects the name as text; a list or mapping is rejected by skills-ref,
        claude.ai and Codex.
    """,
    bad="""
        ---
        name: [pdf-tools]
        ---
    """,
    good="""
        ---
        name: pdf-tools
        ---
    """,
)
def name_not_string(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    node = fm.node("name") if fm else None
    if node is None or node.resolved().kind == "scalar":
        return
    yield Finding(
        f"'name' is a {node.resolved().kind}; write it as one plain value such as"
        f" 'name: {skill.dir_name}'",
        span=node.span,
        impact=impacts(
            {t.name: Outcome.REJECTED for t in TARGETS.values() if t.name not in ("openskills",)}
        ),
    )


@rule(
    "SK203",
    "name-too-long",
    Severity.ERROR,
    "`name` is longer than 64 characters.",
    what="""
        Checks that `name` has at most 64 characters (after NFKC normalisation for skills-ref).
    """,
    why="""
        The specification limits names to 64 characters; skills-ref, claude.ai, Codex and
        Copilot enforce it.
    """,
    bad="""
        name: extract-text-tables-images-and-form-fields-from-pdf-documents-quickly
    """,
    good="""
        name: pdf-extraction
    """,
)
def name_too_long(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _name(skill)
    if found is None:
        return
    _fm, node, value = found
    select: dict[str, Outcome | Impact] = {}
    for t in TARGETS.values():
        if t.name_max is None or not _reads_as_text(node, t):
            continue
        text = unicodedata.normalize("NFKC", value.strip()) if t.all_strings else value.strip()
        if t.name == "codex":
            text = " ".join(value.split())
        if len(text) > t.name_max:
            select[t.name] = t.bad_name if t.bad_name is not Outcome.OK else Outcome.REJECTED
    if "agentskills" in select:  # the client guide says warn and load; the spec says must
        select["agentskills"] = Impact(Outcome.DEGRADED, Severity.ERROR)
    if select:
        yield Finding(
            f"name {value.strip()[:30]!r}... is {len(value.strip())} characters; the limit is 64",
            span=value_span(node),
            impact=impacts(select),
        )


_LOOSE_NAME = LazyPattern(r"[A-Za-z0-9][A-Za-z0-9_.: -]*")


def _charset_problem(value: str, charset: str) -> str | None:
    """What is wrong with the characters of ``value`` under a charset rule, or None."""
    if charset == "ascii":
        if _ASCII_NAME.fullmatch(value):
            return None
        bad = sorted(set(_BAD_ASCII.findall(value)))
        upper = [c for c in bad if "A" <= c <= "Z"]
        others = [repr(c) for c in bad if c not in upper]
        parts = (["upper-case letters"] if upper else []) + others[:5]
        return "contains " + (" and ".join(parts) if len(parts) <= 2 else ", ".join(parts))
    if charset == "ascii-loose":  # Copilot CLI: letters of either case, `_ . :` and spaces
        if _LOOSE_NAME.fullmatch(value):
            return "contains spaces" if " " in value else None
        bad = sorted({c for c in value if not (c.isascii() and (c.isalnum() or c in "-_.: "))})
        if value[:1] and not (value[0].isascii() and value[0].isalnum()):
            return f"starts with {value[0]!r}"
        return "contains " + ", ".join(repr(c) for c in bad[:5])
    if charset == "nfkc-alnum":
        norm = unicodedata.normalize("NFKC", value.strip())
        if norm != norm.lower():
            return "contains upper-case letters"
        bad = sorted({c for c in norm if not (c.isalnum() or c == "-")})
        if bad:
            return "contains " + ", ".join(repr(c) for c in bad[:5])
    return None


def _rename(skill: Skill, node: Node, new: str) -> Fix | None:
    """The exact edit of `name` to ``new``, offered in the editor (a rename changes what
    the skill is called, so --fix never makes it); only a name every loader accepts."""
    if skill.doc is None or not _VALID_NAME.fullmatch(new) or len(new) > 64:
        return None
    return replace_scalar(skill.doc, "name", node, new, f"rename the skill to {new!r}")


_VALID_NAME = LazyPattern(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@rule(
    "SK204",
    "name-charset",
    Severity.ERROR,
    "`name` has characters other than lower-case letters, digits and hyphens.",
    what="""
        Checks the characters of `name`: by default lower-case ASCII letters, digits and
        hyphens (`[a-z0-9-]`). With `name-charset = "unicode"` the `agentskills` target
        follows skills-ref instead: any lower-case Unicode letter or digit after NFKC.
    """,
    why="""
        VS Code/Copilot silently drops a skill whose name contains `.`, `/`, `:`, spaces or
        capitals; claude.ai accepts only `^[a-z0-9-]+$`; skills-ref accepts lower-case Unicode
        letters. Portable names are lower-case ASCII.
    """,
    bad="""
        name: PDF.Tools
    """,
    good="""
        name: pdf-tools
    """,
    options=[NAME_CHARSET],
)
def name_charset(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _name(skill)
    if found is None:
        return
    _fm, node, value = found
    select: dict[str, Outcome] = {}
    problems: dict[str, str] = {}
    for t in TARGETS.values():
        charset = _charset(t, ctx)
        if t.name_display_dropped is not None and _reads_as_text(node, t):
            if any(c.isspace() or c == "/" for c in value.strip()):
                # Claude Code lists the skill under its folder's name instead (2.1.332, run)
                select[t.name] = t.name_display_dropped
                problems[t.name] = f"contains a space or '/', so {t.title} shows the folder's name"
            continue
        if charset == "none" or not _reads_as_text(node, t):
            continue
        text = value.strip() if charset == "nfkc-alnum" else value
        problem = _charset_problem(text, charset)
        if problem == "contains spaces" and charset == "ascii-loose":
            # the Copilot CLI loads it, listed with hyphens for the spaces (1.0.102, run)
            select[t.name] = Outcome.DEGRADED
            problems[t.name] = "contains spaces, which the Copilot CLI lists as hyphens"
        elif problem:
            select[t.name] = t.bad_name if t.bad_name is not Outcome.OK else Outcome.REJECTED
            problems[t.name] = problem
    if not select:
        return
    active = [t for t in ctx.targets if t in select]
    problem = problems[active[0]] if active else next(iter(problems.values()))
    dropped = [t for t in active if select[t] is Outcome.DROPPED]
    message = f"name {value!r} {problem}; use lower-case letters, digits and hyphens"
    if dropped:
        message += f" ({titles(dropped)} silently drops the skill)"
    suggestion = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]+", "-", value.lower())).strip("-")
    yield Finding(
        message,
        span=value_span(node),
        impact=impacts(select),
        help=f"name: {suggestion}" if suggestion else None,
        suggestion=_rename(skill, node, suggestion),
    )


@rule(
    "SK205",
    "name-hyphens",
    Severity.ERROR,
    "`name` starts or ends with a hyphen, or has `--`.",
    what="""
        Checks that `name` does not start or end with `-` and has no consecutive hyphens.
    """,
    why="""
        The specification forbids leading, trailing and doubled hyphens; skills-ref, claude.ai
        and Copilot enforce it.
    """,
    bad="""
        name: -pdf--tools-
    """,
    good="""
        name: pdf-tools
    """,
)
def name_hyphens(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _name(skill)
    if found is None:
        return
    _fm, node, value = found
    text = value.strip()
    problems: list[str] = []
    select = {}
    for t in TARGETS.values():
        # the loose charset (Copilot CLI) allows `--` and a trailing hyphen; SK204 reports a
        # leading one
        if t.name_charset in ("none", "ascii-loose") or not _reads_as_text(node, t):
            continue
        # skills-ref checks after NFKC, which turns a full-width '－' into '-'
        seen = unicodedata.normalize("NFKC", text) if t.all_strings else text
        found_here = []
        if seen.startswith("-") or seen.endswith("-"):
            found_here.append("starts or ends with a hyphen")
        if "--" in seen:
            found_here.append("contains '--'")
        if found_here:
            select[t.name] = t.bad_name if t.bad_name is not Outcome.OK else Outcome.REJECTED
            problems = problems or found_here
    if not select:
        return
    if not (text.startswith("-") or text.endswith("-") or "--" in text):
        problems = [p + " after NFKC normalisation" for p in problems]  # e.g. '－' is '-'
    yield Finding(
        f"name {value!r} {' and '.join(problems)}; use single hyphens between words",
        span=value_span(node),
        impact=impacts(select),
        help="name: " + re.sub(r"-{2,}", "-", text).strip("-"),
    )


@rule(
    "SK206",
    "name-directory-mismatch",
    Severity.ERROR,
    "`name` differs from the skill's directory name.",
    what="""
        Checks that `name` equals the name of the directory that holds SKILL.md (the directory
        as found, so a symlinked skill directory is compared by the link's name; NFKC for
        skills-ref). A skill at the root of a repository (its folder holds `.git`) is
        installed into a folder that the installer names, not the checkout's: the `skills`
        CLI names it after `name` and READMEs clone it into `skills/<name>`. There the rule
        says what is true, as an info: the folder it is installed into must be named `name`.
    """,
    why="""
        The commonest hard error in public skills (~10%). The specification requires the match;
        skills-ref and claude.ai reject a mismatch, Copilot silently fails to load the skill,
        and runtimes that key skills by directory (Claude Code's slash command, OpenSkills)
        show a different name from the one the description promises.
    """,
    bad="""
        skills/pdf/SKILL.md:
          name: pdf-tools
    """,
    good="""
        skills/pdf-tools/SKILL.md:
          name: pdf-tools
    """,
)
def name_directory_mismatch(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _name(skill)
    if found is None:
        return
    _fm, node, value = found
    directory = skill.dir_name
    select: dict[str, Impact] = {}
    for t in TARGETS.values():
        if t.name_dir_mismatch is Outcome.OK or not _reads_as_text(node, t):
            continue
        if t.all_strings:
            same = unicodedata.normalize("NFKC", directory) == unicodedata.normalize(
                "NFKC", value.strip()
            )
        else:
            same = directory == value.strip()
        if not same:
            # the spec says the name *must* match: an error even where loaders only warn
            select[t.name] = Impact(t.name_dir_mismatch, Severity.ERROR)
    if not select:
        return
    if is_repository_root(skill.root):
        # the checkout's folder name is whoever cloned it: installers name the folder
        # themselves (`npx skills add` after `name`, READMEs clone into skills/<name>)
        yield Finding(
            f"SKILL.md is at the root of a repository, whose folder here is {directory!r}:"
            f" wherever it is installed, the folder must be named {value.strip()!r} (the"
            " `skills` CLI names it so; say so where the README tells how to clone it)",
            span=value_span(node),
            severity=Severity.INFO,
        )
        return
    yield Finding(
        f"name {value.strip()!r} does not match the directory name {directory!r}; rename one"
        " to match the other",
        span=value_span(node),
        impact=impacts(select),
        help=f"name: {directory}",
        suggestion=_rename(skill, node, directory),
    )


def _without_word(value: str, index: int, length: int) -> str:
    """The advice for a name holding a reserved word: the name without it, when that leaves
    a name; otherwise a request for a new one."""
    rest = "-".join(part for part in (value[:index] + value[index + length :]).split("-") if part)
    return f"rename it, e.g. {rest!r}" if rest else "choose another name"


@rule(
    "SK207",
    "name-reserved",
    Severity.ERROR,
    "`name` uses a word or folder name a runtime reserves.",
    what="""
        Reports names containing the reserved words `anthropic` or `claude` (claude.ai and the
        Skills API), skill directories named `synced`, which Claude Code reserves, and skill
        directories whose name starts with `.`, which the scans of Codex, the Copilot CLI
        and OpenClaw skip (Claude Code, OpenSkills and the skills CLI load them).
    """,
    why="""
        claude.ai rejects uploads whose name contains a reserved word; Claude Code uses the
        `synced` folder for its own skills; Codex, the Copilot CLI and OpenClaw silently skip
        every directory named `.*` (observed by running them, bench/runtimes).
    """,
    bad="""
        name: claude-pdf-helper
    """,
    good="""
        name: pdf-helper
    """,
)
def name_reserved(skill: Skill, ctx: Context) -> Iterator[Finding]:
    found = _name(skill)
    if found is not None:
        _fm, node, value = found
        for t in TARGETS.values():
            if not _reads_as_text(node, t):
                continue
            for word in t.reserved_words:
                index = value.lower().find(word)
                if index >= 0:
                    yield Finding(
                        f"name {value!r} contains the reserved word {word!r}; {t.title} rejects"
                        f" it: {_without_word(value, index, len(word))}, and rename the"
                        " directory to match",
                        span=value_span(node, index, len(word)),
                        impact={t.name: impact(Outcome.REJECTED)},
                    )
                    break
    fm = usable_frontmatter(skill)
    where_ = value_span(found[1]) if found else key_span(fm, "name") if fm else Span.at(1, 1)
    if skill.dir_name == "synced":
        yield Finding(
            "the directory name 'synced' is reserved by Claude Code; rename the skill",
            span=where_,
            impact={"claude-code": Impact(Outcome.DROPPED, Severity.ERROR)},
        )
    if skill.dir_name.startswith("."):  # scans that skip every entry named '.*'
        skippers = [t for t in TARGETS.values() if t.hidden_folder is not Outcome.OK]
        yield Finding(
            f"the directory name {skill.dir_name!r} starts with '.';"
            f" {titles([t.name for t in skippers])} skip such directories and never load the"
            " skill, rename it",
            span=where_,
            impact={t.name: Impact(t.hidden_folder, Severity.ERROR) for t in skippers},
        )
