"""JUnit XML, as CI servers (GitLab, Jenkins, Azure Pipelines) display test reports.

One ``<testcase>`` per skill: ``classname`` is the folder holding the skill and ``name`` the
skill's directory name (both relative to the current directory), ``file`` its SKILL.md.
A skill with error-level diagnostics fails: its one ``<failure>`` has ``type`` = the rule
codes, ``message`` = the messages, and one ``CODE [severity] path:line:col: message (slug)``
line (and a help line) per diagnostic. ``tests``, ``failures`` and ``errors`` count test
cases, so they add up: ``failures`` is the number of failing skills.
Warnings and info do not fail a skill: they are listed in the test case's ``<system-out>``,
one diagnostic per line, unless the run is ``--strict``, where every finding is a failure
(as the exit code says). Diagnostics that belong to no skill (a directory that could not be
searched) form a test case of their own.

The document is built with xml.etree, which escapes markup; characters XML 1.0 cannot
carry at all are made visible (``safe``) or dropped, so no skill content can break it. In
text nodes, line breaks inside skill content show as ``\\n``, and every line starts with
text of ours, never a skill's: a CI log that shows the report must not read a line starting
with ``::`` as a workflow command.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from skillcheck import __version__
from skillcheck.report import Chunks, ReportOptions, Sink, rel, safe
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.skill import Diagnostic, Severity

# what XML 1.0 allows: tab, LF, CR, U+0020–U+D7FF, U+E000–U+FFFD, U+10000 and above
_NOT_XML = LazyPattern("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml(text: str) -> str:
    if text.isprintable():
        return text  # nothing to make visible or drop: see safe (_NOT_XML matches Cc, Cs, Cn)
    return _NOT_XML.sub("", safe(text))


def _value(text: str) -> str:
    """Skill content on one line of a text node."""
    return _xml(text).replace("\n", "\\n")


def _line(diag: Diagnostic, options: ReportOptions) -> str:
    text = (
        f"{diag.code} [{diag.severity}] {_value(rel(diag.path, options.cwd))}:{diag.line}:"
        f"{diag.column}: {_value(diag.message)} ({diag.slug})"
    )
    return f"{text}\nhelp: {_value(diag.help)}" if diag.help else text


def _fails(diagnostics: list[Diagnostic], options: ReportOptions) -> bool:
    return any(d.severity is Severity.ERROR or options.strict for d in diagnostics)


def _testcase(
    classname: str,
    name: str,
    file: str | None,
    diagnostics: list[Diagnostic],
    options: ReportOptions,
) -> ET.Element:
    """One test case.

    A failing case holds one ``<failure>`` whatever the number of findings (the JUnit schema
    allows one, and ``failures`` counts test cases): ``type`` lists the codes, ``message``
    the messages, the text one line per finding."""
    case = ET.Element("testcase", classname=_xml(classname), name=_xml(name))
    if file is not None:
        case.set("file", _xml(file))
    failing: list[Diagnostic] = []
    passed: list[str] = []
    for diag in diagnostics:
        if diag.severity is Severity.ERROR or options.strict:
            failing.append(diag)
        else:
            passed.append(_line(diag, options))
    if failing:
        codes = list(dict.fromkeys(d.code for d in failing))
        if len(failing) == 1:
            message = f"{failing[0].message} ({failing[0].slug})"
        else:
            message = f"{len(failing)} findings: " + "; ".join(
                f"{d.code} {d.message} ({d.slug})" for d in failing
            )
        failure = ET.SubElement(case, "failure", type=" ".join(codes), message=_xml(message))
        failure.text = "\n".join(_line(d, options) for d in failing)
    if passed:
        ET.SubElement(case, "system-out").text = "\n".join(passed)
    return case


def write(result, options: ReportOptions, sink: Sink) -> None:
    """The document ``ET.indent`` and ``ET.tostring`` make of the whole tree, written one
    test case at a time (a tree of 18,000 skills' cases took 150 MB)."""
    by_skill: dict = {}
    orphans: list[Diagnostic] = []
    for diag in result.diagnostics:
        if diag.skill is None:
            orphans.append(diag)
        else:
            by_skill.setdefault(diag.skill, []).append(diag)
    tests = len(result.skills) + bool(orphans)
    failures = sum(_fails(by_skill.get(s.root, []), options) for s in result.skills)
    failures += bool(orphans) and _fails(orphans, options)
    # the tree without its test cases, a marker where they go, indented as a whole: the text
    # around the marker is the document's start and end
    suites = ET.Element("testsuites", name="skillcheck")
    suite = ET.SubElement(suites, "testsuite", name="skillcheck")
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="skillcheck.version", value=__version__)
    ET.SubElement(properties, "property", name="targets", value=",".join(result.targets))
    if tests:
        ET.SubElement(suite, "cases")
    for element in (suites, suite):
        element.set("tests", str(tests))
        element.set("failures", str(failures))
        element.set("errors", "0")
        element.set("skipped", "0")
    ET.indent(suites)
    head, marker, tail = ET.tostring(suites, "unicode").partition("<cases />")
    out = Chunks(sink)
    out.add('<?xml version="1.0" encoding="UTF-8"?>\n' + head)
    between = ""  # each case after the first: the indentation ET.indent gives a case's tail
    for skill in result.skills:
        path = rel(skill.root, options.cwd)
        folder = rel(skill.root.parent, options.cwd)
        file = rel(skill.skill_md, options.cwd) if skill.skill_md is not None else None
        diagnostics = by_skill.get(skill.root, [])
        case = _testcase(folder, skill.root.name or path, file, diagnostics, options)
        out.add(between + _case_text(case))
        between = "\n    "
    if orphans:
        out.add(between + _case_text(_testcase("skillcheck", "discovery", None, orphans, options)))
    out.add((tail if marker else "") + "\n")
    out.flush()


def _case_text(case: ET.Element) -> str:
    ET.indent(case, level=2)  # a test case is two levels down: testsuites, testsuite
    return ET.tostring(case, "unicode")


def render(result, options: ReportOptions) -> str:
    parts: list[str] = []
    write(result, options, parts.append)
    return "".join(parts)
