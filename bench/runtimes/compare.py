"""Compare recorded runtime verdicts with skillcheck's per-target outcomes.

    python bench/runtimes/compare.py VERDICTS.json --base DIR [--markdown] [--skills-from list]

Runs `skillcheck lint --target all --format json` on the skills (the folder DIR, or the listed
skill directories), maps each runtime to its target (versions.json) and prints agreement:

- load level: the runtime loads the skill (listed) vs not (silently absent or refused);
  skillcheck `ok`/`degraded` vs `rejected`/`dropped`;
- fine level: runtime `ok` (loaded, offered to the model where the runtime says, and listed with
  the author's name and description where its output shows them), `degraded` (loaded, but not
  offered, or listed with another name, an empty or different description, or U+FFFD in it),
  `dropped` (absent, no message), `rejected` (refused with a message), against skillcheck's
  outcome of the same names.

Every disagreement is listed with the runtime's message and skillcheck's rule ids for the target.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VERSIONS = json.loads((HERE / "versions.json").read_text(encoding="utf-8"))
LOADS = {"ok": True, "degraded": True, "rejected": False, "dropped": False}


def target_of(runtime: str) -> str:
    return str(VERSIONS["runtimes"][runtime]["target"])


def model_opt_out(skill: Path) -> bool:
    """`disable-model-invocation: true`: not offering the skill to the model is intended."""
    try:
        head = (skill / "SKILL.md").read_bytes()[:20000].decode("utf-8", "replace")
    except OSError:
        return False
    pattern = r"^disable-model-invocation:\s*['\"]?(true|yes|on|1)\b"
    return re.search(pattern, head, re.M | re.I) is not None


def written(skill: Path) -> tuple[object, object, object] | None:
    """The name, description and `when_to_use` as the author wrote them (strict UTF-8,
    YAML), or None when the frontmatter cannot be read that way (then only what the runtime
    shows is judged)."""
    import yaml

    try:
        text = (skill / "SKILL.md").read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    text = text.lstrip("\ufeff").replace("\r\n", "\n")
    match = re.match(r"---\n(.*?)\n---[ \t]*(\n|$)", text, re.S)
    if not match:
        return None
    try:
        # every scalar as the text written: `description: 12345` is the text the author meant
        data = yaml.load(match.group(1), Loader=yaml.BaseLoader)
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None, None, None  # parses, but holds no fields
    return data.get("name"), data.get("description"), data.get("when_to_use")


def _flat(value: object) -> str:
    # line breaks count (a runtime that joins a multi-line description changes what the model
    # reads); the ends and CRLF do not
    return str(value).replace("\r\n", "\n").strip()


def _as_listed(description: str, when_to_use: object) -> set[str]:
    """What a listing of the author's text may show: the description, or (Claude Code) the
    description and `when_to_use` joined by " - "."""
    out = {_flat(description)}
    if isinstance(when_to_use, str) and when_to_use.strip():
        out.add(_flat(f"{description} - {when_to_use}"))
    return out


def shown_degraded(record: dict[str, Any], skill: Path) -> bool:
    """The runtime lists the skill with a name or description other than the author's."""
    shown = record.get("shown_description")
    if shown is None:
        return False
    if not str(shown).strip() or "\ufffd" in str(shown):
        return True
    author = written(skill)
    if author is None:
        return False
    name, description, when_to_use = author
    if not isinstance(description, str) or _flat(shown) not in _as_listed(description, when_to_use):
        return True
    listed = record.get("shown_name")
    return isinstance(name, str) and listed is not None and str(listed) != name.strip()


def runtime_fine(record: dict[str, Any], skill: Path) -> str | None:
    verdict = record["verdict"]
    if verdict == "loaded":
        if record.get("offered") is False and not model_opt_out(skill):
            return "degraded"
        return "degraded" if shown_degraded(record, skill) else "ok"
    return {"error": "rejected", "dropped": "dropped"}.get(verdict)


def lint(paths: list[Path]) -> dict[str, Any]:
    argv = [sys.executable, "-m", "skillcheck", "lint", "--isolated", "--no-cache"]
    # SK801 (two skills of one folder with one name) is left out: the harness puts skills
    # with the same name in different batches, so no runtime sees such a collision
    argv += ["--target", "all", "--format", "json", "--ignore", "SK801", *map(str, paths)]
    out = subprocess.run(argv, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"skillcheck failed: {out.stderr.strip()[:500]}")
    return dict(json.loads(out.stdout))


