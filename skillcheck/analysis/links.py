"""The links and path mentions of a skill's Markdown files, resolved against its walk: the
analysis the SK5xx rules, SK407 and the catalog manifest share.

Moved out of ``rules/references.py`` (which keeps the rules) so the catalog and other rule
families use it without importing a rule module. Links are read with pyromark
(``skillcheck.source.markdown``) and resolved purely from the skill's walk
(``skillcheck.analysis.paths``): nothing outside the skill is ever opened or stat'ed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from skillcheck.analysis.paths import (
    Resolution,
    Tree,
    has_scheme,
    machine_path,
    tree_of,
)
from skillcheck.source import markdown
from skillcheck.source.anchors import QuickAnchors
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import read_text
from skillcheck.source.markdown import Link, Markdown
from skillcheck.source.outline import Outline, links_for, outline_for
from skillcheck.source.skill import (
    WHOLE_FILE,
    Memo,
    Skill,
    SkillFile,
    Span,
)
from skillcheck.source.stop import stop_point

RESOURCE_DIRS = ("references", "scripts", "assets")
_CODE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash", ".rb", ".pl", ".lua")


# --- the Markdown files of a skill and the links in them -------------------------------------


@dataclass
class Doc:
    rel: str  # path in the skill
    path: Path  # absolute, where findings point
    base: str  # its directory, relative to the skill root ("" = root)
    entry: SkillFile | None  # None for SKILL.md

    @property
    def is_skill_md(self) -> bool:
        return self.entry is None


# worked out once per skill and run
_DOCUMENTS: Memo[list[Doc]] = Memo("documents")
_ANALYSIS: Memo[Analysis] = Memo("link-analysis")
_SKILL_MD_LINKS: Memo[list[LinkUse]] = Memo("skill-md-links")
_QUICK_ANCHORS: Memo[QuickAnchors | None] = Memo("quick-anchors")  # per file


def documents(skill: Skill) -> list[Doc]:
    """SKILL.md, then every other Markdown file that belongs to this skill."""
    cached = skill.memos.get(_DOCUMENTS)
    if cached is not None:
        return cached
    docs: list[Doc] = []
    if skill.doc is not None and skill.skill_md is not None:
        docs.append(Doc(skill.skill_md.name, skill.skill_md, "", None))
    tree = tree_of(skill)
    for entry in skill.files:
        # a symlinked Markdown file is SK509/SK510's business; its target is checked itself
        if entry.kind != "file" or not markdown.is_markdown(entry.rel):
            continue
        if skill.skill_md is not None and entry.path == skill.skill_md:
            continue
        if not tree.owned(entry.rel):
            continue
        docs.append(Doc(entry.rel, entry.path, entry.rel.rpartition("/")[0], entry))
    return skill.memos.put(_DOCUMENTS, docs)


def doc_text(skill: Skill, doc: Doc) -> str | None:
    if doc.entry is None:
        return skill.doc.body if skill.doc else None
    # a binary file named .md holds no links or paths: random bytes would otherwise read
    # as Windows paths
    return read_text(skill, doc.entry)


def parsed(skill: Skill, doc: Doc) -> Markdown | None:
    if doc.entry is None:
        return markdown.for_body(skill)
    return markdown.for_file(skill, doc.entry)


def _links(skill: Skill, doc: Doc) -> list[Link] | None:
    """The file's links, from the cheap scan when it can read the text exactly."""
    return links_for(skill, doc.entry)


@dataclass
class LinkUse:
    """One link destination of one Markdown file, resolved inside the skill."""

    doc: Doc
    link: Link | None  # None for a candidate that was never parsed
    written: str  # the destination as CommonMark reads it
    path: str  # its path part, percent-decoded ("" for a same-file anchor)
    fragment: str | None  # after '#', percent-decoded
    res: Resolution | None  # None for a same-file anchor
    backslash: bool = False

    @property
    def span(self) -> Span:
        return self.link.span if self.link is not None else WHOLE_FILE


