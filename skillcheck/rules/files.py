"""SK509–SK511: what the skill directory holds besides regular files.

Symlinks are judged from what the walk recorded (the link's text), resolved lexically inside
the skill by ``skillcheck.analysis.paths``; special files are only ever lstat'ed by the walk, never
opened. SKILL.md itself is SK101's business and is skipped here.
"""

from __future__ import annotations

from collections.abc import Iterator

from skillcheck.analysis.paths import show, tree_of
from skillcheck.rules.base import Context, rule
from skillcheck.source.skill import WHOLE_FILE, Finding, Impact, Outcome, Severity, Skill, SkillFile
from skillcheck.targets import every

_LOST = every(Impact(Outcome.DEGRADED, Severity.ERROR))


def _entries(skill: Skill, kinds: tuple[str, ...]) -> Iterator[SkillFile]:
    tree = tree_of(skill)
    for entry in skill.files:
        if entry.kind in kinds and tree.owned(entry.rel) and entry.path != skill.skill_md:
            yield entry


@rule(
    "SK509",
    "symlink-unsafe",
    Severity.ERROR,
    "A symlink in the skill dangles, loops, or points outside the skill.",
    what="""
        Resolves every symlink in the skill from its link text, inside the skill only, and
        reports links that point at nothing, that loop (`a -> b -> a`), that point at a folder
        holding the link (a cycle for anything that follows links), that are absolute, or that
        lead outside the skill (`-> ../../shared/x.md`, `-> /etc/passwd`). Nothing outside the
        skill is looked at.
    """,
    why="""
        An installed or uploaded skill is a copy of its folder. A link outside it ships the
        outside file's content (Anthropic's `package_skill.py` stores what the link points at)
        or nothing at all (zip uploads, `git` on Windows, copies without `-L`), and a dangling
        or looping link is an error for `skillcheck pack` and for tools that walk the tree.
        An absolute link breaks as soon as the skill is installed somewhere else.
    """,
    bad="""
        my-skill/references/style.md -> ../../shared/style.md
    """,
    good="""
        my-skill/references/style.md       (a copy of the file)
    """,
)
def symlink_unsafe(skill: Skill, ctx: Context) -> Iterator[Finding]:
    tree = tree_of(skill)
    for entry in _entries(skill, ("symlink",)):
        target = entry.link_target
        shown = f"symlink {show(entry.rel)} -> {show(target if target is not None else '?')}"
        res = tree.resolve_link(entry)
        if res.status == "outside":
            if res.reason == "absolute" and len(res.via) == 1:
                message = (
                    f"{shown} is absolute: it breaks as soon as the skill is installed"
                    " elsewhere, and points outside the skill"
                )
            elif len(res.via) > 1:
                message = (
                    f"{shown} leads outside the skill through {show(res.via[-1].rel)}; packers"
                    " refuse it or ship the outside content, installed copies lose it"
                )
            else:
                message = (
                    f"{shown} points outside the skill; packers refuse it or ship the outside"
                    " content, installed copies lose it"
                )
            help_ = "copy the file into the skill instead of linking to it"
        elif res.status == "loop":
            message = f"{shown} is a symlink loop"
            help_ = "remove the link or point it at a real file"
        elif res.status == "missing":
            message = f"{shown} dangles: {show(res.missing or target or '?')} does not exist"
            help_ = "remove the link or point it at a file of the skill"
        elif (
            res.status == "found"
            and res.kind == "dir"
            and (res.rel == "" or entry.rel.startswith(res.rel + "/"))
        ):
            where = "the skill's root" if res.rel == "" else show(res.rel)
            message = (
                f"{shown} points at {where}, a folder that holds the link: anything that follows"
                " links recurses forever"
            )
            help_ = "remove the link"
        else:
            continue
        yield Finding(message, span=WHOLE_FILE, path=entry.path, impact=_LOST, help=help_)


@rule(
    "SK510",
    "symlink-in-skill",
    Severity.WARNING,
    "A symlink points at another file of the skill.",
    what="""
        Reports symlinks that resolve to a file or folder inside the same skill (links that
        leave the skill, dangle or loop are SK509 errors).
    """,
    why="""
        What happens to an internal link depends on who copies the skill: Anthropic's
        `package_skill.py` and `skillcheck pack` store a second copy of the file's content
        (and `skillcheck pack` refuses a link to a folder), zip uploads and Windows checkouts
        without symlink support turn it into a small text file holding the target's path, and
        a copy with `cp -r` keeps the link. A plain file behaves the same everywhere.
    """,
    bad="""
        my-skill/references/latest.md -> v2.md
    """,
    good="""
        my-skill/references/v2.md           (link to it from SKILL.md directly)
    """,
)
def symlink_in_skill(skill: Skill, ctx: Context) -> Iterator[Finding]:
    tree = tree_of(skill)
    for entry in _entries(skill, ("symlink",)):
        res = tree.resolve_link(entry)
        if res.status != "found":
            continue
        target = show(entry.link_target or "?")
        if res.kind == "dir":
            if res.rel == "" or entry.rel.startswith(res.rel + "/"):
                continue  # SK509
            message = (
                f"symlink {show(entry.rel)} -> {target} links to the folder {show(res.rel)}:"
                " `skillcheck pack` refuses links to folders, zip uploads and Windows checkouts"
                " lose it; move or copy the folder instead"
            )
        else:
            message = (
                f"symlink {show(entry.rel)} -> {target} stays inside the skill: packers store a"
                " second copy of the file, zip uploads and Windows checkouts may turn it into a"
                " text file holding the path; link to the file itself instead"
            )
        yield Finding(message, span=WHOLE_FILE, path=entry.path)


_KIND_WORDS = {
    "fifo": "a FIFO (named pipe)",
    "socket": "a socket",
    "device": "a device file",
    "other": "a special file",
}


@rule(
    "SK511",
    "special-file",
    Severity.ERROR,
    "The skill holds a FIFO, socket or device file.",
    what="""
        Reports entries of the skill directory that are neither regular files, folders nor
        symlinks: FIFOs (named pipes), sockets, character and block devices. skillcheck only
        lstat's them; it never opens them.
    """,
    why="""
        Opening a FIFO blocks until someone writes to it, so a loader or packer that reads
        every file of a skill hangs; sockets and devices cannot be archived (zip uploads,
        `skillcheck pack` and `package_skill.py` fail or skip them). They are usually debris
        from a tool that ran inside the skill folder.
    """,
    bad="""
        my-skill/scripts/server.sock
    """,
    good="""
        (remove it; create sockets and pipes at run time, outside the skill)
    """,
)
def special_file(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for entry in _entries(skill, ("fifo", "socket", "device", "other")):
        yield Finding(
            f"{show(entry.rel)} is {_KIND_WORDS.get(entry.kind, 'a special file')}: loaders"
            " that read it hang or fail and packers cannot archive it; remove it from the skill",
            span=WHOLE_FILE,
            path=entry.path,
        )
