"""Benchmark skillcheck at scale and print one table of figures.

Every figure is the median of several runs of the installed command in a subprocess (wall time
from spawn to exit, and peak RSS from ``wait4``), with min and max:

- cold lint of realistic skill trees (``--isolated``, all rules; ``--no-cache`` when the build
  has it), with agnix and the PyPI package also named skillcheck on the same tree when installed;
- warm re-lint with nothing changed, and re-lint after editing one skill (these measure the
  cache; a build without one simply re-runs cold, and the table says so);
- peak RSS of the largest process, and of the whole process tree (sampled from /proc);
- ``skillcheck --version`` start-up and linting one skill as pre-commit does;
- ``catalog`` and ``pack`` against ``tar czf`` of the same files.

Trees come from ``bench/generate.py`` and are cached between runs (``--cache-dir``).

    python bench/run.py --quick                        # 1,000 skills, 3 runs
    python bench/run.py                                # 1,000 and 10,000 skills
    python bench/run.py --agnix ~/venv/bin/agnix --json figures.json
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import platform
import random
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (bench/generate.py, beside this script)

# Issue 6's targets, for a 2-core machine: (row kind, number of skills or None) -> limit.
TARGETS: dict[tuple[str, int | None], float] = {
    ("lint-cold", 1000): 1.5,
    ("lint-cold", 10000): 15.0,
    ("lint-warm", 1000): 0.3,
    ("rss", 10000): 150.0,
    ("version", None): 0.040,
    ("one-skill", None): 0.150,
}
PACK_TAR_TARGET = 2.0  # pack of 1,000 skills with a warm cache at most twice tar czf
LARGE = 2000  # trees above this many skills get at most 3 runs
CACHE_NAMES = (".skillcheck_cache",)
FORMATS = ("text", "json", "sarif", "github", "junit")
# Issue 11's goals on real repositories, relative to agnix measured in the same run.
REAL_COLD_VS_AGNIX = 2.0  # cold wall time at most 2x agnix's
REAL_WARM_VS_AGNIX = 0.5  # warm re-lint at most half agnix's cold
REAL_RSS_MB = 200.0  # peak RSS of the largest process
# ... and on the generated 1,000-skill tree, in every output format
GEN_COLD_VS_AGNIX = 1.5
GEN_WARM_VS_AGNIX = 0.4
REALWORLD = HERE / "realworld" / "corpus"  # built by bench/realworld/build.py, never committed


class BenchError(Exception):
    """A measured command failed; the message says which and why."""


@dataclass
class Sample:
    seconds: float  # wall
    cpu: float  # user + system of the process and the children it waited for
    rss_mb: float
    code: int


@dataclass
class Row:
    key: str  # stable identifier, also the JSON key
    label: str
    unit: str  # "s" or "MB"
    values: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)  # CPU seconds of each timed run
    target: float | None = None
    peer: bool = False  # a comparison printed under the row it compares with
    notes: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    def verdict(self) -> str:
        if self.target is None or self.median is None:
            return ""
        if self.median <= self.target:
            return "ok"
        return f"OVER ({self.median / self.target:.1f}x)"

    def to_json(self) -> dict[str, object]:
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "runs": len(self.values),
            "median": self.median,
            "min": min(self.values) if self.values else None,
            "max": max(self.values) if self.values else None,
            "values": self.values,
            "cpu_median": statistics.median(self.cpu) if self.cpu else None,
            "cpu": self.cpu,
            "target": self.target,
            "verdict": self.verdict() or None,
            "notes": self.notes,
            "error": self.error,
        }


@dataclass
class Tool:
    """A command-line linter to time: ours or a peer."""

    name: str  # as printed, with its version
    path: str
    lint_args: list[str]  # before the directory or file

    def lint(self, target: str) -> list[str]:
        return [self.path, *self.lint_args, target]

    def version(self) -> list[str]:
        return [self.path, "--version"]


# --------------------------------------------------------------------------- measuring


def _maxrss_mb(ru_maxrss: int) -> float:
    # Linux reports KiB, macOS bytes.
    return ru_maxrss / 1e6 if sys.platform == "darwin" else ru_maxrss * 1024 / 1e6


# The command is started by this small launcher, not by the benchmark itself. On Linux a
# child's peak RSS (wait4's ru_maxrss) starts from the RSS of the process that forked it:
# subprocess forks with vfork, so every command started by a benchmark that had grown to
# 272 MB (outputs compared between --jobs 1 and 2) reported 272 MB, agnix included. The
# launcher is a fresh interpreter of ~10 MB; it times the command from spawn to exit and
# prints the command's own usage as JSON.
_LAUNCHER = r"""
import json, os, subprocess, sys, threading, time
timeout = float(sys.argv[1])
start = time.perf_counter()
proc = subprocess.Popen(sys.argv[2:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
killer = threading.Timer(timeout, proc.kill)
killer.start()
try:
    _, status, usage = os.wait4(proc.pid, 0)
finally:
    killer.cancel()
elapsed = time.perf_counter() - start
print(json.dumps([elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss,
                  os.waitstatus_to_exitcode(status)]))
"""


def run_once(
    cmd: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    ok: tuple[int, ...] = (0,),
    timeout: float = 900.0,
) -> Sample:
    """Run ``cmd`` once; its wall time, peak RSS (largest process of its tree) and exit code."""
    launcher = [sys.executable, "-S", "-c", _LAUNCHER, str(timeout), *cmd]
    with tempfile.TemporaryFile() as err:
        try:
            done = subprocess.run(
                launcher, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=err, timeout=timeout + 60, check=False,
            )  # fmt: skip
        except OSError as exc:
            raise BenchError(f"cannot run {shlex.join(cmd)}: {exc}") from exc
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"{shlex.join(cmd)} did not end (cwd {cwd})") from exc
        try:
            elapsed, cpu, maxrss, code = json.loads(done.stdout)
        except ValueError:
            code = None
        if code is None or code not in ok:
            err.seek(0)
            tail = err.read()[-1500:].decode("utf-8", "replace").strip()
            if code is None:
                why = f"could not be started (launcher exited {done.returncode})"
            else:
                why = f"killed after {timeout:.0f} s" if code == -9 else f"exited {code}"
            raise BenchError(f"{shlex.join(cmd)} {why} (cwd {cwd}); stderr: {tail or '(empty)'}")
    return Sample(elapsed, cpu, _maxrss_mb(maxrss), code)


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may hold spaces or parentheses: fields restart after the last ')'.
        fields = stat.rsplit(b")", 1)[-1].split()
        if len(fields) > 1:
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    return children


def tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and all its descendants, now."""
    page = os.sysconf("SC_PAGE_SIZE")
    children = _children_map()
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/statm", "rb") as f:
                total += int(f.read().split()[1]) * page
        except (OSError, IndexError, ValueError):
            pass  # exited between the scan and the read
        stack.extend(children.get(pid, ()))
    return total / 1e6


def run_sampled(
    cmd: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    ok: tuple[int, ...],
    timeout: float = 900.0,
    interval: float = 0.02,
) -> float:
    """Peak of the summed RSS of ``cmd``'s process tree, sampled every ``interval`` seconds."""
    peak = 0.0
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        peak = max(peak, tree_rss_mb(proc.pid))
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise BenchError(f"{shlex.join(cmd)} killed after {timeout:.0f} s (cwd {cwd})")
        time.sleep(interval)
    if proc.returncode not in ok:
        raise BenchError(f"{shlex.join(cmd)} exited {proc.returncode} (cwd {cwd})")
    return peak


# --------------------------------------------------------------------------- the bench


class Bench:
    def __init__(self, args: argparse.Namespace, ours: Tool, peers: list[Tool]) -> None:
        self.args = args
        self.ours = ours
        self.peers = peers
        self.scratch = Path(tempfile.mkdtemp(prefix="skillcheck-bench-run."))
        self.cwd = self.scratch / "cwd"
        self.xdg = self.scratch / "xdg-cache"
        self.env = dict(os.environ, XDG_CACHE_HOME=str(self.xdg), NO_COLOR="1")
        self.env.pop("SKILLCHECK_CACHE_DIR", None)  # the cache goes where clear_caches looks
        # byte-compiled modules, as every install has them: without, each start compiles
        # the sources again (~100 ms of the one-skill run)
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.trees: list[Path] = []
        lint_help = self._help(["lint", "--help"])
        self.has_cache = "--no-cache" in lint_help
        self.has_jobs = "--jobs" in lint_help
        # "Cold" passes --no-cache to each command that has it (and clears caches anyway).
        self.no_cache = {"lint": ["--no-cache"] if self.has_cache else []}
        for cmd in ("catalog", "pack"):
            has = "--no-cache" in self._help([cmd, "--help"])
            self.no_cache[cmd] = ["--no-cache"] if has else []
        self.sections: dict[str, list[Row]] = {
            k: [] for k in ("cold", "rerun", "rss", "start", "pack")
        }

    def _help(self, argv: list[str]) -> str:
        out = subprocess.run(
            [self.ours.path, *argv], capture_output=True, text=True, env=self.env, check=False
        )
        return out.stdout

    def close(self) -> None:
        for tree in self.trees:
            self.clear_caches(tree)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def clear_caches(self, tree: Path) -> None:
        """Remove every result cache skillcheck may have written, so "cold" means cold."""
        shutil.rmtree(self.xdg, ignore_errors=True)
        for where in (self.cwd, tree, tree.parent):
            for name in CACHE_NAMES:
                shutil.rmtree(where / name, ignore_errors=True)
        self.xdg.mkdir(parents=True, exist_ok=True)
        self.cwd.mkdir(parents=True, exist_ok=True)

    def runs_for(self, size: int) -> int:
        return self.args.runs if size <= LARGE else min(self.args.runs, 3)

    def measure(
        self,
        row: Row,
        cmd: list[str],
        runs: int,
        *,
        cwd: Path | None = None,
        ok: tuple[int, ...] = (0,),
        before: Callable[[int], None] | None = None,
    ) -> Row:
        """Time ``cmd`` ``runs`` times into ``row``; ``before(i)`` runs ahead of run ``i``."""
        try:
            for i in range(runs):
                if before is not None:
                    before(i)
                sample = run_once(
                    cmd, cwd=cwd or self.cwd, env=self.env, ok=ok, timeout=self.args.timeout
                )
                row.values.append(sample.seconds)
                row.cpu.append(sample.cpu)
        except BenchError as exc:
            row.error = str(exc)
        self._progress(row)
        return row

    def _progress(self, row: Row) -> None:
        if row.error:
            print(f"  {row.label}: FAILED: {row.error}", file=sys.stderr)
        else:
            print(
                f"  {row.label}: {fmt(row.median, row.unit)} (median of {len(row.values)})",
                file=sys.stderr,
            )

    # ---- lint of a whole tree

    def lint_tree(
        self,
        size: int,
        tree: Path,
        *,
        tag: str = "",
        formats: tuple[str, ...] = FORMATS,
        editable: bool = True,
    ) -> None:
        """Cold, warm and memory rows for one tree; ``tag`` names a real-world tree in the
        row keys and labels (generated trees have none); a tree that is not ``editable``
        gets no "one skill edited" figure."""
        runs = self.runs_for(size)
        n = f"{size:,} {tag} skills" if tag else f"{size:,} skills"
        size_key = f"{tag}-{size}" if tag else str(size)
        lint = [self.ours.path, *self.ours.lint_args, *self.no_cache["lint"], str(tree)]
        warm_cmd = self.ours.lint(str(tree))

        cold = Row(
            f"lint-cold-{size_key}",
            f"lint cold, {n}",
            "s",
            target=None if tag else TARGETS.get(("lint-cold", size)),
        )
        rss = Row(
            f"rss-{size_key}",
            f"peak RSS, lint {n} (largest process)",
            "MB",
            target=None if tag else TARGETS.get(("rss", size)),
        )
        if self.no_cache["lint"]:
            cold.notes.append("--no-cache")
        # One untimed run first: "cold" means no skillcheck cache, not a cold OS page cache.
        self.clear_caches(tree)
        with contextlib.suppress(BenchError):
            run_once(lint, cwd=self.cwd, env=self.env, ok=(0, 1), timeout=self.args.timeout)
        if self.has_jobs:
            self.same_output(size_key, n, tree, formats)
        peer_rows = [
            (
                tool,
                Row(
                    f"lint-cold-{size_key}-{_slug(tool)}", f"{tool.name}, same tree", "s", peer=True
                ),
                Row(f"rss-{size_key}-{_slug(tool)}", f"{tool.name}, same tree", "MB", peer=True),
            )
            for tool in self.peers
        ]
        # Interleave the tools run by run, so a change in machine load hits all alike.
        for i in range(runs):
            self.clear_caches(tree)
            self._one(cold, lint, rss, final=i == runs - 1)
            for tool, row, peer_rss in peer_rows:
                self._one(row, tool.lint(str(tree)), peer_rss, final=i == runs - 1)
        self.sections["cold"].append(cold)
        self.sections["rss"].append(rss)
        for tool, row, peer_rss in peer_rows:
            _ratio(cold, row, f"skillcheck/{_short(tool)}")
            _ratio(rss, peer_rss, f"skillcheck/{_short(tool)}")
            self.sections["cold"].append(row)
            self.sections["rss"].append(peer_rss)

        # Whole process tree: matters once workers (--jobs) exist; sampled, so not timed.
        tree_rss = Row(f"rss-tree-{size_key}", f"peak RSS, lint {n} (process tree)", "MB")
        tree_rss.target = None if tag else TARGETS.get(("rss", size))
        if Path("/proc/self/stat").exists():
            self.clear_caches(tree)
            try:
                peak = run_sampled(
                    lint, cwd=self.cwd, env=self.env, ok=(0, 1), timeout=self.args.timeout
                )
                tree_rss.values.append(peak)
                tree_rss.notes.append("sampled every 20 ms, 1 run")
            except BenchError as exc:
                tree_rss.error = str(exc)
        else:
            tree_rss.error = "needs /proc (Linux)"
        self.sections["rss"].append(tree_rss)
        self._progress(tree_rss)

        # Warm: prime the cache once, then re-run with nothing changed.
        warm = Row(
            f"lint-warm-{size_key}",
            f"lint warm, {n}, nothing changed",
            "s",
            target=None if tag else TARGETS.get(("lint-warm", size)),
        )
        touch = Row(f"lint-touch-{size_key}", f"lint warm, {n}, one skill edited", "s")
        if not self.has_cache:
            for row in (warm, touch):
                row.notes.append("no cache in this build: a plain re-run")
        self.clear_caches(tree)
        try:
            run_once(warm_cmd, cwd=self.cwd, env=self.env, ok=(0, 1), timeout=self.args.timeout)
        except BenchError as exc:
            warm.error = touch.error = str(exc)
        if not warm.error:
            self.measure(warm, warm_cmd, runs, ok=(0, 1))
            if editable:
                with edited_skill(tree, generated=not tag) as edit:
                    self.measure(touch, warm_cmd, runs, ok=(0, 1), before=edit)
        agnix_cold = next((r for _, r, _ in peer_rows if r.label.startswith("agnix")), None)
        if agnix_cold is not None and agnix_cold.median and warm.median:
            warm.notes.append(f"this/agnix cold {warm.median / agnix_cold.median:.2f}")
        if tag:
            _realworld_verdicts(cold, warm, rss, agnix_cold)
        # the corpus itself is never modified: no "one skill edited" figure for it
        self.sections["rerun"] += [warm, touch] if editable else [warm]
        self.clear_caches(tree)
        if not tag and self.has_cache and size <= LARGE:
            self.formats_rows(size, tree, cold, warm, agnix_cold)

    def formats_rows(self, size: int, tree: Path, cold: Row, warm: Row, agnix: Row | None) -> None:
        """Issue 11: the generated tree's goals hold "in every output format". Cold and warm
        rows for each format but text (the rows above), each format's cache primed by itself:
        a report with figures (json) needs entries that hold them."""
        runs = self.runs_for(size)
        rows: list[tuple[Row, float]] = [(cold, GEN_COLD_VS_AGNIX), (warm, GEN_WARM_VS_AGNIX)]
        for fmt in FORMATS[1:]:
            cmd = [self.ours.path, *self.ours.lint_args, "--format", fmt, str(tree)]
            fmt_cold = Row(
                f"lint-cold-{size}-{fmt}", f"lint cold, {size:,} skills, --format {fmt}", "s"
            )
            fmt_cold.notes.append("--no-cache")
            self.measure(
                fmt_cold,
                [*cmd[:-1], *self.no_cache["lint"], cmd[-1]],
                runs,
                ok=(0, 1),
                before=lambda _i: self.clear_caches(tree),
            )
            fmt_warm = Row(
                f"lint-warm-{size}-{fmt}", f"lint warm, {size:,} skills, --format {fmt}", "s"
            )
            self.clear_caches(tree)
            try:
                run_once(cmd, cwd=self.cwd, env=self.env, ok=(0, 1), timeout=self.args.timeout)
                self.measure(fmt_warm, cmd, runs, ok=(0, 1))
            except BenchError as exc:
                fmt_warm.error = str(exc)
            self.sections["cold"].append(fmt_cold)
            self.sections["rerun"].append(fmt_warm)
            rows += [(fmt_cold, GEN_COLD_VS_AGNIX), (fmt_warm, GEN_WARM_VS_AGNIX)]
        self.clear_caches(tree)
        if agnix is None or not agnix.median:
            return
        for row, limit in rows:
            _vs_agnix(row, agnix, limit)

    def same_output(self, size_key: str, n: str, tree: Path, formats: tuple[str, ...]) -> None:
        """Issue 6: ``--jobs 1`` and ``--jobs 2`` give identical output on the whole tree
        (each format asked for; no cache, so both really check every skill)."""
        row = Row(f"lint-jobs1-{size_key}", f"lint cold --jobs 1, {n}", "s")
        identical = []
        for fmt in formats:
            outputs = []
            for jobs in ("1", "2"):
                cmd = [
                    self.ours.path,
                    *self.ours.lint_args,
                    "--no-cache",
                    "--jobs",
                    jobs,
                    "--format",
                    fmt,
                    str(tree),
                ]
                started = time.perf_counter()
                usage = resource.getrusage(resource.RUSAGE_CHILDREN)
                done = subprocess.run(
                    cmd, cwd=self.cwd, env=self.env, capture_output=True, check=False
                )
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                if jobs == "1" and fmt == formats[0]:  # the one-process figure, beside "lint cold"
                    row.values.append(time.perf_counter() - started)
                    row.cpu.append(
                        after.ru_utime - usage.ru_utime + after.ru_stime - usage.ru_stime
                    )
                outputs.append((done.returncode, done.stdout))
            (code1, out1), (code2, out2) = outputs
            if out1 != out2 or code1 != code2 or code1 not in (0, 1):
                row.error = f"{fmt}: output differs between --jobs 1 and --jobs 2"
                break
            identical.append(fmt)
        if not row.error:
            row.notes.append(f"output identical to --jobs 2 ({', '.join(identical)})")
        self.sections["cold"].append(row)
        self._progress(row)

    def _one(self, row: Row, cmd: list[str], rss: Row, *, final: bool) -> None:
        if row.error:
            return
        try:
            sample = run_once(cmd, cwd=self.cwd, env=self.env, ok=(0, 1), timeout=self.args.timeout)
            row.values.append(sample.seconds)
            row.cpu.append(sample.cpu)
            rss.values.append(sample.rss_mb)
        except BenchError as exc:
            row.error, rss.error = str(exc), "see " + row.key
        if final or row.error:
            self._progress(row)

    # ---- start-up and one skill

    def start_up(self, tree: Path) -> None:
        runs = self.args.runs * 4
        version = Row("version", "skillcheck --version", "s", target=TARGETS[("version", None)])
        self.measure(version, self.ours.version(), runs)
        self.sections["start"].append(version)
        floor = Row("python-floor", "python -c pass (interpreter floor)", "s", peer=True)
        python = _script_python(self.ours.path) or sys.executable
        self.measure(floor, [python, "-c", "pass"], runs)
        self.sections["start"].append(floor)
        for tool in self.peers:
            row = Row(f"version-{_slug(tool)}", f"{tool.name} --version", "s", peer=True)
            self.measure(row, tool.version(), runs)
            _ratio(version, row, f"skillcheck/{_short(tool)}")
            self.sections["start"].append(row)

        # The pre-commit case: one changed file, relative path, run from the repository root.
        skill = sorted(p for p in tree.iterdir() if p.is_dir())[0]
        rel = f"{skill.name}/SKILL.md"
        one = Row(
            "one-skill",
            "lint one skill, as pre-commit does",
            "s",
            target=TARGETS[("one-skill", None)],
        )
        one.notes.append(f"skillcheck lint {rel}")
        self.measure(
            one,
            [self.ours.path, "lint", rel],
            runs,
            cwd=tree,
            ok=(0, 1),
            before=lambda _i: self.clear_caches(tree),
        )
        self.sections["start"].append(one)
        for tool in self.peers:
            row = Row(f"one-skill-{_slug(tool)}", f"{tool.name}, same file", "s", peer=True)
            self.measure(row, tool.lint(rel), runs, cwd=tree, ok=(0, 1))
            _ratio(one, row, f"skillcheck/{_short(tool)}")
            self.sections["start"].append(row)
        self.clear_caches(tree)

    # ---- catalog and pack

    def catalog_pack(self, size: int, tree: Path) -> None:
        runs = self.runs_for(size)
        n = f"{size:,} skills"
        out = self.scratch / "out"

        def fresh(_i: int) -> None:
            shutil.rmtree(out, ignore_errors=True)
            out.mkdir()
            self.clear_caches(tree)

        catalog = Row(f"catalog-{size}", f"catalog -o catalog.json, {n}", "s")
        cmd = [self.ours.path, "catalog", "--isolated", "-q", *self.no_cache["catalog"]]
        self.measure(
            catalog, [*cmd, "-o", str(out / "catalog.json"), str(tree)], runs, before=fresh
        )
        pack = Row(f"pack-{size}", f"pack -o out.tar.gz, {n}", "s")
        cmd = [self.ours.path, "pack", "--isolated", "-q", *self.no_cache["pack"]]
        self.measure(pack, [*cmd, "-o", str(out / "out.tar.gz"), str(tree)], runs, before=fresh)
        lint = Row(f"lint-clean-{size}", "lint cold, same tree", "s")
        lint_cmd = [self.ours.path, "lint", "--isolated", "-q", *self.no_cache["lint"], str(tree)]
        self.measure(lint, lint_cmd, runs, before=fresh)
        # warm: the result cache filled by an untimed pack, nothing changed since
        warm = Row(f"pack-warm-{size}", f"pack -o out.tar.gz, {n}, warm cache", "s")
        warm_cmd = [self.ours.path, "pack", "--isolated", "-q", "-o", str(out / "w.tar.gz")]
        if self.has_cache:

            def filled(i: int) -> None:
                if i == 0:
                    fresh(i)
                    run_once([*warm_cmd, str(tree)], cwd=self.cwd, env=self.env, ok=(0,))

            self.measure(warm, [*warm_cmd, str(tree)], runs, before=filled)
        # lint then pack, as a CI job runs them: the cache filled by an untimed lint
        after = Row(f"pack-after-lint-{size}", f"pack -o out.tar.gz, {n}, after a lint", "s")
        lint_first = [self.ours.path, "lint", "--isolated", "-q", str(tree)]
        if self.has_cache:

            def linted(i: int) -> None:
                fresh(i)
                run_once(lint_first, cwd=self.cwd, env=self.env, ok=(0, 1))

            self.measure(after, [*warm_cmd, str(tree)], runs, before=linted)
        tar = Row(f"tar-{size}", "tar czf, same files", "s", peer=True)
        tar_cmd = ["tar", "czf", str(out / "tar.tar.gz"), "-C", str(tree.parent), tree.name]
        self.measure(tar, tar_cmd, runs, before=fresh)
        if pack.median and tar.median:
            ratio = pack.median / tar.median
            pack.notes.append(f"pack/tar {ratio:.2f}")
            if lint.median:  # issue 11: cold pack <= cold lint + 1.5x tar czf
                limit = lint.median + 1.5 * tar.median
                ok = "ok" if pack.median <= limit else "OVER"
                pack.notes.append(f"target <= lint + 1.5 tar = {limit:.2f} s: {ok}")
        for row in (warm, after):
            if row.median and tar.median:
                ratio = row.median / tar.median
                row.notes.append(f"pack/tar {ratio:.2f}")
                if size == 1000:
                    ok = "ok" if ratio <= PACK_TAR_TARGET else "OVER"
                    row.notes.append(f"target pack/tar <= {PACK_TAR_TARGET:g}: {ok}")
        self.sections["pack"] += [catalog, pack, lint, warm, after, tar]
        shutil.rmtree(out, ignore_errors=True)

    def rows(self) -> list[Row]:
        return [row for section in self.sections.values() for row in section]


def _realworld_verdicts(cold: Row, warm: Row, rss: Row, agnix: Row | None) -> None:
    """Issue 11's relative goals on a real-world tree, as notes beside the figures."""
    if rss.median is not None:
        rss.notes.append(
            f"goal <= {REAL_RSS_MB:g} MB: {'ok' if rss.median <= REAL_RSS_MB else 'OVER'}"
        )
    if agnix is None or not agnix.median:
        cold.notes.append("no agnix in this run: relative goals not checked")
        return
    for row, limit in ((cold, REAL_COLD_VS_AGNIX), (warm, REAL_WARM_VS_AGNIX)):
        _vs_agnix(row, agnix, limit)


def _vs_agnix(row: Row, agnix: Row, limit: float) -> None:
    """Note ``row``'s ratio to agnix's cold run and whether it keeps within ``limit``."""
    if row.median is not None and agnix.median:
        ratio = row.median / agnix.median
        verdict = "ok" if ratio <= limit else "OVER"
        row.notes.append(f"goal <= {limit:g}x agnix cold: {ratio:.2f}x {verdict}")


def skill_dirs(corpus: Path) -> list[Path]:
    """The outermost directories holding a SKILL.md (any case) under ``corpus``, sorted; VCS
    and dependency folders skipped, directory symlinks not followed."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames[:] = sorted(d for d in dirnames if d not in (".git", "node_modules"))
        if any(f.lower() == "skill.md" for f in filenames):
            found.append(Path(dirpath))
            dirnames[:] = []  # nested skills travel with their parent
    return found


def _link_or_copy(src: str, dst: str) -> None:
    # hard links keep a 10,000-skill sample cheap; SKILL.md files are copied because the
    # "one skill edited" figure rewrites one, which must never reach the corpus
    if os.path.basename(src).lower() != "skill.md":
        try:
            os.link(src, dst)
            return
        except OSError:
            pass
    shutil.copy2(src, dst)


def growth_tree(corpus: Path, skills: list[Path], size: int, seed: int, scratch: Path) -> Path:
    """``size`` real skills drawn (seeded) from the corpus, hard-linked into one folder."""
    tree = scratch / f"realworld-{size}"
    if tree.exists():
        return tree
    chosen = random.Random(seed).sample(skills, size)
    for i, skill in enumerate(sorted(chosen)):
        # keep the skill's own folder name (rules compare it with `name`)
        target = tree / f"{i:05d}" / skill.name
        target.parent.mkdir(parents=True)
        shutil.copytree(skill, target, symlinks=True, copy_function=_link_or_copy)
    return tree


@contextlib.contextmanager
def edited_skill(tree: Path, *, generated: bool = True) -> Iterator[Callable[[int], None]]:
    """Yield ``edit(i)``, which rewrites one SKILL.md with new content; restore it after.

    ``generated``: the tree is one of generate.py's cached trees, marked dirty meanwhile so an
    interrupted run does not leave an edited tree in the cache."""
    skills = skill_dirs(tree)
    skill = skills[len(skills) // 2]
    path = next(p for p in skill.iterdir() if p.name.lower() == "skill.md")
    original = path.read_bytes()
    stat = path.stat()
    if generated:
        generate.mark_dirty(tree)

    def edit(i: int) -> None:
        path.write_bytes(original + f"\nNote {i + 1}: keep the summary short.\n".encode())

    try:
        yield edit
    finally:
        path.write_bytes(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        if generated:
            generate.mark_clean(tree)


def _ratio(ours: Row, peer: Row, name: str) -> None:
    if ours.median and peer.median:
        peer.notes.append(f"{name} {ours.median / peer.median:.2f}")


def _slug(tool: Tool) -> str:
    return tool.name.split()[0].lower() + ("-pypi" if "PyPI" in tool.name else "")


def _short(tool: Tool) -> str:
    return "skillcheck-pypi" if "PyPI" in tool.name else tool.name.split()[0]


def _script_python(script: str) -> str | None:
    """The interpreter named on a console script's ``#!`` line."""
    try:
        with open(script, "rb") as f:
            first = f.readline(300)
    except OSError:
        return None
    if first.startswith(b"#!"):
        words = first[2:].decode("utf-8", "replace").split()
        if words and os.path.isabs(words[0]) and os.access(words[0], os.X_OK):
            return words[0]
    return None


# --------------------------------------------------------------------------- finding tools


def _version_of(path: str) -> str | None:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0] if out.returncode == 0 and text else None


def find_ours(explicit: str | None) -> Tool:
    if explicit:
        path = explicit
    else:
        beside = Path(sys.executable).parent / "skillcheck"
        path = str(beside) if beside.exists() else (shutil.which("skillcheck") or "")
    version = _version_of(path) if path else None
    if not version:
        raise SystemExit(f"run.py: no working skillcheck at {path or 'PATH'}; pass --skillcheck")
    return Tool(version, str(Path(path).absolute()), ["lint", "--isolated", "-q"])


def find_agnix(explicit: str | None) -> tuple[Tool | None, str]:
    path = explicit or os.environ.get("AGNIX") or shutil.which("agnix")
    if not path:
        return None, "agnix: not found (--agnix PATH, $AGNIX or PATH); skipped"
    version = _version_of(path)
    if not version or not version.startswith("agnix"):
        message = f"agnix: {path} --version did not answer 'agnix X'"
        if explicit:
            raise SystemExit(f"run.py: {message}")
        return None, message + "; skipped"
    # --max-files 0: agnix stops at 10,000 files by default, and 10,000 skills are 50,000.
    return Tool(version, path, ["--max-files", "0"]), f"agnix: {path}"


def find_pypi_skillcheck(explicit: str | None, ours: Tool) -> tuple[Tool | None, str]:
    path = explicit or os.environ.get("SKILLCHECK_PYPI")
    if not path:
        return None, "skillcheck (PyPI): not given (--pypi-skillcheck PATH); skipped"
    version = _version_of(path)
    try:
        help_text = subprocess.run([path, "--help"], capture_output=True, text=True).stdout
    except OSError:
        help_text = ""
    same = Path(path).resolve() == Path(ours.path).resolve()
    if not version or same or "Lint, catalog and package" in help_text:
        message = f"skillcheck (PyPI): {path} is not the PyPI package named skillcheck"
        if explicit:
            raise SystemExit(f"run.py: {message}")
        return None, message + "; skipped"
    number = version.split()[-1]
    # Its CLI has no subcommands: `skillcheck PATH...` validates files or directories.
    return Tool(f"skillcheck {number} (PyPI)", path, ["--no-color"]), f"skillcheck (PyPI): {path}"


# --------------------------------------------------------------------------- report


def fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit == "MB":
        return f"{value:.1f} MB"
    if value < 1:
        return f"{value * 1000:.1f} ms" if value < 0.1 else f"{value * 1000:.0f} ms"
    return f"{value:.2f} s"


def table(rows: list[Row]) -> str:
    """The figures as aligned text: wall time median, min and max, and median CPU time."""
    width = max(len(r.label) + (2 if r.peer else 0) for r in rows) + 2
    head = (
        f"{'case':<{width}}{'runs':>5}{'median':>11}{'min':>11}{'max':>11}{'cpu':>11}"
        f"  {'target':<12}notes"
    )
    lines = [head, "-" * (len(head) + 30)]
    for r in rows:
        label = ("  " if r.peer else "") + r.label
        if r.error or not r.values:
            why = (r.error or "no run completed").splitlines()[0][:200]
            lines.append(f"{label:<{width}}{'':>5}  FAILED: {why}")
            continue
        unit = "MB" if r.unit == "MB" else "s"
        target = f"<= {r.target:g} {unit}" if r.target is not None else ""
        cpu = fmt(statistics.median(r.cpu), "s") if r.cpu else ""
        notes = "; ".join(filter(None, [r.verdict(), *r.notes]))
        lines.append(
            f"{label:<{width}}{len(r.values):>5}{fmt(r.median, r.unit):>11}"
            f"{fmt(min(r.values), r.unit):>11}{fmt(max(r.values), r.unit):>11}{cpu:>11}  "
            f"{target:<12}{notes}".rstrip()
        )
    return "\n".join(lines)


def machine_facts(ours: Tool) -> dict[str, object]:
    model = ""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    python = _script_python(ours.path) or sys.executable
    version = subprocess.run(
        [python, "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {
        "source": _source_state(),
        "cpus": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": model,
        "platform": platform.platform(),
        "python": version or platform.python_version(),
        "skillcheck": ours.name,
        "skillcheck_path": ours.path,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "yardstick_ms": round(machine_speed(), 1),
    }


def _source_state() -> str:
    """The checkout measured: commit, and whether it had local changes."""
    git = ["git", "-C", str(HERE.parent)]
    try:
        head = subprocess.run(
            [*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        )
        dirty = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True)
    except OSError:
        return "unknown (no git)"
    if head.returncode:
        return "unknown (not a git checkout)"
    return head.stdout.strip() + (" + local changes" if dirty.stdout.strip() else "")


def machine_speed() -> float:
    """Milliseconds of CPU for ``sum(range(10**6))`` (best of 7), as in token_accuracy.py."""
    best = float("inf")
    for _ in range(7):
        t0 = time.process_time()
        sum(range(10**6))
        best = min(best, time.process_time() - t0)
    return best * 1000


# --------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Benchmark skillcheck on generated skill trees; print a table of medians.",
        epilog="Peers: agnix from --agnix, $AGNIX or PATH; the PyPI package named skillcheck "
        "from --pypi-skillcheck or $SKILLCHECK_PYPI (never PATH: its command has our name).",
    )
    ap.add_argument("--sizes", default="1000,10000", help="tree sizes (default: 1000,10000)")
    ap.add_argument("--runs", type=int, help="timed runs per figure (default 5; 3 above 2,000)")
    ap.add_argument("--quick", action="store_true", help="1,000 skills, 3 runs")
    ap.add_argument("--json", type=Path, metavar="FILE", help="also write the figures as JSON")
    ap.add_argument("--no-compare", action="store_true", help="skip agnix and PyPI skillcheck")
    ap.add_argument("--skillcheck", metavar="PATH", help="the skillcheck to measure")
    ap.add_argument("--agnix", metavar="PATH", help="agnix executable to compare with")
    ap.add_argument("--pypi-skillcheck", metavar="PATH", help="PyPI skillcheck 1.5.0's command")
    ap.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    ap.add_argument(
        "--findings",
        type=float,
        default=generate.DEFAULT_FINDINGS,
        help="fraction of skills with a seeded defect in linted trees (default %(default)s)",
    )
    ap.add_argument("--cache-dir", type=Path, help="where generated trees are kept")
    ap.add_argument(
        "--realworld",
        type=Path,
        metavar="DIR",
        help="real-world corpus to lint too (default: bench/realworld/corpus when it exists)",
    )
    ap.add_argument("--no-realworld", action="store_true", help="skip the real-world corpus")
    ap.add_argument(
        "--growth",
        default="",
        metavar="SIZES",
        help="also lint seeded samples of this many real skills (e.g. 1000,2000,5000,10000)",
    )
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per command")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes = "1000"
        args.runs = args.runs or 3
    args.runs = args.runs or 5
    try:
        args.sizes = sorted({int(s.replace("_", "")) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        ap.error(f"--sizes: expected numbers separated by commas, got {args.sizes!r}")
    if not args.sizes or min(args.sizes) < 1:
        ap.error("--sizes: each size must be at least 1")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if not 0.0 <= args.findings <= 1.0:
        ap.error("--findings must be between 0 and 1")
    if args.no_realworld:
        args.realworld = None
    elif args.realworld is None and REALWORLD.is_dir():
        args.realworld = REALWORLD
    if args.realworld is not None and not args.realworld.is_dir():
        ap.error(f"--realworld: {args.realworld} is not a directory")
    try:
        args.growth = sorted({int(s.replace("_", "")) for s in args.growth.split(",") if s.strip()})
    except ValueError:
        ap.error(f"--growth: expected numbers separated by commas, got {args.growth!r}")
    if args.growth and args.realworld is None:
        ap.error("--growth needs the real-world corpus (--realworld DIR)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ours = find_ours(args.skillcheck)
    peers: list[Tool] = []
    peer_notes: list[str] = []
    if not args.no_compare:
        for tool, note in (
            find_agnix(args.agnix),
            find_pypi_skillcheck(args.pypi_skillcheck, ours),
        ):
            peer_notes.append(note)
            if tool is not None:
                peers.append(tool)

    facts = machine_facts(ours)
    started = datetime.datetime.now().astimezone()
    command = shlex.join(["python", "bench/run.py", *(sys.argv[1:] if argv is None else argv)])
    bench = Bench(args, ours, peers)
    trees: dict[str, dict[str, Any]] = {}
    try:
        for size in args.sizes:
            print(f"tree of {size:,} skills ...", file=sys.stderr)
            tree = generate.cached_tree(size, args.seed, args.findings, args.cache_dir)
            bench.trees.append(tree)
            files, nbytes = generate.tree_size(tree)
            trees[str(size)] = {"path": str(tree), "files": files, "bytes": nbytes}
            bench.lint_tree(size, tree)
        if args.realworld is not None:
            corpus = args.realworld.resolve()
            skills = skill_dirs(corpus)
            print(f"real-world corpus {corpus}: {len(skills):,} skills ...", file=sys.stderr)
            files, nbytes = generate.tree_size(corpus)
            trees["realworld"] = {
                "path": str(corpus),
                "skills": len(skills),
                "files": files,
                "bytes": nbytes,
            }
            # one output format for the --jobs identity check: the corpus is large
            bench.lint_tree(len(skills), corpus, tag="real", formats=("json",), editable=False)
            for size in args.growth:
                if size > len(skills):
                    print(f"  growth {size:,}: corpus has fewer skills; skipped", file=sys.stderr)
                    continue
                tree = growth_tree(corpus, skills, size, args.seed, bench.scratch)
                bench.trees.append(tree)
                trees[f"growth-{size}"] = {"path": "(sample)", "skills": size}
                bench.lint_tree(size, tree, tag="sampled real", formats=("json",))
        smallest = args.sizes[0]
        # Catalog and pack refuse on errors: they get a tree without seeded defects.
        clean = generate.cached_tree(smallest, args.seed, 0.0, args.cache_dir)
        bench.trees.append(clean)
        bench.start_up(clean)
        bench.catalog_pack(smallest, clean)
    finally:
        bench.close()
    rows = bench.rows()
    facts["load_average_end"] = [round(x, 2) for x in os.getloadavg()]

    print(f"skillcheck benchmark, {started:%Y-%m-%d %H:%M %Z}")
    print(f"command: {command}")
    usable = facts["cpus_usable"]
    print(
        f"machine: {facts['cpus']} CPUs ({usable} usable) {facts['cpu_model']}; "
        f"{facts['platform']}; Python {facts['python']}"
    )
    print(
        f"load average {facts['load_average']} at start, {facts['load_average_end']} at end; "
        f"yardstick sum(range(10**6)) = {facts['yardstick_ms']} ms"
    )
    print(
        f"{ours.name} ({ours.path}), source {facts['source']}; "
        f"cache: {'yes' if bench.has_cache else 'no'}; "
        f"--jobs: {'yes' if bench.has_jobs else 'no'}"
    )
    for note in peer_notes:
        print(note)
    for size, info in trees.items():
        if not size.isdigit():
            if "files" in info:
                print(
                    f"{size}: {info['skills']:,} skills, {info['files']:,} files, "
                    f"{info['bytes'] / 1e6:.1f} MB ({info['path']})"
                )
            continue
        print(
            f"tree {int(size):,} skills: {info['files']:,} files, {info['bytes'] / 1e6:.1f} MB, "
            f"{args.findings:.0%} with a seeded defect (seed {args.seed})"
        )
    print()
    print(table(rows))

    if args.json is not None:
        document = {
            "date": started.isoformat(timespec="seconds"),
            "command": command,
            "machine": facts,
            "cache": bench.has_cache,
            "jobs": bench.has_jobs,
            "peers": [{"name": t.name, "path": t.path} for t in peers],
            "trees": trees,
            "rows": [r.to_json() for r in rows],
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    failed = [r for r in rows if r.error]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
