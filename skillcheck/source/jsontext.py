"""Indented JSON text, byte-identical to ``json.dumps(value, indent=2, ensure_ascii=False)``.

``json.dumps`` with ``indent`` runs the pure-Python encoder (CPython's C encoder only serves
compact output), which made rendering a large lint report a third of a warm run. Reports are
trees of dicts, lists, strings, numbers, booleans and None: this writer walks them with the C
string escaper and falls back to ``json.dumps`` for anything else, so the bytes never differ.
``write_indented`` hands the text on in chunks as it is made (a report of 100,000 findings is
never one string in memory); it has no fallback, so it takes only those types.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from json.encoder import encode_basestring  # the C escaper when _json is available
from typing import Any

# Pieces written before they are joined into one chunk: a report of 40,000 diagnostics is
# ~1.5 million pieces, whose list and string objects took ~100 MB next to a 13 MB text.
_FLUSH = 8192


class _Unusual(Exception):
    """A value this writer leaves to ``json.dumps`` (non-str keys, floats, other types)."""


class Rows:
    """A JSON array whose items are made one at a time while the text is written, then
    dropped: ``make(item)`` for each item of ``source`` (a report's 40,000 diagnostic
    objects are never all alive at once). With ``per_pass``, ``make`` is called with no
    argument at the start of each pass over the items and returns the function that makes
    them: items made with state kept from one to the next (SARIF numbers its fingerprints)
    come out the same on every pass."""

    __slots__ = ("make", "per_pass", "source")

    def __init__(
        self, source: Sequence[Any], make: Callable[..., Any], *, per_pass: bool = False
    ) -> None:
        self.source = source
        self.make = make
        self.per_pass = per_pass

    def __iter__(self) -> Iterator[object]:
        return map(self.make() if self.per_pass else self.make, self.source)


def dumps_indented(value: object, convert: Callable[[str], str] | None = None) -> str:
    """``json.dumps(value, indent=2, ensure_ascii=False)``, with every string value of a dict
    or list passed through ``convert`` first when given (keys are kept as they are)."""
    try:
        parts: list[str] = []
        done: list[str] = []
        _write(value, "\n", parts, convert, done.append)
        done.append("".join(parts))
        return "".join(done)
    except (_Unusual, RecursionError):
        return json.dumps(_converted(value, convert), indent=2, ensure_ascii=False)


def write_indented(
    value: object, sink: Callable[[str], object], convert: Callable[[str], str] | None = None
) -> None:
    """``dumps_indented``'s text, passed to ``sink`` in chunks as it is made. Takes dicts with
    string keys, lists, ``Rows``, strings, integers, booleans and None only (what it has
    already passed on cannot be taken back): anything else raises TypeError."""
    parts: list[str] = []
    try:
        _write(value, "\n", parts, convert, sink)
    except _Unusual:
        raise TypeError(
            "write_indented takes dicts with string keys, lists, Rows, str, int, bool and None only"
        ) from None
    sink("".join(parts))


def _write(
    value: object,
    newline: str,
    out: list[str],
    convert: Callable[[str], str] | None,
    done: Callable[[str], object],
) -> None:
    """Append ``value``'s text to ``out``; full lists of pieces are joined and passed to
    ``done``."""
    # exact types only: subclasses (bool of int, str enums) keep json's own rendering
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(convert(value) if convert else value))  # type: ignore[arg-type]
    elif kind is dict:
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        first = True
        for key, item in value.items():  # type: ignore[attr-defined]
            if type(key) is not str:
                raise _Unusual
            out.append(("{" if first else ",") + inner)
            first = False
            out.append(encode_basestring(key))
            out.append(": ")
            _write(item, inner, out, convert, done)
        out.append(newline + "}")
    elif kind is list or kind is Rows:
        if not (value.source if kind is Rows else value):  # type: ignore[attr-defined]
            out.append("[]")
            return
        inner = newline + "  "
        first = True
        for item in value:  # type: ignore[attr-defined]
            out.append(("[" if first else ",") + inner)
            first = False
            _write(item, inner, out, convert, done)
            if len(out) >= _FLUSH:  # in order: what went to ``done`` comes before ``out``
                done("".join(out))
                out.clear()
        out.append(newline + "]")
    elif kind is int:
        out.append(int.__repr__(value))  # type: ignore[arg-type]
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    else:
        raise _Unusual


def _converted(value: object, convert: Callable[[str], str] | None) -> object:
    if isinstance(value, Rows):
        value = list(value)  # json.dumps knows lists
    if isinstance(value, str):
        return value if convert is None else convert(value)
    if isinstance(value, dict):
        return {k: _converted(v, convert) for k, v in value.items()}
    if isinstance(value, list):
        return [_converted(v, convert) for v in value]
    return value
