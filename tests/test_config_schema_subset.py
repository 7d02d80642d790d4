"""The built-in config validator agrees with jsonschema on skillcheck's config schema."""

from __future__ import annotations

import jsonschema
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcheck.schemas import load_schema
from skillcheck.schemas.subset import validate

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
