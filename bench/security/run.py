"""Malicious-skill detection: skillcheck and a peer scanner, side by side, in one run.

Reads the evaluation set ``build.py`` wrote (``OUT/index.csv``), runs ``skillcheck lint`` on
it and on the real-world corpus (the benign control), and in the same run the peer scanner
``cisco-ai-skill-scanner`` (its default, static analyzers: YARA/regex signatures, no LLM, no
behavioral analysis, no VirusTotal) inside ``unshare -n`` so it cannot reach the network.
Nothing in the samples is executed, imported or followed: both tools only read text.

Prints, for each tool:

- recall per source and per attack category: the share of malicious skills with a security
  finding at error level, and with a finding at any level (warnings included);
- the false-positive rate on the real-world corpus: skills with a security finding at error
  level / all skills, overall and per rule, and the list of those skills.

Levels of the peer: its CRITICAL and HIGH findings count as errors, MEDIUM and LOW as
warnings (INFO is ignored), as its own ``--fail-on-findings`` gate does.

    python bench/security/run.py --set /work/malbench/skills --split trainval \
        --corpus /work/realworld-corpus --json /tmp/security-trainval.json
    python bench/security/run.py --set /work/malbench/skills --split test ...   # once
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

SPLITS = {"trainval": ("train", "validation"), "test": ("test",)}
PEER_ERROR = {"CRITICAL", "HIGH"}
PEER_WARNING = {"MEDIUM", "LOW"}


def security_codes(skillcheck: Sequence[str]) -> list[str]:
    """The codes of skillcheck's security rules (those SARIF ranks with a security-severity)."""
    out = subprocess.run(
        [*skillcheck, "rules", "--format", "json"], capture_output=True, text=True, check=True
    ).stdout
    return [r["code"] for r in json.loads(out) if r.get("security_severity") is not None]


def run_skillcheck(
    skillcheck: Sequence[str], roots: Sequence[Path], codes: Sequence[str]
) -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="security-bench-") as tmp:
        report = Path(tmp) / "report.json"
        cmd = [
            *skillcheck,
            "lint",
            "--isolated",
            "--format",
            "json",
            "--select",
            ",".join(codes),
            "-o",
            str(report),
            *map(str, roots),
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if proc.returncode not in (0, 1):
            raise SystemExit(
                f"run.py: skillcheck failed ({proc.returncode}): {proc.stderr[-2000:]}"
            )
        diagnostics: list[dict[str, Any]] = json.loads(report.read_text())["diagnostics"]
        return diagnostics


def run_peer(peer: str, root: Path, cache: Path | None = None) -> list[dict[str, Any]]:
    """The peer's per-skill results for every skill under ``root``, offline.

    With ``cache``, its report for ``root`` is kept there (``<cache>/<root name>.json``) and
    read back instead of scanning again: the peer takes minutes per hundred skills."""
    if cache is not None:
        saved = cache / f"{root.name}.json"
        if saved.exists():
            cached: list[dict[str, Any]] = json.loads(saved.read_text())["results"]
            return cached
        results = run_peer(peer, root)
        cache.mkdir(parents=True, exist_ok=True)
        saved.write_text(json.dumps({"root": str(root), "results": results}))
        return results
    with tempfile.TemporaryDirectory(prefix="security-peer-") as tmp:
        out = Path(tmp) / "peer.json"
        cmd = ["unshare", "-n", peer, "scan-all", str(root), "--recursive", "--format", "json"]
        cmd += ["--output-json", str(out)]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=tmp)
        if not out.exists() and "No skills found" in proc.stdout + proc.stderr:
            return []  # the peer recognises none of them as a skill: nothing it flags
        if not out.exists():
            raise SystemExit(
                f"run.py: the peer wrote no report ({proc.returncode}): {proc.stderr[-2000:]}"
            )
        results: list[dict[str, Any]] = json.loads(out.read_text())["results"]
        return results


def owner(path: str, dirs: Sequence[str]) -> str | None:
    """The evaluation directory holding ``path`` (the longest prefix)."""
    best = None
    for d in dirs:
        if (path == d or path.startswith(d + "/")) and (best is None or len(d) > len(best)):
            best = d
    return best


