"""SK5xx: what SKILL.md and the skill's other Markdown files point at.

Links are read with pyromark (``skillcheck.source.markdown``) from SKILL.md's body and from
every other Markdown file of the skill (relative to that file), and resolved purely from the
skill's walk (``skillcheck.analysis.paths``): nothing outside the skill is ever opened or stat'ed.
URLs with a scheme are not checked; links inside code are not links. The check behind SK407
(frontmatter fields that name files, registered with the SK4xx fields) lives here too, since it
resolves paths the same way.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator

from skillcheck.analysis.links import (
    Doc,
    LinkUse,
    _outline_at,
    _quick_anchor,
    _text_at,
    checked_uses,
    doc_text,
    mentions,
)
from skillcheck.analysis.paths import (
    Resolution,
    describe_difference,
    escapes_to_nothing,
    show,
    tree_of,
)
from skillcheck.analysis.reach import reached, relative_to
from skillcheck.rules.base import Context, rule
from skillcheck.source import markdown
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.markdown import Link
from skillcheck.source.outline import Outline, outline_for, source_lines
from skillcheck.source.skill import (
    Finding,
    Impact,
    Memo,
    Outcome,
    Severity,
    Skill,
)
from skillcheck.targets import every

# a lost reference: every runtime still loads the skill, without what the link promised
_LOST = every(Impact(Outcome.DEGRADED, Severity.ERROR))


def _in_skill(doc: Doc, res: Resolution) -> str:
    """`` (references/x.md in the skill)`` when the link is written from another folder,
    with the folder that is missing when it is not the file itself."""
    if not doc.base:
        return ""
    if res.missing and res.wanted and res.wanted != res.missing:
        return f" ({res.wanted} in the skill, where {res.missing} is missing)"
    where = res.missing or res.rel
    return f" ({where} in the skill)" if where else ""


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
        512,000 characters (SK117 reports a longer file: the rest is not checked).

        Runtime variables naming the skill's folder are replaced first: `{baseDir}/x.md`
        (OpenClaw), `${CLAUDE_SKILL_DIR}/x.md` (Claude Code) and `$SKILL_DIR/x.md` resolve
        from the skill root; `${CLAUDE_PLUGIN_ROOT}/skills/<this skill>/x.md` too, and other
        paths of the plugin are not checked (they are outside the skill). A link in another
        Markdown file that is missing from that file's folder but exists from the skill root
        (`scripts/run.py` written in `references/guide.md`) is a warning naming the relative
        path. Template shapes are not links to check: placeholders (`<name>.md`,
        `{topic}.md`, `$VAR`, `[Results]`), `path/to/...`, `your-file`, elisions (`...`),
        globs, and a destination that is only the word `link`, `url`, `path` or `file`; nor
        are the props of a capitalised JSX component (`<Img src="logo.png">`). In a
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
        So is a missing target on a line that also holds a bare placeholder in brackets
        (`- [code-1.md](./code-1.md) - [Description]`): a row of a document the skill writes.
        A missing target in a file the agent never reaches (no link or mention leads to it
        from SKILL.md, directly or through the files SKILL.md leads to: a CHANGELOG, a
        README, a page kept for humans) is a warning as well. Files in a folder of sample
        outputs (`expected_outputs/`, `sample-output/`, `example_outputs/`) show what the
        skill writes, and their links point to the other pages of that output
        (`./pages/01-home.md`): their missing targets are not reported. A `../` link that
        leaves the skill and whose target does not exist there either (`../query/SKILL.md`
        where no such skill is installed beside it) is broken everywhere: it is reported
        here, with the same exceptions, not as SK502 (which reports `../` links whose target
        exists around the skill); that one check looks outside the skill, by a single lstat
        of the lexically joined path. A missing target is reported once per file: the
        same target linked again, or any other link into
        the same missing folder (`references/case/a.md`, `references/case/b.md`), adds
        "and N more places in this file" to the first finding, and JSON and SARIF list the
        other places (`related`, `relatedLocations`).
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
    folds_repeats=True,
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
        elif _leaves_to_nothing(skill, use):
            # `../query/SKILL.md` where no such skill exists: broken everywhere, escaping or
            # not (SK502 reports the `../` links whose target exists around the skill)
            message = (
                f"{what} target {show(use.path)} leaves the skill and does not exist there"
                " either: the link is broken wherever the skill is installed; fix the path,"
                " or copy the file into the skill (e.g. references/) and link it relatively"
            )
            demoted = _minor_target(skill, use)
            if demoted is None and not use.doc.is_skill_md and use.doc.rel not in reached(skill):
                demoted = "no link or mention leads from SKILL.md to this file"
            if demoted is not None:
                yield Finding(
                    f"{message} ({demoted})",
                    span=use.span,
                    path=use.doc.path,
                    severity=Severity.WARNING,
                )
            else:
                yield _finding(use, message)
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
                fixed = relative_to(from_root.rel, use.doc.base)
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


_TEMPLATE_WORD = LazyPattern(r"(?:^|[-_.])(?:skill[-_])?templates?(?:$|[-_.])")
# a folder of sample outputs: documents showing what the skill writes, linking as they would
_SAMPLE_OUTPUT = LazyPattern(r"(?:^|/)(?:expected|sample|example)[-_]?outputs?/", re.IGNORECASE)


# `folder/name` in SKILL.md: the folder (the whole run before the slash, not after another
# path character) and the run of name characters after the slash
_FOLDER_AND_NAME = LazyPattern(r"(?<![\w./-])([\w-][\w.-]*)/([\w.-]*)")
_NAME_RUN = LazyPattern(r"[\w.-]*")
# per skill: the folders SKILL.md writes before each `/name` (FOLDER_INDEX: by the run
# after the slash), and per file name the distinct ones the skill does not hold, in order
FOLDER_INDEX: Memo[dict[str, list[tuple[int, str]]]] = Memo("folders-before-names")
OUTSIDE_FOLDERS: Memo[list[str]] = Memo("folders-outside-by-name")


def _run(text: str, at: int) -> str:
    """The name characters (``[\\w.-]``) from ``at`` on."""
    match = _NAME_RUN.match(text, at)
    return match.group() if match else ""


def _folders_outside(skill: Skill, text: str, name: str) -> list[str]:
    """The folders SKILL.md places ``name`` in (`folder/name`, as a whole path piece), that
    are not top folders of the skill, each once, in the order they first appear.

    One scan of SKILL.md for every name: asking the text for each link's name was
    quadratic (a SKILL.md of 9,000 broken links took two minutes)."""
    found = skill.memos.get(OUTSIDE_FOLDERS, name)
    if found is not None:
        return found
    index = skill.memos.get(FOLDER_INDEX)
    if index is None:
        index = {}
        for match in _FOLDER_AND_NAME.finditer(text):
            index.setdefault(match.group(2), []).append((match.start(2), match.group(1)))
        skill.memos.put(FOLDER_INDEX, index)
    top = tree_of(skill).children[""]
    folders: dict[str, None] = {}  # ordered, each once
    # the name's own leading run is the whole run after the slash where it is written
    for at, folder in index.get(_run(name, 0), ()):
        end = at + len(name)
        if not text.startswith(name, at) or _run(text, end):
            continue  # another name, or this one goes on
        if folder not in top:
            folders[folder] = None
    return skill.memos.put(OUTSIDE_FOLDERS, list(folders), name)


def _produced_folder(skill: Skill, path: str) -> str | None:
    """The folder SKILL.md places the file ``name`` in when that folder is not in the skill
    (`onboarding/contributor-guide.md`): the skill's output, not one of its files."""
    text = skill.doc.text if skill.doc is not None else ""
    written = posixpath.normpath(path)
    name = written.rpartition("/")[2]
    if not name or name not in text:
        return None
    for folder in _folders_outside(skill, text, name):
        if not written.endswith(f"{folder}/{name}"):  # not the link's own path
            return f"{folder}/"
    return None


