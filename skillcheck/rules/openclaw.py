"""SK410: the gating block OpenClaw reads from `metadata.openclaw`.

OpenClaw (formerly Clawdbot/Moltbot; registry ClawHub) decides at load time whether a skill is
eligible from `metadata.openclaw` (or a legacy alias, see ``Target.gating_namespaces``):
`os`, `requires.bins/anyBins/env/config`, `always`, `primaryEnv`, and offers the `install`
entries as installers. It never reports a value it does not understand; it drops it. What
this module knows of that reading comes from openclaw/openclaw and openclaw/docs as the search
index holds them:

- src/agents/skills/config.ts (shouldIncludeSkill) and the shared evaluateRuntimeEligibility:
  `os` is compared, as is, with Node's `process.platform` (`darwin`, `linux`, `win32` ...),
  so `macos` matches no host; `always: true` skips every gate but `os`; each `requires.bins`
  entry is looked up as a file name in every `PATH` folder; each `requires.env` entry must be
  a set environment variable (or configured for the skill).
- src/shared/frontmatter.ts (@0cadd180): the block is the first of the namespaces holding an
  object; `requires` must be an object and only its four keys are read; list values may be
  arrays or comma-separated strings; `install` must be an array, and an entry whose `kind`
  (or `type`) is not `brew`, `node`, `go`, `uv` or `download` is dropped.
- src/agents/skills/frontmatter.ts (@00d3a237): an install entry is also dropped when the
  field its kind needs is missing or unsafe (`formula`/`cask`, `package`, `module`, an http(s)
  `url`).
- src/markdown/frontmatter.ts (@0774ff55): the one-key-per-line reader and YAML are merged;
  a `metadata:` whose whole block is one indented line is taken as that line's text (a
  guard against `key: a: b` being read as a mapping), which is not JSON, so the block is lost.
- docs/tools/skills.md (openclaw/docs@fec386e9): the fields, `os` values `darwin`, `linux`,
  `win32`, the install kinds and the fields each needs.

Only a value that makes the skill never eligible (an `os` list with no platform OpenClaw can
match, a required binary or variable that can never be found) is an error; a gate or
installer that is silently lost is a warning. The findings concern the `openclaw` target only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from skillcheck.rules.base import Context, rule, usable_frontmatter, value_span
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import (
    Finding,
    Frontmatter,
    Impact,
    Node,
    Outcome,
    Pos,
    Severity,
    Skill,
    Span,
)
from skillcheck.targets import TARGETS, impact

_TARGET = "openclaw"

# Node's process.platform values; the docs name the first three
_DOCUMENTED_OS = ("darwin", "linux", "win32")
_PLATFORMS = frozenset(
    {*_DOCUMENTED_OS, "aix", "android", "freebsd", "haiku", "netbsd", "openbsd", "sunos", "cygwin"}
)
_OS_MEANT = {
    "macos": "darwin",
    "mac": "darwin",
    "osx": "darwin",
    "macosx": "darwin",
    "apple": "darwin",
    "windows": "win32",
    "win": "win32",
    "win64": "win32",
    "ubuntu": "linux",
    "debian": "linux",
    "gnu/linux": "linux",
}
_REQUIRES = ("bins", "anyBins", "env", "config")
_REQUIRES_MEANT = {
    "bin": "bins",
    "binaries": "bins",
    "binary": "bins",
    "commands": "bins",
    "cli": "bins",
    "anybins": "anyBins",
    "any_bins": "anyBins",
    "any-bins": "anyBins",
    "envs": "env",
    "environment": "env",
    "env_vars": "env",
    "envvars": "env",
    "envVars": "env",
    "configs": "config",
}
# kind -> the fields one of which it needs
_INSTALL_FIELDS: dict[str, tuple[str, ...]] = {
    "brew": ("formula", "cask"),
    "node": ("package",),
    "go": ("module",),
    "uv": ("package",),
    "download": ("url",),
}
_KIND_MEANT = {
    "npm": "node",
    "pnpm": "node",
    "yarn": "node",
    "bun": "node",
    "npx": "node",
    "pip": "uv",
    "pipx": "uv",
    "python": "uv",
    "homebrew": "brew",
    "cask": "brew",
    "curl": "download",
    "url": "download",
    "binary": "download",
}
# keys of the block that gate or install; a near miss of one of them is a lost gate
_GATING_KEYS = ("requires", "install", "primaryEnv", "always", "skillKey")
# documented keys that do not gate (docs/tools/skills.md, clawhub/skill-format.md)
_OTHER_KEYS = frozenset({"emoji", "homepage", "envVars", "nix", "config", "os"})
# brew/go/uv values OpenClaw accepts (frontmatter.ts normalizeSafe*)
_BREW = LazyPattern(r"^[A-Za-z0-9][A-Za-z0-9@+._/-]*$")
_GO = LazyPattern(r"^[A-Za-z0-9][A-Za-z0-9._~+\-/]*(?:@[A-Za-z0-9][A-Za-z0-9._~+\-/]*)?$")
_UV = LazyPattern(r"^[A-Za-z0-9][A-Za-z0-9._\-\[\]=<>!~+,]*$")
# a `bins` entry that no file on PATH can be named: a version constraint, words, a path
_NOT_A_BIN = LazyPattern(r"[\s<>=()/\\]")
_NOT_AN_ENV = LazyPattern(r"[\s$=]")
_TRUE_FALSE = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})


@dataclass
class _Val:
    """A JSON-like value with where it is written: from YAML nodes (exact spans) or from a
    JSON string value (every part at the string's span)."""

    kind: str  # "mapping", "sequence", "scalar"
    span: Span
    pairs: list[tuple[str, Span, _Val]] = field(default_factory=list)
    items: list[_Val] = field(default_factory=list)
    text: str = ""  # a scalar's text
    type: str = "str"  # a scalar's type as YAML 1.2 core / JSON read it: str, bool, num, null

    def get(self, key: str) -> _Val | None:
        for name, _span, value in self.pairs:
            if name == key:
                return value
        return None


def _from_node(node: Node) -> _Val:
    node = node.resolved()
    if node.kind == "mapping":
        pairs = [
            (k.text() or "", k.span, _from_node(v)) for k, v in node.value if k.text() is not None
        ]
        return _Val("mapping", node.span, pairs=pairs)
    if node.kind == "sequence":
        return _Val("sequence", node.span, items=[_from_node(v) for v in node.value])
    text = node.value if isinstance(node.value, str) else ""
    kind = "str"
    if node.style is None and not node.explicit_tag:
        # OpenClaw reads YAML with the 1.2 core schema: `yes`/`on` are text there
        if text in _TRUE_FALSE:
            kind = "bool"
        elif text in ("", "~", "null", "Null", "NULL"):
            kind = "null"
        elif node.tag in ("int", "float"):
            kind = "num"
    return _Val("scalar", value_span(node), text=text, type=kind)


def _from_json(value: Any, span: Span) -> _Val:
    if isinstance(value, dict):
        return _Val(
            "mapping", span, pairs=[(k, span, _from_json(v, span)) for k, v in value.items()]
        )
    if isinstance(value, list):
        return _Val("sequence", span, items=[_from_json(v, span) for v in value])
    if isinstance(value, bool):
        return _Val("scalar", span, text=str(value).lower(), type="bool")
    if value is None:
        return _Val("scalar", span, type="null")
    if isinstance(value, (int, float)):
        return _Val("scalar", span, text=str(value), type="num")
    return _Val("scalar", span, text=str(value))


def _metadata(fm: Frontmatter) -> _Val | None:
    """`metadata` as OpenClaw sees it: a YAML mapping, or a string holding JSON."""
    node = fm.node("metadata")
    if node is None:
        return None
    node = node.resolved()
    if node.kind == "mapping":
        return _from_node(node)
    if node.kind == "scalar" and node.tag == "str" and node.value.lstrip().startswith("{"):
        try:
            parsed = json.loads(node.value)
        except ValueError:
            return None  # JSON5 (comments, trailing commas): not read here, not guessed at
        if isinstance(parsed, dict):
            return _from_json(parsed, node.span)
    return None


def _line_metadata(skill: Skill) -> _Val | None:
    """`metadata: {...}` on one line of a frontmatter YAML could not parse: OpenClaw's line
    reader keeps that line's value and parses it as JSON5 (read here when it is JSON)."""
    fm = skill.doc.frontmatter if skill.doc else None
    if fm is None or fm.close_line is None or fm.error is None or skill.doc is None:
        return None
    for row in range(fm.open_line, fm.close_line - 1):  # 0-based rows between the fences
        match = re.match(r"^metadata:[ \t]*(\{.*\})[ \t]*$", skill.doc.lines[row])
        if match is None:
            continue
        try:
            parsed = json.loads(match.group(1))
        except ValueError:
            return None
        if not isinstance(parsed, dict):
            return None
        span = Span(Pos(row + 1, match.start(1) + 1), Pos(row + 1, match.end(1) + 1))
        return _from_json(parsed, span)
    return None


def _block(metadata: _Val, namespaces: tuple[str, ...]) -> tuple[str, _Val] | None:
    """The namespace OpenClaw reads and its object: the first one holding a mapping."""
    for name in namespaces:
        value = metadata.get(name)
        if value is not None and value.kind == "mapping":
            return name, value
    return None


def _strings(value: _Val) -> list[_Val] | None:
    """The entries of a list value (an array, or one comma-separated string); None when
    OpenClaw reads the value as no list at all."""
    if value.kind == "sequence":
        return [v for v in value.items if v.kind == "scalar" and v.text.strip()]
    if value.kind == "scalar" and value.type != "null":
        parts = [p.strip() for p in value.text.split(",")]
        return [_Val("scalar", value.span, text=p) for p in parts if p]
    return None


def _names_only(value: _Val) -> bool:
    if value.kind == "sequence":
        return bool(value.items) and all(
            v.kind == "scalar" and v.type == "str" for v in value.items
        )
    return value.kind == "scalar" and value.type == "str" and bool(value.text.strip())


def _close(word: str, choices: tuple[str, ...]) -> list[str]:
    import difflib  # only for keys OpenClaw does not know

    return difflib.get_close_matches(word, choices, n=1, cutoff=0.8)


def _near(word: str, choices: tuple[str, ...], meant: dict[str, str] | None = None) -> str | None:
    if meant and word in meant:
        return meant[word]
    if meant and word.lower() in meant:
        return meant[word.lower()]
    import difflib  # only when a value is already wrong: a clean run never needs it

    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.75)
    if close:
        return close[0]
    lowered = {c.lower(): c for c in choices}
    return lowered.get(word.lower())


