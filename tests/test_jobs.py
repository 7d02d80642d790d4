"""``lint --jobs N``: worker processes check the skills, and nothing a user sees changes.

The output of every format and the exit code are byte-identical for ``--jobs 1`` and
``--jobs 2``, cold (workers write the result cache) and warm, and equal to a ``--no-cache``
run; more than one process really checks skills; a rule that fails inside a worker, or a
worker that dies, is a one-line internal error (exit 2), never a traceback or a hang.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import invoke, write_skill
from skillgen import add_defect, generate

from skillcheck.engine import runner as engine
from skillcheck.rules import all_rules
from skillcheck.rules.base import registry
from skillcheck.rules.collection import DESCRIPTION_WORDS

SKILLS = 48


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _line(path: Path, key: str) -> str:
    return next(
        line
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.startswith(f"{key}: ")
    )


def defect_tree(base: Path, count: int = SKILLS) -> list[Path]:
    """``count`` generated skills under ``base/skills`` with the seeded defects of skillgen,
    plus findings that involve several skills or suppressions."""
    made = generate(base / "skills", count, seed=11, findings=0.2)
    md = [skill / "SKILL.md" for skill in made]
    # SK801 on two skills (and SK206 on the second): a name taken from another skill
    _replace(md[3], _line(md[3], "name"), f"name: {made[2].name}")
    # SK802: the same description as another skill
    _replace(md[5], _line(md[5], "description"), _line(md[4], "description"))
    # SK803: a skill inside a skill (itself a skill too)
    write_skill(made[6] / "extras", "inner-tool")
    # SK108 silenced by a suppression comment in the same SKILL.md
    files: dict[str, bytes | str] = {"SKILL.md": md[8].read_text(encoding="utf-8")}
    add_defect(files, "unknown-key")
    md[8].write_text(str(files["SKILL.md"]) + "\n<!-- skillcheck-disable SK108 -->\n")
    # SK120: a suppression that silences nothing
    with md[9].open("a", encoding="utf-8") as handle:
        handle.write("\n<!-- skillcheck-disable SK501 -->\n")
    # a broken link and an unknown key that nothing silences, whatever the random defects are
    for skill, defect in ((made[10], "broken-link"), (made[11], "unknown-key")):
        files = {"SKILL.md": (skill / "SKILL.md").read_text(encoding="utf-8")}
        add_defect(files, defect)
        (skill / "SKILL.md").write_text(str(files["SKILL.md"]), encoding="utf-8")
    return made


def lint_out(cwd: Path, *args: str) -> tuple[int, str, str]:
    result = invoke("lint", "--isolated", *args, "skills", cwd=cwd)
    return result.exit_code, result.stdout, result.stderr


def test_jobs_1_and_2_give_the_same_bytes_in_every_format(tmp_path: Path) -> None:
    made = defect_tree(tmp_path)
    exit_code, report, _err = lint_out(tmp_path, "--jobs", "1", "--no-cache", "--format", "json")
    data = json.loads(report)
    assert exit_code == 1
    assert len(data["skills"]) == SKILLS + 1  # the nested skill is a skill too
    by_code: dict[str, set[str]] = {}
    for diag in data["diagnostics"]:
        by_code.setdefault(diag["code"], set()).add(diag["path"].split("/")[1])
    # the tree holds what it should: findings across skills, suppressed and unused ones

    def pair(code: str, one: Path, other: Path) -> bool:
        """A ``code`` diagnostic on one of the two skills names the other."""
        return any(
            d["code"] == code
            and (
                (
                    d["path"].startswith(f"skills/{one.name}/")
                    and f"skills/{other.name}" in d["message"]
                )
                or (
                    d["path"].startswith(f"skills/{other.name}/")
                    and f"skills/{one.name}" in d["message"]
                )
            )
            for d in data["diagnostics"]
        )

    assert pair("SK801", made[2], made[3])
    assert pair("SK802", made[4], made[5])
    assert made[6].name in by_code["SK803"]
    assert made[9].name in by_code["SK120"]
    assert made[10].name in by_code["SK501"]
    assert made[11].name in by_code["SK108"]
    assert made[8].name not in by_code["SK108"]

    for fmt in ("text", "json"):  # json counts tokens too: its entries hold more
        serial = lint_out(tmp_path, "--jobs", "1", "--no-cache", "--format", fmt)
        assert serial[0] == 1, (fmt, serial[2])
        assert serial[1], fmt
        cache = f"--cache-dir=cache-{fmt}"
        assert lint_out(tmp_path, "--jobs", "2", cache, "--format", fmt) == serial, fmt  # cold
        assert lint_out(tmp_path, "--jobs", "2", cache, "--format", fmt) == serial, fmt  # warm
        assert lint_out(tmp_path, "--jobs", "1", cache, "--format", fmt) == serial, fmt
        assert lint_out(tmp_path, "--jobs", "2", "--no-cache", "--format", fmt) == serial, fmt
        # the workers wrote the cache: an entry for every skill
        roots = Counter(
            json.loads(entry.read_bytes())["record"].get("root")
            for entry in (tmp_path / f"cache-{fmt}").glob("*/*.json")
        )
        skills = {str(s) for s in made} | {str(made[6] / "extras" / "inner-tool")}
        assert {root: n for root, n in roots.items() if root is not None} == dict.fromkeys(
            skills, 1
        ), fmt
    for fmt in ("sarif", "github", "junit"):
        serial = lint_out(tmp_path, "--jobs", "1", "--no-cache", "--format", fmt)
        assert serial[0] == 1, (fmt, serial[2])
        assert serial[1], fmt
        assert lint_out(tmp_path, "--jobs", "2", "--no-cache", "--format", fmt) == serial, fmt
        # the entries the text runs made serve every format that does not count tokens
        assert lint_out(tmp_path, "--jobs", "2", "--cache-dir=cache-text", "--format", fmt) == (
            serial
        ), fmt


def _record_pids(monkeypatch: pytest.MonkeyPatch, where: Path) -> None:
    """Every process that checks a skill appends the skill's name to a file named by its pid
    (a forked worker inherits the patched class)."""
    where.mkdir()
    real = engine.Checker.__call__
    # each worker's first skill waits for the other's: neither takes every chunk before the
    # other has started (made before the pool forks its workers, which inherit it)
    both_started = multiprocessing.Barrier(2)
    begun: list[int] = [os.getpid()]  # the main process checks alone when it checks

    def spy(self, task):
        with open(where / str(os.getpid()), "a", encoding="utf-8") as handle:
            handle.write(f"{task[0].name}\n")
        if os.getpid() not in begun:
            begun.append(os.getpid())
            both_started.wait(timeout=120)  # a hang guard
        return real(self, task)

    monkeypatch.setattr(engine.Checker, "__call__", spy)


def _checked_by(where: Path) -> dict[int, list[str]]:
    return {int(p.name): p.read_text(encoding="utf-8").split() for p in where.iterdir()}


def test_two_jobs_check_skills_in_two_worker_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillcheck.engine.config import build_settings
    from skillcheck.engine.lint import lint
    from skillcheck.settings import Config

    made = generate(tmp_path / "skills", 40, seed=3, findings=0.3)
    monkeypatch.chdir(tmp_path)
    settings = build_settings(Config())
    serial = lint([Path("skills")], settings)

    _record_pids(monkeypatch, tmp_path / "pids")
    parallel = lint([Path("skills")], dataclasses.replace(settings, jobs=2))
    checked = _checked_by(tmp_path / "pids")
    assert len(checked) == 2, checked.keys()
    assert os.getpid() not in checked  # the main process only collects
    names = sorted(name for names in checked.values() for name in names)
    assert names == sorted(skill.name for skill in made)  # each skill checked exactly once
    assert parallel.how == Counter(checked=40)
    assert parallel.diagnostics == serial.diagnostics
    assert [s.root for s in parallel.skills] == [s.root for s in serial.skills]


@pytest.mark.parametrize("jobs", [1, 2])
def test_description_words_are_held_once_across_skills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """The main process holds every skill's summary until the report: a word that many
    descriptions share is one string, however many skills (and workers) it came from."""
    from skillcheck.engine.config import build_settings
    from skillcheck.engine.lint import lint
    from skillcheck.settings import Config

    for i in range(30):
        write_skill(
            tmp_path / "skills",
            f"tool-{i:02d}",
            frontmatter=f"name: tool-{i:02d}\ndescription: Converts spreadsheets into"
            f" invoices number {i}. Use when the user asks for billing exports.\n",
        )
    monkeypatch.chdir(tmp_path)
    settings = dataclasses.replace(build_settings(Config()), jobs=jobs)
    result = lint([Path("skills")], settings)
    assert len(result.skills) == 30
    copies = {
        id(word)
        for skill in result.skills
        for word in DESCRIPTION_WORDS.of(skill)
        if word.startswith("spreadsheet")
    }
    assert len(copies) == 1


def test_a_warm_run_checks_the_few_changed_skills_here_and_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Many skills, few to check (the cache answered for the rest): no workers, and the
    report is still the whole tree's, in order."""
    from skillcheck.engine import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)  # entries of fresh files hold their identity
    made = defect_tree(tmp_path, 30)
    store = f"--cache-dir={tmp_path / 'cache'}"
    assert lint_out(tmp_path, "--jobs", "2", store, "--format", "json")[0] == 1
    for skill in (made[0], made[13], made[29]):
        with (skill / "SKILL.md").open("a", encoding="utf-8") as handle:
            handle.write("\nSee [the notes](references/notes.md).\n")
    _record_pids(monkeypatch, tmp_path / "pids")
    warm = lint_out(tmp_path, "--jobs", "2", store, "--format", "json")
    assert list(_checked_by(tmp_path / "pids")) == [os.getpid()]
    assert sorted(_checked_by(tmp_path / "pids")[os.getpid()]) == sorted(
        s.name for s in (made[0], made[13], made[29])
    )
    assert warm == lint_out(tmp_path, "--jobs", "1", "--no-cache", "--format", "json")
    broken = {d["path"] for d in json.loads(warm[1])["diagnostics"] if d["code"] == "SK501"}
    assert {f"skills/{s.name}/SKILL.md" for s in (made[0], made[13], made[29])} <= broken


