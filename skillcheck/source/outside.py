"""Looking outside a skill's folder, recorded on the skill.

A few checks decide from what lies around a skill: whether a `../` link's target exists
(SK501), whether a SKILL.md without frontmatter is a fragment of another skill (SK103), where
the plugin holding the skill is (``${CLAUDE_PLUGIN_ROOT}`` links). None of that is in the
skill's own listing, so the result cache would not see it change: every such look goes
through ``look``, which records the path and what was there on the skill, and the cache
keeps the record and compares it with the file system before reusing a result (a cache can
make a run faster, never different). Only stat is used: nothing outside is ever read.
"""

from __future__ import annotations

import os
import stat

from skillcheck.source.skill import Skill

# what was at a path: a regular file, a directory, something else, a dangling symlink,
# nothing. Every question asked outside (isfile, exists, lexists) is a function of it.
State = str


def state(path: str) -> State:
    """What is at ``path`` now (following symlinks, as ``os.path.isfile`` does)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return "dangling" if os.path.lexists(path) else "none"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    return "other"


def look(skill: Skill | None, path: str, seen: State | None = None) -> State:
    """The state of ``path`` (or ``seen``, when the caller already knows it from this run),
    recorded on ``skill`` as an input of its results."""
    found = state(path) if seen is None else seen
    if skill is not None:
        skill.outside[path] = found
    return found


def is_file(found: State) -> bool:
    return found == "file"


def exists(found: State) -> bool:
    return found in ("file", "dir", "other")


def lexists(found: State) -> bool:
    return found != "none"


def unchanged(looked: object) -> bool:
    """Whether every ``[path, state]`` of a cache entry's record is what is there now;
    False for anything that is not such a list."""
    if type(looked) is not list:
        return False
    for item in looked:
        if type(item) is not list or len(item) != 2 or type(item[0]) is not str:
            return False
        if state(item[0]) != item[1]:
            return False
    return True


def recorded(skill: Skill) -> list[list[str]]:
    """The skill's outside looks, as a cache entry keeps them."""
    return sorted([path, found] for path, found in skill.outside.items())