_LOST = impact(Outcome.DEGRADED)
_NEVER = impact(Outcome.DROPPED)


def _finding(message: str, span: Span, what: Impact, help_: str | None = None) -> Finding:
    return Finding(message, span=span, impact={_TARGET: what}, help=help_)


def _check_os(label: str, value: _Val, *, entry: bool) -> Iterator[Finding]:
    values = _strings(value)
    if values is None:
        yield _finding(
            f"{label} is a {value.kind}; OpenClaw ignores it, so the skill is not limited to"
            f" any platform. Write a list such as [{', '.join(_DOCUMENTED_OS)}]",
            value.span,
            _LOST,
        )
        return
    valid = [v for v in values if v.text in _PLATFORMS]
    for v in values:
        if v.text in _PLATFORMS:
            continue
        meant = _OS_MEANT.get(v.text.lower()) or (
            v.text.lower() if v.text.lower() in _PLATFORMS else None
        )
        hint = f"use {meant!r}" if meant else f"use one of {', '.join(_DOCUMENTED_OS)}"
        # `Darwin`: whether OpenClaw lower-cases the list is not certain, so never an error
        unsure = v.text.lower() in _PLATFORMS
        what = _LOST
        if entry:
            consequence = "this installer is never offered on that platform"
        elif valid:
            consequence = "the skill is not eligible on the platform it names"
        elif unsure:
            consequence = "the skill may never be eligible"
        else:
            consequence = "no host matches it, so OpenClaw never loads the skill"
            what = _NEVER
        yield _finding(
            f"{label}: {v.text!r} is not a platform name OpenClaw matches (it compares with"
            f" Node's process.platform: {', '.join(_DOCUMENTED_OS)}); {consequence}; {hint}",
            v.span,
            what,
        )


