"""The result cache: a skill's summary (its diagnostics and what collection rules compare),
kept between runs so an unchanged skill is not read or checked again.

Layout: ``<cache dir>/<run key>/<skill key>.json``, one small JSON file per skill, so a
one-skill pre-commit run reads one file, concurrent runs never lose each other's entries, and
a damaged file costs one entry. The *run key* hashes everything besides the skill's own files
that shapes its results: skillcheck's version and source files, the installed YAML, Markdown,
pattern and tokenizer libraries, the Python version, the working directory (paths are shown
relative to it), the enabled rules, targets and options, and the content of a configured
``frontmatter-schema``. Collection rules (SK8xx, SK608) and suppressions run over the
summaries, cached or not; the collection rules' result is reused only while every skill's
input is what it was when it was computed (``collection.json``).

An entry is used when the skill's files are unchanged:

- **identity**: the lstat of every entry under the skill (size, mode, mtime, ctime, inode,
  link target) matches, and for a SKILL.md symlinked from elsewhere, the stat of the file it
  leads to and whether the run's trees let it be read there. Entries written while a file
  was younger than two seconds never match on identity (a same-tick edit could go unseen,
  as git's "racily clean" entries), or
- **content**, when identity differs (a fresh checkout, a ``touch``): the listing matches
  without times, and every file the rules read has the same BLAKE2 digest as when the entry
  was made. The rules are deterministic, so equal inputs give equal results; files no rule
  read (an asset) matter only through the listing;

and, either way, every path a rule looked at outside the skill (``source.outside``: a `../`
link's target, the plugin manifest above it, a fragment's evidence) holds what it held.

The cache is JSON, never pickle, and every file is sealed with an HMAC keyed by a secret in
the user's cache home (``key_path``, 0600): a cache committed to the repository, restored
from elsewhere or planted by whoever controls the checkout is a miss, however right its
digests look, so a cache can make a run faster, never different. Anything wrong
with it (unparseable, wrong format or version, a field of the wrong type, an unwritable
directory) makes the entry a miss; it is never trusted and never an error.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import marshal
import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from skillcheck import __version__
from skillcheck.engine.summary import diagnostic_from_json, diagnostic_to_json, from_json, to_json
from skillcheck.source import outside
from skillcheck.source.atomic import write_atomic
from skillcheck.source.lazy import LazyPattern
from skillcheck.source.load import link_readable, open_regular, read_fd, read_file, read_regular
from skillcheck.source.skill import Skill, SkillSummary

# 2: the collection rules' per-skill data in one `data` table; 3: entries record the
# outside looks (source.outside)
FORMAT = 3
RACY_NS = 2_000_000_000  # files changed this recently are checked by content next time
KEEP_RUN_KEYS = 8  # run-key directories kept; older ones are removed
MAX_FILE_BYTES = 256 * 1024 * 1024  # a cache file larger than this was not written by us
CACHE_DIR_NAME = ".skillcheck_cache"

_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by skillcheck.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n"
)


def default_directory(project_root: Path) -> Path:
    """``$SKILLCHECK_CACHE_DIR``, else ``$XDG_CACHE_HOME/skillcheck``, else
    ``.skillcheck_cache`` in the project root (where the configuration is, else the working
    directory)."""
    explicit = os.environ.get("SKILLCHECK_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "skillcheck"
    return project_root / CACHE_DIR_NAME


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _text_digest(value: Any) -> str:
    """The digest of a value made of str, bytes, int, float, bool, None, lists, tuples and
    dicts. Marshal format 2 writes them by value (no back-references, which depend on object
    identity) and is 4-5x faster than repr: the identity of every skill of a warm run is
    digested, twice."""
    return _digest(marshal.dumps(value, 2))


def _code_fingerprint() -> list[tuple[str, int, int]]:
    """Size and mtime of every module of skillcheck: an edited checkout (same version
    string) never reuses results of the code it replaced."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = []
    for directory, dirs, files in os.walk(package):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".py", ".json", ".bin")):  # code, schemas, the token table
                path = os.path.join(directory, name)
                with contextlib.suppress(OSError):
                    info = os.stat(path)
                    out.append((os.path.relpath(path, package), info.st_size, info.st_mtime_ns))
    return out


# libraries whose behaviour shapes results (YAML parsing, Markdown parsing, ignore patterns,
# exact token counts): an upgrade of any of them starts a fresh cache
_DEPENDENCIES = ("yaml", "_yaml", "pyromark", "pathspec", "tiktoken")


