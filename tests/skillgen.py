"""Generate realistic skill trees for scale tests.

Each skill looks like the ones found in public repositories: a frontmatter with `license` and
`metadata`, a SKILL.md body of about 170 lines (overview, quick start with a code block,
a numbered workflow, tables, links to its references with anchors, troubleshooting), two
reference files (one long, with a table of contents), an executable script and a small
binary asset. Content is deterministic for a given seed.

``generate(..., findings=0.2)`` also seeds one defect into about that fraction of the skills
(a broken link, a missing anchor, an unknown frontmatter key or an over-long description), so a
benchmark lints a tree that has something to report. The default (0.0) writes exactly what it
always did: defects are drawn from a separate random stream.
"""

from __future__ import annotations

import random
from pathlib import Path

DOMAINS = [
    "invoice",
    "receipt",
    "contract",
    "payroll",
    "ledger",
    "budget",
    "forecast",
    "timesheet",
    "survey",
    "ticket",
    "changelog",
    "release",
    "migration",
    "schema",
    "backup",
    "incident",
    "runbook",
    "deployment",
    "container",
    "cluster",
    "pipeline",
    "dataset",
    "notebook",
    "dashboard",
    "metric",
    "alert",
    "log",
    "trace",
    "podcast",
    "subtitle",
    "slide",
    "poster",
    "newsletter",
    "recipe",
    "itinerary",
    "flashcard",
    "citation",
    "patent",
    "lease",
    "grant",
    "resume",
]
ACTIONS = [
    "audit",
    "convert",
    "summarize",
    "validate",
    "extract",
    "merge",
    "split",
    "translate",
    "redact",
    "classify",
    "index",
    "render",
    "compare",
    "archive",
    "schedule",
    "forecast",
    "annotate",
    "deduplicate",
    "normalize",
    "export",
]
FEATURES = [
    "OCR",
    "batch-mode",
    "checksums",
    "templates",
    "webhooks",
    "retries",
    "pagination",
    "caching",
    "diffing",
    "locales",
    "encryption",
    "signatures",
    "thumbnails",
    "charts",
    "footnotes",
    "glossaries",
    "rollback",
    "dry-run",
    "quotas",
    "throttling",
    "sampling",
    "tagging",
    "versioning",
    "watermarks",
    "streaming",
    "previews",
    "bookmarks",
]
FORMATS = ["CSV", "JSON", "YAML", "XML", "PDF", "DOCX", "XLSX", "Markdown", "HTML", "Parquet"]


def _sentence(rng: random.Random, topic: str) -> str:
    verbs = ("Check", "Record", "Compare", "Confirm", "Note", "Keep", "Report", "List")
    objects = ("the totals", "each field", "the source file", "every warning", "the page range")
    return (
        f"{rng.choice(verbs)} {rng.choice(objects)} for the {topic} and "
        f"{rng.choice(('stop', 'continue', 'ask the user'))} when "
        f"{rng.choice(('a value is missing', 'the format is unknown', 'a check fails'))}."
    )


