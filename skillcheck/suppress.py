"""Inline suppressions in SKILL.md.

``<!-- skillcheck-disable SK602 -->`` silences codes for the whole SKILL.md;
``<!-- skillcheck-disable-next-line SK501 -->`` for the next line. Codes or slugs, separated
by commas or spaces; none means every rule. An HTML comment is invisible in rendered
Markdown, so it is the one place a suppression can live without changing what agents read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from skillcheck.model import Diagnostic, Skill
from skillcheck.rules import Context, Rule, get_rule

_COMMENT = re.compile(
    r"<!--\s*skillcheck-(disable-next-line|disable)\b(?P<codes>[^>]*?)\s*-->", re.IGNORECASE
)


@dataclass
class Suppression:
    line: int  # line of the comment
    column: int
    end_column: int
    next_line: bool
    codes: frozenset[str] | None  # None = all rules
    unknown: list[str] = field(default_factory=list)
    used: bool = False

    def covers(self, diag: Diagnostic) -> bool:
        if self.codes is not None and diag.code not in self.codes:
            return False
        return not self.next_line or diag.line == self.line + 1


def find_suppressions(skill: Skill) -> list[Suppression]:
    doc = skill.doc
    if doc is None or "skillcheck-disable" not in doc.text:
        return []
    out: list[Suppression] = []
    for index, line in enumerate(doc.lines):
        if "skillcheck-disable" not in line:
            continue
        for match in _COMMENT.finditer(line):
            words = [w for w in re.split(r"[\s,]+", match.group("codes").strip()) if w]
            codes: set[str] = set()
            unknown: list[str] = []
            for word in words:
                rule = get_rule(word)
                if rule is None:
                    unknown.append(word)
                else:
                    codes.add(rule.code)
            out.append(
                Suppression(
                    line=index + 1,
                    column=match.start() + 1,
                    end_column=match.end() + 1,
                    next_line=match.group(1).lower() == "disable-next-line",
                    codes=frozenset(codes) if words else None,
                    unknown=unknown,
                )
            )
    return out


def apply_suppressions(
    diagnostics: list[Diagnostic], skills: list[Skill], rules: list[Rule], ctx: Context
) -> list[Diagnostic]:
    """Drop suppressed diagnostics."""
    by_file = {}
    for skill in skills:
        found = find_suppressions(skill)
        if found and skill.skill_md is not None:
            by_file[skill.skill_md] = found
    if not by_file:
        return diagnostics
    kept = []
    for diag in diagnostics:
        found = by_file.get(diag.path)
        hit = next((s for s in found if s.covers(diag)), None) if found else None
        if hit is None:
            kept.append(diag)
        else:
            hit.used = True
    return kept