def _dependency_fingerprint() -> list[tuple[str, str | None, int, int]]:
    """Where each dependency is installed, with its main file's size and mtime (found
    without importing it: a cached run never needs yaml)."""
    import importlib.util

    out = []
    for name in _DEPENDENCIES:
        try:
            found = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            found = None
        origin = found.origin if found is not None else None
        size = mtime = 0
        if origin and os.path.isabs(origin):
            with contextlib.suppress(OSError):
                info = os.stat(origin)
                size, mtime = info.st_size, info.st_mtime_ns
        out.append((name, origin, size, mtime))
    return out


def run_key(
    rule_codes: list[str], targets: tuple[str, ...], options: dict[str, Any], cwd: Path
) -> str:
    """What besides a skill's own files decides its results, hashed."""
    schema = options.get("frontmatter-schema")
    schema_digest = None
    if schema:
        try:  # the user's file, maybe a FIFO: never blocks, never reads without bound
            schema_digest = _digest(read_regular(schema, MAX_FILE_BYTES, follow_symlinks=True)[0])
        except OSError:
            schema_digest = "unreadable"
    parts = (
        FORMAT,
        __version__,
        _code_fingerprint(),
        _dependency_fingerprint(),
        sys.version,
        sys.platform,
        os.fsencode(str(cwd)),
        sorted(rule_codes),
        targets,
        json.dumps(options, sort_keys=True, default=str),
        schema_digest,
    )
    return _text_digest(parts)[:24]


Listing = tuple[list[Any], list[tuple[str, str]]]  # load.scan's (entries, errors)


def listing_of(skill: Skill) -> Listing:
    """A loaded skill's listing in ``load.scan``'s form."""
    entries = [
        (f.rel, f.kind, f.size, f.mode, f.link_target, f.mtime_ns, f.ctime_ns, f.inode, str(f.path))
        for f in skill.files
    ]
    return entries, [(str(path), reason) for path, reason in skill.walk_errors]


def _links(entries: list[Any]) -> list[tuple[str, str, bool]]:
    """Where each symlink leads and whether that exists: rules tell a dangling link from one
    that escapes the skill, which the link's own lstat does not show."""
    return [
        (e[0], os.path.realpath(e[8]), os.path.exists(e[8])) for e in entries if e[1] == "symlink"
    ]


def _linked_skill_md(entries: list[Any], trees: tuple[str, ...]) -> list[Any]:
    """For a SKILL.md that is a symlink: the stat of the file it leads to (read from outside
    the skill, so no other entry shows its changes) and whether this run may read it there
    (inside the skill or the linted trees, ``load.load_skill``); [] for any other skill."""
    for e in entries:
        if e[1] == "symlink" and "/" not in e[0] and e[0].lower() == "skill.md":
            try:
                info = os.stat(e[8])
            except OSError:
                return [None]  # dangling or looping: the listing's link target says which
            real = Path(os.path.realpath(e[8]))
            readable = link_readable(real, Path(os.path.realpath(os.path.dirname(e[8]))), trees)
            times = [info.st_mtime_ns, info.st_ctime_ns]
            return [[info.st_size, info.st_mode, *times, info.st_ino, readable]]
    return []


def identity(listing: Listing, trees: tuple[str, ...] = ()) -> str:
    """The listing with every entry's lstat identity (times and inode included), and the
    identity of a symlinked SKILL.md's file as this run reads it."""
    entries, errors = listing
    linked = _linked_skill_md(entries, trees)
    return _text_digest(([e[:8] for e in entries], _links(entries), errors, *linked))


def shape(listing: Listing) -> str:
    """The listing without times or inodes: what a fresh checkout of the same files keeps."""
    entries, errors = listing
    return _text_digest(([e[:5] for e in entries], _links(entries), errors))


def reads_of(skill: Skill) -> dict[str, Any]:
    """What the rules read of ``skill``: SKILL.md's bytes (or why it could not be read) and
    the digest of every file read through ``load.read_file``."""
    doc = skill.doc
    return {
        "skill_md": None if doc is None else _digest(doc.raw),
        "read_error": skill.read_error,
        "files": sorted(
            [rel, None if data is None else _digest(data)] for rel, data in skill.contents.items()
        ),
        # what the rules looked at outside the skill (a `../` link's target, a plugin's
        # manifest, a fragment's evidence) and what was there: inputs the listing misses
        "outside": outside.recorded(skill),
    }


