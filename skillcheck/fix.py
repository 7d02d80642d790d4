"""Safe autofixes applied in rounds and written atomically (each fix is built beside its rule,
with the helpers of ``analysis/edits.py``; nothing here knows any rule).

Applying (``plan_fixes``): the fixes of each file are applied together, minus any that
overlap one already taken; the file is linted again in memory and the new fixes applied,
for at most ``MAX_ROUNDS`` rounds. ``write_plans`` then checks that each file on disk still
holds the bytes that were read and replaces it atomically; a file with nothing to fix is
never touched.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck.engine.check import check_skill, enabled_rules, per_path_filter
from skillcheck.engine.lint import lint
from skillcheck.engine.summary import summarise
from skillcheck.engine.suppress import apply_suppressions
from skillcheck.rules import Context
from skillcheck.source.atomic import write_atomic
from skillcheck.source.display import display_path, inert_lines, safe
from skillcheck.source.frontmatter import parse_document
from skillcheck.source.load import is_within, open_regular, read_fd
from skillcheck.source.skill import Diagnostic, Fix, Skill

MAX_ROUNDS = 5


# --- applying ----------------------------------------------------------------------------


def apply_fixes(data: bytes, fixes: Iterable[Fix]) -> tuple[bytes, list[Fix]]:
    """Apply the fixes that do not overlap an earlier one (identical fixes count once).

    Returns the new bytes and the fixes applied, in order. Fixes are taken by start offset;
    a fix that overlaps one already taken waits for the next round.
    """
    ordered = sorted(set(fixes), key=lambda f: (f.start, f.end, f.replacement))
    taken: list[Fix] = []
    for fix in ordered:
        if not 0 <= fix.start <= fix.end <= len(data):
            continue
        if taken:
            last = taken[-1]
            if fix.start < last.end or (fix.start == last.start == last.end):
                continue
        taken.append(fix)
    out = bytearray()
    pos = 0
    for fix in taken:
        out += data[pos : fix.start]
        out += fix.replacement
        pos = fix.end
    out += data[pos:]
    return bytes(out), taken


@dataclass
class FilePlan:
    """What fixing one SKILL.md does: its bytes before and after, and how many findings."""

    path: Path  # as reported (may be a symlink inside the skill)
    skill: Skill
    original: bytes
    fixed: bytes
    fixes: list[Fix] = field(default_factory=list)
    findings: int = 0  # diagnostics resolved by the applied fixes


def _fixes_for(diagnostics: Iterable[Diagnostic], path: Path) -> list[tuple[Diagnostic, Fix]]:
    return [(d, d.fix) for d in diagnostics if d.fix is not None and d.fix.path == path]


def _reload(skill: Skill, data: bytes) -> Skill:
    """The skill as it would be with SKILL.md holding ``data`` (other files as read)."""

    assert skill.skill_md is not None and skill.doc is not None
    doc = parse_document(skill.skill_md, data, len(data))
    rel = skill.skill_md.relative_to(skill.root).as_posix()
    contents = {k: v for k, v in skill.contents.items() if k != rel}
    return dataclasses.replace(skill, doc=doc, contents=contents)


def _relint(skill: Skill, settings: Any) -> list[Diagnostic]:

    rules = enabled_rules(settings)
    ctx = Context(targets=settings.targets, options=settings.options)
    diagnostics = check_skill(skill, rules, ctx)
    summary = summarise(skill, diagnostics, ctx)
    diagnostics = apply_suppressions(diagnostics, [summary], rules, ctx)
    ignored = per_path_filter(settings)
    if ignored is not None:
        diagnostics = [d for d in diagnostics if not ignored(d)]
    return diagnostics


def _is_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def plan_fixes(result: Any, settings: Any) -> list[FilePlan]:
    """Compute, in memory, what ``--fix`` does to each SKILL.md of a lint result (one run
    with ``keep=True``: the loaded skills are edited)."""
    plans: list[FilePlan] = []
    for skill in result.loaded:
        doc = skill.doc
        if doc is None or skill.skill_md is None or doc.truncated or not _is_utf8(doc.raw):
            continue  # a file that is not UTF-8 text is never modified, by any fix
        pending = _fixes_for(result.for_skill(skill), skill.skill_md)
        if not pending:
            continue
        plan = FilePlan(skill.skill_md, skill, doc.raw, doc.raw)
        seen = {doc.raw}
        current = skill
        for _round in range(MAX_ROUNDS):
            data, applied = apply_fixes(plan.fixed, (f for _d, f in pending))
            if not applied or data in seen:
                break
            taken = set(applied)
            plan.findings += sum(1 for _d, f in pending if f in taken)
            plan.fixes.extend(applied)
            plan.fixed = data
            seen.add(data)
            current = _reload(current, data)
            pending = _fixes_for(_relint(current, settings), skill.skill_md)
            if not pending:
                break
        if plan.fixed != plan.original:
            plans.append(plan)
    return plans


def _target(plan: FilePlan) -> Path | None:
    """The file a plan writes: SKILL.md itself, or, when it was a symlink when the skill was
    loaded, the file the link leads to inside the skill (a link stays a link), or the one
    the run read outside it. None when a link now leads anywhere else."""
    skill = plan.skill
    listed = next((f for f in skill.files if f.path == plan.path), None)
    if listed is None or listed.kind != "symlink":
        return plan.path  # opened without following links: a link put there is refused
    resolved = Path(os.path.realpath(plan.path))
    if resolved == skill.skill_md_target or is_within(resolved, skill.root.resolve()):
        return resolved
    return None


def _read_once(target: Path, most: int) -> tuple[bytes, tuple[int, int]]:
    """The bytes of ``target`` (at most ``most``) and the identity of the file they came from,
    opened once by the checked opener (a regular file, no link followed)."""
    fd, info = open_regular(target)
    try:
        return read_fd(fd, info.st_size, most), (info.st_dev, info.st_ino)
    finally:
        os.close(fd)


def write_plans(plans: Iterable[FilePlan]) -> list[tuple[Path, str]]:
    """Write each fixed file atomically; returns (path, reason) for files left unchanged.

    A file whose bytes on disk differ from what was read (edited meanwhile) is not written.
    The file is opened once without following links, and replaced only while the path
    still names that very file: SKILL.md swapped for a link meanwhile is never written
    through (the link's target, outside the skill, is never touched).
    """

    failures: list[tuple[Path, str]] = []
    for plan in plans:
        target = _target(plan)
        if target is None:
            failures.append((plan.path, "became a link out of the skill; not modified"))
            continue
        try:
            current, identity = _read_once(target, len(plan.original) + 1)
        except OSError as exc:
            failures.append((plan.path, f"cannot be read again: {exc.strerror or exc}"))
            continue
        if not _is_utf8(plan.original) or not _is_utf8(plan.fixed):
            failures.append((plan.path, "is not valid UTF-8 text; not modified"))
            continue
        if current != plan.original:
            failures.append((plan.path, "changed on disk while skillcheck ran; run --fix again"))
            continue
        try:
            write_atomic(
                target, plan.fixed, follow_symlinks=False, write_through=False, expect=identity
            )
        except OSError as exc:
            if exc.errno in (errno.ESTALE, errno.ELOOP):
                failures.append((plan.path, "replaced while skillcheck ran; run --fix again"))
            else:
                failures.append((plan.path, f"cannot be written: {exc.strerror or exc}"))
    return failures


def unified_diff(plans: Iterable[FilePlan], cwd: Path) -> str:
    """A unified diff of every planned change, as ``--diff`` prints it.

    Control characters (a lone CR, a BOM, an escape sequence in the skill) are shown
    escaped, so the preview cannot drive the terminal; a CRLF line ending is kept, so the
    diff of a CRLF -> LF fix applies with ``git apply -p0`` or ``patch -p0``.
    """

    out: list[str] = []
    for plan in plans:
        name = display_path(plan.path, cwd)
        lines = difflib.diff_bytes(
            difflib.unified_diff,
            plan.original.splitlines(keepends=True),
            plan.fixed.splitlines(keepends=True),
            name.encode("utf-8", "surrogateescape"),
            name.encode("utf-8", "surrogateescape"),
        )
        for raw in lines:
            text = raw.decode("utf-8", "replace")
            if text.endswith("\r\n"):
                # a CRLF ending stays as it is, so that a CRLF -> LF diff applies (git apply,
                # patch); a CR just before the line break cannot hide or redraw any text
                out.append(safe(text[:-2]) + "\r")
                continue
            body = text[:-1] if text.endswith("\n") else text
            out.append(safe(body))
            if not text.endswith("\n"):
                out.append("\\ No newline at end of file")
    return inert_lines("\n".join(out)) + ("\n" if out else "")


@dataclass
class FixReport:
    result: Any  # the LintResult after fixing (what remains)
    plans: list[FilePlan]
    failures: list[tuple[Path, str]]

    @property
    def fixed(self) -> int:
        failed = {path for path, _reason in self.failures}
        return sum(p.findings for p in self.plans if p.path not in failed)

    def messages(self, cwd: Path) -> list[str]:
        """One line per file that could not be fixed, for stderr."""

        return [
            f"skillcheck: error: {safe(display_path(path, cwd))}: not fixed: {reason}"
            for path, reason in self.failures
        ]


def fix_in_place(paths: list[Path], settings: Any, result: Any) -> FixReport:
    """``--fix``: write every safe fix, then lint again and return what remains."""

    plans = plan_fixes(result, settings)
    failures = write_plans(plans)
    if len(failures) < len(plans):
        result = lint(paths, settings)
    report = FixReport(result, plans, failures)
    result.fixed = report.fixed
    return report


def preview(result: Any, settings: Any, cwd: Path) -> tuple[str, str, bool]:
    """``--diff``: (the unified diff, a one-line summary for stderr, whether anything changes)."""
    plans = plan_fixes(result, settings)
    count = sum(p.findings for p in plans)
    if not plans:
        return "", "No fixes available.", False
    files = f"{len(plans)} file{'s' * (len(plans) != 1)}"
    message = f"Would fix {count} finding{'s' * (count != 1)} in {files}."
    return unified_diff(plans, cwd), message, True
