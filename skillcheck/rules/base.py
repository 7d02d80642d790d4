"""What a rule is, and the context its check receives.

A rule is a small self-describing unit, in the manner of yamllint's rule modules and ruff's
rule pages: a code, a slug, a default severity, a one-line summary, documentation (what it
checks, why it matters, a failing example, the fixed version, options) and a check.

Skill rules are generators ``check(skill, ctx) -> Iterator[Finding]``; collection rules
(``scope="collection"``) receive every loaded skill at once: ``check(skills, ctx)`` yielding
``(skill, finding)`` pairs.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from skillcheck.analysis import edits
from skillcheck.source.skill import Frontmatter, Node, Pos, Severity, Skill, Span


@dataclass
class Context:
    """What a check may consult besides the skill: targets and options."""

    targets: tuple[str, ...] = ("agentskills",)
    options: dict[str, Any] = field(default_factory=dict)

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)


Check = Callable[..., Iterator[Any]]


@dataclass(frozen=True)
class Rule:
    code: str
    slug: str
    severity: Severity
    summary: str
    what: str
    why: str
    bad: str  # a failing example (a SKILL.md excerpt or a tree)
    good: str  # the fixed version
    check: Check
    options: str = ""
    fixable: bool = False
    # "suppression": run by the suppression step with the skill's suppression comments
    scope: Literal["skill", "collection", "discovery", "suppression"] = "skill"
    family: str = ""
    # off by default: runs only when selected (`select`, `extend-select`, `--select`)
    default_enabled: bool = True

    def docs_markdown(self) -> str:
        """The rule's full page, as `skillcheck rule CODE` prints it."""
        parts = [
            f"# {self.code} {self.slug}",
            "",
            f"Default severity: {self.severity}. Fixable: {'yes' if self.fixable else 'no'}."
            + (
                ""
                if self.default_enabled
                else f" Off by default: enable it with `--extend-select {self.code}`"
                f' (config `extend-select = ["{self.code}"]`).'
            ),
            "",
            self.summary,
            "",
            "## What it does",
            "",
            self.what,
            "",
            "## Why is this bad?",
            "",
            self.why,
            "",
            "## Example",
            "",
            "```",
            self.bad.rstrip("\n"),
            "```",
            "",
            "Use instead:",
            "",
            "```",
            self.good.rstrip("\n"),
            "```",
        ]
        if self.options:
            parts += ["", "## Options", "", self.options]
        return "\n".join(parts) + "\n"


_REGISTRY: dict[str, Rule] = {}


def _clean(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def rule(
    code: str,
    slug: str,
    severity: Severity,
    summary: str,
    *,
    what: str,
    why: str,
    bad: str,
    good: str,
    options: str = "",
    fixable: bool = False,
    scope: Literal["skill", "collection", "discovery", "suppression"] = "skill",
    default_enabled: bool = True,
) -> Callable[[Check], Check]:
    """Register the decorated check as a rule."""

    def decorate(check: Check) -> Check:
        if code in _REGISTRY:
            raise RuntimeError(f"duplicate rule code {code}")
        if any(r.slug == slug for r in _REGISTRY.values()):
            raise RuntimeError(f"duplicate rule slug {slug}")
        _REGISTRY[code] = Rule(
            code=code,
            slug=slug,
            severity=severity,
            summary=summary,
            what=_clean(what),
            why=_clean(why),
            bad=_clean(bad),
            good=_clean(good),
            options=_clean(options),
            fixable=fixable,
            scope=scope,
            # a module may name its family (a family split over two modules keeps one tag)
            family=getattr(sys.modules.get(check.__module__), "FAMILY", None)
            or check.__module__.rsplit(".", 1)[-1],
            check=check,
            default_enabled=default_enabled,
        )
        return check

    return decorate


def registry() -> dict[str, Rule]:
    return _REGISTRY


# --- helpers shared by the rule families -------------------------------------------------


def fixes() -> Any:
    """The fix builders (``skillcheck.analysis.edits``), imported when a rule first plans an edit: a
    run over cached skills never needs them (nor the YAML parser they re-parse with)."""

    return edits


def usable_frontmatter(skill: Skill) -> Frontmatter | None:
    """The frontmatter when it parsed to a mapping; None otherwise.

    Field rules run only on a usable frontmatter, so one broken delimiter or YAML error is
    reported once (by SK1xx), not again as a missing name and a missing description.
    """
    doc = skill.doc
    fm = doc.frontmatter if doc else None
    if fm is None or fm.close_line is None or fm.error or fm.too_complex:
        return None
    if fm.root is not None and fm.root.resolved().kind != "mapping":
        return None
    return fm


def value_span(node: Node, offset: int = 0, length: int | None = None) -> Span:
    """The span of characters ``[offset, offset+length)`` of a scalar's value.

    Exact for single-line plain and quoted scalars without escapes; otherwise the node's
    own span, which is still the right line and column to look at.
    """
    if node.kind != "scalar" or node.span.start.line != node.span.end.line:
        return node.span
    start = node.span.start
    quote = 1 if node.style in ("'", '"') else 0
    raw_len = node.span.end.column - start.column - 2 * quote
    if raw_len != len(node.value):  # escapes or folded text: positions do not map 1:1
        return node.span
    col = start.column + quote + offset
    end = col + (length if length is not None else len(node.value) - offset)
    return Span(Pos(start.line, col), Pos(start.line, max(end, col + 1)))


def key_span(fm: Frontmatter, name: str) -> Span:
    key = fm.key(name)
    return key.span if key is not None else Span(Pos(fm.open_line, 1), Pos(fm.open_line, 4))


def first_line_span(skill: Skill) -> Span:
    return Span(Pos(1, 1), Pos(1, 4))