def inputs_of(skill: Skill) -> dict[str, Any]:
    """What a checked skill's results depend on besides the run key: its listing without
    times, and what the rules read (see ``same_content``)."""
    return {"shape": shape(listing_of(skill)), "reads": reads_of(skill)}


# --- authentication ---------------------------------------------------------------------
# A cache directory may be committed to the repository, restored from elsewhere or planted
# by whoever controls the checkout, and an entry's content digests are anyone's to compute:
# every entry is sealed with an HMAC whose key lives in the user's own cache home (created
# 0600, never in a project), so an entry this user's runs did not write is a miss.

KEY_BYTES = 32
_MAC_HEAD = b'{"mac":"'
_MAC_SEP = b'","record":'
_MAC_HEX = 64  # HMAC-SHA256 in hex
_PAYLOAD_AT = len(_MAC_HEAD) + _MAC_HEX + len(_MAC_SEP)
_KEYS: dict[str, bytes | None] = {}  # key file -> its key (None: unusable), once per process


def key_path() -> Path:
    """``$XDG_CACHE_HOME/skillcheck/cache.key``, else ``~/.cache/skillcheck/cache.key``:
    the user's, whatever ``--cache-dir`` names."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    home = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return home / "skillcheck" / "cache.key"


def _load_key(path: Path) -> bytes | None:
    """The key in ``path``, made on first use; None when it cannot be trusted (not a private
    regular file of this user holding exactly KEY_BYTES) or made: then nothing is cached."""
    for _attempt in range(2):
        try:
            fd, info = open_regular(path)
        except FileNotFoundError:
            _make_key(path)
            continue
        except OSError:
            return None
        try:
            data = read_fd(fd, info.st_size, KEY_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
        mine = not hasattr(os, "getuid") or info.st_uid == os.getuid()
        if len(data) != KEY_BYTES or not mine or info.st_mode & 0o077:
            return None
        return data
    return None


def _make_key(path: Path) -> None:
    """Create the key file whole or not at all: written privately beside it, then linked
    into place (a concurrent run that made it first wins; both then read the same key)."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(tmp, flags, 0o600)
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)


def cache_key() -> bytes | None:
    """This user's cache key (see ``key_path``), or None when there is none to trust."""
    path = key_path()
    where = str(path)
    if where not in _KEYS:
        _KEYS[where] = _load_key(path)
    return _KEYS[where]


def seal(payload: bytes, key: bytes) -> bytes:
    """A cache file's bytes: ``payload`` (JSON) inside a JSON object with its HMAC."""
    mac = hmac.new(key, payload, hashlib.sha256).hexdigest().encode("ascii")
    return _MAC_HEAD + mac + _MAC_SEP + payload + b"}"


def unseal(data: bytes, key: bytes) -> bytes | None:
    """The payload of a file ``seal`` made with ``key``; None for anything else."""
    if (
        not data.startswith(_MAC_HEAD)
        or data[_PAYLOAD_AT - len(_MAC_SEP) : _PAYLOAD_AT] != _MAC_SEP
    ):
        return None
    if not data.endswith(b"}"):
        return None
    payload = data[_PAYLOAD_AT:-1]
    mac = hmac.new(key, payload, hashlib.sha256).hexdigest().encode("ascii")
    if not hmac.compare_digest(mac, data[len(_MAC_HEAD) : len(_MAC_HEAD) + _MAC_HEX]):
        return None
    return payload


def _read_json(path: Path | str, key: bytes | None) -> Any:
    """A cache file's JSON, or None when it is missing, not a regular file (a FIFO or device
    planted there), a symlink, unreadable, larger than any file skillcheck writes, not
    sealed with ``key`` (written by someone else), or not JSON. Read through
    ``load.read_regular``, the one checked opener."""
    if key is None:
        return None
    try:
        data, size = read_regular(path, MAX_FILE_BYTES + 1)
        if size > MAX_FILE_BYTES:
            return None
        payload = unseal(data, key)
        return None if payload is None else json.loads(payload)
    except (OSError, ValueError, RecursionError):
        return None


def input_digest(record: dict[str, Any]) -> str | None:
    """What a skill's summary was computed from (its listing and the digests of what the
    rules read), as one digest; None for a damaged entry."""
    try:
        return _text_digest((record["shape"], record["reads"]))
    except (KeyError, TypeError):
        return None


