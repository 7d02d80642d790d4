"""What a rule is, what its check reads, and the context it receives.

A rule is one self-describing unit, in the manner of yamllint's rule modules and ruff's rule
pages: a code, a slug, a default severity, a one-line summary, documentation (what it checks,
why it matters, a failing example, the fixed version), the options it reads (declared here,
like yamllint's ``CONF``/``DEFAULT``), whether it attaches fixes, and a check.

Each rule declares what its check reads (``reads=``, an ``Input``), like ruff's ``LintSource``;
one dispatcher (``engine.check.dispatch``) runs every kind:

- ``Input.SKILL``: ``check(skill: Skill, ctx) -> Iterator[Finding]``, once per loaded skill
  (and once more per other reading of its frontmatter, see ``engine.check``);
- ``Input.COLLECTION``: ``check(summaries: list[SkillSummary], ctx)`` yielding
  ``(summary, finding)`` pairs, once per run. It gets the *summaries* of every checked skill
  (names, descriptions, figures...), not the loaded skills: a run over 10,000 skills never
  holds 10,000 parsed documents, and cached skills are never loaded;
- ``Input.DISCOVERY``: ``check(discovery: Discovery, ctx)`` yielding ``(None, finding)``
  pairs: what the search for skills could not look at;
- ``Input.SUPPRESSIONS``: ``check(summary, ctx, comments) -> Iterator[Finding]``, per skill,
  after suppressions were applied, with that skill's suppression comments.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, Required, TypedDict, Unpack, overload

from skillcheck.source.discover import Discovery
from skillcheck.source.skill import (
    Finding,
    Frontmatter,
    Node,
    Pos,
    Severity,
    Skill,
    SkillSummary,
    Span,
)
from skillcheck.tokens import DEFAULT_TOKENIZER


@dataclass
class Context:
    """What a check may consult besides the skill: targets and options."""

    targets: tuple[str, ...] = ("agentskills",)
    options: dict[str, Any] = field(default_factory=dict)

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)

    def value(self, option: Option) -> Any:
        """A top-level option's value, else its declared default."""
        return self.options.get(option.name, option.default)


def tokenizer_spec(ctx: Context) -> str:
    return str(ctx.option("tokenizer") or DEFAULT_TOKENIZER)


class Input(StrEnum):
    """What a rule's check reads (see the module docstring for each signature)."""

    SKILL = "skill"
    COLLECTION = "collection"  # the summaries of every checked skill, not loaded skills
    DISCOVERY = "discovery"
    SUPPRESSIONS = "suppressions"


class SuppressionComment(Protocol):
    """What a suppressions rule reads of one ``skillcheck-disable`` comment (the engine's
    ``suppress.Suppression``, after the run marked what it silenced)."""

    @property
    def text(self) -> str: ...
    @property
    def span(self) -> Span: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def next_line(self) -> bool: ...
    @property
    def unknown(self) -> list[tuple[str, Span]]: ...  # words naming no rule
    @property
    def unused(self) -> list[tuple[str, Span]]: ...  # enabled codes that silenced nothing
    @property
    def unused_all(self) -> bool: ...  # a code-less comment that silenced nothing


class SkillCheck(Protocol):
    def __call__(self, skill: Skill, ctx: Context, /) -> Iterator[Finding]: ...


class CollectionCheck(Protocol):
    def __call__(
        self, summaries: list[SkillSummary], ctx: Context, /
    ) -> Iterator[tuple[SkillSummary, Finding]]: ...


class DiscoveryCheck(Protocol):
    def __call__(self, discovery: Discovery, ctx: Context, /) -> Iterator[tuple[None, Finding]]: ...


class SuppressionsCheck(Protocol):
    def __call__(
        self, summary: SkillSummary, ctx: Context, comments: Sequence[SuppressionComment], /
    ) -> Iterator[Finding]: ...


AnyCheck = SkillCheck | CollectionCheck | DiscoveryCheck | SuppressionsCheck


