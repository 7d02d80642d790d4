"""Plain data shared by every stage: discover -> load -> check -> report.

Positions are 1-based lines and 1-based columns counted in Unicode code points of the
decoded file, so they point at the real place in SKILL.md (frontmatter included).
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]


class Outcome(enum.IntEnum):
    """What a runtime does with a skill, ordered from best to worst."""

    OK = 0
    DEGRADED = 1  # loads, but something is lost or changed
    REJECTED = 2  # the loader reports an error
    DROPPED = 3  # the loader silently ignores the skill

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, order=True, slots=True)
class Pos:
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a file; end is inclusive of the last character's column + 1 (exclusive)."""

    start: Pos
    end: Pos

    @classmethod
    def at(
        cls, line: int, column: int, end_line: int | None = None, end_column: int | None = None
    ) -> Span:
        return cls(Pos(line, column), Pos(end_line or line, end_column or column))


WHOLE_FILE = Span(Pos(1, 1), Pos(1, 1))


@dataclass(frozen=True, slots=True)
class Fix:
    """A safe edit: replace bytes [start, end) of ``path`` with ``replacement``."""

    path: Path
    start: int
    end: int
    replacement: bytes
    description: str


@dataclass(frozen=True)
class Impact:
    """How one runtime is affected by a finding."""

    outcome: Outcome
    severity: Severity


@dataclass
class Finding:
    """What a rule's check yields; the engine turns it into a Diagnostic.

    ``impact`` maps target names to their Impact. ``None`` means the finding does not
    depend on the runtime (budgets, hygiene): it keeps the rule's default severity.
    A finding whose impact names none of the active targets is not reported.
    """

    message: str
    span: Span = WHOLE_FILE
    path: Path | None = None  # defaults to the skill's SKILL.md (or the skill directory)
    impact: dict[str, Impact] | None = None
    fix: Fix | None = None
    help: str | None = None
    severity: Severity | None = None  # overrides the rule's default (impact-free findings)
    # an exact edit that changes meaning (a rename): offered in the editor, never by --fix
    suggestion: Fix | None = None


@dataclass(slots=True)
class Diagnostic:
    code: str
    slug: str
    severity: Severity
    message: str
    path: Path  # absolute
    line: int
    column: int
    end_line: int
    end_column: int
    targets: tuple[str, ...] = ()
    fix: Fix | None = None
    help: str | None = None
    skill: Path | None = None  # the skill directory the finding belongs to
    outcomes: dict[str, Outcome] = field(default_factory=dict)
    suggestion: Fix | None = None  # see Finding.suggestion
    # the other places of the same finding in the same file, (line, column, end_line,
    # end_column) each: a repeated finding is reported once (engine.lint.fold_repeats)
    related: tuple[tuple[int, int, int, int], ...] = ()

    def sort_key(self) -> tuple:
        return (str(self.path), self.line, self.column, self.code, self.message)


# --- YAML nodes with positions ------------------------------------------------------------

NodeKind = Literal["scalar", "sequence", "mapping", "alias"]


@dataclass
class Node:
    """A YAML node as composed from parser events, with its span in the real file.

    For scalars ``value`` is the scalar's text and ``tag`` the type a YAML 1.1 loader
    (PyYAML) resolves it to: ``str``, ``bool``, ``int``, ``float``, ``null``,
    ``timestamp``, ``binary``, ``merge`` or ``set``/``omap``/... for explicit tags.
    """

    kind: NodeKind
    span: Span
    value: Any  # str | list[Node] | list[tuple[Node, Node]]
    tag: str = "str"
    style: str | None = None  # scalar style: None (plain), "'", '"', "|", ">"
    flow: bool = False  # flow collection ([a, b] / {k: v})
    anchor: str | None = None
    explicit_tag: str | None = None
    target: Node | None = None  # for aliases: the anchored node

    def resolved(self) -> Node:
        node = self
        while node.kind == "alias" and node.target is not None:
            node = node.target
        return node

    def text(self) -> str | None:
        """The scalar's text whatever its type (``name: 123`` gives "123")."""
        node = self.resolved()
        return node.value if node.kind == "scalar" else None

    def items(self) -> list[tuple[Node, Node]]:
        node = self.resolved()
        return node.value if node.kind == "mapping" else []

    def get(self, key: str) -> Node | None:
        for k, v in self.items():
            if k.text() == key:
                return v
        return None


