"""Descriptions compared as sets of content words: the words of a description, normalised
(stemmed) for comparison, and an exact all-pairs similarity join over them (SK802; the
summaries carry each skill's words so the join needs no skill loaded).
"""

from __future__ import annotations

import math
import unicodedata

from skillcheck.source.lazy import LazyPattern

SIMILARITY = 0.6  # Jaccard similarity of content words at which descriptions collide
MINWORDS = 3  # shorter descriptions are too short to compare (SK307 reports them)
MAX_CANDIDATES = 500  # candidates verified per skill: bounds the worst case

# words that say nothing about what a skill does: grammar, and the trigger-clause phrasing
# every description shares ("Use this skill when the user asks about ...")
_STOP_TEXT = """a about an and any are as at be by can do does for from has have how i if in into
    is it its of on or our so such than that the their them then these they this those to too
    via was we what when whenever where which while who will with within without you your
    use used uses using user users ask asks asked asking want wants need needs needed
    skill skills agent claude help helps also all more other some like e g etc work working"""
STOP_WORDS = frozenset(_STOP_TEXT.split())
WORD = LazyPattern(r"[^\W_]+")


def stem(word: str) -> str:
    """A crude English stemmer: enough to equate "creates", "creating" and "create"."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies"):
        word = word[:-3] + "i"
    elif word.endswith("y"):
        word = word[:-1] + "i"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def content_words(text: str) -> list[tuple[str, str]]:
    """(stem, word) for each content word of a description, in order."""
    words = WORD.findall(unicodedata.normalize("NFKC", text).casefold())
    return [(stem(w), w) for w in words if w not in STOP_WORDS and len(w) > 1]


def description_words(text: str) -> frozenset[str]:
    """The content words of a description, normalised (stemmed) for comparison."""
    return frozenset(stem for stem, _word in content_words(text))


def similar_pairs(
    sets: list[frozenset[str]], threshold: float = SIMILARITY
) -> dict[int, tuple[int, float]]:
    """For each set, the most similar earlier set with Jaccard >= threshold: {later: (earlier, j)}.

    An exact all-pairs similarity join with prefix filtering (Bayardo et al., "Scaling up all
    pairs similarity search"): words are ordered rarest first, and two sets that reach the
    threshold must share a word among the first ``n - ceil(t*n) + 1`` of each, so only sets
    sharing a rare word are ever compared. Identical sets are matched through a dict first.
    """
    found: dict[int, tuple[int, float]] = {}
    frequency: dict[str, int] = {}
    for words in sets:
        for word in words:
            frequency[word] = frequency.get(word, 0) + 1
    # each set as an int with one bit per word: an intersection is an AND and a popcount,
    # without building a set for every candidate pair
    bits = {word: 1 << k for k, word in enumerate(frequency)}
    masks = [0] * len(sets)
    sizes = [len(words) for words in sets]
    first_of: dict[frozenset[str], int] = {}
    index: dict[str, list[int]] = {}
    for i, words in enumerate(sets):
        size = sizes[i]
        if size < MINWORDS:
            continue
        if words in first_of:
            found[i] = (first_of[words], 1.0)
            continue
        first_of[words] = i
        mask = 0
        for word in words:
            mask |= bits[word]
        masks[i] = mask
        ordered = sorted(words, key=lambda w: (frequency[w], w))
        prefix = ordered[: size - math.ceil(threshold * size) + 1]
        best, best_score = -1, 0.0
        seen: set[int] = set()
        low, high = threshold * size, size / threshold
        for word in prefix:
            for j in index.get(word, ()):
                if j in seen:
                    continue
                seen.add(j)
                if len(seen) > MAX_CANDIDATES:
                    break
                other = sizes[j]
                if not low <= other <= high:
                    continue  # sizes alone rule the pair out
                shared = (mask & masks[j]).bit_count()
                score = shared / (size + other - shared)  # Jaccard similarity
                if score >= threshold and (best < 0 or score > best_score):
                    best, best_score = j, score
            index.setdefault(word, []).append(i)
        if best >= 0:
            found[i] = (best, best_score)
    return found
