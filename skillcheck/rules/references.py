"""SK5xx: what SKILL.md and the skill's other Markdown files point at.

Links are read with markdown-it-py (``skillcheck.source.markdown``) from SKILL.md's body and from
every other Markdown file of the skill (relative to that file), and resolved purely from the
skill's walk (``skillcheck.analysis.paths``): nothing outside the skill is ever opened or stat'ed.
URLs with a scheme are not checked; links inside code are not links. The check behind SK407
(frontmatter fields that name files, registered with the SK4xx fields) lives here too, since it
resolves paths the same way.
"""

from __future__ import annotations

import bisect
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple
from urllib.parse import unquote

from skillcheck.analysis import links
from skillcheck.analysis.links import (
    _CODE_SUFFIXES,
    _JUNK_NAMES,
    RESOURCE_DIRS,
    Doc,
    LinkUse,
    _outline_at,
    _quick_anchor,
    _text_at,
    _word_char,
    analysis,
    checked_uses,
    doc_text,
    documents,
    mentions,
    parsed,
    written_as_path,
)
from skillcheck.analysis.paths import (
    Resolution,
    Tree,
    describe_difference,
    has_scheme,
    show,
    tree_of,
)
from skillcheck.rules.base import Context, rule, usable_frontmatter, value_span
from skillcheck.source import markdown
from skillcheck.source.markdown import Link, Markdown, Outline, Segment
from skillcheck.source.skill import (
    WHOLE_FILE,
    Finding,
    Impact,
    Node,
    Outcome,
    Pos,
    Severity,
    Skill,
    SkillFile,
    Span,
)
from skillcheck.targets import every

# a lost reference: every runtime still loads the skill, without what the link promised
_LOST = every(Impact(Outcome.DEGRADED, Severity.ERROR))


def _in_skill(doc: Doc, res: Resolution) -> str:
    """`` (references/x.md in the skill)`` when the link is written from another folder."""
    where = res.missing or res.rel
    return f" ({where} in the skill)" if doc.base and where else ""


def _finding(use: LinkUse, message: str, help_: str | None = None, lost: bool = True) -> Finding:
    return Finding(
        message, span=use.span, path=use.doc.path, impact=_LOST if lost else None, help=help_
    )


def _what(link: Link | None) -> str:
    if link is None:
        return "link"
    return {"image": "image", "definition": "link definition", "html": "HTML link"}.get(
        link.kind, "link"
    )


# --- SK501 ------------------------------------------------------------------------------------


@rule(
    "SK501",
    "broken-link",
    Severity.ERROR,
    "A relative link or image points at a file that does not exist in the skill.",
    what="""
        Resolves every relative link, image, reference definition and HTML `href`/`src` in
        SKILL.md's body and in the skill's other Markdown files (relative to the file that
        holds it, as GitHub renders it) and reports those whose target is not in the skill.
        Percent-escapes are decoded (`my%20file.md`), `#anchors` and `?queries` are set aside,
        and URLs with a scheme (`https:`, `mailto:`, `data:`) are not checked. Links written
        with backslashes, through a dangling symlink or a symlink loop are broken too. When a
        file with a look-alike name exists (a Cyrillic `а` for a Latin `a`, a typo), the message
        names it and the characters that differ. Markdown files are read up to their first
        512,000 characters.

        Runtime variables naming the skill's folder are replaced first: `{baseDir}/x.md`
        (OpenClaw), `${CLAUDE_SKILL_DIR}/x.md` (Claude Code) and `$SKILL_DIR/x.md` resolve
        from the skill root; `${CLAUDE_PLUGIN_ROOT}/skills/<this skill>/x.md` too, and other
        paths of the plugin are not checked (they are outside the skill). A link in another
        Markdown file that is missing from that file's folder but exists from the skill root
        (`scripts/run.py` written in `references/guide.md`) is a warning naming the relative
        path. Template shapes are not links to check: placeholders (`<name>.md`,
        `{topic}.md`, `$VAR`, `[Results]`), `path/to/...`, `your-file`, elisions (`...`),
        globs, and a destination that is only the word `link`, `url`, `path` or `file`. In a
        file copied from a web site (it holds site-relative links, SK512), a missing link
        without an extension (`../basics/tutorial`) names a page of that site: a warning.
        A missing target without an extension (`internal-wiki/runbook`) is a warning: it is
        mostly a page of the site the text was copied from, not a file the agent reads.
        Outside SKILL.md (which every runtime loads), a missing image (`![](shot.png)`,
        `<img src=...>`) is a warning too: a picture for a rendered page, not text the agent
        reads. A missing file that SKILL.md places in a folder the skill does not hold
        (`onboarding/contributor-guide.md`) is one the skill writes: a warning. In a skill
        template (its folder or name says `template`: `template/`, `skill-template`)
        missing targets are warnings: the links show what a filled-in skill would link.
        A missing target in a file the agent never reaches (no link or mention leads to it
        from SKILL.md, directly or through the files SKILL.md leads to: a CHANGELOG, a
        README, a page kept for humans) is a warning as well. Files in a folder of sample
        outputs (`expected_outputs/`, `sample-output/`, `example_outputs/`) show what the
        skill writes, and their links point to the other pages of that output
        (`./pages/01-home.md`): their missing targets are not reported.
    """,
    why="""
        The specification has the agent read referenced files on demand ("progressive
        disclosure"): a broken link means the agent asks for a file that is not there, at the
        moment it needs the instructions in it. Every runtime loads the skill anyway, so the
        failure only shows up in a conversation.
    """,
    bad="""
        See [the API reference](references/api-reference.md).   # the file is references/api.md
    """,
    good="""
        See [the API reference](references/api.md).
    """,
)
def broken_link(skill: Skill, ctx: Context) -> Iterator[Finding]:
    uses = checked_uses(skill)
    # files copied from a web site (they hold site-relative links, SK512): their relative
    # links without an extension are pages of that site, not files of the skill
    from_site = {
        use.doc.rel
        for use in uses
        if use.res is not None and use.res.status == "outside" and use.res.reason == "site"
    }
    for use in uses:
        res = use.res
        if res is None:
            continue
        what = _what(use.link)
        if use.backslash and res.status != "outside":  # C:\docs\x.md is SK502's
            slash = use.path.replace("\\", "/")
            tail = (
                ""
                if res.status == "found"
                else f"; {show(slash)} does not exist in the skill either"
            )
            yield _finding(
                use,
                f"{what} {show(use.path)} uses backslashes, which are path separators only on"
                f" Windows: elsewhere the link is broken; write {show(slash)}{tail}",
            )
        elif res.status == "loop":
            chain = " -> ".join(show(e.rel) for e in res.via[:4])
            yield _finding(
                use,
                f"{what} {show(use.path)} goes through a symlink loop ({chain} ...); replace the"
                " links with the file",
            )
        elif res.status == "missing":
            if _SAMPLE_OUTPUT.search(use.doc.rel):
                continue  # the sample's own pages (`./pages/01-home.md`), not the skill's files
            if use.doc.rel in from_site and "." not in use.path.rpartition("/")[2]:
                yield Finding(
                    f"{what} target {show(use.path)} is not in the skill; this file holds"
                    " links relative to a web site, and this one names a page of that site:"
                    " write the absolute URL (https://…)",
                    span=use.span,
                    path=use.doc.path,
                    severity=Severity.WARNING,
                )
                continue
            from_root = tree_of(skill).resolve(use.path) if use.doc.base else None
            if from_root is not None and from_root.ok:
                # written from the skill root, as SKILL.md would: the agent may well find
                # it, a renderer does not; a warning with the relative path
                fixed = _relative(from_root.rel, use.doc.base)
                yield Finding(
                    f"{what} target {show(use.path)} is not in {show(use.doc.base + '/')},"
                    f" the folder of this file, but {show(from_root.rel)} is in the skill:"
                    f" links resolve from the file that holds them; write {show(fixed)}",
                    span=use.span,
                    path=use.doc.path,
                    severity=Severity.WARNING,
                )
                continue
            demoted = _minor_target(skill, use)
            if demoted is None and not use.doc.is_skill_md and use.doc.rel not in reached(skill):
                demoted = (
                    "no link or mention leads from SKILL.md to this file, so the agent does not"
                    " read it: fix it for the people who do"
                )
            if demoted is not None:
                yield Finding(
                    _missing_message(use, what, res) + f" ({demoted})",
                    span=use.span,
                    path=use.doc.path,
                    severity=Severity.WARNING,
                )
                continue
            yield _finding(use, _missing_message(use, what, res))


