"""Settings from configuration and command line, resolved against the rule registry.

Finding, reading and validating the configuration file is ``skillcheck.settings``; here the
rule selectors, the tokenizer and a frontmatter schema are checked and merged with the
command line (which wins) into a ``Settings``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from skillcheck.errors import ConfigError
from skillcheck.rules import all_rules, option_defaults, resolve_selector
from skillcheck.schemas import load_frontmatter_schema
from skillcheck.settings import Config, Settings, load_config, toml_value
from skillcheck.targets import DEFAULT_TARGETS, parse_targets
from skillcheck.tokens import get_tokenizer


def _selectors(values: list[str] | None, where: str) -> set[str]:

    codes: set[str] = set()
    for value in values or ():
        try:
            codes.update(r.code for r in resolve_selector(value))
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    return codes


def build_settings(
    config: Config,
    *,
    target: str | None = None,
    select: list[str] | None = None,
    extend_select: list[str] | None = None,
    ignore: list[str] | None = None,
    strict: bool | None = None,
    tokenizer: str | None = None,
) -> Settings:
    """Merge the configuration and the command line (which wins) into lint Settings."""

    where = str(config.path) if config.path else "configuration"
    raw_target = target if target is not None else config.get("target")
    try:
        targets = parse_targets(raw_target) if raw_target else DEFAULT_TARGETS
    except ValueError as exc:
        raise ConfigError(f"{'--target' if target is not None else where}: {exc}") from None
    if select is not None:
        selected = _selectors(select, "--select")
    elif config.get("select") is not None:
        selected = _selectors(config.get("select"), f"{where}: select")
    else:  # rules that are off by default run only when selected
        selected = {r.code for r in all_rules() if r.default_enabled}
    selected |= _selectors(config.get("extend-select"), f"{where}: extend-select")
    selected |= _selectors(extend_select, "--extend-select")
    selected -= _selectors(config.get("ignore"), f"{where}: ignore")
    selected -= _selectors(ignore, "--ignore")
    defaults = option_defaults()  # the options the rules declare
    spec = tokenizer or config.get("tokenizer", defaults["tokenizer"])
    try:  # load it now: a bad spec is a usage error before any skill is read
        get_tokenizer(spec)
    except ValueError as exc:
        source = "--tokenizer" if tokenizer else f"{where}: tokenizer"
        raise ConfigError(f"{source}: {exc}") from None
    per_path = [
        ([pattern], frozenset(_selectors(codes, f"{where}: per-path-ignores")))
        for pattern, codes in (config.get("per-path-ignores") or {}).items()
    ]
    # as configured, else the declared default; lists and tables are copied, so the run's
    # options never share a value with the configuration
    options = {key: copy.copy(config.get(key, default)) for key, default in defaults.items()}
    options["tokenizer"] = spec
    options["frontmatter-schema"] = (
        str((config.root / config.get("frontmatter-schema")).resolve())
        if config.get("frontmatter-schema") and config.root
        else None
    )
    if options["frontmatter-schema"]:  # a missing or invalid schema: exit 2 before linting
        load_frontmatter_schema(options["frontmatter-schema"], where)
    return Settings(
        targets=targets,
        select=frozenset(selected),
        strict=bool(strict if strict is not None else config.get("strict", False)),
        options=options,
        per_path_ignores=per_path,
        exclude=list(config.get("exclude", [])),
        config_root=config.root,
    )


# --- --show-settings --------------------------------------------------------------------------

# configuration keys of the run -> the settings attribute (None: per-path-ignores); the rules'
# option keys follow, from the registry
_RUN_KEYS = {
    "target": "targets",
    "strict": "strict",
    "exclude": "exclude",
    "per-path-ignores": None,
}
_FLAGS = {"target": "--target", "strict": "--strict", "tokenizer": "--tokenizer"}


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

    keys: dict[str, str | None] = {**_RUN_KEYS, **{k: f"option:{k}" for k in option_defaults()}}
    for key, attr in keys.items():
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
        lines.append(f"{key} = {toml_value(value)}  # {source(key)}")
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
    lines.append(f"ignore = {toml_value(off)}  # every rule not enabled, whatever disabled it")
    cache = settings.cache_dir
    lines.append(
        f"# cache-dir: {cache if cache is not None else 'none'}; jobs: {settings.jobs}"
        f" ({'--jobs' if jobs else 'one per available CPU'})"
    )
    return "\n".join(lines)