def test_few_skills_are_checked_in_the_main_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below engine.PARALLEL_MIN skills, starting workers would cost more than it saves."""
    generate(tmp_path / "skills", engine.PARALLEL_MIN - 1)
    _record_pids(monkeypatch, tmp_path / "pids")
    exit_code, _out, err = lint_out(tmp_path, "--jobs", "2", "--no-cache")
    assert exit_code == 0, err
    checked = _checked_by(tmp_path / "pids")
    assert list(checked) == [os.getpid()]
    assert len(checked[os.getpid()]) == engine.PARALLEL_MIN - 1


def _break_rule(monkeypatch: pytest.MonkeyPatch, code: str, victim: str, how) -> str:
    """Make rule ``code`` call ``how()`` on the skill whose directory is ``victim``; forked
    workers inherit the patched registry. Returns the rule's slug."""
    all_rules()
    original = registry()[code]

    def check(skill, ctx):
        if skill.root.name == victim:
            how()
        yield from original.check(skill, ctx)

    monkeypatch.setitem(registry(), code, dataclasses.replace(original, check=check))
    monkeypatch.delenv("SKILLCHECK_DEBUG", raising=False)
    return original.slug


def test_a_rule_failing_in_a_worker_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = generate(tmp_path / "skills", 40, seed=5)
    victim = made[31].name

    def boom() -> None:
        raise ZeroDivisionError("deliberate")

    slug = _break_rule(monkeypatch, "SK113", victim, boom)
    started = time.monotonic()
    exit_code, out, err = lint_out(tmp_path, "--jobs", "2", "--no-cache")
    # a hang guard, generous for a loaded machine: the pool is shut down, not waited on forever
    assert time.monotonic() - started < 120
    assert exit_code == 2
    assert out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(
        f"skillcheck: error: internal error: rule SK113 ({slug}) failed on skills/{victim}: "
        "ZeroDivisionError: deliberate"
    ), err
    # the same message as without workers
    assert lint_out(tmp_path, "--jobs", "1", "--no-cache") == (exit_code, out, err)


