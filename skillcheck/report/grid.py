"""The runtime grid: each skill's load outcome in each active target, and the rules behind
every outcome that is not ok. Shared by the text and HTML reports."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from skillcheck.source.display import safe
from skillcheck.source.skill import Outcome

# one mark per cell, as wide as the narrowest target name; upper case where the skill is lost
MARKS = {
    Outcome.OK: "ok",
    Outcome.DEGRADED: "deg",
    Outcome.REJECTED: "REJ",
    Outcome.DROPPED: "DROP",
}
LEGEND = "ok: loads; deg: degraded (loads, something lost); REJ: rejected; DROP: silently dropped"
_COLORS = {Outcome.OK: "32", Outcome.DEGRADED: "33", Outcome.REJECTED: "31", Outcome.DROPPED: "31"}


def outcome_rules(result) -> dict[tuple[Path, str], list[str]]:
    """(skill root, target) -> the codes of the findings that give that outcome, in order."""
    out: dict[tuple[Path, str], dict[str, None]] = {}
    for diag in result.diagnostics:
        if diag.skill is None:
            continue
        for target, outcome in diag.outcomes.items():
            if outcome is not Outcome.OK:
                out.setdefault((diag.skill, target), {})[diag.code] = None
    return {key: list(codes) for key, codes in out.items()}


def worst(outcomes: dict[str, Outcome]) -> Outcome:
    return max(outcomes.values(), default=Outcome.OK)


def text_lines(
    result, name: Callable[[Path], str], rules: bool, paint: Callable[[str, str], str]
) -> Iterator[str]:
    """The grid in text: one row per skill some runtime does not load as it is, then how many
    load everywhere. ``name`` shows a skill's directory; ``paint`` colours a mark.
    With ``rules``, the codes behind each mark under its row."""
    targets = tuple(result.targets)
    if len(targets) < 2 or not result.skills:
        return
    reasons = outcome_rules(result) if rules else {}
    names = {skill.root: safe(name(skill.root)) for skill in result.skills}
    shown = [
        skill
        for skill in result.skills
        if worst(result.outcomes.get(skill.root, {})) is not Outcome.OK
    ]
    if not shown:
        if result.diagnostics:  # with none, the summary says it all
            yield "Runtimes: every skill loads as it is in every runtime checked."
            yield ""
        return
    widths = [max(len(t), 4) for t in targets]
    first = max([len("skill"), *(len(names[s.root]) for s in shown)])
    yield f"Runtimes ({LEGEND}):"
    yield "  ".join(
        ["skill".ljust(first), *(t.ljust(w) for t, w in zip(targets, widths, strict=True))]
    ).rstrip()
    for skill in shown:
        per = result.outcomes.get(skill.root, {})
        cells = []
        for target, width in zip(targets, widths, strict=True):
            outcome = per.get(target, Outcome.OK)
            mark = MARKS[outcome]
            cells.append(paint(mark, _COLORS[outcome]) + " " * (width - len(mark)))
        yield "  ".join([names[skill.root].ljust(first), *cells]).rstrip()
        behind: dict[str, list[str]] = {}  # code -> the targets whose mark it explains
        for target in targets:
            if per.get(target, Outcome.OK) is not Outcome.OK:
                for code in reasons.get((skill.root, target), ()):
                    behind.setdefault(code, []).append(target)
        for code, where in behind.items():
            yield f"    {code}: {', '.join(where)}"
    rest = len(result.skills) - len(shown)
    if rest:
        yield f"{rest} other skill{'s' * (rest != 1)}: ok in every runtime checked"
    if not rules:
        yield "(--outcome-rules names the rules behind each mark)"
    yield ""
