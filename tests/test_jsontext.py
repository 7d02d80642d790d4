"""The fast indented JSON writer gives json.dumps(indent=2, ensure_ascii=False)'s exact text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcheck.report import display
from skillcheck.source.jsontext import Rows, dumps_indented, write_indented

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
trees = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=6) | st.integers(), children, max_size=4)
        | st.tuples(children, children)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(trees)
def test_same_text_as_json_dumps(value: object) -> None:
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def _converted(value: object) -> object:
    # what the JSON report did before: string values of dicts and lists, never keys
    if isinstance(value, str):
        return display(value)
    if isinstance(value, dict):
        return {k: _converted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_converted(v) for v in value]
    return value


@settings(max_examples=300, deadline=None)
@given(trees | st.text(alphabet=st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF)))
def test_convert_applies_to_values_only(value: object) -> None:
    expected = json.dumps(_converted(value), indent=2, ensure_ascii=False)
    assert dumps_indented(value, display) == expected


def test_deep_nesting() -> None:
    value: object = {"k": None}
    for depth in range(300):
        value = [value] if depth % 2 else {"d": value, "e": []}
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_long_lists_written_in_chunks_keep_their_order() -> None:
    # tens of thousands of pieces: the writer joins them in chunks (jsontext._FLUSH) at
    # several depths, and the text must still be json.dumps's
    value = {
        "items": [
            {"n": i, "tags": [f"t{i}", None, True], "deep": [[i, [str(i)]]]} for i in range(3000)
        ],
        "after": ["x"] * 9000,
    }
    assert dumps_indented(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_rows_are_written_as_the_list_they_make() -> None:
    rows = Rows([1, 2, 3], lambda n: {"n": n, "s": f"\udc80{n}"})
    value = {"rows": rows, "empty": Rows([], str), "after": 1}
    made = {"rows": list(rows), "empty": [], "after": 1}
    assert dumps_indented(value, display) == json.dumps(
        _converted(made), indent=2, ensure_ascii=False
    )
    # the json.dumps fallback (a float is left to it) makes the rows too
    value["float"] = 1.5
    made["float"] = 1.5
    assert dumps_indented(value) == json.dumps(made, indent=2, ensure_ascii=False)


# what write_indented takes: what the reports are made of
plain_scalars = st.none() | st.booleans() | st.integers() | st.text()
plain_trees = st.recursive(
    plain_scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=6), children, max_size=4)
        | st.lists(children, max_size=4).map(lambda items: Rows(items, lambda x: x))
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(plain_trees)
def test_streamed_text_is_the_whole_text(value: object) -> None:
    chunks: list[str] = []
    write_indented(value, chunks.append, display)
    assert "".join(chunks) == dumps_indented(value, display)


def test_a_long_list_is_streamed_in_many_chunks_in_order() -> None:
    value = {"rows": Rows(range(40_000), lambda n: {"n": n, "s": str(n)}), "after": 1}
    chunks: list[str] = []
    write_indented(value, chunks.append)
    assert len(chunks) > 10 and max(map(len, chunks)) < 1_000_000
    assert "".join(chunks) == dumps_indented(value)


@pytest.mark.parametrize("value", [{"x": 1.5}, {1: "int key"}, [(1, 2)], {"s": {1, 2}}])
def test_streaming_refuses_what_only_the_fallback_writes(value: object) -> None:
    with pytest.raises(TypeError):
        write_indented(value, lambda chunk: None)


def test_rows_made_with_state_are_the_same_on_every_pass() -> None:
    def numbering():  # a fresh counter per pass, as SARIF numbers its fingerprints
        seen: dict[str, int] = {}

        def make(word: str) -> str:
            seen[word] = seen.get(word, 0) + 1
            return f"{word}:{seen[word]}"

        return make

    rows = Rows(["a", "b", "a"], numbering, per_pass=True)
    assert list(rows) == list(rows) == ["a:1", "b:1", "a:2"]
