"""The built-in estimator's pricing model: what a BPE tokenizer such as tiktoken's
``cl100k_base`` would count, from the stdlib only.

It imitates cl100k's pre-tokenizer (whitespace, letter runs with one leading symbol, digit
groups of at most three, symbol runs). An ASCII word or identifier is split greedily, longest
match first, into pieces of cl100k's own vocabulary (``vocab``); other pieces are priced by
their class and length (symbol runs by the characters they pair), with constants calibrated on
a generated corpus of skill documents and on real skills from public repositories
(``bench/token_accuracy.py`` measures the error and re-derives them).

Speed comes from pricing each distinct whitespace-separated chunk once per process: text is
split with ``str.split`` and the chunks are looked up with ``map`` over a dict (both C speed);
only chunks never seen before go through the slower per-piece model. Word frequencies are
Zipfian, so after a few documents almost every chunk is a hit. Whitespace is priced from
per-line counts taken the same way.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from operator import itemgetter

from skillcheck.source.lazy import LazyPattern
from skillcheck.tokens.vocab import _VOCAB

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

# ASCII words are split into pieces of cl100k's vocabulary (``vocab._VocabTable``). What remains
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
