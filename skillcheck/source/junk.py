"""What a published skill should not carry, in one table.

SK703 reports these entries (with the reason given here), pack and catalog leave them out
(``package.catalog.DEFAULT_EXCLUDES`` is built from this table), the walk lists some of
them without descending (``OPAQUE_DIRS``) and discovery never searches some for skills.
"""

from __future__ import annotations

JUNK_FILES: dict[str, str] = {
    ".DS_Store": "macOS Finder metadata",
    "Thumbs.db": "a Windows thumbnail cache",
}
VCS_DIRS: dict[str, str] = {
    ".git": "a Git repository (its whole history)",
    ".hg": "a Mercurial repository",
    ".svn": "Subversion metadata",
    ".bzr": "a Bazaar repository",
    ".jj": "a Jujutsu repository",
    "_darcs": "a Darcs repository",
    "CVS": "CVS metadata",
}
JUNK_DIRS: dict[str, str] = {  # at any depth
    **VCS_DIRS,
    "__pycache__": "Python bytecode caches",
    ".pytest_cache": "a pytest cache",
    ".mypy_cache": "a mypy cache",
    ".ruff_cache": "a ruff cache",
    ".hypothesis": "a Hypothesis database",
    ".tox": "tox environments",
    ".nox": "nox environments",
    ".skillcheck_cache": "a skillcheck cache",
    "node_modules": "installed npm dependencies",
    ".venv": "a Python virtualenv",
    "venv": "a Python virtualenv",
}
ROOT_JUNK_DIRS: dict[str, str] = {"build": "build output", "dist": "build output"}
EGG_INFO = ".egg-info"  # a directory name ending so is Python packaging metadata
BYTECODE_SUFFIXES = (".pyc", ".pyo")
ENV_PREFIX = ".env"  # environment files (secrets); SK703 spares documented templates
ARCHIVE_SUFFIXES = (
    ".zip",
    ".tar",
    ".tar.gz",
    ".tgz",
    ".tar.bz2",
    ".tbz2",
    ".tar.xz",
    ".txz",
    ".tar.zst",
    ".7z",
    ".rar",
    ".skill",
)

# files that make the directory holding them junk, whatever its name: a virtualenv's
# `pyvenv.cfg`; Cargo's build tree (`target/` beside a `Cargo.toml`) holds one of these
VENV_MARKER = "pyvenv.cfg"
CARGO_TARGET_MARKERS = ("CACHEDIR.TAG", ".rustc_info.json")


def marked_junk_dirs(rels: list[str]) -> dict[str, str]:
    """The directories (relative paths) that are junk by what they hold, with the reason:
    a virtualenv (it holds `pyvenv.cfg`), Cargo's build output (a `target/` holding
    `CACHEDIR.TAG` or `.rustc_info.json` beside a `Cargo.toml`)."""
    present = set(rels)
    out: dict[str, str] = {}
    for rel in rels:
        parent, _, name = rel.rpartition("/")
        if name == VENV_MARKER and parent:
            out[parent] = "a Python virtualenv"
        elif name in CARGO_TARGET_MARKERS and parent.rpartition("/")[2] == "target":
            project = parent.rpartition("/")[0]
            if (f"{project}/Cargo.toml" if project else "Cargo.toml") in present:
                out[parent] = "build output of Cargo (its target/ tree)"
    return out


# directories the walk lists but does not descend into: their contents are never skill content
OPAQUE_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv"})

# directories discovery never searches for skills
DISCOVERY_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        ".skillcheck_cache",
        "site-packages",
    }
)

# names a skill's resources need not be mentioned by (SK506): OS junk, Python's package
# markers and caches
UNMENTIONED_NAMES = frozenset({*JUNK_FILES, "desktop.ini", "__init__.py", "__pycache__"})
