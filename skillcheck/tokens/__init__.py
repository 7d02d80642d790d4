"""Tokenizers used by the budget rules.

Two implementations share one tiny interface (``name`` and ``count``):

* ``estimate`` (the default): a stdlib-only estimator of what tiktoken's ``cl100k_base``
  would count. Its pricing model is in ``estimate``; the cl100k word pieces it splits ASCII
  words into are in ``vocab`` (loaded on the first estimate); ``ceiling`` proves most texts
  under a budget without counting them. It is deterministic and runs at tens of MB/s.
* ``tiktoken:ENCODING`` (``bpe``): the real tokenizer, when the optional ``tiktoken`` package
  is installed.

This module holds the interface, the estimator's tokenizer object and the choice of a
tokenizer by its spec (``get_tokenizer``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from skillcheck.tokens.bpe import TiktokenTokenizer, _load_tiktoken
from skillcheck.tokens.ceiling import _proves_under, estimate_ceiling
from skillcheck.tokens.estimate import _estimate, estimate_tokens

__all__ = [
    "DEFAULT_TOKENIZER",
    "EstimateTokenizer",
    "TiktokenTokenizer",
    "Tokenizer",
    "count_tokens",
    "estimate_ceiling",
    "estimate_tokens",
    "get_tokenizer",
]

DEFAULT_TOKENIZER = "estimate"


@runtime_checkable
class Tokenizer(Protocol):
    """Anything that counts tokens in text; ``name`` is what reports show."""

    name: str

    def count(self, text: str) -> int: ...

    def ceiling(self, text: str, limit: int | None = None) -> int:
        """At least ``count(text)``, found without counting: a budget rule counts only a
        text whose ceiling is over its limit. With ``limit``, a tokenizer may stop refining
        the ceiling once it is at most ``limit``."""
        ...


class EstimateTokenizer:
    """The built-in estimator (no dependency); approximates tiktoken ``cl100k_base``."""

    name = "estimate"

    def count(self, text: str) -> int:
        return estimate_tokens(text)

    def ceiling(self, text: str, limit: int | None = None) -> int:
        return estimate_ceiling(text, limit)

    def count_split(self, text: str, lines: list[str]) -> int:
        """``count(text)`` when the caller holds ``text.split("\\n")`` as ``lines``."""
        if "\r" in text:  # rare: price CRLF as LF, as estimate_tokens does
            return estimate_tokens(text)
        return _estimate(text, lines) if text else 0

    def over(self, text: str, limit: int, lines: list[str] | None = None) -> int:
        """``count(text)`` if it is over ``limit``, else 0, counting the whole text only
        when neither a ceiling nor counting part of it proves it under; ``lines``, if
        given, is ``text.split("\\n")``."""
        if _proves_under(text, limit):
            return 0
        count = self.count(text) if lines is None else self.count_split(text, lines)
        return count if count > limit else 0

    def __repr__(self) -> str:
        return "EstimateTokenizer()"


_ESTIMATOR = EstimateTokenizer()
_loaded: dict[str, Tokenizer] = {}


def get_tokenizer(spec: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """Return the tokenizer named by ``spec``: ``"estimate"`` or ``"tiktoken:ENCODING"``.

    Raises ``ValueError`` with a message fit for the user when the spec is malformed, tiktoken
    is not installed, or the encoding is unknown or cannot be loaded.
    """
    spec = spec.strip()
    kind, sep, encoding = spec.partition(":")
    kind = kind.strip().lower()
    if kind in ("", DEFAULT_TOKENIZER) and not sep:
        return _ESTIMATOR
    if kind == "tiktoken":
        encoding = encoding.strip()
        if not sep or not encoding:
            raise ValueError(
                f"tokenizer {spec!r} names no encoding: use 'tiktoken:ENCODING', "
                "e.g. 'tiktoken:cl100k_base'"
            )
        key = f"tiktoken:{encoding}"
        if key not in _loaded:  # loading a vocabulary takes ~0.3 s: once per process
            _loaded[key] = _load_tiktoken(encoding)
        return _loaded[key]
    raise ValueError(
        f"unknown tokenizer {spec!r}: use 'estimate' (built-in) or 'tiktoken:ENCODING', "
        "e.g. 'tiktoken:cl100k_base'"
    )


def count_tokens(text: str, spec: str = DEFAULT_TOKENIZER) -> int:
    """Shorthand for ``get_tokenizer(spec).count(text)``."""
    return get_tokenizer(spec).count(text)