@dataclass(frozen=True)
class Option:
    """A configuration key a rule reads, declared with the rule (yamllint's CONF/DEFAULT).

    ``name`` is the key in the configuration (``budgets.body-lines`` for a key of the
    ``budgets`` table); ``schema`` its JSON-schema fragment (schemas/config.schema.json holds
    the same, with ``doc`` as its description: a test keeps them equal); ``default`` what a run
    uses when the key is not set (None: not set, the rule's own behaviour); ``doc`` one line.
    An option several rules read is one ``Option`` object that each of them names.
    """

    name: str
    schema: Mapping[str, Any]
    default: Any
    doc: str

    @property
    def table(self) -> str | None:
        """The top-level table holding the key (``budgets``), or None for a top-level key."""
        head, dot, _rest = self.name.partition(".")
        return head if dot else None

    def describe(self) -> str:
        """One Markdown line for the rule's page."""
        # JSON spells these defaults (strings, numbers, lists of strings) as TOML does
        default = "not set" if self.default is None else f"`{json.dumps(self.default)}`"
        return f"- `{self.name}` (default {default}): {self.doc}"


_BUDGETS: dict[str, Option] = {}  # key of the `budgets` table -> its one declaration


def budget_option(key: str, default: int | None, doc: str, minimum: int = 1) -> Option:
    """A key of the ``budgets`` table, the limits several families read; its default is
    declared here once, and ``budget`` reads it from here."""
    option = Option(f"budgets.{key}", {"type": "integer", "minimum": minimum}, default, doc)
    _BUDGETS[key] = option
    return option


def budget(ctx: Context, key: str) -> int | None:
    """A limit from the configuration's `budgets` table, else the default its
    ``budget_option`` declares (a key never declared is a KeyError: a typo, not a limit)."""
    value = (ctx.option("budgets") or {}).get(key, _BUDGETS[key].default)
    return int(value) if value is not None else None


def _same(value: Any) -> Any:
    return value


def _no_lines(_value: Any) -> tuple[tuple[Path, int], ...]:
    return ()


@dataclass(frozen=True, kw_only=True)
class PerSkill:
    """What a collection rule keeps of each skill while the skill is checked, declared with
    the rule (``per_skill=``): the engine stores ``derive(skill, summary)`` in the skill's
    summary under ``name``, the rule reads it back with ``of(summary)``, and the result
    cache stores it, so adding a collection rule never changes ``SkillSummary``.

    ``dump`` turns the value into plain JSON for the cache; ``load`` rebuilds it from that
    JSON, checking every type (a ValueError: a damaged or hostile cache file is ignored).
    ``share`` is applied as a worker's summary reaches the main process (interning values
    that recur across skills); ``quoted`` names the lines of the skill's files a finding
    will point at, so reports can quote them after the files are gone."""

    name: str
    derive: Callable[[Skill, SkillSummary], Any]
    load: Callable[[Any], Any]
    default: Any = None  # what ``of`` gives a summary that holds no value
    dump: Callable[[Any], Any] = _same
    share: Callable[[Any], Any] = _same
    quoted: Callable[[Any], Iterable[tuple[Path, int]]] = _no_lines

    def of(self, summary: SkillSummary) -> Any:
        return summary.data.get(self.name, self.default)


