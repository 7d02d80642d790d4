"""Runtime profiles: what each loader knows and how it reacts, as data.

Where a runtime can be installed and run offline, its profile is held to what that runtime
really does: bench/runtimes/ runs the pinned version on an edge-case suite and on a sample of
real skills, tests/data/runtime-verdicts.json records its verdicts and
tests/test_runtime_verdicts.py fails when a profile drifts from them. Each profile says which
version it was checked against, when, and how (`checked`). Runtimes that cannot be run here
(VS Code, Cursor, claude.ai, `gh skill`) keep profiles modelled from their documentation and
validators (the spec, skills-ref, Anthropic's validators; for OpenClaw, cited at
OPENCLAW_FIELDS). Rules read these profiles to decide who breaks and how; no rule hard-codes
a runtime's behaviour that belongs here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypedDict

from skillcheck.source.display import did_you_mean
from skillcheck.source.skill import Impact, Outcome, Severity

CHECKED_ON = "2026-11-28"  # when bench/runtimes last ran the runtimes run here

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
        # added in the changelog since our first reading (present in 2.1.332)
        "display-name",
        "default-enabled",
        "fallback",
    }
)

# OpenClaw, read at openclaw/openclaw and openclaw/docs (the versions the search index holds):
# - docs/tools/skills.md (openclaw/docs@fec386e9): the optional keys below, `{baseDir}`, the
#   skill roots, gating by `metadata.openclaw`;
# - docs/clawhub/skill-format.md (openclaw/docs@e8c184de): `version`, the aliases `clawdbot`
#   and `clawdis`, and that the ClawHub registry publishes `skill.md` too;
# - the loader itself, run here (OpenClaw 2026.9.6, bench/runtimes): it opens `<dir>/SKILL.md`
#   by exact name, follows a symlink only when its real path stays in the skill folder
#   ("symlink-escape" otherwise), falls back to the directory name for a missing `name`,
#   refuses a skill without a `description` ("description is required"), strips a BOM and
#   CRLF, reads non-UTF-8 text with replacement characters, re-quotes a `description:` line
#   YAML fails on and refuses any other YAML error ("invalid frontmatter"), and skips a
#   SKILL.md over 256,000 bytes. Nested YAML objects are turned into JSON, so `metadata` may
#   be one-line JSON, multi-line JSON or block YAML.
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
    name_charset: str = "ascii"  # "ascii", "nfkc-alnum" (skills-ref), "ascii-loose", "none"
    bad_name: Outcome = Outcome.REJECTED
    name_dir_mismatch: Outcome = Outcome.REJECTED
    name_max: int | None = 64
    # the listing shows the folder instead of a `name` holding whitespace or `/` (Claude Code)
    name_display_dropped: Outcome | None = None
    description_max: int | None = 1024
    compatibility_max: int | None = 500
    # fields whose values must be YAML strings: a strict loader rejects `name: 123`; with
    # yaml11, `description: yes` (a boolean to YAML 1.1) too, else only numbers, null, lists
    string_fields: tuple[str, ...] = ()
    yaml11: bool = False
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
    # a multi-line description is listed on one line (its line breaks turned into spaces)
    joins_description_lines: bool = False
    # the description is read with a line regex, not YAML (block scalars show as `|`)
    regex_description: bool = False
    bom: Outcome = Outcome.OK  # a UTF-8 BOM before the frontmatter
    crlf: Outcome = Outcome.OK  # CRLF line endings around the frontmatter
    malformed_yaml: Outcome = Outcome.REJECTED
    # the loader retries a YAML error by quoting the value: "colon" when the error is an
    # unquoted `: ` in the description, "description" when the error is anywhere on a
    # `description:` line (OpenClaw), "top-level" when it is on a top-level `key: value`
    # line (Codex; see its profile), "any-top-level" when it is on a top-level `key: value`
    # line whose value does not open a quote (Claude Code); the skill then loads as written
    yaml_requote: str = ""
    # the YAML parser reads a tab as indentation inside a nested block (`metadata:` then a
    # tab-indented `owner: x`), where PyYAML refuses it
    yaml_tab_in_block: bool = False
    no_frontmatter: Outcome = Outcome.REJECTED  # no `---` on line 1, or never closed
    duplicate_key: Outcome = Outcome.DEGRADED  # PyYAML and the line readers keep the last value
    non_utf8: Outcome = Outcome.REJECTED  # invalid UTF-8 / UTF-16 / UTF-32
    # `metadata` that is not a mapping (a string, a list)
    metadata_not_map: Outcome | Impact | None = None
    # a symlinked SKILL.md: "follow" (anywhere), "inside" (only to a file inside the skill
    # folder; refused otherwise), "never" (any symlink silently skipped)
    skill_md_symlink: str = "follow"
    missing_skill_md: Outcome = Outcome.DROPPED  # dangling link, directory, unreadable file
    # the loader skips a SKILL.md larger than this many bytes, and says so
    skill_md_max_bytes: int | None = None
    # a skill folder whose name starts with `.` (the scan skips hidden entries)
    hidden_folder: Outcome = Outcome.OK
    # boolean fields must be YAML booleans (`yes`/`on` are refused, not read as true)
    strict_booleans: bool = False
    # `allowed-tools` written as a YAML list
    list_allowed_tools: Outcome = Outcome.OK
    # a frontmatter that parses but is not a mapping (None: as malformed_yaml)
    not_mapping: Outcome | None = None
    # a list or mapping description is turned into text rather than refused
    coerce_description: bool = False
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
    # what the profile was checked against: "<runtime> <version>, run here on <date>" or
    # "modelled from <sources> (<date>)"; shown by `skillcheck rule`, the docs and --target help
    checked: str = ""
    checked_version: str = ""  # the runtime version run here; empty when modelled
    notes: tuple[str, ...] = field(default_factory=tuple)


class _Checked(TypedDict):
    checked: str
    checked_version: str


def _run(runtime: str, version: str) -> _Checked:
    return {
        "checked": f"{runtime} {version}, run here on {CHECKED_ON} (bench/runtimes)",
        "checked_version": version,
    }


TARGETS: dict[str, Target] = {
    t.name: t
    for t in (
        Target(
            name="agentskills",
            title="the Agent Skills specification",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.DEGRADED,
            name_dir_mismatch=Outcome.DEGRADED,  # client guide: warn and load
            duplicate_key=Outcome.REJECTED,
            metadata_not_map=Outcome.REJECTED,
            checked="modelled from agentskills.io specification and client guide (2026-11-28)",
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
            duplicate_key=Outcome.REJECTED,
            missing_skill_md=Outcome.REJECTED,  # "Missing required file: SKILL.md"
            **_run("skills-ref", "0.1.1"),
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
            listing_max=1536,  # description + " - " + when_to_use, cut to 1,535 and "…"
            # what follows was read off the listing in the model request (bench/runtimes)
            # a BOM is read past since 2.1.239 (before, the skill was silently ignored)
            malformed_yaml=Outcome.DEGRADED,  # body loads with empty metadata
            # `description: , and`, `argument-hint: [a] [b]`, `metadata: {"a": 1` load with
            # the description as written; an unclosed quote or a bad indent does not
            yaml_requote="any-top-level",
            yaml_tab_in_block=True,
            # cut at the first raw `---` after the opening one, even mid-value ("a---b")
            substring_split=True,
            no_frontmatter=Outcome.DEGRADED,  # body loads with empty metadata
            non_utf8=Outcome.DEGRADED,  # read with replacement characters
            # Claude Code reads no `metadata`: a string there loses nothing for it
            metadata_not_map=Impact(Outcome.OK, Severity.WARNING),
            duplicate_key=Outcome.OK,  # the last value is listed, as PyYAML keeps it
            angle_brackets=Outcome.DEGRADED,  # listed as `&lt;` / `&gt;`
            name_display_dropped=Outcome.DEGRADED,
            joins_description_lines=True,
            skill_md_max_bytes=1_000_000,  # "exceeds 1000000 bytes", in the debug log
            boolean_fields=frozenset({"disable-model-invocation", "user-invocable", "background"}),
            **_run("Claude Code", "2.1.332"),
        ),
        Target(
            name="claude-api",
            title="claude.ai / the Anthropic Skills API",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.REJECTED,
            string_fields=("name", "description", "compatibility"),
            yaml11=True,  # PyYAML: `description: yes` is a boolean
            angle_brackets=Outcome.REJECTED,
            reserved_words=("anthropic", "claude"),
            bom=Outcome.REJECTED,
            crlf=Outcome.REJECTED,  # package_skill.py matches ^---\n(.*?)\n---
            metadata_not_map=Impact(Outcome.DEGRADED, Severity.WARNING),
            checked=(
                "modelled from anthropics/skills quick_validate.py and package_skill.py and the"
                " Skills API docs (2026-11-28); cannot be run here"
            ),
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
            description_max=None,  # a 1,919-character description loads
            compatibility_max=None,
            bom=Outcome.REJECTED,  # "missing YAML frontmatter delimited by ---"
            # a YAML error on a top-level value loads, read quoted (`description: Use when:
            # x`, `argument-hint: [a] [b]`), unless the key is one Codex reads and the value
            # starts with a YAML indicator (`metadata: {"a": 1`, `description: , and`)
            yaml_requote="top-level",
            duplicate_key=Outcome.REJECTED,
            metadata_not_map=Outcome.REJECTED,  # "expected struct SkillFrontmatterMetadata"
            skill_md_symlink="never",  # any symlinked SKILL.md is skipped silently
            joins_description_lines=True,
            hidden_folder=Outcome.DROPPED,
            **_run("Codex CLI", "0.171.0"),
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
            no_frontmatter=Outcome.DROPPED,
            boolean_fields=frozenset({"user-invocable", "disable-model-invocation"}),
            checked=(
                "modelled from the VS Code agent-skills docs (2026-11-28); VS Code cannot be run"
                " here (the Copilot CLI, which can, is the copilot-cli target)"
            ),
        ),
        Target(
            name="copilot-cli",
            title="GitHub Copilot CLI",
            known_fields=SPEC_FIELDS
            | {"argument-hint", "user-invocable", "disable-model-invocation", "context"},
            unknown_field=Outcome.OK,
            name_required=False,  # falls back to the directory name
            description_required=False,  # loads without one
            # "must start with an ASCII letter or number and contain only ASCII letters (a-z,
            # A-Z), numbers, hyphens, underscores, dots, colons, and spaces"
            name_charset="ascii-loose",
            name_dir_mismatch=Outcome.OK,
            compatibility_max=None,
            string_fields=("name", "description"),  # "Skill description must be a string"
            duplicate_key=Outcome.REJECTED,
            non_utf8=Outcome.DEGRADED,
            not_mapping=Outcome.DEGRADED,  # a YAML list as frontmatter loads, without metadata
            boolean_fields=frozenset({"user-invocable", "disable-model-invocation"}),
            strict_booleans=True,  # "user-invocable must be a boolean": `yes` is refused
            hidden_folder=Outcome.DROPPED,
            skill_roots=(
                ".github/skills",
                ".claude/skills",
                ".agents/skills",
                "~/.copilot/skills",
                "~/.agents/skills",
            ),
            **_run("Copilot CLI", "1.0.102"),
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
            checked="modelled from the Cursor docs (2026-11-28); cannot be run here",
        ),
        Target(
            name="openskills",
            title="OpenSkills",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.OK,
            name_required=False,  # the skill name is the directory name
            description_required=False,  # listed with an empty description
            name_charset="none",
            bad_name=Outcome.OK,
            name_dir_mismatch=Outcome.DEGRADED,  # listed under the directory's name
            name_max=None,
            description_max=None,
            compatibility_max=None,
            regex_description=True,
            angle_brackets=Outcome.DEGRADED,  # AGENTS.md (`openskills sync`) takes them as tags
            malformed_yaml=Outcome.OK,  # reads the description with a regex, not YAML
            no_frontmatter=Outcome.DEGRADED,  # unless a `description:` line is there to read
            not_mapping=Outcome.DEGRADED,  # no description line to read
            non_utf8=Outcome.DEGRADED,
            **_run("OpenSkills", "1.5.0"),
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
            yaml_requote="description",
            duplicate_key=Outcome.REJECTED,  # "DUPLICATE_KEY: keys must be unique"
            non_utf8=Outcome.DEGRADED,
            skill_md_symlink="inside",  # "Skipping escaped skill path ... symlink-escape"
            skill_md_max_bytes=256_000,  # "File exceeds 256000 bytes"
            hidden_folder=Outcome.DROPPED,
            coerce_description=True,  # a list description loads as text
            boolean_fields=frozenset({"user-invocable", "disable-model-invocation"}),
            path_placeholders=("{baseDir}",),
            gating_namespaces=("openclaw", "clawdbot", "clawdis", "moltbot"),
            skill_roots=(
                "<workspace>/skills",
                "<workspace>/.agents/skills",
                "~/.agents/skills",
                "~/.openclaw/skills",
            ),
            **_run("OpenClaw", "2026.9.6"),
        ),
        Target(
            name="skills-cli",
            title="the skills CLI (npx skills)",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.OK,
            name_charset="none",  # installs the folder under `name` as written
            bad_name=Outcome.OK,
            name_dir_mismatch=Outcome.OK,  # `skills add` names the installed folder after `name`
            name_max=None,
            description_max=None,
            compatibility_max=None,
            string_fields=("name", "description"),  # "must be strings (got number ...)"
            duplicate_key=Outcome.REJECTED,
            non_utf8=Outcome.DEGRADED,
            **_run("skills CLI", "1.7.4"),
        ),
        Target(
            name="gh-skill",
            title="GitHub CLI gh skill",
            known_fields=SPEC_FIELDS,
            unknown_field=Outcome.OK,
            list_allowed_tools=Outcome.REJECTED,  # `publish` refuses list-form allowed-tools
            checked=(
                "modelled from the GitHub CLI `gh skill` docs (publish: agentskills.io name rules,"
                " name = folder, required fields; 2026-11-28); not run here"
            ),
        ),
    )
}

DEFAULT_TARGETS: tuple[str, ...] = ("agentskills",)


def checked_label(target: Target) -> str:
    """`2.1.332, run 2026-11-28` or `modelled`, for help texts."""
    if target.checked_version:
        return f"{target.checked_version}, run {CHECKED_ON}"
    return "modelled"


def targets_help() -> str:
    """One line per target: name, what it is, what it was checked against."""
    return "\n".join(f"{t.name}: {t.title} ({t.checked})" for t in TARGETS.values())


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
