"""Tokenizers: the built-in estimator (determinism, robustness, accuracy) and tiktoken specs."""

from __future__ import annotations

import importlib.util
import itertools
import math
import random
import statistics
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from conftest import assert_linear, cpu_seconds
from hypothesis import given, settings
from hypothesis import strategies as st

from skillcheck import tokens
from skillcheck.tokens import (
    DEFAULT_TOKENIZER,
    EstimateTokenizer,
    Tokenizer,
    ceiling,
    count_tokens,
    estimate,
    estimate_tokens,
    get_tokenizer,
    vocab,
)

ROOT = Path(__file__).resolve().parent.parent


def _load_corpus_module():
    # bench/ is not a package: load the generator by path, once.
    if "token_corpus" in sys.modules:
        return sys.modules["token_corpus"]
    path = ROOT / "bench" / "token_corpus.py"
    spec = importlib.util.spec_from_file_location("token_corpus", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["token_corpus"] = module  # dataclasses look their module up while defined
    spec.loader.exec_module(module)
    return module


def test_every_sentence_template_of_the_corpus_renders() -> None:
    # the templates are data (bench/token_corpus_words.json): a slot naming no word list or
    # generator, or left unfilled, would fail here rather than in a calibration run
    corpus = _load_corpus_module()
    rng = random.Random(0)
    for template in corpus.SENTENCES:
        text = corpus.render(rng, template)
        assert "{" not in text and "}" not in text, (template, text)
        assert text.strip() == text and len(text) > 20, (template, text)


SAMPLE = """---
name: pdf-form-filler
description: Fill PDF forms. Use when the user asks to complete a form.
---

# PDF form filler

Run `python scripts/fill.py input.pdf --out out/` and check the result (exit code 0).

| Option | Default |
| ------ | ------- |
| `--dpi` | 300 |

```python
def fill(path: str) -> dict:
    return {"pages": 3}
```

- 请不要修改原始文件。
- Не изменяйте исходный файл. ✅
"""


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------


def test_default_tokenizer_is_the_estimator() -> None:
    tok = get_tokenizer()
    assert DEFAULT_TOKENIZER == "estimate"
    assert isinstance(tok, EstimateTokenizer)
    assert isinstance(tok, Tokenizer)
    assert tok.name == "estimate"
    assert get_tokenizer("estimate") is tok
    assert get_tokenizer(" Estimate ") is tok
    assert tok.count(SAMPLE) == estimate_tokens(SAMPLE) == count_tokens(SAMPLE)


def test_empty_and_whitespace() -> None:
    assert estimate_tokens("") == 0
    for text in (" ", "\n", "\n\n\n", "\t", "   \n  "):
        assert estimate_tokens(text) >= 1


def test_deterministic_whatever_the_cache_state() -> None:
    first = estimate_tokens(SAMPLE)
    estimate._clear_caches()
    cold = estimate_tokens(SAMPLE)
    warm = estimate_tokens(SAMPLE)
    assert first == cold == warm


def test_fast_whitespace_path_matches_the_fitted_features() -> None:
    # estimate_tokens prices whitespace without Python loops; the calibration fits the
    # constants on _whitespace_features. Both must describe the same quantity.
    corpus = _load_corpus_module().generate_corpus(seed=7, count=26)
    for doc in [*corpus, SAMPLE, "1. one\n2. two", "  indented\n\tx\n", "a  b   c\n"]:
        text = doc if isinstance(doc, str) else doc.text
        chunks = sum(estimate._chunk_cost(c) for c in text.split())
        expected = max(1, round(chunks + estimate._whitespace_cost(text)))
        assert abs(estimate_tokens(text) - expected) <= 1


def test_huge_text_is_linear() -> None:
    block = SAMPLE * 40  # ~20 KB
    one = estimate_tokens(block)
    many = estimate_tokens(block * 200)  # ~4 MB
    assert abs(many - 200 * one) <= 200 * 2  # the join adds at most a token or two
    assert_linear(lambda n: cpu_seconds(lambda: estimate_tokens(block * n)), 50, what="tokens")


def test_long_chunks_and_odd_input() -> None:
    for text in (
        "a" * 100_000,
        "9" * 10_000,
        "-" * 5_000,
        "😀" * 3_000,
        "漢" * 3_000,
        "x" + "\u0301" * 500,  # combining marks
        "\x00\x01\x7f",
        "\ud800",  # a lone surrogate can reach us from a lax decoder
        "https://example.com/" + "a/" * 2_000,
    ):
        n = estimate_tokens(text)
        assert isinstance(n, int)
        assert n >= 1


def test_crlf_counts_as_lf() -> None:
    # cl100k counts a CRLF file within 1 % of its LF form; priced line by line, every "\r"
    # would be a line end of its own.
    crlf = SAMPLE.replace("\n", "\r\n")
    assert estimate_tokens(crlf) == estimate_tokens(SAMPLE)
    lines = crlf.split("\n")
    assert EstimateTokenizer().count_split(crlf, lines) == estimate_tokens(SAMPLE)


def test_symbol_pair_tables_decode_to_pairs() -> None:
    # The rate tables store two-character pairs concatenated: an odd length would shift every
    # pair after it.
    for rate, keys in estimate._PAIR_RATES.items():
        assert len(keys) % 2 == 0, rate
    assert all(len(k) == 2 for k in estimate._PAIR)
    assert all(len(k) == 1 and not k.isascii() for k in estimate._INNER)
    assert len(estimate._PAIR) == sum(len(k) // 2 for k in estimate._PAIR_RATES.values())


@pytest.mark.parametrize(
    "text",
    [
        "┌" + "─" * 60 + "┐\n│ box │\n└" + "─" * 60 + "┘",  # box drawing (was 5x too high)
        "═" * 60,
        "| Option | Default |\n|--------|---------|\n| `--dpi` | 300 |",
        '**Note:** see `a`, "b" (c) — d → e ✅ ❌ ⚠️',
        'print(f"{name}: {value}")\nif __name__ == "__main__":\n    main()',
    ],
)
def test_symbol_runs_are_priced_as_chains(text: str) -> None:
    pytest.importorskip("tiktoken")
    truth = get_tokenizer("tiktoken:cl100k_base").count(text)
    assert abs(estimate_tokens(text) - truth) <= max(2, 0.2 * truth)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_unicode_never_raises(text: str) -> None:
    n = estimate_tokens(text)
    assert isinstance(n, int)
    assert n >= 0
    assert (n == 0) == (text == "")


@settings(max_examples=200, deadline=None)
@given(st.text(), st.text())
def test_roughly_monotone_under_concatenation(a: str, b: str) -> None:
    # Joining two texts only changes the pieces at the seam: the count of the whole stays
    # within a few tokens of the sum of the parts, and never falls much below either part.
    whole = estimate_tokens(a + b)
    assert whole >= max(estimate_tokens(a), estimate_tokens(b)) - 3
    assert whole <= estimate_tokens(a) + estimate_tokens(b) + 3


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["word", " ", "\n", "12", "(", "é", "字", "😀", "  "]), max_size=60)
)
def test_appending_a_line_never_lowers_the_count(parts: list[str]) -> None:
    text = "".join(parts)
    assert estimate_tokens(text + "\nmore words here") >= estimate_tokens(text)


