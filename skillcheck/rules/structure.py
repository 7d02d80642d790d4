"""SK1xx: the file and its frontmatter structure."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from skillcheck.model import Finding, Impact, Outcome, Pos, Severity, Skill, Span
from skillcheck.rules.base import Context, first_line_span, rule, usable_frontmatter
from skillcheck.targets import SPEC_FIELDS, TARGETS, every, impact, titles, where


@rule(
    "SK100",
    "path-not-checked",
    Severity.ERROR,
    "A path could not be searched for skills.",
    what="""
        Reports directories the search could not read (permissions, a directory that vanished
        during the run), dangling symlinks given as PATH, and trees deeper than the search
        bound (as a warning).
    """,
    why="""
        A directory skillcheck cannot read may hold skills that were never checked; a green run
        would then be a false pass. Runtimes that can read it will load those skills unchecked.
    """,
    bad="""
        $ chmod 000 skills/private
        $ skillcheck lint skills
    """,
    good="""
        $ chmod 755 skills/private
        $ skillcheck lint skills
    """,
    scope="discovery",
)
def path_not_checked(discovery, ctx: Context) -> Iterator[tuple[None, Finding]]:
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
        symlink, a symlink that leaves the skill, a directory, FIFO, socket or device named
        `SKILL.md`, or a file without read permission is an error, and is never opened. A
        symlink to a file inside the skill is a warning.
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
    if skill.read_error is not None:
        where_ = f"{path.name} " if path is not None else "SKILL.md "
        yield Finding(
            f"{where_}is {skill.read_error}; no runtime can load this skill",
            path=path or skill.root,
            impact=every(Outcome.DROPPED),
            help="make SKILL.md a regular, readable file inside the skill directory",
        )
        return
    if path is not None and path.is_symlink():
        yield Finding(
            f"{path.name} is a symlink to {_readlink(path)!r}; zip uploads, Windows checkouts and"
            " copies may lose it",
            path=path,
            severity=Severity.WARNING,
            help="replace the link with the file itself",
        )


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


_NO_FRONTMATTER_IMPACT = {
    "agentskills": Outcome.REJECTED,
    "skills-ref": Outcome.REJECTED,
    "claude-api": Outcome.REJECTED,
    "claude-code": Outcome.DEGRADED,  # body loads with empty metadata
    "codex": Outcome.REJECTED,
    "copilot": Outcome.DROPPED,
    "cursor": Outcome.REJECTED,
    "openskills": Outcome.DEGRADED,  # no description line to read
}


@rule(
    "SK103",
    "frontmatter-missing",
    Severity.ERROR,
    "SKILL.md does not start with YAML frontmatter.",
    what="""
        Checks that the first line of `SKILL.md` is exactly `---`, opening the YAML
        frontmatter that holds `name` and `description`.
    """,
    why="""
        Loaders find the frontmatter only on the very first line: a blank line, a heading, or
        `---name: x` before it means no name and no description. skills-ref, Codex and
        claude.ai reject the skill; Copilot silently drops it; Claude Code loads the body with
        empty metadata.
    """,
    bad="""

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
    select = dict(_NO_FRONTMATTER_IMPACT)
    if doc.text.startswith("---"):
        select["skills-ref"] = None  # it splits on the raw substring and may still parse
    if not doc.text.strip():
        message = "SKILL.md is empty; it needs a frontmatter with name and description"
    elif not first.strip():
        message = "SKILL.md starts with a blank line; the opening '---' must be the first line"
    elif first.startswith("---"):
        message = f"the first line is {first[:40]!r}; the opening '---' must stand alone on it"
    else:
        message = (
            "SKILL.md has no YAML frontmatter; start the file with '---', the name and"
            " description fields, and '---'"
        )
    yield Finding(message, span=first_line_span(skill), impact=impacts_of(select))


def impacts_of(select: dict[str, Outcome | None]) -> dict[str, Impact]:
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
        impact=impacts_of(_NO_FRONTMATTER_IMPACT),
    )


