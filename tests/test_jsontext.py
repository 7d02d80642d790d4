"""The fast indented JSON writer gives json.dumps(indent=2, ensure_ascii=False)'s exact text."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from skillcheck.report import display
from skillcheck.source.jsontext import Rows, dumps_indented

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
