"""SK8xx: rules over the whole set of skills linted together.

They read each skill's SkillSummary (names, descriptions and their spans, and what each rule
declares it keeps of a skill: ``per_skill=``), never the skill itself: summaries come back
from worker processes and from the result cache, and a collection rule must see every skill
however it was checked.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skillcheck.analysis.paths import load_group
from skillcheck.analysis.similarity import (
    STOP_WORDS,
    WORD,
    content_words,
    description_words,
    similar_pairs,
    stem,
)
from skillcheck.rules.base import Context, Input, Option, PerSkill, rule
from skillcheck.source.skill import Finding, Outcome, Pos, Severity, Skill, SkillSummary, Span
from skillcheck.targets import TARGETS, impact, impacts


def _strings(data: Any) -> list[str]:
    """A list of strings read back from the result cache, its types checked."""
    if type(data) is not list or any(type(item) is not str for item in data):
        raise ValueError("not a list of strings")
    return data


def _shared_words(words: frozenset[str]) -> frozenset[str]:
    # the same words recur across skills: one copy of each (intern takes only a str)
    return frozenset(map(sys.intern, words))


def _content_words(_skill: Skill, summary: SkillSummary) -> frozenset[str]:
    if summary.description is None:
        return frozenset()
    return description_words(summary.description)


# SK802 compares the content words of descriptions, taken when each skill is checked
DESCRIPTION_WORDS = PerSkill(
    name="description-words",
    derive=_content_words,
    default=frozenset(),
    dump=sorted,
    load=lambda data: _shared_words(frozenset(_strings(data))),
    share=_shared_words,
)


def _nested_skill_md(skill: Skill, _summary: SkillSummary) -> list[Path]:
    return [
        entry.path
        for entry in skill.files
        if "/" in entry.rel and entry.rel.rsplit("/", 1)[1].lower() == "skill.md"
    ]


# SK803 reports the SKILL.md files below a skill's root, at their line 1
NESTED_SKILL_MD = PerSkill(
    name="nested-skill-md",
    derive=_nested_skill_md,
    default=(),
    dump=lambda paths: [str(path) for path in paths],
    load=lambda data: [Path(path) for path in _strings(data)],
    quoted=lambda paths: [(path, 1) for path in paths],
)


# --- which skills are loaded together ------------------------------------------------------


def loaded_together(skills: list[SkillSummary], ctx: Context) -> Iterator[list[SkillSummary]]:
    """The linted skills split into the sets loaded together (option `duplicate-scope`:
    `skills-root`, the default, or `run` for every skill of the run as one set)."""
    if ctx.value(DUPLICATE_SCOPE) == "run":
        yield skills
        return
    groups: dict[tuple[str, str], list[SkillSummary]] = {}
    for skill in skills:
        groups.setdefault(load_group(skill.root), []).append(skill)
    yield from groups.values()


# the folder name every runtime's skills directory ends with: `skills/`, `.claude/skills/`,
# `.agents/skills/`, `.github/skills/`, `.codex/skills/`, `~/.openclaw/skills/` ...
SKILLS_FOLDER = "skills"


def scanned_together(root: Path) -> bool:
    """False when the skill at ``root`` sits in a sub-folder of a folder named `skills`
    (`skills/<author>/<slug>` in ClawHub's archive, `skills/<category>/<slug>` in a
    catalog): runtimes load only the direct children of a skills folder, so such skills are
    installed one by one and their shared folder is no set a runtime loads. A plugin's
    skills, a `skills` folder's children and any other folder of skills (one the user lints
    as a collection) are loaded together."""
    kind, folder = load_group(root)
    if kind == "plugin":
        return True
    parent = Path(folder)
    return parent.parent.name.casefold() != SKILLS_FOLDER or parent.name.casefold() == SKILLS_FOLDER


DUPLICATE_SCOPE = Option(
    "duplicate-scope",
    {"enum": ["skills-root", "run"]},
    "skills-root",
    "Which skills SK801/SK802 compare: those loaded together (one plugin, else one skills"
    " root) or every skill of the run.",
)
_SCOPE_DOC = """
        `skills-root` compares the skills of one plugin (the nearest folder above the skill holding
        `.claude-plugin/plugin.json`, up to the repository root) and otherwise the skills
        in one skills root (the folder holding the skill directories, such as
        `.claude/skills/`): runtimes load those together, while Claude Code namespaces plugin
        skills (`plugin:skill`) and two repositories linted in one run are never installed
        together. `run` compares every skill linted in the run, as when one folder of
        skills is assembled from several sources.
