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
import itertools
import os
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck.model import Skill, SkillSummary
from skillcheck.rules import Context, Rule

# below this many skills to check, starting processes costs more than it saves
PARALLEL_MIN = 24
# fork starts a worker in milliseconds with every module already imported; elsewhere
# (macOS, Windows) spawn is the safe choice
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"

Task = tuple[int, Path, str, Any, Any]  # (index, root, display root, listing, cache entry)
# (index, summary, how it was obtained, digest of its input files for the cache or None)
Done = tuple[int, SkillSummary, str, "str | None"]


def available_cpus() -> int:
    """CPUs this process may run on (the affinity mask, as a container or taskset sets it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class Checked:
    summaries: list[SkillSummary]
    loaded: list[Skill] = field(default_factory=list)
    how: Counter[str] = field(default_factory=Counter)
    cache: Any = None  # the ResultCache, when there is one
    # what each summary was computed from (cache.input_digest), when the cache knows
    inputs: list[str | None] = field(default_factory=list)
    figures: bool = False


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


class Checker:
    """Checks one skill (a Task) and returns it Done: (index, summary, how it was obtained,
    the digest of its inputs when the cache is on)."""

    def __init__(self, spec: CheckerSpec, keep: bool = False) -> None:
        from skillcheck.rules import all_rules

        # all_rules, not the bare registry: a spawned worker has imported no rule module yet
        rules = {r.code: r for r in all_rules()}
        self.rules: list[Rule] = [rules[code] for code in spec.rule_codes]
        self.ctx = Context(targets=spec.targets, options=spec.options)
        self.figures = spec.figures
        self.inputs = spec.inputs
        self.cache = None
        if spec.cache_dir is not None and spec.cache_key is not None:
            from skillcheck.cache import ResultCache

            self.cache = ResultCache(spec.cache_dir, spec.cache_key)
            self.cache.started_ns = spec.started_ns
        # skills checked in this process, by index, when the caller keeps them
        self.kept: dict[int, Skill] | None = {} if keep else None

    def __call__(self, task: Task) -> Done:
        from skillcheck.load import load_skill

        index, root, display_root, listing, entry = task
        skill = load_skill(root, display_root, listing)
        cache = self.cache
        if entry is not None and cache is not None:
            from skillcheck.cache import input_digest, same_content

            if same_content(skill, entry):
                summary = cache.summary_of(entry, self.figures)
                if summary is not None:
                    cache.store(root, cache.refreshed(entry, skill))
                    summary.display_root = display_root
                    summary.inputs = {"shape": entry["shape"], "reads": entry["reads"]}
                    if self.kept is not None:
                        self.kept[index] = skill
                    return index, summary, "content", input_digest(entry)
        return self.check(index, skill)

    def check(self, index: int, skill: Skill) -> Done:
        """Run the rules on a loaded skill and summarise it (and cache the summary)."""
        from skillcheck.lint import check_skill
        from skillcheck.summary import summarise

        root = skill.root
        cache = self.cache
        diagnostics = check_skill(skill, self.rules, self.ctx)
        summary = summarise(skill, diagnostics, self.ctx, self.figures)
        digest = None
        if cache is not None or self.inputs:
            from skillcheck.cache import input_digest, inputs_of

            summary.inputs = inputs_of(skill)
            if cache is not None:
                record = cache.record(skill, summary, summary.inputs, self.figures)
                cache.store(root, record)
                digest = input_digest(record)
        if self.kept is not None:
            self.kept[index] = skill
        return index, summary, "checked", digest


# --- worker processes ---------------------------------------------------------------------

_WORKER: Checker | None = None


def _init_worker(spec: CheckerSpec) -> None:
    import signal

    global _WORKER
    # Ctrl-C goes to the whole process group: the main process stops the pool and reports it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _WORKER = Checker(spec)


def _work(task: Task) -> Done:
    assert _WORKER is not None
    return _WORKER(task)


def _in_pool(spec: CheckerSpec, tasks: Iterable[Task], jobs: int, chunk: int) -> Iterator[Any]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from skillcheck.lint import InternalError

    pool = ProcessPoolExecutor(
        jobs,
        mp_context=multiprocessing.get_context(START_METHOD),
        initializer=_init_worker,
        initargs=(spec,),
    )
    try:
        yield from pool.map(_work, tasks, chunksize=chunk)
    except BrokenProcessPool as exc:
        raise InternalError(f"a worker process died ({exc}); run again with --jobs 1") from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _results(
    checker: Checker, spec: CheckerSpec, tasks: Iterator[Task], jobs: int, total: int
) -> Iterator[Done]:
    """Check ``tasks`` here until it is clear there are enough of them for workers."""
    if jobs <= 1 or total < PARALLEL_MIN:
        yield from map(checker, tasks)
        return
    head = list(itertools.islice(tasks, PARALLEL_MIN))
    if len(head) < PARALLEL_MIN:  # the cache answered for most skills
        yield from map(checker, head)
        return
    jobs = min(jobs, total)
    chunk = max(1, min(16, total // (jobs * 8)))
    yield from _in_pool(spec, itertools.chain(head, tasks), jobs, chunk)


def check_all(
    roots: list[Path], rules: list[Rule], ctx: Context, settings: Any, *, keep: bool = False
) -> Checked:
    """A summary for every skill root, in order (see the module docstring)."""
    import time

    from skillcheck.report import display_path

    figures = settings.figures or _collection_budget(rules, ctx)
    spec = CheckerSpec([r.code for r in rules], ctx.targets, ctx.options, figures, inputs=keep)
    cwd = Path.cwd()
    if settings.cache_dir is not None:
        from skillcheck.cache import run_key

        spec.cache_dir = Path(settings.cache_dir)
        spec.cache_key = run_key(spec.rule_codes, ctx.targets, ctx.options, cwd)
        spec.started_ns = time.time_ns()
    checker = Checker(spec, keep=keep)
    cache = checker.cache  # the main process's own view of the cache (workers have theirs)
    summaries: list[SkillSummary | None] = [None] * len(roots)
    inputs: list[str | None] = [None] * len(roots)
    how: Counter[str] = Counter()

    def tasks() -> Iterator[Task]:
        for index, root in enumerate(roots):
            display_root = display_path(root, cwd)
            if cache is None:
                yield index, root, display_root, None, None
                continue
            from skillcheck.load import scan

            listing = scan(root)
            hit, entry = cache.lookup(root, listing, figures)
            if hit is not None:
                from skillcheck.cache import input_digest

                hit.display_root = display_root
                hit.inputs = {"shape": entry["shape"], "reads": entry["reads"]}  # type: ignore[index]
                summaries[index] = hit
                inputs[index] = input_digest(entry)  # type: ignore[arg-type]
                how["cached"] += 1
                continue
            yield index, root, display_root, listing, entry

    # the objects made so far (modules, rules, the discovery) live until the end: keep the
    # collector from scanning them again and again as summaries accumulate
    gc.freeze()
    try:
        jobs = max(1, settings.jobs)
        for index, summary, way, digest in _results(checker, spec, tasks(), jobs, len(roots)):
            summaries[index] = summary
            inputs[index] = digest
            how[way] += 1
    finally:
        gc.unfreeze()
    done: list[SkillSummary] = [s for s in summaries if s is not None]
    assert len(done) == len(roots)
    loaded: list[Skill] = []
    if keep:  # skills checked elsewhere (a worker, an earlier run) are loaded here again
        kept = checker.kept or {}
        for i, summary in enumerate(done):
            skill = kept.get(i)
            if skill is None:
                skill = _load_again(summary)
                if summary.inputs is None or not _unchanged(skill, summary.inputs):
                    # edited since its check: check it again as it is now, so the verdict
                    # is about exactly what the caller goes on to read
                    _index, done[i], _way, inputs[i] = checker.check(i, skill)
                    how["rechecked"] += 1
            loaded.append(skill)
    return Checked(done, loaded, how, cache, inputs, figures)


def _load_again(summary: SkillSummary) -> Skill:
    from skillcheck.load import load_skill

    return load_skill(summary.root, summary.display_root)


def _unchanged(skill: Skill, inputs: dict[str, Any]) -> bool:
    """Whether ``skill`` (loaded now) holds what a summary was computed from."""
    from skillcheck.cache import same_content

    return same_content(skill, inputs)


def collection_diagnostics(checked: Checked, rules: list[Rule], ctx: Context) -> list[Any]:
    """The collection rules' diagnostics: computed, or taken from the cache when every
    skill's input is what it was when they were last computed."""
    from skillcheck.lint import check_collection

    cache = checked.cache
    if cache is None or any(digest is None for digest in checked.inputs):
        return check_collection(checked.summaries, rules, ctx)
    inputs = [
        (str(s.root), s.display_root, digest)
        for s, digest in zip(checked.summaries, checked.inputs, strict=True)
    ]
    key = cache.collection_key(inputs, checked.figures)
    found = cache.load_collection(key)
    if found is None:
        found = check_collection(checked.summaries, rules, ctx)
        cache.store_collection(key, found)
    return found


def _collection_budget(rules: list[Rule], ctx: Context) -> bool:
    """SK608 compares every skill's catalog tokens: they are counted when it is checked."""
    limit = (ctx.option("budgets") or {}).get("collection-catalog-tokens")
    return limit is not None and any(r.code == "SK608" for r in rules)
