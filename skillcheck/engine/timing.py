"""Where a run spends its time (``--profile``): wall and CPU time per named stage.

One primitive, ``stage(name)``: a context manager that charges the time spent inside it to
``name`` while a profile is active, and costs one global lookup when none is (every run
without ``--profile``). Stages nest; each is charged its own time only (a rule that parses
Markdown inside "load skills" is charged to the rule), so the stages add up to the run.
Worker processes keep their own profile and send it back with each chunk they checked
(``take`` / ``merge``): their stages are summed over the workers, so with ``--jobs`` the
CPU column is the whole run's and the wall column adds the workers' time together.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

# a stage's figures: [wall seconds, CPU seconds, times entered]
Figures = list[float]


class Profile:
    """The stages of one process's run so far."""

    def __init__(self) -> None:
        self.stages: dict[str, Figures] = {}
        # the stages entered and not yet left: [name, wall at entry, cpu at entry, wall and
        # cpu of the stages nested in it]
        self._open: list[list[object]] = []
        self.started_wall = time.perf_counter()
        self.started_cpu = time.process_time()
        self.workers_cpu = 0.0  # CPU of the stages merged from worker processes

    @contextlib.contextmanager
    def stage(self, name: str) -> Iterator[None]:
        frame: list[object] = [name, time.perf_counter(), time.process_time(), 0.0, 0.0]
        self._open.append(frame)
        try:
            yield
        finally:
            self._open.pop()
            wall = time.perf_counter() - frame[1]  # type: ignore[operator]
            cpu = time.process_time() - frame[2]  # type: ignore[operator]
            own = self.stages.setdefault(name, [0.0, 0.0, 0])
            own[0] += wall - frame[3]  # type: ignore[operator]
            own[1] += cpu - frame[4]  # type: ignore[operator]
            own[2] += 1
            if self._open:  # the enclosing stage is not charged for this one
                outer = self._open[-1]
                outer[3] += wall  # type: ignore[operator]
                outer[4] += cpu  # type: ignore[operator]

    def take(self) -> dict[str, Figures]:
        """The stages so far, cleared (a worker sends them back with each chunk)."""
        taken, self.stages = self.stages, {}
        return taken

    def merge(self, stages: dict[str, Figures]) -> None:
        """Add another process's stages (a worker's) to this one's."""
        for name, (wall, cpu, calls) in stages.items():
            own = self.stages.setdefault(name, [0.0, 0.0, 0])
            own[0] += wall
            own[1] += cpu
            own[2] += calls
            self.workers_cpu += cpu

    def summary(self, top: int = 12) -> list[str]:
        """The table ``--profile`` prints: each stage's wall and CPU seconds, its share of
        the run's CPU and how often it was entered, largest first; the rules past the
        ``top`` largest in one line; start-up (the interpreter and imports, before the
        profile began) and the time outside every stage as lines of their own."""
        wall_total = time.perf_counter() - self.started_wall
        # this process's CPU (start-up included) and the workers' (their stages)
        workers = self.workers_cpu
        cpu_total = time.process_time() + workers
        rows = dict(self.stages)
        rules = sorted(
            (n for n in rows if n.startswith("rule ")), key=lambda n: rows[n][1], reverse=True
        )
        if len(rules) > top:
            rest = rules[top:]
            rows[f"rules: {len(rest)} others"] = [
                sum(rows[n][0] for n in rest),
                sum(rows[n][1] for n in rest),
                sum(rows[n][2] for n in rest),
            ]
            for name in rest:
                del rows[name]
        staged_wall = sum(f[0] for f in self.stages.values())
        staged_cpu = sum(f[1] for f in self.stages.values())
        rows["start-up (interpreter, imports)"] = [float("nan"), self.started_cpu, 1]
        rows["other (outside the stages above)"] = [
            max(wall_total - staged_wall, 0.0) if not workers else float("nan"),
            max(cpu_total - staged_cpu - self.started_cpu, 0.0),
            1,
        ]
        lines = [f"{'stage':44} {'wall s':>8} {'cpu s':>8} {'cpu %':>6} {'calls':>8}"]
        for name, (wall, cpu, calls) in sorted(rows.items(), key=lambda item: -item[1][1]):
            share = 100 * cpu / cpu_total if cpu_total else 0.0
            shown = "-" if wall != wall else f"{wall:8.3f}"  # NaN: not measured
            lines.append(f"{name[:44]:44} {shown:>8} {cpu:8.3f} {share:6.1f} {int(calls):>8}")
        lines.append(f"{'total':44} {wall_total:8.3f} {cpu_total:8.3f} {100.0:6.1f}")
        if workers > 0:
            lines.append(
                "stages run in worker processes are summed over the workers (wall and CPU);"
                " the total's wall time is the run's"
            )
        return lines


_ACTIVE: Profile | None = None
_NOTHING = contextlib.nullcontext()


def start() -> Profile:
    """Begin profiling this process's run (``--profile``)."""
    global _ACTIVE
    _ACTIVE = Profile()
    return _ACTIVE


def active() -> Profile | None:
    """The profile being recorded, or None (the usual case: no stage costs anything)."""
    return _ACTIVE


def stage(name: str) -> contextlib.AbstractContextManager[None]:
    """Charge the time spent inside the ``with`` block to ``name`` (when profiling)."""
    if _ACTIVE is None:
        return _NOTHING
    return _ACTIVE.stage(name)


def stop() -> None:
    global _ACTIVE
    _ACTIVE = None


def worker_start(enabled: bool) -> None:
    """In a worker process: profile its checks when the main process profiles (a forked
    worker would otherwise add to a copy of the main process's figures)."""
    global _ACTIVE
    _ACTIVE = Profile() if enabled else None
