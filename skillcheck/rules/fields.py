"""SK4xx: the optional fields (`compatibility`, `metadata`, `allowed-tools`, `license`) and
fields a target documents."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Any

from skillcheck.analysis.edits import Values, proven_fix, scalar_texts, span_offsets
from skillcheck.analysis.paths import Tree, has_scheme, show, tree_of
from skillcheck.analysis.tools import comma_items, first_comma, split_tools
from skillcheck.rules.base import (
    Context,
    Option,
    key_span,
    rule,
    usable_frontmatter,
    value_span,
)
from skillcheck.schemas import load_frontmatter_schema
from skillcheck.source.display import shorten
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
from skillcheck.targets import TARGETS, impact, impacts, where


@rule(
    "SK401",
    "compatibility-invalid",
    Severity.ERROR,
    "`compatibility` is not a string of 1–500 characters.",
    what="""
        Checks that `compatibility`, when present, is text of 1 to 500 characters.
    """,
    why="""
        The specification allows 1–500 characters of environment requirements. skills-ref and
        claude.ai reject a longer value or one that is not a string; an empty value is what
        the spec forbids and skills-ref lets through.
    """,
    bad="""
        compatibility:
          python: "3.11"
    """,
    good="""
        compatibility: Requires Python 3.11+ and network access.
    """,
)
def compatibility_invalid(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    node = fm.node("compatibility") if fm else None
    if fm is None or node is None:
        return
    node = node.resolved()
    if node.kind != "scalar":
        yield Finding(
            f"'compatibility' is a {node.kind}; write the requirements as one line of text",
            span=node.span,
            impact=impacts(
                {
                    "agentskills": Outcome.REJECTED,
                    "skills-ref": Outcome.REJECTED,
                    "claude-api": Outcome.REJECTED,
                }
            ),
        )
        return
    text = node.value if node.tag != "null" else ""
    if not text.strip():
        yield Finding(
            "'compatibility' is empty; remove the key or state the requirements",
            span=key_span(fm, "compatibility"),
            impact={"agentskills": impact(Outcome.REJECTED)},
        )
        return
    select = {
        t.name: Outcome.REJECTED
        for t in TARGETS.values()
        if t.compatibility_max is not None and len(text) > t.compatibility_max
    }
    if select:
        yield Finding(
            f"'compatibility' is {len(text)} characters; the limit is 500",
            span=node.span,
            impact=impacts(select),
        )


# metadata keys a known runtime defines as a map (OpenClaw's gating block): "make it a string"
# would break that runtime
_RUNTIME_MAPS = frozenset(ns for target in TARGETS.values() for ns in target.gating_namespaces)


@rule(
    "SK402",
    "metadata-invalid",
    Severity.WARNING,
    "`metadata` is not a mapping of string keys to string values.",
    what="""
        Checks that `metadata` is a mapping whose values are plain text. A `metadata` that is
        not a mapping is an error; nested lists or mappings inside it are warnings, except
        under a key a known runtime defines as a map (OpenClaw's gating block
        `metadata.openclaw` and its legacy aliases `clawdbot`, `clawdis`, `moltbot`): OpenClaw
        requires that map, and the `openclaw` target checks its contents (SK11xx).
        (Unquoted numbers and booleans are reported by SK112.)
    """,
    why="""
        The specification defines `metadata` as a map from strings to strings. Claude Code
        drops a `metadata` that is not a map; other loaders stringify nested values
        differently (Python `{'a': 1}` versus JSON).
    """,
    bad="""
        metadata:
          tags: [pdf, forms]
    """,
    good="""
        metadata:
          tags: "pdf forms"
    """,
)
def metadata_invalid(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    node = fm.node("metadata") if fm else None
    if node is None:
        return
    node = node.resolved()
    if node.kind != "mapping":
        if node.kind == "scalar" and node.tag == "null":
            return
        yield Finding(
            f"'metadata' is a {node.kind}; it must be a mapping of 'key: value' lines",
            span=node.span,
            impact=where(lambda t: t.metadata_not_map),
        )
        return
    for key, value in node.value:
        value = value.resolved()
        if key.resolved().tag == "merge":
            continue  # `<<: *base` merges a mapping in; SK109 reports the merge key itself
        if value.kind != "scalar" and key.text() not in _RUNTIME_MAPS:
            yield Finding(
                f"metadata.{key.text()} is a {value.kind}; metadata values must be strings",
                span=value.span,
                impact={"agentskills": impact(Outcome.DEGRADED)},
            )


@rule(
    "SK403",
    "allowed-tools-format",
    Severity.WARNING,
    "`allowed-tools` is not a space-separated string.",
    what="""
        Checks that `allowed-tools` is one string of tool patterns separated by spaces, as the
        specification defines it: `Bash(git:*) Read`. A YAML list or commas are reported.

        A list or comma form that holds a tool with a space in it (`Bash(npx expo *)`, an MCP
        tool `Azure MCP/docs`) is only an info finding, and the fix leaves it: a
        space-separated string cannot hold such a tool for loaders that split on every space,
        and Claude Code reads the list as it is.
    """,
    why="""
        The spec's form is a space-separated string. Claude Code also accepts lists and commas,
        but loaders that follow the spec split on spaces and see `Read,` or a list's Python
        form, so the pre-approval silently does not apply.
    """,
    bad="""
        allowed-tools: [Read, Grep]
    """,
    good="""
        allowed-tools: Read Grep
    """,
    fixable=True,
)
def allowed_tools_format(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    node = fm.node("allowed-tools") if fm else None
    if node is None:
        return
    node = node.resolved()
    select = {"agentskills": impact(Outcome.DEGRADED)}
    if node.kind == "sequence":
        # a target that refuses the list form (gh skill publish) rejects it even when one
        # tool holds a space
        select |= where(lambda t: t.list_allowed_tools if t.list_allowed_tools else None)
        items = [item.text() or "" for item in node.value]
        spaced = _spaced(items)
        if spaced is not None:
            yield _keep_form("a list", spaced, node.span, refused=select)
            return
        yield Finding(
            "'allowed-tools' is a list; the specification wants one space-separated string",
            span=node.span,
            impact=select,
            help=f"allowed-tools: {' '.join(items)}",
            fix=allowed_tools_string(skill.doc, fm, items),
        )
    elif node.kind == "mapping":
        yield Finding(
            "'allowed-tools' is a mapping; write the tools as one space-separated string",
            span=node.span,
            impact={"agentskills": impact(Outcome.REJECTED)},
        )
    elif node.tag != "null" and _has_separator_comma(node.value):
        index = first_comma(node.value)
        # between commas a space may also separate two tools ("Read, Grep Glob"): only a
        # space inside parentheses or in an MCP tool path is surely part of one tool
        spaced = _spaced([t for t in comma_items(node.value) if "(" in t or "/" in t or "__" in t])
        if spaced is not None:
            yield _keep_form("comma-separated", spaced, value_span(node, index, 1))
            return
        yield Finding(
            "'allowed-tools' is separated by commas; the specification separates tools with spaces",
            span=value_span(node, index, 1),
            impact=select,
            help="allowed-tools: " + " ".join(split_tools(node.value)),
            fix=allowed_tools_string(skill.doc, fm, split_tools(node.value)),
        )


def _spaced(tools: list[str]) -> str | None:
    """The first tool with a space in it (`Bash(npx expo *)`), which no space-separated
    string can hold: loaders that follow the spec split on every space."""
    return next((t for t in tools if any(c.isspace() for c in t.strip())), None)


def _keep_form(
    form: str, tool: str, span: Span, refused: dict[str, Impact] | None = None
) -> Finding:
    return Finding(
        f"'allowed-tools' is {form}, not the specification's space-separated string, but"
        f" {tool.strip()!r} contains a space that such a string would split; keep this form"
        " (Claude Code reads lists and commas)",
        span=span,
        impact={"agentskills": impact(Outcome.DEGRADED, Severity.INFO)}
        | {k: v for k, v in (refused or {}).items() if k != "agentskills"},
    )


def _has_separator_comma(value: str) -> bool:
    return first_comma(value) >= 0


@rule(
    "SK404",
    "license-invalid",
    Severity.WARNING,
    "`license` is not a short string.",
    what="""
        Checks that `license` is a short text: a licence name (`Apache-2.0`) or the name of a
        bundled licence file (`LICENSE.txt`), at most 200 characters.
    """,
    why="""
        The specification asks for a name or a file reference, kept short; a pasted licence
        text costs catalog tokens in every runtime that lists it, and a list or mapping is not
        a licence name to anyone.
    """,
    bad="""
        license: |
          Permission is hereby granted, free of charge, to any person obtaining a copy ...
    """,
    good="""
        license: MIT (see LICENSE.txt)
    """,
)
def license_invalid(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    node = fm.node("license") if fm else None
    if fm is None or node is None:
        return
    node = node.resolved()
    if node.kind != "scalar":
        yield Finding(
            f"'license' is a {node.kind}; give a licence name or a file name",
            span=node.span,
            impact={"agentskills": impact(Outcome.DEGRADED)},
        )
    elif node.tag == "null" or not node.value.strip():
        yield Finding(
            "'license' is empty; give a licence name or remove the key",
            span=key_span(fm, "license"),
            impact={"agentskills": impact(Outcome.DEGRADED)},
        )
    elif len(node.value) > 200:
        yield Finding(
            f"'license' is {len(node.value)} characters; name the licence and ship its text in a"
            " file such as LICENSE.txt",
            span=node.span,
            impact={"agentskills": impact(Outcome.DEGRADED)},
        )


_BOOL_WORDS = {"true", "false", "yes", "no", "on", "off", "1", "0"}
_ENUMS = {
    "effort": {"low", "medium", "high", "xhigh", "max"},
    "context": {"fork"},
    "shell": {"bash", "powershell"},
}


@rule(
    "SK405",
    "target-field-invalid",
    Severity.WARNING,
    "A field a target documents has a value that target does not accept.",
    what="""
        Checks the values of runtime-specific fields: Claude Code's booleans
        (`disable-model-invocation`, `user-invocable`, `background`: true/false/yes/no/on/off/
        1/0), `effort` (`low|medium|high|xhigh|max`), `context` (`fork`), `shell`
        (`bash|powershell`), and the same booleans where Copilot and Cursor document them.
    """,
    why="""
        A value the runtime does not understand is ignored: `user-invocable: maybe` leaves the
        default in place and the author believes otherwise.
    """,
    bad="""
        effort: extreme
    """,
    good="""
        effort: high
    """,
)
def target_field_invalid(skill: Skill, ctx: Context) -> Iterator[Finding]:
    fm = usable_frontmatter(skill)
    if fm is None:
        return
    for name, (_key, node) in fm.fields.items():
        node = node.resolved()
        owners = [t for t in TARGETS.values() if name in t.boolean_fields]
        if owners:
            text = node.text() if node.kind == "scalar" else None
            word = text.strip().lower() if text is not None else None
            # strict loaders take only YAML booleans (`must be a boolean`): `yes` is refused
            strict = {t.name: impact(Outcome.REJECTED) for t in owners if t.strict_booleans}
            lenient = {t.name: impact(Outcome.DEGRADED) for t in owners if not t.strict_booleans}
            if word in ("true", "false"):
                select = {}
            elif word in _BOOL_WORDS:
                select = strict
            else:
                select = strict | lenient
            if select:
                shown = text if text is not None else node.kind
                yield Finding(
                    f"{name}: {shown!r} is not a boolean; write true or false",
                    span=node.span,
                    impact=select,
                )
        elif name in _ENUMS and "claude-code" in TARGETS:
            text = node.text() if node.kind == "scalar" else None
            allowed = _ENUMS[name]
            if text is None or text.strip() not in allowed:
                shown = text if text is not None else node.kind
                yield Finding(
                    f"{name}: {shown!r} is not one of {', '.join(sorted(allowed))}",
                    span=node.span,
                    impact={"claude-code": Impact(Outcome.DEGRADED, Severity.WARNING)},
                )


# --- SK406: the team's own JSON Schema ----------------------------------------------------


def _schema_node(fm: Frontmatter, path: list[Any]) -> tuple[Node | None, Node | None]:
    """(key node, value node) at a JSON path of ``fm.values``; the deepest found."""
    key: Node | None = None
    node: Node | None = fm.root
    for step in path:
        current = node.resolved() if node is not None else None
        if current is None:
            break
        if current.kind == "mapping":
            pair = None
            for k, v in current.items():  # PyYAML keeps the last of duplicate keys
                if k.text() == step or (not isinstance(step, str) and k.text() == str(step)):
                    pair = (k, v)
            if pair is None:
                break
            key, node = pair
        elif current.kind == "sequence" and isinstance(step, int) and step < len(current.value):
            key, node = None, current.value[step]
        else:
            break
    return key, node


def _extra_keys(error: Any) -> list[str]:
    import re

    schema = error.schema if isinstance(error.schema, dict) else {}
    known = set(schema.get("properties", {}))
    patterns = list(schema.get("patternProperties", {}))
    instance = error.instance if isinstance(error.instance, dict) else {}
    return [
        k for k in instance if k not in known and not any(re.search(p, str(k)) for p in patterns)
    ]


@rule(
    "SK406",
    "frontmatter-schema",
    Severity.ERROR,
    "The frontmatter does not satisfy the team's `frontmatter-schema`.",
    what="""
        Validates the frontmatter's values (as a YAML 1.1 loader reads them) against the JSON
        Schema named by the `frontmatter-schema` option, and reports each violation at the
        line and column of the offending value; a missing required key is reported at its
        parent's key (or at the opening `---` for a top-level key). Runs only when the option
        is set.
    """,
    why="""
        Teams have conventions the specification does not: an owner in `metadata`, a licence
        from an approved list, a version format. Checking them at commit time keeps every
        skill in the catalog answerable to someone, without a second tool.
    """,
    bad="""
        # skillcheck.toml: frontmatter-schema = "skill.schema.json", which requires
        # metadata.owner
        ---
        name: pdf-tools
        description: Extracts text from PDF files. Use when the user asks about PDFs.
        metadata:
          version: "1.0"
        ---
    """,
    good="""
        ---
        name: pdf-tools
        description: Extracts text from PDF files. Use when the user asks about PDFs.
        metadata:
          version: "1.0"
          owner: data-team
        ---
    """,
    options=[
        Option(
            "frontmatter-schema",
            {"type": "string"},
            None,
            "Path (relative to the configuration file) of a JSON Schema the frontmatter must"
            " also satisfy.",
        )
    ],
    notes="""
        Any draft `jsonschema` supports (2020-12 when `$schema` is absent). A missing or
        invalid schema file is a configuration error (exit 2). skillcheck ships editor schemas
        in `skillcheck/schemas/frontmatter*.schema.json` to start from.
    """,
)
def frontmatter_schema(skill: Skill, ctx: Context) -> Iterator[Finding]:
    path = ctx.option("frontmatter-schema")
    fm = usable_frontmatter(skill) if path else None
    if fm is None or fm.root is None:
        return
    import os

    validator = load_frontmatter_schema(path)
    name = os.path.basename(path)
    errors = sorted(validator.iter_errors(fm.values), key=lambda e: list(map(str, e.path)))
    opening = Span(Pos(1, 1), Pos(1, 4))
    for error in errors:
        steps = list(error.absolute_path)
        where_ = "'" + ".".join(str(s) for s in steps) + "'" if steps else "the frontmatter"
        key, node = _schema_node(fm, steps)
        described = error.schema.get("description") if isinstance(error.schema, dict) else None
        help_ = shorten(described, 200) if described else None
        if error.validator == "additionalProperties":
            mapping = node.resolved() if steps and node is not None else fm.root.resolved()
            for extra in _extra_keys(error):
                found = [k for k, _v in mapping.items() if k.text() == str(extra)]
                yield Finding(
                    f"{where_} has key {extra!r}, which {name} does not allow; remove or rename it",
                    span=found[-1].span if found else (key.span if key else opening),
                )
            continue
        if error.validator == "required":
            span = key.span if steps and key is not None else opening
            message = f"{where_}: {error.message}; add it ({name} requires it)"
        else:
            span = node.span if steps and node is not None else opening
            message = f"{where_}: {shorten(error.message, 120)} ({name}); change the value to match"
        yield Finding(message, span=span, help=help_)


@rule(
    "SK407",
    "path-field-missing",
    Severity.ERROR,
    "A frontmatter field configured as a path names no file in the skill.",
    what="""
        For each field listed in the `path-fields` option, checks that its value is a relative
        path to a file inside the skill. Fields are dotted paths into the frontmatter, with
        `[]` for the items of a list: `license`, `metadata.icon`, `resource_configs[].file`.
        A missing field is not reported; a value that is a URL, an absolute path, leaves the
        skill or names nothing is.
    """,
    why="""
        Teams point frontmatter fields at bundled files (`license: LICENSE.txt`, a backend's
        per-resource configuration files). The loader that reads the field fails, or silently
        goes without, when the file is not shipped inside the skill.
    """,
    bad="""
        # skillcheck.toml: path-fields = ["license", "resource_configs[].file"]
        license: LICENSE.txt            # no such file in the skill
        resource_configs:
          - file: ../shared/db.yaml      # outside the skill
    """,
    good="""
        license: LICENSE.txt            # my-skill/LICENSE.txt exists
        resource_configs:
          - file: assets/db.yaml
    """,
    options=[
        Option(
            "path-fields",
            {"type": "array", "items": {"type": "string"}},
            [],
            "Frontmatter fields (dotted paths, [] for lists) whose values are paths that must"
            " exist inside the skill.",
        )
    ],
)
def path_field_missing(skill: Skill, ctx: Context) -> Iterator[Finding]:
    # resolved inside the skill exactly as links are (analysis.paths: no file system access)

    yield from path_field_findings(skill, ctx)


# --- SK407: the path-fields check ---------------------------------------------------


def _field_values(node: Node | None, steps: list[str], trail: str) -> Iterator[tuple[str, Node]]:
    """The scalar nodes a dotted path with ``[]`` names, with a readable trail."""
    if node is None:
        return
    node = node.resolved()
    if not steps:
        yield trail, node
        return
    step, rest = steps[0], steps[1:]
    if step == "[]":
        if node.kind == "sequence":
            for i, item in enumerate(node.value):
                yield from _field_values(item, rest, f"{trail}[{i}]")
        return
    if node.kind == "mapping":
        yield from _field_values(node.get(step), rest, f"{trail}.{step}" if trail else step)


def _steps(spec: str) -> list[str]:
    steps: list[str] = []
    for part in spec.split("."):
        name = part
        count = 0
        while name.endswith("[]"):
            name = name[:-2]
            count += 1
        if name:
            steps.append(name)
        steps.extend(["[]"] * count)
    return steps


def path_field_findings(skill: Skill, ctx: Context) -> Iterator[Finding]:
    """SK407's check (the rule is registered with the SK4xx fields): every value named by
    the ``path-fields`` option must resolve to a file inside the skill."""
    specs = ctx.option("path-fields") or []
    fm = usable_frontmatter(skill) if specs else None
    if fm is None or fm.root is None:
        return
    tree = tree_of(skill)
    for spec in specs:
        for trail, node in _field_values(fm.root, _steps(spec), ""):
            if node.kind != "scalar" or node.tag == "null":
                continue
            value = str(node.value).strip()
            if not value:
                continue
            span = value_span(node)
            problem = _path_problem(tree, value)
            if problem:
                yield Finding(f"{trail}: {show(value)} {problem}", span=span)


def _path_problem(tree: Tree, value: str) -> str | None:
    if has_scheme(value) or value.startswith("//"):
        return "is a URL, not a file inside the skill; bundle the file and give its path"
    res = tree.resolve(value.replace("\\", "/"))
    if "\\" in value:
        return "uses backslashes; write the path with forward slashes"
    if res.status == "outside":
        return (
            "is outside the skill; installed and packaged copies do not contain it: put the"
            " file inside the skill"
        )
    if res.status == "missing":
        hint = ""
        if res.suggestion is not None:
            parent = res.missing.rpartition("/")[0]
            hint = f" (did you mean {show(posixpath.join(parent, res.suggestion))}?)"
        return f"is not in the skill{hint}; add the file or fix the path"
    if res.status == "loop":
        return "goes through a symlink loop"
    if res.status == "found" and res.case:
        return f"differs in case from the file on disk {show(res.rel)}; write it as on disk"
    if res.status == "found" and res.kind == "dir":
        return "is a folder; name a file"
    return None


# --- the fix of SK403 (applied by fix.py) -----------------------------------------------


def allowed_tools_string(
    doc: Document | None, fm: Frontmatter | None, tools: list[str]
) -> Fix | None:
    """SK403: rewrite a list or a comma-separated ``allowed-tools`` as one spaced string."""

    if doc is None or fm is None:
        return None
    pair = fm.fields.get("allowed-tools")
    if pair is None or not tools or any(not t for t in tools):
        return None
    key, node = pair
    joined = " ".join(tools)
    if split_tools(joined) != tools or any(any(c.isspace() for c in t) for t in tools):
        # a tool with a space (`Bash(npx expo *)`, `Azure MCP/docs`): loaders that follow the
        # spec split the string on every space, parentheses or not
        return None

    def expect(values: Values) -> Values:
        values["allowed-tools"] = joined
        return values

    if node.anchor or node.explicit_tag:
        return None
    if node.kind == "sequence":
        items = node.value
        if not items or any(i.kind != "scalar" or i.anchor or i.explicit_tag for i in items):
            return None
        # from just after the key's ':' to the end of the list
        colon_line = doc.lines[key.span.end.line - 1] if key.span.end.line <= len(doc.lines) else ""
        rest = colon_line[key.span.end.column - 1 :]
        colon = len(rest) - len(rest.lstrip(" \t"))
        if not rest[colon:].startswith(":"):
            return None
        start_pos = Pos(key.span.end.line, key.span.end.column + colon + 1)
        end_pos = node.span.end if node.flow else items[-1].span.end
        offsets = span_offsets(doc, Span(start_pos, end_pos))
        if offsets is None or b"#" in doc.raw[offsets[0] : offsets[1]]:
            return None  # never drop a comment
        candidates = [b" " + text for text in scalar_texts(joined, None)]
    elif node.kind == "scalar" and node.tag != "null":
        offsets = span_offsets(doc, node.span)
        if offsets is None:
            return None
        candidates = scalar_texts(joined, node.style if node.style in ("'", '"') else None)
    else:
        return None
    for replacement in candidates:
        fix = proven_fix(
            doc, *offsets, replacement, "write allowed-tools as one space-separated string", expect
        )
        if fix is not None:
            return fix
    return None
