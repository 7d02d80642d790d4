"""Regular expressions compiled on first use.

Some patterns (wide Unicode classes, case-insensitive alternatives) take milliseconds each to
compile, and a run over clean skills never uses them; compiled at import, every start-up (the
pre-commit hook on each commit) would pay for them.
"""

from __future__ import annotations

import re
from typing import Any


class LazyPattern:
    """Stands in for ``re.compile(pattern, flags)`` and compiles it on first use.

    Attributes are looked up on the compiled pattern once, then kept on this object, so later
    calls cost what calling the pattern's own methods costs.
    """

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._source = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # only for names not set yet
        if name.startswith("__") or name in ("_source", "_compiled"):
            raise AttributeError(name)
        if self._compiled is None:
            self._compiled = re.compile(*self._source)
        value = getattr(self._compiled, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"LazyPattern({self._source[0]!r})"
