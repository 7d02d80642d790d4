"""skillcheck's per-target outcomes held to what the real runtimes did on the edge-case suite.

tests/data/runtime-verdicts.json records the verdicts of the pinned runtimes (bench/runtimes,
run offline); no runtime is needed here. A profile in skillcheck/targets.py that drifts from
its runtime fails this test: change the profile, or re-run the harness if the runtime changed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from conftest import lint_json

from skillcheck.targets import TARGETS

ROOT = Path(__file__).resolve().parents[1]
RECORDED = json.loads((ROOT / "tests/data/runtime-verdicts.json").read_text(encoding="utf-8"))
VERSIONS = json.loads((ROOT / "bench/runtimes/versions.json").read_text(encoding="utf-8"))


def _bench(name: str) -> ModuleType:
    qualified = f"bench_runtimes_{name}"
    if qualified in sys.modules:
        return sys.modules[qualified]
    spec = importlib.util.spec_from_file_location(qualified, ROOT / f"bench/runtimes/{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[qualified] = module  # dataclasses look their module up while it loads
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, dict[str, str]]]:
    """The edge-case suite as the harness built it, and skillcheck's outcome per case."""
    root = _bench("edgecases").materialise(tmp_path_factory.mktemp("edge"))
    _code, report = lint_json("--isolated", "--no-cache", "--target", "all", ".", cwd=root)
    outcomes = {Path(s["path"]).name: s["outcomes"] for s in report["skills"]}
    return root, outcomes


RUNTIMES = sorted(RECORDED["verdicts"])


def test_the_suite_is_what_was_recorded(suite: tuple[Path, dict[str, dict[str, str]]]) -> None:
    root, _ = suite
    cases = {p.name for p in _bench("edgecases").case_dirs(root)}
    assert len(cases) >= 40
    for runtime in RUNTIMES:
        assert set(RECORDED["verdicts"][runtime]) == cases, runtime


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_outcomes_match_the_recorded_runtime(
    runtime: str, suite: tuple[Path, dict[str, dict[str, str]]]
) -> None:
    root, outcomes = suite
    target = VERSIONS["runtimes"][runtime]["target"]
    assert target in TARGETS, f"{runtime} has no target {target!r}"
    compare = _bench("compare")
    wrong = []
    for case, record in sorted(RECORDED["verdicts"][runtime].items()):
        if record["verdict"] == "unknown":
            continue
        ours = outcomes.get(case, {}).get(target, "dropped")
        loads = record["verdict"] == "loaded"
        if loads != compare.LOADS[ours]:
            wrong.append(f"{case}: {runtime} {record['verdict']} but {target} says {ours}")
        elif not loads and compare.runtime_fine(record, root / case) != ours:
            # a refusal with a message is `rejected`, a silent absence `dropped`
            wrong.append(f"{case}: {runtime} {record['verdict']} but {target} says {ours}")
    assert not wrong, "\n".join([f"{target} drifted from {runtime}:", *wrong])


# fine-level differences that remain, each with why the runtime's listing cannot show it
# (bench/runtimes/README.md lists them too); every other case must match at fine level
KNOWN_FINE_DIFFERENCES = {
    # `<`/`>` break the AGENTS.md catalog `openskills sync` writes, not `openskills list`
    ("openskills", "desc-angle-brackets"): "SK304: the catalog, not the listing",
    # `skills add --list` prints names only: the U+FFFD in the description is not visible
    ("skills-cli", "non-utf8"): "SK903: the listing shows no description",
    # `validate` prints no description: it passes the one it cut at `---` ('Formats release
    # notes'); SK110 reports the cut
    ("skills-ref", "frontmatter-dashes-plain"): "SK110: the validator shows no description",
}


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_fine_outcomes_match_the_recorded_runtime(
    runtime: str, suite: tuple[Path, dict[str, dict[str, str]]]
) -> None:
    """ok vs degraded too: degraded where the runtime lists another name, another or no
    description, or does not offer the skill to the model (where its output shows these)."""
    root, outcomes = suite
    target = VERSIONS["runtimes"][runtime]["target"]
    compare = _bench("compare")
    wrong = []
    for case, record in sorted(RECORDED["verdicts"][runtime].items()):
        if record["verdict"] == "unknown" or (runtime, case) in KNOWN_FINE_DIFFERENCES:
            continue
        ours = outcomes.get(case, {}).get(target, "dropped")
        theirs = compare.runtime_fine(record, root / case)
        if theirs != ours:
            shown = record.get("shown_description")
            wrong.append(f"{case}: {runtime} {theirs} (listed {shown!r}) but {target} says {ours}")
    assert not wrong, "\n".join([f"{target} drifted from {runtime} at fine level:", *wrong])


def test_known_fine_differences_are_still_differences(
    suite: tuple[Path, dict[str, dict[str, str]]],
) -> None:
    root, outcomes = suite
    compare = _bench("compare")
    for runtime, case in KNOWN_FINE_DIFFERENCES:
        target = VERSIONS["runtimes"][runtime]["target"]
        record = RECORDED["verdicts"][runtime][case]
        assert compare.runtime_fine(record, root / case) != outcomes[case][target], (runtime, case)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_each_target_states_the_version_it_was_checked_against(runtime: str) -> None:
    target = TARGETS[VERSIONS["runtimes"][runtime]["target"]]
    version = RECORDED["versions"][runtime]
    assert version == VERSIONS["runtimes"][runtime]["version"]
    assert version in target.checked and RECORDED["checked"] in target.checked, target.checked


def test_targets_not_run_here_say_so() -> None:
    run_here = {VERSIONS["runtimes"][r]["target"] for r in RUNTIMES}
    for name, target in TARGETS.items():
        if name not in run_here:
            assert target.checked.startswith("modelled from"), name


def test_the_claude_code_listing_is_read_entry_by_entry() -> None:
    """The listing the harness captures: `(name)` when it differs from the folder, line
    breaks kept, a `- x: ` line inside a description is no entry, name-only entries past the
    budget have no description, and the section after the listing is not part of the last."""
    harness = _bench("harness")
    harness._claude_builtin_skills = {"dataviz"}
    listing = (
        "- alpha: First line.\n- not-a-skill: still alpha\n"
        "- beta (Beta Tools): Second.\n"
        "- dataviz: Built in.\n"
        "- gamma\n- delta (d)\n\nToday's date is 2026-11-28."
    )
    got = harness.listed_descriptions(listing, {"alpha", "beta", "gamma", "delta", "omega"})
    assert got == {
        "alpha": ("alpha", "First line.\n- not-a-skill: still alpha"),
        "beta": ("Beta Tools", "Second."),
        "gamma": ("gamma", None),
        "delta": ("d", None),
    }
