"""Which of a skill's files the agent can reach from SKILL.md, by links and by names.

Shared by SK501 (a link from a file nothing reaches is a lesser loss) and SK506 (files
nothing reaches). Resolved purely from the skill's walk and the link analysis.
"""

from __future__ import annotations

import re

from skillcheck.analysis.links import (
    _CODE_SUFFIXES,
    RESOURCE_DIRS,
    analysis,
    mentions,
    written_as_path,
)
from skillcheck.analysis.paths import tree_of
from skillcheck.source.junk import UNMENTIONED_NAMES
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import read_text
from skillcheck.source.skill import Memo, Skill, SkillFile

_RUNTIME_FILE = LazyPattern(r"agents/[^/]+\.ya?ml$")

# the dependency manifests of a skill's code: the scripts use them (`npm install` in
# scripts/), linking them from SKILL.md tells the agent nothing
_MANIFESTS = frozenset(
    {
        "package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
        "requirements.txt", "pyproject.toml", "uv.lock", "poetry.lock", "Pipfile",
        "Pipfile.lock", "go.mod", "go.sum", "Cargo.toml", "Cargo.lock", "Gemfile",
        "Gemfile.lock", "tsconfig.json", "deno.json", "pom.xml", "build.gradle",
        "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "Directory.Build.props",
        "Directory.Build.targets", "Directory.Packages.props", "global.json", "nuget.config",
    }
)  # fmt: skip
_PROJECT_SUFFIXES = (".csproj", ".fsproj", ".vbproj", ".sln")  # .NET project files


def misnamed_manifest(rel: str) -> str | None:
    """The dependency manifest ``rel``'s file name misspells (`requirement.txt`), or None."""
    import difflib  # only for the few files nothing mentions

    name = rel.rpartition("/")[2]
    if name in _MANIFESTS:
        return None
    close = difflib.get_close_matches(name, _MANIFESTS, n=1, cutoff=0.9)
    return close[0] if close else None


_CANDIDATES: Memo[list[SkillFile]] = Memo("resource-candidates")
_REACHED: Memo[set[str]] = Memo("reached")


def resource_candidates(skill: Skill) -> list[SkillFile]:
    cached = skill.memos.get(_CANDIDATES)
    if cached is not None:
        return cached
    tree = tree_of(skill)
    out = []
    for entry in skill.files:
        if entry.kind != "file":  # symlinks are SK509/SK510's, whatever they point at
            continue
        parts = entry.rel.split("/")
        if len(parts) < 2 or parts[0] not in RESOURCE_DIRS:
            continue
        if any(p.startswith(".") or p in UNMENTIONED_NAMES for p in parts) or entry.rel.endswith(
            ".pyc"
        ):
            continue
        if parts[-1] in _MANIFESTS or parts[-1].endswith(_PROJECT_SUFFIXES):
            continue
        if not tree.owned(entry.rel) or any(
            "/".join(parts[:i]) in tree.unlisted for i in range(1, len(parts))
        ):
            continue
        out.append(entry)
    return skill.memos.put(_CANDIDATES, out)


_BINARY_SUFFIXES = (
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".zip", ".gz", ".tgz", ".whl",
    ".ttf", ".otf", ".woff", ".woff2", ".mp3", ".mp4", ".wav", ".bin", ".so", ".dylib", ".exe",
)  # fmt: skip


def readable_text(skill: Skill, entry: SkillFile) -> str | None:
    if entry.size > 1_000_000 or entry.rel.lower().endswith(_BINARY_SUFFIXES):
        return None
    return read_text(skill, entry)  # None when binary


def reached(skill: Skill) -> set[str]:
    """Files the agent can find: mentioned in SKILL.md, or named by a file it can find.

    From a found file, another counts as named when its path (from the skill root or from
    that file's folder), its file name, or (for code) its module name appears in the text,
    or a Markdown link resolves to it. Deliberately lenient: this decides what is reported
    as never mentioned, and a helper module imported by a documented script is not news.
    """
    done = skill.memos.get(_REACHED)
    if done is not None:
        return done
    candidates = resource_candidates(skill)
    known = mentions(skill)
    tree = tree_of(skill)
    sources = [
        e
        for e in skill.files
        if e.kind in ("file", "symlink") and tree.owned(e.rel) and e.path != skill.skill_md
    ]
    # SKILL.md, and the runtime files beside it that name resources: Codex's
    # agents/openai.yaml points at the skill's icons (`interface.icon_small`)
    found = {
        e.rel
        for e in sources
        if e.rel in known.linked or known.in_skill_md(e.rel) or _RUNTIME_FILE.match(e.rel)
    }
    pending = [e for e in sources if e.rel in found]
    rest = [e for e in candidates if e.rel not in found]
    by_doc: dict[str, set[str]] = {}
    for rel, uses in analysis(skill).candidates.items():
        for use in uses:
            if use.res is not None and use.res.status == "found":
                by_doc.setdefault(rel, set()).add(use.res.rel)
    while pending and rest:
        source = pending.pop()
        text = readable_text(skill, source)
        if text is None:
            continue
        here = source.rel.rpartition("/")[0]
        linked = by_doc.get(source.rel, set())
        lowered = text.lower()
        still = []
        for entry in rest:
            if entry.rel in linked or _named_in(entry, here, lowered):
                found.add(entry.rel)
                pending.append(entry)
            else:
                still.append(entry)
        rest = still
    return skill.memos.put(_REACHED, found)


def relative_to(rel: str, folder: str) -> str:
    """``rel`` as written from ``folder`` (both relative to the skill root), lexically."""
    target, start = rel.split("/"), folder.split("/") if folder else []
    common = 0
    while common < min(len(target) - 1, len(start)) and target[common] == start[common]:
        common += 1
    return "/".join([".."] * (len(start) - common) + target[common:])


def _named_in(entry: SkillFile, here: str, text: str) -> bool:
    """Whether ``text`` (lower case) names ``entry``."""
    rel = entry.rel.lower()
    name = rel.rpartition("/")[2]
    stem = name.rpartition(".")[0] if "." in name else name
    if stem not in text:
        return False
    relative = relative_to(rel, here.lower())
    if any(written_as_path(word, text) for word in {rel, relative, name}):
        return True
    if name.endswith(_CODE_SUFFIXES) and stem:
        return re.search(r"\b" + re.escape(stem) + r"\b", text) is not None
    return False