@dataclass(frozen=True, kw_only=True)
class Rule:
    """A registered rule; one subclass per input kind types its ``check``."""

    reads: ClassVar[Input]
    code: str
    slug: str
    severity: Severity
    summary: str
    what: str
    why: str
    bad: str  # a failing example (a SKILL.md excerpt or a tree)
    good: str  # the fixed version
    options: tuple[Option, ...] = ()
    notes: str = ""  # what the options' one-liners do not say (prose, for the rule's page)
    # attaches a Fix to its findings (a test checks that exactly these rules do)
    fixable: bool = False
    family: str = ""
    # off by default: runs only when selected (`select`, `extend-select`, `--select`)
    default_enabled: bool = True
    # the text report may quote the line a finding is on (not where the line is a secret)
    quote_source: bool = True
    # reads every skill's token figures (counted while each skill is checked) when this
    # says so for the run's options; None: never
    figures_when: Callable[[Context], bool] | None = None
    # where the rule is written: "skillcheck/rules/name.py:check_function"
    defined_in: str = ""
    # its findings name a target (a missing file): the same message again in the same file
    # is one finding with "and N more places" (engine.lint.fold_repeats)
    folds_repeats: bool = False
    # a security rule: the score (0.1-10, as CVSS) GitHub code scanning ranks its errors by;
    # its findings go first in the text report, and shipping gates refuse them unless allowed
    security_severity: float | None = None
    # a collection rule: what it keeps of each skill while the skill is checked
    per_skill: PerSkill | None = None

    def docs_markdown(self) -> str:
        """The rule's full page, as `skillcheck rule CODE` prints it."""
        parts = [
            f"# {self.code} {self.slug}",
            "",
            f"Default severity: {self.severity}. Fixable: {'yes' if self.fixable else 'no'}."
            + (
                ""
                if self.default_enabled
                else f" Off by default: enable it with `--extend-select {self.code}`"
                f' (config `extend-select = ["{self.code}"]`).'
            ),
            "",
            self.summary,
            "",
            "## What it does",
            "",
            self.what,
            "",
            "## Why is this bad?",
            "",
            self.why,
            "",
            "## Example",
            "",
            "```",
            self.bad.rstrip("\n"),
            "```",
            "",
            "Use instead:",
            "",
            "```",
            self.good.rstrip("\n"),
            "```",
        ]
        if self.options or self.notes:
            parts += ["", "## Options", ""]
            parts += [option.describe() for option in self.options]
            if self.notes:
                parts += ["", self.notes] if self.options else [self.notes]
        return "\n".join(parts) + "\n"


@dataclass(frozen=True, kw_only=True)
class SkillRule(Rule):
    reads: ClassVar[Input] = Input.SKILL
    check: SkillCheck


@dataclass(frozen=True, kw_only=True)
class CollectionRule(Rule):
    reads: ClassVar[Input] = Input.COLLECTION
    check: CollectionCheck


@dataclass(frozen=True, kw_only=True)
class DiscoveryRule(Rule):
    reads: ClassVar[Input] = Input.DISCOVERY
    check: DiscoveryCheck


@dataclass(frozen=True, kw_only=True)
class SuppressionsRule(Rule):
    reads: ClassVar[Input] = Input.SUPPRESSIONS
    check: SuppressionsCheck


_KINDS: dict[Input, Callable[..., Rule]] = {
    Input.SKILL: SkillRule,
    Input.COLLECTION: CollectionRule,
    Input.DISCOVERY: DiscoveryRule,
    Input.SUPPRESSIONS: SuppressionsRule,
}

_REGISTRY: dict[str, Rule] = {}