def _use(tree: Tree, doc: Doc, dest: str, link: Link | None) -> LinkUse | None:
    dest = dest.strip()
    if not dest:
        return None
    if dest.lower().startswith("file:"):
        return LinkUse(doc, link, dest, dest, None, Resolution("outside", reason="file-url"))
    if has_scheme(dest) or dest.startswith("//"):
        return None
    path, hash_, fragment = dest.partition("#")
    path = unquote(path.partition("?")[0])
    frag = unquote(fragment) if hash_ else None
    if not path:
        return LinkUse(doc, link, dest, "", frag, None)
    if _SLASH_COMMAND.match(path) and not machine_path(path):
        return None  # `/commit`, `/plugin:skill`: a command the agent runs, not a file
    base = doc.base
    placeholder = _SKILL_DIR_VAR.match(path)
    if placeholder is not None:  # `{baseDir}/references/x.md`: from the skill root
        path, base = path[placeholder.end() :], ""
    else:
        placeholder = _PLUGIN_ROOT_VAR.match(path)
        if placeholder is not None:
            inside = tree.in_plugin()
            rest = path[placeholder.end() :]
            if inside is None or not rest.startswith(inside + "/"):
                return None  # another part of the plugin: outside what is checked
            path, base = rest[len(inside) + 1 :], ""
    if _TEMPLATE.search(path) or path.rpartition("/")[2].lower() in _TEMPLATE_WORDS:
        return None  # `path/to/file`, `<name>.md`, `[link](url)`: a shape, not a file
    backslash = "\\" in path
    res = tree.resolve(path.replace("\\", "/") if backslash else path, base)
    return LinkUse(doc, link, dest, path, frag, res, backslash)


# Variables runtimes replace with the skill's folder before the agent reads the text:
# `{baseDir}` (OpenClaw), `${CLAUDE_SKILL_DIR}` (Claude Code), and `$SKILL_DIR` as written in
# many skills; `${CLAUDE_PLUGIN_ROOT}` is the plugin's folder.
_SKILL_DIR_VAR = LazyPattern(
    r"(?:\{baseDir\}|\$\{?(?:CLAUDE_SKILL_DIR|SKILL_DIR|SKILL_ROOT)\}?)(?:/|\Z)"
)
_PLUGIN_ROOT_VAR = LazyPattern(r"\$\{?CLAUDE_PLUGIN_ROOT\}?(?:/|\Z)")
# what only a template or an example writes in a destination: placeholders (`<name>`,
# `{topic}`, `$VAR`, `[Results]`), `path/to/`, elisions and globs
_TEMPLATE = LazyPattern(r"[<>{}\[\]$*]|\.\.\.|…|(?:^|/)path/to/|(?:^|/)your[-_]|YOUR_|_HERE\b")
_TEMPLATE_WORDS = frozenset({"link", "url", "path", "file", "filename", "href", "target"})


# ``/commit``, ``/review-pr``, ``/plugin:skill``: one segment, no extension (``/README.md`` and
# ``/docs/oauth`` are site-relative links, SK512's)
_SLASH_COMMAND = LazyPattern(r"/[A-Za-z][\w-]*(?::[\w.-]+)*\Z")


# Possible link destinations, found by regular expressions over the raw text: a superset of
# what CommonMark reads as destinations (``](`` and ``]:`` are never split in a link). When
# every one of them is plainly fine, the file needs no parsing: nothing could be reported.
_INLINE_DEST = LazyPattern(
    r"\]\([ \t\r]*\n?[ \t\r]*(?:<(?P<angle>[^<>\n]*)>|(?P<bare>[^\x00-\x20)]*))"
)
_DEF_DEST = LazyPattern(r"\]:[ \t\r]*\n?[ \t\r]*(?:<(?P<angle>[^<>\n]*)>|(?P<bare>[^\x00-\x20]+))")
# characters CommonMark rewrites in a destination (escapes, entities) or that end it early
_REWRITTEN = LazyPattern(r"[\\&()]")


