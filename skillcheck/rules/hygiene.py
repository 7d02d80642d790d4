"""SK703 and SK706: what a published skill should not carry, and scripts it cannot run.

Split from rules/security.py for size; the same family (security and hygiene)."""

from __future__ import annotations

import re
from collections.abc import Iterator

from skillcheck.rules.base import Context, rule
from skillcheck.rules.security import exec_sources
from skillcheck.source.junk import (
    ARCHIVE_SUFFIXES,
    BYTECODE_SUFFIXES,
    EGG_INFO,
    ENV_PREFIX,
    JUNK_DIRS,
    JUNK_FILES,
    ROOT_JUNK_DIRS,
    marked_junk_dirs,
)
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import read_file, read_text
from skillcheck.source.skill import Finding, Pos, Severity, Skill, SkillFile, Span

FAMILY = "security"  # one family with the rules of rules/security.py


# --- SK703 junk ------------------------------------------------------------------------------

# `.env.example` & co. document the variables a skill reads, with placeholder values
_ENV_TEMPLATE = LazyPattern(r"\.env\.(?:example|sample|template|dist|defaults?)(?:\.\w+)?$", re.I)


def _junk_reason(entry: SkillFile, venvs: dict[str, str]) -> str | None:
    name = entry.rel.rsplit("/", 1)[-1]
    is_dir = entry.kind == "dir"
    if name in JUNK_FILES:
        return JUNK_FILES[name]
    if is_dir and entry.rel in venvs:
        return venvs[entry.rel]
    if name.startswith(ENV_PREFIX) and not _ENV_TEMPLATE.match(name):
        return "an environment file (such files usually hold secrets)"
    if name == ".git":  # a worktree or submodule has a .git file
        return JUNK_DIRS[".git"]
    if is_dir and name in JUNK_DIRS:
        return JUNK_DIRS[name]
    if is_dir and entry.rel in ROOT_JUNK_DIRS:
        return ROOT_JUNK_DIRS[entry.rel]
    if is_dir and name.endswith(EGG_INFO):
        return "Python packaging metadata (build output)"
    lower = name.lower()
    if not is_dir and lower.endswith(BYTECODE_SUFFIXES):
        return "Python bytecode"
    if not is_dir and lower.endswith(ARCHIVE_SUFFIXES):
        return "a nested archive (archives inside a skill are opaque to review and to loaders)"
    return None


def _used(skill: Skill, entry: SkillFile, texts: list[str]) -> bool:
    """Whether the skill uses an archive or build directory: named in SKILL.md, another
    Markdown file, a script or `package.json` (`"main": "dist/index.js"`)."""
    name = entry.rel.rsplit("/", 1)[-1]
    needles: tuple[str, ...] = (entry.rel + "/", name + "/") if entry.kind == "dir" else (name,)
    if name == "target" and entry.kind == "dir":  # Cargo's: "target/" alone is any folder
        needles = (entry.rel + "/", "target/release/", "target/debug/")
    return any(needle in text for text in texts for needle in needles)


def _package_json_texts(skill: Skill) -> Iterator[str]:
    for entry in skill.files:
        if entry.kind == "file" and entry.rel.rsplit("/", 1)[-1] == "package.json":
            text = read_text(skill, entry)
            if text is not None:
                yield text


