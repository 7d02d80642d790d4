"""A checked Skill -> SkillSummary, and the summary's plain-JSON form for the result cache.

The summary is taken right after a skill's rules ran, while its files are still in memory:
the source lines a report will quote are copied then, so reports never read a file again
and the Skill (its document, its file contents) can be dropped at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillcheck.analysis.figures import skill_figures
from skillcheck.engine.suppress import Suppression, find_suppressions
from skillcheck.rules import Context, per_skill_data
from skillcheck.rules.base import tokenizer_spec, usable_frontmatter, value_span
from skillcheck.source.load import decoded_text
from skillcheck.source.skill import (
    Diagnostic,
    Figures,
    Fix,
    Outcome,
    Pos,
    Severity,
    Skill,
    SkillSummary,
    Span,
)
from skillcheck.source.text import lf_lines


def summarise(
    skill: Skill, diagnostics: list[Diagnostic], ctx: Context, figures: bool = False
) -> SkillSummary:
    """What the rest of the run needs of ``skill`` (checked, with ``diagnostics``)."""

    summary = SkillSummary(
        root=skill.root,
        display_root=skill.display_root,
        skill_md=skill.skill_md,
        has_doc=skill.doc is not None,
        name=skill.name,
        diagnostics=diagnostics,
        walk_errors=list(skill.walk_errors),
    )
    fm = usable_frontmatter(skill)
    if fm is not None:
        summary.usable = True
        node = fm.node("name")
        if node is not None:
            summary.name_span = value_span(node.resolved())
        node = fm.node("description")
        if node is not None:
            summary.description_span = value_span(node.resolved())
            summary.description = skill.description
    for name, declared in per_skill_data().items():  # what the collection rules keep
        summary.data[name] = declared.derive(skill, summary)
    summary.suppressions = find_suppressions(skill)
    if figures:
        fig = skill_figures(skill, tokenizer_spec(ctx))
        summary.figures = Figures(
            fig.catalog_tokens,
            fig.body_tokens,
            fig.reference_tokens,
            fig.body_lines,
            fig.largest_reference,
        )
    summary.lines = _quoted_lines(skill, summary)
    return summary


def share_words(summary: SkillSummary) -> SkillSummary:
    """``summary`` as a worker's summary reaches the main process, with what the collection
    rules keep shared across skills (``PerSkill.share``): every skill's words arrive as copies
    of their own, and the same words recur across skills (365,000 strings, 20 MB, for 18,000
    real skills)."""
    declared = per_skill_data()
    for name, value in summary.data.items():
        summary.data[name] = declared[name].share(value)
    return summary


def _quoted_lines(skill: Skill, summary: SkillSummary) -> dict[Path, dict[int, str]]:
    """The lines any diagnostic of this skill may point at, including those collection rules
    and unused suppressions (SK120) report later: the name and description lines, the
    comments, line 1 of SKILL.md, and the lines each collection rule's data names."""
    wanted: dict[Path, set[int]] = {}
    for diag in summary.diagnostics:
        wanted.setdefault(diag.path, set()).add(diag.line)
    if skill.skill_md is not None:
        own = wanted.setdefault(skill.skill_md, set())
        own.add(1)
        for span in (summary.name_span, summary.description_span):
            if span is not None:
                own.add(span.start.line)
        for sup in summary.suppressions:
            lines = wanted.setdefault(sup.path, set()) if sup.path is not None else own
            lines.add(sup.span.start.line)
            lines.update(where.start.line for _word, where in sup.words)
    declared = per_skill_data()
    for name, value in summary.data.items():
        for path, number in declared[name].quoted(value):
            wanted.setdefault(path, set()).add(number)
    out: dict[Path, dict[int, str]] = {}
    for path, numbers in wanted.items():
        text = _file_lines(skill, path)
        if text:
            out[path] = {n: text[n - 1] for n in sorted(numbers) if 1 <= n <= len(text)}
    return out


def _file_lines(skill: Skill, path: Path) -> list[str]:
    """A file's lines as reports show them: SKILL.md as parsed, other files decoded."""
    if skill.doc is not None and skill.doc.path == path:
        return skill.doc.lines

    try:
        entry = skill.file(path.relative_to(skill.root).as_posix())
    except ValueError:
        return []
    text = decoded_text(skill, entry) if entry is not None else None
    return [] if text is None else lf_lines(text)


