"""Ceilings of the estimate, for the budget rules: most texts are far under their budget,
and proving it costs a few scans of the text (or counting part of it) instead of pricing every
chunk."""

from __future__ import annotations

import math
from itertools import pairwise

from skillcheck.source.lazy import LazyPattern
from skillcheck.tokens.estimate import (
    _CACHE_MAX,
    _NEWLINE,
    _NEWLINE_AFTER_SYMBOL,
    _SPACE_RUN,
    _TAB,
    _digest,
    _memo,
    _proven,
    _raw_estimate,
)

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
