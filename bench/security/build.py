"""Build the local malicious-skill evaluation set from a MaliciousSkillBench snapshot.

The snapshot is a bare git directory (the search tool's ``fetch`` of
``protectskills/MaliciousSkillBench``). Its package archives are read with ``git cat-file``
and extracted with ``tarfile`` into a private folder outside this repository, one directory
per benchmark identity: ``OUT/<source>/<benchmark_id>/`` holding the skill's files.

The samples are DATA. Nothing here executes, imports or follows anything in them:

- only regular files and directories are extracted (no symlinks, hard links, devices);
- member paths must be relative, without ``..`` and without backslashes;
- every file is bounded (``MAX_FILE``), every identity too (``MAX_SKILL``), and every file is
  written with mode 0644 (never executable);
- nothing is ever written under this repository (the output folder must be outside it).

    python bench/security/build.py --snapshot /work/.mirror/protectskills+MaliciousSkillBench/repo \
        --out /work/malbench/skills

It writes ``OUT/index.csv``: benchmark_id, source, split (source-disjoint protocol),
attack categories (``;``-separated stable codes) and the extracted directory.
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
import tarfile
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
MAX_FILE = 2_000_000  # bytes of one extracted file
MAX_SKILL = 20_000_000  # bytes of one identity
TRAIN_SOURCES = ("SRC002", "SRC004", "SRC005", "SRC006", "SRC008", "SRC013")
TEST_SOURCES = ("SRC011", "SRC012")  # SRC009 is too large for the snapshot


def _git_blob(snapshot: Path, path: str) -> bytes:
    proc = subprocess.run(
        ["git", "--git-dir", str(snapshot), "cat-file", "blob", f"HEAD:{path}"],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"build.py: {path} is not in the snapshot: {proc.stderr.decode().strip()}")
    return proc.stdout


def _safe_parts(name: str) -> tuple[str, ...] | None:
    if "\\" in name or name.startswith("/"):
        return None
    parts = PurePosixPath(name).parts
    if any(part in ("..", "") for part in parts):
        return None
    return tuple(part for part in parts if part != ".")


def extract(
    archive: bytes, prefixes: dict[str, Path], out: Path
) -> tuple[dict[str, int], list[str]]:
    """Extract the members under each package prefix into its directory; (bytes per
    prefix, refused member names)."""
    sizes: dict[str, int] = dict.fromkeys(prefixes, 0)
    refused: list[str] = []
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar:
            parts = _safe_parts(member.name)
            if parts is None or not (member.isfile() or member.isdir()):
                refused.append(member.name)
                continue
            for depth in range(len(parts), 0, -1):
                prefix = "/".join(parts[:depth])
                if prefix in prefixes:
                    break
            else:
                continue  # not a benchmark identity (e.g. a cross-label-excluded artifact)
            dest_root = prefixes[prefix]
            rest = parts[depth:]
            target = dest_root.joinpath(*rest) if rest else dest_root
            if not target.resolve().is_relative_to(out.resolve()):
                refused.append(member.name)
                continue
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            if member.size > MAX_FILE or sizes[prefix] + member.size > MAX_SKILL:
                refused.append(member.name)
                continue
            source = tar.extractfile(member)
            if source is None:
                refused.append(member.name)
                continue
            data = source.read(MAX_FILE + 1)[:MAX_FILE]
            sizes[prefix] += len(data)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            target.chmod(0o644)
    return sizes, refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snapshot", type=Path, required=True, help="bare git dir of the bench")
    parser.add_argument("--out", type=Path, required=True, help="private folder, outside the repo")
    args = parser.parse_args(argv)
    out: Path = args.out.resolve()
    if out.is_relative_to(REPO):
        raise SystemExit(
            "build.py: --out must be outside the repository (samples are never committed)"
        )
    bench = list(
        csv.DictReader(
            io.StringIO(_git_blob(args.snapshot, "metadata/benchmark_manifest.csv").decode())
        )
    )
    meta = {row["benchmark_id"]: row for row in bench}
    packages = list(
        csv.DictReader(
            io.StringIO(_git_blob(args.snapshot, "packages/package_manifest.csv").decode())
        )
    )
    wanted = set(TRAIN_SOURCES) | set(TEST_SOURCES)
    by_archive: dict[str, dict[str, Path]] = {}
    rows: list[dict[str, str]] = []
    for pkg in packages:
        source = pkg["source_id"]
        if source not in wanted or pkg["label"] != "malicious":
            continue
        bid = pkg["benchmark_id"]
        dest = out / source / bid
        by_archive.setdefault(pkg["package_archive"], {})[pkg["package_relative_path"]] = dest
        info = meta[bid]
        categories = sorted({c.strip() for c in info["attack_categories"].split(";") if c.strip()})
        rows.append(
            {
                "benchmark_id": bid,
                "source": source,
                "split": info["source_disjoint_split"],
                "categories": ";".join(categories) or "unmapped",
                "dir": str(dest),
            }
        )
    refused_all: list[str] = []
    for archive_name, prefixes in sorted(by_archive.items()):
        archive = _git_blob(args.snapshot, f"packages/{archive_name}")
        _sizes, refused = extract(archive, prefixes, out)
        refused_all += [f"{archive_name}:{name}" for name in refused]
        print(f"{archive_name}: {len(prefixes)} identities", file=sys.stderr)
    with (out / "index.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(sorted(rows, key=lambda r: (r["source"], r["benchmark_id"])))
    for name in refused_all:
        print(f"refused member: {name}", file=sys.stderr)
    print(f"{len(rows)} identities in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