_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".bmp", ".avif")


_TEMPLATE_WORD = re.compile(r"(?:^|[-_.])(?:skill[-_])?templates?(?:$|[-_.])")
# a folder of sample outputs: documents showing what the skill writes, linking as they would
_SAMPLE_OUTPUT = re.compile(r"(?:^|/)(?:expected|sample|example)[-_]?outputs?/", re.IGNORECASE)


def _produced_folder(skill: Skill, path: str) -> str | None:
    """The folder SKILL.md places the file ``name`` in when that folder is not in the skill
    (`onboarding/contributor-guide.md`): the skill's output, not one of its files."""
    text = skill.doc.text if skill.doc is not None else ""
    written = posixpath.normpath(path)
    name = written.rpartition("/")[2]
    if not name or name not in text:
        return None
    tree = tree_of(skill)
    quoted = re.escape(name)
    for match in re.finditer(rf"(?<![\w./-])([\w-][\w.-]*)/{quoted}(?![\w.-])", text):
        folder = match.group(1)
        if written.endswith(match.group(0)):
            continue  # the link's own path, not another place for the file
        if folder not in tree.children[""]:
            return f"{folder}/"
    return None


def _minor_target(skill: Skill, use: LinkUse) -> str | None:
    """Why a missing target is a warning, or None for an error.

    A broken link to a file the agent reads is an instruction it cannot follow. But a
    missing target without an extension is a page of the site the text came from
    (`../basics/saving-models`, `internal-wiki/runbook`) more often than a file of the
    skill; outside SKILL.md (which every runtime loads) a missing image is a picture for a
    rendered page, not text the agent reads; and in a skill template (its folder or name
    says `template`) the links show what a filled-in skill would link.
    """
    if use.path.endswith("/"):
        return None
    produced = _produced_folder(skill, use.path)
    if produced is not None:
        return (
            f"SKILL.md names it as a file of {produced}, a folder the skill does not hold:"
            " a file the skill writes, linked as the output will hold it"
        )
    if _TEMPLATE_WORD.search(skill.root.name.casefold()) or _TEMPLATE_WORD.search(
        str(skill.name or "").casefold()
    ):
        return "this skill is a template: its links show what a filled-in skill would link"
    last = use.path.rpartition("/")[2].casefold()
    if "." not in last:
        return (
            "no extension: likely a page of the web site this text was copied from;"
            " if it is a file of the skill, add it"
        )
    image = (use.link is not None and use.link.kind == "image") or last.endswith(_IMAGE_SUFFIXES)
    if image and not use.doc.is_skill_md:
        return "an image of a page in another file than SKILL.md: the agent reads text"
    return None


def _missing_message(use: LinkUse, what: str, res: Resolution) -> str:
    if res.reason == "not a directory":
        return (
            f"{what} target {show(use.path)}{_in_skill(use.doc, res)} does not exist:"
            f" {show(res.missing)} is a file, not a folder"
        )
    if res.reason == "unreadable link":
        return f"{what} target {show(use.path)} goes through a symlink that cannot be read"
    message = f"{what} target {show(use.path)}{_in_skill(use.doc, res)} does not exist"
    if res.via and res.via[-1].kind == "symlink":
        message += f" (it goes through the symlink {show(res.via[-1].rel)})"
    if res.suggestion is not None:
        written = res.missing.rpartition("/")[2]
        parent = res.missing.rpartition("/")[0]
        actual = posixpath.join(parent, res.suggestion) if parent else res.suggestion
        message += f"; did you mean {show(actual)}?"
        diff = describe_difference(written, res.suggestion)
        if diff and any(ord(c) > 127 for c in written + res.suggestion):
            message += f" The names differ: {diff}"
    else:
        message += "; fix the path or add the file"
    return message


# --- SK502 ------------------------------------------------------------------------------------


