"""A collection rule declares what it keeps of each skill (``per_skill=``): the summary, the
worker hand-off and the result cache carry it without a change to ``SkillSummary``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import write_skill

from skillcheck.engine.config import build_settings
from skillcheck.engine.lint import lint
from skillcheck.engine.summary import from_json, to_json
from skillcheck.rules import PerSkill, per_skill_data
from skillcheck.rules.base import Context, Input, registry, rule
from skillcheck.settings import Config
from skillcheck.source.skill import Finding, Pos, Severity, Skill, SkillSummary, Span

CODE = "SK899"


def _count(data: Any) -> int:
    if type(data) is not int:
        raise ValueError("not an integer")
    return data


def _files(skill: Skill, _summary: SkillSummary) -> int:
    return len(skill.files)


FILE_COUNT = PerSkill(name="file-count", derive=_files, load=_count, default=0)


@pytest.fixture
def most_files_rule() -> Iterator[None]:
    """A collection rule written only in this test: it reports the skill with most files."""

    @rule(
        CODE,
        "most-files",
        Severity.INFO,
        "The skill with the most files.",
        what="Reports the skill with the most files.",
        why="A test of per-skill data.",
        bad="a/SKILL.md a/x.md",
        good="a/SKILL.md",
        reads=Input.COLLECTION,
        per_skill=FILE_COUNT,
    )
    def most_files(
        skills: list[SkillSummary], ctx: Context
    ) -> Iterator[tuple[SkillSummary, Finding]]:
        top = max(skills, key=FILE_COUNT.of)
        yield top, Finding(f"{FILE_COUNT.of(top)} files", span=Span(Pos(1, 1), Pos(1, 2)))

    try:
        yield
    finally:
        del registry()[CODE]


def _run(root: Path, cache: Path) -> list[tuple[str, str]]:
    settings = build_settings(Config(), select=[CODE])
    settings = dataclasses.replace(settings, cache_dir=cache, jobs=1)
    result = lint([root], settings)
    return [(d.message, d.path.parent.name) for d in result.diagnostics]


def test_a_new_collection_rule_gets_its_data_fresh_and_from_the_cache(
    tmp_path: Path, most_files_rule: None
) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "small-one")
    write_skill(skills, "large-one", files={"a.md": "# A\n", "b.md": "# B\n"})
    cache = tmp_path / "cache"
    cold = _run(skills, cache)
    assert cold == [("3 files", "large-one")]
    assert any(cache.rglob("*")), "the run wrote its cache"
    assert _run(skills, cache) == cold  # the warm run read the counts back from the cache


def test_the_data_survives_the_cache_json_and_a_bad_value_is_refused(
    tmp_path: Path, most_files_rule: None
) -> None:
    summary = SkillSummary(
        root=tmp_path, display_root="x", skill_md=None, has_doc=True, name="x", data={}
    )
    summary.data["file-count"] = 7
    stored = to_json(summary)
    assert stored["data"] == {"file-count": 7}
    assert from_json(stored) == summary
    stored["data"]["file-count"] = "7"  # a damaged (or planted) cache entry
    with pytest.raises(ValueError, match="not an integer"):
        from_json(stored)
    stored["data"] = {"no-such-data": 1}  # written by rules this version does not have
    with pytest.raises(ValueError, match="no rule keeps"):
        from_json(stored)


def test_only_a_collection_rule_keeps_per_skill_data() -> None:
    with pytest.raises(RuntimeError, match="only a collection rule"):
        rule(
            "SK898",
            "not-collection",
            Severity.INFO,
            "x",
            what="x",
            why="x",
            bad="x",
            good="x",
            per_skill=FILE_COUNT,
        )(lambda skill, ctx: iter(()))
    assert "SK898" not in registry()


def test_the_shipped_collection_rules_declare_their_data() -> None:
    assert {"description-words", "nested-skill-md"} <= set(per_skill_data())