def _check_requires(label: str, value: _Val, *, always: bool) -> Iterator[Finding]:
    if value.kind == "sequence" and not value.items:
        return  # `requires: []`: no requirement either way
    if value.kind != "mapping":
        yield _finding(
            f"{label} is a {value.kind}; OpenClaw reads only an object with {', '.join(_REQUIRES)}"
            " and ignores this one, so the skill loads without its requirements",
            value.span,
            _LOST,
        )
        return
    for name, key_span, _sub in value.pairs:
        if name in _REQUIRES:
            continue
        meant = _near(name, _REQUIRES, _REQUIRES_MEANT)
        if meant:
            hint = f"; did you mean {meant!r}?"
        elif name == "os":
            hint = f"; move it to {label.rsplit('.', 1)[0]}.os"
        elif "optional" in name.lower():
            hint = "; ClawHub documents optional variables as envVars with required: false"
        else:
            hint = ", so it gates nothing"
        yield _finding(
            f"{label}.{name} is not a requirement OpenClaw reads (it knows"
            f" {', '.join(_REQUIRES)}) and is ignored{hint}",
            key_span,
            _LOST,
            help_=f"rename {name!r} to {meant!r}" if meant else None,
        )
    for name in _REQUIRES:
        sub = value.get(name)
        if sub is None:
            continue
        entries = _strings(sub)
        if entries is None:
            yield _finding(
                f"{label}.{name} is a {sub.kind}; OpenClaw reads a list of names and ignores"
                " it, so the skill loads without this requirement",
                sub.span,
                _LOST,
            )
            continue
        if name == "config" and sub.kind == "sequence":
            for item in sub.items:
                if item.kind == "mapping":
                    yield _finding(
                        f"{label}.config entry is an object; OpenClaw reads only config paths"
                        " written as text (such as 'browser.enabled') and skips it",
                        item.span,
                        _LOST,
                    )
        if always:
            continue  # `always: true` skips these gates: nothing is ever missing
        if name in ("bins", "anyBins"):
            bad = [e for e in entries if _NOT_A_BIN.search(e.text)]
            never = name == "bins" or len(bad) == len(entries)
            for e in bad:
                yield _finding(
                    f"{label}.{name}: {e.text!r} is not a program name: OpenClaw looks for a"
                    f" file of exactly that name in each PATH folder and never finds it"
                    + (
                        ", so the skill is never loaded"
                        if never
                        else ", so this alternative never counts"
                    )
                    + "; write the bare command name (such as 'python3') and put versions"
                    " and notes in the body",
                    e.span,
                    _NEVER if never else _LOST,
                )
        elif name == "env":
            for e in entries:
                if _NOT_AN_ENV.search(e.text):
                    yield _finding(
                        f"{label}.env: {e.text!r} is not an environment variable name:"
                        " OpenClaw requires a variable of exactly that name, which is never"
                        " set, so the skill is never loaded; list bare names such as"
                        " 'GITHUB_TOKEN' and explain alternatives in the body",
                        e.span,
                        _NEVER,
                    )


