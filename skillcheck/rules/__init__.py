"""The rule registry: every rule, in code order.

One registry feeds `skillcheck rules`, `skillcheck rule CODE`, SARIF rule metadata, the
options part of the configuration (its defaults and, through a test, its schema) and the
README tables. Family modules register their rules on import.
"""

from __future__ import annotations

import importlib
from typing import Any

from skillcheck.analysis.figures import Limits
from skillcheck.rules.base import (
    Context,
    Input,
    Option,
    PerSkill,
    Rule,
    budget,
    registry,
    rule,
)
from skillcheck.source.display import did_you_mean

__all__ = [
    "FAMILIES",
    "Context",
    "Input",
    "Option",
    "PerSkill",
    "Rule",
    "all_rules",
    "default_limits",
    "get_rule",
    "limits_of",
    "option_defaults",
    "per_skill_data",
    "resolve_selector",
    "rule",
    "rule_options",
]

# family (a module's name, or the FAMILY it declares) -> title, in code order
FAMILIES: dict[str, str] = {
    "structure": "SK1xx file and frontmatter structure",
    "name": "SK2xx name",
    "description": "SK3xx description",
    "fields": "SK4xx other fields",
    "openclaw": "SK4xx other fields",
    "references": "SK5xx references and files",
    "files": "SK5xx references and files",
    "budgets": "SK6xx budgets",
    "security": "SK7xx security and hygiene",
    "invocation": "SK7xx security and hygiene",
    "collection": "SK8xx collection",
    "encoding": "SK9xx encoding and portability",
    "portability": "SK9xx encoding and portability",
}

# every module of rules; loaders, mentions and hygiene hold rules of a family that did not fit
# in one module, and declare it (FAMILY)
MODULES = (
    *("structure", "loaders", "name", "description", "fields", "openclaw", "references"),
    *("mentions", "files", "budgets", "security", "threats", "hygiene", "invocation"),
    "collection",
    *("encoding", "portability"),
)

_loaded = False


def all_rules() -> list[Rule]:
    global _loaded
    if not _loaded:
        for module in MODULES:
            importlib.import_module(f"skillcheck.rules.{module}")
        _loaded = True
    return [registry()[code] for code in sorted(registry())]


def per_skill_data() -> dict[str, PerSkill]:
    """What the collection rules keep of each skill while it is checked, by name (see
    ``PerSkill``); two different declarations of one name are a bug."""
    found: dict[str, PerSkill] = {}
    for r in all_rules():
        if r.per_skill is not None and found.setdefault(r.per_skill.name, r.per_skill) != (
            r.per_skill
        ):
            raise RuntimeError(f"per-skill data {r.per_skill.name} is declared twice ({r.code})")
    return found


def rule_options() -> dict[str, Option]:
    """Every option the rules declare, by name, in code order of the first rule reading it.

    An option several rules read is one ``Option`` they all name; two different declarations
    of one name are a bug.
    """
    found: dict[str, Option] = {}
    for r in all_rules():
        for option in r.options:
            if found.setdefault(option.name, option) != option:
                raise RuntimeError(f"option {option.name} is declared twice ({r.code})")
    return found


def option_defaults() -> dict[str, Any]:
    """The top-level configuration keys the rules read, with the value a run uses when the
    key is not set: the declared default, or an empty table for a table of options (each
    rule applies its key's default itself, so a table holds only what was configured)."""
    defaults: dict[str, Any] = {}
    for option in rule_options().values():
        if option.table is not None:
            defaults[option.table] = {}
        else:
            defaults[option.name] = option.default
    return defaults


def get_rule(code_or_slug: str) -> Rule | None:
    key = code_or_slug.strip()
    for r in all_rules():
        if r.code.lower() == key.lower() or r.slug == key.lower():
            return r
    return None


def resolve_selector(selector: str) -> list[Rule]:
    """Rules named by a code, a code prefix (``SK2``, ``SK20``), a slug, or ``ALL``.

    Raises ValueError for a selector that names no rule.
    """
    key = selector.strip()
    rules = all_rules()
    if key.upper() == "ALL":
        return rules
    exact = get_rule(key)
    if exact is not None:
        return [exact]
    prefix = [r for r in rules if r.code.upper().startswith(key.upper())]
    if prefix and key.upper().startswith("SK"):
        return prefix
    hint = did_you_mean(key, [name for r in rules for name in (r.code, r.slug)])
    raise ValueError(f"unknown rule or prefix {selector!r}{hint} (see `skillcheck rules`)")


def limits_of(ctx: Context) -> Limits:
    """The budgets of a run (the `budgets` table, else the defaults the SK6xx rules declare)."""
    all_rules()  # the rules declare the budget options
    return Limits(
        catalog=budget(ctx, "catalog-tokens"),
        body=budget(ctx, "body-tokens"),
        lines=budget(ctx, "body-lines"),
        reference=budget(ctx, "reference-tokens"),
        collection=budget(ctx, "collection-catalog-tokens"),
    )


def default_limits() -> Limits:
    """The budgets with no configuration."""
    return limits_of(Context(targets=(), options={}))