"""


@rule(
    "SK801",
    "duplicate-name",
    Severity.ERROR,
    "Two skills in the linted set have the same name.",
    what="""
        Reports every skill whose name (the declared `name`, or the directory name when there
        is none) is already used by another skill loaded together with it (the same plugin,
        or the same skills root; see the option), naming the other. It is an error when the
        skills share a plugin or a folder of skills, and a warning when that folder is itself
        inside a folder named `skills` (an author's folder in an archive such as ClawHub's
        `skills/<author>/<slug>`, a category folder of a catalog): runtimes load only the
        direct children of a skills folder (`skills/`, `.claude/skills/`, `.agents/skills/`
        ...), so such skills are installed one at a time and collide only if someone
        installs both.
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
    options=[DUPLICATE_SCOPE],
    notes=_SCOPE_DOC,
    reads=Input.COLLECTION,
)
def duplicate_name(
    skills: list[SkillSummary], ctx: Context
) -> Iterator[tuple[SkillSummary, Finding]]:
    for group in loaded_together(skills, ctx):
        yield from _duplicate_names(group)


def _duplicate_names(skills: list[SkillSummary]) -> Iterator[tuple[SkillSummary, Finding]]:
    first: dict[str, SkillSummary] = {}
    for skill in skills:
        name = skill.key_name
        if name is None:
            continue
        if name not in first:
            first[name] = skill
            continue
        other = first[name]
        span = skill.name_span
        if scanned_together(skill.root):
            message = (
                f"the name {name!r} is also used by {other.display_root}; loaders keep only"
                " one of them, rename one"
            )
            outcome = impact(Outcome.DROPPED)
        else:
            message = (
                f"the name {name!r} is also used by {other.display_root}; they sit in a"
                " sub-folder of a skills folder, which no runtime loads as a set, but if both"
                " are installed one is shadowed: rename one"
            )
            outcome = impact(Outcome.DROPPED, Severity.WARNING)
        finding = Finding(
            message, impact=impacts({t: outcome for t in TARGETS if t != "skills-ref"})
        )
        if span is not None:
            finding.span = span
        yield skill, finding


# --- SK802 near-duplicate descriptions -----------------------------------------------------


@rule(
    "SK802",
    "near-duplicate-description",
    Severity.WARNING,
    "Two skills have nearly the same description, so agents cannot tell them apart.",
    what="""
        Compares the descriptions of the skills loaded together and reports a skill whose
        description is nearly the same as an earlier skill's, naming that skill. Descriptions
        are compared by their content words: lower-cased, NFKC-normalised, crudely stemmed,
        without stop words and without the phrasing every trigger clause shares ("use this
        skill when the user asks..."). Two descriptions collide when the Jaccard similarity
        of these word sets is 0.6 or more and each has at least three content words, unless
        one names something the other does not (a product, language or service written as a
        name: `… SDK for Python` and `… SDK for Java`, `Azure …` and `AWS …`), or one
        names the other skill (`for forms, use pdf-forms`: the two route to each other,
        which is how an agent is told apart similar skills). Only skills
        loaded together are compared (see the option). The comparison is an exact similarity
        join that only compares skills sharing a rare word, so it stays fast for tens of
        thousands of skills.
    """,
    why="""
        An agent chooses a skill by its description alone. When two descriptions say the same
        thing, which skill runs depends on listing order or chance, and the other is dead
        weight in every prompt. It usually means a copied or forked skill, or two skills that
        should be one.
    """,
    bad="""
        pdf/SKILL.md:        description: Extracts text and tables from PDF files. Use when
                             the user asks about PDFs.
        pdf-tools/SKILL.md:  description: Extracts tables and text from PDF files. Use when
                             working with PDFs.
    """,
    good="""
        pdf/SKILL.md:        description: Extracts text and tables from PDF files. Use when
                             the user asks about PDFs.
        pdf-forms/SKILL.md:  description: Fills and flattens PDF forms. Use when the user
                             needs a PDF form completed.
    """,
    options=[DUPLICATE_SCOPE],
    notes=_SCOPE_DOC,
    reads=Input.COLLECTION,
    per_skill=DESCRIPTION_WORDS,
)
def near_duplicate_description(
    skills: list[SkillSummary], ctx: Context
) -> Iterator[tuple[SkillSummary, Finding]]:
    for group in loaded_together(skills, ctx):
        yield from _near_duplicates(group)


def _near_duplicates(skills: list[SkillSummary]) -> Iterator[tuple[SkillSummary, Finding]]:
    # the word sets were taken when each skill was checked (DESCRIPTION_WORDS)
    entries = [s for s in skills if s.description is not None and s.description_span]
    sets = [DESCRIPTION_WORDS.of(skill) for skill in entries]
    for later, (earlier, score) in sorted(similar_pairs(sets).items()):
        skill, other = entries[later], entries[earlier]
        if skill.key_name == other.key_name:
            continue  # SK801 reports the duplicate name
        if _set_apart(skill.description or "", other.description or ""):
            continue
        if _routes_to(skill.description or "", other.key_name) or _routes_to(
            other.description or "", skill.key_name
        ):
            continue  # "for X use pdf-forms instead": the descriptions route to each other
        common = sets[later] & sets[earlier]
        pairs = content_words(skill.description or "")
        shared = list(dict.fromkeys(word for stem, word in pairs if stem in common))
        words = ", ".join(shared[:6]) + (", …" if len(shared) > 6 else "")
        yield (
            skill,
            Finding(
                f"the description shares {score:.0%} of its content words with that of"
                f" {other.key_name!r} ({other.display_root}; shared: {words});"
                " agents cannot tell which to use: say what sets this skill apart, or merge"
                " the two",
                span=skill.description_span,  # type: ignore[arg-type]
            ),
        )