@dataclass
class YamlIssue:
    """A YAML construct that other loaders parse differently."""

    kind: Literal["anchor", "alias", "tag", "merge", "flow", "document"]
    span: Span
    detail: str


@dataclass
class Frontmatter:
    """The frontmatter block of SKILL.md."""

    open_line: int  # line of the opening ``---`` (always 1)
    close_line: int | None  # line of the closing ``---``; None when unclosed
    text: str  # the YAML between the delimiters
    open_trailing_ws: bool = False  # ``--- `` on the opening line
    close_trailing_ws: bool = False
    root: Node | None = None  # None when the YAML did not parse or is empty
    error: tuple[str, Span] | None = None  # YAML syntax error
    too_complex: str | None = None  # a bound was hit (size, alias expansion, depth)
    fields: dict[str, tuple[Node, Node]] = field(default_factory=dict)  # last occurrence wins
    duplicates: list[tuple[Node, Node, Node]] = field(
        default_factory=list
    )  # (key, value, earlier key)
    issues: list[YamlIssue] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)  # plain Python values (PyYAML typing)
    # in a loader's view (parse.substring_view): the `---` inside a line or value where that
    # loader ends the frontmatter, short of the real closing line
    cut: Pos | None = None

    def key(self, name: str) -> Node | None:
        pair = self.fields.get(name)
        return pair[0] if pair else None

    def node(self, name: str) -> Node | None:
        pair = self.fields.get(name)
        return pair[1] if pair else None


@dataclass
class TextIssue:
    """A decoding or line-ending observation about a file's bytes."""

    kind: Literal["bom", "utf16", "utf32", "invalid-utf8", "crlf", "cr", "nul"]
    span: Span
    detail: str
    byte_start: int = 0
    byte_end: int = 0


@dataclass
class Document:
    """SKILL.md read and split: bytes, text, frontmatter and body."""

    path: Path
    raw: bytes
    text: str  # decoded (BOM removed, invalid bytes replaced)
    lines: list[str]  # text split on line breaks, without the breaks
    text_issues: list[TextIssue]
    frontmatter: Frontmatter | None
    body: str
    body_line: int  # line on which the body starts
    truncated: bool = False  # the file was larger than the read bound
    size: int = 0  # real size on disk


FileKind = Literal["file", "dir", "symlink", "fifo", "socket", "device", "other"]


@dataclass
class SkillFile:
    """One entry under a skill directory (found by a walk that never follows links)."""

    path: Path  # absolute
    rel: str  # POSIX path relative to the skill root
    kind: FileKind
    size: int = 0
    mode: int = 0
    link_target: str | None = None  # for symlinks: what the link says
    # the rest of the lstat identity, for the result cache: a change to any of them
    # (an edit, a checkout, a chmod) means the file may have changed
    mtime_ns: int = 0
    ctime_ns: int = 0
    inode: int = 0


T = TypeVar("T")


class Memo(Generic[T]):
    """A value worked out once per loaded skill and run (its tree, the link analysis, its
    figures...), declared once as a module constant by the module that computes it: the
    declaration is the key, so no two modules share a key by spelling it alike, and its type
    parameter is what readers get back."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Memo({self.name!r})"


class Memos:
    """A Skill's memo table: a ``Memo`` (with a file, for per-file values) to its value."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[tuple[Memo[Any], str], object] = {}

    def has(self, memo: Memo[Any], part: str = "") -> bool:
        return (memo, part) in self._values

    def get(self, memo: Memo[T], part: str = "") -> T | None:
        """The value, or None when it was not worked out yet."""
        return cast("T | None", self._values.get((memo, part)))

    def put(self, memo: Memo[T], value: T, part: str = "") -> T:
        self._values[(memo, part)] = value
        return value

    def get_or_make(self, memo: Memo[T], make: Callable[[], T], part: str = "") -> T:
        key = (memo, part)
        if key in self._values:
            return cast(T, self._values[key])
        value = make()
        self._values[key] = value
        return value


