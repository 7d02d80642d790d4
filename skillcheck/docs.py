"""Rule documentation generated from the registry: the table, JSON, and README section."""

from __future__ import annotations

import json

from skillcheck.rules import FAMILIES, all_rules


def rules_table() -> str:
    lines = []
    for rule in all_rules():
        fix = " (fixable)" if rule.fixable else ""
        lines.append(f"{rule.code}  {rule.slug:<28} {rule.severity!s:<8} {rule.summary}{fix}")
    return "\n".join(lines) + "\n"


def rules_json() -> str:
    data = [
        {
            "code": r.code,
            "slug": r.slug,
            "severity": str(r.severity),
            "summary": r.summary,
            "fixable": r.fixable,
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
        rows.append(
            f"| {r.code} | `{r.slug}` | {r.severity} | {'yes' if r.fixable else ''} | {summary} |"
        )
    return "\n".join(rows) + "\n"