# --------------------------------------------------------------------------------------------
# Accuracy against tiktoken cl100k_base, on a held-out generated corpus
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def held_out() -> list[tuple[str, int]]:
    """(text, cl100k count) of a held-out corpus: seed 1 calibrated the constants, seed 2
    was never used for that. 130 documents, 10 of each content kind."""
    pytest.importorskip("tiktoken")
    reference = get_tokenizer("tiktoken:cl100k_base")
    corpus = _load_corpus_module().generate_corpus(seed=2, count=130)
    return [(doc.text, reference.count(doc.text)) for doc in corpus]


def _median_p95(errors: list[float]) -> tuple[float, float]:
    errors = sorted(errors)
    return statistics.median(errors), errors[math.ceil(0.95 * len(errors)) - 1]  # nearest rank


def test_accuracy_against_cl100k_on_held_out_corpus(held_out: list[tuple[str, int]]) -> None:
    # measures 0.63 % and 3.39 % (1.16 % and 4.67 % before the vocabulary table)
    median, p95 = _median_p95([abs(estimate_tokens(t) - ref) / ref for t, ref in held_out])
    assert median <= 0.01, f"median relative error {median:.2%}"
    assert p95 <= 0.045, f"95th percentile relative error {p95:.2%}"


def test_len_over_four_would_fail_the_same_bar(held_out: list[tuple[str, int]]) -> None:
    # Guards the test above against a corpus that any estimator would pass.
    _, p95 = _median_p95([abs(len(t) / 4 - ref) / ref for t, ref in held_out])
    assert p95 > 0.045


