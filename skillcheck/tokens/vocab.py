"""cl100k's one-token ASCII word pieces, the table the estimator splits words with: how
``data/cl100k_words.bin`` is built from an encoding and read on first use."""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Iterable
from itertools import accumulate, chain, repeat
from operator import or_
from pathlib import Path

from skillcheck.source.lazy import LazyPattern

# A vocabulary entry kept in the table: ASCII letters, after at most one space or printable
# ASCII symbol (" file", "Element", ".yaml", "_name"), the shapes of cl100k's word pieces.
_VOCAB_WORD = LazyPattern(r"[ !-/:-@\[-`{-~]?[A-Za-z]+")
_VOCAB_PATH = Path(__file__).parent.parent / "data" / "cl100k_words.bin"


def build_vocab_table(tokens: Iterable[bytes], encoding: str = "cl100k_base") -> bytes:
    """The contents of ``data/cl100k_words.bin`` from an encoding's tokens (tiktoken's
    ``_mergeable_ranks`` keys), for every ASCII word piece that is one token: the CRC-32 of
    each, sorted and stored as a count per high 16 bits (65,536 bytes) then the low 16 bits
    (little-endian), after a header line ``ENCODING COUNT``; zlib-compressed.
    ``bench/token_accuracy.py --write-vocab`` writes it; a test checks it against tiktoken.
    """
    hashes = sorted(
        zlib.crc32(t) for t in set(tokens) if t.isascii() and _VOCAB_WORD.fullmatch(t.decode())
    )
    counts = bytearray(65_536)
    for h in hashes:
        counts[h >> 16] += 1  # at most 8 for cl100k: a byte is plenty
    lows = array("H", [h & 0xFFFF for h in hashes])
    if sys.byteorder == "big":
        lows.byteswap()
    header = f"{encoding} {len(hashes)}\n".encode("ascii")
    return zlib.compress(header + bytes(counts) + lows.tobytes(), 9)


class _VocabTable:
    """cl100k's one-token ASCII word pieces (87k), as hashes, read on first use.

    A word is priced as the number of vocabulary pieces that a greedy longest-match split
    makes of it: that is cl100k's own count for 98 % of the word occurrences of real skills
    (calibration repositories; the error summed over words is 1.8 % of their tokens, against
    17 % for the length model it replaces). The table holds CRC-32 hashes, not words (200 KB
    on disk, 440 KB in memory; a chance match of a non-vocabulary piece is about 1 in
    50,000), so loading it takes ~2.5 ms of C calls, paid by the first estimate and never by
    an import (the pre-commit start-up budget); a long run then holds the same hashes as a
    set (``PROMOTE``). Both answer every probe alike, chance matches included. The
    vocabulary is public data shipped with tiktoken (MIT licence).
    """

    # A split tries pieces of at most this many characters (longer ones are rare, and a
    # whole word is looked up first whatever its length): fewer probes per unknown word.
    PROBE = 16
    # Words priced by searching the arrays before the full hashes become a set: building it
    # costs ~10 ms of CPU and 7 MB, and halves the cost of every word priced after (~1.5 us
    # each), so it pays from a few thousand words on. A lint of one real skill prices a
    # median of ~430 words (its .md files, cold): the pre-commit hook never builds it.
    PROMOTE = 5_000

    def __init__(self, path: Path) -> None:
        self.path = path
        self.counts = b""
        self.starts: array[int] = array("I")
        self.lows: array[int] = array("H")
        self.hashes: frozenset[int] = frozenset()
        self.scans = 0

    def load(self) -> None:
        try:
            data = zlib.decompress(self.path.read_bytes())
            header, _, body = data.partition(b"\n")
            count = int(header.split()[1])
            if len(body) != 65_536 + 2 * count:
                raise ValueError(f"{len(body)} bytes for {count} entries")
        except (OSError, ValueError, IndexError, zlib.error) as exc:
            raise RuntimeError(
                f"skillcheck's token vocabulary {self.path} is unreadable ({exc}): "
                "reinstall agent-skillcheck"
            ) from None
        lows = array("H", body[65_536:])
        if sys.byteorder == "big":
            lows.byteswap()
        self.counts = body[:65_536]
        self.starts = array("I", accumulate(self.counts, initial=0))
        self.lows = lows

    def count(self, word: str) -> int:
        """cl100k tokens in an ASCII ``word`` (letters after at most one space or symbol)."""
        hashes = self.hashes
        if not hashes:
            if not self.lows:
                self.load()
            self.scans += 1
            if self.scans <= self.PROMOTE:
                return self.count_scan(word)
            hashes = self.hashes = self.hash_set()
        # The same split as count_scan, a probe being one set lookup (the hot path of
        # pricing a new word: ~2x faster than searching a slice of the arrays).
        crc32 = zlib.crc32
        data = word.encode("ascii")
        if crc32(data) in hashes:
            return 1  # most words of a text are one token
        n = i = 0
        end = len(data)
        probe = self.PROBE
        top = end - 1 if end <= probe else probe  # the whole word is not one token
        while True:
            for j in range(top, i + 1, -1):  # longest piece first, down to two characters
                if crc32(data[i:j]) in hashes:
                    break
            else:
                j = i + 1  # a single character is always a token
            n += 1
            if j >= end:
                return n
            i = j
            top = i + probe if i + probe < end else end

    def count_scan(self, word: str) -> int:
        """``count`` with membership searched in the arrays (the reference: no set to build)."""
        if not self.lows:
            self.load()
        # Inlined membership tests: the CRC-32 of the bytes, its high half picks the slice of
        # low halves to search.
        lows, starts, crc32 = self.lows, self.starts, zlib.crc32
        data = word.encode("ascii")
        h = crc32(data)
        if h & 0xFFFF in lows[starts[h >> 16] : starts[(h >> 16) + 1]]:
            return 1
        n = i = 0
        end = len(data)
        probe = self.PROBE
        j = max(1, min(end - 1, probe))
        while True:
            while j > i + 1:
                h = crc32(data[i:j])
                if h & 0xFFFF in lows[starts[h >> 16] : starts[(h >> 16) + 1]]:
                    break
                j -= 1
            n += 1
            i = j
            if i >= end:
                return n
            j = min(end, i + probe)

    def hash_set(self) -> frozenset[int]:
        """Every entry's full CRC-32 (high half from the counts, low half from the array)."""
        if not self.lows:
            self.load()
        # each high half repeated as many times as entries share it (C-speed, no Python loop)
        high_halves = map(repeat, range(0, 1 << 32, 1 << 16), self.counts)
        highs = array("I", chain.from_iterable(high_halves))
        return frozenset(map(or_, highs, self.lows))


_VOCAB = _VocabTable(_VOCAB_PATH)