def _candidates(tree: Tree, doc: Doc, text: str) -> list[tuple[LinkUse, bool]]:
    """(use, plain) for every possible destination (each once); ``plain`` when it reads the
    same to CommonMark as to the regular expression."""
    # each destination once: files link to the same place many times
    seen: dict[tuple[str, bool], LinkUse | None] = {}
    for pattern in (_INLINE_DEST, _DEF_DEST):
        if (pattern is _INLINE_DEST and "](" not in text) or (
            pattern is _DEF_DEST and not markdown.has_colon_after_bracket(text)
        ):
            continue
        for match in pattern.finditer(text):
            stop_point()
            dest = match.group("angle") if match.group("angle") is not None else match["bare"]
            key = (dest, _REWRITTEN.search(dest) is None)
            if key not in seen:
                seen[key] = _use(tree, doc, dest, None)
    if "<" in text and "=" in text:
        import html  # not on the start-up path: few skills write HTML links

        for match in markdown.ATTR_LINK_RE.finditer(text):
            dest = html.unescape(markdown.attr_value(match)[0])
            if (dest, True) not in seen:
                seen[(dest, True)] = _use(tree, doc, dest, None)
    return [(use, plain) for (_, plain), use in seen.items() if use is not None]


def written_as_path(rel: str, text: str, directory: bool = False) -> bool:
    """Whether ``text`` holds ``rel`` as a whole path: not inside a longer name
    (``myscripts/x.py``, ``x.py.bak``), sentence punctuation after it allowed."""
    start = text.find(rel)
    while start >= 0:
        end = start + len(rel)
        before = text[start - 1] if start else " "
        after = text[end : end + 2]
        if not (_word_char(before) or before in ".-"):
            if directory:
                if not after or after[0] == "/" or not (_word_char(after[0]) or after[0] in ".-"):
                    return True
            elif not after or not (
                _word_char(after[0])
                or after[0] == "-"
                or (after[0] == "." and len(after) > 1 and _word_char(after[1]))
            ):
                return True
        start = text.find(rel, start + 1)
    return False


class Mentions:
    """Which files of the skill the agent can find, starting from SKILL.md.

    A file is mentioned in SKILL.md when SKILL.md links to it or to a folder holding it, or
    writes its path (``scripts/extract.py``, ``./scripts/extract.py``,
    ``${CLAUDE_SKILL_DIR}/scripts/extract.py``), its file name with an extension
    (``run extract.py``) or the path of a sub-folder holding it (``assets/templates/``; a
    top folder inside a path, ``scripts/other.py``, is too generic to count), in any letter
    case. A top folder named as a folder (`` `references/` `` alone in code, "the references
    directory") counts for every file in it: the agent is told to look there. Links are
    taken from the raw text (a superset of CommonMark's), so a skill never gets more
    findings because its SKILL.md was parsed.
    """

    def __init__(self, skill: Skill, linked: list[LinkUse]) -> None:
        self._doc = skill.doc
        self.linked: set[str] = set()
        self.linked_dirs: set[str] = set()
        for use in linked:
            if use.res is not None and use.res.status == "found":
                if use.res.kind == "dir":
                    self.linked_dirs.add(use.res.rel)
                else:
                    self.linked.add(use.res.rel)
        self._cache: dict[str, bool] = {}

    # the text and the folders are read at the first question: many skills ask none
    @functools.cached_property
    def text(self) -> str:
        """SKILL.md's text in lower case: `FORMS.md` still tells the agent the file exists
        (a wrong case in links and resource paths is SK503's and SK507's to report)."""
        return self._doc.text.lower() if self._doc else ""

    @functools.cached_property
    def folders(self) -> set[str]:
        """The top folders SKILL.md names as folders (`references/` alone in code, "the
        references folder"): the agent knows to list them."""
        text = self.text
        return {
            word for word, named in _FOLDER_NAMED.items() if word in text and named.search(text)
        }

    def _written(self, rel: str, text: str, directory: bool = False) -> bool:
        return written_as_path(rel.lower(), text, directory)

    def in_skill_md(self, rel: str) -> bool:
        if rel in self._cache:
            return self._cache[rel]
        name = rel.rpartition("/")[2]
        found = (
            rel.partition("/")[0] in self.folders
            or rel in self.linked
            or self._written(rel, self.text)
            # a bare file name ("run package_skill.py") still tells the agent it exists
            or ("." in name.strip(".") and self._written(name, self.text))
        )
        if not found:
            parts = rel.split("/")
            for i in range(len(parts) - 1, 0, -1):
                folder = "/".join(parts[:i])
                if folder in self.linked_dirs or (
                    i > 1 and self._written(folder, self.text, directory=True)
                ):
                    found = True
                    break
        self._cache[rel] = found
        return found