# --- plain JSON, for the result cache ----------------------------------------------------------
# Every value is rebuilt field by field with its type checked, so a damaged or hostile cache
# file raises (and is then ignored) instead of feeding odd objects to the reports.


def _span(span: Span | None) -> list[int] | None:
    if span is None:
        return None
    return [span.start.line, span.start.column, span.end.line, span.end.column]


def _unspan(data: Any) -> Span | None:
    if data is None:
        return None
    a, b, c, d = data
    return Span(Pos(_int(a), _int(b)), Pos(_int(c), _int(d)))


def _int(value: Any) -> int:
    if type(value) is not int:
        raise ValueError(f"not an integer: {value!r}")
    return value


def _str(value: Any) -> str:
    if type(value) is not str:
        raise ValueError(f"not a string: {value!r}")
    return value


def _opt_str(value: Any) -> str | None:
    return None if value is None else _str(value)


def _path(value: Any, made: dict[str, Path] | None = None) -> Path:
    """``value`` as a Path; ``made`` reuses the Path already built for the same text (a
    summary names its SKILL.md and root many times)."""
    text = _str(value)
    if made is None:
        return Path(text)
    path = made.get(text)
    if path is None:
        path = made[text] = Path(text)
    return path


def diagnostic_to_json(diag: Diagnostic, fixes: dict[Fix, int]) -> dict[str, Any]:
    """``fixes`` numbers the distinct fixes: one edit may fix 20,000 diagnostics (keys moved
    under metadata), and its bytes are stored once."""
    out: dict[str, Any] = {
        "code": diag.code,
        "slug": diag.slug,
        "severity": int(diag.severity),
        "message": diag.message,
        "path": str(diag.path),
        "span": [diag.line, diag.column, diag.end_line, diag.end_column],
        "targets": list(diag.targets),
        "help": diag.help,
        "skill": None if diag.skill is None else str(diag.skill),
        "outcomes": {t: int(o) for t, o in diag.outcomes.items()},
    }
    if diag.fix is not None:
        out["fix"] = fixes.setdefault(diag.fix, len(fixes))
    if diag.suggestion is not None:  # numbered with the fixes: one table of edits
        out["suggestion"] = fixes.setdefault(diag.suggestion, len(fixes))
    return out


def _fix_to_json(fix: Fix) -> list[Any]:
    # latin-1 maps any byte to one code point: the replacement's bytes survive JSON
    return [str(fix.path), fix.start, fix.end, fix.replacement.decode("latin-1"), fix.description]


def _fix_from_json(data: Any, made: dict[str, Path]) -> Fix:
    path, start, end, replacement, description = data
    raw = _str(replacement).encode("latin-1")
    return Fix(_path(path, made), _int(start), _int(end), raw, _str(description))


def diagnostic_from_json(
    data: dict[str, Any], fixes: list[Fix], made: dict[str, Path] | None = None
) -> Diagnostic:
    made = {} if made is None else made
    line, column, end_line, end_column = (_int(v) for v in data["span"])
    fix, suggestion = (_numbered(data, key, fixes) for key in ("fix", "suggestion"))
    skill = data["skill"]
    return Diagnostic(
        code=_str(data["code"]),
        slug=_str(data["slug"]),
        severity=Severity(_int(data["severity"])),
        message=_str(data["message"]),
        path=_path(data["path"], made),
        line=line,
        column=column,
        end_line=end_line,
        end_column=end_column,
        targets=tuple(_str(t) for t in data["targets"]),
        fix=fix,
        help=_opt_str(data["help"]),
        skill=None if skill is None else _path(skill, made),
        outcomes={_str(t): Outcome(_int(o)) for t, o in data["outcomes"].items()},
        suggestion=suggestion,
    )


def _numbered(data: dict[str, Any], key: str, fixes: list[Fix]) -> Fix | None:
    if key not in data:
        return None
    number = _int(data[key])
    if not 0 <= number < len(fixes):
        raise ValueError(f"no fix numbered {number}")
    return fixes[number]