@rule(
    "SK703",
    "junk-file",
    Severity.WARNING,
    "The skill contains files that must not ship (caches, VCS data, env files, archives).",
    what="""
        Reports, once per entry at its path, what does not belong in a published skill:
        `.DS_Store` and `Thumbs.db`; version-control directories (`.git`, `.hg`, `.svn`…);
        Python caches (`__pycache__`, `*.pyc`, `.pytest_cache`, `.mypy_cache`…);
        `node_modules`; virtualenvs (`.venv`, `venv`, or any directory holding a
        `pyvenv.cfg`); `.env*` files; build output (`build/` and `dist/` at the skill root,
        `*.egg-info`, Cargo's `target/` beside a `Cargo.toml`, known by the `CACHEDIR.TAG`
        or `.rustc_info.json` Cargo writes in it); and nested archives (`*.zip`, `*.tar.gz`,
        `*.tgz`, `*.skill`, …).
        Entries inside a reported directory are not reported again. A `.git` directory at
        the skill's root is not reported: the skill is the root of a repository, and that is
        its checkout (a `.git` file there, or a `.git` further down, is).

        Files the skill uses are never reported: an archive or a `build/` / `dist/`
        directory named in SKILL.md, another Markdown file, a script (a tarball a script
        unpacks) or a `package.json` (`"main": "dist/index.js"`), and environment templates
        (`.env.example`, `.env.sample`, `.env.template`), which document variables with
        placeholder values.
    """,
    why="""
        Whatever is in the directory is copied by installers and uploads: Anthropic's
        `package_skill.py` ships `.git/` and `.env`, which can publish a repository's history
        and its secrets. Caches and dependencies bloat the skill and differ per machine, and an
        archive hides its content from review and from every check here. `skillcheck pack`
        leaves all of these out; delete them or list them in `.gitignore`.
    """,
    bad="""
        pdf-tools/
          SKILL.md
          .env
          scripts/__pycache__/
          assets/old-version.zip
    """,
    good="""
        pdf-tools/
          SKILL.md
          scripts/extract.py
    """,
)
def junk_file(skill: Skill, ctx: Context) -> Iterator[Finding]:
    # virtualenvs and Cargo's target/, known by a file inside
    venvs = marked_junk_dirs([e.rel for e in skill.files])
    reported: list[str] = []  # junk directories: what lies inside is not reported again
    texts: list[str] | None = None  # read only when an archive or build directory is found
    for entry in skill.files:
        if entry.rel == ".git" and entry.kind == "dir":
            # the skill is the root of a repository: that is its checkout, which nobody can
            # delete; installers clone or copy the tree without it, and `pack` leaves it out
            continue
        if any(entry.rel.startswith(prefix) for prefix in reported):
            continue
        reason = _junk_reason(entry, venvs)
        if reason is None:
            continue
        if reason.startswith(("a nested archive", "build output")):
            # (Cargo's target/ too: a skill that runs `target/release/tool` uses it)
            if texts is None:
                texts = [t.text for t in exec_sources(skill)]
                texts += list(_package_json_texts(skill))
            if _used(skill, entry, texts):
                continue  # never tell an author to delete what the skill runs or unpacks
        if entry.kind == "dir":
            reported.append(entry.rel + "/")
        shown = entry.rel + ("/" if entry.kind == "dir" else "")
        yield Finding(
            f"{shown} is {reason} and must not ship with the skill; delete it (and add it to"
            " .gitignore)",
            span=Span(Pos(1, 1), Pos(1, 2)),
            path=entry.path,
        )


# --- SK706 shebang without the executable bit ------------------------------------------------


# words that run a script given as their argument: `python scripts/x.py` needs no mode bit
_INTERPRETERS = frozenset(
    {
        "python",
        "python2",
        "python3",
        "py",
        "pypy",
        "pypy3",
        "bash",
        "sh",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "node",
        "nodejs",
        "deno",
        "bun",
        "ruby",
        "perl",
        "php",
        "pwsh",
        "powershell",
        "tsx",
        "ts-node",
        "rscript",
        "julia",
        "lua",
        "osascript",
        "source",
        ".",
        "uv",
        "uvx",
        "run",
        "npx",
        "bunx",
        "pnpx",
        "poetry",
        "pipenv",
        "pdm",
        "hatch",
        "rye",
        "conda",
        "swift",
        "kotlin",
        "groovy",
        "java",
        "go",
        "elixir",
        "awk",
        "gawk",
        "tclsh",
        "wish",
    }
)
# where a command starts: start of a line (after a prompt or list marker), a code span, a
# shell operator, or a substitution
_COMMAND_START = LazyPattern(r"(?:^|[`(]|&&|\|\||[;|]|\$\(|\bthen|\bdo|\bexec|\bsudo)\s*$")
_LINE_LEAD = LazyPattern(r"^\s*(?:(?:[-*+>]|\d+[.)]|\$|#|%)\s+)*$")
# a directory the runtime or the script substitutes: `./`, `${CLAUDE_SKILL_DIR}/`, `$DIR/`,
# `{baseDir}/`, `"$(dirname "$0")"/`; what stays before the path is the command position
_DIR_PREFIX = LazyPattern(
    r"(?:[\"']?(?:\./|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/|\{[A-Za-z_]+\}/|\"?\$\((?:[^)$]|\$(?!\())*\)\"?/"
    r"|[\w.~/-]*/))?$"
)