# a bracketed placeholder that is not a link (`- [c4-code-1.md](./c4-code-1.md) - [Description]`):
# capitalised words in brackets, not a link's text (`](`), a reference (`][`, `]:`) or a
# checkbox, footnote or admonition (`[x]`, `[X]`, `[^1]`, `[!NOTE]`): two letters at least
_BARE_PLACEHOLDER = LazyPattern(r"(?<![\]\w!\\])\[[A-Z][A-Za-z]+(?: [A-Za-z/]+){0,4}\](?![(\[:])")


LINE_PLACEHOLDER: Memo[str | None] = Memo("placeholder-on-line")  # per file and line


def _placeholder_on_line(skill: Skill, use: LinkUse) -> str | None:
    """The bare placeholder (`[Description]`) on the line of a link, or None: such a line is
    a row of a template the skill fills in, and its link names a file of that output."""
    if use.link is None:
        return None
    source = source_lines(skill, use.doc.entry)
    if source is None:
        return None
    lines, first = source
    index = use.span.start.line - first
    if not 0 <= index < len(lines):
        return None
    # once per line: a line of thousands of links was searched again for each of them
    part = f"{use.doc.rel}:{index}"
    if not skill.memos.has(LINE_PLACEHOLDER, part):
        match = _BARE_PLACEHOLDER.search(lines[index])
        skill.memos.put(LINE_PLACEHOLDER, None if match is None else match.group(0), part)
    return skill.memos.get(LINE_PLACEHOLDER, part)


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
    placeholder = _placeholder_on_line(skill, use)
    if placeholder is not None:
        return f"the line is template text ({placeholder}): a row of a document the skill writes"
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
    written = posixpath.normpath(posixpath.join(use.doc.base, use.path))
    if not res.via and res.suggestion is None and written.startswith(res.missing + "/"):
        # the same words for every link into one missing folder: they are one problem,
        # reported once per file with its other places (engine.lint.fold_repeats)
        return (
            f"{what} target in {show(res.missing + '/')}: that folder does not exist in the"
            " skill; fix the path or add the folder"
        )
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
        (`shared/x.md` where `shared` links to `../../common`). Nothing outside the skill is
        read; a `../` link whose target does not exist outside the skill either is broken
        everywhere, and SK501 reports it instead. A `../` link is a warning: it works
        where the folders
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
    folds_repeats=True,
)
def link_outside_skill(skill: Skill, ctx: Context) -> Iterator[Finding]:
    for use in checked_uses(skill):
        res = use.res
        if res is None or res.status != "outside" or res.reason == "site":
            continue
        if _leaves_to_nothing(skill, use):
            continue  # broken everywhere: SK501's
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


