"""The ``allowed-tools`` list: one splitter for the rules and their fixes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import pairwise


def separators(value: str, is_separator: Callable[[str], bool]) -> Iterator[int]:
    """Indexes of the separator characters outside parentheses: ``Bash(git add, commit)``
    is one tool, whatever it holds."""
    depth = 0
    for index, char in enumerate(value):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and is_separator(char):
            yield index


def _comma_or_space(char: str) -> bool:
    return char == "," or char.isspace()


def split_tools(value: str) -> list[str]:
    """Tools from a comma- or space-separated string, keeping parenthesised arguments whole."""
    cuts = [-1, *separators(value, _comma_or_space), len(value)]
    return [value[a + 1 : b] for a, b in pairwise(cuts) if b > a + 1]


def comma_items(value: str) -> list[str]:
    """The items between commas outside parentheses, stripped (empty ones kept)."""
    cuts = [-1, *separators(value, ",".__eq__), len(value)]
    return [value[a + 1 : b].strip() for a, b in pairwise(cuts)]


def first_comma(value: str) -> int:
    """Index of the first comma outside parentheses, or -1."""
    return next(separators(value, ",".__eq__), -1)
