"""SK1xx: the file and its frontmatter structure."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from skillcheck.analysis.edits import proven_fix, raw_matches, span_offsets
from skillcheck.analysis.fragments import fragment_evidence
from skillcheck.analysis.links import doc_text, documents
from skillcheck.rules.base import (
    Context,
    Input,
    SuppressionComment,
    first_line_span,
    rule,
)
from skillcheck.source.discover import Discovery
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.markdown import MAX_PARSE_CHARS, truncate_lines
from skillcheck.source.skill import (
    Document,
    Finding,
    Fix,
    Impact,
    Node,
    Outcome,
    Pos,
    Severity,
    Skill,
    SkillSummary,
    Span,
)
from skillcheck.source.text import lf_lines
from skillcheck.targets import TARGETS, Target, every, impact, titles, where


@rule(
    "SK100",
    "path-not-checked",
    Severity.ERROR,
    "A path could not be searched for skills.",
    what="""
        Reports directories the search for skills, or the listing of a skill's files, could
        not read (permissions, a directory that vanished during the run), dangling or looping
        symlinks given as PATH, a directory PATH under which no skill is found, and trees
        deeper or larger than the search bounds (never searched, so never a pass). A file
        PATH that belongs to no skill (pre-commit passes every changed file) is ignored, not
        reported.
    """,
    why="""
        A directory skillcheck cannot read may hold skills that were never checked; a green run
        would then be a false pass. Runtimes that can read it will load those skills unchecked.
        A directory PATH with no skill in it is a wrong path (a CI job pointed at the wrong
        folder, a skill whose `SKILL.md` was renamed): `skills-ref validate` fails it too. It
        is a finding (exit 1), not a usage error (exit 2), so the other PATHs of the run are
        still checked and reported in every output format.
    """,
    bad="""
        $ chmod 000 skills/private
        $ skillcheck lint skills
    """,
    good="""
        $ chmod 755 skills/private
        $ skillcheck lint skills
    """,
    reads=Input.DISCOVERY,
)
def path_not_checked(discovery: Discovery, ctx: Context) -> Iterator[tuple[None, Finding]]:
    for problem in discovery.problems:
        severity = Severity.WARNING if problem.warning else None
        yield None, Finding(problem.message, path=problem.path, severity=severity)


@rule(
    "SK101",
    "skill-md-unreadable",
    Severity.ERROR,
    "SKILL.md is missing, unreadable or not a regular file.",
    what="""
        Checks that the skill's `SKILL.md` is a regular, readable file. A dangling or looping
        symlink, a symlink to anything outside the directories being linted, a directory,
        FIFO, socket or device named `SKILL.md`, or a file without read permission is an
        error, and is never opened. A symlink to a file inside the skill, or elsewhere inside
        a directory being linted (a repository that keeps the text in `docs/`), is a warning,
        and the file it leads to is linted as the skill's `SKILL.md`, as runtimes and
        skills-ref follow the link.
    """,
    why="""
        Every runtime reads `SKILL.md` to learn the skill's name and description; when it cannot,
        the skill silently disappears from the catalog. Symlinks are lost by zip uploads
        (claude.ai), by `git` on Windows and by many copy steps, and a link that leaves the
        skill ships whatever it points at.
    """,
    bad="""
        my-skill/
          SKILL.md -> ../shared/SKILL.md   (outside the skill, or dangling)
    """,
    good="""
        my-skill/
          SKILL.md                          (a regular file)
    """,
)
def skill_md_unreadable(skill: Skill, ctx: Context) -> Iterator[Finding]:
    path = skill.skill_md
    linked = path is not None and (
        path.is_symlink() if skill.read_error else _is_symlink(skill, path)
    )
    if skill.read_error is not None and not (linked and path is not None and path.exists()):
        where_ = f"{path.name} " if path is not None else "SKILL.md "
        yield Finding(
            f"{where_}is {skill.read_error}; no runtime can load this skill",
            path=path or skill.root,
            impact=where(lambda t: t.missing_skill_md),
            help="make SKILL.md a regular, readable file inside the skill directory",
        )
        return
    if path is None or not linked:
        return
    outside = skill.read_error is not None or skill.skill_md_target is not None
    if skill.read_error is not None:  # a link out of the directories being linted
        consequence = (
            "skillcheck follows links only within the directories it lints, so its text was"
            " not checked: lint a folder that holds both"
        )
    else:
        consequence = "zip uploads, Windows checkouts and copies may lose it"
    select = where(lambda t: _symlink_outcome(t, outside))
    if skill.read_error is not None:
        # the runtimes that follow the link load a text skillcheck never read: not a pass
        select = {
            n: Impact(i.outcome, Severity.ERROR) if i.outcome is Outcome.OK else i
            for n, i in select.items()
        }
    followers = [n for n, i in select.items() if i.outcome is Outcome.OK]
    refusers = [n for n, i in select.items() if i.outcome is not Outcome.OK]
    said = f"; {titles(refusers)} will not load it" if refusers else ""
    yield Finding(
        f"{path.name} is a symlink to {_readlink(path)!r}"
        f"{', outside the skill' if outside else ''}{said}; {consequence}",
        path=path,
        impact=select,
        help="replace the link with the file itself"
        + (f" ({titles(followers)} follow it)" if followers and refusers else ""),
    )


def _symlink_outcome(target: Target, outside: bool) -> Impact:
    """How a runtime treats a symlinked SKILL.md (its profile's `skill_md_symlink`)."""
    if target.skill_md_symlink == "never":
        return impact(Outcome.DROPPED)
    if target.skill_md_symlink == "inside" and outside:
        return impact(Outcome.REJECTED)
    return Impact(Outcome.OK, Severity.WARNING)


def _is_symlink(skill: Skill, path) -> bool:
    """What the walk saw (no second lstat per skill), or the file system if it did not list it."""
    entry = skill.file(path.name) if path.parent == skill.root else None
    return entry.kind == "symlink" if entry is not None else path.is_symlink()


def _readlink(path) -> str:
    import os

    try:
        return os.readlink(path)
    except OSError:
        return "?"


@rule(
    "SK102",
    "skill-md-case",
    Severity.ERROR,
    "The skill file is not named exactly `SKILL.md`.",
    what="""
        Checks that the skill file is named `SKILL.md`, upper case, with a lower-case `.md`.
        `skill.md`, `Skill.md` or `SKILL.MD` are reported.
    """,
    why="""
        The specification names the file `SKILL.md`. Codex, claude.ai uploads, Copilot and
        Claude Code look for exactly that name, so a skill named `skill.md` is silently skipped
        on Linux; on macOS' case-insensitive file system it appears to work, which hides the
        problem until the skill ships. Only skills-ref also accepts `skill.md`.
    """,
    bad="""
        my-skill/skill.md
    """,
    good="""
        my-skill/SKILL.md
    """,
)
def skill_md_case(skill: Skill, ctx: Context) -> Iterator[Finding]:
    path = skill.skill_md
    if path is None or path.name == "SKILL.md":
        return
    yield Finding(
        f"the skill file is named {path.name!r}; rename it to 'SKILL.md'",
        path=path,
        impact=every(
            Outcome.DROPPED, {"skills-ref": None if path.name == "skill.md" else Outcome.REJECTED}
        ),
        help=f"git mv {path.name} SKILL.md",
    )


@rule(
    "SK103",
    "frontmatter-missing",
    Severity.ERROR,
    "SKILL.md does not start with YAML frontmatter.",
    what="""
        Checks that the first line of `SKILL.md` is exactly `---`, opening the YAML
        frontmatter that holds `name` and `description`.

        A `SKILL.md` with no frontmatter at all (no `---` line in its first lines) is a
        fragment, not a skill, when a folder two or more levels above it holds a
        `SKILL.md` (it sits inside another skill's folders, where loaders that scan one
        level or skip nested skills never look; a `SKILL.md` right above is a collection's
        own file, and its sub-folders are skills)
        or a skill of the same folder name sits next to it in the repository
        (`<folder>/<name>/SKILL.md` or `<folder>/skills/<name>/SKILL.md` above it: the skill
        a build script merges it into, as build-time overlays are). Such a file gets one
        warning that says so and names `exclude`, and no other finding. The folders are
        looked at by name only, up to six levels above the skill and never above a
        repository's root (a `.git`).
    """,
    why="""
        Loaders find the frontmatter only on the very first line: a blank line, a heading, or
        `---name: x` before it means no name and no description. skills-ref, Codex and
        claude.ai reject the skill; Copilot silently drops it; Claude Code loads the body with
        empty metadata.
    """,
    bad="""
        ␤                  (an empty first line)
        ---
        name: pdf-tools
        description: Extracts text from PDF files. Use when the user asks about PDFs.
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files. Use when the user asks about PDFs.
        ---
    """,
)
def frontmatter_missing(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None or doc.frontmatter is not None:
        return
    first = doc.lines[0] if doc.lines else ""
    select: dict[str, Outcome | None] = {n: _no_frontmatter(t, doc) for n, t in TARGETS.items()}
    if doc.text.startswith("---"):
        select["skills-ref"] = None  # it splits on the raw substring and may still parse
    span = first_line_span(skill)  # the `---` that is there, or should be
    if not doc.text.strip():
        message = "SKILL.md is empty; it needs a frontmatter with name and description"
    elif not first.strip():
        message = "SKILL.md starts with a blank line; the opening '---' must be the first line"
        span = Span(Pos(1, 1), Pos(1, len(first) + 1))
    elif first.startswith("---"):
        message = f"the first line is {first[:40]!r}; the opening '---' must stand alone on it"
    else:
        span = Span(Pos(1, 1), Pos(1, len(first) + 1))
        fragment = fragment_evidence(skill)
        if fragment is not None:
            # a fragment merged into another skill at build time: no loader reads it here,
            # and the engine reports nothing else about it (see analysis.fragments)
            yield Finding(
                f"SKILL.md has no frontmatter and {fragment}: it looks like a fragment merged"
                " into a skill at build time, not a skill; list its folder under `exclude` in"
                " the configuration, or add a frontmatter if it is a skill of its own",
                span=span,
                severity=Severity.WARNING,
            )
            return
        message = (
            "SKILL.md has no YAML frontmatter; start the file with '---', the name and"
            " description fields, and '---'"
        )
    yield Finding(message, span=span, impact=impacts_of(select))


def _no_frontmatter(target: Target, doc: Document | None) -> Outcome | None:
    """A line-regex reader (OpenSkills) still finds a `description:` line anywhere."""
    if target.regex_description and doc is not None and _DESCRIPTION_LINE.search(doc.text):
        return None
    return target.no_frontmatter


_DESCRIPTION_LINE = LazyPattern(r"(?m)^description:[ \t]*\S")


def impacts_of(select: Mapping[str, Outcome | None]) -> dict[str, Impact]:
    return {k: impact(v) for k, v in select.items() if v is not None}


@rule(
    "SK104",
    "frontmatter-unclosed",
    Severity.ERROR,
    "The frontmatter is never closed by a `---` line.",
    what="""
        Checks that the frontmatter opened on line 1 is closed by a line that is exactly `---`.
    """,
    why="""
        Without the closing delimiter the whole file is YAML to a loader: skills-ref and
        claude.ai report the frontmatter as not closed, Codex rejects the skill, and Claude Code
        loads it without metadata.
    """,
    bad="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        # PDF tools
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        ---
        # PDF tools
    """,
)
def frontmatter_unclosed(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None or fm.close_line is not None:
        return
    yield Finding(
        "the frontmatter opened on line 1 is never closed; add a line with '---' after the"
        " last field",
        span=Span(Pos(1, 1), Pos(1, 4)),
        impact=where(lambda t: _no_frontmatter(t, skill.doc)),
    )


@rule(
    "SK105",
    "yaml-syntax",
    Severity.ERROR,
    "The frontmatter is not valid YAML.",
    what="""
        Parses the frontmatter as YAML and reports the first syntax error at its real line and
        column in SKILL.md. The commonest case is an unquoted `: ` inside a value. For
        skills-ref the frontmatter is read as strictyaml reads it: a tab outside quotes, block
        text or comments is an error there (libyaml lets some through), and U+2028 is text.
    """,
    why="""
        A frontmatter that does not parse loses the name and description: the client guide says
        to skip such a skill, skills-ref, Codex and claude.ai reject it, Claude Code loads the
        body with empty metadata.
    """,
    bad="""
        ---
        name: pdf-tools
        description: Use when: the user asks about PDFs
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: "Use when: the user asks about PDFs"
        ---
    """,
)
def yaml_syntax(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None or fm.error is None:
        return
    problem, span = fm.error
    help_ = None
    if "mapping values are not allowed" in problem:
        line = skill.doc.lines[span.start.line - 1] if skill.doc else ""
        key = line.split(":", 1)[0].strip()
        help_ = f"quote the value: {key}: \"...\" (a ': ' inside a plain value starts a mapping)"
    elif "tab character" in problem or _char_at(skill, span) == "\t":
        help_ = "indent with spaces; YAML does not allow tabs"
    elif any(c in fm.text for c in "\u0085\u2028\u2029"):
        help_ = (
            "the frontmatter holds U+0085, U+2028 or U+2029, which YAML 1.1 loaders read as a"
            " line break; remove it"
        )
    line = skill.doc.lines[span.start.line - 1] if skill.doc and span.start.line > 0 else ""
    on_description = line.startswith("description:")
    colon = "mapping values are not allowed" in problem

    top = _TOP_LEVEL_VALUE.match(line)

    def top_level_requoted(t: Target) -> bool:
        # a value of a key the loader does not read is quoted whatever it starts with; one it
        # reads only when it does not start with a YAML indicator (`{`, `[`, `,`, quotes ...)
        if top is None:
            return False
        return top.group(1) not in t.known_fields or top.group(2)[0] not in _INDICATORS

    # a tab indenting a line under a `key:` that opens a block (`metadata:` then `\towner: x`)
    tab_in_block = False
    if skill.doc and "\t" in line[: len(line) - len(line.lstrip())] and span.start.line > 1:
        above = skill.doc.lines[span.start.line - 2].rstrip()
        tab_in_block = above.endswith(":") and not above.startswith(("-", "#"))

    def outcome(t: Target) -> Outcome | Impact | None:
        requoted = (
            (t.yaml_requote == "colon" and colon and on_description)
            or (t.yaml_requote == "description" and on_description)
            or (t.yaml_requote == "top-level" and top_level_requoted(t))
            or (
                t.yaml_requote == "any-top-level"
                and top is not None
                and top.group(2)[0] not in "'\""
            )
            or (t.yaml_tab_in_block and tab_in_block)
        )
        if requoted:  # the loader quotes the value and loads the skill as written
            return Impact(Outcome.OK, Severity.WARNING)
        # no YAML parse: the description is what a line `description: ...` holds, and a
        # loader reading it that way finds none when that line is indented (OpenSkills 1.5.0
        # lists the skill with an empty description)
        if (
            t.regex_description
            and t.malformed_yaml is Outcome.OK
            and not any(ln.startswith("description:") for ln in fm.text.split("\n"))
        ):
            return Impact(Outcome.DEGRADED, Severity.WARNING)
        return t.malformed_yaml if t.malformed_yaml is not Outcome.OK else None

    yield Finding(
        f"invalid YAML in the frontmatter: {problem}",
        span=span,
        impact=where(outcome),
        help=help_,
    )


# a top-level `key: value` line with a value on it (not a block scalar)
_TOP_LEVEL_VALUE = LazyPattern(r"([A-Za-z0-9_-]+):[ \t]+([^\s|>])")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")


def _char_at(skill: Skill, span: Span) -> str:
    lines = skill.doc.lines if skill.doc else []
    line = lines[span.start.line - 1] if 0 < span.start.line <= len(lines) else ""
    return line[span.start.column - 1 : span.start.column]


@rule(
    "SK106",
    "frontmatter-not-mapping",
    Severity.ERROR,
    "The frontmatter is not a mapping of fields.",
    what="""
        Checks that the frontmatter's YAML is a mapping (`key: value` lines), not a list or a
        single scalar.
    """,
    why="""
        Every loader reads `name` and `description` as keys of a mapping; skills-ref and
        claude.ai reject anything else ("frontmatter must be a YAML mapping").
    """,
    bad="""
        ---
        - name: pdf-tools
        - description: Extracts text from PDF files.
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        ---
    """,
)
def frontmatter_not_mapping(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None or fm.root is None or fm.error or fm.too_complex:
        return
    root = fm.root.resolved()
    if root.kind == "mapping":
        return
    what = {"sequence": "a list", "scalar": f"the scalar {str(root.value)[:40]!r}"}.get(
        root.kind, root.kind
    )
    yield Finding(
        f"the frontmatter is {what}, not a mapping; write one 'key: value' per line",
        span=root.span,
        impact=where(_not_mapping),
    )


def _not_mapping(t: Target) -> Outcome | None:
    outcome = t.not_mapping if t.not_mapping is not None else t.malformed_yaml
    return outcome if outcome is not Outcome.OK else None


@rule(
    "SK107",
    "duplicate-key",
    Severity.ERROR,
    "A frontmatter key appears more than once.",
    what="""
        Reports every repeated key in the frontmatter mapping (at any depth), at the repeated
        occurrence, naming the line of the earlier one.
    """,
    why="""
        YAML requires unique keys, but PyYAML silently keeps the last value while skills-ref
        (strictyaml) and Codex (serde_yaml) reject the file: the same skill loads in one runtime
        with one description and fails in another.
    """,
    bad="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        description: Fills PDF forms.
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files and fills PDF forms.
        ---
    """,
)
def duplicate_key(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None or fm.root is None:
        return
    select = {n: t.duplicate_key for n, t in TARGETS.items()}
    stack = [fm.root]
    while stack:
        node = stack.pop()
        if node.kind == "mapping":
            seen: dict[str, Node] = {}
            for key, value in node.value:
                text = key.text()
                if text is not None and key.kind == "scalar":
                    if text in seen:
                        yield Finding(
                            f"key {text!r} repeats the one on line {seen[text].span.start.line};"
                            " PyYAML keeps this value, strict parsers reject the file; keep one",
                            span=key.span,
                            impact=impacts_of(select),
                        )
                    else:
                        seen[text] = key
                stack.append(value)
        elif node.kind == "sequence":
            stack.extend(node.value)


@rule(
    "SK113",
    "empty-body",
    Severity.WARNING,
    "SKILL.md has no instructions after the frontmatter.",
    what="""
        Checks that the Markdown body after the frontmatter holds some text.
    """,
    why="""
        The body is what an agent reads when the skill is activated. An empty body activates
        a skill that tells the agent nothing.
    """,
    bad="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        ---
        # PDF tools

        Run `scripts/extract.py FILE` and summarise the output.
    """,
)
def empty_body(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None or doc.frontmatter is None or doc.frontmatter.close_line is None:
        return
    if doc.body.strip():
        return
    line = doc.frontmatter.close_line
    yield Finding(
        "SKILL.md has no instructions after the frontmatter; add the steps the agent follows",
        span=Span(Pos(line, 1), Pos(line, 4)),
    )


@rule(
    "SK114",
    "delimiter-whitespace",
    Severity.WARNING,
    "A `---` delimiter line has trailing whitespace.",
    what="""
        Reports spaces or tabs after a frontmatter delimiter (`--- `).
    """,
    why="""
        claude.ai and `package_skill.py` match the frontmatter with `^---\\n(.*?)\\n---`, so
        `--- ` is "no frontmatter" there; other loaders trim the line.
    """,
    bad="""
        ---␠
        name: pdf-tools
    """,
    good="""
        ---
        name: pdf-tools
    """,
    fixable=True,
)
def delimiter_whitespace(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    fm = doc.frontmatter if doc else None
    if doc is None or fm is None:
        return
    for flag, line in ((fm.open_trailing_ws, fm.open_line), (fm.close_trailing_ws, fm.close_line)):
        if flag and line is not None:
            text = doc.lines[line - 1]
            yield Finding(
                "trailing whitespace after '---'; claude.ai does not see the frontmatter,"
                " remove it",
                span=Span(Pos(line, 4), Pos(line, len(text) + 1)),
                impact={
                    "agentskills": Impact(Outcome.OK, Severity.WARNING),
                    "claude-api": impact(Outcome.REJECTED),
                },
                fix=strip_delimiter_whitespace(skill.doc, line),
            )


@rule(
    "SK115",
    "frontmatter-too-complex",
    Severity.ERROR,
    "The frontmatter is beyond the size, nesting or alias-expansion bounds.",
    what="""
        Reports a frontmatter larger than 1 MiB, nested deeper than 64 levels, with more than
        200,000 YAML nodes, or whose aliases expand to more than 10,000 values (the "billion
        laughs" pattern). skillcheck stops parsing it instead of exhausting memory.
    """,
    why="""
        Loaders that expand aliases naively hang or run out of memory on such a frontmatter at
        start-up; none needs more than a few fields.
    """,
    bad="""
        ---
        a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
        b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
        c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
        ...
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        ---
    """,
)
def frontmatter_too_complex(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None or not fm.too_complex:
        return
    yield Finding(
        f"{fm.too_complex}; keep the frontmatter to a few plain fields",
        span=Span(Pos(1, 1), Pos(1, 4)),
        impact=every(Outcome.REJECTED),
    )


@rule(
    "SK116",
    "skill-md-too-large",
    Severity.ERROR,
    "SKILL.md is larger than skillcheck reads (8 MiB).",
    what="""
        Reports a SKILL.md over 8 MiB. Only its first 8 MiB are checked.
    """,
    why="""
        The body of SKILL.md enters the agent's context whole when the skill is activated; a
        file this size cannot, and uploads of this size are refused (claude.ai: 30 MB per
        skill). Move material into referenced files.
    """,
    bad="""
        my-skill/SKILL.md        (50 MB)
    """,
    good="""
        my-skill/SKILL.md        (under 500 lines)
        my-skill/references/     (the detail, loaded on demand)
    """,
)
def skill_md_too_large(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None or not doc.truncated:
        return
    yield Finding(
        f"SKILL.md is {doc.size / 1_048_576:.1f} MiB; only the first 8 MiB were checked."
        " Move detail into files under references/",
        span=Span(Pos(1, 1), Pos(1, 1)),
        impact=None,
    )


@rule(
    "SK117",
    "markdown-not-fully-checked",
    Severity.ERROR,
    "A Markdown file is longer than skillcheck parses (512,000 characters).",
    what="""
        Reports SKILL.md's body or another Markdown file of the skill longer than the
        Markdown reader parses (its first 512,000 characters), at the first line left
        unread. Links, anchors, path mentions and suppression comments after that point are
        not checked.
    """,
    why="""
        A broken link or an escaping path past the bound would otherwise pass unseen, and a
        gate must never pass what it did not check. A file this long is also far beyond any
        runtime's context budget: split it.
    """,
    bad="""
        my-skill/references/everything.md     (900,000 characters)
    """,
    good="""
        my-skill/references/setup.md          (the material, in files of a readable size)
        my-skill/references/api.md
    """,
)
def markdown_not_fully_checked(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for doc in documents(skill):
        text = doc_text(skill, doc)
        if text is None or len(text) < MAX_PARSE_CHARS - 1:
            continue  # certainly parsed whole: the lines and their breaks are the text
        if doc.is_skill_md:
            assert skill.doc is not None  # documents() lists SKILL.md only when it was read
            first, lines = skill.doc.body_line, skill.doc.lines[skill.doc.body_line - 1 :]
        else:
            first, lines = 1, lf_lines(text)
        kept, cut = truncate_lines(lines)
        if not cut:
            continue
        line = first + len(kept)
        yield Finding(
            f"{doc.rel} is {len(text):,} characters; links, anchors and paths from line"
            f" {line} on (past the first {MAX_PARSE_CHARS:,}) were not checked. Split it"
            " into smaller files under references/",
            span=Span(Pos(line, 1), Pos(line, 1)),
            path=doc.path,
        )


@rule(
    "SK118",
    "skill-md-over-runtime-limit",
    Severity.ERROR,
    "SKILL.md is larger than a runtime loads.",
    what="""
        Reports a SKILL.md larger than the most a target runtime reads: OpenClaw skips one over
        256,000 bytes ("File exceeds 256000 bytes") and Claude Code one over 1,000,000 bytes
        (both measured by running them, see bench/runtimes).
    """,
    why="""
        The runtime leaves the skill out of its catalog and says so only in a log line, so
        the skill is simply missing for the user.
    """,
    bad="""
        my-skill/SKILL.md        (300 KB of inlined reference tables)
    """,
    good="""
        my-skill/SKILL.md        (the instructions, under 500 lines)
        my-skill/references/     (the tables, read on demand)
    """,
)
def skill_md_over_runtime_limit(skill: Skill, ctx: Context) -> Iterator[Finding]:
    doc = skill.doc
    if doc is None:
        return
    over = [
        t
        for t in TARGETS.values()
        if t.skill_md_max_bytes is not None and doc.size > t.skill_md_max_bytes
    ]
    if not over:
        return
    for t in over:
        yield Finding(
            f"SKILL.md is {doc.size:,} bytes; {t.title} skips a SKILL.md over"
            f" {t.skill_md_max_bytes:,} bytes. Move detail into files under references/",
            span=Span(Pos(1, 1), Pos(1, 1)),
            impact={t.name: impact(Outcome.REJECTED)},
        )


@rule(
    "SK120",
    "unused-suppression",
    Severity.INFO,
    "A suppression comment silences nothing, or names no rule.",
    what="""
        Reports a `<!-- skillcheck-disable ... -->` or `<!-- skillcheck-disable-next-line ... -->`
        comment in SKILL.md or another Markdown file of the skill that silenced no diagnostic
        in this run, a code in one that silenced
        nothing, and a word in one that is neither a rule code nor a slug. A code whose rule did
        not run (not selected, or ignored) is not reported. Comments inside code blocks and code
        spans are examples, not suppressions, and are never reported.
    """,
    why="""
        A stale suppression hides the next real problem on that line, and a misspelt code
        (`SK5O1`) suppresses nothing while the author believes otherwise. Like ruff's unused
        `noqa` check, this keeps suppressions honest. Suppressions are evaluated for the active
        targets: one written for `--target skills-ref` looks unused in a run without it.
    """,
    bad="""
        <!-- skillcheck-disable-next-line SK501 -->
        See the [guide](references/guide.md).        (the link is fine: nothing to silence)
    """,
    good="""
        See the [guide](references/guide.md).
    """,
    notes="""
        SK120 diagnostics are produced after suppressions are applied, so a comment cannot
        silence them; use `ignore = ["SK120"]` or `per-path-ignores`.
    """,
    reads=Input.SUPPRESSIONS,
)
def unused_suppression(
    skill: SkillSummary, ctx: Context, suppressions: Sequence[SuppressionComment]
) -> Iterator[Finding]:
    for sup in suppressions:
        for word, span in sup.unknown:
            yield Finding(
                f"{word!r} in '{sup.text}' is not a rule code or slug; correct it or remove it",
                span=span,
                path=sup.path,
                help="`skillcheck rules` lists every code and slug",
            )
        if sup.unused_all:
            what = "the next line" if sup.next_line else "this file"
            yield Finding(
                f"'{sup.text}' silences nothing on {what}; remove the comment",
                span=sup.span,
                path=sup.path,
            )
        where_ = f"on line {sup.span.end.line + 1}" if sup.next_line else "in this file"
        for word, span in sup.unused:
            yield Finding(
                f"'{sup.text} {word}' silences nothing: no {word} diagnostic {where_};"
                " remove it from the comment",
                span=span,
                path=sup.path,
            )


# --- the fix of SK114 (applied by fix.py) -----------------------------------------------


def strip_delimiter_whitespace(doc: Document | None, line: int) -> Fix | None:
    """SK114: remove spaces and tabs after a ``---`` delimiter."""
    if doc is None or not 1 <= line <= len(doc.lines):
        return None
    text = doc.lines[line - 1]
    trailing = text[3:]
    if not text.startswith("---") or not trailing or trailing.strip(" \t"):
        return None
    offsets = span_offsets(doc, Span(Pos(line, 4), Pos(line, len(text) + 1)))
    if offsets is None or not raw_matches(doc, *offsets, trailing):
        return None
    return proven_fix(doc, *offsets, b"", "remove whitespace after '---'", None)
