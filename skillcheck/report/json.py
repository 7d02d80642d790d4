"""The JSON report: stable, documented by schemas/report.schema.json."""

from __future__ import annotations

import json

from skillcheck import __version__
from skillcheck.model import Diagnostic, Severity
from skillcheck.report import ReportOptions, display, rel

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
    }


def document(result, options: ReportOptions) -> dict:
    counts = result.counts()
    per_skill: dict = {}
    for diag in result.diagnostics:
        if diag.skill is not None:
            per_skill.setdefault(diag.skill, dict.fromkeys(("error", "warning", "info"), 0))
            per_skill[diag.skill][str(diag.severity)] += 1
    from skillcheck.rules.budgets import skill_figures

    skills = []
    catalog_total = 0
    for skill in result.skills:
        # the same cached figures the budget rules checked (DESIGN §6: tokens per tier)
        figures = skill_figures(skill, result.tokenizer)
        catalog_total += figures.catalog_tokens or 0
        skills.append(
            {
                "path": rel(skill.root, options.cwd),
                "name": skill.name,
                "outcomes": {t: str(o) for t, o in result.outcomes[skill.root].items()},
                "counts": per_skill.get(skill.root, dict.fromkeys(("error", "warning", "info"), 0)),
                "tokens": {
                    "catalog": figures.catalog_tokens,
                    "body": figures.body_tokens,
                    "references": sum(r.tokens for r in figures.references),
                },
                "lines": figures.body_lines,
            }
        )
    return {
        "version": REPORT_VERSION,
        "tool": {"name": "skillcheck", "version": __version__},
        "targets": list(result.targets),
        "skills": skills,
        "diagnostics": [diagnostic_dict(d, options) for d in result.diagnostics],
        "summary": {
            "skills": len(result.skills),
            "errors": counts[Severity.ERROR],
            "warnings": counts[Severity.WARNING],
            "info": counts[Severity.INFO],
            "fixable": sum(1 for d in result.diagnostics if d.fix is not None),
            "catalog_tokens": catalog_total,
        },
    }


def _encodable(value):
    """Every string of the document made encodable (undecodable file-name bytes escaped)."""
    if isinstance(value, str):
        return display(value)
    if isinstance(value, dict):
        return {k: _encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_encodable(v) for v in value]
    return value


def render(result, options: ReportOptions) -> str:
    doc = _encodable(document(result, options))
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