def summary_digest(summary: SkillSummary) -> str:
    """A summary's content, as one digest (``input_digest``'s stand-in for a skill the cache
    does not keep)."""
    return "summary:" + _text_digest(to_json(summary))


def same_content(skill: Skill, record: dict[str, Any]) -> bool:
    """Whether ``skill`` (loaded, unchecked) holds what the entry ``record`` was made from.
    Files are read through ``load.read_file``, so a mismatch leaves them read for the rules."""

    try:
        if record["shape"] != shape(listing_of(skill)):
            return False
        reads = record["reads"]
        doc = skill.doc
        if reads["read_error"] != skill.read_error:
            return False
        if reads["skill_md"] != (None if doc is None else _digest(doc.raw)):
            return False
        if not outside.unchanged(reads["outside"]):
            return False
        by_rel = {f.rel: f for f in skill.files}
        for rel, digest in reads["files"]:
            entry = by_rel.get(rel)
            data = read_file(skill, entry) if entry is not None else None
            if digest != (None if data is None else _digest(data)):
                return False
    except (KeyError, TypeError, ValueError):
        return False
    return True


class ResultCache:
    """One run's view of the cache directory: entries for the run key."""

    def __init__(self, directory: Path, key: str, trees: tuple[str, ...] = ()) -> None:
        self.directory = Path(directory)
        self.key = key
        self.trees = trees  # the linted directories: a SKILL.md linked into them is read
        self.folder = self.directory / key
        self.started_ns = time.time_ns()
        self.secret = cache_key()  # None: no key to trust, so nothing is read or written
        self.writable = self.secret is not None
        self.prepared = False  # the folder exists

    def _file(self, root: Path) -> str:
        name = hashlib.blake2b(os.fsencode(str(root)), digest_size=16).hexdigest()
        return os.path.join(self.folder, name + ".json")

    def load(self, root: Path) -> dict[str, Any] | None:
        """The raw entry for ``root``, or None (absent, unreadable, damaged, another root)."""
        data = _read_json(self._file(root), self.secret)
        if (
            type(data) is not dict
            or data.get("format") != FORMAT
            or data.get("version") != __version__
            or data.get("root") != str(root)
        ):
            return None
        return data

    def summary_of(
        self, record: dict[str, Any], figures: bool, root: Path | None = None
    ) -> SkillSummary | None:
        """The entry's summary (of the skill at ``root``), or None when it is damaged or
        lacks figures a report needs."""

        if figures and not record.get("figures"):
            return None
        try:
            return from_json(record["summary"], root)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError):
            return None

    def lookup(
        self, root: Path, listing: Listing, figures: bool, extra: str | None = None
    ) -> tuple[SkillSummary | None, dict[str, Any] | None]:
        """(the summary when the files are unchanged by identity, the raw entry if any).

        ``extra`` names a value derived beside the summary (``runner.Extra``) that the entry
        must hold for a hit: ``record["extra"]`` is ``[extra, value]``."""
        record = self.load(root)
        if record is None:
            return None, None
        known = record.get("identity")
        reads = record.get("reads")
        if (
            known is not None
            and known == identity(listing, self.trees)
            and type(reads) is dict
            and outside.unchanged(reads.get("outside"))
        ):
            if extra is not None:
                held = record.get("extra")
                if type(held) is not list or len(held) != 2 or held[0] != extra:
                    return None, record
            summary = self.summary_of(record, figures, root)
            if summary is not None:
                return summary, record
        return None, record

    def record(
        self,
        skill: Skill,
        summary: SkillSummary,
        inputs: dict[str, Any],
        figures: bool,
        extra: tuple[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The entry for ``skill``, checked into ``summary`` from ``inputs`` (``inputs_of``),
        with ``extra`` (name, value) derived from the same files when asked for."""

        record = {
            "format": FORMAT,
            "version": __version__,
            "root": str(skill.root),
            "identity": self._identity_unless_racy(listing_of(skill)),
            "shape": inputs["shape"],
            "reads": inputs["reads"],
            "figures": figures,
            "summary": to_json(summary),
        }
        if extra is not None:
            record["extra"] = list(extra)
        return record

    def refreshed(
        self, record: dict[str, Any], skill: Skill, extra: tuple[str, Any] | None = None
    ) -> dict[str, Any]:
        """``record`` found equal by content: store the new identity, so the next run takes
        the fast path (and ``extra``, derived again from the files as they are now)."""
        out = {**record, "identity": self._identity_unless_racy(listing_of(skill))}
        out.pop("extra", None)  # derived from files that may have changed since: never kept
        if extra is not None:
            out["extra"] = list(extra)
        return out

    def _identity_unless_racy(self, listing: Listing) -> str | None:
        newest = max((max(e[5], e[6]) for e in listing[0]), default=0)
        for linked in _linked_skill_md(listing[0], self.trees):
            if linked is not None:  # the linked file's own times
                newest = max(newest, linked[2], linked[3])
        if newest >= self.started_ns - RACY_NS:
            return None  # changed too recently for its timestamps to prove the next change
        return identity(listing, self.trees)

    def store(self, root: Path, record: dict[str, Any]) -> None:
        """Write one entry; any failure only means the next run checks the skill again."""
        self._write(self._file(root), record)

    def _write(self, path: Path | str, record: dict[str, Any]) -> None:
        if not self.writable or self.secret is None:
            return

        try:
            self._prepare()
            data = json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii")
            data = seal(data, self.secret)
            # a link planted in the cache folder must not redirect the write elsewhere, and a
            # FIFO or device there must not be written into (it would block, or go nowhere)
            write_atomic(
                Path(path),
                data,
                mode=0o644,
                durable=False,
                follow_symlinks=False,
                write_through=False,
            )
        except (OSError, ValueError):
            self.writable = False

    # --- collection rules -----------------------------------------------------------------
    # SK8xx and SK608 compare every skill with every other: recomputed whenever any skill's
    # input changed, but a run whose skills are all as last time takes their result as is.

    def collection_key(self, inputs: list[tuple[Any, ...]], figures: bool) -> str:
        """The collection rules' input: every skill (root, display, digest of its files, the
        set it is loaded with) in discovery order."""
        return _text_digest((self.key, figures, inputs))

    def load_collection(self, key: str) -> list[Any] | None:

        data = _read_json(self.folder / "collection.json", self.secret)
        try:
            if type(data) is not dict or data.get("key") != key:
                return None
            if data.get("format") != FORMAT or data.get("version") != __version__:
                return None
            return [diagnostic_from_json(d, []) for d in data["diagnostics"]]
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError):
            return None

    def store_collection(self, key: str, diagnostics: list[Any]) -> None:

        if any(d.fix is not None for d in diagnostics):
            return  # collection rules plan no edits; never store what could not be read back
        record = {
            "format": FORMAT,
            "version": __version__,
            "key": key,
            "diagnostics": [diagnostic_to_json(d, {}) for d in diagnostics],
        }
        self._write(self.folder / "collection.json", record)

    def _prepare(self) -> None:
        if self.prepared:
            return
        if self.folder.is_dir():
            self.prepared = True
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        # never committed by accident, skipped by backup tools; a file of the user's (a
        # --cache-dir inside the repository) is never replaced
        for name, text in ((".gitignore", "# Created by skillcheck.\n*\n"), ("CACHEDIR.TAG", _TAG)):
            with (
                contextlib.suppress(FileExistsError),
                open(self.directory / name, "x", encoding="utf-8") as handle,
            ):
                handle.write(text)
        self._prune()
        self.prepared = True

    def _prune(self) -> None:
        """Keep the most recently created run-key folders: each edit of the configuration or
        upgrade starts a new one."""
        try:
            folders = [p for p in self.directory.iterdir() if _is_run_folder(p)]
            if len(folders) <= KEEP_RUN_KEYS:
                return
            folders.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        except OSError:
            return
        for old in folders[KEEP_RUN_KEYS:]:
            with contextlib.suppress(OSError):
                for entry in old.iterdir():
                    entry.unlink()
                old.rmdir()


_RUN_KEY = LazyPattern(r"[0-9a-f]{24}")
_ENTRY = LazyPattern(r"(?:[0-9a-f]{32}|collection)\.json(?:\.[^/]*\.tmp)?|\..*\.tmp")


def _is_run_folder(path: Path) -> bool:
    """A folder this cache made: a run key's name, holding only entry files. Anything else
    in a shared cache directory is left alone."""
    if not _RUN_KEY.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
        return False
    try:
        return all(_ENTRY.fullmatch(entry.name) and entry.is_file() for entry in path.iterdir())
    except OSError:
        return False
