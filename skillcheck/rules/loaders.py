"""SK108-SK112: frontmatter every loader parses, but reads differently.

Keys a target does not know, YAML that other loaders parse differently, values skills-ref or
OpenSkills cut short, and plain values YAML 1.1 turns into booleans, numbers or dates. Split
from rules/structure.py for size; the same family (SK1xx structure)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator

from skillcheck.analysis.edits import (
    Values,
    line_start,
    line_text,
    proven_fix,
    raw_matches,
    span_offsets,
)
from skillcheck.rules.base import Context, Option, rule, usable_frontmatter
from skillcheck.rules.structure import impacts_of
from skillcheck.source.display import shorten
from skillcheck.source.frontmatter import plain_mapping
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
from skillcheck.targets import SPEC_FIELDS, TARGETS, every, impact, titles, where

FAMILY = "structure"  # one family with the rules of rules/structure.py


@rule(
    "SK108",
    "unknown-field",
    Severity.WARNING,
    "A top-level frontmatter key is not one the targets know.",
    what="""
        Reports top-level keys outside the specification's six (`name`, `description`,
        `license`, `compatibility`, `metadata`, `allowed-tools`) and outside the keys each
        active target documents (Claude Code's `when_to_use`, `model`, ...). A near miss of a
        spec key (`descripton`, `Name`, `allowed_tools`) is an error with the suggestion,
        unless the spec key is there too (`description_en` beside `description` is meant).

        Keys that some runtime acts on (Claude Code's `argument-hint`,
        `disable-model-invocation`, `user-invocable`, `model`, `context`, `agent`, `hooks`,
        `version`, ...; Copilot's and Cursor's subsets) are still reported for targets that do
        not know them, but the message says to keep them and to name the runtime with
        `--target`: moving them under `metadata` would turn them off. The fix moves only keys
        no runtime reads.
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
    options=[
        Option(
            "extra-fields",
            {"type": "array", "items": {"type": "string"}},
            [],
            "Frontmatter keys your team allows: not reported for lenient targets (strict"
            " loaders, `skills-ref` and `claude-api`, still reject them).",
        )
    ],
    fixable=True,
)
def unknown_field(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    if fm is None:
        return
    extra = set(ctx.option("extra-fields", ()) or ())
    all_known = set().union(*(t.known_fields for t in TARGETS.values()))
    close_to = {n: _near_miss(n) for n in fm.fields if n not in SPEC_FIELDS}  # difflib: once
    # only keys no runtime reads and the team did not allow move safely under metadata (a
    # near miss of a spec key is renamed or deleted by hand, never moved)
    movable = [
        n
        for n in fm.fields
        if n not in all_known | extra and close_to[n] is None and n in fm.values  # not `<<`
    ]
    # `description_en` beside `description` is a second key on purpose, not a misspelling
    near_of = {n: (None if near in fm.fields else near) for n, near in close_to.items()}
    move, moving = move_to_metadata(skill.doc, fm, movable) if movable else (None, [])
    moved = set(moving)  # looked up once per key: a list made 20,000 keys quadratic
    for name, (key, _value) in fm.fields.items():
        if name in SPEC_FIELDS:
            continue
        near = near_of[name]
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
            if target.strict_yaml and key.resolved().tag == "merge":
                continue  # strictyaml merges `<<` away, or refuses it (SK109)
            select[target.name] = target.unknown_field
        if not select:
            continue
        affected = [t for t in ctx.targets if t in select]
        strict = [t for t in affected if select[t] is Outcome.REJECTED]
        knowers = [t.name for t in TARGETS.values() if name in t.known_fields]
        if strict:
            message = f"key {name!r} is rejected by {titles(strict)}"
        else:
            message = f"key {name!r} is not in the Agent Skills specification"
        if knowers:
            # never advise moving a key a runtime acts on: under `metadata` it stops working
            acts = "acts" if len(knowers) == 1 else "act"
            message += (
                f"; {titles(knowers)} {acts} on it, so do not move it under 'metadata' (it would"
                f" stop working there); if the skill is for {titles(knowers[:1])}, lint with"
                f" `--target {knowers[0]}`"
            )
        else:
            message += "; move it under 'metadata'"
        fix = move if name in moved else None
        yield Finding(message, span=key.span, impact=impacts_of(select), fix=fix)


# the same few keys (`author`, `version`, `tags`) come back in skill after skill: difflib
# runs once for each
@functools.lru_cache(maxsize=1024)
def _near_miss(name: str) -> str | None:
    lowered = name.lower().replace("_", "-")
    if lowered in SPEC_FIELDS:
        return lowered
    import difflib  # only for names that are not spec fields

    close = difflib.get_close_matches(lowered, sorted(SPEC_FIELDS), n=1, cutoff=0.8)
    return close[0] if close else None


_PORTABILITY = {
    "flow": ("a flow collection", Severity.INFO),  # skills-ref only (see below)
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
        keys (`<<`), explicit tags (`!!str`, `!`) and extra YAML documents in the frontmatter.
        Flow collections are reported only for the `skills-ref` target: every other loader
        reads them like block YAML, and OpenClaw documents its `metadata` as one-line JSON.
        For skills-ref it also reports what only strictyaml refuses: a list or mapping used
        as a key, sibling mappings indented differently, and a plain `=` or `<<` as the
        `name`, `description` or `compatibility` (read as YAML tags, not text).
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
    uses: dict[str, int] = {}  # one alias finding per anchor: a billion laughs is one problem
    for issue in fm.issues:
        if issue.kind == "alias":
            uses[issue.detail] = uses.get(issue.detail, 0) + 1
    merges = _merge_values(fm)
    for issue in fm.issues:
        detail = issue.detail
        if issue.kind == "alias":
            count = uses.pop(detail, 0)
            if not count:
                continue
            detail += f", used {count} times" if count > 1 else ""
        elif issue.kind == "document":
            detail = f"'{detail}' on line {issue.span.start.line}"
        label, severity = _PORTABILITY[issue.kind]
        select = {
            "agentskills": Impact(Outcome.OK, severity),
            "skills-ref": Impact(Outcome.REJECTED, Severity.ERROR),
        }
        if issue.kind == "flow":
            # every loader but strictyaml reads `[a, b]` and `{k: v}` the same, and OpenClaw
            # wants its metadata as one-line JSON: only skills-ref's rejection is a finding
            del select["agentskills"]
        if issue.kind == "merge" and _strictyaml_merges(merges.get(issue.span)):
            del select["skills-ref"]  # it merges a block mapping in (and drops its keys)
        if issue.kind == "document" or (issue.kind == "tag" and detail != "!"):
            select["codex"] = Impact(Outcome.REJECTED, Severity.ERROR)
        if issue.kind == "document":  # PyYAML's safe_load: "expected a single document"
            select["claude-api"] = Impact(Outcome.REJECTED, Severity.ERROR)
        yield Finding(
            f"{label} ({detail}) in the frontmatter; skills-ref rejects it, write plain block YAML",
            span=issue.span,
            impact=select,
        )
    if fm.root is not None and fm.error is None and fm.too_complex is None:
        yield from _strictyaml_only(fm)


def _merge_values(fm: Frontmatter) -> dict[Span, Node]:
    """The value of every `<<` merge key, by the key's span."""
    out: dict[Span, Node] = {}
    stack = [fm.root] if fm.root is not None else []
    while stack:
        node = stack.pop()
        if node.kind == "sequence":
            stack.extend(node.value)
        elif node.kind == "mapping":
            for key, value in node.value:
                if key.kind == "scalar" and key.tag == "merge":
                    out[key.span] = value
                stack.extend((key, value))
    return out


def _strictyaml_merges(value: Node | None) -> bool:
    """strictyaml merges a block mapping, or a block list of them, without complaint (the
    merged keys vanish from what it reads); any other `<<` value is an error to it."""
    if value is None or value.flow:
        return False
    if value.kind == "sequence":
        return bool(value.value) and all(v.kind == "mapping" and not v.flow for v in value.value)
    return value.kind == "mapping"


def _strictyaml_only(fm: Frontmatter) -> Iterator[Finding]:
    """YAML that only strictyaml (skills-ref) refuses: keys that are lists or mappings,
    sibling mappings indented differently, and a plain `=` or `<<` as the value of a field
    it needs as text (it reads them as YAML 1.1 'value'/'merge' tags, not strings)."""
    strict = where(lambda t: Outcome.REJECTED if t.strict_yaml else None)
    for name in ("name", "description", "compatibility"):
        value = fm.node(name)
        if value is not None and value.style is None and value.tag in ("value", "merge"):
            yield Finding(
                f"{name}: {value.value} is read by skills-ref (strictyaml) as a YAML"
                f' {value.tag!r} tag, not as text; quote it: {name}: "{value.value}"',
                span=value.span,
                impact=strict,
            )
    stack: list[Node] = [fm.root] if fm.root is not None else []
    while stack:
        node = stack.pop()
        if node.kind == "sequence":
            stack.extend(node.value)
        if node.kind != "mapping":
            continue  # aliases are reported above and never expanded here
        column: int | None = None
        for key, value in node.value:
            if key.kind in ("sequence", "mapping"):
                yield Finding(
                    f"a {'list' if key.kind == 'sequence' else 'mapping'} is used as a key;"
                    " skills-ref (strictyaml) cannot read it, use a plain text key",
                    span=key.span,
                    impact=strict,
                )
            if value.kind == "mapping" and not value.flow:
                if column is None:
                    column = value.span.start.column
                elif value.span.start.column != column:
                    yield Finding(
                        f"the mapping under {key.text()!r} is indented"
                        f" {value.span.start.column - 1} spaces where an earlier one in the"
                        f" same mapping is indented {column - 1}; skills-ref (strictyaml)"
                        " rejects that, indent sibling mappings alike",
                        span=Span(value.span.start, Pos(value.span.start.line, column + 1)),
                        impact=strict,
                    )
            stack.extend((key, value))


@rule(
    "SK110",
    "delimiter-in-value",
    Severity.WARNING,
    "`---` inside the frontmatter ends it early for skills-ref and Claude Code.",
    what="""
        Reports the first `---` inside the frontmatter (in a value, a comment or a `----`
        line) when skills-ref or Claude Code is a target: that is where they end the
        frontmatter. What they then find before the cut is checked as they read it, so a cut that
        leaves invalid YAML, a missing field or a truncated value is reported by those rules.
    """,
    why="""
        skills-ref and Claude Code (checked with 2.1.332) split SKILL.md on the raw substring
        `---`, not on `---` lines, so the frontmatter ends at the first `---` they meet, even
        mid-value: the rest of the description and every later field are lost, or the YAML
        no longer parses (Claude Code then loads the skill with empty metadata).
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
    # the cut exists only in a substring-splitting loader's view (lint runs rules on it)
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None or fm.cut is None:
        return
    cut = fm.cut
    message = "skills-ref and Claude Code end the frontmatter at this '---'"
    last = list(fm.fields.items())[-1] if fm.fields and fm.error is None else None
    if last is not None:
        name, (_key, value) = last
        value = value.resolved()
        if value.kind == "scalar" and value.span.end.line == cut.line:  # the value it cut
            message += f" and reads {name} as {shorten(value.value)!r}"
    yield Finding(
        message + "; it does not read the rest of the frontmatter. Remove or reword the '---'",
        span=Span(cut, Pos(cut.line, cut.column + 3)),
        impact=where(lambda t: Outcome.DEGRADED if t.substring_split else None),
    )


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
    if fm is None or node is None or node.kind != "scalar" or skill.doc is None:
        return
    if node.style is None and node.span.start.line == node.span.end.line:
        return  # one plain line: the regex reads it as YAML does
    # what `^description:\s*(.+?)$` captures: the rest of the key's line, as written
    key = fm.key("description")
    line = skill.doc.lines[key.span.start.line - 1] if key is not None else ""
    rest = line[key.span.end.column - 1 :] if key is not None else ""
    shown = rest.split(":", 1)[-1].strip()
    shown = shown.split(" #", 1)[0] if node.style in ("|", ">") else shown
    message = f"OpenSkills reads the description with a line regex and shows {shorten(shown, 50)!r}"
    if node.style in ("'", '"') and node.span.start.line == node.span.end.line:
        # one line already: the fault is the quotes, which the regex keeps
        if plain_mapping(f"description: {node.value}\n") == {"description": node.value}:
            message += ", quotes included; remove the quotes (YAML reads it the same without them)"
        else:
            message += (
                ", quotes included; YAML needs them here, so reword the description to need"
                " none (no ': ' or ' #' inside, no quote or special character first)"
            )
    else:
        message += "; write it as one plain line"
    yield Finding(
        message,
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
        top-level keys (booleans are fine in fields a target documents as boolean). A
        `metadata` value that is null (`null`, `~` or nothing after the key) is reported too:
        the specification's metadata values are strings.
    """,
    why="""
        PyYAML (YAML 1.1) reads `description: yes` as `True` and `version: 1.10` as `1.1`;
        claude.ai rejects a name or description that is not a string; the Copilot CLI and the
        skills CLI (YAML 1.2) read `yes` as a string but reject `description: 12345`; Codex
        loads either; skills-ref reads everything as a string. Quoting makes every loader see
        the same text.
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
    fixable=True,
)
def implicit_type(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    if fm is None:
        return
    booleans = set().union(*(t.boolean_fields for t in TARGETS.values()))
    candidates: list[tuple[str, Node]] = []
    for name, (_key, value) in fm.fields.items():
        if name == "metadata":
            candidates.extend((f"metadata.{k.text()}", v) for k, v in value.items())
        elif name in booleans:
            continue
        elif value.kind == "scalar":
            candidates.append((name, value))
    proofs = 0
    for label, node in candidates:
        node = node.resolved()
        if node.kind != "scalar" or node.style is not None or node.explicit_tag:
            continue
        if node.tag not in ("bool", "int", "float", "null", "timestamp"):
            continue
        if node.tag == "null" and label.startswith("metadata."):
            # the specification's metadata values are strings: `author: null`, `~` or an
            # empty value is a key without one, which loaders drop or stringify ("None")
            shown = f"{node.value!r}, which YAML reads as null" if node.value else "empty"
            yield Finding(
                f"{label} is {shown}; metadata values are strings: give it a value or"
                " remove the key",
                span=node.span if node.value else _key_span(fm, label),
                impact={"agentskills": impact(Outcome.DEGRADED)},
            )
            continue
        if node.tag == "null" and (label not in _STRING_FIELDS or not node.value):
            continue  # an empty field is not a typing accident; the field's rule reports it
        kind = {
            "bool": "a boolean",
            "int": "an integer",
            "float": "a number",
            "null": "null",
            "timestamp": "a date",
        }[node.tag]
        select: dict[str, Impact] = {"agentskills": impact(Outcome.DEGRADED)}
        # YAML 1.2 loaders read `yes`, `on` and dates as strings; numbers and null are not
        yaml12_text = node.tag in ("timestamp",) or (
            node.tag == "bool" and node.value.strip().lower() not in ("true", "false")
        )
        for t in TARGETS.values():
            if label in t.string_fields and (t.yaml11 or not yaml12_text):
                select[t.name] = impact(Outcome.REJECTED)
        # each fix is proved by parsing the edited frontmatter: past _MAX_PROOFS a file of
        # thousands of such values would take quadratic time; --fix proves the rest in its
        # next rounds
        fix = quote_scalar(skill.doc, fm, node) if proofs < _MAX_PROOFS else None
        proofs += 1
        yield Finding(
            f"{label}: {node.value!r} is read as {kind} by YAML 1.1 loaders; quote it:"
            f' "{node.value}"',
            span=node.span,
            impact=select,
            fix=fix,
        )


_MAX_PROOFS = 50  # SK112 fixes proved (and offered) per file in one lint


def _key_span(fm: Frontmatter, label: str) -> Span:
    """The span of the key ``metadata.<key>`` (an empty value has no span of its own)."""
    wanted = label.partition(".")[2]
    field_key, value = fm.fields["metadata"]
    for key, _inner in value.items():
        if key.text() == wanted:
            return key.span
    return field_key.span


# --- the fixes of SK112 and SK108 (applied by fix.py) -----------------------------------


def _path_of(fm: Frontmatter, node: Node) -> tuple[str, ...] | None:
    for name, (_key, value) in fm.fields.items():
        if value is node:
            return (name,)
        if name == "metadata":
            for key, inner in value.items():
                text = key.text()
                if inner is node and isinstance(text, str):
                    return ("metadata", text)
    return None


def quote_scalar(doc: Document | None, fm: Frontmatter, node: Node) -> Fix | None:
    """SK112: ``yes`` -> ``"yes"``: the value becomes the text as written."""
    if (
        doc is None
        or node.kind != "scalar"
        or node.style is not None
        or node.anchor
        or node.explicit_tag
        or node.tag in ("str", "null")
    ):
        return None
    path = _path_of(fm, node)
    text = line_text(doc, node.span)
    offsets = span_offsets(doc, node.span)
    if path is None or text is None or text != node.value or offsets is None:
        return None
    if not raw_matches(doc, *offsets, text):
        return None

    def expect(values: Values) -> Values:
        holder = values
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = node.value
        return values

    replacement = json.dumps(node.value, ensure_ascii=False).encode("utf-8")
    return proven_fix(doc, *offsets, replacement, f"quote {node.value!r}", expect)


def _movable_line(doc: Document, fm: Frontmatter, name: str) -> int | None:
    """The line of ``name: value`` when it can move as one whole line, else None."""
    key, value = fm.fields[name]
    duplicated = any(k.text() == name for k, _v, _e in fm.duplicates)
    if (
        duplicated
        or key.kind != "scalar"
        or key.style is not None
        or key.anchor
        or key.explicit_tag
        or key.span.start.column != 1
        or value.kind != "scalar"
        or value.anchor
        or value.explicit_tag
        or value.style in ("|", ">")
        or value.span.end.line != key.span.start.line
    ):
        return None
    return key.span.start.line


def move_to_metadata(
    doc: Document | None, fm: Frontmatter, names: Iterable[str]
) -> tuple[Fix | None, list[str]]:
    """SK108: move top-level ``key: scalar`` lines under ``metadata`` in one edit.

    Returns the fix and the names it moves. ``metadata`` must be absent (it is added at the
    end of the frontmatter) or a non-empty block mapping (the lines join it with its
    indentation, after its last entry).
    """
    if doc is None:
        return None, []
    root = fm.root.resolved() if fm.root is not None else None
    if fm.close_line is None or root is None or root.kind != "mapping" or root.flow:
        return None, []
    meta_pair = fm.fields.get("metadata")
    existing: set[str] = set()
    if meta_pair is None:
        indent = "  "
        insert_line = fm.close_line
    else:
        meta_key, meta = meta_pair
        if (
            meta.kind != "mapping"
            or meta.flow
            or meta.anchor
            or meta.explicit_tag
            or not meta.value
            or any(m.text() == "metadata" for m, _v, _e in fm.duplicates)
        ):
            return None, []
        columns = {k.span.start.column for k, _v in meta.value}
        if len(columns) != 1 or min(columns) <= 1:
            return None, []
        indent = " " * (min(columns) - 1)
        existing = {str(k.text()) for k, _v in meta.value}
        last_value = meta.value[-1][1]
        if last_value.kind == "scalar" and last_value.span.start.line == last_value.span.end.line:
            insert_line = last_value.span.end.line + 1
        else:  # the last entry's extent is unclear: join as the first entry instead
            header = doc.lines[meta_key.span.start.line - 1][meta_key.span.end.column - 1 :]
            rest = header.lstrip(" \t")
            if not rest.startswith(":") or rest[1:].strip(" \t")[:1] not in ("", "#"):
                return None, []
            insert_line = meta_key.span.start.line + 1
    moved: dict[int, str] = {}
    for name in dict.fromkeys(names):
        if name in existing or name not in fm.fields or name == "metadata":
            continue
        line = _movable_line(doc, fm, name)
        if line is not None:
            moved[line] = name
    if not moved:
        return None, []
    lines = sorted(moved)
    starts: dict[int, int] = {}  # byte offset of each line involved, and of the next one
    for n in range(min(*lines, insert_line), max(*lines, insert_line) + 2):
        offset = line_start(doc, n)
        if offset is None:
            return None, []
        starts[n] = offset
    raw = doc.raw

    def raw_line(n: int) -> bytes:
        return raw[starts[n] : starts[n + 1]]

    eol = b"\r\n" if raw_line(lines[0]).endswith(b"\r\n") else b"\n"
    block = b"".join(indent.encode() + raw_line(n) for n in lines)
    if meta_pair is None:
        block = b"metadata:" + eol + block
    low, high = min(lines[0], insert_line), max(lines[-1] + 1, insert_line)
    out = bytearray()
    for n in range(low, high):
        if n == insert_line:
            out += block
        if n not in moved:
            out += raw_line(n)
    if insert_line == high:
        out += block
    names_moved = [moved[n] for n in lines]

    def expect(values: Values) -> Values:
        meta = values.get("metadata")
        meta = dict(meta) if isinstance(meta, dict) else {}
        for name in names_moved:
            meta[name] = values.pop(name)
        values["metadata"] = meta
        return values

    # every moved key's diagnostic carries this description: name a few, not 20,000
    shown = ", ".join(repr(n) for n in names_moved[:5])
    if len(names_moved) > 5:
        shown += f" and {len(names_moved) - 5:,} more keys"
    fix = proven_fix(
        doc, starts[low], starts[high], bytes(out), f"move {shown} under 'metadata'", expect
    )
    return (fix, names_moved) if fix is not None else (None, [])
