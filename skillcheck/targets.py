"""Runtime profiles: what each loader knows and how it reacts, as data.

Facts come from each runtime's specification, documentation and loader (the spec,
skills-ref, Anthropic's validators, Claude Code, Codex, Copilot/VS Code, Cursor, OpenSkills;
for OpenClaw, cited at OPENCLAW_FIELDS). Rules read these
profiles to decide who breaks and how; no rule hard-codes a runtime's behaviour that
belongs here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from skillcheck.source.display import did_you_mean
from skillcheck.source.skill import Impact, Outcome, Severity

SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)

CLAUDE_CODE_FIELDS = frozenset(
    {
        "when_to_use",
        "argument-hint",
        "arguments",
        "disable-model-invocation",
        "user-invocable",
        "disallowed-tools",
        "model",
        "effort",
        "context",
        "agent",
        "background",
        "hooks",
        "paths",
        "shell",
        "version",
    }
)

# OpenClaw, read at openclaw/openclaw and openclaw/docs (the versions the search index holds):
# - docs/tools/skills.md (openclaw/docs@fec386e9): the optional keys below, `{baseDir}`, the
#   skill roots, gating by `metadata.openclaw`;
# - docs/clawhub/skill-format.md (openclaw/docs@e8c184de): `version`, the aliases `clawdbot`
#   and `clawdis`, and that the ClawHub registry publishes `skill.md` too;
# - src/agents/skills/local-loader.ts (@03ebdc7e) and workspace.ts (@005288fb): the loader
#   opens `<dir>/SKILL.md` by exact name (so `skill.md` is not loaded on a case-sensitive
#   disk: SK102 stays an error), falls back to the directory name for a missing `name`, and
#   drops a skill without a `description`; it refuses a symlinked SKILL.md;
# - src/markdown/frontmatter.ts (@0774ff55): the frontmatter must start with `---` (a BOM
#   makes it empty, hence no description and a dropped skill); it is read twice, by a
#   one-key-per-line reader and by YAML (core schema), and merged; when YAML fails the line
#   reader alone remains (malformed YAML degrades). Nested YAML objects are turned into JSON,
#   so `metadata` may be one-line JSON, multi-line JSON or block YAML, whatever the docs'
#   "single-line keys only" note says.
OPENCLAW_FIELDS = frozenset(
    {
        "homepage",
        "user-invocable",
        "disable-model-invocation",
        "command-dispatch",
        "command-tool",
        "command-arg-mode",
        "version",  # read by ClawHub at publish time
    }
)


@dataclass(frozen=True)
class Target:
    name: str
    title: str  # how messages name the runtime
    known_fields: frozenset[str]
    # what the loader does with a key it does not know
    unknown_field: Outcome = Outcome.OK
    name_required: bool = True
    description_required: bool = True
    # how the loader treats a bad name: charset, hyphens, length
    name_charset: str = "ascii"  # "ascii", "nfkc-alnum" (skills-ref), "none"
    bad_name: Outcome = Outcome.REJECTED
    name_dir_mismatch: Outcome = Outcome.REJECTED
    name_max: int | None = 64
    description_max: int | None = 1024
    compatibility_max: int | None = 500
    # values must be YAML strings (a strict loader rejects `name: 123`, `description: yes`)
    string_types: bool = False
    # the loader parses YAML so that every scalar is a string (strictyaml)
    all_strings: bool = False
    # YAML constructs the loader refuses (flow collections, anchors/aliases, tags, duplicates);
    # strictyaml also scans like PyYAML's pure-Python scanner (a tab outside quotes, block
    # text or comments is an error) and reads U+0085/U+2028/U+2029 as text, not line breaks
    strict_yaml: bool = False
    angle_brackets: Outcome = Outcome.OK  # `<`/`>` in the description
    reserved_words: tuple[str, ...] = ()
    # the listing truncates description + when_to_use at this many characters
    listing_max: int | None = None
    # the description is read with a line regex, not YAML (block scalars show as `|`)
    regex_description: bool = False
    bom: Outcome = Outcome.OK  # a UTF-8 BOM before the frontmatter
    crlf: Outcome = Outcome.OK  # CRLF line endings around the frontmatter
    malformed_yaml: Outcome = Outcome.REJECTED
    # boolean fields that take true/false (and, for Claude Code, yes/no/on/off/1/0)
    boolean_fields: frozenset[str] = frozenset()
    # the loader cuts the frontmatter at the first raw substring `---` after the opening one
    # (not at a `---` line), so rules see SKILL.md as it reads it (parse.substring_view)
    substring_split: bool = False
    # an error for this target means exactly "the loader rejects the skill": a finding it loads
    # past (ok, degraded) is at most a warning for it, and so are runtime-independent findings
    # (budgets, hygiene) when only such targets are active (lint.py)
    strict_parity: bool = False
    # text the runtime replaces with the skill's directory before a path is used
    # (`{baseDir}/references/x.md`); link checks substitute it before resolving
    path_placeholders: tuple[str, ...] = ()
    # the `metadata` keys whose object gates loading (`metadata.openclaw.requires` ...), in the
    # order the loader tries them: the first one holding an object is read, the rest ignored
    gating_namespaces: tuple[str, ...] = ()
    # where the runtime looks for skills, highest precedence first (documentation, `init`)
    skill_roots: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            name="agentskills",
            title="the Agent Skills specification",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.DEGRADED,
            name_dir_mismatch=Outcome.DEGRADED,  # client guide: warn and load
        ),
        Target(
            name="skills-ref",
            title="skills-ref",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.REJECTED,
            name_charset="nfkc-alnum",
            all_strings=True,
            strict_yaml=True,
            bom=Outcome.REJECTED,
            substring_split=True,
            strict_parity=True,
        ),
        Target(
            name="claude-code",
            title="Claude Code",
            known_fields=SPEC_FIELDS | CLAUDE_CODE_FIELDS,
            name_required=False,
            description_required=False,  # falls back to the first paragraph
            name_charset="none",
            bad_name=Outcome.OK,
            name_dir_mismatch=Outcome.OK,  # the command comes from the directory name
            name_max=None,
            description_max=None,
            compatibility_max=None,
            listing_max=1536,
            bom=Outcome.DROPPED,  # before 2.1.239 a BOM made the skill silently ignored
            malformed_yaml=Outcome.DEGRADED,  # body loads with empty metadata
            boolean_fields=frozenset({"disable-model-invocation", "user-invocable", "background"}),
        ),
        Target(
            name="claude-api",
            title="claude.ai / the Anthropic Skills API",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.REJECTED,
            string_types=True,
            angle_brackets=Outcome.REJECTED,
            reserved_words=("anthropic", "claude"),
            bom=Outcome.REJECTED,
            crlf=Outcome.REJECTED,  # package_skill.py matches ^---\n(.*?)\n---
        ),
        Target(
            name="codex",
            title="Codex",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.OK,  # serde ignores unknown keys
            name_required=False,  # falls back to the directory name
            name_charset="none",
            bad_name=Outcome.OK,
            name_dir_mismatch=Outcome.OK,
            compatibility_max=None,
            bom=Outcome.REJECTED,  # the first line must be `---` after trim; U+FEFF is no space
        ),
        Target(
            name="copilot",
            title="VS Code / GitHub Copilot",
            known_fields=SPEC_FIELDS
            | {"argument-hint", "user-invocable", "disable-model-invocation", "context"},
            unknown_field=Outcome.OK,
            bad_name=Outcome.DROPPED,  # other characters make the skill silently fail to load
            name_dir_mismatch=Outcome.DROPPED,
            compatibility_max=None,
            boolean_fields=frozenset({"user-invocable", "disable-model-invocation"}),
        ),
        Target(
            name="cursor",
            title="Cursor",
            known_fields=SPEC_FIELDS | {"disable-model-invocation"},
            unknown_field=Outcome.OK,
            bad_name=Outcome.DEGRADED,  # documented second-hand: treated as lenient
            name_dir_mismatch=Outcome.DEGRADED,
            compatibility_max=None,
            boolean_fields=frozenset({"disable-model-invocation"}),
        ),
        Target(
            name="openskills",
            title="OpenSkills",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.OK,
            name_required=False,  # the skill name is the directory name
            name_charset="none",
            bad_name=Outcome.OK,
            name_dir_mismatch=Outcome.DEGRADED,  # listed under the directory's name
            name_max=None,
            description_max=None,
            compatibility_max=None,
            regex_description=True,
            malformed_yaml=Outcome.OK,  # reads the description with a regex, not YAML
        ),
        Target(
            name="openclaw",
            title="OpenClaw",
            known_fields=SPEC_FIELDS | OPENCLAW_FIELDS,
            unknown_field=Outcome.OK,  # the frontmatter is a plain record; unread keys stay
            name_required=False,  # falls back to the directory name
            name_charset="none",  # ClawHub keeps names from other clients as they are
            bad_name=Outcome.OK,
            name_dir_mismatch=Outcome.OK,  # the name, not the folder, is the skill's key
            name_max=None,
            description_max=None,
            compatibility_max=None,
            bom=Outcome.DROPPED,  # `startsWith("---")` fails: no description, skill skipped
            malformed_yaml=Outcome.DEGRADED,  # the line reader's keys remain
            boolean_fields=frozenset({"user-invocable", "disable-model-invocation"}),
            path_placeholders=("{baseDir}",),
            gating_namespaces=("openclaw", "clawdbot", "clawdis", "moltbot"),
            skill_roots=(
                "<workspace>/skills",
                "<workspace>/.agents/skills",
                "~/.agents/skills",
                "~/.openclaw/skills",
            ),
        ),
    )
}

DEFAULT_TARGETS: tuple[str, ...] = ("agentskills",)


def parse_targets(value: str | list[str]) -> tuple[str, ...]:
    """Turn ``"a,b"`` / ``["a", "b"]`` / ``"all"`` into target names; raise ValueError."""
    items = value.split(",") if isinstance(value, str) else list(value)
    names: list[str] = []
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        if item == "all":
            names.extend(TARGETS)
            continue
        if item not in TARGETS:
            known = ", ".join([*TARGETS, "all"])
            hint = did_you_mean(item, [*TARGETS, "all"])
            raise ValueError(f"unknown target {item!r}{hint}; known targets: {known}")
        names.append(item)
    if not names:
        raise ValueError("no target given")
    return tuple(dict.fromkeys(names))


_SEVERITY_OF = {
    Outcome.OK: Severity.WARNING,
    Outcome.DEGRADED: Severity.WARNING,
    Outcome.REJECTED: Severity.ERROR,
    Outcome.DROPPED: Severity.ERROR,
}


def impact(outcome: Outcome, severity: Severity | None = None) -> Impact:
    """An Impact whose severity follows the outcome unless given."""
    return Impact(outcome, severity if severity is not None else _SEVERITY_OF[outcome])


def impacts(
    select: Mapping[str, Outcome | Impact | None],
) -> dict[str, Impact]:
    """Build a finding's impact map, leaving out targets that are not affected (None)."""
    out: dict[str, Impact] = {}
    for name, value in select.items():
        if value is None:
            continue
        out[name] = value if isinstance(value, Impact) else impact(value)
    return out