def levels_skillcheck(
    diags: Iterable[dict[str, Any]], dirs: Sequence[str]
) -> dict[str, dict[str, set[str]]]:
    """dir -> {"error": codes, "any": codes} of its security findings."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: {"error": set(), "any": set()})
    for diag in diags:
        d = owner(diag["path"], dirs)
        if d is None:
            continue
        if diag["severity"] == "error":
            found[d]["error"].add(diag["code"])
        if diag["severity"] in ("error", "warning"):
            found[d]["any"].add(diag["code"])
    return found


def levels_peer(
    results: Iterable[dict[str, Any]], dirs: Sequence[str]
) -> dict[str, dict[str, set[str]]]:
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: {"error": set(), "any": set()})
    for result in results:
        d = owner(str(Path(result["skill_path"]).resolve()), dirs)
        if d is None:
            continue
        for finding in result.get("findings", []):
            severity = finding.get("severity", "")
            if severity in PEER_ERROR:
                found[d]["error"].add(finding["rule_id"])
            if severity in PEER_ERROR | PEER_WARNING:
                found[d]["any"].add(finding["rule_id"])
    return found


def pct(n: int, d: int) -> str:
    return f"{n}/{d} ({100.0 * n / d:.1f} %)" if d else "0/0"


def recall_table(
    rows: list[dict[str, str]], tools: dict[str, dict[str, dict[str, set[str]]]]
) -> list[str]:
    lines: list[str] = []
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        groups[f"source {row['source']}"].append(row)
        for category in row["categories"].split(";"):
            groups[f"category {category}"].append(row)
    groups["ALL"] = rows
    header = f"{'group':48} " + " ".join(f"{t + ' err':>18} {t + ' any':>18}" for t in tools)
    lines.append(header)
    for name in sorted(groups, key=lambda g: (g == "ALL", g)):
        members = groups[name]
        cells = []
        for found in tools.values():
            err = sum(1 for r in members if found.get(r["dir"], {}).get("error"))
            any_ = sum(1 for r in members if found.get(r["dir"], {}).get("any"))
            cells.append(f"{pct(err, len(members)):>18} {pct(any_, len(members)):>18}")
        lines.append(f"{name:48} " + " ".join(cells))
    return lines


def corpus_dirs(corpus: Path) -> list[str]:
    return sorted(str(p.parent.resolve()) for p in corpus.rglob("SKILL.md") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", type=Path, required=True, help="build.py's output folder")
    parser.add_argument("--split", choices=sorted(SPLITS), required=True)
    parser.add_argument("--corpus", type=Path, help="the real-world corpus (benign control)")
    parser.add_argument("--skillcheck", default="skillcheck", help="the skillcheck command")
    parser.add_argument("--peer", default=shutil.which("skill-scanner"), help="skill-scanner")
    parser.add_argument("--no-peer", action="store_true", help="skillcheck only")
    parser.add_argument("--json", type=Path, help="write every per-skill result here")
    parser.add_argument("--peer-cache", type=Path, help="keep/reuse the peer's reports here")
    parser.add_argument("--peer-only", action="store_true", help="run the peer, print nothing")
    parser.add_argument(
        "--no-peer-corpus", action="store_true", help="skip the peer on the corpus (hours)"
    )
    args = parser.parse_args(argv)
    skillcheck = args.skillcheck.split()
    codes = security_codes(skillcheck)
    with (args.set / "index.csv").open() as handle:
        rows = [r for r in csv.DictReader(handle) if r["split"] in SPLITS[args.split]]
    for row in rows:
        row["dir"] = str(Path(row["dir"]).resolve())
    dirs = [r["dir"] for r in rows]
    roots = sorted({Path(d).parent for d in dirs})
    tools: dict[str, dict[str, dict[str, set[str]]]] = {}
    timing: dict[str, float] = {}
    if args.peer_only:  # fill the cache (e.g. in the background), look at nothing
        for root in [*roots, *([args.corpus.resolve()] if args.corpus else [])]:
            run_peer(args.peer, root, args.peer_cache)
        return 0
    started = time.perf_counter()
    tools["skillcheck"] = levels_skillcheck(run_skillcheck(skillcheck, roots, codes), dirs)
    timing["skillcheck set"] = time.perf_counter() - started
    use_peer = not args.no_peer and args.peer
    if use_peer:
        started = time.perf_counter()
        results: list[dict[str, Any]] = []
        for root in roots:
            results += run_peer(args.peer, root, args.peer_cache)
        tools["peer"] = levels_peer(results, dirs)
        timing["peer set"] = time.perf_counter() - started
    print(f"# malicious skills, split {args.split}: {len(rows)} skills from {len(roots)} sources")
    print(f"# skillcheck security rules: {' '.join(codes)}")
    print("\n".join(recall_table(rows, tools)))
    report: dict[str, Any] = {
        "split": args.split,
        "codes": codes,
        "malicious": {
            tool: {
                r["benchmark_id"]: {k: sorted(v) for k, v in found.get(r["dir"], {}).items()}
                for r in rows
            }
            for tool, found in tools.items()
        },
    }
    if args.corpus is not None:
        cdirs = corpus_dirs(args.corpus)
        benign: dict[str, dict[str, dict[str, set[str]]]] = {}
        started = time.perf_counter()
        benign["skillcheck"] = levels_skillcheck(
            run_skillcheck(skillcheck, [args.corpus.resolve()], codes), cdirs
        )
        timing["skillcheck corpus"] = time.perf_counter() - started
        if use_peer and not args.no_peer_corpus:
            started = time.perf_counter()
            benign["peer"] = levels_peer(
                run_peer(args.peer, args.corpus.resolve(), args.peer_cache), cdirs
            )
            timing["peer corpus"] = time.perf_counter() - started
        print(f"\n# real-world corpus (benign control): {len(cdirs)} skills")
        for tool, found in benign.items():
            flagged = sorted(d for d in cdirs if found.get(d, {}).get("error"))
            warned = sorted(d for d in cdirs if found.get(d, {}).get("any"))
            print(
                f"{tool}: skills with a security error {pct(len(flagged), len(cdirs))};"
                f" with any security finding {pct(len(warned), len(cdirs))}"
            )
            per_rule: Counter[str] = Counter()
            for d in flagged:
                per_rule.update(found[d]["error"])
            for code, n in sorted(per_rule.items()):
                print(f"  {code:40} {pct(n, len(cdirs))}")
            for d in flagged:
                rel = str(Path(d).relative_to(args.corpus.resolve()))
                print(f"    {rel}  [{' '.join(sorted(found[d]['error']))}]")
        report["benign"] = {
            tool: {
                str(Path(d).relative_to(args.corpus.resolve())): {
                    k: sorted(v) for k, v in found[d].items()
                }
                for d in cdirs
                if d in found
            }
            for tool, found in benign.items()
        }
        report["corpus_skills"] = len(cdirs)
    print("\n# timing (s): " + ", ".join(f"{k} {v:.0f}" for k, v in timing.items()))
    report["timing"] = timing
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