# Words and identifiers of skills whose count a length model got wrong (it cannot know that
# cl100k stores "setTimeout" or " responsibilities" as one token but "kubectl" as two).
IDENTIFIERS = [
    "getElementById",
    "responsibilities",
    "kubectl",
    "frontmatter",
    "_argument",
    "config.yaml",
    "self.category_of",
    "README.md",
    "--dry-run",
    "os.path.join(root,",
    "JSONDecodeError",
    "setTimeout",
    "pyproject.toml",
    "SKILL.md",
    "${CLAUDE_PLUGIN_ROOT}/scripts",
    "validate_frontmatter()",
    "Kubernetes",
    "PostgreSQL",
    "TypeScript",
    "camelCase",
    "snake_case_identifier",
]


@pytest.mark.parametrize("word", IDENTIFIERS)
def test_words_are_priced_by_the_cl100k_vocabulary(word: str) -> None:
    pytest.importorskip("tiktoken")
    reference = get_tokenizer("tiktoken:cl100k_base")
    # "x" is one token either way; the estimator prices every chunk after a space
    assert estimate_tokens("x " + word) - 1 == reference.count(" " + word)


def test_the_shipped_vocabulary_is_cl100k_s() -> None:
    # data/cl100k_words.bin is derived data: rebuilding it from tiktoken changes nothing
    pytest.importorskip("tiktoken")
    encoding = get_tokenizer("tiktoken:cl100k_base")._encoding  # type: ignore[attr-defined]
    built = vocab.build_vocab_table(encoding._mergeable_ranks)
    shipped = vocab._VOCAB_PATH.read_bytes()
    assert zlib.decompress(shipped) == zlib.decompress(built)
    assert len(shipped) < 250_000  # it ships in every wheel
    assert zlib.decompress(shipped).startswith(b"cl100k_base 87086\n")


def test_the_vocabulary_loads_on_the_first_estimate_not_on_import() -> None:
    # the pre-commit hook pays start-up time on every commit: importing costs nothing
    probe = (
        "from skillcheck import tokens; from skillcheck.tokens import vocab; "
        "assert not vocab._VOCAB.lows; "
        "import skillcheck.cli; assert not vocab._VOCAB.lows; "
        "assert tokens.estimate_tokens('hello world') == 2; assert vocab._VOCAB.lows"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_an_unreadable_vocabulary_is_a_clear_error(tmp_path: Path) -> None:
    for data in (None, b"not zlib", zlib.compress(b"cl100k_base 5\n" + bytes(10))):
        path = tmp_path / "cl100k_words.bin"
        if data is not None:
            path.write_bytes(data)
        with pytest.raises(RuntimeError, match=r"cl100k_words\.bin is unreadable .*reinstall"):
            vocab._VocabTable(path).count("word")


def test_corpus_is_deterministic() -> None:
    module = _load_corpus_module()
    a = module.generate_corpus(seed=5, count=13)
    b = module.generate_corpus(seed=5, count=13)
    assert a == b
    assert {d.kind for d in a} == set(module.KINDS)
    assert a != module.generate_corpus(seed=6, count=13)


# --------------------------------------------------------------------------------------------
# tiktoken specs
# --------------------------------------------------------------------------------------------


def test_tiktoken_cl100k_works_offline() -> None:
    pytest.importorskip("tiktoken")
    tok = get_tokenizer("tiktoken:cl100k_base")
    assert tok.name == "tiktoken:cl100k_base"
    assert isinstance(tok, Tokenizer)
    assert tok.count("hello world") == 2
    assert tok.count("") == 0
    # Special-token text is ordinary text in a skill, never an error.
    assert tok.count("<|endoftext|>") > 1
    assert get_tokenizer("tiktoken:cl100k_base") is tok  # loaded once


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("bogus", "unknown tokenizer 'bogus'"),
        ("estimate:x", "unknown tokenizer 'estimate:x'"),
        ("tiktoken", "names no encoding"),
        ("tiktoken:", "names no encoding"),
    ],
)
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message) as info:
        get_tokenizer(spec)
    assert "tiktoken:ENCODING" in str(info.value)


