"""Check every discovered skill: load, run the skill rules, reduce to a SkillSummary.

Each skill goes one of three ways, and the summaries come back in discovery order whichever
way it went, so the report is byte-identical for any ``--jobs`` and with or without cache:

- **cached**: the result cache holds an entry and the skill's files are unchanged;
- checked **here**, one skill at a time, when there are few to check or ``--jobs 1``;
- checked by **worker processes**, fed in discovery order in chunks; each worker holds one
  skill at a time and sends back its summary.

A worker that dies is reported as an internal error (exit 2); an error in a rule inside a
worker is raised in the main process as it would be without workers.
"""

from __future__ import annotations

import gc
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from skillcheck.analysis.figures import skill_figures
from skillcheck.analysis.paths import load_group
from skillcheck.engine import timing
from skillcheck.engine.cache import (
    ResultCache,
    input_digest,
    inputs_of,
    run_key,
    same_content,
    summary_digest,
)
from skillcheck.engine.check import check_collection, check_skill
from skillcheck.engine.summary import share_words, summarise
from skillcheck.engine.timing import stage
from skillcheck.errors import InternalError
from skillcheck.rules import Context, Rule, all_rules
from skillcheck.rules.base import tokenizer_spec
from skillcheck.source.discover import Listings
from skillcheck.source.display import display_path
from skillcheck.source.lazy import compile_all
from skillcheck.source.load import load_skill, scan
from skillcheck.source.skill import Skill, SkillSummary

# below this many skills to check, starting processes costs more than it saves
PARALLEL_MIN = 24
# fork starts a worker in milliseconds with every module already imported; elsewhere
# (macOS, Windows) spawn is the safe choice
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"

Task = tuple[Path, str, Any, Any]  # (root, display root, listing, cache entry)
# (root, summary, how it was obtained, digest of its input files for the cache or None,
# the Extra's value or None)
Done = tuple[Path, SkillSummary, str, "str | None", Any]


@dataclass(frozen=True)
class Extra:
    """More to derive from each skill while it is loaded, beside its summary: a layer above
    the engine (pack's manifest entry) asks for it without the engine importing that layer.

    ``derive(skill, summary)`` returns a JSON value that depends only on the skill's files
    and on what the run key covers; it is cached with the summary under ``name`` and reused
    only when the skill's files are unchanged by identity (every file, not only those the
    rules read). ``derive`` must be picklable (a module-level function or a partial of one):
    worker processes call it.
    """

    name: str
    derive: Callable[[Skill, SkillSummary], Any]
    # whether a value read back from the cache has the shape ``derive`` gives: a damaged or
    # planted entry is a miss, never an error
    valid: Callable[[Any], bool] | None = None
    # False: derived and cached for a later run's use, never read back by this one (lint
    # caching pack's record): an entry without it is still a hit, its value None
    needed: bool = True


CHUNK = 8  # skills sent to a worker at a time
# skills found between two gc.freeze calls: what a warm run builds (summaries, diagnostics)
# lives to the end, and without them each full collection scans all of it again (17 % of
# a warm run of 6,700 real skills)
FREEZE_EVERY = 256


@dataclass
class Checked:
    summaries: list[SkillSummary]
    loaded: list[Skill] = field(default_factory=list)
    how: Counter[str] = field(default_factory=Counter)
    cache: Any = None  # the ResultCache, when there is one
    # what each summary was computed from (cache.input_digest), when the cache knows
    inputs: list[str | None] = field(default_factory=list)
    figures: bool = False
    extras: list[Any] = field(default_factory=list)  # the Extra's value of each skill


@dataclass
class CheckerSpec:
    """Everything a worker needs to check skills as the main process would (picklable)."""

    rule_codes: list[str]
    targets: tuple[str, ...]
    options: dict[str, Any]
    figures: bool
    cache_dir: Path | None = None
    cache_key: str | None = None
    started_ns: int = 0
    inputs: bool = False  # record each summary's inputs (the skills are loaded again later)
    # the directories being linted, resolved: a SKILL.md symlinked into them is read
    trees: tuple[str, ...] = ()
    extra: Extra | None = None
    profile: bool = False  # time each stage (``--profile``) and send the figures back