def every(
    outcome: Outcome | Impact | None,
    overrides: dict[str, Outcome | Impact | None] | None = None,
) -> dict[str, Impact]:
    """The same impact on every target, except where ``overrides`` says otherwise."""
    select: dict[str, Outcome | Impact | None] = dict.fromkeys(TARGETS, outcome)
    select.update(overrides or {})
    return impacts(select)


def where(
    predicate: Callable[[Target], Outcome | Impact | None],
) -> dict[str, Impact]:
    """Impacts read off each target's profile."""
    return impacts({name: predicate(t) for name, t in TARGETS.items()})


def titles(names: list[str] | tuple[str, ...]) -> str:
    """``Claude Code, Codex and Cursor`` for messages."""
    parts = [TARGETS[n].title for n in names]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


# --- the skill listing's caps (reports draw the collection's catalog against them) -----------


@dataclass(frozen=True)
class ListingCap:
    """How much of the skill listing (name + description of every skill, always in the
    prompt) a runtime shows, in characters; None: no fixed figure known."""

    per_skill: int | None  # one skill's entry; longer ones are cut
    total: int | None  # the whole listing; past it, skills are left out
    note: str  # the cap as the runtime documents it


LISTING_CAPS: dict[str, ListingCap] = {
    # RUNTIMES.md: description + when_to_use cut at 1,536 characters; the whole listing is
    # budgeted at about 1 % of the context window (no fixed character figure)
    "claude-code": ListingCap(
        per_skill=TARGETS["claude-code"].listing_max,
        total=None,
        note="1,536 characters per skill description; the listing about 1 % of the context",
    ),
    # RUNTIMES.md: skills are listed within about 2 % of the context window or 8,000 characters
    "codex": ListingCap(
        per_skill=None,
        total=8000,
        note="about 2 % of the context window or 8,000 characters for the whole listing",
    ),
}
