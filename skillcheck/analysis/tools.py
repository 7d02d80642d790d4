"""The ``allowed-tools`` list: one splitter for the rules and their fixes."""

from __future__ import annotations


def split_tools(value: str) -> list[str]:
    """Tools from a comma- or space-separated string, keeping parenthesised arguments whole."""
    tools: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (char == "," or char.isspace()):
            if current:
                tools.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        tools.append("".join(current))
    return tools
