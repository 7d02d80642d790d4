"""A `SKILL.md` that is not a skill: a fragment merged into a real skill at build time.

Some repositories keep partial `SKILL.md` files (build-time overlays such as
`skill-flavors/<flavor>/<skill>/SKILL.md`, or per-rule notes inside a skill's folder) that a
build script merges into the skills it ships. No runtime ever loads them where they are: they
are outside every skills root a loader scans, or inside another skill's folder, where Claude
Code, Copilot and OpenClaw never look (they do not load nested skills). Linting them as skills
gave errors about a frontmatter and links they were never meant to have.

The evidence, all of it needed: the file has no frontmatter at all (no `---` line near its
top: a fragment carries only body text), and either a folder two or more levels above it
holds a `SKILL.md` (it sits inside another skill's folders), or a skill of the same folder
name is in the repository next to it (`<ancestor>/<name>/SKILL.md` or
`<ancestor>/skills/<name>/SKILL.md`, the skill it is merged into). Found by stat alone, up
to the repository root (a `.git`), nothing is read.
"""

from __future__ import annotations

import os

from skillcheck.source import outside
from skillcheck.source.skill import Skill

# how far above the skill the evidence is looked for (a monorepo's skills sit a few levels
# below its root; a fragment's skill within a handful of folders of it)
_MAX_UP = 6
# a `---` line this close to the top means an attempt at a frontmatter (SK103's own cases:
# a blank first line, `---name: x`), not a fragment
_TOP_LINES = 8


def fragment_evidence(skill: Skill) -> str | None:
    """Why ``skill``'s SKILL.md is a fragment merged into another skill, or None."""
    doc = skill.doc
    if doc is None or doc.frontmatter is not None or not doc.text.strip():
        return None
    if any(line.strip().startswith("---") for line in doc.lines[:_TOP_LINES]):
        return None
    return _evidence(skill)


def _evidence(skill: Skill) -> str | None:
    # every stat goes through outside.look: the answer depends on files outside the skill,
    # which the result cache must compare before reusing it
    root = str(skill.root)
    name = os.path.basename(root)
    here = os.path.dirname(root)
    for level in range(_MAX_UP):
        # a SKILL.md in the folder right above is a collection's own file (`skills/SKILL.md`
        # beside `skills/<name>/`): its children are skills; two levels up it is a skill
        # holding this file among its own (`<skill>/rules/R1/SKILL.md`)
        if level and outside.is_file(outside.look(skill, os.path.join(here, "SKILL.md"))):
            return f"it sits inside the skill folder {os.path.basename(here)!r}"
        for twin in (os.path.join(here, name), os.path.join(here, "skills", name)):
            if twin != root and outside.is_file(
                outside.look(skill, os.path.join(twin, "SKILL.md"))
            ):
                rel = os.path.relpath(twin, os.path.dirname(root))
                return f"a skill of the same folder name is at {rel!r}"
        parent = os.path.dirname(here)
        if parent == here or outside.exists(outside.look(skill, os.path.join(here, ".git"))):
            return None
        here = parent
    return None
