"""``--profile``: where a run spent its time, per stage, on stderr (issue 33). Tested by its
shape (the stages named, a figure in each column), never by the figures themselves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import invoke
from skillgen import generate

from skillcheck.engine import cache, timing

ROW = re.compile(r"^(?P<name>.{44}) +(?P<wall>[0-9.]+|-) +(?P<cpu>[0-9.]+) +(?P<share>[0-9.]+)")


def rows(stderr: str) -> dict[str, tuple[str, str]]:
    """The profile's rows on stderr: stage -> (wall, cpu) as printed."""
    lines = stderr.splitlines()
    start = lines.index("skillcheck: profile (seconds; stages charged their own time)")
    assert lines[start + 1].split() == ["stage", "wall", "s", "cpu", "s", "cpu", "%", "calls"]
    out = {}
    for line in lines[start + 2 :]:
        found = ROW.match(line)
        if found is None:
            break
        out[found["name"].strip()] = (found["wall"], found["cpu"])
    return out


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_lint_profile_names_each_stage_with_its_figures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    monkeypatch.setattr(cache, "RACY_NS", 0)  # entries of fresh files hold their identity
    tree = tmp_path / "skills"
    generate(tree, 30)  # enough skills for worker processes with --jobs 2
    args = ["--isolated", "--jobs", jobs, "--cache-dir", str(tmp_path / "c"), str(tree)]
    result = invoke("lint", "--profile", *args)
    plain = invoke("lint", "--isolated", "--jobs", jobs, "--no-cache", str(tree))
    assert result.exit_code == plain.exit_code
    assert result.stdout == plain.stdout  # the report is untouched: the table is on stderr
    found = rows(result.stderr)
    for name in (
        "discovery (search for skills)",
        "cache: look up entries",
        "load skills (list, read)",
        "figures (token counts)",
        "cache: write entries",
        "collection rules (all skills together)",
        "report",
        "start-up (interpreter, imports)",
        "other (outside the stages above)",
        "total",
    ):
        assert name in found, name
    assert any(name.startswith("rule SK") for name in found)
    assert all(re.fullmatch(r"[0-9]+\.[0-9]{3}", cpu) for _wall, cpu in found.values())
    if jobs == "2":
        assert "wait for worker processes" in found
        assert "summed over the workers" in result.stderr
    # a warm run is all cache: no skill loaded, no rule run
    warm = rows(invoke("lint", "--profile", *args).stderr)
    assert "load skills (list, read)" not in warm
    assert not any(name.startswith("rule SK") for name in warm)


def test_pack_profile_names_the_bundle_and_the_manifest(tmp_path: Path) -> None:
    tree = tmp_path / "skills"
    generate(tree, 5)
    out = tmp_path / "out.tar.gz"
    result = invoke("pack", "--isolated", "--profile", "--no-cache", "-o", str(out), str(tree))
    assert result.exit_code == 0, result.output
    found = rows(result.stderr)
    assert {"manifest", "bundle: read, compress, write", "derive pack-record/1"} <= set(found)
    assert "Packed 5 skills" in result.stderr


def test_without_profile_nothing_is_timed(tmp_path: Path) -> None:
    tree = tmp_path / "skills"
    generate(tree, 3)
    result = invoke("lint", "--isolated", "--no-cache", str(tree))
    assert "profile" not in result.stderr
    assert timing.active() is None
    assert timing.stage("anything") is timing.stage("other")  # one shared no-op


def test_a_stage_is_charged_its_own_time_only() -> None:
    """A nested stage's time is not its enclosing stage's: the stages add up to the run."""
    profile = timing.start()
    try:
        with timing.stage("outer"):
            with timing.stage("inner"):
                sum(range(10_000))
            with timing.stage("inner"):
                pass
    finally:
        timing.stop()
    assert profile.stages["inner"][2] == 2 and profile.stages["outer"][2] == 1
    inner_wall, outer_wall = profile.stages["inner"][0], profile.stages["outer"][0]
    assert inner_wall >= 0 and outer_wall >= 0
    worker = {"inner": [1.0, 1.0, 3]}
    profile.merge(worker)
    assert profile.stages["inner"][2] == 5 and profile.workers_cpu == 1.0
