"""Lint the real-world corpus and report what a reviewer needs to judge the findings.

Runs one skillcheck command over the corpus built by ``build.py`` (``--format json``,
``--isolated``; ``--no-cache`` on request) and prints:

- timing of the lint: wall, CPU (user + system of the whole process tree) and peak RSS (the
  largest process, from ``wait4``, and the summed tree, sampled from /proc);
- per-rule counts by severity;
- per repository: skills, skills with errors, and the diagnostics by severity;
- a reproducible random sample (``--seed``, ``--sample N`` per rule, spread over repositories)
  of diagnostics with the source line and two lines of context each side.

``--json FILE`` writes every diagnostic (the skillcheck report plus the run's facts) for a later
``--compare FILE``, which prints per-rule deltas; ``--sample-md FILE`` writes the sample as
Markdown with a verdict line per diagnostic, ready to judge for REVIEW.md. ``--from-json FILE``
reports on a saved run without linting again.

    python bench/realworld/run.py --no-cache --json before.json --sample-md sample.md
    python bench/realworld/run.py --skillcheck '/path/venv/bin/skillcheck' --compare before.json
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import random
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE / "corpus"
SEVERITIES = ("error", "warning", "info")
CONTEXT = 2  # lines each side of a sampled diagnostic
MAX_LINE = 240  # characters of a context line shown

Diagnostic = dict[str, Any]


def _bench_run() -> Any:
    """bench/run.py as a module (its /proc sampler); it shares this file's name, hence by path."""
    spec = importlib.util.spec_from_file_location("_bench_run", HERE.parent / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(HERE.parent))
    sys.modules["_bench_run"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


# --------------------------------------------------------------------------- running


def lint(
    corpus: Path, command: Sequence[str], extra: Sequence[str], *, timeout: float = 3600.0
) -> tuple[dict[str, Any], dict[str, float]]:
    """Run ``command lint`` on the corpus; (its JSON report, timing facts)."""
    tree_rss_mb = _bench_run().tree_rss_mb
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [*command, "lint", "--isolated", "--format", "json", "-o", str(out), *extra, "."]
        err_path = Path(tmp) / "stderr"
        with err_path.open("wb") as err:
            start = time.perf_counter()
            try:
                proc = subprocess.Popen(
                    cmd, cwd=corpus, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err
                )
            except OSError as exc:
                raise SystemExit(f"run.py: cannot run {shlex.join(cmd)}: {exc}") from exc
            peak_tree = [0.0]
            done = threading.Event()

            def sample() -> None:
                while not done.is_set():
                    peak_tree[0] = max(peak_tree[0], tree_rss_mb(proc.pid))
                    done.wait(0.05)

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            killer = threading.Timer(timeout, proc.kill)
            killer.start()
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                killer.cancel()
                done.set()
                sampler.join()
            wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        if code not in (0, 1) or not out.exists():
            tail = err_path.read_bytes()[-1500:].decode("utf-8", "replace").strip()
            raise SystemExit(f"run.py: {shlex.join(cmd)} exited {code}; stderr: {tail}")
        report = json.loads(out.read_bytes())
    # ru_maxrss: KiB on Linux, bytes on macOS.
    scale = 1 / 1e6 if sys.platform == "darwin" else 1024 / 1e6
    timing = {
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "peak_rss_mb": round(usage.ru_maxrss * scale, 1),
        "peak_tree_rss_mb": round(peak_tree[0], 1),
        "exit_code": code,
    }
    return report, timing


# --------------------------------------------------------------------------- pure functions


def repo_of(path: str) -> str:
    """The corpus directory (``owner__repo``) a report path belongs to."""
    parts = Path(path).parts
    return parts[0] if parts and parts[0] != "." else (parts[1] if len(parts) > 1 else "")


def rule_counts(diags: Iterable[Diagnostic]) -> dict[str, Counter[str]]:
    """code -> Counter(severity -> count)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for d in diags:
        counts[d["code"]][d["severity"]] += 1
    return dict(counts)


def repo_table(report: dict[str, Any]) -> list[tuple[str, int, int, Counter[str]]]:
    """(repo, skills, skills with errors, diagnostics by severity) per repository."""
    skills: Counter[str] = Counter()
    failing: Counter[str] = Counter()
    for s in report["skills"]:
        repo = repo_of(s["path"])
        skills[repo] += 1
        failing[repo] += s["counts"]["error"] > 0
    by_sev: dict[str, Counter[str]] = defaultdict(Counter)
    for d in report["diagnostics"]:
        by_sev[repo_of(d["path"])][d["severity"]] += 1
    repos = sorted(set(skills) | set(by_sev))
    return [(r, skills[r], failing[r], by_sev[r]) for r in repos]


def stratified_sample(
    diags: Sequence[Diagnostic], per_rule: int, seed: int, severities: Sequence[str] = SEVERITIES
) -> dict[tuple[str, str], list[Diagnostic]]:
    """Up to ``per_rule`` diagnostics per (rule, severity), spread round-robin over repositories.

    Deterministic for a given seed and input: groups and their members are sorted before the
    seeded shuffle, so the order of the report does not matter.
    """
    rng = random.Random(seed)
    groups: dict[tuple[str, str], dict[str, list[Diagnostic]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for d in diags:
        if d["severity"] in severities:
            groups[(d["code"], d["severity"])][repo_of(d["path"])].append(d)
    chosen: dict[tuple[str, str], list[Diagnostic]] = {}
    for key in sorted(groups):
        by_repo = groups[key]
        repos = sorted(by_repo)
        rng.shuffle(repos)
        pools = []
        for r in repos:
            pool = sorted(by_repo[r], key=_sort_key)
            rng.shuffle(pool)
            pools.append(pool)
        picked: list[Diagnostic] = []
        while len(picked) < per_rule and any(pools):
            for pool in pools:
                if pool and len(picked) < per_rule:
                    picked.append(pool.pop())
        chosen[key] = picked
    return chosen


def _sort_key(d: Diagnostic) -> tuple[str, int, int, str]:
    return (d["path"], d.get("line") or 0, d.get("column") or 0, d["message"])


def context(corpus: Path, d: Diagnostic, lines: int = CONTEXT) -> list[tuple[int, str]]:
    """(line number, text) around the diagnostic's line; empty when the file cannot be read."""
    path = corpus / d["path"]
    line = d.get("line") or 0
    if line < 1 or not path.is_file():
        return []
    try:
        with path.open("rb") as f:
            head = f.read(8_000_000)
    except OSError:
        return []
    text = head.decode("utf-8", "replace").splitlines()
    lo, hi = max(1, line - lines), min(len(text), line + lines)
    out = []
    for n in range(lo, hi + 1):
        shown = text[n - 1]
        if len(shown) > MAX_LINE:
            shown = shown[:MAX_LINE] + " …"
        out.append((n, shown))
    return out


def allocate(available: dict[str, int], total: int) -> dict[str, int]:
    """Split ``total`` picks over rules in proportion to the square root of their counts.

    Every rule with findings gets at least one; no rule gets more than it has; what a small rule
    cannot take goes to the others. Square roots keep one huge rule from taking the sample while
    still giving it the most picks.
    """
    share = {k: 0 for k, n in available.items() if n > 0}
    if total >= len(share):
        share = dict.fromkeys(share, 1)
    left = min(total, sum(available.values())) - sum(share.values())
    while left > 0:
        open_ = [k for k in share if share[k] < available[k]]
        weights = {k: available[k] ** 0.5 for k in open_}
        scale = left / sum(weights.values())
        given = 0
        for k in sorted(open_, key=lambda k: (-weights[k], k)):
            want = max(1, round(weights[k] * scale))
            take = min(want, available[k] - share[k], left - given)
            share[k] += take
            given += take
        left -= given
        if given == 0:
            break
    return share


def review_sample(
    diags: Sequence[Diagnostic], per_severity: int, seed: int, severities: Sequence[str]
) -> dict[tuple[str, str], list[Diagnostic]]:
    """A stratified review sample: ``per_severity`` diagnostics of each severity, over rules."""
    out: dict[tuple[str, str], list[Diagnostic]] = {}
    for sev in severities:
        pool = [d for d in diags if d["severity"] == sev]
        quota = allocate(Counter(d["code"] for d in pool), per_severity)
        for code, n in sorted(quota.items()):
            picked = stratified_sample([d for d in pool if d["code"] == code], n, seed, (sev,))
            out.update(picked)
    return out


def score(markdown: str) -> dict[tuple[str, str], tuple[int, int]]:
    """(rule, severity) -> (true, judged) from a judged sample (``verdict: true|false …`` lines)."""
    result: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    key: tuple[str, str] | None = None
    for line in markdown.splitlines():
        if line.startswith("## "):
            head = line[3:].split()
            key = (head[0], head[-2]) if len(head) >= 3 else None
        elif line.startswith("verdict:") and key is not None:
            word = line[len("verdict:") :].strip().split(" ", 1)[0].lower().rstrip(".,;:—-")
            if word in ("true", "false"):
                result[key][0] += word == "true"
                result[key][1] += 1
    return {k: (v[0], v[1]) for k, v in result.items()}


def render_score(scores: dict[tuple[str, str], tuple[int, int]]) -> str:
    lines = [
        "| rule | severity | judged | true | false | precision |",
        "|---|---|---:|---:|---:|---:|",
    ]
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (code, sev), (good, n) in sorted(scores.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        lines.append(f"| {code} | {sev} | {n} | {good} | {n - good} | {100 * good / n:.0f} % |")
        totals[sev][0] += good
        totals[sev][1] += n
    lines += ["", "| severity | judged | true | precision |", "|---|---:|---:|---:|"]
    for sev in SEVERITIES:
        if sev in totals:
            good, n = totals[sev]
            lines.append(f"| {sev} | {n} | {good} | {100 * good / n:.1f} % |")
    return "\n".join(lines) + "\n"


def compare(
    old: Sequence[Diagnostic], new: Sequence[Diagnostic]
) -> list[tuple[str, str, int, int, int, int]]:
    """(rule, severity, old count, new count, gone, appeared) for every rule/severity seen."""

    def key(d: Diagnostic) -> tuple[str, str, str, int, str]:
        return (d["code"], d["severity"], d["path"], d.get("line") or 0, d["message"])

    old_keys, new_keys = Counter(map(key, old)), Counter(map(key, new))
    rows = []
    pairs = {(k[0], k[1]) for k in old_keys} | {(k[0], k[1]) for k in new_keys}
    for code, sev in sorted(pairs):
        o = Counter({k: v for k, v in old_keys.items() if k[:2] == (code, sev)})
        n = Counter({k: v for k, v in new_keys.items() if k[:2] == (code, sev)})
        rows.append(
            (
                code,
                sev,
                sum(o.values()),
                sum(n.values()),
                sum((o - n).values()),
                sum((n - o).values()),
            )
        )
    return rows


# --------------------------------------------------------------------------- rendering


def render_text(
    report: dict[str, Any],
    meta: dict[str, Any],
    sample: dict[tuple[str, str], list[Diagnostic]],
    corpus: Path,
) -> str:
    diags = report["diagnostics"]
    lines = [f"# {meta['command']} on {meta['corpus']} ({meta['date']})", ""]
    t = meta.get("timing")
    if t:
        lines.append(
            f"timing: wall {t['wall_s']} s, CPU {t['cpu_s']} s, peak RSS {t['peak_rss_mb']} MB "
            f"(largest process), {t['peak_tree_rss_mb']} MB (process tree), exit {t['exit_code']}"
        )
    sev_total = Counter(d["severity"] for d in diags)
    failing = sum(1 for s in report["skills"] if s["counts"]["error"] > 0)
    lines.append(
        f"skills: {len(report['skills'])}, with errors: {failing}; diagnostics: {len(diags)} "
        + " ".join(f"{s} {sev_total[s]}" for s in SEVERITIES)
    )
    lines += ["", "## Per rule", f"{'rule':8} {'slug':34} {'error':>7} {'warning':>8} {'info':>7}"]
    slugs = {d["code"]: d["slug"] for d in diags}
    for code, c in sorted(rule_counts(diags).items()):
        lines.append(
            f"{code:8} {slugs[code][:34]:34} {c['error']:7} {c['warning']:8} {c['info']:7}"
        )
    lines += [
        "",
        "## Per repository",
        f"{'repository':52} {'skills':>6} {'failing':>7} {'error':>7} {'warning':>8} {'info':>7}",
    ]
    for repo, n, bad, c in repo_table(report):
        lines.append(f"{repo:52} {n:6} {bad:7} {c['error']:7} {c['warning']:8} {c['info']:7}")
    if sample:
        lines += ["", "## Sample"]
        for (code, sev), picked in sample.items():
            lines.append(f"\n### {code} {sev} ({len(picked)})")
            for d in picked:
                lines.append(f"{d['path']}:{d.get('line')}:{d.get('column')}: {d['message']}")
                for n, text in context(corpus, d):
                    mark = ">" if n == d.get("line") else " "
                    lines.append(f"   {mark}{n:5} | {text}")
    return "\n".join(lines) + "\n"


def render_markdown(
    sample: dict[tuple[str, str], list[Diagnostic]], corpus: Path, meta: dict[str, Any]
) -> str:
    out = [
        "# Sample of diagnostics for review",
        "",
        f"{meta['command']} on `{meta['corpus']}`, seed {meta['seed']}, {meta['date']}.",
        "Mark each `verdict:` line `true` or `false` with a one-line reason.",
    ]
    n = 0
    for (code, sev), picked in sample.items():
        if not picked:
            continue
        out += ["", f"## {code} {picked[0]['slug'] if picked else ''} — {sev} ({len(picked)})"]
        for d in picked:
            n += 1
            out += [
                "",
                f"**{n}.** `{d['path']}:{d.get('line')}:{d.get('column')}` — {d['message']}",
            ]
            ctx = context(corpus, d)
            if ctx:
                out.append("```text")
                for num, text in ctx:
                    mark = ">" if num == d.get("line") else " "
                    out.append(f"{mark}{num:5} | {text.replace('```', '`‵`')}")
                out.append("```")
            out.append("verdict: ")
    return "\n".join(out) + "\n"


def render_compare(rows: list[tuple[str, str, int, int, int, int]]) -> str:
    lines = [
        "## Compared with the saved run",
        f"{'rule':8} {'severity':8} {'old':>7} {'new':>7} {'delta':>7} {'gone':>7} {'new-only':>8}",
    ]
    for code, sev, o, n, gone, appeared in rows:
        lines.append(f"{code:8} {sev:8} {o:7} {n:7} {n - o:+7} {gone:7} {appeared:8}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help=f"default {DEFAULT_CORPUS}")
    ap.add_argument(
        "--skillcheck", default="skillcheck", help="command to run (default: skillcheck on PATH)"
    )
    ap.add_argument("--no-cache", action="store_true", help="pass --no-cache")
    ap.add_argument(
        "--lint-arg", action="append", default=[], help="extra argument for lint (repeatable)"
    )
    ap.add_argument(
        "--from-json", type=Path, help="report on a saved --json dump instead of linting"
    )
    ap.add_argument("--json", type=Path, help="write every diagnostic and the run's facts here")
    ap.add_argument("--compare", type=Path, help="a saved --json dump: print per-rule deltas")
    ap.add_argument(
        "--sample", type=int, default=5, help="diagnostics per rule and severity (0: none)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--severity", default="error,warning,info", help="severities to sample")
    ap.add_argument("--sample-md", type=Path, help="write the sample as Markdown for judging")
    ap.add_argument(
        "--review",
        type=int,
        metavar="N",
        help="with --sample-md: N diagnostics per severity spread over rules (sqrt of counts)",
    )
    ap.add_argument("--score", type=Path, help="a judged sample: print precision per rule; no lint")
    ap.add_argument("-o", "--output", type=Path, help="write the text report here, not stdout")
    args = ap.parse_args(argv)

    corpus = args.corpus.resolve()
    if args.score:
        sys.stdout.write(render_score(score(args.score.read_text(encoding="utf-8"))))
        return 0
    if args.from_json:
        saved = json.loads(args.from_json.read_text(encoding="utf-8"))
        report, meta = saved["report"], saved["meta"]
    else:
        if not corpus.is_dir():
            print(
                f"run.py: no corpus at {corpus}; build it with bench/realworld/build.py",
                file=sys.stderr,
            )
            return 2
        command = shlex.split(args.skillcheck)
        extra = (["--no-cache"] if args.no_cache else []) + args.lint_arg
        report, timing = lint(corpus, command, extra)
        version = subprocess.run(
            [*command, "--version"], capture_output=True, text=True
        ).stdout.strip()
        meta = {
            "command": shlex.join(
                [*command, "lint", "--isolated", "--format", "json", *extra, "."]
            ),
            "version": version,
            "corpus": str(corpus),
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "timing": timing,
        }
    meta["seed"] = args.seed
    if args.json:
        tmp = args.json.with_suffix(".tmp")
        tmp.write_text(json.dumps({"meta": meta, "report": report}) + "\n", encoding="utf-8")
        tmp.replace(args.json)
    severities = [s.strip() for s in args.severity.split(",") if s.strip()]
    sample = (
        stratified_sample(report["diagnostics"], args.sample, args.seed, severities)
        if args.sample
        else {}
    )
    text = render_text(report, meta, sample, corpus)
    if args.compare:
        old = json.loads(args.compare.read_text(encoding="utf-8"))["report"]["diagnostics"]
        text += "\n" + render_compare(compare(old, report["diagnostics"]))
    if args.output:
        args.output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if args.sample_md:
        if args.review:
            sample = review_sample(report["diagnostics"], args.review, args.seed, severities)
        args.sample_md.write_text(render_markdown(sample, corpus, meta), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