# `word/` alone in code, or "word/ folder": each word's pattern starts with the word itself, so
# `re` skips to its occurrences (as one alternation starting with `\b` it was tried at every
# position of the text: 9x slower on real SKILL.md files). The lookbehinds restate "`" and
# `\b` before the word.
_FOLDER_NAMED = {
    word: LazyPattern(
        rf"{word}(?:(?<=`{word})/?`(?!\w)|(?<!\w{word})/?`?\s+(?:directory|folder|dir)\b)"
    )
    for word in ("scripts", "references", "assets")
}


@dataclass
class Analysis:
    uses: list[LinkUse]  # every link of every Markdown file that can hold a finding
    candidates: dict[str, list[LinkUse]]  # possible destinations, by file
    mentions: Mentions


def analysis(skill: Skill) -> Analysis:
    """Links of the skill's Markdown files, resolved; computed once per run.

    A file is parsed only when one of its possible destinations is not plainly fine
    (missing, outside, wrong case, an anchor that does not match, a link one level too
    deep, or written with escapes): a clean file costs one regular-expression pass.
    """
    cached = skill.memos.get(_ANALYSIS)
    if cached is not None:
        return cached
    tree = tree_of(skill)
    docs = documents(skill)
    found: dict[str, list[tuple[LinkUse, bool]]] = {}
    for doc in docs:
        text = doc_text(skill, doc)
        found[doc.rel] = (
            _candidates(tree, doc, text) if text and markdown.may_have_links(text) else []
        )
    first = docs[0] if docs and docs[0].is_skill_md else None
    known = Mentions(skill, [u for u, _ in found[first.rel]] if first else [])
    result = Analysis([], {rel: [u for u, _ in items] for rel, items in found.items()}, known)
    for doc in docs:
        items = found[doc.rel]
        if _plainly_fine(skill, items, known):
            continue
        result.uses += _link_uses(tree, doc, _links(skill, doc) or ())
    return skill.memos.put(_ANALYSIS, result)


def _link_uses(tree: Tree, doc: Doc, links: list[Link] | tuple[()]) -> list[LinkUse]:
    """The uses of a file's links, each destination resolved once. Reference uses and
    autolinks are left out: a reference's definition is checked, autolinks are URLs."""
    out: list[LinkUse] = []
    resolved: dict[str, LinkUse | None] = {}
    for link in links:
        stop_point()
        if link.kind in ("reference", "autolink"):
            continue
        if link.dest in resolved:
            same = resolved[link.dest]
            if same is not None:
                out.append(
                    LinkUse(
                        doc, link, same.written, same.path, same.fragment, same.res, same.backslash
                    )
                )
            continue
        use = resolved[link.dest] = _use(tree, doc, link.dest, link)
        if use is not None:
            out.append(use)
    return out