def _check_install(label: str, value: _Val) -> Iterator[Finding]:
    if value.kind == "mapping" and not value.pairs:
        return  # `install: {}`: no installer either way
    if value.kind != "sequence":
        yield _finding(
            f"{label} is a {value.kind}; OpenClaw reads a list of installer entries and"
            " ignores it. Write '- kind: brew' ... entries",
            value.span,
            _LOST,
        )
        return
    kinds = ", ".join(_INSTALL_FIELDS)
    for index, entry in enumerate(value.items):
        where = f"{label}[{index}]"
        if entry.kind != "mapping":
            yield _finding(
                f"{where} is a {entry.kind}; OpenClaw drops installer entries that are not"
                f" objects with a kind ({kinds})",
                entry.span,
                _LOST,
            )
            continue
        kind_key = "kind" if entry.get("kind") is not None else "type"
        kind_val = entry.get(kind_key)
        if kind_val is None or kind_val.kind != "scalar" or kind_val.type != "str":
            yield _finding(
                f"{where} has no 'kind'; OpenClaw drops the entry. Add 'kind:' with one of {kinds}",
                (kind_val or entry).span,
                _LOST,
            )
            continue
        kind = kind_val.text.strip().lower()
        if kind not in _INSTALL_FIELDS:
            meant = _near(kind, tuple(_INSTALL_FIELDS), _KIND_MEANT)
            if meant == "uv":  # `uv tool install`: right for a command, not for a library
                hint = "; a Python command-line tool installs with kind 'uv'"
            else:
                hint = f"; use {meant!r}" if meant else ""
            yield _finding(
                f"{where}.{kind_key}: {kind_val.text!r} is not an installer kind OpenClaw"
                f" knows ({kinds}); it drops the entry silently{hint}",
                kind_val.span,
                _LOST,
            )
            continue
        needed = _INSTALL_FIELDS[kind]
        if kind == "brew":
            present = [p for p in (entry.get(n) for n in needed) if p is not None]
        else:
            present = [p for p in (entry.get(needed[0]),) if p is not None]
        if not present:
            field_names = " or ".join(repr(n) for n in needed)
            yield _finding(
                f"{where} of kind {kind!r} has no {field_names}; OpenClaw drops the entry, so"
                " no installer is offered",
                kind_val.span,
                _LOST,
            )
            continue
        problem = _bad_install_value(kind, present[0])
        if problem:
            yield _finding(
                f"{where}: {problem}; OpenClaw drops the entry, so no installer is offered",
                present[0].span,
                _LOST,
            )
        os_val = entry.get("os")
        if os_val is not None:
            yield from _check_os(f"{where}.os", os_val, entry=True)