class Checker:
    """Checks one skill (a Task) and returns it Done: (root, summary, how it was obtained,
    the digest of its inputs when the cache is on)."""

    def __init__(self, spec: CheckerSpec, keep: bool = False) -> None:

        # all_rules, not the bare registry: a spawned worker has imported no rule module yet
        rules = {r.code: r for r in all_rules()}
        self.rules: list[Rule] = [rules[code] for code in spec.rule_codes]
        self.ctx = Context(targets=spec.targets, options=spec.options)
        self.figures = spec.figures
        self.inputs = spec.inputs
        self.trees = spec.trees
        self.extra = spec.extra
        self.cache = None
        if spec.cache_dir is not None and spec.cache_key is not None:
            self.cache = ResultCache(spec.cache_dir, spec.cache_key, spec.trees)
            self.cache.started_ns = spec.started_ns
        # skills checked in this process, by root, when the caller keeps them
        self.kept: dict[Path, Skill] | None = {} if keep else None

    def __call__(self, task: Task) -> Done:

        root, display_root, listing, entry = task
        with stage("load skills (list, read)"):
            skill = load_skill(root, display_root, listing, self.trees)
        cache = self.cache
        if entry is not None and cache is not None and _same_content(skill, entry):
            summary = cache.summary_of(entry, self.figures, root)
            if summary is not None:
                summary.display_root = display_root
                # derived again: files no rule reads (an asset) may differ from last time
                extra = self._derive(skill, summary)
                cache.store(root, cache.refreshed(entry, skill, self._named(extra)))
                summary.inputs = {"shape": entry["shape"], "reads": entry["reads"]}
                if self.kept is not None:
                    self.kept[root] = skill
                return root, summary, "content", input_digest(entry), extra
        return self.check(skill)

    def _derive(self, skill: Skill, summary: SkillSummary) -> Any:
        if self.extra is None:
            return None
        with stage(f"derive {self.extra.name}"):
            return self.extra.derive(skill, summary)

    def _named(self, value: Any) -> tuple[str, Any] | None:
        return None if self.extra is None else (self.extra.name, value)

    def check(self, skill: Skill) -> Done:
        """Run the rules on a loaded skill and summarise it (and cache the summary)."""

        root = skill.root
        cache = self.cache
        if self.figures:  # counted once, before the budget rules, which then read them
            with stage("figures (token counts)"):
                skill_figures(skill, tokenizer_spec(self.ctx))
        diagnostics = check_skill(skill, self.rules, self.ctx)
        with stage("summarise"):
            summary = summarise(skill, diagnostics, self.ctx, self.figures)
        extra = self._derive(skill, summary)
        digest = None
        if cache is not None or self.inputs:
            with stage("cache: write entries"):
                summary.inputs = inputs_of(skill)
                if cache is not None:
                    record = cache.record(
                        skill, summary, summary.inputs, self.figures, self._named(extra)
                    )
                    cache.store(root, record)
                    digest = input_digest(record)
        if self.kept is not None:
            self.kept[root] = skill
        return root, summary, "checked", digest, extra


# --- worker processes ---------------------------------------------------------------------

_WORKER: Checker | None = None


def _init_worker(spec: CheckerSpec) -> None:
    import signal

    global _WORKER
    # Ctrl-C goes to the whole process group: the main process stops the pool and reports it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    timing.worker_start(spec.profile)
    _WORKER = Checker(spec)


Worked = tuple[list[Done | tuple[Path, Exception]], "dict[str, timing.Figures] | None"]


def _work(tasks: list[Task]) -> Worked:
    """Check a chunk of skills; a failure is returned with its skill (the main process
    reports the failure that comes first in the final order, as one process would). With
    the worker's time per stage when the run is profiled."""
    assert _WORKER is not None
    out: list[Done | tuple[Path, Exception]] = []
    for task in tasks:
        try:
            out.append(_WORKER(task))
        except Exception as exc:  # InternalError from a rule, or a bug here
            out.append((task[0], exc))
    profile = timing.active()
    return out, None if profile is None else profile.take()


class RunProgress(Protocol):
    """What a run tells a progress display: each skill found, the search's end, each skill
    checked (a cache hit counts as checked)."""

    def found(self, root: Path) -> None: ...
    def searched(self) -> None: ...
    def checked(self, count: int = 1) -> None: ...


