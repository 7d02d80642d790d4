"""Settings from configuration and command line, resolved against the rule registry.

Finding, reading and validating the configuration file is ``skillcheck.settings``; here the
rule selectors, the tokenizer and a frontmatter schema are checked and merged with the
command line (which wins) into a ``Settings``.
"""

from __future__ import annotations

import copy

from skillcheck.errors import ConfigError
from skillcheck.rules import all_rules, option_defaults, resolve_selector
from skillcheck.schemas import load_frontmatter_schema
from skillcheck.settings import Config, Settings
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
