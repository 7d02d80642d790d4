"""The JSON report: stable, documented by schemas/report.schema.json."""

from __future__ import annotations

from collections import Counter

from skillcheck import __version__
from skillcheck.report import ReportOptions, Sink, display, rel
from skillcheck.source.jsontext import Rows, write_indented
from skillcheck.source.skill import Diagnostic, Severity

REPORT_VERSION = 1


def diagnostic_dict(diag: Diagnostic, options: ReportOptions) -> dict:
    return {
        "code": diag.code,
        "slug": diag.slug,
        "severity": str(diag.severity),
        "message": diag.message,
        "path": rel(diag.path, options.cwd),
        "line": diag.line,
        "column": diag.column,
        "end_line": diag.end_line,
        "end_column": diag.end_column,
        "targets": list(diag.targets),
        "skill": rel(diag.skill, options.cwd) if diag.skill is not None else None,
        "help": diag.help,
        "fix": None if diag.fix is None else {"description": diag.fix.description},
        "related": [
            {"line": a, "column": b, "end_line": c, "end_column": d} for a, b, c, d in diag.related
        ],
    }


def document(result, options: ReportOptions) -> dict:
    counts = result.counts()
    per_skill: dict = {}
    for diag in result.diagnostics:
        if diag.skill is not None:
            per_skill.setdefault(diag.skill, dict.fromkeys(("error", "warning", "info"), 0))
            per_skill[diag.skill][str(diag.severity)] += 1
    catalog_total = 0
    for skill in result.skills:
        # the figures the budget rules checked (tokens per tier), counted when the
        # skill was checked: the lint run must have been asked for them (Settings.figures)
        if skill.figures is None:
            raise ValueError("the JSON report needs a lint run with Settings.figures")
        catalog_total += skill.figures.catalog or 0

    def skill_dict(skill) -> dict:
        figures = skill.figures
        return {
            "path": rel(skill.root, options.cwd),
            "name": skill.name,
            "outcomes": {t: str(o) for t, o in result.outcomes[skill.root].items()},
            "counts": per_skill.get(skill.root, dict.fromkeys(("error", "warning", "info"), 0)),
            "tokens": {
                "catalog": figures.catalog,
                "body": figures.body,
                "references": figures.references,
                "largest_reference": figures.largest_reference,
            },
            "lines": figures.lines,
        }

    doc = {
        "version": REPORT_VERSION,
        "tool": {"name": "skillcheck", "version": __version__},
        "targets": list(result.targets),
        # made while the text is written: never all alive at once
        "skills": Rows(result.skills, skill_dict),
        "diagnostics": Rows(result.diagnostics, lambda d: diagnostic_dict(d, options)),
        "summary": {
            "skills": len(result.skills),
            "errors": counts[Severity.ERROR],
            "warnings": counts[Severity.WARNING],
            "info": counts[Severity.INFO],
            "fixable": sum(1 for d in result.diagnostics if d.fix is not None),
            "catalog_tokens": catalog_total,
        },
    }
    if options.statistics:
        doc["statistics"] = statistics(result)
    return doc


def statistics(result) -> dict:
    """``--statistics`` in the JSON report: the budgets, the skills past each, findings per rule."""
    limits = result.limits
    over = dict.fromkeys(("catalog", "body", "body_lines", "reference"), 0)
    for skill in result.skills:
        fig = skill.figures
        if fig is None:
            continue
        for key, value, limit in (
            ("catalog", fig.catalog, limits.catalog),
            ("body", fig.body, limits.body),
            ("body_lines", fig.lines, limits.lines),
            ("reference", fig.largest_reference, limits.reference),
        ):
            if value is not None and limit is not None and value > limit:
                over[key] += 1
    counts = Counter((d.code, d.slug) for d in result.diagnostics)
    return {
        "tokenizer": result.tokenizer,
        "budgets": {
            "catalog": limits.catalog,
            "body": limits.body,
            "body_lines": limits.lines,
            "reference": limits.reference,
            "collection_catalog": limits.collection,
        },
        "over_budget": over,
        "rules": [
            {"code": code, "slug": slug, "count": n}
            for (code, slug), n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        ],
    }


def write(result, options: ReportOptions, sink: Sink) -> None:
    # every string value made encodable (undecodable file-name bytes escaped)
    write_indented(document(result, options), sink, display)
    sink("\n")


def render(result, options: ReportOptions) -> str:
    parts: list[str] = []
    write(result, options, parts.append)
    return "".join(parts)
