"""Build the real-world corpus byte-exactly from fetched git snapshots.

Each repository of ``repos.txt`` (``owner/repo commit kind``) is read from a git directory
(``<mirror>/<owner>+<repo>/repo`` as the snapshot tool lays them out, ``<mirror>/<owner>/<repo>``
or ``<mirror>/<owner>__<repo>``) and written to ``<dest>/<owner>__<repo>/`` from the raw blobs of
the pinned commit: ``git ls-tree -r`` names every entry and ``git cat-file --batch`` gives its
bytes. Nothing is converted: CRLF, BOM, executable bits (644/755) and symlinks stay as committed.
``git archive`` is not used because it applies ``.gitattributes`` (``eol``, ``export-ignore``,
``export-subst``). Submodules (gitlinks) have no content in the commit and are skipped. An empty
``.git`` folder marks each repository's root, as a clone has one.

Blobs a snapshot lacks (snapshots may omit files of 4 MiB and more, and LFS content) are counted
and listed in ``<dest>/MANIFEST.json``; everything else about the corpus is in that manifest too.

    python bench/realworld/build.py --mirror /work/.mirror        # into bench/realworld/corpus/
    python bench/realworld/build.py --mirror /work/.mirror --dest /work/realworld-corpus
    python bench/realworld/build.py --mirror M --only anthropics/skills    # rebuild one repository
    python bench/realworld/build.py --mirror M --half tune --dest D        # the tuning half only
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
DEFAULT_LIST = HERE / "repos.txt"
DEFAULT_DEST = HERE / "corpus"
KINDS = ("vendor", "curated", "community")
HALVES = ("tune", "held")


@dataclass(frozen=True)
class Repo:
    name: str  # owner/repo
    commit: str
    kind: str
    half: str = ""  # "tune", "held" or "" when the list does not split (repos-growth.txt)

    @property
    def slug(self) -> str:
        return self.name.replace("/", "__")


@dataclass
class Built:
    repo: Repo
    files: int = 0
    symlinks: int = 0
    executables: int = 0
    bytes: int = 0
    skills: int = 0
    skipped_gitlinks: int = 0
    missing: list[str] = field(default_factory=list)
    unsafe: list[str] = field(default_factory=list)


class BuildError(Exception):
    """A problem that stops the build of one repository; the message names it."""


def parse_list(text: str, source: str = "repos.txt") -> list[Repo]:
    """Parse the pinned list: ``owner/repo commit kind [half]`` per line, ``#`` comments."""
    repos: list[Repo] = []
    seen: set[str] = set()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) not in (3, 4):
            raise BuildError(
                f"{source}:{number}: expected 'owner/repo commit kind [half]', got {raw!r}"
            )
        name, commit, kind = parts[:3]
        half = parts[3] if len(parts) == 4 else ""
        if half and half not in HALVES:
            raise BuildError(f"{source}:{number}: half {half!r} is not one of {', '.join(HALVES)}")
        if name.count("/") != 1 or not all(name.split("/")):
            raise BuildError(f"{source}:{number}: {name!r} is not owner/repo")
        if len(commit) != 40 or any(c not in "0123456789abcdef" for c in commit.lower()):
            raise BuildError(f"{source}:{number}: {commit!r} is not a 40-hex commit")
        if kind not in KINDS:
            raise BuildError(f"{source}:{number}: kind {kind!r} is not one of {', '.join(KINDS)}")
        if name.lower() in seen:
            raise BuildError(f"{source}:{number}: {name} is listed twice")
        seen.add(name.lower())
        repos.append(Repo(name, commit.lower(), kind, half))
    return repos


def find_git_dir(mirrors: list[Path], repo: Repo) -> Path | None:
    """The git directory of ``repo`` under one of the mirror roots, or None."""
    owner, name = repo.name.split("/")
    for root in mirrors:
        for candidate in (
            root / f"{owner}+{name}" / "repo",
            root / f"{owner}+{name}",
            root / repo.slug,
            root / owner / name,
        ):
            if (candidate / "HEAD").is_file() or (candidate / ".git").exists():
                return candidate
    return None