def test_unknown_tiktoken_encoding_is_named() -> None:
    pytest.importorskip("tiktoken")
    with pytest.raises(ValueError, match="unknown tiktoken encoding 'no_such_base'") as info:
        get_tokenizer("tiktoken:no_such_base")
    assert "cl100k_base" in str(info.value)  # the message lists what exists


def test_missing_tiktoken_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import tiktoken -> ImportError
    monkeypatch.setattr(tokens, "_loaded", {})
    with pytest.raises(ValueError, match=r"pip install '(agent-)?skillcheck\[tiktoken\]'"):
        get_tokenizer("tiktoken:cl100k_base")


def test_unloadable_encoding_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    tiktoken = pytest.importorskip("tiktoken")

    def offline(name: str):
        raise ConnectionError("no network")

    monkeypatch.setattr(tiktoken, "get_encoding", offline)
    monkeypatch.setattr(tokens, "_loaded", {})
    with pytest.raises(ValueError, match="cannot load tiktoken encoding 'o200k_base'") as info:
        get_tokenizer("tiktoken:o200k_base")
    assert "TIKTOKEN_CACHE_DIR" in str(info.value)


# --------------------------------------------------------------------------------------------
# The fast paths price exactly as the reference paths (figures live in caches and manifests)
# --------------------------------------------------------------------------------------------

# estimate_tokens of generate_corpus(seed=3, count=26), recorded before the vocabulary set and
# the inlined cache misses (0dec339): a speed-up must not move a single figure.
SEED3_FIGURES = [139, 414, 112, 1103, 5946, 93, 244, 1309, 648, 59, 10796, 3312, 78, 62, 89]
SEED3_FIGURES += [282, 65, 550, 277, 3468, 1132, 1632, 8771, 855, 388, 125]


def test_figures_are_unchanged_by_the_fast_paths() -> None:
    corpus = _load_corpus_module().generate_corpus(seed=3, count=26)
    for cold in (True, False):
        if cold:
            estimate._clear_caches()
        assert [estimate_tokens(doc.text) for doc in corpus] == SEED3_FIGURES


def _scan_only_table() -> vocab._VocabTable:
    table = vocab._VocabTable(vocab._VOCAB_PATH)
    table.PROMOTE = 10**12  # never builds the hash set: every probe searches the arrays
    return table


def _set_table() -> vocab._VocabTable:
    table = vocab._VocabTable(vocab._VOCAB_PATH)
    table.PROMOTE = 0  # the hash set from the first word
    return table


_LETTERS = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
# Fragments of cl100k pieces, so that generated words split into several long pieces, some
# of 15 to 17 letters (a split tries pieces of at most 16: _VocabTable.PROBE).
_FRAGMENTS = ["config", "uration", "Element", "By", "Id", "kube", "ctl", "ing", "s", "x", "Qz"]
_FRAGMENTS += ["BackgroundColor", "addEventListener", "SuppressWarnings", "SharedPreferences"]
_WORDS = st.one_of(
    _LETTERS,
    st.lists(st.sampled_from(_FRAGMENTS), max_size=12).map("".join),
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40),
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(["", " ", ".", "_", "(", "'"]), _WORDS)
def test_vocabulary_set_splits_words_as_the_array_search(prefix: str, word: str) -> None:
    fast, reference = _set_table(), _scan_only_table()
    text = prefix + word
    assert fast.count(text) == reference.count(text) == reference.count_scan(text)


@pytest.mark.parametrize("word", ["x", "ab", "addEventListener", "getaddEventListenerListener"])
@pytest.mark.parametrize("prefix", ["", " ", "."])
def test_vocabulary_set_on_piece_length_edges(prefix: str, word: str) -> None:
    # one letter, two, a 16-letter piece (the longest a split tries), one after another piece
    text = prefix + word + "SharedPreferences" * (word == "ab")
    assert _set_table().count(text) == _scan_only_table().count(text)