def skill_files(index: int, rng: random.Random) -> tuple[str, dict[str, bytes | str]]:
    """The directory name and the files (relative path -> content) of one skill."""
    domain = DOMAINS[index % len(DOMAINS)]
    action = ACTIONS[(index // len(DOMAINS)) % len(ACTIONS)]
    name = f"{domain}-{action}-{index:04d}"
    fmt_in, fmt_out = rng.sample(FORMATS, 2)
    features = rng.sample(FEATURES, 3)
    script = f"{action}_{domain}.py"
    description = (
        f"{action.capitalize()}s {domain} files from {fmt_in} to {fmt_out} with "
        f"{features[0]}, {features[1]} and {features[2]}. Use when the user asks to "
        f"{action} a {domain} or mentions {fmt_in} {domain} exports."
    )
    title = f"{domain.capitalize()} {action}"
    lines = [
        "---",
        f"name: {name}",
        f"description: {description}",
        "license: Apache-2.0",
        "metadata:",
        f'  author: "team-{index % 17}"',
        f'  version: "1.{index % 9}"',
        "---",
        f"# {title}",
        "",
        "## Overview",
        "",
    ]
    for _ in range(6):
        lines.append(_sentence(rng, domain))
    lines += [
        "",
        "## Quick start",
        "",
        "```bash",
        f"python scripts/{script} --input data.{fmt_in.lower()} --output out.{fmt_out.lower()}",
        f"python scripts/{script} --check out.{fmt_out.lower()}",
        "```",
        "",
        "Start from [the template](assets/template.bin) and read [the API reference]"
        "(references/api.md) before changing options.",
        "",
        "## Workflow",
        "",
    ]
    for step in range(1, 41):
        detail = _sentence(rng, domain)
        if step % 10 == 0:
            detail += " See [the examples](references/examples.md#worked-examples)."
        lines.append(f"{step}. {detail}")
    lines += ["", "## Options", "", "| option | default | meaning |", "|---|---|---|"]
    for feature in FEATURES[:24]:
        lines.append(f"| `--{feature.lower()}` | off | enables {feature} for each {domain} |")
    lines += ["", "## Troubleshooting", ""]
    for problem in range(1, 31):
        lines.append(f"- Problem {problem}: {_sentence(rng, domain)}")
    lines += ["", "## Output", ""]
    while len(lines) < 168:
        lines.append(_sentence(rng, domain))
    lines += ["", f"Report the {domain} summary to the user in {fmt_out}."]
    skill_md = "\n".join(lines) + "\n"

    api = [f"# {title} API", "", "## Contents", ""]
    sections = ["Inputs", "Outputs", "Errors", "Limits"]
    api += [f"- [{s}](#{s.lower()})" for s in sections]
    for section in sections:
        api += ["", f"## {section}", ""]
        api += [_sentence(rng, domain) for _ in range(28)]
    examples = ["# Examples", "", "## Worked examples", ""]
    for n in range(1, 16):
        examples += [
            f"### Example {n}",
            "",
            "```",
            f"python scripts/{script} --input sample{n}.{fmt_in.lower()}",
            "```",
            "",
        ]
    code = (
        "#!/usr/bin/env python3\n"
        f'"""{title}: {fmt_in} to {fmt_out}."""\n\n'
        "import argparse\nimport sys\n\n\n"
        "def main() -> int:\n"
        "    parser = argparse.ArgumentParser()\n"
        '    parser.add_argument("--input")\n'
        '    parser.add_argument("--output")\n'
        '    parser.add_argument("--check")\n'
        "    args = parser.parse_args()\n"
        "    print(args, file=sys.stderr)\n"
        "    return 0\n\n\n"
        'if __name__ == "__main__":\n'
        "    sys.exit(main())\n"
    )
    asset = bytes([0x89, 0x50, 0x4E, 0x47, 0, 0, 0, 13]) + rng.randbytes(200)
    files: dict[str, bytes | str] = {
        "SKILL.md": skill_md,
        "references/api.md": "\n".join(api) + "\n",
        "references/examples.md": "\n".join(examples) + "\n",
        f"scripts/{script}": code,
        "assets/template.bin": asset,
    }
    return name, files


EXECUTABLE_DIR = "scripts/"
DEFECTS = ("broken-link", "missing-anchor", "unknown-key", "long-description")


def add_defect(files: dict[str, bytes | str], defect: str) -> None:
    """Seed one lint finding of kind ``defect`` (one of DEFECTS) into a skill's files."""
    text = files["SKILL.md"]
    assert isinstance(text, str)
    if defect == "broken-link":
        text += "\nSee [the changelog](references/changelog.md) for past releases.\n"
    elif defect == "missing-anchor":
        text += "\nSee [the limits](references/api.md#quotas-and-limits) before a batch run.\n"
    elif defect == "unknown-key":
        text = text.replace(
            "license: Apache-2.0\n", "license: Apache-2.0\nwebsite: https://example.com/\n", 1
        )
    elif defect == "long-description":
        head, sep, rest = text.partition("\nlicense:")
        filler = " Handles every edge case the user may bring up, one by one, with care." * 16
        text = head + filler + sep + rest
    else:
        raise ValueError(f"unknown defect {defect!r}; expected one of {', '.join(DEFECTS)}")
    files["SKILL.md"] = text


def generate(root: Path, count: int, seed: int = 0, findings: float = 0.0) -> list[Path]:
    """Write ``count`` skills under ``root``; return their directories.

    ``findings`` is the fraction of skills (0.0-1.0) that get one defect from DEFECTS.
    """
    rng = random.Random(seed)
    # A separate stream, so the skills themselves do not depend on ``findings``.
    defects = random.Random(f"defects-{seed}")
    made = []
    for index in range(count):
        name, files = skill_files(index, rng)
        if findings and defects.random() < findings:
            add_defect(files, defects.choice(DEFECTS))
        skill = root / name
        for rel, content in files.items():
            path = skill / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, str):
                path.write_text(content, encoding="utf-8")
            else:
                path.write_bytes(content)
            if rel.startswith(EXECUTABLE_DIR):
                path.chmod(0o755)
        made.append(skill)
    return made