class CheckRun:
    """One run's checking: skills are added as discovery finds them (``add``), and the
    summaries come back in the final order (``finish``).

    With ``--jobs`` above 1 and enough skills, worker processes start while the search is
    still going, and each chunk of skills is sent as soon as it is found; otherwise the
    skills are checked here, in the final order, once the search is over.
    """

    def __init__(
        self,
        rules: list[Rule],
        ctx: Context,
        settings: Any,
        keep: bool,
        trees: tuple[str, ...] = (),
        extra: Extra | None = None,
        listings: Listings | None = None,
        progress: RunProgress | None = None,
    ) -> None:
        import time

        self.figures = settings.figures or _collection_figures(rules, ctx)
        spec = CheckerSpec(
            [r.code for r in rules], ctx.targets, ctx.options, self.figures, inputs=keep
        )
        spec.trees = trees
        spec.extra = extra
        spec.profile = timing.active() is not None
        self.cwd = Path.cwd()
        if settings.cache_dir is not None:
            spec.cache_dir = Path(settings.cache_dir)
            spec.cache_key = run_key(spec.rule_codes, ctx.targets, ctx.options, self.cwd)
            spec.started_ns = time.time_ns()
        self.spec = spec
        self.keep = keep
        self.checker = Checker(spec, keep=keep)
        self.cache = self.checker.cache  # the main process's own view (workers have theirs)
        self.jobs = max(1, settings.jobs)
        self.done: dict[Path, Done] = {}
        self.pending: list[Task] = []  # found, not yet checked nor sent to a worker
        self.pool: Any = None
        self.futures: list[Any] = []
        self.how: Counter[str] = Counter()
        self.found = 0  # skills added so far
        self.listings = listings  # discovery's, shared with the scans of cache lookups
        self.progress = progress

    def add(self, root: Path) -> None:
        """A skill found by discovery: taken from the cache, or queued to be checked."""

        self.found += 1
        if self.progress is not None:
            self.progress.found(root)
        if self.found % FREEZE_EVERY == 0:
            gc.freeze()  # undone by finish or close, as the other freezes here
        listing = entry = None
        if self.cache is not None:
            with stage("cache: look up entries"):
                hit, listing, entry = self._lookup(root)
            if hit:
                return
        self.pending.append((root, display_path(root, self.cwd), listing, entry))
        if self.jobs > 1:
            if self.pool is None and len(self.pending) >= PARALLEL_MIN:
                self._start()
            if self.pool is not None and len(self.pending) >= CHUNK:
                self._send()

    def _lookup(self, root: Path) -> tuple[bool, Any, Any]:
        """(whether the cache holds the skill's result, its listing, its entry if any)."""
        assert self.cache is not None
        listing = scan(root, self.listings)
        extra = self.spec.extra
        if extra is not None and not extra.needed:
            extra = None
        hit, entry = self.cache.lookup(
            root, listing, self.figures, None if extra is None else extra.name
        )
        value = None
        if hit is not None and extra is not None:
            value = entry["extra"][1]  # type: ignore[index]
            if extra.valid is not None and not extra.valid(value):
                hit = None  # checked by content: derived again
        if hit is None:
            return False, listing, entry
        # its display root is this run's: the run key has the cwd
        assert entry is not None
        hit.inputs = {"shape": entry["shape"], "reads": entry["reads"]}
        self.done[root] = (root, hit, "cached", input_digest(entry), value)
        if self.progress is not None:
            self.progress.checked()
        return True, listing, entry

    def _start(self) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if START_METHOD == "fork":
            compile_all()  # once here, not once in each worker (a spawned one imports anew)
        # gc.freeze: the objects made so far live until the end, and a forked worker then
        # shares their pages instead of copying them when the collector touches them
        gc.freeze()
        self.pool = ProcessPoolExecutor(
            self.jobs,
            mp_context=multiprocessing.get_context(START_METHOD),
            initializer=_init_worker,
            initargs=(self.spec,),
        )

    def _send(self) -> None:
        while self.pending:
            chunk, self.pending = self.pending[:CHUNK], self.pending[CHUNK:]
            self.futures.append(self.pool.submit(_work, chunk))

    def _collect(self, order: dict[Path, int]) -> list[tuple[int, Exception]]:
        """Send what is left and wait for every chunk; the failures, by final position."""
        # imported here: a run that never starts workers never imports multiprocessing
        from concurrent.futures.process import BrokenProcessPool

        failures: list[tuple[int, Exception]] = []
        try:
            self._send()
            profile = timing.active()
            for future in self.futures:
                with stage("wait for worker processes"):
                    items, stages = future.result()
                if profile is not None and stages:
                    profile.merge(stages)
                if self.progress is not None:
                    self.progress.checked(len(items))
                for item in items:
                    if isinstance(item[1], Exception):
                        failures.append((order[item[0]], item[1]))
                    else:
                        # as each result arrives, not once all have: the copies freed here
                        # are reused by the results still to come (18,000 skills: 228 MB at
                        # the peak, against 266 MB interning them all at the end)
                        share_words(item[1])
                        self.done[item[0]] = item  # type: ignore[assignment]
        except BrokenProcessPool as exc:
            raise InternalError(f"a worker process died ({exc}); run again with --jobs 1") from exc
        return failures

    def close(self) -> None:
        """Stop the workers (at the end, or when the run stops early)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None
            gc.unfreeze()
        elif self.found >= FREEZE_EVERY:  # the run stopped before finish unfroze them
            gc.unfreeze()

    def finish(self, roots: list[Path]) -> Checked:
        """Every skill's summary, in the order of ``roots`` (discovery's sorted list)."""
        order = {root: i for i, root in enumerate(roots)}
        failures: list[tuple[int, Exception]] = []
        try:
            if self.pool is not None:
                failures = self._collect(order)
            else:  # here, in the final order: the first failure stops the run
                self.pending.sort(key=lambda task: order[task[0]])
                gc.freeze()  # what exists now lives to the end: the collector skips it
                try:
                    for task in self.pending:
                        done = self.done[task[0]] = self.checker(task)
                        share_words(done[1])
                        if self.progress is not None:
                            self.progress.checked()
                finally:
                    gc.unfreeze()
            self.pending = []
        finally:
            self.close()
        if failures:
            raise min(failures, key=lambda failure: failure[0])[1]
        summaries: list[SkillSummary] = []
        inputs: list[str | None] = []
        extras: list[Any] = []
        for root in roots:
            _root, summary, way, digest, extra = self.done.pop(root)
            summaries.append(summary)
            inputs.append(digest)
            extras.append(extra)
            self.how[way] += 1
        loaded: list[Skill] = []
        if self.keep:  # skills checked elsewhere (a worker, an earlier run) are loaded again
            kept = self.checker.kept or {}
            for i, summary in enumerate(summaries):
                skill = kept.get(summary.root)
                if skill is None:
                    skill = _load_again(summary, self.spec.trees)
                    if summary.inputs is None or not _unchanged(skill, summary.inputs):
                        # edited since its check: check it again as it is now, so the
                        # verdict is about exactly what the caller goes on to read
                        _root, summaries[i], _way, inputs[i], extras[i] = self.checker.check(skill)
                        self.how["rechecked"] += 1
                loaded.append(skill)
        return Checked(summaries, loaded, self.how, self.cache, inputs, self.figures, extras)


def _load_again(summary: SkillSummary, trees: tuple[str, ...] = ()) -> Skill:

    with stage("load skills again (kept for the caller)"):
        return load_skill(summary.root, summary.display_root, trees=trees)


def _same_content(skill: Skill, entry: dict[str, Any]) -> bool:
    with stage("cache: compare content"):
        return same_content(skill, entry)


def _unchanged(skill: Skill, inputs: dict[str, Any]) -> bool:
    """Whether ``skill`` (loaded now) holds what a summary was computed from."""

    return same_content(skill, inputs)


def collection_diagnostics(checked: Checked, rules: list[Rule], ctx: Context) -> list[Any]:
    """The collection rules' diagnostics: computed, or taken from the cache when every
    skill's input is what it was when they were last computed."""

    cache = checked.cache
    if cache is None:
        return check_collection(checked.summaries, rules, ctx)

    # the groups come from the folders around each skill (a plugin.json), not its files;
    # a skill without an input digest (its entry could not be made) counts by its summary,
    # which is all the collection rules read of it
    inputs = [
        (str(s.root), s.display_root, digest or summary_digest(s), load_group(s.root))
        for s, digest in zip(checked.summaries, checked.inputs, strict=True)
    ]
    key = cache.collection_key(inputs, checked.figures)
    found = cache.load_collection(key)
    if found is None:
        found = check_collection(checked.summaries, rules, ctx)
        cache.store_collection(key, found)
    return found


def _collection_figures(rules: list[Rule], ctx: Context) -> bool:
    """Whether a collection rule reads every skill's token figures in this run: they are
    counted while each skill is checked."""
    return any(r.figures_when is not None and r.figures_when(ctx) for r in rules)
