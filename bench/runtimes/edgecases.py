"""The runtime edge-case suite: committed skills plus the big ones made on demand.

The committed cases live in tests/data/runtime-edge/<case>/ (one minimal skill each, written by
us); tests/data/runtime-edge-outside/ holds the file `symlink-outside` points at. SKILL.md files
around OpenClaw's 256,000-byte and Claude Code's 1,000,000-byte limits are generated here rather
than committed. The harness and tests/test_runtime_verdicts.py both build the suite with
`materialise`, so they see the same bytes.
"""

from __future__ import annotations

import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "tests/data"
COMMITTED = DATA / "runtime-edge"
OUTSIDE = DATA / "runtime-edge-outside"

# case -> exact size of SKILL.md in bytes
SIZED = {
    "size-255000": 255_000,
    "size-257000": 257_000,
    "size-999000": 999_000,
    "size-1001000": 1_001_000,
}


def sized_skill(name: str, size: int) -> bytes:
    head = (
        f"---\nname: {name}\ndescription: Formats release notes from merged pull requests. "
        "Use when the user asks for a changelog or release notes.\n---\n\n# Notes\n\n"
    ).encode()
    line = b"Write one line per merged pull request, newest first, with its number.\n"
    body = line * ((size - len(head)) // len(line))
    pad = size - len(head) - len(body)
    return head + body + b"x" * max(pad - 1, 0) + (b"\n" if pad else b"")


def materialise(dest: Path) -> Path:
    """Build the suite under dest; return the folder that holds one directory per case."""
    root = dest / "runtime-edge"
    shutil.copytree(COMMITTED, root, symlinks=True)
    shutil.copytree(OUTSIDE, dest / "runtime-edge-outside")
    for name, size in SIZED.items():
        (root / name).mkdir()
        (root / name / "SKILL.md").write_bytes(sized_skill(name, size))
    return root


def case_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink())