def outcomes(report: dict[str, Any], base: Path) -> dict[str, dict[str, Any]]:
    """skill id (path relative to base) -> {"outcomes": {...}, "rules": {target: [codes]}}."""
    found: dict[str, dict[str, Any]] = {}
    for skill in report["skills"]:
        sid = str(Path(skill["path"]).relative_to(base))
        found[sid] = {"outcomes": skill["outcomes"], "rules": {}}
    for diag in report["diagnostics"]:
        if not diag.get("skill"):
            continue
        sid = str(Path(diag["skill"]).relative_to(base))
        if sid not in found:
            continue
        for target in diag.get("targets") or []:
            codes = found[sid]["rules"].setdefault(target, [])
            if diag["code"] not in codes and diag["severity"] == "error":
                codes.append(diag["code"])
    return found


def compare(
    verdicts: dict[str, Any], ours: dict[str, dict[str, Any]], base: Path
) -> dict[str, Any]:
    tables: dict[str, Any] = {}
    for runtime, per_skill in verdicts["verdicts"].items():
        target = target_of(runtime)
        load_ok = fine_ok = n = 0
        rows = []
        for sid, record in sorted(per_skill.items()):
            if record["verdict"] == "unknown":
                continue
            mine = ours.get(sid)
            outcome = mine["outcomes"].get(target) if mine else "dropped"
            if outcome is None:
                continue
            n += 1
            theirs = runtime_fine(record, base / sid)
            load_same = (record["verdict"] == "loaded") == LOADS[outcome]
            fine_same = theirs == outcome
            load_ok += load_same
            fine_ok += fine_same
            if not fine_same:
                rows.append(
                    {
                        "skill": sid,
                        "runtime": theirs,
                        "skillcheck": outcome,
                        "level": "load" if not load_same else "fine",
                        "message": record.get("message", ""),
                        "rules": (mine or {}).get("rules", {}).get(target, []),
                    }
                )
        tables[runtime] = {
            "target": target,
            "version": verdicts["versions"][runtime],
            "skills": n,
            "load": load_ok,
            "fine": fine_ok,
            "disagreements": rows,
        }
    return tables


def markdown(tables: dict[str, Any]) -> str:
    lines = [
        "| runtime | version | target | skills | load level | fine level |",
        "|---|---|---|---|---|---|",
    ]
    for rt, t in tables.items():
        n = max(t["skills"], 1)
        lines.append(
            f"| {rt} | {t['version']} | `{t['target']}` | {t['skills']} | "
            f"{t['load']}/{t['skills']} ({100 * t['load'] / n:.1f} %) | "
            f"{t['fine']}/{t['skills']} ({100 * t['fine'] / n:.1f} %) |"
        )
    for rt, t in tables.items():
        if not t["disagreements"]:
            continue
        lines += ["", f"**{rt}** ({t['version']}) vs `{t['target']}`:", ""]
        lines += ["| skill | level | runtime | skillcheck | runtime's message | our rules |"]
        lines += ["|---|---|---|---|---|---|"]
        for row in t["disagreements"]:
            msg = re.sub(r"\s+", " ", row["message"]).replace("|", "\\|")[:160]
            lines.append(
                f"| `{row['skill']}` | {row['level']} | {row['runtime']} | {row['skillcheck']} "
                f"| {msg} | {' '.join(row['rules'])} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("verdicts", type=Path)
    ap.add_argument("--base", type=Path, required=True, help="skill ids are relative to this")
    ap.add_argument("--skills-from", type=Path, help="lint these skill dirs instead of --base")
    ap.add_argument(
        "--lint-report",
        type=Path,
        help="a saved `lint --target all --format json` of the whole corpus (a SKILL.md linked"
        " from elsewhere in its repository is then read as the runtimes read it)",
    )
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--json-out", type=Path)
    args = ap.parse_args(argv)
    verdicts = json.loads(args.verdicts.read_text(encoding="utf-8"))
    if args.skills_from:
        paths = [Path(x) for x in args.skills_from.read_text().split("\n") if x.strip()]
    else:
        paths = [args.base]
    report: dict[str, Any] = {"skills": [], "diagnostics": []}
    if args.lint_report:
        report = json.loads(args.lint_report.read_text(encoding="utf-8"))
        paths = []
    for i in range(0, len(paths), 200):  # keep argv short
        part = lint(paths[i : i + 200])
        report["skills"] += part["skills"]
        report["diagnostics"] += part["diagnostics"]
    tables = compare(verdicts, outcomes(report, args.base), args.base)
    if args.json_out:
        args.json_out.write_text(json.dumps(tables, indent=1) + "\n", encoding="utf-8")
    if args.markdown:
        print(markdown(tables), end="")
    else:
        for rt, t in tables.items():
            n = max(t["skills"], 1)
            print(
                f"{rt:12} {t['version']:10} vs {t['target']:12} n={t['skills']:5} "
                f"load {100 * t['load'] / n:5.1f} %  fine {100 * t['fine'] / n:5.1f} %"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
