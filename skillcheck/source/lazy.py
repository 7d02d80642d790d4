"""Regular expressions compiled on first use.

Some patterns (wide Unicode classes, case-insensitive alternatives) take milliseconds each to
compile, and a run over clean skills never uses them; compiled at import, every start-up (the
pre-commit hook on each commit) would pay for them. The module-level patterns of the rules and
parsers are all made here: compiling them took 11 ms of a warm lint, which uses none of them.
A run about to fork workers compiles them first (``compile_all``), so the workers share one
compiled copy instead of each compiling its own.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """Stands in for ``re.compile(pattern, flags)`` at module level, and compiles it on first
    use (every one made is kept, for ``compile_all``).

    Attributes are looked up on the compiled pattern once, then kept on this object, so later
    calls cost what calling the pattern's own methods costs.
    """

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self._source = (pattern, flags)
        self._compiled: re.Pattern[Any] | None = None
        _MADE.append(self)

    def compile(self) -> re.Pattern[Any]:
        if self._compiled is None:
            self._compiled = re.compile(*self._source)
        return self._compiled

    def __getattr__(self, name: str) -> Any:  # only for names not set yet
        if name.startswith("__") or name in ("_source", "_compiled"):
            raise AttributeError(name)
        value = getattr(self.compile(), name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"


_MADE: list[LazyPattern] = []  # every pattern made (they live as long as their modules)


def compile_all() -> None:
    """Compile every pattern made so far (before forking workers: see the module's text)."""
    for pattern in _MADE:
        pattern.compile()
