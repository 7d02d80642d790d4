"""SARIF 2.1.0, as GitHub code scanning and other SARIF viewers read it.

- ``tool.driver.rules`` lists every registered rule (so ``ruleIndex`` is stable from run to
  run), with its summary, its full documentation as help and its default level.
- Locations are relative to the repository root (``%SRCROOT%``, resolved through
  ``originalUriBaseIds``): the git work tree holding the current directory, else the
  current directory. Files outside it get an absolute ``file:`` URI.
- Columns count Unicode code points (``columnKind``), as every skillcheck position does.
- ``partialFingerprints`` hash the rule, the file and the offending line's text (whitespace
  collapsed), not the line number, so an alert keeps its identity when lines move.
- Messages go through ``safe``: a control character from a skill shows as ``\\x1b``, as in
  the text report, and never reaches a viewer raw.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote_from_bytes

from skillcheck import __version__
from skillcheck.report import ReportOptions, Sink, repository_root, safe
from skillcheck.rules import Rule, all_rules
from skillcheck.source.jsontext import Rows, write_indented
from skillcheck.source.skill import Diagnostic, Fix, Severity, SkillSummary

SCHEMA_URI = (
    "https://raw.githubusercontent.com/oasis-tcs/sarif-spec/master/Schemata/sarif-schema-2.1.0.json"
)
INFORMATION_URI = "https://github.com/skillcheck-dev/skillcheck"

# who made the log: the same in a run's log and in one that says the run failed
_DRIVER = {
    "name": "skillcheck",
    "version": __version__,
    "semanticVersion": __version__,
    "informationUri": INFORMATION_URI,
}
SRCROOT = "%SRCROOT%"
FINGERPRINT_KEY = "skillcheck/v1"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _location(path: Path, root: Path, is_dir: bool = False) -> dict:
    """An artifactLocation: percent-encoded, relative to ``root`` when the path lies inside."""
    path = Path(os.path.abspath(path))
    try:
        relative = path.relative_to(root)
    except ValueError:
        return {"uri": path.as_uri()}
    uri = quote_from_bytes(os.fsencode(relative.as_posix()), safe="/")
    if is_dir:
        uri = "" if uri == "." else uri + "/"  # SARIF: a directory's URI ends with '/'
    return {"uri": uri, "uriBaseId": SRCROOT}


def _directory_uri(path: Path) -> str:
    uri = path.as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _rule_properties(rule: Rule) -> dict:
    """Tags, and for a security rule the ``security-severity`` GitHub code scanning ranks
    its alerts by (a string holding a CVSS-like score, as GitHub documents it)."""
    properties: dict = {"tags": [rule.family] if rule.family else []}
    if rule.security_severity is not None:
        if "security" not in properties["tags"]:
            properties["tags"] = [*properties["tags"], "security"]
        properties["security-severity"] = f"{rule.security_severity:.1f}"
    return properties


def _security_severity(severities: dict[str, float | None], diag: Diagnostic) -> str | None:
    """A result's score: its rule's for an error, lowered for a warning or note (GitHub maps
    7.0+ to high, 4.0+ to medium, below to low), None for a rule that is not a security rule."""
    score = severities.get(diag.code)
    if score is None:
        return None
    if diag.severity is not Severity.ERROR:
        score = min(score, 3.9 if diag.severity is Severity.INFO else 6.9)
    return f"{score:.1f}"


def _rules_metadata() -> tuple[list[dict], dict[str, int]]:

    rules, index = [], {}
    for i, rule in enumerate(all_rules()):
        index[rule.code] = i
        docs = rule.docs_markdown()
        rules.append(
            {
                "id": rule.code,
                "name": rule.slug,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": f"{rule.what}\n\n{rule.why}"},
                "help": {"text": docs, "markdown": docs},
                "helpUri": f"{INFORMATION_URI}#rules",
                "defaultConfiguration": {
                    "level": LEVELS[rule.severity],
                    "enabled": rule.default_enabled,
                },
                "properties": _rule_properties(rule),
            }
        )
    return rules, index


class _Lines:
    """The text of a diagnostic's line, for fingerprints, as kept in its skill's summary."""

    def __init__(self, skills: list[SkillSummary]) -> None:
        self.skills = {skill.root: skill for skill in skills}

    def line(self, diag: Diagnostic) -> str:
        skill = self.skills.get(diag.skill) if diag.skill is not None else None
        text = skill.line(diag.path, diag.line) if skill is not None else None
        return text or ""


def _fix(fix: Fix, location: dict) -> dict:
    try:
        inserted = {"text": fix.replacement.decode("utf-8")}
    except UnicodeDecodeError:
        inserted = {"binary": base64.b64encode(fix.replacement).decode("ascii")}
    return {
        "description": {"text": safe(fix.description)},
        "artifactChanges": [
            {
                "artifactLocation": location,
                "replacements": [
                    {
                        "deletedRegion": {
                            "byteOffset": fix.start,
                            "byteLength": fix.end - fix.start,
                        },
                        "insertedContent": inserted,
                    }
                ],
            }
        ],
    }


def document(result, options: ReportOptions) -> dict:
    root = repository_root(options.cwd)
    rules, index = _rules_metadata()
    severities = {r.code: r.security_severity for r in all_rules()}
    lines = _Lines(result.skills)

    def results_maker() -> Callable[[Diagnostic], dict]:
        """A fresh maker for one pass over the diagnostics: fingerprints are numbered, and a
        fix's bytes shown once, in the order of the pass."""
        seen: dict[str, int] = {}
        fixes_shown: set[tuple] = set()

        def make(diag: Diagnostic) -> dict:
            is_dir = os.path.isdir(diag.path)
            location = _location(diag.path, root, is_dir)
            physical: dict = {"artifactLocation": location}
            if not is_dir:
                # end columns are exclusive, as in SARIF; an empty span is an insertion point
                start_line, start_column = max(diag.line, 1), max(diag.column, 1)
                end_line = max(diag.end_line, start_line)
                floor = start_column if end_line == start_line else 1
                physical["region"] = {
                    "startLine": start_line,
                    "startColumn": start_column,
                    "endLine": end_line,
                    "endColumn": max(diag.end_column, floor),
                }
            text = " ".join(lines.line(diag).split())
            key = f"{diag.code}\0{location['uri']}\0{text}"
            digest = hashlib.sha256(key.encode()).hexdigest()[:32]
            seen[digest] = seen.get(digest, 0) + 1  # same rule, file and line text: numbered
            message = safe(diag.message) + (f"\nhelp: {safe(diag.help)}" if diag.help else "")
            entry: dict = {
                "ruleId": diag.code,
                "level": LEVELS[diag.severity],
                "message": {"text": message},
                "locations": [{"physicalLocation": physical}],
                "partialFingerprints": {FINGERPRINT_KEY: f"{digest}:{seen[digest]}"},
                "properties": {"slug": diag.slug, "targets": list(diag.targets)},
            }
            if diag.related and not is_dir:
                entry["relatedLocations"] = [
                    {
                        "id": number,
                        "physicalLocation": {
                            "artifactLocation": location,
                            "region": {
                                "startLine": max(a, 1),
                                "startColumn": max(b, 1),
                                "endLine": max(c, a, 1),
                                "endColumn": max(d, b if c <= a else 1, 1),
                            },
                        },
                    }
                    for number, (a, b, c, d) in enumerate(diag.related, 1)
                ]
            score = _security_severity(severities, diag)
            if score is not None:
                entry["properties"]["security-severity"] = score
            if diag.code in index:
                entry["ruleIndex"] = index[diag.code]
            # one edit can fix many results (moving 20,000 keys under metadata): its bytes go
            # on the first of them only, or the log grows with the square of the keys
            if diag.fix is not None:
                fix_key = (diag.fix.path, diag.fix.start, diag.fix.end, diag.fix.description)
                if fix_key not in fixes_shown:
                    fixes_shown.add(fix_key)
                    entry["fixes"] = [_fix(diag.fix, _location(diag.fix.path, root))]
            return entry

        return make

    # made while the text is written: never all alive at once
    results = Rows(result.diagnostics, results_maker, per_pass=True)
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {**_DRIVER, "rules": rules}},
                "originalUriBaseIds": {SRCROOT: {"uri": _directory_uri(root)}},
                "columnKind": "unicodeCodePoints",
                "results": results,
                "properties": {"targets": list(result.targets)},
            }
        ],
    }


def failed_run(message: str, exit_code: int) -> dict:
    """A log for a run that ended before it checked anything (a PATH that does not exist, a
    bad configuration): no results, ``executionSuccessful: false`` and the reason, so a CI
    step that uploads the log shows the failure instead of failing on a missing file."""
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": dict(_DRIVER)},
                "invocations": [
                    {
                        "executionSuccessful": False,
                        "exitCode": exit_code,
                        "toolExecutionNotifications": [
                            {"level": "error", "message": {"text": message}}
                        ],
                    }
                ],
                "results": [],
            }
        ],
    }


def write(result, options: ReportOptions, sink: Sink) -> None:
    write_indented(document(result, options), sink)
    sink("\n")


def render(result, options: ReportOptions) -> str:
    parts: list[str] = []
    write(result, options, parts.append)
    return "".join(parts)
