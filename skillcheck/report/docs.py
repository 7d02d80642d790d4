"""Rule documentation generated from the registry: the table, JSON, and the README's rule and
option tables."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from skillcheck.rules import FAMILIES, all_rules, rule_options
from skillcheck.source.atomic import write_atomic


def rules_table() -> str:
    lines = []
    for rule in all_rules():
        fix = " (fixable)" if rule.fixable else ""
        off = "" if rule.default_enabled else " (off by default)"
        lines.append(f"{rule.code}  {rule.slug:<28} {rule.severity!s:<8} {rule.summary}{fix}{off}")
    return "\n".join(lines) + "\n"


def rules_json() -> str:
    data = [
        {
            "code": r.code,
            "slug": r.slug,
            "severity": str(r.severity),
            "summary": r.summary,
            "fixable": r.fixable,
            "default_enabled": r.default_enabled,
            "family": FAMILIES.get(r.family, r.family),
        }
        for r in all_rules()
    ]
    return json.dumps(data, indent=2) + "\n"


def readme_table() -> str:
    """The Markdown table between the README's rule markers."""
    rows = ["| code | slug | severity | fixable | summary |", "|---|---|---|---|---|"]
    for r in all_rules():
        summary = r.summary.replace("|", "\\|")
        if not r.default_enabled:
            summary += " *(off by default)*"
        rows.append(
            f"| {r.code} | `{r.slug}` | {r.severity} | {'yes' if r.fixable else ''} | {summary} |"
        )
    return "\n".join(rows) + "\n"


def options_table() -> str:
    """The Markdown table of every rule option (the README's configuration section)."""
    rules = all_rules()
    rows = ["| option | default | rules | what it sets |", "|---|---|---|---|"]
    for name, option in sorted(rule_options().items()):
        readers = ", ".join(r.code for r in rules if option in r.options)
        default = "not set" if option.default is None else f"`{json.dumps(option.default)}`"
        doc = option.doc.replace("|", "\\|")
        rows.append(f"| `{name}` | {default} | {readers} | {doc} |")
    return "\n".join(rows) + "\n"


TABLE_START = "<!-- rules-table:start -->"
TABLE_END = "<!-- rules-table:end -->"
OPTIONS_START = "<!-- rule-options:start -->"
OPTIONS_END = "<!-- rule-options:end -->"
README = Path(__file__).resolve().parent.parent.parent / "README.md"


def _between(text: str, start_marker: str, end_marker: str, table: str) -> str:
    start = text.find(start_marker)
    end = text.find(end_marker)
    if start < 0 or end < start:
        raise ValueError(f"the README has no {start_marker} ... {end_marker} markers")
    return f"{text[: start + len(start_marker)]}\n{table}{text[end:]}"


def with_readme_table(text: str) -> str:
    """``text`` (a README) with the generated rule table and rule option table between their
    markers.

    Raises ValueError when the markers are missing or out of order.
    """
    text = _between(text, TABLE_START, TABLE_END, readme_table())
    return _between(text, OPTIONS_START, OPTIONS_END, options_table())


CONFIG_SCHEMA = Path(__file__).resolve().parent.parent / "schemas" / "config.schema.json"


def config_schema(current: dict[str, Any]) -> dict[str, Any]:
    """The configuration's JSON Schema: the run's own keys (``target``, ``select`` ...) as
    ``current`` declares them, and every rule option as the registry declares it (its schema
    fragment and one-line doc), in registry order.

    The file stays committed, generated from here: the settings validate a configuration with
    it below the rule layer, and editors read it.
    """
    options = rule_options()
    owned = {o.table or o.name for o in options.values()}
    properties = {k: v for k, v in current["properties"].items() if k not in owned}
    for option in options.values():
        fragment = {**option.schema, "description": option.doc}
        if option.table is None:
            properties[option.name] = fragment
            continue
        if option.table not in properties:  # the table's own keys kept, its options made
            declared = current["properties"].get(option.table, {})
            properties[option.table] = {
                "type": "object",
                "additionalProperties": False,
                **{k: v for k, v in declared.items() if k != "properties"},
                "properties": {},
            }
        table = properties[option.table]
        table["properties"][option.name.split(".", 1)[1]] = fragment
    return {**current, "properties": properties}


def config_schema_text(current: dict[str, Any]) -> str:
    return json.dumps(config_schema(current), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m skillcheck.report.docs --write-readme|--check-readme [README]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m skillcheck.report.docs",
        description="Regenerate the README's rule and option tables, or the configuration schema.",
    )
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write-readme", action="store_true", help="rewrite the table in place")
    action.add_argument(
        "--check-readme", action="store_true", help="exit 1 when the table is stale"
    )
    action.add_argument(
        "--write-schema",
        action="store_true",
        help="regenerate schemas/config.schema.json from the rule options",
    )
    parser.add_argument("readme", nargs="?", type=Path, default=README)
    args = parser.parse_args(argv)
    if args.write_schema:
        try:
            current = json.loads(CONFIG_SCHEMA.read_text(encoding="utf-8"))
            write_atomic(CONFIG_SCHEMA, config_schema_text(current).encode("utf-8"))
        except (OSError, ValueError) as exc:
            print(f"{CONFIG_SCHEMA}: {exc}", file=sys.stderr)
            return 2
        return 0
    try:
        text = args.readme.read_text(encoding="utf-8")
        updated = with_readme_table(text)
    except (OSError, ValueError) as exc:
        print(f"{args.readme}: {exc}", file=sys.stderr)
        return 2
    if args.check_readme:
        if updated != text:
            print(
                f"{args.readme}: the rule table is stale; run python -m skillcheck.report.docs"
                " --write-readme",
                file=sys.stderr,
            )
            return 1
        return 0
    if updated != text:
        write_atomic(args.readme, updated.encode("utf-8"))
        print(
            f"{args.readme}: rule tables updated ({len(all_rules())} rules,"
            f" {len(rule_options())} options)",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
