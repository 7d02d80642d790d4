"""Byte-identity check for refactorings: record every output, change the code, compare.

Renders every fixture case (``fixtures/invalid/*``, ``fixtures/valid``) and a generated bench
tree in every format -- lint text/json/sarif/github/junit, ``--diff``, ``--statistics``,
catalog json/xml/markdown, ``rules`` and the bytes of pack ``tar.gz``/``zip``, ``--well-known``
and ``--uploads`` -- and stores them (with exit codes) under a directory outside the checkout.
Run ``record`` on the code before a change and ``compare`` after it::

    python bench/identity.py record /tmp/identity-ref    # on the unmodified branch
    python bench/identity.py compare /tmp/identity-ref   # after the change: exit 1 on a diff

Cases are copied to one fixed place (``$TMPDIR/skillcheck-identity/work``) so absolute paths
in outputs are the same in both runs; the result cache is off, one worker, no colour.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from click.testing import CliRunner  # noqa: E402

WORK = Path(tempfile.gettempdir()) / "skillcheck-identity" / "work"
LINT_FORMATS = ("text", "json", "sarif", "github", "junit")
CATALOG_FORMATS = ("json", "xml", "markdown")
BENCH_COUNT = 300


def _invoke(args: list[str], cwd: Path) -> tuple[int, bytes]:
    from skillcheck.cli import cli

    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(cli, args, catch_exceptions=True)
    finally:
        os.chdir(old)
    out = result.stdout_bytes + b"\n--stderr--\n" + (result.stderr_bytes or b"")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        out += f"\n--exception-- {type(result.exception).__name__}: {result.exception}".encode()
    return result.exit_code, out


def _outputs_of(tree: Path, config: list[str]) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of every rendering of the skills under ``tree``."""
    run = ["--no-cache", "-j", "1", *config]
    for fmt in LINT_FORMATS:
        code, out = _invoke(["lint", *run, "--no-color", "--format", fmt, "."], tree)
        yield f"lint.{fmt}", b"exit %d\n" % code + out
    for extra in ("--statistics", "--show-fixes", "--diff"):
        code, out = _invoke(["lint", *run, "--no-color", extra, "."], tree)
        yield f"lint{extra}", b"exit %d\n" % code + out
    for fmt in CATALOG_FORMATS:
        code, out = _invoke(["catalog", *run, "--format", fmt, "."], tree)
        yield f"catalog.{fmt}", b"exit %d\n" % code + out
    scratch = WORK.parent / "out"
    for name, args in (
        ("pack.tar.gz", ["--output", str(scratch / "b.tar.gz")]),
        ("pack.zip", ["--format", "zip", "--output", str(scratch / "b.zip")]),
        ("pack.well-known", ["--well-known", str(scratch / "wk")]),
        ("pack.uploads", ["--uploads", str(scratch / "up")]),
    ):
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        code, out = _invoke(["pack", *run, *args, "."], tree)
        yield f"{name}", b"exit %d\n" % code + out
        for path in sorted(p for p in scratch.rglob("*") if p.is_file()):
            yield f"{name}/{path.relative_to(scratch)}", path.read_bytes()
    shutil.rmtree(scratch, ignore_errors=True)


def _fixture_cases() -> Iterator[tuple[str, Path]]:
    for case in sorted((ROOT / "fixtures" / "invalid").iterdir()):
        if case.is_dir():
            yield f"invalid/{case.name}", case
    yield "valid", ROOT / "fixtures" / "valid"


def _prepare(case: Path) -> Path:
    """Copy the case to the fixed place (``setup.txt`` entries built), return the copy."""
    import test_fixtures

    shutil.rmtree(WORK, ignore_errors=True)
    WORK.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(case, WORK, symlinks=True)
    if (WORK / "setup.txt").exists():
        test_fixtures._build(WORK)
    return WORK


def collect() -> Iterator[tuple[str, bytes]]:
    for label, case in _fixture_cases():
        tree = _prepare(case)
        config = ["--config", "skillcheck.toml"] if (tree / "skillcheck.toml").exists() else []
        for name, data in _outputs_of(tree, config or ["--isolated"]):
            yield f"{label}/{name}", data
    # the generated bench tree: deterministic for a seed, written fresh at the fixed place
    import generate

    shutil.rmtree(WORK, ignore_errors=True)
    generate.write_tree(WORK, BENCH_COUNT, seed=0)
    for name, data in _outputs_of(WORK, ["--isolated"]):
        yield f"bench-{BENCH_COUNT}/{name}", data
    code, out = _invoke(["rules", "--format", "json"], ROOT)
    yield "rules.json", b"exit %d\n" % code + out
    code, out = _invoke(["rules"], ROOT)
    yield "rules.text", b"exit %d\n" % code + out
    shutil.rmtree(WORK, ignore_errors=True)


def _key(name: str) -> str:
    return name.replace("/", "__")


def record(dest: Path) -> int:
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    index = []
    for name, data in collect():
        (dest / _key(name)).write_bytes(data)
        index.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
    (dest / "INDEX").write_text("\n".join(index) + "\n", encoding="utf-8")
    print(f"recorded {len(index)} outputs in {dest}")
    return 0


def compare(ref: Path) -> int:
    expected = {}
    for line in (ref / "INDEX").read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        expected[name] = digest
    seen, bad = set(), 0
    for name, data in collect():
        seen.add(name)
        if expected.get(name) == hashlib.sha256(data).hexdigest():
            continue
        bad += 1
        print(f"DIFFERS: {name}")
        if name in expected:
            old = (ref / _key(name)).read_bytes().decode("utf-8", "replace").splitlines()
            new = data.decode("utf-8", "replace").splitlines()
            for line in list(difflib.unified_diff(old, new, "before", "after", lineterm=""))[:40]:
                print("    " + line)
    for name in sorted(set(expected) - seen):
        bad += 1
        print(f"MISSING: {name}")
    print(f"{len(seen)} outputs compared, {bad} differ")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("record", "compare"))
    ap.add_argument("dir", type=Path, help="where the reference outputs live")
    args = ap.parse_args(argv)
    os.environ["NO_COLOR"] = "1"
    os.environ.setdefault("SOURCE_DATE_EPOCH", "315532800")
    return record(args.dir) if args.mode == "record" else compare(args.dir)


if __name__ == "__main__":
    sys.exit(main())