def _clean(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


class RuleFields(TypedDict, total=False):
    """What a rule declares besides its code, slug, severity, summary and input kind (the
    ``Rule`` fields of the same names; prose is dedented)."""

    what: Required[str]
    why: Required[str]
    bad: Required[str]
    good: Required[str]
    options: Sequence[Option]
    notes: str
    fixable: bool
    default_enabled: bool
    quote_source: bool
    figures_when: Callable[[Context], bool] | None
    folds_repeats: bool
    security_severity: float | None
    per_skill: PerSkill | None


# one overload per input kind: mypy checks the decorated check against what it declares
@overload
def rule(
    code: str,
    slug: str,
    severity: Severity,
    summary: str,
    *,
    reads: Literal[Input.SKILL] = Input.SKILL,
    **fields: Unpack[RuleFields],
) -> Callable[[SkillCheck], SkillCheck]: ...
@overload
def rule(
    code: str,
    slug: str,
    severity: Severity,
    summary: str,
    *,
    reads: Literal[Input.COLLECTION],
    **fields: Unpack[RuleFields],
) -> Callable[[CollectionCheck], CollectionCheck]: ...
@overload
def rule(
    code: str,
    slug: str,
    severity: Severity,
    summary: str,
    *,
    reads: Literal[Input.DISCOVERY],
    **fields: Unpack[RuleFields],
) -> Callable[[DiscoveryCheck], DiscoveryCheck]: ...
@overload
def rule(
    code: str,
    slug: str,
    severity: Severity,
    summary: str,
    *,
    reads: Literal[Input.SUPPRESSIONS],
    **fields: Unpack[RuleFields],
) -> Callable[[SuppressionsCheck], SuppressionsCheck]: ...
def rule(
    code: str,
    slug: str,
    severity: Severity,
    summary: str,
    *,
    reads: Input = Input.SKILL,
    **fields: Unpack[RuleFields],
) -> Callable[[Any], Any]:
    """Register the decorated check as a rule that reads ``reads``."""

    def decorate(check: AnyCheck) -> AnyCheck:
        if code in _REGISTRY:
            raise RuntimeError(f"duplicate rule code {code}")
        if any(r.slug == slug for r in _REGISTRY.values()):
            raise RuntimeError(f"duplicate rule slug {slug}")
        if fields.get("per_skill") is not None and reads is not Input.COLLECTION:
            raise RuntimeError(f"{code}: only a collection rule keeps per-skill data")
        module = getattr(check, "__module__", "")
        declared: dict[str, Any] = dict(fields)
        for prose in ("what", "why", "bad", "good", "notes"):
            if prose in declared:
                declared[prose] = _clean(declared[prose])
        declared["options"] = tuple(declared.get("options", ()))
        _REGISTRY[code] = _KINDS[reads](
            code=code,
            slug=slug,
            severity=severity,
            summary=summary,
            # a module may name its family (a family split over two modules keeps one tag)
            family=getattr(sys.modules.get(module), "FAMILY", None) or module.rsplit(".", 1)[-1],
            check=check,  # the overloads matched its signature to ``reads``
            defined_in=f"{module.replace('.', '/')}.py:{getattr(check, '__name__', '')}",
            **declared,
        )
        return check

    return decorate


def registry() -> dict[str, Rule]:
    return _REGISTRY


# --- helpers shared by the rule families -------------------------------------------------


def usable_frontmatter(skill: Skill) -> Frontmatter | None:
    """The frontmatter when it parsed to a mapping; None otherwise.

    Field rules run only on a usable frontmatter, so one broken delimiter or YAML error is
    reported once (by SK1xx), not again as a missing name and a missing description.
    """
    doc = skill.doc
    fm = doc.frontmatter if doc else None
    if fm is None or fm.close_line is None or fm.error or fm.too_complex:
        return None
    if fm.root is not None and fm.root.resolved().kind != "mapping":
        return None
    return fm


def value_span(node: Node, offset: int = 0, length: int | None = None) -> Span:
    """The span of characters ``[offset, offset+length)`` of a scalar's value.

    Exact for single-line plain and quoted scalars without escapes; otherwise the node's
    own span, which is still the right line and column to look at.
    """
    if node.kind != "scalar" or node.span.start.line != node.span.end.line:
        return node.span
    start = node.span.start
    quote = 1 if node.style in ("'", '"') else 0
    raw_len = node.span.end.column - start.column - 2 * quote
    if raw_len != len(node.value):  # escapes or folded text: positions do not map 1:1
        return node.span
    col = start.column + quote + offset
    end = col + (length if length is not None else len(node.value) - offset)
    return Span(Pos(start.line, col), Pos(start.line, max(end, col + 1)))


def key_span(fm: Frontmatter, name: str) -> Span:
    key = fm.key(name)
    return key.span if key is not None else Span(Pos(fm.open_line, 1), Pos(fm.open_line, 4))


def first_line_span(skill: Skill) -> Span:
    return Span(Pos(1, 1), Pos(1, 4))