@dataclass
class Skill:
    """A skill directory as loaded: what every rule, the catalog and the packer read."""

    root: Path  # absolute path of the skill directory (as given, links not resolved)
    display_root: str  # how paths are shown (relative to cwd when possible)
    skill_md: Path | None  # absolute path of SKILL.md (or the wrong-case variant)
    doc: Document | None  # None when SKILL.md could not be read
    read_error: str | None = None  # why SKILL.md could not be read
    # a symlinked SKILL.md read from outside the skill (but inside the linted tree): its target
    skill_md_target: Path | None = None
    files: list[SkillFile] = field(default_factory=list)
    walk_errors: list[tuple[Path, str]] = field(default_factory=list)
    # file contents read so far, by rel path: every rule shares one read (load.read_file)
    contents: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    # paths looked at outside the skill's folder and what was there (source.outside): inputs
    # of the results that the listing does not show
    outside: dict[str, str] = field(default_factory=dict, repr=False)
    # what rules, the catalog and reports work out once per run (the tree, the link
    # analysis, token figures...), by typed Memo declarations
    memos: Memos = field(default_factory=Memos, repr=False, compare=False)

    def file(self, rel: str) -> SkillFile | None:
        for entry in self.files:
            if entry.rel == rel:
                return entry
        return None

    @property
    def dir_name(self) -> str:
        return self.root.name

    @property
    def name(self) -> str | None:
        """The declared name when it is a string, else None."""
        fm = self.doc.frontmatter if self.doc else None
        value = fm.values.get("name") if fm else None
        return value.strip() if isinstance(value, str) else None

    @property
    def description(self) -> str | None:
        fm = self.doc.frontmatter if self.doc else None
        value = fm.values.get("description") if fm else None
        return value if isinstance(value, str) else None


# --- what the engine keeps of a skill once it is checked -----------------------------------


@dataclass(frozen=True, slots=True)
class Figures:
    """Tokens per tier and body lines of a skill, for reports and the collection budget."""

    catalog: int | None  # name + description; None without a string description
    body: int
    references: int
    lines: int
    # the largest reference file's tokens: the reference budget (SK605) is per file
    largest_reference: int = 0


@dataclass
class SkillSummary:
    """A checked skill, reduced to what the rest of a run needs: its diagnostics, what the
    collection rules compare (names, descriptions, and in ``data`` what each of them declares
    it keeps of a skill: ``rules.base.PerSkill``), its suppression comments, and the source
    lines reports quote. Small and plain, so a worker process can
    send it back, the result cache can store it, and a run over 10,000 skills does not hold
    10,000 parsed documents.
    """

    root: Path
    display_root: str
    skill_md: Path | None
    has_doc: bool  # SKILL.md was read
    name: str | None  # the declared name, when a string
    diagnostics: list[Diagnostic] = field(default_factory=list)
    walk_errors: list[tuple[Path, str]] = field(default_factory=list)
    # the frontmatter parsed to a mapping (field rules ran): the spans below are meaningful
    usable: bool = False
    name_span: Span | None = None  # of the name's value
    description: str | None = None  # when a string in a usable frontmatter
    description_span: Span | None = None
    # what the collection rules keep of the skill, by the name of their PerSkill declaration
    data: dict[str, Any] = field(default_factory=dict)
    suppressions: list[Any] = field(default_factory=list)  # suppress.Suppression
    figures: Figures | None = None  # computed when a report or SK608 needs them
    # source lines that reports quote: {path: {line number: text}}
    lines: dict[Path, dict[int, str]] = field(default_factory=dict)
    # what the summary was computed from (cache.inputs_of: the listing and the digest of every
    # file the rules read), when the run keeps skills or caches: a skill loaded again later
    # (for pack) is checked against it. Not part of the cached summary itself.
    inputs: dict[str, Any] | None = field(default=None, compare=False)

    @property
    def dir_name(self) -> str:
        return self.root.name

    @property
    def key_name(self) -> str | None:
        """The name a loader registers the skill under: the declared name, else the directory."""
        return self.name or (self.dir_name if self.has_doc else None)

    def line(self, path: Path, number: int) -> str | None:
        return self.lines.get(path, {}).get(number)