def _bad_install_value(kind: str, value: _Val) -> str | None:
    if value.kind != "scalar" or value.type != "str":
        shown = value.kind if value.kind != "scalar" else value.type
        return f"the {kind} installer's value is a {shown}, not text"
    text = value.text.strip()
    if not text or text.startswith("-"):
        return f"{value.text!r} is empty or starts with '-'"
    if kind == "brew" and (not _BREW.match(text) or ".." in text or "\\" in text):
        return f"{text!r} is not a Homebrew formula name (letters, digits, @+._/- only)"
    if kind == "go" and ("://" in text or not _GO.match(text)):
        return f"{text!r} is not a Go module path such as 'example.com/tool/cmd@v1.2.3'"
    if kind == "uv" and ("://" in text or not _UV.match(text)):
        return f"{text!r} is not a Python package spec such as 'ruff==0.6.0'"
    if kind == "download" and (re.search(r"\s", text) or not re.match(r"(?i)https?://\S", text)):
        return f"{text!r} is not an http(s) URL"
    return None


def _one_line_block(skill: Skill, fm: Frontmatter) -> Span | None:
    """The span of a `metadata:` block that is a single indented line not starting with `{`
    or `[`: OpenClaw's line reader keeps that line as the value, which is not JSON."""
    key = fm.key("metadata")
    node = fm.node("metadata")
    if key is None or node is None or skill.doc is None:
        return None
    lines = skill.doc.lines
    row = key.span.start.line - 1  # 0-based index of the `metadata:` line
    if key.span.start.column != 1 or row >= len(lines):
        return None
    match = re.match(r"^([\w-]+):\s*(.*)$", lines[row])
    if match is None or match.group(2).strip():
        return None
    end = (fm.close_line - 1) if fm.close_line else len(lines)
    block: list[str] = []
    i = row + 1
    while i < end and (lines[i] == "" or lines[i].startswith((" ", "\t"))):
        block.append(lines[i])
        i += 1
    text = "\n".join(block).strip()
    if not text or "\n" in text or text.startswith(("{", "[")) or text in ("|", ">"):
        return None
    line = next(n for n in range(row + 1, i) if lines[n].strip())
    indent = len(lines[line]) - len(lines[line].lstrip())
    return Span(Pos(line + 1, indent + 1), Pos(line + 1, len(lines[line].rstrip()) + 1))