def _runs_directly(text: str, rel: str) -> bool:
    """Whether ``text`` runs the script at ``rel`` as a program (``./scripts/x.sh``,
    `` `scripts/x.sh FILE` ``), not through an interpreter (``python scripts/x.py``) and not
    as a mere mention or link."""
    names = {rel}
    if "/" in rel:  # a script beside another one runs it as `./x.sh` or `"$DIR/x.sh"`
        names.add(rel.rsplit("/", 1)[1])
    for name in names:
        start = text.find(name)
        while start >= 0:
            end = start + len(name)
            after = text[end : end + 1]
            if not (after.isalnum() or after in "_-."):  # the whole name, not a prefix
                line_start = text.rfind("\n", 0, start) + 1
                before = text[line_start:start]
                prefix = _DIR_PREFIX.search(before)
                head = before[: prefix.start()] if prefix else before
                attached = prefix is not None and bool(prefix.group())
                explicit = (
                    prefix is not None
                    and attached
                    and prefix.group().lstrip("\"'").startswith(("./", "$", "{"))
                )
                if (
                    (name == rel or attached)
                    and _command_position(head)
                    and (explicit or _has_arguments(text, end, head))
                    and not _mention_only(text, end, head, prefix.group() if prefix else "")
                ):
                    return True
            start = text.find(name, end)
    return False


def _runs_through_interpreter(text: str, rel: str) -> bool:
    """Whether ``text`` runs the script at ``rel`` through its interpreter
    (`python ./scripts/x.py`, `bash scripts/x.sh`): the skill has a form that needs no
    executable bit, whatever a usage line elsewhere shows."""
    start = text.find(rel)
    while start >= 0:
        line_start = text.rfind("\n", 0, start) + 1
        before = text[line_start:start]
        prefix = _DIR_PREFIX.search(before)
        head = before[: prefix.start()] if prefix else before
        words = head.split()
        while words and words[-1].startswith("-"):  # `python3 -u scripts/x.py`
            words.pop()
        if words and words[-1].rpartition("$(")[2].lower().strip("`(\"'") in _INTERPRETERS:
            return True
        start = text.find(rel, start + len(rel))
    return False


def _mention_only(text: str, end: int, head: str, prefix: str) -> bool:
    """A path alone in a table cell (`| scripts/x.sh | what it does |`: a table of the
    skill's files, where `|` separates cells rather than piping), or alone in a code span
    behind a directory variable (`` `{baseDir}/tools/x.py` ``, `` `$DIR/x.sh` ``): a
    mention, not a command."""
    if head.lstrip().startswith("|") and head.rstrip(" `").endswith("|"):
        line_end = text.find("\n", end)
        after = text[end : line_end if line_end >= 0 else len(text)]
        if after.lstrip(" `").startswith("|"):
            return True
    return (
        head.endswith("`")
        and text[end : end + 1] == "`"
        and prefix.lstrip("\"'").startswith(("$", "{"))
    )


def _has_arguments(text: str, end: int, head: str) -> bool:
    """After a bare path (no `./`): a code span holding only the path (`` `scripts/x.sh` ``)
    or a list item describing it (`- scripts/x.sh: does X`, `- scripts/x.sh — does X`) is a
    mention; a command goes on with arguments, or ends its line in a code block."""
    rest = text[end : end + 3]
    if head.rstrip().endswith("`"):
        return rest[:1] == " " and rest[1:2] not in ("`", "", "\n")
    return rest[:1] in ("", "\n", "\r", "|", ";", "&") or (
        rest[:1] == " " and rest[1:2] not in ("-", "—", "–", "(", ":") and rest[1:3] != "- "
    )


