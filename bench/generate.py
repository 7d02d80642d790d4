"""Realistic skill trees for the benchmark, generated once and reused.

The skills come from ``tests/skillgen.py``: a ~170-line SKILL.md with links, two references, a
script and an asset each; ``findings`` is the fraction of skills that also get one seeded defect
(broken link, missing anchor, unknown key or over-long description), so a lint has work to
report. Trees are cached under a directory keyed by size, seed, findings and the generator's
source, so repeated benchmark runs skip the generation (10,000 skills is 50,000 files).

    python bench/generate.py --count 1000                  # print the cached tree's path
    python bench/generate.py --count 200 --findings 0 DIR  # write a fresh tree into DIR
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import skillgen  # noqa: E402

DEFAULT_FINDINGS = 0.1
COMPLETE = "COMPLETE"  # marker beside (not inside) a finished tree


def default_cache_dir() -> Path:
    """``$SKILLCHECK_BENCH_CACHE``, else ``<tmp>/skillcheck-bench``."""
    env = os.environ.get("SKILLCHECK_BENCH_CACHE")
    return Path(env) if env else Path(tempfile.gettempdir()) / "skillcheck-bench"


def _generator_digest() -> str:
    # A change to the generator must not reuse trees it would no longer write.
    source = Path(skillgen.__file__).read_bytes() + Path(__file__).read_bytes()
    return hashlib.sha256(source).hexdigest()[:10]


def cache_slot(count: int, seed: int, findings: float, cache_dir: Path | None = None) -> Path:
    """The directory holding the cached tree (``<slot>/skills``) and its marker."""
    base = cache_dir if cache_dir is not None else default_cache_dir()
    return base / f"skills-{count}-seed{seed}-findings{findings:g}-{_generator_digest()}"


def write_tree(root: Path, count: int, seed: int = 0, findings: float = DEFAULT_FINDINGS) -> Path:
    """Write ``count`` skills into ``root`` (created; must not exist or be empty)."""
    if root.exists() and any(root.iterdir()):
        raise FileExistsError(f"{root} is not empty; choose a new directory")
    root.mkdir(parents=True, exist_ok=True)
    skillgen.generate(root, count, seed, findings=findings)
    return root


def cached_tree(
    count: int,
    seed: int = 0,
    findings: float = DEFAULT_FINDINGS,
    cache_dir: Path | None = None,
) -> Path:
    """The path of a tree of ``count`` skills, generating it on first use.

    A tree counts as cached only once its ``COMPLETE`` marker exists; the benchmark removes the
    marker while it edits a tree, so an interrupted run leads to regeneration, never to a
    benchmark of a modified tree.
    """
    slot = cache_slot(count, seed, findings, cache_dir)
    tree = slot / "skills"
    if (slot / COMPLETE).is_file() and tree.is_dir():
        return tree
    shutil.rmtree(slot, ignore_errors=True)
    slot.parent.mkdir(parents=True, exist_ok=True)
    # Build beside the slot and rename, so no reader ever sees half a tree.
    staging = Path(tempfile.mkdtemp(prefix=slot.name + ".", dir=slot.parent))
    try:
        write_tree(staging / "skills", count, seed, findings)
        (staging / COMPLETE).write_text(f"{count} skills, seed {seed}, findings {findings:g}\n")
        staging.rename(slot)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return tree


def mark_dirty(tree: Path) -> None:
    """Declare a cached tree modified (it is regenerated next time unless marked clean)."""
    (tree.parent / COMPLETE).unlink(missing_ok=True)


def mark_clean(tree: Path) -> None:
    """Declare a cached tree restored to what the generator wrote."""
    (tree.parent / COMPLETE).write_text("restored\n")


def tree_size(tree: Path) -> tuple[int, int]:
    """(number of files, total bytes) under ``tree``."""
    files = size = 0
    for dirpath, _dirs, names in os.walk(tree):
        for name in names:
            files += 1
            size += os.lstat(os.path.join(dirpath, name)).st_size
    return files, size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Generate a tree of realistic Agent Skills for benchmarks.",
    )
    ap.add_argument("dir", nargs="?", type=Path, help="write here (default: the cache)")
    ap.add_argument("--count", type=int, default=1000, help="number of skills (default 1000)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument(
        "--findings",
        type=float,
        default=DEFAULT_FINDINGS,
        help=f"fraction of skills with one seeded defect (default {DEFAULT_FINDINGS})",
    )
    ap.add_argument(
        "--cache-dir", type=Path, help=f"cache directory (default: {default_cache_dir()})"
    )
    args = ap.parse_args(argv)
    if args.count < 1:
        ap.error("--count must be at least 1")
    if not 0.0 <= args.findings <= 1.0:
        ap.error("--findings must be between 0 and 1")
    try:
        if args.dir is not None:
            tree = write_tree(args.dir, args.count, args.seed, args.findings)
        else:
            tree = cached_tree(args.count, args.seed, args.findings, args.cache_dir)
    except OSError as exc:
        print(f"generate.py: {exc}", file=sys.stderr)
        return 2
    files, size = tree_size(tree)
    print(tree)
    print(f"{args.count} skills, {files} files, {size / 1e6:.1f} MB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