@rule(
    "SK410",
    "openclaw-metadata",
    Severity.ERROR,
    "`metadata.openclaw` holds a value OpenClaw silently ignores or can never satisfy.",
    what="""
        For the `openclaw` target, reads the gating block OpenClaw takes from
        `metadata.openclaw` (or the legacy `metadata.clawdbot`, `metadata.clawdis`,
        `metadata.moltbot`: the first that holds an object) as OpenClaw does, whether it is
        written as one-line JSON, multi-line JSON or block YAML, and reports:

        - `os` values that are not Node platform names (`darwin`, `linux`, `win32`, ...):
          `macos` or `windows` match no host. An error when no value is a platform (the skill
          never loads), a warning otherwise;
        - `requires` that is not an object, keys other than `bins`, `anyBins`, `env`,
          `config` (a near miss is named), values that are not lists; a `bins` entry that no
          file on PATH can be named (`node>=18`, `google chrome`, `/usr/bin/jq`) and an `env`
          entry that is not a variable name (`GH_TOKEN or GITHUB_TOKEN`, `$API_KEY`) are
          errors, since such a requirement is never met;
        - `install` entries without a known `kind` (`brew`, `node`, `go`, `uv`, `download`;
          `npm` or `pip` are named with their replacement) or without the field their kind
          needs (`formula` or `cask`, `package`, `module`, an http(s) `url`);
        - `always` that is not a boolean, `primaryEnv` that is not text, gating keys written
          at the wrong level (`bins` beside `requires`) or misspelled (`require`);
        - a `metadata:` block written as a single indented line (`metadata:` then
          `  openclaw: {...}`), which OpenClaw's line reader keeps as plain text, losing the
          whole block.

        The findings concern OpenClaw only: run with `--target openclaw` (or `all`).
        OpenClaw loads skills from `<workspace>/skills`, `<workspace>/.agents/skills`,
        `~/.agents/skills`, `~/.openclaw/skills`, bundled skills and `skills.load.extraDirs`
        (highest precedence first), and installs them from ClawHub; `{baseDir}` in the body
        names the skill's folder.
    """,
    why="""
        OpenClaw filters skills at load time and never reports a value it does not
        understand: an unknown `os` excludes the skill on every host, a misspelled
        requirement or installer is dropped, and the skill then loads where its tools are
        missing or is never offered an installer. Nothing tells the author; the skill just
        never shows up, or fails when used. Only what makes the skill never load is an
        error; a lost gate or installer is a warning.

        Read from OpenClaw itself: openclaw/openclaw `src/agents/skills/config.ts`
        (eligibility), `src/shared/frontmatter.ts` @0cadd180 (the block, `requires`,
        `install`), `src/agents/skills/frontmatter.ts` @00d3a237 (fields each install kind
        needs), `src/markdown/frontmatter.ts` @0774ff55 (the line reader merged with YAML,
        so multi-line `metadata` works despite the docs' "single-line keys only" note), and
        openclaw/docs `docs/tools/skills.md` @fec386e9, `docs/clawhub/skill-format.md`
        @e8c184de.
    """,
    bad="""
        metadata:
          openclaw:
            os: [macos]
            requires:
              binaries: [jq]
            install:
              - kind: npm
                package: json-cli
    """,
    good="""
        metadata:
          openclaw:
            os: [darwin]
            requires:
              bins: [jq]
            install:
              - kind: node
                package: json-cli
    """,
)
def openclaw_metadata(skill: Skill, ctx: Context) -> Iterator[Finding]:
    if _TARGET not in ctx.targets:
        return  # nothing to report: every finding concerns OpenClaw alone
    fm = usable_frontmatter(skill)
    # when YAML fails, OpenClaw's line reader still reads a one-line `metadata: {...}`
    metadata = _metadata(fm) if fm is not None else _line_metadata(skill)
    if metadata is None:
        return
    found = _block(metadata, TARGETS[_TARGET].gating_namespaces)
    if found is None:
        return
    namespace, block = found
    one_line = _one_line_block(skill, fm) if fm is not None else None
    if one_line is not None:
        yield _finding(
            f"the 'metadata' block is a single indented line; OpenClaw's line reader takes"
            f" it as the text of 'metadata', which is not JSON, and ignores"
            f" metadata.{namespace} entirely. Write it on the 'metadata:' line as JSON"
            f' (metadata: {{"{namespace}": ...}}) or spread it over several lines',
            one_line,
            _LOST,
        )
        return
    label = f"metadata.{namespace}"
    always_val = block.get("always")
    always = always_val is not None and always_val.type == "bool" and always_val.text == "true"
    for name, key_span, value in block.pairs:
        if name == "os":
            yield from _check_os(f"{label}.os", value, entry=False)
        elif name == "requires":
            yield from _check_requires(f"{label}.requires", value, always=always)
        elif name == "install":
            yield from _check_install(f"{label}.install", value)
        elif name == "always":
            if value.type != "bool":
                yield _finding(
                    f"{label}.always: {value.text or value.kind!r} is not a boolean;"
                    " OpenClaw ignores it. Write true or false, unquoted",
                    value.span,
                    _LOST,
                )
        elif name == "primaryEnv":
            if value.kind != "scalar" or value.type != "str" or not value.text.strip():
                yield _finding(
                    f"{label}.primaryEnv is not a variable name written as text; OpenClaw"
                    " ignores it, so the configured apiKey does not satisfy requires.env",
                    value.span,
                    _LOST,
                )
        elif name in ("bins", "anyBins", "env") and _names_only(value):
            # a list of objects here is a declaration (like ClawHub's envVars), not a gate
            yield _finding(
                f"{label}.{name} belongs under 'requires'; OpenClaw ignores it here, so the"
                " skill loads without this requirement",
                key_span,
                _LOST,
                help_=f"move it to {label}.requires.{name}",
            )
        elif name not in _GATING_KEYS and name not in _OTHER_KEYS:
            meant = _close(name, _GATING_KEYS)
            if meant:
                yield _finding(
                    f"{label}.{name} is not a key OpenClaw reads; did you mean {meant[0]!r}?"
                    " As written it is ignored",
                    key_span,
                    _LOST,
                    help_=f"rename {name!r} to {meant[0]!r}",
                )
