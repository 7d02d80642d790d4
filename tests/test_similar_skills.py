"""SK802 near-duplicate descriptions and SK803 nested skills."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

from conftest import calls_made, invoke, lint_json, write_skill
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcheck.analysis.similarity import SIMILARITY, similar_pairs


def found(report: dict, code: str) -> list[tuple[str, int, int]]:
    return [(d["path"], d["line"], d["column"]) for d in report["diagnostics"] if d["code"] == code]


def messages(report: dict, code: str) -> list[str]:
    return [d["message"] for d in report["diagnostics"] if d["code"] == code]


def add(root: Path, name: str, description: str, body: str = "# Steps\n\nDo it.\n") -> Path:
    return write_skill(
        root, name, frontmatter=f"name: {name}\ndescription: {description}\n", body=body
    )


# --- SK802 -----------------------------------------------------------------------------------


def test_near_duplicate_description_names_the_other_skill(tmp_path: Path) -> None:
    add(tmp_path, "pdf-extract", "Extracts tables and text from PDF files. Use for PDFs.")
    add(tmp_path, "pdf-tools", "Extracts text and tables from PDF files. Use when given a PDF.")
    add(tmp_path, "word-tools", "Converts Word documents to Markdown. Use when given a DOCX.")
    _code, report = lint_json("--isolated", "--select", "SK802", ".", cwd=tmp_path)
    assert found(report, "SK802") == [("pdf-tools/SKILL.md", 3, 14)]
    text = messages(report, "SK802")[0]
    assert "'pdf-extract' (pdf-extract;" in text
    assert "shared: extracts, text, tables, pdf, files" in text


def test_different_subjects_with_the_same_phrasing_are_not_near_duplicates(
    tmp_path: Path,
) -> None:
    add(tmp_path, "pdf-tools", "Extracts text and tables from PDF files. Use when the user asks.")
    add(tmp_path, "word-tools", "Extracts text and tables from Word documents. Use when asked.")
    add(tmp_path, "k8s-deploy", "Use this skill when the user asks about Kubernetes deployments.")
    add(tmp_path, "k8s-service", "Use this skill when the user asks about Kubernetes services.")
    _code, report = lint_json("--isolated", "--select", "SK802", ".", cwd=tmp_path)
    assert found(report, "SK802") == []


def test_copies_of_one_description_are_each_reported_once(tmp_path: Path) -> None:
    text = "Profiles CSV files and summarises every column. Use when given a CSV."
    for name in ("csv-a", "csv-b", "csv-c"):
        add(tmp_path, name, text)
    _code, report = lint_json("--isolated", "--select", "SK802", ".", cwd=tmp_path)
    assert found(report, "SK802") == [("csv-b/SKILL.md", 3, 14), ("csv-c/SKILL.md", 3, 14)]
    assert all("shares 100% of its content words with that of 'csv-a'" in m for m in
               messages(report, "SK802"))  # fmt: skip


def test_same_name_is_left_to_duplicate_name(tmp_path: Path) -> None:
    text = "Profiles CSV files and summarises every column. Use when given a CSV."
    write_skill(tmp_path, "csv-a", frontmatter=f"name: csv\ndescription: {text}\n")
    write_skill(tmp_path, "csv-b", frontmatter=f"name: csv\ndescription: {text}\n")
    _code, report = lint_json("--isolated", "--select", "SK801,SK802", ".", cwd=tmp_path)
    assert found(report, "SK802") == []
    assert found(report, "SK801") == [("csv-b/SKILL.md", 2, 7)]


def test_skills_of_two_roots_are_compared_only_with_duplicate_scope_run(tmp_path: Path) -> None:
    """Two repositories linted in one run are never loaded together; `duplicate-scope =
    "run"` compares them anyway (one skills folder assembled from several sources)."""
    text = "Profiles CSV files and summarises every column. Use when given a CSV."
    write_skill(tmp_path / "a", "csv", frontmatter=f"name: csv\ndescription: {text}\n")
    write_skill(tmp_path / "b", "csv", frontmatter=f"name: csv\ndescription: {text} Fast.\n")
    _code, report = lint_json("--isolated", "--select", "SK801,SK802", ".", cwd=tmp_path)
    assert report["diagnostics"] == []
    (tmp_path / "skillcheck.toml").write_text('duplicate-scope = "run"\n', encoding="utf-8")
    _code, report = lint_json("--select", "SK801,SK802", ".", cwd=tmp_path)
    assert found(report, "SK801") == [("b/csv/SKILL.md", 2, 7)]
    (tmp_path / "skillcheck.toml").write_text('duplicate-scope = "repo"\n', encoding="utf-8")
    result = invoke("lint", "--select", "SK801", ".", cwd=tmp_path)
    assert result.exit_code == 2  # an unknown scope is a configuration error
    assert "duplicate-scope" in result.stderr


def test_the_same_kind_of_skill_for_another_product_is_not_a_near_duplicate(
    tmp_path: Path,
) -> None:
    def desc(name: str, text: str) -> None:
        write_skill(tmp_path, name, frontmatter=f"name: {name}\ndescription: {text}\n")

    desc("aws-review", "Performs an AWS Well-Architected review of the workload and its IaC.")
    desc("azure-review", "Performs an Azure Well-Architected review of the workload and its IaC.")
    desc("sdk-ios", "Zoom Video SDK for iOS native apps. Use when building custom video sessions.")
    desc("sdk-android", "Zoom Video SDK for Android native apps. Use when building video sessions.")
    desc("sdk-copy", "Zoom Video SDK for iOS native apps. Use when building video sessions.")
    _code, report = lint_json("--isolated", "--select", "SK802", ".", cwd=tmp_path)
    # only the copy that names nothing new is reported
    assert found(report, "SK802") == [("sdk-ios/SKILL.md", 3, 14)]


def _brute_force(sets: list[frozenset[str]]) -> dict[int, float]:
    out: dict[int, float] = {}
    for i, a in enumerate(sets):
        if len(a) < 3:
            continue
        scores = [len(a & b) / len(a | b) for b in sets[:i] if len(b) >= 3]
        best = max(scores, default=0.0)
        if best >= SIMILARITY:
            out[i] = best
    return out


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.frozensets(st.sampled_from("abcdefghij"), min_size=0, max_size=8),
        min_size=0,
        max_size=25,
    )
)
def test_similarity_join_finds_exactly_what_brute_force_finds(
    sets: list[frozenset[str]],
) -> None:
    found_pairs = similar_pairs(sets)
    assert {i: score for i, (_j, score) in found_pairs.items()} == _brute_force(sets)
    for i, (j, score) in found_pairs.items():
        assert j < i
        assert score == len(sets[i] & sets[j]) / len(sets[i] | sets[j])


def test_similarity_join_is_not_quadratic() -> None:
    rng = random.Random(3)
    vocab = [f"w{i}" for i in range(20_000)]
    common = ["extract", "file", "data", "report", "creat", "document", "text", "pdf"]
    sets = [
        frozenset(rng.sample(common, 3) + rng.sample(vocab, rng.randint(5, 15)))
        for _ in range(10_000)
    ]
    sets += [frozenset(["same", "template", "words", "here"])] * 500
    pairs: dict[int, tuple[int, float]] = {}
    # 10,500 sets are 55 million pairs, each compared with a call or more; the join makes
    # ~700,000 calls in all today
    calls_made(lambda: pairs.update(similar_pairs(sets)), limit=5_000_000)
    assert len([i for i in pairs if i >= 10_000]) == 499


# --- SK803 -----------------------------------------------------------------------------------


def test_nested_skill_is_reported_at_the_inner_skill_md(tmp_path: Path) -> None:
    outer = add(tmp_path, "pdf", "Extracts text and tables from PDF files. Use for PDFs.")
    add(outer, "forms", "Fills and flattens PDF forms. Use when a form must be completed.")
    add(outer / "forms", "sign", "Signs PDF documents digitally. Use when asked for a signature.")
    _code, report = lint_json("--isolated", "--select", "SK803", ".", cwd=tmp_path)
    assert found(report, "SK803") == [
        ("pdf/forms/SKILL.md", 1, 1),
        ("pdf/forms/sign/SKILL.md", 1, 1),
    ]
    texts = messages(report, "SK803")
    assert "inside the skill pdf (at forms/)" in texts[0]
    assert "inside the skill pdf/forms (at sign/)" in texts[1]
    skills = {d["path"]: d["skill"] for d in report["diagnostics"]}
    assert skills["pdf/forms/SKILL.md"] == "pdf/forms"


def test_nested_skill_is_found_from_the_outer_skill_alone(tmp_path: Path) -> None:
    outer = add(tmp_path, "pdf", "Extracts text and tables from PDF files. Use for PDFs.")
    inner = add(outer, "forms", "Fills and flattens PDF forms. Use when a form must be done.")
    (inner / "SKILL.md").rename(inner / "skill.md")  # found whatever its case
    _code, report = lint_json("--isolated", "--select", "SK803", "pdf/SKILL.md", cwd=tmp_path)
    assert found(report, "SK803") == [("pdf/forms/skill.md", 1, 1)]


def test_sibling_skills_are_not_nested(tmp_path: Path) -> None:
    for name in ("pdf", "pdf-forms"):
        add(tmp_path / "skills", name, f"Handles {name} work well. Use when {name} is named.")
    _code, report = lint_json("--isolated", "--select", "SK803", ".", cwd=tmp_path)
    assert found(report, "SK803") == []


def test_pairs_helper_handles_empty_and_tiny_inputs() -> None:
    assert similar_pairs([]) == {}
    tiny = [frozenset("ab"), frozenset("ab")]  # under three words: never compared
    assert similar_pairs(tiny) == {}
    assert list(itertools.islice(similar_pairs([frozenset("abc")] * 3).items(), 3)) == [
        (1, (0, 1.0)),
        (2, (0, 1.0)),
    ]