@rule(
    "SK502",
    "link-outside-skill",
    Severity.ERROR,
    "A link resolves outside the skill directory.",
    what="""
        Reports relative links that climb out of the skill with `../`, absolute paths into a
        machine (`/Users/alice/notes.md`, `/home/bob/x.md`, `/etc/hosts`, `C:\\docs\\x.md`,
        `~/x.md`, `file:` URLs), and links that leave the skill through a symlink on the way
        (`shared/x.md` where `shared` links to `../../common`). The check is lexical: nothing
        outside the skill is looked at. A `../` link is a warning: it works where the folders
        around the skill are installed with it (a plugin, which Claude Code installs whole; a
        repository checkout; a collection linking its sibling skills as
        `../other-skill/SKILL.md`), and no runtime rejects the skill for it, but an upload, a
        pack or a copy of the skill alone loses the file. Machine paths and links that leave
        through a symlink are errors: they name nothing on any other machine. An absolute
        path is a machine path when its first folder is one of a machine's top-level folders
        (`Users`, `home`, `root`, `etc`, `tmp`, `var`, `opt`, `usr`, `Volumes`, `mnt` ...).
        Any other one (`/docs/oauth`) is a link
        copied from a web site, which SK512 reports as a warning, and a single word with no
        extension (`/commit`, `/plugin:skill`) is a slash command, not a path.
    """,
    why="""
        A skill is installed, uploaded and packaged as its own directory: claude.ai and the
        Skills API take a zip of that folder, Codex, Copilot and Claude Code copy or link the
        folder, and `skillcheck pack` ships only what is inside. A file outside the skill is
        missing from every installed copy, even when the link works in the repository.
    """,
    bad="""
        Follow the [shared style guide](../shared/style.md).
    """,
    good="""
        Follow the [style guide](references/style.md).   # a copy inside the skill
    """,
)
def link_outside_skill(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for use in checked_uses(skill):
        res = use.res
        if res is None or res.status != "outside" or res.reason == "site":
            continue
        what = _what(use.link)
        shown = show(use.path)
        if res.reason == "file-url":
            message = f"{what} {shown} is a file: URL on this machine"
        elif res.reason == "absolute":
            message = f"{what} {shown} is an absolute path"
        elif res.reason == "home":
            message = f"{what} {shown} points into a home directory"
        elif res.reason == "symlink":
            link = res.via[-1] if res.via else None
            through = (
                f" through the symlink {show(link.rel)} -> {show(link.link_target or '?')}"
                if link is not None
                else ""
            )
            message = f"{what} {shown} leaves the skill{through}"
        else:
            message = f"{what} {shown} leads outside the skill directory"
            if _stays_in_plugin(skill, use):
                # Claude Code installs the whole plugin: the link works there, and breaks
                # where the skill folder travels alone (uploads, other runtimes, packs)
                yield Finding(
                    message + " but stays inside its plugin: Claude Code, which installs the"
                    " whole plugin, finds it; an upload or a copy of the skill folder alone"
                    " does not: copy the file into the skill if the skill is used on its own",
                    span=use.span,
                    path=use.doc.path,
                    severity=Severity.WARNING,
                )
                continue
            # a `../` link (to a sibling skill, the collection's docs): it works where the
            # folders around the skill are installed with it (a checkout, a collection
            # installed whole) and is lost where the skill travels alone. No runtime rejects
            # or misreads the skill for it, so it is a warning (machine paths stay errors)
            yield Finding(
                message + ": it works only where the folders around the skill are installed"
                " with it (a repository checkout, a whole collection); an upload, a pack or a"
                " copy of this skill alone does not contain it: copy the file into the skill"
                " (e.g. references/) and link it relatively, or name the other skill instead"
                " of linking its files",
                span=use.span,
                path=use.doc.path,
                severity=Severity.WARNING,
            )
            continue
        yield _finding(
            use,
            message + "; installed and packaged copies of the skill do not contain it: copy the"
            " file into the skill (e.g. references/) and link it relatively",
        )


def _stays_in_plugin(skill: Skill, use: LinkUse) -> bool:
    """Whether a `../` link that leaves the skill still ends inside the skill's plugin
    (lexically: nothing outside the skill is looked at)."""
    inside = tree_of(skill).in_plugin()
    if inside is None or use.res is None or use.res.via:
        return False
    joined = posixpath.normpath(posixpath.join(inside, use.doc.base, use.path))
    return joined != ".." and not joined.startswith("../")


# --- SK512 ------------------------------------------------------------------------------------


@rule(
    "SK512",
    "site-relative-link",
    Severity.WARNING,
    "A link is a site-relative web path (`/docs/x`), which names no file of the skill.",
    what="""
        Reports links whose destination starts with `/` but whose first folder is not a
        machine's top-level folder (`/docs/oauth`, `/api/reference.md`): the shape of links in
        text copied from a web site, where they are relative to the site. Machine paths
        (`/Users/...`, `/home/...`, `/etc/...`) are SK502's; a single word with no extension
        (`/commit`, `/plugin:skill`) is a slash command and is not reported. Each file gets
        one finding, at its first such link, with the count of the others.
    """,
    why="""
        Outside the site it came from, `/docs/oauth` names nothing: the agent that follows it
        reads a file at the root of its machine, and a rendered page links to the wrong host.
        The skill still loads and works, so this is a warning: make it an absolute URL.
    """,
    bad="""
        See [the OAuth scopes](/docs/oauth#scopes).
    """,
    good="""
        See [the OAuth scopes](https://example.com/docs/oauth#scopes).
    """,
)
def site_relative_link(skill: Skill, ctx: Context) -> Iterator[Finding]:
    # one finding per file: a page copied from a site holds thousands of such links, and
    # each says the same thing
    by_doc: dict[str, list[LinkUse]] = {}
    for use in checked_uses(skill):
        res = use.res
        if res is not None and res.status == "outside" and res.reason == "site":
            by_doc.setdefault(use.doc.rel, []).append(use)
    for uses in by_doc.values():
        use = uses[0]
        more = len(uses) - 1
        also = f" ({more} more in this file)" if more else ""
        yield Finding(
            f"{_what(use.link)} {show(use.path)}{also} is relative to a web site, not a file"
            " of the skill; write the absolute URL (https://…), or link a copy inside the"
            " skill relatively",
            span=use.span,
            path=use.doc.path,
        )


# --- SK503 ------------------------------------------------------------------------------------


@rule(
    "SK503",
    "link-case-mismatch",
    Severity.ERROR,
    "A link's letter case (or Unicode normalization) differs from the file on disk.",
    what="""
        Reports links that only find their target on a case-insensitive file system:
        `references/API.md` when the file is `references/api.md`, or a name written in a
        different Unicode normalization (NFD `é` as `e` + U+0301 versus NFC `é`).
    """,
    why="""
        macOS and Windows match file names without regard to case (and macOS without regard to
        normalization), so the link works on the author's laptop. Linux, where Codex, CI,
        containers and most agent sandboxes run, and zip or tar packages are exact: there the
        agent gets "file not found".
    """,
    bad="""
        Read [the forms guide](references/Forms.md).     # on disk: references/forms.md
    """,
    good="""
        Read [the forms guide](references/forms.md).
    """,
)
def link_case_mismatch(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for use in checked_uses(skill):
        res = use.res
        if res is None or res.status != "found" or not res.case or use.backslash:
            continue
        written, actual = res.case[0]
        kind = "case" if written.casefold() == actual.casefold() else "Unicode normalization"
        yield _finding(
            use,
            f"{_what(use.link)} {show(use.path)} differs in {kind} from the file on disk"
            f" ({show(written)} is {show(actual)}): it works on macOS and Windows but breaks on"
            f" Linux and in packages; write {show(res.rel)}",
        )


# --- SK504 ------------------------------------------------------------------------------------


@rule(
    "SK504",
    "broken-anchor",
    Severity.WARNING,
    "A `#anchor` does not match any heading of the file it points at.",
    what="""
        Checks `#anchor` links within a file and `file.md#anchor` links to another Markdown
        file of the skill against the target's headings, with the anchors GitHub generates:
        lower case, punctuation dropped, spaces turned into `-`, and `-1`, `-2` ... for repeated
        headings. `id`/`name` attributes in raw HTML count as anchors too; the comparison
        ignores case. Anchors into other kinds of files are not checked.
    """,
    why="""
        An anchor tells the agent (and a human reader) which part of a long reference to read.
        When the heading was renamed, the link still opens the file but lands at the top, and
        an agent that reads only the start of a long file may never reach the section.
    """,
    bad="""
        See [Installation](references/guide.md#instalation).
    """,
    good="""
        See [Installation](references/guide.md#installation).
    """,
)
def broken_anchor(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for use in checked_uses(skill):
        frag = use.fragment
        if not frag or frag.startswith(":~:"):
            continue
        if use.res is None:
            if links.FAST_PATHS and _quick_anchor(
                skill, use.doc.rel, doc_text(skill, use.doc), frag
            ):
                continue
            target, name = _outline(skill, use.doc), use.doc.rel
        else:
            res = use.res
            if res.status != "found" or res.entry is None or use.backslash:
                continue
            if not markdown.is_markdown(res.rel) or res.entry.kind not in ("file", "symlink"):
                continue
            if links.FAST_PATHS and _quick_anchor(skill, res.rel, _text_at(skill, res.rel), frag):
                continue
            name = res.rel
            target = _outline_at(skill, res.rel)
        if target is None or target.has_anchor(frag):
            continue
        if target.truncated:
            continue
        known = [f"#{h.slug}" for h in target.headings]
        close = _closest(frag.lower(), [k[1:] for k in known])
        hint = (
            f"; did you mean #{close}?"
            if close
            else (
                f"; its anchors are {', '.join(known[:6])}{' ...' if len(known) > 6 else ''}"
                if known
                else "; it has no headings"
            )
        )
        yield Finding(
            f"anchor {show('#' + frag)} does not match any heading in {show(name)}{hint}",
            span=use.span,
            path=use.doc.path,
        )


def _outline(skill: Skill, doc: Doc) -> Outline | None:
    if not links.FAST_PATHS:
        md = parsed(skill, doc)
        return None if md is None else markdown.outline_of(md)
    return markdown.outline_for(skill, doc.entry)


def _closest(word: str, choices: list[str]) -> str | None:
    import difflib

    found = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return found[0] if found else None


# --- SK505 ------------------------------------------------------------------------------------


@rule(
    "SK505",
    "nested-reference",
    Severity.INFO,
    "A reference file links to a Markdown file that SKILL.md does not mention.",
    what="""
        Reports links in the skill's Markdown files (other than SKILL.md) to another Markdown
        file of the skill that SKILL.md itself never links to or names: a chain of references
        more than one level deep.
    """,
    why="""
        The specification asks to keep file references one level deep from SKILL.md. Agents
        discover files from SKILL.md; Anthropic's authoring guidance warns that Claude may read
        files reached through another reference only partially, and Copilot picks up only
        files SKILL.md links to.
    """,
    bad="""
        SKILL.md:                 See [advanced usage](references/advanced.md).
        references/advanced.md:   Details are in [the API notes](api-notes.md).
    """,
    good="""
        SKILL.md:   See [advanced usage](references/advanced.md) and
                    [the API notes](references/api-notes.md).
    """,
)
def nested_reference(skill: Skill, ctx: Context) -> Iterator[Finding]:
    seen: set[tuple[str, str]] = set()
    known = None
    for use in checked_uses(skill):
        res = use.res
        if use.doc.is_skill_md or res is None or res.status != "found" or res.entry is None:
            continue
        if not markdown.is_markdown(res.rel) or res.rel == use.doc.rel:
            continue
        if skill.skill_md is not None and res.rel == skill.skill_md.name:
            continue
        if known is None:
            known = mentions(skill)
        if known.in_skill_md(res.rel) or (use.doc.rel, res.rel) in seen:
            continue
        seen.add((use.doc.rel, res.rel))
        yield Finding(
            f"{show(res.rel)} is reached only through {show(use.doc.rel)}, more than one level"
            " from SKILL.md; link it from SKILL.md so the agent can find it directly",
            span=use.span,
            path=use.doc.path,
        )


# --- SK506 ------------------------------------------------------------------------------------


_RUNTIME_FILE = re.compile(r"agents/[^/]+\.ya?ml$")

# the dependency manifests of a skill's code: the scripts use them (`npm install` in
# scripts/), linking them from SKILL.md tells the agent nothing
_MANIFESTS = frozenset(
    {
        "package.json", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb",
        "requirements.txt", "pyproject.toml", "uv.lock", "poetry.lock", "Pipfile",
        "Pipfile.lock", "go.mod", "go.sum", "Cargo.toml", "Cargo.lock", "Gemfile",
        "Gemfile.lock", "tsconfig.json", "deno.json",
    }
)  # fmt: skip


def _resource_candidates(skill: Skill) -> list[SkillFile]:
    key = ("references", "resource-candidates")
    if key in skill.derived:
        return skill.derived[key]
    tree = tree_of(skill)
    out = []
    for entry in skill.files:
        if entry.kind != "file":  # symlinks are SK509/SK510's, whatever they point at
            continue
        parts = entry.rel.split("/")
        if len(parts) < 2 or parts[0] not in RESOURCE_DIRS:
            continue
        if any(p.startswith(".") or p in _JUNK_NAMES for p in parts) or entry.rel.endswith(".pyc"):
            continue
        if parts[-1] in _MANIFESTS:
            continue
        if not tree.owned(entry.rel) or any(
            "/".join(parts[:i]) in tree.unlisted for i in range(1, len(parts))
        ):
            continue
        out.append(entry)
    skill.derived[key] = out
    return out


_BINARY_SUFFIXES = (
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".ico", ".pdf", ".zip", ".gz", ".tgz", ".whl",
    ".ttf", ".otf", ".woff", ".woff2", ".mp3", ".mp4", ".wav", ".bin", ".so", ".dylib", ".exe",
)  # fmt: skip


def _readable_text(skill: Skill, entry: SkillFile) -> str | None:
    if entry.size > 1_000_000 or entry.rel.lower().endswith(_BINARY_SUFFIXES):
        return None
    text = markdown.text_of(skill, entry)
    if text is None or "\x00" in text[:8192]:
        return None
    return text


def reached(skill: Skill) -> set[str]:
    """Files the agent can find: mentioned in SKILL.md, or named by a file it can find.

    From a found file, another counts as named when its path (from the skill root or from
    that file's folder), its file name, or (for code) its module name appears in the text,
    or a Markdown link resolves to it. Deliberately lenient: this decides what is reported
    as never mentioned, and a helper module imported by a documented script is not news.
    """
    key = ("references", "reached")
    if key in skill.derived:
        return skill.derived[key]
    candidates = _resource_candidates(skill)
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
        text = _readable_text(skill, source)
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
    skill.derived[key] = found
    return found


def _relative(rel: str, folder: str) -> str:
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
    relative = _relative(rel, here.lower())
    if any(written_as_path(word, text) for word in {rel, relative, name}):
        return True
    if name.endswith(_CODE_SUFFIXES) and stem:
        return re.search(r"\b" + re.escape(stem) + r"\b", text) is not None
    return False


@rule(
    "SK506",
    "unreferenced-file",
    Severity.WARNING,
    "A file under references/, scripts/ or assets/ is never mentioned.",
    what="""
        Reports files under `references/`, `scripts/` and `assets/` that SKILL.md never links
        to or names (by path, or by file name with its extension, in any letter case), and
        that no file reachable from SKILL.md names either (a helper module imported by a
        documented script, a file linked from a reference: those chains are SK505's
        business). A link to a folder, or a written path of a sub-folder (`assets/templates/`),
        counts for the files in it, and so does naming a top folder as a folder
        (`` `references/` `` alone in code, "the `references` directory"): the agent is told to
        look there. A file that Codex's `agents/openai.yaml` names (the icons of
        `interface`) is used. Dotfiles, `__init__.py`, dependency manifests of the code
        (`package.json`, `requirements.txt`, `pyproject.toml` ...), symlinks (SK509/SK510)
        and junk that SK7xx reports are left out.
    """,
    why="""
        The agent learns what a skill holds only from SKILL.md: a file it is never told about is
        dead weight in every installed copy and in the upload size. Copilot loads only files
        referenced from SKILL.md. Usually the file is either obsolete or SKILL.md forgot to say
        when to use it.
    """,
    bad="""
        my-skill/
          SKILL.md                    (never mentions scripts/fill_form.py)
          scripts/fill_form.py
    """,
    good="""
        SKILL.md:  To fill a form, run `python scripts/fill_form.py input.pdf values.json`.
    """,
)
def unreferenced_file(skill: Skill, ctx: Context) -> Iterator[Finding]:
    if skill.doc is None:
        return
    candidates = _resource_candidates(skill)
    if not candidates:
        return
    found = reached(skill)
    for entry in candidates:
        if entry.rel in found:
            continue
        if _TEST_FILE.search(entry.rel):
            advice = (
                "it looks like a test of the skill's code, which installed copies do not need:"
                " keep tests outside the skill folder"
            )
        else:
            advice = "link it from SKILL.md with a line on when to use it, or delete it"
        yield Finding(
            f"{show(entry.rel)} is never mentioned in SKILL.md: the agent does not know it"
            f" exists and Copilot does not load it; {advice}",
            span=WHOLE_FILE,
            path=entry.path,
        )


_TEST_FILE = re.compile(
    r"(?:^|/)(?:tests?|__tests__)/|(?:^|/)test_[^/]*$|[._]test\.[^/]*$|\.spec\."
)


# --- paths written in the text ------------------------------------------------------------------


class Hit(NamedTuple):
    """A path found in a piece of text: ``text[start:end]`` (a tuple: made by the thousand)."""

    start: int
    end: int
    text: str
    kind: str


Finder = Callable[[str], Iterator[Hit]]


def _link_columns(links: list[Link]) -> dict[int, list[tuple[int, int]]]:
    """Columns covered by link destinations and autolinks, by line."""
    covered: dict[int, list[tuple[int, int]]] = {}
    for link in links:
        span = link.span
        if span.start.line == span.end.line:
            covered.setdefault(span.start.line, []).append((span.start.column, span.end.column))
    return covered


def _covered(covered: dict[int, list[tuple[int, int]]], line: int, column: int) -> bool:
    return any(a <= column < b for a, b in covered.get(line, ()))


def _scan(
    skill: Skill, find: Finder, suspect: Callable[[Doc, Hit], bool]
) -> Iterator[tuple[Doc, Segment, Hit]]:
    """Paths ``find`` finds in the text and code spans of the skill's Markdown files,
    outside link destinations.

    The raw text is searched first: its hits are a superset of the segments' (code blocks
    and link destinations included, at the same places), so when ``suspect`` clears every
    one of them, or every one it does not clear lies in a link destination (a link to a
    missing file is SK501's, not a mention), the file is not parsed at all.
    """
    for doc in documents(skill):
        text = doc_text(skill, doc)
        if not text:
            continue
        if links.FAST_PATHS and (
            not any(suspect(doc, hit) for hit in find(text))
            or _only_in_destinations(skill, doc, find, suspect)
        ):
            continue
        md = parsed(skill, doc)
        if md is None:
            continue
        covered = _link_columns(md.links)
        for segment in md.segments:
            for hit in find(segment.text):
                if not _covered(covered, segment.line, segment.column + hit.start):
                    yield doc, segment, hit


def _only_in_destinations(
    skill: Skill, doc: Doc, find: Finder, suspect: Callable[[Doc, Hit], bool]
) -> bool:
    """Whether every suspect hit in the file's raw lines starts inside a link destination
    (where ``_scan`` never reports it). Only links from the cheap scan count: their lines
    hold text exactly where the raw lines do, which a parse's positions are not always."""
    source = markdown.source_lines(skill, doc.entry)
    if source is None:
        return False
    lines, first_line = source
    text = "\n".join(lines)
    hits = [hit for hit in find(text) if suspect(doc, hit)]
    links = markdown.fast_links(lines, first_line) if hits else None
    if not links:
        return False
    covered = _link_columns(links)
    line, line_start = first_line, 0
    for hit in hits:  # in order: lines are counted once
        line += text.count("\n", line_start, hit.start)
        line_start = text.rfind("\n", line_start, hit.start) + 1 or line_start
        if not _covered(covered, line, hit.start - line_start + 1):
            return False
    return True


_MENTION = re.compile(r"(?:scripts|references|assets)/[\w.%+@~/-]*[\w%+@~/-]")


def find_mentions(text: str) -> Iterator[Hit]:
    """``scripts/...``, ``references/...`` and ``assets/...`` paths that start a word
    (``./scripts/x``, ``${CLAUDE_SKILL_DIR}/scripts/x`` included; ``myscripts/x`` and
    ``../scripts/x`` not)."""
    hits: list[Hit] = []
    for folder in _FOLDER_WORDS:
        start = text.find(folder)
        while start >= 0:
            before = text[start - 1] if start else " "
            # _starts_path, inlined for the usual character before a path
            if (before == "/" and _starts_path(text, start)) or not (
                before == "/" or before.isalnum() or before in _NOT_BEFORE
            ):
                # the start is checked before matching: `scripts/scripts/...` would otherwise
                # match to the end of the run from every `scripts/` in it (quadratic)
                match = _MENTION.match(text, start)
                if match is not None:
                    hits.append(Hit(start, match.end(), match.group(0), "mention"))
            start = text.find(folder, start + 1)
    if len(hits) > 1:
        hits.sort(key=lambda h: h.start)
    yield from hits


_FOLDER_WORDS = tuple(f"{d}/" for d in RESOURCE_DIRS)
_NOT_BEFORE = frozenset("_./\\~$-")  # with letters and digits: a path does not start here


def _starts_path(text: str, start: int) -> bool:
    before = text[start - 1] if start else " "
    if before == "/" and start >= 2:
        two = text[start - 2]
        third = text[start - 3] if start >= 3 else " "
        return two == "}" or (two == "." and not (_word_char(third) or third in "./-"))
    return not (_word_char(before) or before in "./\\~$-")


_PATH_TAIL = re.compile(r"[^\s`'\"<>|*?()\[\]]*")


def _tail_end(text: str, start: int) -> int:
    """Where the path that goes on at ``start`` ends (``_PATH_TAIL`` matches empty too)."""
    tail = _PATH_TAIL.match(text, start)
    return tail.end() if tail else start


_HOME = re.compile(
    r"/(?:Users|home)/[^\s/`'\"<>()\[\]]+(?:/[^\s`'\"<>()\[\]]*)?|/root/[^\s`'\"<>()\[\]]*"
)
_FILE_URL = re.compile(r"file:///?[^\s`'\"<>()\[\]]+")
_WORD_RUN = re.compile(r"[\w.\\-]*")
_DRIVE = re.compile(r"[A-Za-z]:(?:\\|/Users/)")
_UNC = re.compile(r"\\\\[\w.$-]+\\[^\s`'\"<>|*?()\[\]]+")


def _backslash_words(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each run of ``[\\w.\\\\-]`` holding a backslash, as finditer of
    ``[\\w.\\\\-]*\\\\[\\w.\\\\-]*`` gives them, in linear time: that regex rescans a long
    run without a backslash from each of its characters."""
    at = 0
    while (backslash := text.find("\\", at)) >= 0:
        start = backslash
        while start > at and (_word_char(text[start - 1]) or text[start - 1] in ".\\-"):
            start -= 1
        match = _WORD_RUN.match(text, backslash + 1)
        at = match.end() if match else backslash + 1
        yield start, at


def find_local_paths(text: str) -> Iterator[Hit]:
    """Windows-style paths (drive letters, UNC shares, backslash separators) and absolute
    paths into one person's machine. Each kind is looked for only when its literal marker is
    in the text: most texts cost a few substring tests."""
    hits: list[Hit] = []
    if "\\" in text:
        if ":\\" in text:
            for match in _DRIVE.finditer(text):
                start = match.start()
                if start and (_word_char(text[start - 1]) or text[start - 1] in "\\/"):
                    continue
                end = _tail_end(text, match.end())
                hits.append(Hit(start, end, text[start:end], "drive"))
        if "\\\\" in text:
            for match in _UNC.finditer(text):
                start = match.start()
                if start and (_word_char(text[start - 1]) or text[start - 1] == "\\"):
                    continue
                hits.append(Hit(start, match.end(), match.group(0), "unc"))
        for start, end in _backslash_words(text):
            word = text[start:end]
            if word.startswith("\\") or word.endswith("\\") or "\\\\" in word:
                continue  # an escape, a UNC share or a line-ending backslash
            if start and text[start - 1] in "/~:":
                continue  # part of a drive path or URL, reported as such
            if _after_drive_path(text, start):
                continue  # `C:\\Program Files\\x.ini`: the rest of a path with a space
            hits.append(Hit(start, end, word, "back"))
    if "/Users/" in text or "/home/" in text or "/root/" in text:
        if ":/Users/" in text:
            for match in _DRIVE.finditer(text):
                start = match.start()
                if match.group(0).endswith("/Users/") and not (
                    start and _word_char(text[start - 1])
                ):
                    end = _tail_end(text, match.end())
                    hits.append(Hit(start, end, text[start:end], "drive"))
        for match in _HOME.finditer(text):
            start = match.start()
            if start and (_word_char(text[start - 1]) or text[start - 1] in ".~/:-"):
                continue
            hits.append(Hit(start, match.end(), match.group(0), "home"))
    if "file:/" in text:
        for match in _FILE_URL.finditer(text):
            start = match.start()
            if start and _word_char(text[start - 1]):
                continue
            hits.append(Hit(start, match.end(), match.group(0), "url"))
    hits.sort(key=lambda h: h.start)
    yield from hits


def _after_drive_path(text: str, start: int) -> bool:
    """Whether ``start`` continues a drive path begun earlier on its line (a path with spaces:
    nothing that ends a path, such as a backtick or a quote, lies between)."""
    line_start = text.rfind("\n", 0, start) + 1
    drive = text.rfind(":\\", line_start, start)
    if drive < 0:
        return False
    return not any(ch in "`'\"<>|" for ch in text[drive:start])


@rule(
    "SK507",
    "missing-path-mention",
    Severity.WARNING,
    "A `scripts/`, `references/` or `assets/` path written in the text does not exist.",
    what="""
        Finds paths starting with `scripts/`, `references/` or `assets/` in the text and in
        code spans of SKILL.md and the other Markdown files (`./scripts/x.py` and
        `${CLAUDE_SKILL_DIR}/scripts/x.py` included) and reports those that are not in the
        skill. Paths are taken from the skill root, as the specification writes them (in other
        Markdown files, a path relative to that file is accepted too). Fenced code blocks,
        globs (`scripts/*.py`), placeholders (`assets/<name>.png`), paths written after
        "example", "e.g." or "such as" on their line (`**Examples**: references/finance.md`),
        paths on a line of counter-examples or hypotheticals (❌, "don't", "bad", "wrong",
        "would be" ...), in a quoted phrase of prose or in the text of a link to a URL, and link
        destinations (SK501 checks those) are not checked, nor a link's text that repeats a
        destination SK501–SK503 report on that line (`[scripts/x.py](scripts/x.py)`). Nor
        are: a path without an extension in prose (`better scripts/tools` means "scripts or
        tools"; in code it is checked), a path on a line ending with a colon right above a
        code block (`**references/tools.md:**` then the content of a file to write), and the
        files the agent never reaches from SKILL.md (copied documentation, notes).
    """,
    why="""
        Instructions such as "run `python scripts/extract.py`" are what the agent executes.
        When the script was renamed or never committed, the command fails in the user's
        session; the specification's examples refer to bundled files exactly this way.
    """,
    bad="""
        Run `python scripts/extract_text.py input.pdf`.    # the script is scripts/extract.py
    """,
    good="""
        Run `python scripts/extract.py input.pdf`.
    """,
)
def missing_path_mention(skill: Skill, ctx: Context) -> Iterator[Finding]:
    tree = tree_of(skill)
    cleared: set[tuple[str, str]] = set()

    def suspect(doc: Doc, hit: Hit) -> bool:
        key = (doc.base, hit.text)
        if key in cleared:
            return False
        res = _mention_status(tree, doc, hit.text)[0]
        if res.status in ("missing", "outside", "loop") or res.case:
            return True
        cleared.add(key)
        return False

    linked: set[tuple[str, int, str]] | None = None
    shown = _ShownMemo()
    for doc, segment, hit in _scan(skill, find_mentions, suspect):
        after = segment.text[hit.end : hit.end + 1]
        if after and after in _PLACEHOLDER_AFTER:
            continue
        if linked is None:
            linked = _reported_links(skill)
        if (doc.rel, segment.line, posixpath.normpath(hit.text)) in linked:
            continue  # `[scripts/x.py](scripts/x.py)`: SK501/SK502/SK503 report the link
        if _shown_only(skill, doc, segment, hit, parsed(skill, doc), shown):
            continue  # "Examples: `references/finance.md`" shows a shape, not a file
        if not segment.code and "." not in hit.text.rstrip("/").rpartition("/")[2]:
            continue  # prose "better scripts/tools" is "scripts or tools", not a path
        if not doc.is_skill_md and doc.rel not in reached(skill):
            continue  # a file the agent never reaches from SKILL.md (copied docs, notes)
        if _introduces_block(skill, doc, segment.line):
            continue  # "**references/tools.md:**" above a code block shows a file to write
        res, path = _mention_status(tree, doc, hit.text)
        column = segment.column + hit.start
        span = Span(Pos(segment.line, column), Pos(segment.line, column + len(hit.text)))
        if res.status == "missing":
            hint_ = ""
            if res.suggestion is not None:
                parent = res.missing.rpartition("/")[0]
                hint_ = f"; did you mean {show(posixpath.join(parent, res.suggestion))}?"
            yield Finding(
                f"{show(path)} is not in the skill{hint_}"
                + ("" if hint_ else "; fix the path or add the file"),
                span=span,
                path=doc.path,
            )
        elif res.status == "found" and res.case:
            yield Finding(
                f"{show(path)} differs in case from the file on disk {show(res.rel)}: it is"
                " found on macOS and Windows only; write it as on disk",
                span=span,
                path=doc.path,
            )
        elif res.status in ("outside", "loop"):
            yield Finding(
                f"{show(path)} leads outside the skill through a symlink; installed copies do"
                " not contain it",
                span=span,
                path=doc.path,
            )


def _introduces_block(skill: Skill, doc: Doc, line: int) -> bool:
    """Whether line ``line`` of ``doc`` ends with a colon and the next non-blank line opens
    a fenced code block: `**references/tools.md:**` then the file's content, as a template
    or a worked example shows a file to create."""
    text = doc_text(skill, doc) or ""
    lines = text.split("\n")
    if line < 1 or line > len(lines):
        return False
    if not lines[line - 1].rstrip().rstrip("*_`").endswith(":"):
        return False
    for following in lines[line : line + 3]:
        if following.strip():
            return following.lstrip().startswith(("```", "~~~"))
    return False


def _reported_links(skill: Skill) -> set[tuple[str, int, str]]:
    """(file, line, path) of the links SK501–SK503 report: the same path written as the
    link's text on that line is not reported again by SK507."""
    out: set[tuple[str, int, str]] = set()
    for use in checked_uses(skill):
        res = use.res
        if res is None or use.link is None or not use.path:
            continue
        if use.backslash or res.status in ("missing", "outside", "loop") or res.case:
            path = posixpath.normpath(use.path.replace("\\", "/"))
            out.add((use.doc.rel, use.link.span.start.line, path))
    return out


_PLACEHOLDER_AFTER = set("<{[*$?")


def _mention_status(tree: Tree, doc: Doc, written: str) -> tuple[Resolution, str]:
    """Resolve a written ``scripts/...`` path from the skill root (or, in another Markdown
    file, from that file's folder)."""
    path = written.rstrip("/")
    if "%" in path:
        path = unquote(path)
    res = tree.resolve(path)
    if not res.ok and doc.base:
        local = tree.resolve(path, doc.base)
        if local.ok:
            res = local
    return res, path


_ASCII_PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")


def _local_path(hit: Hit, code: bool) -> str | None:
    """The path to report for a hit of ``find_local_paths``, or None. ``code=True`` is the
    more permissive reading (backslashes are literal), used on raw text before parsing."""
    text = hit.text.rstrip(".,;:!")  # sentence punctuation after the path
    if hit.kind == "unc":
        return None  # `\\\\server\\share` shows the syntax; no skill names a real share
    if hit.kind == "home":
        user = _home_user(text)
        return text if user is not None and not _generic_user(user) else None
    if hit.kind == "drive":
        # `C:\\Program Files\\...` is where Windows keeps things, the same on every Windows
        # machine; only a user's own folder is one person's
        user = _drive_user(text)
        return text if user is not None and not _generic_user(user) else None
    if hit.kind == "url":
        rest = text[len("file://") :]
        user = _home_user(rest) or _drive_user(rest.lstrip("/"))
        return text if user is not None and not _generic_user(user) else None
    if hit.kind != "back":
        return text
    if not code and all(
        text[i + 1] in _ASCII_PUNCT for i, ch in enumerate(text[:-1]) if ch == "\\"
    ):
        return None  # Markdown escapes such as file\_name
    parts = text.split("\\")
    if text.lower().endswith((".ps1", ".bat", ".cmd", ".exe")):
        return None  # `.\\setup.ps1`: a Windows-only file, written as Windows writes it
    if any(p.startswith(".") and p not in (".", "..") for p in parts[1:]):
        return None  # `vm\\.EVM`: a regular expression's escaped dot, not a folder
    if parts[0] in RESOURCE_DIRS or parts[0] in (".", "..") or _EXTENSION.search(text):
        return text
    return None  # regular expressions, `\n` in strings ...


# user names that stand for "the user" in examples, or that every container or CI machine
# has: `/home/user/...`, `/Users/you/...`, `/home/runner/...` (GitHub Actions), `/home/node`
_GENERIC_USERS = frozenset(
    {
        "user", "username", "name", "me", "you", "yourname", "your-name", "your_name",
        "yourusername", "myuser", "someone", "somebody", "example", "foo", "runner", "node",
        "ubuntu", "ec2-user", "admin", "workspace", "vscode", "codespace", "codespaces",
        "jovyan", "app", "coder", "dev", "developer", "default", "guest", "shared", "public",
        "test",
        # the home of claude.ai's and the Claude API's code-execution sandbox, and of DNAnexus
        # job workers: the same on every run of the platform, not one person's machine
        "claude", "dnanexus",
    }
)  # fmt: skip


def _generic_user(user: str) -> bool:
    lowered = user.lower()
    return (
        len(lowered) == 1
        or lowered in _GENERIC_USERS
        or lowered.startswith(("your", "<", "{", "[", "$", "%", "*", "...", "…"))
        or lowered.endswith((">", "}", "]"))
        # a regular expression (`grep -E '/home/|^/usr/'`), not a path
        or any(c in lowered for c in "|^()+?")
    )


def _home_user(path: str) -> str | None:
    """``alice`` in ``/Users/alice/...`` or ``/home/alice/...``; None for ``/root/...``,
    which every Linux machine and container has."""
    for prefix in ("/Users/", "/home/"):
        if path.startswith(prefix):
            return path[len(prefix) :].split("/", 1)[0] or None
    return None


def _drive_user(path: str) -> str | None:
    """``alice`` in ``C:\\Users\\alice\\...`` or ``C:/Users/alice/...``."""
    parts = re.split(r"[\\/]", path)
    if len(parts) >= 3 and len(parts[0]) == 2 and parts[0][1] == ":" and parts[1] == "Users":
        return parts[2] or None
    return None


# words that, before a path on its line, make it an example ("Examples: references/x.md")
_EXAMPLE = re.compile(
    r"\bexamples?\b|\be\.g\.|\b(?:such as|for instance|imagine|suppose)\b", re.IGNORECASE
)
_QUOTES = (('"', '"'), ("“", "”"), ("‘", "’"))


def _in_quotes(quotes: dict[str, list[int]], start: int) -> bool:
    """Whether ``start`` lies inside a quoted phrase of prose (`"tailor scripts/x"`), given
    the sorted offsets of each quote character in the text (``_quote_offsets``)."""
    for open_, close in _QUOTES:
        opens = quotes[open_]
        before = bisect.bisect_left(opens, start)
        if open_ == close:
            if before % 2 == 1 and before < len(opens):
                return True
            continue
        closes = quotes[close]
        closed = bisect.bisect_left(closes, start)
        if before > closed and closed < len(closes):
            return True
    return False


def _quote_offsets(text: str) -> dict[str, list[int]]:
    offsets: dict[str, list[int]] = {}
    for pair in _QUOTES:
        for char in pair:
            if char not in offsets:
                offsets[char] = [i for i, c in enumerate(text) if c == char]
    return offsets


@dataclass
class _ShownMemo:
    """What ``_shown_only`` computes once per line or segment rather than once per path:
    searching a line again for each of its paths is quadratic on a long line of paths."""

    lines: dict[tuple[str, int], tuple[bool, int | None]] = field(default_factory=dict)
    quotes: dict[tuple[str, int, int], dict[str, list[int]]] = field(default_factory=dict)


def _url_link_texts(skill: Skill, doc: Doc, md: Markdown) -> dict[int, list[tuple[int, int]]]:
    """Columns of the text of links to URLs, by line: `[references/x.md](https://…)` names a
    file of another project."""
    key = ("references", "url-link-texts", doc.rel)
    if key not in skill.derived:
        out: dict[int, list[tuple[int, int]]] = {}
        for link in md.links:
            if link.start.line == link.span.start.line and has_scheme(link.dest):
                out.setdefault(link.start.line, []).append(
                    (link.start.column, link.span.start.column)
                )
        skill.derived[key] = out
    return skill.derived[key]


def _shown_only(
    skill: Skill, doc: Doc, segment: Segment, hit: Hit, md: Markdown | None, memo: _ShownMemo
) -> bool:
    """Whether a path found in the text is only shown, not given to the agent: on a line of
    counter-examples or hypotheticals, in a quoted phrase of prose, or in the text of a link
    to a URL."""
    if md is None:
        return False
    line = md.line(segment.line)
    key = (doc.rel, segment.line)
    facts = memo.lines.get(key)
    if facts is None:
        found = _EXAMPLE.search(line)
        facts = (
            bool(markdown.NOT_AN_INSTRUCTION.search(line)),
            None if found is None else found.start(),
        )
        memo.lines[key] = facts
    not_an_instruction, first_example = facts
    if not_an_instruction:
        return True
    cut = segment.column - 1 + hit.start
    # an "example" before the path: searched from the line's first one, so once per line
    if (
        first_example is not None
        and first_example < cut
        and _EXAMPLE.search(line, first_example, cut)
    ):
        return True
    if not segment.code:
        where = (doc.rel, segment.line, segment.column)
        quotes = memo.quotes.get(where)
        if quotes is None:
            quotes = memo.quotes[where] = _quote_offsets(segment.text)
        if _in_quotes(quotes, hit.start):
            return True
    texts = _url_link_texts(skill, doc, md)
    return _covered(texts, segment.line, segment.column + hit.start)


@rule(
    "SK508",
    "non-portable-path",
    # info: on the real-world corpus (bench/realworld/REVIEW.md) its findings were right
    # about 1 time in 5 on vendor repositories (error messages quoted in tables, `# BAD`
    # examples in code blocks, Windows-only commands) though mostly right on personal ones
    Severity.INFO,
    "A Windows-style or machine-local absolute path is written in the text.",
    what="""
        Finds, in the text and code spans of SKILL.md and the other Markdown files, paths
        written with backslashes (`scripts\\extract.py`, `C:\\tools\\x.exe`,
        `\\\\server\\share`) and absolute paths into one person's machine (`/Users/alice/...`,
        `/home/bob/...`, `/root/...`, `C:/Users/...`, `file:///...`). Markdown escapes
        (`file\\_name`), regular expressions and links (SK501 and SK502 check those) are left
        alone. Fenced code blocks and the scripts under `scripts/` are checked for paths into
        one person's home only (`python3 /home/lucas/tools/x.py`): a command or script that
        uses one fails everywhere else.

        Paths that are only shown are not reported: on a line of counter-examples or
        hypotheticals (❌, "don't", "never", "avoid", "bad", "wrong", "instead of",
        "hardcoded", "would be"), after "example", "e.g." or "such as" on their line, in a
        quoted phrase of prose, or in the text of a link to a URL. Neither are the user
        names that stand for any user or every container (`/home/user`, `/Users/you`,
        `/home/runner`, `/home/node`, `/home/claude` of Claude's code-execution sandbox,
        `<name>`, `$USER`), regular expressions (`grep -E '/home/|^/usr/'`), `/root/...` (on
        every Linux
        machine), Windows system paths (`C:\\Program Files\\...`: only `C:\\Users\\<name>` is
        one person's), and `\\\\server\\share` (the syntax of a network share).
    """,
    why="""
        Skills run on other machines: Codex, CI and most agent sandboxes are Linux, where a
        backslash is an ordinary character in a file name, and nobody else has `/Users/alice`.
        Anthropic's authoring guidance says to always use forward slashes; the specification
        writes paths relative to the skill root.
    """,
    bad="""
        Run `python scripts\\extract.py /Users/alice/Downloads/report.pdf`.
    """,
    good="""
        Run `python scripts/extract.py path/to/report.pdf`.
    """,
)
def non_portable_path(skill: Skill, ctx: Context) -> Iterator[Finding]:
    def suspect(doc: Doc, hit: Hit) -> bool:
        return _local_path(hit, code=True) is not None

    shown = _ShownMemo()
    for doc, segment, hit in _scan(skill, find_local_paths, suspect):
        text = _local_path(hit, segment.code)
        if text is None or _shown_only(skill, doc, segment, hit, parsed(skill, doc), shown):
            continue
        column = segment.column + hit.start
        span = Span(Pos(segment.line, column), Pos(segment.line, column + len(text)))
        if hit.kind in ("back", "unc") or (hit.kind == "drive" and "\\" in text):
            message = (
                f"{show(text)} is a Windows-style path: backslashes are not separators on"
                " Linux or macOS"
            )
            message += (
                f"; write {show(text.replace(chr(92), '/'))}"
                if hit.kind == "back"
                else "; write paths relative to the skill root with forward slashes"
            )
        else:
            message = (
                f"{show(text)} is an absolute path on one machine; other users and agents do"
                " not have it: use a path relative to the skill root or a placeholder"
            )
        yield Finding(message, span=span, path=doc.path)
    yield from _machine_paths_in_code(skill)


_MACHINE_KINDS = ("home", "drive", "url")
_MACHINE_MARKERS = ("/Users/", "/home/", ":\\Users\\", ":/Users/", "file:/")


def _machine_lines(text: str) -> Iterator[tuple[int, str, Hit, str]]:
    """(line index, line, hit, path) for each path into one person's home in ``text``."""
    if not any(marker in text for marker in _MACHINE_MARKERS):
        return
    for index, line in enumerate(text.split("\n")):
        if not any(marker in line for marker in _MACHINE_MARKERS):
            continue
        if markdown.NOT_AN_INSTRUCTION.search(line) or _EXAMPLE.search(line):
            continue
        for hit in find_local_paths(line):
            path = _local_path(hit, code=True) if hit.kind in _MACHINE_KINDS else None
            if path is not None:
                yield index, line, hit, path


def _machine_paths_in_code(skill: Skill) -> Iterator[Finding]:
    """Paths into one person's home in fenced code blocks (the commands the agent runs:
    `python3 /home/lucas/tools/x.py`) and in the skill's scripts."""
    for doc in documents(skill):
        text = doc_text(skill, doc)
        if not text or not any(marker in text for marker in _MACHINE_MARKERS):
            continue
        md = parsed(skill, doc)
        if md is None:
            continue
        for block in md.code_blocks:
            for index, _line, hit, path in _machine_lines(block.text):
                number = block.span.start.line + index
                raw = md.line(number)
                found = raw.find(hit.text)
                column = found + 1 if found >= 0 else block.span.start.column
                yield Finding(
                    f"{show(path)} in a code block is an absolute path on one machine; the"
                    " command fails for every other user and agent: use a path relative to"
                    " the skill root or a placeholder",
                    span=Span(Pos(number, column), Pos(number, column + len(path))),
                    path=doc.path,
                )
    tree = tree_of(skill)
    for entry in skill.files:
        if entry.kind != "file" or not entry.rel.startswith("scripts/"):
            continue
        if not entry.rel.endswith(_CODE_SUFFIXES) or not tree.owned(entry.rel):
            continue
        text = _readable_text(skill, entry)
        if not text:
            continue
        for index, _line, hit, path in _machine_lines(text):
            yield Finding(
                f"{show(path)} is an absolute path on one machine; the script fails for every"
                " other user and agent: derive the path from the script's own location or"
                " take it as an argument",
                span=Span(Pos(index + 1, hit.start + 1), Pos(index + 1, hit.start + 1 + len(path))),
                path=entry.path,
            )


# --- SK407 (registered in rules/fields.py) ---------------------------------------------------


def _field_values(node: Node | None, steps: list[str], trail: str) -> Iterator[tuple[str, Node]]:
    """The scalar nodes a dotted path with ``[]`` names, with a readable trail."""
    if node is None:
        return
    node = node.resolved()
    if not steps:
        yield trail, node
        return
    step, rest = steps[0], steps[1:]
    if step == "[]":
        if node.kind == "sequence":
            for i, item in enumerate(node.value):
                yield from _field_values(item, rest, f"{trail}[{i}]")
        return
    if node.kind == "mapping":
        yield from _field_values(node.get(step), rest, f"{trail}.{step}" if trail else step)


def _steps(spec: str) -> list[str]:
    steps: list[str] = []
    for part in spec.split("."):
        name = part
        count = 0
        while name.endswith("[]"):
            name = name[:-2]
            count += 1
        if name:
            steps.append(name)
        steps.extend(["[]"] * count)
    return steps


def path_field_findings(skill: Skill, ctx: Context) -> Iterator[Finding]:
    """SK407's check (the rule is registered with the SK4xx fields): every value named by
    the ``path-fields`` option must resolve to a file inside the skill."""
    specs = ctx.option("path-fields") or []
    fm = usable_frontmatter(skill) if specs else None
    if fm is None or fm.root is None:
        return
    tree = tree_of(skill)
    for spec in specs:
        for trail, node in _field_values(fm.root, _steps(spec), ""):
            if node.kind != "scalar" or node.tag == "null":
                continue
            value = str(node.value).strip()
            if not value:
                continue
            span = value_span(node)
            problem = _path_problem(tree, value)
            if problem:
                yield Finding(f"{trail}: {show(value)} {problem}", span=span)


def _path_problem(tree: Tree, value: str) -> str | None:
    if has_scheme(value) or value.startswith("//"):
        return "is a URL, not a file inside the skill; bundle the file and give its path"
    res = tree.resolve(value.replace("\\", "/"))
    if "\\" in value:
        return "uses backslashes; write the path with forward slashes"
    if res.status == "outside":
        return (
            "is outside the skill; installed and packaged copies do not contain it: put the"
            " file inside the skill"
        )
    if res.status == "missing":
        hint = ""
        if res.suggestion is not None:
            parent = res.missing.rpartition("/")[0]
            hint = f" (did you mean {show(posixpath.join(parent, res.suggestion))}?)"
        return f"is not in the skill{hint}; add the file or fix the path"
    if res.status == "loop":
        return "goes through a symlink loop"
    if res.status == "found" and res.case:
        return f"differs in case from the file on disk {show(res.rel)}; write it as on disk"
    if res.status == "found" and res.kind == "dir":
        return "is a folder; name a file"
    return None