def to_json(summary: SkillSummary) -> dict[str, Any]:
    figures = summary.figures
    fixes: dict[Fix, int] = {}
    diagnostics = [diagnostic_to_json(d, fixes) for d in summary.diagnostics]
    return {
        "root": str(summary.root),
        "display_root": summary.display_root,
        "skill_md": None if summary.skill_md is None else str(summary.skill_md),
        "has_doc": summary.has_doc,
        "name": summary.name,
        "diagnostics": diagnostics,
        "fixes": [_fix_to_json(fix) for fix in fixes],
        "walk_errors": [[str(p), reason] for p, reason in summary.walk_errors],
        "usable": summary.usable,
        "name_span": _span(summary.name_span),
        "description": summary.description,
        "description_span": _span(summary.description_span),
        "data": _data_to_json(summary.data),
        "suppressions": [_suppression_to_json(s) for s in summary.suppressions],
        "figures": None
        if figures is None
        else [
            figures.catalog,
            figures.body,
            figures.references,
            figures.lines,
            figures.largest_reference,
        ],
        "lines": [
            [str(path), [[n, text] for n, text in numbers.items()]]
            for path, numbers in summary.lines.items()
        ],
    }


def from_json(data: dict[str, Any], root: Path | None = None) -> SkillSummary:
    """The summary ``to_json`` wrote; ``root``, the Path of the skill it should be (a warm
    run already holds it), saves making it again."""
    if type(data) is not dict:
        raise ValueError("not an object")
    skill_md = data["skill_md"]
    figures = data["figures"]
    if figures is not None:
        catalog, body, references, lines, largest = figures
        figures = Figures(
            None if catalog is None else _int(catalog),
            _int(body),
            _int(references),
            _int(lines),
            _int(largest),
        )
    made: dict[str, Path] = {} if root is None else {str(root): root}
    fixes = [_fix_from_json(fix, made) for fix in data["fixes"]]
    has_doc, usable = data["has_doc"], data["usable"]
    if type(has_doc) is not bool or type(usable) is not bool:
        raise ValueError("not a boolean")
    return SkillSummary(
        root=_path(data["root"], made),
        display_root=_str(data["display_root"]),
        skill_md=None if skill_md is None else _path(skill_md, made),
        has_doc=has_doc,
        name=_opt_str(data["name"]),
        diagnostics=[diagnostic_from_json(d, fixes, made) for d in data["diagnostics"]],
        walk_errors=[(_path(p, made), _str(reason)) for p, reason in data["walk_errors"]],
        usable=usable,
        name_span=_unspan(data["name_span"]),
        description=_opt_str(data["description"]),
        description_span=_unspan(data["description_span"]),
        data=_data_from_json(data["data"]),
        suppressions=[_suppression_from_json(s) for s in data["suppressions"]],
        figures=figures,
        lines={
            _path(path, made): {_int(n): _str(text) for n, text in numbers}
            for path, numbers in data["lines"]
        },
    )


def _data_to_json(data: dict[str, Any]) -> dict[str, Any]:
    declared = per_skill_data()
    return {name: declared[name].dump(value) for name, value in sorted(data.items())}


def _data_from_json(data: Any) -> dict[str, Any]:
    if type(data) is not dict:
        raise ValueError("not an object")
    declared = per_skill_data()
    unknown = set(data) - set(declared)
    if unknown:  # written by another version of the rules
        raise ValueError(f"no rule keeps {sorted(unknown)}")
    return {name: declared[name].load(value) for name, value in data.items()}


def _suppression_to_json(sup: Any) -> dict[str, Any]:
    return {
        "span": _span(sup.span),
        "next_line": sup.next_line,
        "codes": None if sup.codes is None else sorted(sup.codes),
        "words": [[word, _span(span)] for word, span in sup.words],
        "unknown": [[word, _span(span)] for word, span in sup.unknown],
        "path": None if sup.path is None else str(sup.path),
    }


def _suppression_from_json(data: dict[str, Any]) -> Any:

    codes = data["codes"]
    next_line = data["next_line"]
    if type(next_line) is not bool:
        raise ValueError("not a boolean")
    return Suppression(
        span=_unspan(data["span"]),  # type: ignore[arg-type]
        next_line=next_line,
        codes=None if codes is None else frozenset(_str(c) for c in codes),
        words=[(_str(w), _unspan(s)) for w, s in data["words"]],  # type: ignore[misc]
        unknown=[(_str(w), _unspan(s)) for w, s in data["unknown"]],  # type: ignore[misc]
        path=None if data.get("path") is None else _path(data["path"]),
    )