def test_the_hash_set_holds_every_entry_of_the_arrays() -> None:
    table = _set_table()
    table.load()
    expected = {
        high << 16 | table.lows[k]
        for high in range(65_536)
        for k in range(table.starts[high], table.starts[high + 1])
    }
    assert table.hash_set() == expected
    assert len(expected) == 87_086


def test_small_runs_never_build_the_hash_set() -> None:
    # building it costs ~10 ms: a lint of one skill (the pre-commit hook) must not pay that
    table = vocab._VocabTable(vocab._VOCAB_PATH)
    for _ in range(table.PROMOTE):
        table.count("word")
    assert not table.hashes
    assert table.count("configuration") == table.count_scan("configuration")
    assert table.hashes  # the next word builds it


_MIXED = st.text(
    st.one_of(
        st.characters(min_codepoint=32, max_codepoint=126),
        st.sampled_from(" \n\t é字😀—✅’«»ßΩЖ\u0301²"),
        st.characters(),
    ),
    max_size=200,
)


@settings(max_examples=300, deadline=None)
@given(_MIXED)
def test_cache_misses_price_as_the_reference(text: str) -> None:
    # the caches price ASCII chunks and word pieces in __missing__ itself; _chunk_cost and
    # _piece_cost are the reference, with a vocabulary that only searches the arrays
    chunks = text.split()
    pieces = [p for c in chunks for p in estimate._PIECE.findall(c)]
    original = vocab._VOCAB
    try:
        vocab._VOCAB = _set_table()
        estimate._clear_caches()
        fast_chunks = estimate._ChunkPrices(estimate._chunk_cost)
        fast_pieces = estimate._PiecePrices(estimate._piece_cost)
        fast = [fast_chunks[c] for c in chunks]
        fast_piece_costs = [fast_pieces[p] for p in [*pieces, *(" " + p for p in pieces)]]
        vocab._VOCAB = _scan_only_table()
        estimate._clear_caches()
        assert fast == [estimate._chunk_cost(c) for c in chunks]
        reference = [estimate._piece_cost(p) for p in pieces]
        assert fast_piece_costs == reference + [estimate._piece_cost(" " + p) for p in pieces]
        scanned = estimate_tokens(text)
    finally:
        vocab._VOCAB = original
        estimate._clear_caches()
    assert estimate_tokens(text) == scanned


def test_the_memo_of_long_texts_never_changes_a_count() -> None:
    # two long texts of the same length but different content, then the first again: each
    # count is the one an empty memo gives
    a = "word " * 2000
    b = "1,2; " * 2000
    assert len(a) == len(b) >= estimate._MEMO_MIN
    fresh = {}
    for text in (a, b):
        estimate._clear_caches()
        fresh[text] = estimate_tokens(text)
    assert fresh[a] != fresh[b]
    estimate._clear_caches()
    assert [estimate_tokens(t) for t in (a, b, a, b)] == [fresh[a], fresh[b], fresh[a], fresh[b]]
    assert len(estimate._memo) == 2


# --------------------------------------------------------------------------------------------
# The ceiling the budget rules test before counting (tokens.estimate_ceiling)
# --------------------------------------------------------------------------------------------


def test_the_pricing_tables_keep_to_the_bounds_the_ceiling_assumes() -> None:
    # a recalibration that breaks one of these must revisit estimate_ceiling's argument
    pair_rates = [*estimate._PAIR.values(), *estimate._PAIR_DEFAULT.values()]
    assert max(pair_rates) <= 1.0
    inner = {**estimate._INNER, **{f"<{k}>": v for k, v in estimate._INNER_DEFAULT.items()}}
    assert max(inner.values()) <= 2.0  # 1 + 2 <= 1.5 per byte of a 2-byte character
    for (_context, shape), (base, _knee, slope) in estimate._WORD.items():
        assert slope <= 1.0
        # one letter is "low" or "cap"; "up" needs two
        assert base <= (ceiling._CEIL_CHAR if shape != "up" else 2 * ceiling._CEIL_CHAR)
    for run, per_char in estimate._SCRIPT.values():
        assert run + per_char <= 3.0 and per_char <= 3.0  # 1.5 per byte of 2 bytes
    assert estimate._PREFIX_UNI <= ceiling._CEIL_CHAR
    assert estimate._PREFIX_SYMBOL_UNI <= 0
    assert estimate._INDENT - estimate._SPACE_RUN <= 0 and estimate._DIGIT_LINE <= 0
    assert estimate._TAB >= 0 and estimate._SPACE_RUN >= 0