def _plainly_fine(skill: Skill, items: list[tuple[LinkUse, bool]], known: Mentions) -> bool:
    """Whether every possible destination of a file reads the same to CommonMark and is
    plainly fine: a filter (the file's links need not be read), never a reader."""
    return not any(not plain or _suspect(skill, use, known) for use, plain in items)


def _suspect(skill: Skill, use: LinkUse, known: Mentions) -> bool:
    """Whether a destination might be reported by SK501–SK505."""
    stop_point()
    res = use.res
    frag = use.fragment if use.fragment and not use.fragment.startswith(":~:") else None
    if res is None:
        return frag is not None and not _quick_anchor(
            skill, use.doc.rel, doc_text(skill, use.doc), frag
        )
    if use.backslash or res.status in ("missing", "outside", "loop") or res.case:
        return True
    if res.status != "found" or res.entry is None or not markdown.is_markdown(res.rel):
        return False
    if frag is not None and not _quick_anchor(skill, res.rel, _text_at(skill, res.rel), frag):
        target = _outline_at(skill, res.rel)
        if target is None or not target.has_anchor(frag):
            return True
    skill_md = skill.skill_md.name if skill.skill_md is not None else None
    return (
        not use.doc.is_skill_md
        and res.rel not in (use.doc.rel, skill_md)
        and not known.in_skill_md(res.rel)
    )


def checked_uses(skill: Skill) -> list[LinkUse]:
    """The links SK501–SK505 look at: those of files that could hold a finding."""
    return analysis(skill).uses


def skill_md_link_uses(skill: Skill) -> list[LinkUse]:
    """Every link of SKILL.md's body, resolved (for the catalog's ``references``): links,
    images, reference definitions and HTML ``href``/``src``, not reference uses or
    autolinks. Shared with the rules when lint read them in this process; a body whose raw
    text holds no possible destination is not read at all."""
    cached = skill.memos.get(_SKILL_MD_LINKS)
    if cached is not None:
        return cached
    docs = documents(skill)
    uses: list[LinkUse] = []
    if docs and docs[0].is_skill_md:
        doc = docs[0]
        checked = skill.memos.get(_ANALYSIS)  # lint's, when it ran here
        if checked is not None and any(use.doc is doc for use in checked.uses):
            uses = [use for use in checked.uses if use.doc is doc]
        else:
            text = doc_text(skill, doc)
            if text and markdown.may_have_links(text):
                uses = _link_uses(tree_of(skill), doc, _links(skill, doc) or ())
    return skill.memos.put(_SKILL_MD_LINKS, uses)


def mentions(skill: Skill) -> Mentions:
    return analysis(skill).mentions


def _quick_anchor(skill: Skill, rel: str, text: str | None, frag: str) -> bool:
    """Whether the anchor is certainly in the file ``rel`` without parsing it."""
    if skill.memos.has(_QUICK_ANCHORS, rel):
        anchors = skill.memos.get(_QUICK_ANCHORS, rel)
    else:
        anchors = skill.memos.put(_QUICK_ANCHORS, QuickAnchors(text) if text else None, rel)
    return anchors is not None and anchors.has(frag.lower())


def _text_at(skill: Skill, rel: str) -> str | None:
    if skill.skill_md is not None and skill.skill_md.name == rel:
        return skill.doc.body if skill.doc else None
    entry = tree_of(skill).entries.get(rel)
    if entry is None or entry.kind != "file":
        return None
    return markdown.text_of(skill, entry)


def _outline_at(skill: Skill, rel: str) -> Outline | None:
    """Headings and links of the skill's Markdown file ``rel`` (SKILL.md: its body)."""
    entry: SkillFile | None = None
    if skill.skill_md is None or skill.skill_md.name != rel:
        entry = tree_of(skill).entries.get(rel)
        if entry is None or entry.kind != "file":
            return None
    return outline_for(skill, entry)


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"