@rule(
    "SK105",
    "yaml-syntax",
    Severity.ERROR,
    "The frontmatter is not valid YAML.",
    what="""
        Parses the frontmatter as YAML and reports the first syntax error at its real line and
        column in SKILL.md. The commonest case is an unquoted `: ` inside a value.
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
    elif "cannot start any token" in problem and "\\t" in problem:
        help_ = "indent with spaces; YAML does not allow tabs"
    yield Finding(
        f"invalid YAML in the frontmatter: {problem}",
        span=span,
        impact=where(lambda t: t.malformed_yaml if t.malformed_yaml is not Outcome.OK else None),
        help=help_,
    )


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
        impact=where(lambda t: t.malformed_yaml if t.malformed_yaml is not Outcome.OK else None),
    )


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
    select = {
        "agentskills": Outcome.REJECTED,
        "skills-ref": Outcome.REJECTED,
        "codex": Outcome.REJECTED,
        "claude-api": Outcome.DEGRADED,
        "claude-code": Outcome.DEGRADED,
        "copilot": Outcome.DEGRADED,
        "cursor": Outcome.DEGRADED,
        "openskills": Outcome.DEGRADED,
    }
    stack = [fm.root]
    while stack:
        node = stack.pop()
        if node.kind == "mapping":
            seen = {}
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
    "SK108",
    "unknown-field",
    Severity.WARNING,
    "A top-level frontmatter key is not one the targets know.",
    what="""
        Reports top-level keys outside the specification's six (`name`, `description`,
        `license`, `compatibility`, `metadata`, `allowed-tools`) and outside the keys each
        active target documents (Claude Code's `when_to_use`, `model`, ...). A near miss of a
        spec key (`descripton`, `Name`, `allowed_tools`) is an error with the suggestion.
    """,
    why="""
        skills-ref and claude.ai uploads reject any other key ("Unexpected key(s) in SKILL.md
        frontmatter"); lenient loaders ignore it, so the information is lost. The spec's
        extension point is `metadata`. A misspelt `descripton` means the skill has no
        description at all.
    """,
    bad="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        author: data-team
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        metadata:
          author: data-team
        ---
    """,
    options="""
        `extra-fields` (list of keys): keys your team allows; they are not reported for lenient
        targets (strict loaders still reject them, so `skills-ref` and `claude-api` still do).
    """,
)
def unknown_field(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    if fm is None:
        return
    extra = set(ctx.option("extra-fields", ()) or ())
    all_known = set().union(*(t.known_fields for t in TARGETS.values()))
    for name, (key, _value) in fm.fields.items():
        if name in SPEC_FIELDS:
            continue
        near = _near_miss(name)
        if near is not None and name not in all_known and name not in extra:
            yield Finding(
                f"unknown key {name!r}; did you mean {near!r}?",
                span=key.span,
                impact=every(Impact(Outcome.REJECTED, Severity.ERROR)),
                help=f"rename {name!r} to {near!r}",
            )
            continue
        select = {}
        for target in TARGETS.values():
            if name in target.known_fields or target.unknown_field is Outcome.OK:
                continue
            if name in extra and target.unknown_field is not Outcome.REJECTED:
                continue
            select[target.name] = target.unknown_field
        if not select:
            continue
        affected = [t for t in ctx.targets if t in select]
        strict = [t for t in affected if select[t] is Outcome.REJECTED]
        knowers = [t.title for t in TARGETS.values() if name in t.known_fields]
        if strict:
            message = f"key {name!r} is rejected by {titles(strict)}"
        else:
            message = f"key {name!r} is not in the Agent Skills specification"
        if knowers:
            message += f" (only {', '.join(knowers)} knows it)"
        message += "; move it under 'metadata'"
        yield Finding(message, span=key.span, impact=impacts_of(select))


def _near_miss(name: str) -> str | None:
    lowered = name.lower().replace("_", "-")
    if lowered in SPEC_FIELDS:
        return lowered
    close = difflib.get_close_matches(lowered, sorted(SPEC_FIELDS), n=1, cutoff=0.8)
    return close[0] if close else None


_PORTABILITY = {
    "flow": ("a flow collection", Severity.INFO),
    "anchor": ("an anchor", Severity.WARNING),
    "alias": ("an alias", Severity.WARNING),
    "tag": ("an explicit tag", Severity.WARNING),
    "merge": ("a merge key", Severity.WARNING),
    "document": ("a second YAML document", Severity.WARNING),
}


@rule(
    "SK109",
    "yaml-portability",
    Severity.WARNING,
    "The frontmatter uses YAML that other loaders parse differently.",
    what="""
        Reports flow collections (`[a, b]`, `{k: v}`), anchors (`&a`), aliases (`*a`), merge
        keys (`<<`), explicit tags (`!!str`) and extra YAML documents in the frontmatter.
    """,
    why="""
        skills-ref parses with strictyaml, which rejects flow collections, anchors, aliases and
        tags outright; other loaders support different YAML subsets. Plain block YAML reads the
        same everywhere.
    """,
    bad="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        metadata: {owner: data-team}
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        metadata:
          owner: data-team
        ---
    """,
)
def yaml_portability(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None:
        return
    for issue in fm.issues:
        label, severity = _PORTABILITY[issue.kind]
        select = {
            "agentskills": Impact(Outcome.OK, severity),
            "skills-ref": Impact(Outcome.REJECTED, Severity.ERROR),
        }
        if issue.kind in ("tag", "document"):
            select["codex"] = Impact(Outcome.REJECTED, Severity.ERROR)
        yield Finding(
            f"{label} ({issue.detail}) in the frontmatter; skills-ref rejects it, write plain"
            " block YAML",
            span=issue.span,
            impact=select,
        )


@rule(
    "SK110",
    "delimiter-in-value",
    Severity.ERROR,
    "`---` appears inside the frontmatter.",
    what="""
        Reports a `---` anywhere inside the frontmatter's YAML, for example inside a
        description.
    """,
    why="""
        skills-ref splits SKILL.md on the raw substring `---`, so the frontmatter ends at the
        first `---` it meets, even mid-value: the rest of the description becomes the body, or
        the YAML no longer parses.
    """,
    bad="""
        ---
        name: pdf-tools
        description: Extracts text --- and tables --- from PDF files.
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text and tables from PDF files.
        ---
    """,
)
def delimiter_in_value(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None or fm.close_line is None or "---" not in fm.text:
        return
    for index, line in enumerate(fm.text.split("\n")):
        col = line.find("---")
        if col >= 0:
            yield Finding(
                "'---' inside the frontmatter; skills-ref ends the frontmatter here, remove it",
                span=Span(Pos(index + 2, col + 1), Pos(index + 2, col + 4)),
                impact={"skills-ref": impact(Outcome.REJECTED)},
            )
            return


@rule(
    "SK111",
    "description-not-plain",
    Severity.WARNING,
    "The description is not a one-line plain YAML value (OpenSkills misreads it).",
    what="""
        Reports a `description` written as a block scalar (`|`, `>-`), a quoted value, or a
        plain value continued on the next line, when OpenSkills is a target.
    """,
    why="""
        OpenSkills does not parse YAML: it takes the rest of the first line matching
        `^description:\\s*(.+?)$`. A block scalar shows up as the literal `|`, quotes stay in,
        and a continued value is cut at the line end, so agents see a broken description.
    """,
    bad="""
        ---
        name: pdf-tools
        description: >-
          Extracts text from PDF files.
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        ---
    """,
)
def description_not_plain(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    node = fm.node("description") if fm else None
    if node is None or node.kind != "scalar":
        return
    if node.style in ("|", ">"):
        shown = f"the literal {node.style!r}"
    elif node.style in ("'", '"'):
        shown = "the value with its quotes"
    elif node.span.start.line != node.span.end.line:
        shown = "only the first line"
    else:
        return
    yield Finding(
        f"OpenSkills reads the description with a line regex and shows {shown}; write it as"
        " one plain line",
        span=node.span,
        impact=where(lambda t: Outcome.DEGRADED if t.regex_description else None),
    )


_STRING_FIELDS = ("name", "description", "license", "compatibility", "allowed-tools")


@rule(
    "SK112",
    "implicit-type",
    Severity.WARNING,
    "A plain value that YAML reads as a boolean, number, date or null.",
    what="""
        Reports unquoted values such as `yes`, `no`, `on`, `1.0`, `2024-01-31` or `null` where
        a string is meant: in the spec's string fields, in `metadata` values and in other
        top-level keys (booleans are fine in fields a target documents as boolean).
    """,
    why="""
        PyYAML (YAML 1.1) reads `description: yes` as `True` and `version: 1.10` as `1.1`;
        claude.ai rejects a name or description that is not a string, Codex (YAML 1.2) reads
        `yes` as a string, and skills-ref reads everything as a string. Quoting makes every
        loader see the same text.
    """,
    bad="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        metadata:
          version: 1.10
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files.
        metadata:
          version: "1.10"
        ---
    """,
)
def implicit_type(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    if fm is None:
        return
    booleans = set().union(*(t.boolean_fields for t in TARGETS.values()))
    candidates = []
    for name, (_key, value) in fm.fields.items():
        if name == "metadata":
            candidates.extend((f"metadata.{k.text()}", v) for k, v in value.items())
        elif name in booleans:
            continue
        elif value.kind == "scalar":
            candidates.append((name, value))
    for label, node in candidates:
        node = node.resolved()
        if node.kind != "scalar" or node.style is not None or node.explicit_tag:
            continue
        if node.tag not in ("bool", "int", "float", "null", "timestamp"):
            continue
        if node.tag == "null" and label not in _STRING_FIELDS:
            continue  # an empty optional field is not a typing accident
        kind = {
            "bool": "a boolean",
            "int": "an integer",
            "float": "a number",
            "null": "null",
            "timestamp": "a date",
        }[node.tag]
        select: dict[str, Impact] = {"agentskills": impact(Outcome.DEGRADED)}
        if label in ("name", "description", "compatibility"):
            select["claude-api"] = impact(Outcome.REJECTED)
            if label in ("name", "description") and node.tag != "null":
                select["codex"] = impact(Outcome.REJECTED)
        yield Finding(
            f"{label}: {node.value!r} is read as {kind} by YAML 1.1 loaders; quote it:"
            f' "{node.value}"',
            span=node.span,
            impact=select,
        )


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
)
def delimiter_whitespace(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None:
        return
    for flag, line in ((fm.open_trailing_ws, fm.open_line), (fm.close_trailing_ws, fm.close_line)):
        if flag and line is not None:
            text = skill.doc.lines[line - 1]
            yield Finding(
                "trailing whitespace after '---'; claude.ai does not see the frontmatter,"
                " remove it",
                span=Span(Pos(line, 4), Pos(line, len(text) + 1)),
                impact={
                    "agentskills": Impact(Outcome.OK, Severity.WARNING),
                    "claude-api": impact(Outcome.REJECTED),
                },
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