# the characters the ceiling is tightest on: digits at line starts, symbols glued to spaces,
# two-byte letters of the "other" script (Hebrew), emoji, whitespace of every kind
_TIGHT = st.text(
    st.sampled_from([*"1 \n\t(|-*'x.A", "\u05d0", "\u05d1", "\u0531", "✅", "🔴", "\xa0"]),
    max_size=300,
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(_MIXED, _TIGHT))
def test_the_ceiling_is_never_below_the_estimate(text: str) -> None:
    assert estimate_tokens(text) <= tokens.estimate_ceiling(text)
    lines = text.split("\n")
    assert EstimateTokenizer().count_split(text, lines) <= EstimateTokenizer().ceiling(text)


@pytest.mark.parametrize("template", ["{c}", " {c}", "x{c}", "{c}x", "({c}{c}", "\n{c}{c}{c}\n1"])
def test_the_ceiling_holds_for_every_character(template: str) -> None:
    # every code point of the Basic Multilingual Plane and a stride through the others,
    # alone and beside the neighbours that change how it is priced
    points = [*range(0xD800), *range(0xE000, 0x10000), *range(0x10000, 0x110000, 97)]
    texts = [template.format(c=chr(cp)) for cp in points]
    worse = [t for t in texts if estimate_tokens(t) > tokens.estimate_ceiling(t)]
    assert worse == []


def test_the_ceiling_of_prose_is_about_three_times_the_estimate() -> None:
    # the character ceiling is cheap but loose (a token per character); the pair ceiling,
    # tried only when that one is over the limit, is about three times the estimate
    prose = "Read each section in order, then record the page ranges (see `notes.md`).\n" * 100
    estimate = estimate_tokens(prose)
    assert tokens.estimate_ceiling(prose, limit=10**6) == ceiling._char_ceiling(prose)
    assert estimate <= ceiling._char_ceiling(prose) <= 1.25 * len(prose)
    assert estimate <= tokens.estimate_ceiling(prose) <= 3 * estimate


# --------------------------------------------------------------------------------------------
# The pair ceiling: its argument, the table facts it rests on, and texts built to strain it
# --------------------------------------------------------------------------------------------


_LOWER = "abcdefghijklmnopqrstuvwxyz"


def _missing_pairs() -> list[str]:
    """The lowercase letter pairs missing from the table: a two-letter piece that is not
    one token."""
    return [a + b for a in _LOWER for b in _LOWER if vocab._VOCAB.count(a + b) == 2]


def test_the_vocabulary_table_has_the_pairs_the_pair_ceiling_assumes() -> None:
    missing = _missing_pairs()
    assert missing  # ("qz", "yf", ...): the check below is not vacuous
    uncovered = [
        p for p in missing if p[0] not in ceiling._RARE_FIRST and p[1] not in ceiling._RARE_SECOND
    ]
    assert uncovered == []
    # a chunk's first piece gets a space before it: every space-letter pair is one token
    assert [c for c in _LOWER + _LOWER.upper() if vocab._VOCAB.count(" " + c) != 1] == []


def test_the_pair_ceiling_is_for_text_without_non_ascii_letters_or_digits() -> None:
    assert ceiling._pair_ceiling("plain words, (symbols) and 42\n") is not None
    assert ceiling._pair_ceiling("arrows \u2192 dashes \u2014 and\xa0spaces \u2705") is not None
    for word in ("caf\u00e9", "\u0663", "x\u00b2", "\u5b57", "\u0416"):
        assert ceiling._pair_ceiling(f"text with {word} in it") is None
        text = f"text with {word} in it " * 50
        assert estimate_tokens(text) <= tokens.estimate_ceiling(text)  # the character one


