"""Command-line conveniences kept out of cli.py: the severity filter, what --fix changed,
--show-settings, ``skillcheck init`` and the progress line on a terminal."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from skillcheck.source.skill import Severity

# --- --min-severity ---------------------------------------------------------------------------


def filter_severity(result: Any, minimum: str) -> tuple[Any, dict[str, int] | None]:
    """The result without findings below ``minimum``, and how many of each were left out."""
    if minimum == "info":
        return result, None
    floor = Severity.parse(minimum)
    kept = [d for d in result.diagnostics if d.severity >= floor]
    hidden = Counter(str(d.severity) for d in result.diagnostics if d.severity < floor)
    return dataclasses.replace(result, diagnostics=kept), dict(hidden)


# --- --fix ------------------------------------------------------------------------------------


def fix_messages(report: Any, cwd: Path) -> list[str]:
    """One line per file --fix rewrote: the file, how many findings, and each change."""
    from skillcheck.report import display_path, safe

    failed = {path for path, _reason in report.failures}
    out = []
    for plan in report.plans:
        if plan.path in failed:
            continue
        changes = list(dict.fromkeys(fix.description for fix in plan.fixes))
        count = f"{plan.findings} finding{'s' * (plan.findings != 1)}"
        out.append(
            f"skillcheck: fixed {count} in {safe(display_path(plan.path, cwd))}: "
            + "; ".join(safe(c) for c in changes)
        )
    return out


# --- --show-settings --------------------------------------------------------------------------

_CONFIG_KEYS = {  # configuration key -> (settings attribute or option, default)
    "target": ("targets", None),
    "strict": ("strict", None),
    "exclude": ("exclude", None),
    "per-path-ignores": (None, None),
    "tokenizer": ("option:tokenizer", None),
    "name-charset": ("option:name-charset", None),
    "extra-fields": ("option:extra-fields", None),
    "budgets": ("option:budgets", None),
    "path-fields": ("option:path-fields", None),
    "frontmatter-schema": ("option:frontmatter-schema", None),
}
_FLAGS = {"target": "--target", "strict": "--strict", "tokenizer": "--tokenizer"}


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    if value is None:
        return '""'
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(str(value))


def describe_settings(
    settings: Any,
    config_file: Path | None,
    isolated: bool,
    target: str | None,
    overrides: dict[str, Any],
    jobs: int,
) -> str:
    """The effective configuration, as TOML with a comment naming where each value came from
    (the command line, the configuration file, or the default)."""
    from skillcheck.engine.config import load_config
    from skillcheck.rules import all_rules

    config = load_config(config_file, isolated=isolated)
    where = str(config.path) if config.path else None
    given = {"target": target, **{k.replace("_", "-"): v for k, v in overrides.items()}}
    lines = [
        "# skillcheck: effective settings",
        f"# configuration file: {where or ('none (--isolated)' if isolated else 'none found')}",
    ]

    def source(key: str) -> str:
        if given.get(key) is not None:
            return _FLAGS.get(key, f"--{key}")
        if key in config.values:
            return str(where)
        return "default"

    for key, (attr, _default) in _CONFIG_KEYS.items():
        if attr is None:
            value: Any = {
                patterns[0]: sorted(codes) for patterns, codes in settings.per_path_ignores
            }
        elif attr.startswith("option:"):
            value = settings.options.get(attr.split(":", 1)[1])
        else:
            value = getattr(settings, attr)
        if value is None:  # not set: TOML has no null
            lines.append(f"# {key}: not set  # {source(key)}")
            continue
        lines.append(f"{key} = {_toml(value)}  # {source(key)}")
    every = all_rules()
    enabled = settings.select if settings.select is not None else {r.code for r in every}
    off = [r.code for r in every if r.code not in enabled]
    rule_sources = [
        source(k) for k in ("select", "extend-select", "ignore") if source(k) != "default"
    ]
    lines.append(
        f"# rules: {len(enabled)} of {len(every)} enabled"
        f" ({', '.join(dict.fromkeys(rule_sources)) or 'default'})"
    )
    lines.append(f"ignore = {_toml(off)}  # every rule not enabled, whatever disabled it")
    cache = settings.cache_dir
    lines.append(
        f"# cache-dir: {cache if cache is not None else 'none'}; jobs: {settings.jobs}"
        f" ({'--jobs' if jobs else 'one per available CPU'})"
    )
    return "\n".join(lines)


# --- skillcheck init --------------------------------------------------------------------------

# where a runtime looks for a project's skills -> the target that checks for it
LAYOUTS = (
    (".claude/skills", "claude-code"),
    (".github/skills", "copilot"),
    (".agents/skills", "codex"),
    (".codex/skills", "codex"),
    (".cursor/skills", "cursor"),
    (".agent/skills", "openskills"),
)


def detect_targets(root: Path) -> tuple[list[str], list[str]]:
    """(targets, the directories that suggested them): the specification always, and each
    runtime whose project skills directory exists under ``root``."""
    targets = ["agentskills"]
    found = []
    for rel, target in LAYOUTS:
        if (root / rel).is_dir():
            found.append(rel)
            if target not in targets:
                targets.append(target)
    return targets, found


def starter_config(root: Path) -> str:
    targets, found = detect_targets(root)
    why = (
        "detected from " + ", ".join(found)
        if found
        else "no runtime's skills directory found: the specification only"
    )
    return (
        "# skillcheck configuration (https://github.com/skillcheck-dev/skillcheck#configuration)\n"
        f"# targets: {why}\n"
        f"target = {_toml(targets)}\n"
        "# rules to skip, by code, prefix or slug:\n"
        "ignore = []\n"
        "# paths to leave out (gitignore patterns, relative to this file):\n"
        "exclude = []\n"
        "strict = false\n"
    )


def write_starter_config(root: Path, force: bool) -> tuple[Path, str]:
    """Write skillcheck.toml in ``root`` (validated before it is written); refuse to replace
    an existing one unless ``force``. Raises ConfigError or OSError."""
    from skillcheck.engine.config import ConfigError, validate
    from skillcheck.source.atomic import write_atomic

    path = root / "skillcheck.toml"
    if os.path.lexists(path) and not force:
        raise ConfigError(f"{path}: already exists (use --force to replace it)")
    text = starter_config(root)
    import tomllib

    validate(tomllib.loads(text), path)
    write_atomic(path, text.encode("utf-8"))
    return path, text


# --- progress on a terminal -------------------------------------------------------------------


class Progress:
    """``checking… N skills`` on stderr, redrawn at most ten times a second, erased at the end.

    Only when stderr is a terminal and the report is for a human (the caller decides): never
    in a pipe, a CI log or next to a machine format."""

    DELAY = 0.5  # short runs print nothing at all

    def __init__(self, label: str) -> None:
        self.label = label
        self.count = 0
        self.started = time.monotonic()
        self.last = 0.0
        self.shown = False

    @staticmethod
    def wanted(quiet: bool) -> bool:
        return not quiet and sys.stderr.isatty()

    def __call__(self, *_args: Any) -> None:
        self.count += 1
        now = time.monotonic()
        if now - self.started < self.DELAY or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        noun = "skill" if self.count == 1 else "skills"
        sys.stderr.write(f"\r\x1b[2K{self.label}: {self.count} {noun}…")
        sys.stderr.flush()

    def done(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()