def _git(git_dir: Path, *args: str) -> bytes:
    proc = subprocess.run(
        ["git", f"--git-dir={_dotgit(git_dir)}", *args], capture_output=True, check=False
    )
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BuildError(
            f"git {' '.join(args)} in {git_dir}: {message[-1] if message else 'failed'}"
        )
    return proc.stdout


def _dotgit(git_dir: Path) -> Path:
    return git_dir / ".git" if (git_dir / ".git").is_dir() else git_dir


def safe_relpath(path: str) -> PurePosixPath | None:
    """``path`` as a relative path that stays inside the destination, or None."""
    p = PurePosixPath(path)
    if p.is_absolute() or not p.parts or any(part in ("", ".", "..", ".git") for part in p.parts):
        return None
    return p


def list_tree(git_dir: Path, commit: str) -> list[tuple[str, str, str, str]]:
    """(mode, type, sha, path) of every entry of the commit, recursively, byte paths decoded."""
    out = _git(git_dir, "ls-tree", "-r", "-z", "--full-tree", commit)
    entries = []
    for record in out.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, sha = meta.decode("ascii").split(" ")
        entries.append((mode, kind, sha, os.fsdecode(path)))
    return entries


def read_blobs(git_dir: Path, shas: list[str]):
    """Yield (sha, bytes or None when the snapshot lacks the blob) in order, one git process."""
    proc = subprocess.Popen(
        ["git", f"--git-dir={_dotgit(git_dir)}", "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None

    # Feed requests from a thread so neither pipe fills while the other waits.
    import threading

    def feed() -> None:
        assert proc.stdin is not None
        try:
            for sha in shas:
                proc.stdin.write(sha.encode("ascii") + b"\n")
            proc.stdin.close()
        except BrokenPipeError:
            pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        for sha in shas:
            header = proc.stdout.readline().split()
            if len(header) == 2 and header[1] == b"missing":
                yield sha, None
                continue
            if len(header) != 3:
                raise BuildError(f"git cat-file: unexpected answer {header!r} for {sha}")
            size = int(header[2])
            data = proc.stdout.read(size)
            proc.stdout.read(1)  # the newline after the content
            yield sha, data
    finally:
        feeder.join()
        proc.stdout.close()
        proc.wait()


def build_repo(git_dir: Path, repo: Repo, dest: Path) -> Built:
    """Write the pinned commit of ``repo`` into ``dest/<slug>`` (replacing it atomically)."""
    try:
        _git(git_dir, "cat-file", "-e", f"{repo.commit}^{{commit}}")
    except BuildError:
        head = _git(git_dir, "rev-parse", "HEAD").decode().strip()
        raise BuildError(
            f"{repo.name}: the snapshot in {git_dir} does not have the pinned commit "
            f"{repo.commit} (its HEAD is {head}); fetch it again or update repos.txt"
        ) from None
    built = Built(repo)
    entries = list_tree(git_dir, repo.commit)
    final = dest / repo.slug
    work = dest / f".{repo.slug}.building"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    blobs = [(mode, sha, path) for mode, kind, sha, path in entries if kind == "blob"]
    built.skipped_gitlinks = sum(1 for _, kind, _, _ in entries if kind == "commit")
    contents = read_blobs(git_dir, [sha for _, sha, _ in blobs])
    for (mode, _, path), (_, data) in zip(blobs, contents, strict=True):
        rel = safe_relpath(path)
        if rel is None:
            built.unsafe.append(path)
            continue
        if data is None:
            built.missing.append(path)
            continue
        target = work.joinpath(*rel.parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "120000":
            os.symlink(os.fsdecode(data), target)
            built.symlinks += 1
        else:
            target.write_bytes(data)
            executable = mode == "100755"
            os.chmod(target, 0o755 if executable else 0o644)
            built.executables += executable
            built.files += 1
            built.bytes += len(data)
            if rel.name == "SKILL.md":
                built.skills += 1
    # an empty .git marks the repository's root, as in a clone: rules that look for the
    # root of a checkout (a skill at a repository's root, SK206) see what users have
    (work / ".git").mkdir(exist_ok=True)
    if final.exists() or final.is_symlink():
        shutil.rmtree(final)
    work.rename(final)
    return built


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--mirror",
        action="append",
        type=Path,
        required=True,
        help="directory holding the fetched git snapshots (repeatable)",
    )
    ap.add_argument("--dest", type=Path, default=DEFAULT_DEST, help=f"default {DEFAULT_DEST}")
    ap.add_argument("--list", type=Path, default=DEFAULT_LIST, help="pinned list (repos.txt)")
    ap.add_argument("--only", action="append", default=[], help="build only this owner/repo")
    ap.add_argument("--keep-going", action="store_true", help="skip repositories that fail")
    ap.add_argument(
        "--half", choices=HALVES, help="build only the tuning or only the held-out half"
    )
    args = ap.parse_args(argv)

    try:
        repos = parse_list(args.list.read_text(encoding="utf-8"), str(args.list))
    except (OSError, BuildError) as exc:
        print(f"build.py: {exc}", file=sys.stderr)
        return 2
    if args.only:
        wanted = {name.lower() for name in args.only}
        repos = [r for r in repos if r.name.lower() in wanted]
        if len(repos) != len(wanted):
            print(f"build.py: not in {args.list}: {', '.join(sorted(wanted))}", file=sys.stderr)
            return 2
    if args.half:
        repos = [r for r in repos if r.half == args.half]
    missing = [r for r in repos if find_git_dir(args.mirror, r) is None]
    if missing and not args.keep_going:
        roots = ", ".join(str(m) for m in args.mirror)
        for r in missing:
            print(f"build.py: no snapshot of {r.name} under {roots}", file=sys.stderr)
        print("build.py: fetch them (github:owner/repo) or pass --keep-going", file=sys.stderr)
        return 2
    args.dest.mkdir(parents=True, exist_ok=True)
    manifest_path = args.dest / "MANIFEST.json"
    manifest: dict[str, dict] = {}
    if manifest_path.exists():
        manifest = json.loads(manifest_path.read_text(encoding="utf-8")).get("repos", {})
    failed = 0
    started = time.perf_counter()
    for repo in repos:
        git_dir = find_git_dir(args.mirror, repo)
        if git_dir is None:
            print(f"  skip {repo.name}: no snapshot", file=sys.stderr)
            failed += 1
            continue
        try:
            built = build_repo(git_dir, repo, args.dest)
        except BuildError as exc:
            print(f"build.py: {exc}", file=sys.stderr)
            failed += 1
            if not args.keep_going:
                return 1
            continue
        manifest[repo.name] = {
            "commit": repo.commit,
            "kind": repo.kind,
            "half": repo.half,
            "dir": repo.slug,
            "files": built.files,
            "symlinks": built.symlinks,
            "executables": built.executables,
            "bytes": built.bytes,
            "skill_md": built.skills,
            "gitlinks_skipped": built.skipped_gitlinks,
            "missing_blobs": built.missing,
            "unsafe_paths": built.unsafe,
        }
        note = f", {len(built.missing)} blobs missing" if built.missing else ""
        print(
            f"  {repo.name:52} {built.skills:5} SKILL.md {built.files:6} files "
            f"{built.bytes / 1e6:7.1f} MB{note}"
        )
    total = {
        "repos": len(manifest),
        "skill_md": sum(m["skill_md"] for m in manifest.values()),
        "files": sum(m["files"] for m in manifest.values()),
        "bytes": sum(m["bytes"] for m in manifest.values()),
    }
    tmp = manifest_path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"total": total, "repos": manifest}, indent=1, sort_keys=True) + "\n")
    tmp.replace(manifest_path)
    print(
        f"{total['repos']} repositories, {total['skill_md']} SKILL.md, {total['files']} files, "
        f"{total['bytes'] / 1e6:.0f} MB in {args.dest} ({time.perf_counter() - started:.1f} s)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