# every letter the pair argument treats apart (the rare pair letters, capitals), the symbols
# that lead a letter piece or start contractions, digits, whitespace of every kind, and
# non-ASCII symbols and spaces beside ASCII letters
_PAIRED = st.lists(
    st.one_of(
        st.sampled_from(["qz", "yf", "kx", "jj", "xq", "wv", "the", "Node", "eS", "IO", "zzz"]),
        st.sampled_from([*"abcjkqvwxyzABZ019_'.(-|` \n\t\r\x0b\x1c"]),
        st.sampled_from(["\u2192", "\u2014", "\xa0", "\u2705", "\u0301", "'s", "'ll", "  "]),
    ),
    max_size=120,
).map("".join)
_WORDY = st.text(st.characters(min_codepoint=9, max_codepoint=126), max_size=300)


@settings(max_examples=500, deadline=None)
@given(st.one_of(_PAIRED, _WORDY))
def test_the_pair_ceiling_is_never_below_the_estimate(text: str) -> None:
    pair = ceiling._pair_ceiling(text)
    assert pair is not None
    assert estimate_tokens(text) <= pair
    assert estimate_tokens(text) <= tokens.estimate_ceiling(text, limit=0)


@settings(max_examples=300, deadline=None)
@given(st.one_of(_PAIRED, _WORDY), st.integers(min_value=0, max_value=400))
def test_the_pair_ceiling_gives_up_only_when_over_the_limit(text: str, limit: int) -> None:
    # with a limit it stops once the terms summed so far are over it: never a different
    # answer about the limit, and never a different ceiling when it finishes
    full = ceiling._pair_ceiling(text)
    assert full is not None
    early = ceiling._pair_ceiling(text, limit)
    assert early == (full if full <= limit else None)
    proven = min(full, ceiling._char_ceiling(text)) <= limit
    assert (tokens.estimate_ceiling(text, limit) <= limit) is proven


def test_the_pair_ceiling_holds_on_every_short_pattern_repeated() -> None:
    # a pattern repeated 40 times spends the ceiling's fixed slack (the text's start, the
    # rounding) 40 times over: each per-character charge must hold on its own
    alphabet = ["a", "q", "z", "y", "f", "B", "1", ".", "(", "'", " ", "\n", "\t", "\u2192", "\xa0"]
    patterns = [a + b for a in alphabet for b in alphabet]
    patterns += [a + b + c for a in alphabet for b in alphabet for c in alphabet]
    worse = [p for p in patterns if estimate_tokens(p * 40) > (ceiling._pair_ceiling(p * 40) or 0)]
    assert worse == []


def test_the_pair_ceiling_holds_on_words_split_into_pairs() -> None:
    # " iuaa" splits " i" + "ua" + "a": every token two characters but the last, the split
    # the argument charges most for; the space before each word takes its share
    words = ["iuaa", "iubc", "iuag", "iubm"]
    assert [vocab._VOCAB.count(" " + w) for w in words] == [3, 3, 3, 3]
    for sep in (" ", "\n", "\t"):
        text = sep.join(words * 25)
        assert estimate_tokens(text) <= (ceiling._pair_ceiling(text) or 0)


def test_the_pair_ceiling_holds_on_words_of_missing_pairs() -> None:
    # runs made only of the pairs the table lacks: the split's worst case, a token a letter
    missing = _missing_pairs()
    texts = ["".join(missing), " ".join(missing), "\n".join(missing), "".join(missing).upper()]
    texts += [p * 40 for p in missing]
    worse = [t[:40] for t in texts if estimate_tokens(t) > (ceiling._pair_ceiling(t) or 0)]
    assert worse == []


# --------------------------------------------------------------------------------------------
# Proving a text under its limit by counting part of it (EstimateTokenizer.over)
# --------------------------------------------------------------------------------------------