def _leaves_to_nothing(skill: Skill, use: LinkUse) -> bool:
    """A `../` link that leaves the skill and whose target does not exist outside it."""
    res = use.res
    if res is None or res.status != "outside" or res.reason != "parent" or res.via:
        return False
    if use.backslash or _SAMPLE_OUTPUT.search(use.doc.rel):
        return False
    return escapes_to_nothing(skill, use.doc.base, use.path)


def _stays_in_plugin(skill: Skill, use: LinkUse) -> bool:
    """Whether a `../` link that leaves the skill still ends inside the skill's plugin
    (lexically: nothing outside the skill is looked at)."""
    inside = tree_of(skill).in_plugin()
    if inside is None or use.res is None or use.res.via:
        return False
    joined = posixpath.normpath(posixpath.join(inside, use.doc.base, use.path))
    return joined != ".." and not joined.startswith("../")


# a sample document: a template or example of what the skill writes (`assets/page.md`,
# `templates/post.md`, `references/examples/home.md`, `blog-post-template.md`)
_SAMPLE_DOCUMENT = LazyPattern(
    r"(?:^|/)(?:assets|templates?|examples?|samples?)/"
    r"|(?:^|[-_./])(?:templates?|examples?|samples?)(?:[-_.][^/]*)?$",
    re.IGNORECASE,
)


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
        (`/commit`, `/plugin:skill`) is a slash command and is not reported. Neither are the
        props of a capitalised JSX component (`<Video src="/video.mp4">` names a file of the
        web app the text is about) nor the links of a sample document the skill writes for
        a site (a Markdown file under `assets/`, `templates/`, `examples/` or `samples/`, or
        named so: `blog-post-template.md`), where site-relative links are right. Each file
        gets one finding, at its first such link, with the count of the others.
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
    folds_repeats=True,
)
def site_relative_link(skill: Skill, ctx: Context) -> Iterator[Finding]:
    # one finding per file: a page copied from a site holds thousands of such links, and
    # each says the same thing
    by_doc: dict[str, list[LinkUse]] = {}
    for use in checked_uses(skill):
        res = use.res
        if _SAMPLE_DOCUMENT.search(use.doc.rel):
            continue  # a page the skill writes for a site: there its links are right
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
    folds_repeats=True,
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
    suggesters: dict[int, tuple[Outline, _Suggester]] = {}  # by target (kept alive here)
    for use in checked_uses(skill):
        frag = use.fragment
        if not frag or frag.startswith(":~:"):
            continue
        if use.res is None:
            if _quick_anchor(skill, use.doc.rel, doc_text(skill, use.doc), frag):
                continue
            target, name = _outline(skill, use.doc), use.doc.rel
        else:
            res = use.res
            if res.status != "found" or res.entry is None or use.backslash:
                continue
            if not markdown.is_markdown(res.rel) or res.entry.kind not in ("file", "symlink"):
                continue
            if _quick_anchor(skill, res.rel, _text_at(skill, res.rel), frag):
                continue
            name = res.rel
            target = _outline_at(skill, res.rel)
        if target is None or target.has_anchor(frag):
            continue
        if target.truncated:
            continue
        held = suggesters.get(id(target))
        if held is None:  # once per target file: a list per broken anchor was quadratic
            held = suggesters[id(target)] = (target, _Suggester([h.slug for h in target.headings]))
        known = held[1].known
        close = held[1].closest(frag.lower())
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
    return outline_for(skill, doc.entry)