def _routes_to(description: str, key_name: str | None) -> bool:
    """Whether ``description`` names the skill ``key_name`` (its bare name, as a whole
    hyphenated word): a description that sends some requests to the other skill sets the
    two apart for the agent."""
    name = (key_name or "").rpartition(":")[2].casefold()
    if len(name) < 3:
        return False
    text = description.casefold()
    start = text.find(name)
    while start >= 0:
        end = start + len(name)
        before = text[start - 1 : start] if start else ""
        after = text[end : end + 1]
        if not (before.isalnum() or before in "-_") and not (after.isalnum() or after in "-_"):
            return True
        start = text.find(name, end)
    return False


_SENTENCE_END = frozenset(".!?:;\n")
_BEFORE_WORD = frozenset(" \t\"'`*([")


def _names(text: str) -> set[str]:
    """Stems of the words written as names: a capital inside a sentence (`Python`, `Azure`),
    a capital after the first letter (`iOS`, `GitHub`, `AWS`), or letters with digits
    (`S3`, `EC2`)."""
    text = unicodedata.normalize("NFKC", text)
    out: set[str] = set()
    for match in WORD.finditer(text):
        word = match.group(0)
        if len(word) < 2 or word.isdigit():
            continue
        inner_capital = any(ch.isupper() for ch in word[1:])
        digits = any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)
        if not (inner_capital or digits):
            if not word[0].isupper():
                continue
            # the character before the word, past quotes, brackets and emphasis (scanned
            # back through the gap since the last word only: slicing the text before each
            # word made this quadratic in a long description)
            start = match.start()
            while start and text[start - 1] in _BEFORE_WORD:
                start -= 1
            if not start or text[start - 1] in _SENTENCE_END:
                continue  # a sentence's first word is capitalised anyway
        folded = word.casefold()
        if folded not in STOP_WORDS:
            out.add(stem(folded))
    return out


def _set_apart(first: str, second: str) -> bool:
    """Whether one description names something the other does not (`… for Python` and
    `… for Java`, `Automate Telnyx tasks` and `Automate Composio tasks`): the same kind of
    skill for another product, language or service is not a duplicate, the name tells the
    agent which to use."""
    one, two = _names(first), _names(second)
    words_one, words_two = description_words(first), description_words(second)
    return bool(one - words_two) or bool(two - words_one)


# --- SK803 nested skills -------------------------------------------------------------------


@rule(
    "SK803",
    "nested-skill",
    Severity.WARNING,
    "A skill directory lies inside another skill.",
    what="""
        Reports each `SKILL.md` found below the root of another skill, at the nested
        `SKILL.md`, naming the skill that contains it. The check uses the directory listing
        of every linted skill, so a nested skill is found even when only its parent is linted.
    """,
    why="""
        Runtimes treat the two differently: Codex and other scanners that search every level
        load the inner skill as a skill of its own, Claude Code and Copilot only look one level
        below a skills folder and never see it, and packers ship the inner skill inside the
        outer one, whose upload then holds two `SKILL.md` files (claude.ai expects one).
        Either the outer skill carries a copy of the inner one or the tree is mis-organised.
    """,
    bad="""
        skills/pdf/SKILL.md
        skills/pdf/forms/SKILL.md
    """,
    good="""
        skills/pdf/SKILL.md
        skills/pdf-forms/SKILL.md
    """,
    reads=Input.COLLECTION,
    per_skill=NESTED_SKILL_MD,
)
def nested_skill(
    skills: list[SkillSummary], ctx: Context
) -> Iterator[tuple[SkillSummary, Finding]]:
    by_root = {skill.root: skill for skill in skills}
    seen: set[Path] = set()
    # outermost skills first, so a skill nested two levels deep is attributed once, to the
    # innermost skill that contains it
    nested: dict[Path, SkillSummary] = {}
    for skill in sorted(skills, key=lambda s: len(s.root.parts)):
        for path in NESTED_SKILL_MD.of(skill):
            nested[path] = skill  # deeper containers overwrite: the innermost wins
    for path in sorted(nested):
        if path in seen:
            continue
        seen.add(path)
        container = nested[path]
        inner = by_root.get(path.parent)
        where = path.parent.relative_to(container.root).as_posix()
        yield (
            inner or container,
            Finding(
                f"a skill lies inside the skill {container.display_root} (at {where}/);"
                " runtimes disagree on whether it is a skill of its own, and packing the outer"
                " skill ships it too: move it next to the other skill",
                span=Span(Pos(1, 1), Pos(1, 2)),
                path=path,
            ),
        )