def _command_position(head: str) -> bool:
    if head.endswith(("](", "<", "'", "[")):  # a link target or a quoted mention
        return False
    words = head.split()
    while words and words[-1].startswith("-"):  # `python3 -u scripts/x.py`
        words.pop()
    while words and "=" in words[-1] and not words[-1].startswith("-"):  # `KEY=1 ./x.sh`
        if "$(" in words[-1] or "`" in words[-1]:
            break  # `OUT=$(python3 scripts/x.py)`: the substitution's command comes next
        words.pop()
        head = head[: head.rstrip().rfind(" ") + 1] if " " in head.rstrip() else ""
    if words and words[-1].rpartition("$(")[2].lower().strip("`(\"'") in _INTERPRETERS:
        return False
    return bool(_LINE_LEAD.match(head) or _COMMAND_START.search(head))


def _run_sources(skill: Skill) -> Iterator[str]:
    """Every text of the skill that may run a script: the SKILL.md body, Markdown, scripts."""
    for item in exec_sources(skill):
        yield item.text


@rule(
    "SK706",
    "shebang-not-executable",
    Severity.WARNING,
    "A script the skill runs directly starts with `#!` but is not executable.",
    what="""
        Reports regular files that start with a `#!` interpreter line, have no executable
        permission bit, and are run directly somewhere in the skill: in the SKILL.md body,
        another Markdown file or a script, as `./scripts/x.sh`, `${CLAUDE_SKILL_DIR}/x.sh`,
        `"$DIR/x.sh"`, or `scripts/x.sh` where a command starts (a line, a code span, after
        `&&`, `|`, `;`). A script run through its interpreter (`python scripts/x.py`,
        `bash scripts/x.sh`, a PEP 723 script with `uv run scripts/x.py`) or only linked or
        mentioned needs no executable bit and is not reported (nor is a script that the
        skill runs through its interpreter somewhere, `python ./scripts/x.py`, while a usage
        line elsewhere shows `./scripts/x.py`); a path alone in a table cell
        (`| scripts/x.sh | what it does |`) or alone in a code span behind a directory
        variable (`` `{baseDir}/scripts/x.py` ``) is a mention, not a run.
    """,
    why="""
        A shebang says the file is meant to be run as `./scripts/tool.sh`; without the
        executable bit that fails with "Permission denied", and the agent wastes a turn (or
        improvises). Archives and bundles keep the mode they are given.
    """,
    bad="""
        -rw-r--r--  scripts/extract.sh    (#!/usr/bin/env bash)
    """,
    good="""
        -rwxr-xr-x  scripts/extract.sh    (chmod +x; in git: git update-index --chmod=+x)
    """,
)
def shebang_not_executable(skill: Skill, ctx: Context) -> Iterator[Finding]:
    texts: list[str] | None = None  # read only when some script needs them
    for entry in skill.files:
        if entry.kind != "file" or entry.mode & 0o111 or entry.path == skill.skill_md:
            continue
        if entry.size < 3:
            continue
        data = read_file(skill, entry)
        if not data or not data.startswith(b"#!"):
            continue
        if texts is None:
            texts = list(_run_sources(skill))
        if not any(_runs_directly(text, entry.rel) for text in texts):
            continue
        if any(_runs_through_interpreter(text, entry.rel) for text in texts):
            continue  # `python ./scripts/x.py` somewhere: the skill has a run that works
        first = data[:200].split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")
        yield Finding(
            f"{entry.rel} starts with {first!r} and the skill runs it directly, but it is not"
            f" executable; run `chmod +x {entry.rel}` (in git: `git update-index --chmod=+x"
            f" {entry.rel}`), or run it through its interpreter in the instructions (zip"
            " uploads and some registries drop the mode)",
            span=Span(Pos(1, 1), Pos(1, len(first) + 1)),
            path=entry.path,
        )