# headings a "did you mean" compares an anchor with, at most: difflib's cost grows with each
# candidate, and a file of thousands of broken anchors to thousands of headings was quadratic
SUGGEST_MAX = 64


class _Suggester:
    """The headings of one target, bucketed by length, for bounded "did you mean" searches:
    the candidates nearest in length are compared, SUGGEST_MAX at most (a ratio of 0.6
    needs lengths within a factor of about 2.3 anyway)."""

    def __init__(self, slugs: list[str]) -> None:
        self.known = [f"#{slug}" for slug in slugs]
        self.by_length: dict[int, list[str]] = {}
        for slug in slugs:
            bucket = self.by_length.setdefault(len(slug), [])
            if len(bucket) < SUGGEST_MAX:
                bucket.append(slug)
        self.lengths = sorted(self.by_length)

    def closest(self, word: str) -> str | None:
        import bisect

        picked: list[str] = []
        lengths, size = self.lengths, len(word)
        right = bisect.bisect_left(lengths, size)
        left = right - 1
        # outwards from the word's length, one bucket at a time: O(SUGGEST_MAX) per anchor
        while len(picked) < SUGGEST_MAX and (left >= 0 or right < len(lengths)):
            if right < len(lengths) and (left < 0 or lengths[right] - size <= size - lengths[left]):
                length, right = lengths[right], right + 1
            else:
                length, left = lengths[left], left - 1
            picked.extend(self.by_length[length][: SUGGEST_MAX - len(picked)])
        return _closest(word, picked)


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
        more than one level deep. "Names" is read leniently, as SK506 reads it: the file's
        name alone (`README.md`, even when SKILL.md means another README) or its folder named
        as a folder (`references/`) counts. A stricter reading would find more nested
        references (an info) at the cost of false SK506 warnings, which share it.
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
