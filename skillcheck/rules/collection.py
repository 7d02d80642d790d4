"""SK8xx: rules over the whole set of skills linted together."""

from __future__ import annotations

from collections.abc import Iterator

from skillcheck.model import Finding, Outcome, Severity, Skill
from skillcheck.rules.base import Context, rule, usable_frontmatter, value_span
from skillcheck.targets import TARGETS, impacts


def skill_key_name(skill: Skill) -> str | None:
    """The name a loader registers the skill under: the declared name, else the directory."""
    return skill.name or (skill.dir_name if skill.doc is not None else None)


@rule(
    "SK801",
    "duplicate-name",
    Severity.ERROR,
    "Two skills in the linted set have the same name.",
    what="""
        Reports every skill whose name (the declared `name`, or the directory name when there
        is none) is already used by another skill linted in the same run, naming the other.
    """,
    why="""
        Loaders key skills by name: when two collide one of them is silently shadowed
        (project skills override user skills, the first directory found wins), so an agent
        gets a different skill than the one the description promised.
    """,
    bad="""
        skills/pdf/SKILL.md:          name: pdf-tools
        skills/pdf-tools/SKILL.md:    name: pdf-tools
    """,
    good="""
        skills/pdf-forms/SKILL.md:    name: pdf-forms
        skills/pdf-tools/SKILL.md:    name: pdf-tools
    """,
    scope="collection",
)
def duplicate_name(skills: list[Skill], ctx: Context) -> Iterator[tuple[Skill, Finding]]:
    first: dict[str, Skill] = {}
    for skill in skills:
        name = skill_key_name(skill)
        if name is None:
            continue
        if name not in first:
            first[name] = skill
            continue
        other = first[name]
        fm = usable_frontmatter(skill)
        node = fm.node("name") if fm else None
        span = value_span(node.resolved()) if node is not None else None
        finding = Finding(
            f"the name {name!r} is also used by {other.display_root}; loaders keep only one of"
            " them, rename one",
            impact=impacts({t: Outcome.DROPPED for t in TARGETS if t != "skills-ref"}),
        )
        if span is not None:
            finding.span = span
        yield skill, finding
