"""The built-in subset validator agrees with jsonschema on skillcheck's config and manifest
schemas."""

from __future__ import annotations

import copy
from pathlib import Path

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcheck.package.catalog import build_manifest
from skillcheck.schemas import load_schema
from skillcheck.schemas.subset import is_valid, validate
from skillcheck.source.load import load_skill

SCHEMA = load_schema("config.schema.json")
KEYS = [*SCHEMA["properties"], "unknown-key", "budgets"]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5000), st.floats(allow_nan=False),
    st.sampled_from(["all", "codex", "SK2", "ALL", "name-charset", "bad target", "ascii",
                     "unicode", "estimate", "tiktoken:cl100k_base", "tiktoken:", ""]),
    st.text(max_size=8),
)  # fmt: skip
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(["body-tokens", "x", "SK1", "skills/**", "file-bytes"]),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=6,
)
configs = st.dictionaries(st.sampled_from(KEYS), values, max_size=4)


@settings(max_examples=400, derandomize=True, deadline=None)
@given(configs)
def test_subset_validator_agrees_with_jsonschema(config: dict) -> None:
    expected = jsonschema.Draft202012Validator(SCHEMA).is_valid(config)
    assert (not validate(config, SCHEMA)) == expected
    assert is_valid(config, SCHEMA) == expected


def test_valid_config_passes_and_bad_values_fail() -> None:
    good = {
        "target": ["codex", "claude-code"],
        "select": ["ALL"],
        "ignore": ["SK306"],
        "per-path-ignores": {"legacy/**": ["SK108"]},
        "budgets": {"body-lines": 600},
        "name-charset": "unicode",
        "strict": True,
    }
    assert validate(good, SCHEMA) == []
    assert validate({"target": "nope"}, SCHEMA)
    assert validate({"budgets": {"body-lines": 0}}, SCHEMA)
    assert validate({"colour": True}, SCHEMA)


# --- the manifest schema: the subset validator is the fast path of a bundle's verify ------------

MANIFEST_SCHEMA = load_schema("manifest.schema.json")


def _manifest(tmp: Path) -> dict:
    root = tmp / "demo"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text(
        "---\nname: demo\ndescription: Makes demos. Use when asked for a demo.\n"
        "allowed-tools: Read Bash(git log:*)\n---\n# Demo\n\nSee [notes](references/notes.md).\n",
        encoding="utf-8",
    )
    (root / "references" / "notes.md").write_text("# Notes\n", encoding="utf-8")
    return build_manifest([load_skill(root, "demo")], tmp, generator="skillcheck 0.0.test")


def _paths(value: object, path: tuple = ()) -> list[tuple]:
    """Every place in a JSON value: the root, each key's value, each item."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*path, index))
    return found


REPLACEMENTS = [None, True, 0, 1, 1.0, -1, float("nan"), "", "x" * 300, "Not-A-Name",
                "sha256:00", [], {}, [1]]  # fmt: skip


def test_subset_validator_agrees_with_jsonschema_on_manifests(tmp_path: Path) -> None:
    """Each place of a real manifest replaced by each odd value, or deleted: the subset
    validator accepts exactly what jsonschema accepts, except integers written as 1.0 or
    True, which it refuses (the loader needs real integers)."""
    manifest = _manifest(tmp_path)
    jsonschema_validator = jsonschema.Draft202012Validator(MANIFEST_SCHEMA)
    assert validate(manifest, MANIFEST_SCHEMA) == []
    tried = refused = 0
    for path in _paths(manifest)[1:]:
        for replacement in [*REPLACEMENTS, DELETE]:
            mutant = copy.deepcopy(manifest)
            parent = mutant
            for part in path[:-1]:
                parent = parent[part]
            if replacement is DELETE:
                del parent[path[-1]]
            else:
                parent[path[-1]] = replacement
            expected = jsonschema_validator.is_valid(mutant)
            errors = validate(mutant, MANIFEST_SCHEMA)
            assert is_valid(mutant, MANIFEST_SCHEMA) == (not errors), (path, replacement)
            tried += 1
            refused += bool(errors)
            if expected and errors:  # only a non-integer number may be refused beyond it
                assert all(e.keyword == "type" for e in errors), (path, replacement, errors)
                assert all(isinstance(e.instance, (bool, float)) for e in errors), errors
            else:
                assert (not errors) == expected, (path, replacement, errors)
    assert refused > tried // 2  # the mutations do reach the schema's keywords


DELETE = object()