def test_a_worker_that_dies_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = generate(tmp_path / "skills", 40, seed=5)
    main = os.getpid()

    def die() -> None:
        if os.getpid() != main:  # only ever kill a worker, never the test process
            os._exit(9)

    _break_rule(monkeypatch, "SK113", made[20].name, die)
    exit_code, out, err = lint_out(tmp_path, "--jobs", "2", "--no-cache")
    assert exit_code == 2
    assert out == ""
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert "internal error: a worker process died" in err
    assert "--jobs 1" in err


def test_jobs_0_and_the_default_use_every_available_cpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = defect_tree(tmp_path, 30)
    serial = lint_out(tmp_path, "--jobs", "1", "--no-cache")
    assert serial[0] == 1

    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    _record_pids(monkeypatch, tmp_path / "pids")
    assert lint_out(tmp_path, "--jobs", "0", "--no-cache") == serial
    checked = _checked_by(tmp_path / "pids")
    assert len(checked) == 2 and os.getpid() not in checked
    assert sum(len(names) for names in checked.values()) == len(made) + 1

    for path in (tmp_path / "pids").iterdir():
        path.unlink()
    assert lint_out(tmp_path, "--no-cache") == serial  # no --jobs: the same as --jobs 0
    assert len(_checked_by(tmp_path / "pids")) == 2

    # one available CPU: everything is checked here
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    for path in (tmp_path / "pids").iterdir():
        path.unlink()
    assert lint_out(tmp_path, "-j", "0", "--no-cache") == serial
    assert list(_checked_by(tmp_path / "pids")) == [os.getpid()]


@pytest.mark.parametrize("value", ["-1", "two", "1.5", ""])
def test_a_bad_jobs_value_is_a_usage_error(tmp_path: Path, value: str) -> None:
    write_skill(tmp_path / "skills", "pdf-tools")
    exit_code, out, err = lint_out(tmp_path, "--jobs", value)
    assert exit_code == 2
    assert out == ""
    assert "Invalid value for '--jobs'" in err
    assert "Traceback" not in err


def test_spawned_workers_give_the_same_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """macOS and Windows start workers with spawn, which imports skillcheck afresh (no rule
    module loaded yet, no state inherited): the result is the same as in one process."""
    defect_tree(tmp_path, 30)
    monkeypatch.setattr(engine, "START_METHOD", "spawn")
    code, spawned, err = lint_out(tmp_path, "--no-cache", "--jobs", "2", "--format", "json")
    assert err == ""
    monkeypatch.undo()
    assert (code, spawned) == lint_out(tmp_path, "--no-cache", "--jobs", "1", "--format", "json")[
        :2
    ]
    assert json.loads(spawned)["summary"]["skills"] == 31