# lines of every kind the cut between blocks touches: indented by two spaces or a tab, digit
# starts, symbol ends, blank lines, space runs, symbols and digits the ceilings are tight on
_LINE = st.one_of(
    _PAIRED,
    _TIGHT.map(lambda t: t.replace("\n", " ")),
    st.sampled_from(["", "  ", "  - item `x`:", "\t\tcode(1, 2)", "12. step", "    | a | b |"]),
)
_LINES = st.lists(_LINE, min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(_LINES, st.data())
def test_a_text_is_what_its_blocks_add(lines: list[str], data: st.DataObject) -> None:
    # the argument of the partial count: cut just after any line breaks, the estimate before
    # rounding is the sum of the blocks' own, plus a run for a block that starts with two
    # spaces; and each block's bound is at least what it adds
    text = "\n".join(lines)
    breaks = [i + 1 for i, ch in enumerate(text[:-1]) if ch == "\n"]
    cuts = sorted(data.draw(st.sets(st.sampled_from(breaks))) if breaks else [])
    blocks = [text[a:b] for a, b in itertools.pairwise([0, *cuts, len(text)])]
    adds = [
        estimate._raw_estimate(b, b.split("\n"))
        + (estimate._SPACE_RUN if i and b[:2] == "  " else 0)
        for i, b in enumerate(blocks)
    ]
    whole = estimate._raw_estimate(text, text.split("\n"))
    assert math.isclose(sum(adds), whole, abs_tol=1e-6)
    assert all(add <= ceiling._block_bound(b) for add, b in zip(adds, blocks, strict=True))


def _long(lines: list[str], size: int) -> str:
    """The lines repeated to at least ``size`` characters."""
    text = "\n".join(lines) + "\n"
    return text * (size // len(text) + 1)


@settings(max_examples=200, deadline=None)
@given(
    _LINES,
    _LINES,
    st.integers(1000, 5000),
    st.integers(3000, 8000),
    st.sampled_from([-3, -1, 0, 1]),
    st.booleans(),
)
def test_over_counts_a_text_when_and_only_when_it_is_over(
    head: list[str], tail: list[str], head_size: int, tail_size: int, step: int, crlf: bool
) -> None:
    # a head and a tail priced at different rates per character: the count of the first
    # block, which places the cut between counted and bounded blocks, mispredicts the rest
    text = _long(head, head_size) + _long(tail, tail_size)
    if crlf:
        text = text.replace("\n", "\r\n")
    count = estimate_tokens(text)
    limit = max(0, count + step)
    for lines in (None, text.split("\n")):
        estimate._clear_caches()  # the count is not known: the text must be proved or counted
        assert EstimateTokenizer().over(text, limit, lines) == (count if count > limit else 0)


@pytest.mark.parametrize("head", ["    - item of a list\n", "  indented prose, a line of words\n"])
@pytest.mark.parametrize("tail", ["x = f(a[1], b[2]) + 3\n", "| 1 | 2 | (x) |\n"])
def test_over_counts_the_run_that_starts_a_block(head: str, tail: str) -> None:
    # a block that starts with two spaces adds a run it does not count alone: a cheap
    # indented head (the first block's rate promises a proof), then a dense tail
    for head_size in (6000, 9000):
        text = _long([head.rstrip("\n")], head_size) + _long([tail.rstrip("\n")], 6000)
        count = estimate_tokens(text)
        for step in (-1, -3):
            estimate._clear_caches()
            assert EstimateTokenizer().over(text, count + step) == count


def test_a_text_at_half_its_budget_is_proved_under_without_counting_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prose = "Read each section in order, then record the page ranges (see `notes.md`).\n"
    text = "# Notes\n\n" + prose * 400  # 30 kB; too long for the pair ceiling alone
    count = estimate_tokens(text)
    limit = 2 * count
    assert tokens.estimate_ceiling(text, limit) > limit
    estimate._clear_caches()
    counted: list[str] = []
    raw = estimate._raw_estimate
    monkeypatch.setattr(ceiling, "_raw_estimate", lambda t, ls: counted.append(t) or raw(t, ls))
    assert EstimateTokenizer().over(text, limit) == 0
    assert 0 < sum(map(len, counted)) < 0.7 * len(text)
    counted.clear()
    assert EstimateTokenizer().over(text, limit) == 0  # proved once per process
    assert counted == []
    # over its limit, it is counted whole and the count is the estimate's
    assert EstimateTokenizer().over(text, count - 1) == count


@settings(max_examples=100, deadline=None)
@given(_MIXED)
def test_the_tiktoken_ceiling_is_never_below_its_count(text: str) -> None:
    pytest.importorskip("tiktoken")
    tok = get_tokenizer("tiktoken:cl100k_base")
    assert tok.count(text) <= tok.ceiling(text)
