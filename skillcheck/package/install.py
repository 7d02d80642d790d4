"""``skillcheck install``: the Agent Skills Discovery RFC client.

SOURCE is an origin (``https://example.com``: the index at
``/.well-known/agent-skills/index.json``), an index URL (or a URL ending in ``/``, the
directory holding ``index.json``), or a local directory (see ``wellknown.LocalSource``).
Downloads use the standard library (``urllib``): a timeout on every socket operation and a
deadline per download, a size limit checked against Content-Length and while reading, at
most ``MAX_REDIRECTS`` redirects, ``https`` anywhere and plain ``http`` only to loopback
(for every URL, redirect targets included).

Nothing unverified is written: each artifact's digest is checked, and its archive opened
with our strict readers, before a byte reaches DEST; each skill is written into a new
directory beside ``DEST/<name>`` and renamed into place, replacing an existing one only
with ``force``.
"""

from __future__ import annotations

import ipaddress
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck import __version__
from skillcheck.errors import UsageError
from skillcheck.package.archive import DEFAULT_LIMITS, INSTALLED_NAME, BundleError, Limits
from skillcheck.package.bundle import _write_new_file, building_dir
from skillcheck.package.bundlecheck import parse_manifest
from skillcheck.package.catalog import (
    MANIFEST_SCHEMA,
    CatalogError,
    dumps_manifest,
    file_digest,
    read_in_root,
    show,
    skill_digest,
)
from skillcheck.package.wellknown import (
    INDEX_NAME,
    WELL_KNOWN,
    Artifact,
    FetchError,
    LocalSource,
    Source,
    iter_skills,
    open_publication,
)
from skillcheck.source.atomic import write_atomic

MAX_REDIRECTS = 5
DEFAULT_TIMEOUT = 30.0  # seconds per socket operation; a download gets four times that
_CHUNK = 1 << 16


def _loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_problem(url: str, local: bool = True) -> str | None:
    """Why skillcheck will not fetch ``url``, or None. ``local``: the publication itself is
    on loopback; a remote one may not send us to loopback services (by a redirect or an
    absolute URL)."""
    parts = urllib.parse.urlsplit(url)
    if not local and _loopback(parts.hostname):
        return "a publication that is not on loopback may not point at a loopback address"
    if parts.scheme == "https" and parts.hostname:
        return None
    if parts.scheme == "http" and _loopback(parts.hostname):
        return None
    if parts.scheme == "http":
        return "plain http is allowed only to loopback addresses; use https"
    return "only https (and http to loopback) URLs are fetched"


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Bounded redirects, each target held to the same rule as the first URL."""

    max_redirections = MAX_REDIRECTS

    def __init__(self, local: bool) -> None:
        super().__init__()
        self.local = local

    def redirect_request(  # type: ignore[override]
        self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> Any:
        problem = url_problem(newurl, self.local)
        if problem:
            raise BundleError(f"{show(req.full_url)} redirects to {show(newurl)}: {problem}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class HttpSource(Source):
    """A publication on the web (see the module docstring for the rules)."""

    def __init__(self, index_url: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.index_url = index_url
        self.timeout = timeout
        self.local = _loopback(urllib.parse.urlsplit(index_url).hostname)
        self.opener = urllib.request.build_opener(_Redirects(self.local))

    def _open(self, url: str) -> Any:
        problem = url_problem(url, self.local)
        if problem:
            raise BundleError(f"{show(url)}: {problem}")
        request = urllib.request.Request(url, headers={"User-Agent": f"skillcheck/{__version__}"})
        try:
            return self.opener.open(request, timeout=self.timeout)
        except urllib.error.HTTPError as exc:
            exc.close()
            if 300 <= exc.code < 400:
                raise FetchError(f"{show(url)}: more than {MAX_REDIRECTS} redirects") from None
            raise FetchError(f"{show(url)}: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise FetchError(f"{show(url)}: {exc.reason}") from None
        except (OSError, ValueError) as exc:  # timeouts, resets, malformed responses
            raise FetchError(f"{show(url)}: {exc}") from None

    def fetch(self, url: str, limit: int) -> tuple[bytes, str | None, str]:
        deadline = time.monotonic() + 4 * self.timeout
        with self._open(url) as response:
            length = response.headers.get("Content-Length", "")
            if length.isdigit() and int(length) > limit:
                raise BundleError(f"{show(url)} is {length} bytes, more than the limit of {limit}")
            chunks = []
            total = 0
            try:
                while chunk := response.read(_CHUNK):
                    total += len(chunk)
                    if total > limit:
                        raise BundleError(f"{show(url)} is larger than the limit of {limit} bytes")
                    if time.monotonic() > deadline:
                        raise FetchError(f"{show(url)}: download took longer than allowed")
                    chunks.append(chunk)
            except (OSError, ValueError) as exc:
                raise FetchError(f"{show(url)}: {exc}") from None
            ctype = (
                response.headers.get_content_type() if "Content-Type" in response.headers else None
            )
            return b"".join(chunks), ctype, response.geturl()

    def fetch_optional(self, url: str, limit: int) -> bytes | None:
        try:
            return self.fetch(url, limit)[0]
        except FetchError as exc:
            if "HTTP 404" in str(exc) or "HTTP 410" in str(exc):
                return None
            raise


def open_source(
    source: str, timeout: float = DEFAULT_TIMEOUT, base_url: str | None = None
) -> Source:
    """A ``Source`` for the SOURCE argument of ``install``."""
    if "://" not in source:
        path = Path(source)
        if not path.is_dir():
            raise UsageError(f"{source}: not a directory, nor an http(s) URL")
        try:
            return LocalSource(path, base_url)
        except FetchError as exc:
            raise UsageError(str(exc)) from None
    problem = url_problem(source)
    if problem:
        raise UsageError(f"{source}: {problem}")
    parts = urllib.parse.urlsplit(source)
    if parts.path in ("", "/"):
        index_url = f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{INDEX_NAME}"
    elif parts.path.endswith("/"):
        index_url = urllib.parse.urljoin(source, INDEX_NAME)
    else:
        index_url = source
    return HttpSource(index_url, timeout)


@dataclass
class Installed:
    name: str
    path: Path
    files: int
    size: int
    verified: bool


@dataclass
class InstallReport:
    installed: list[Installed] = field(default_factory=list)
    failed: list[tuple[str, str, int]] = field(default_factory=list)  # name, reason, exit code
    warnings: list[str] = field(default_factory=list)
    current: list[str] = field(default_factory=list)  # installed already, unchanged


def _write_skill(artifact: Artifact, target: Path) -> None:
    """``target`` gets the artifact's files, all at once or not at all."""
    with building_dir(target, ".install") as tmp:
        for path, (data, executable) in artifact.files.items():
            _write_new_file(tmp, path, data, executable)


def install(
    source: Source,
    dest: Path,
    *,
    select: list[str] | None = None,
    dry_run: bool = False,
    force: bool = False,
    allow_unverified: bool = False,
    limits: Limits = DEFAULT_LIMITS,
    progress: Callable[[str], None] | None = None,
    check: Callable[[Artifact], str | None] | None = None,
) -> InstallReport:
    """Install the publication's (selected) skills into ``dest/<name>/``; ``progress`` is
    called with each skill's name once its artifact is fetched and checked.

    The index problems (unknown ``$schema``, v0.1.0 without ``allow_unverified``, malformed
    JSON) raise ``BundleError``; a skill that fails (digest, archive, download, existing
    directory without ``force``) is recorded in ``failed`` and nothing of it is written.
    A skill installed earlier from an artifact of the same digest, and unchanged on disk
    since, is ``current``: the RFC's digest-based caching, nothing is downloaded for it.
    ``check``, given a verified artifact, may refuse it with a reason before it is written.
    """
    dest = Path(dest)
    pub, entries = open_publication(
        source, limits=limits, allow_unverified=allow_unverified, select=select
    )
    report = InstallReport(warnings=list(pub.index.warnings))
    if not pub.verified:
        report.warnings.append("v0.1.0 index: no digests, so these skills are installed UNVERIFIED")
    previous = _read_record(dest, report)
    records: dict[str, dict[str, Any] | None] = {}
    wanted = []
    for entry in entries:
        target = dest / entry.name
        if force or not os.path.lexists(target):
            wanted.append(entry)
        elif entry.digest is not None and _unchanged(dest, previous.get(entry.name), entry.digest):
            report.current.append(entry.name)
        else:
            report.failed.append((entry.name, f"{target}: exists (use --force to replace it)", 1))
    for entry, artifact in iter_skills(source, pub, wanted, limits):
        name = entry.name
        if progress is not None:
            progress(name)
        if isinstance(artifact, Exception):
            code = 2 if isinstance(artifact, FetchError) else 1
            report.failed.append((name, str(artifact), code))
            continue
        problem = check(artifact) if check is not None else None
        if problem:  # a verified artifact refused all the same (a required signature)
            report.failed.append((name, problem, 1))
            continue
        if not dry_run:
            try:
                dest.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise FetchError(f"{dest}: cannot create: {exc.strerror or exc}") from None
        target = dest / name
        if not dry_run:
            try:
                _write_skill(artifact, target)
            except OSError as exc:
                report.failed.append((name, f"{target}: cannot write: {exc.strerror or exc}", 2))
                continue
        report.installed.append(
            Installed(name, target, len(artifact.files), artifact.size, artifact.verified)
        )
        if not dry_run:
            records[name] = _record(artifact, pub.index_url) if artifact.verified else None
    if records:
        _update_record(dest, previous, records)
    return report


def _read_record(dest: Path, report: InstallReport) -> dict[str, dict[str, Any]]:
    """The skills ``DEST/.skillcheck-installed.json`` lists, by name ({} when there is none,
    or, with a warning, when it is not valid)."""
    if not os.path.lexists(dest / INSTALLED_NAME):
        return {}
    try:
        previous = parse_manifest(read_in_root(dest, INSTALLED_NAME))
    except (BundleError, CatalogError) as exc:
        report.warnings.append(f"{dest / INSTALLED_NAME}: {exc}; it will be written afresh")
        return {}
    return {e["name"]: e for e in previous["skills"]}


def _unchanged(dest: Path, record: dict[str, Any] | None, digest: str) -> bool:
    """Whether ``dest/<name>`` holds exactly what was installed from an artifact of
    ``digest``: the same files with the same digests, nothing more, no link."""
    if record is None or record.get("source", {}).get("digest") != digest:
        return False
    root = dest / record["name"]
    expected = {fe["path"]: fe["digest"] for fe in record["files"]}
    seen = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            rel = Path(dirpath, name).relative_to(root).as_posix()
            try:
                data = read_in_root(root, rel)
            except CatalogError:
                return False
            if expected.get(rel) != file_digest(data):
                return False
            seen.add(rel)
    return seen == set(expected)


def _record(artifact: Artifact, index_url: str) -> dict[str, Any]:
    """Our manifest's entry for an installed skill, with where it came from."""
    files: list[dict[str, Any]] = [
        {"path": p, "digest": file_digest(d), "size": len(d), "executable": x}
        for p, (d, x) in artifact.files.items()
    ]
    return {
        "name": artifact.entry.name,
        "description": artifact.entry.description,
        "digest": skill_digest((f["path"], f["digest"]) for f in files),
        "files": files,
        "source": {"index": index_url, "url": artifact.url, "digest": artifact.entry.digest},
    }


def _update_record(
    dest: Path,
    previous: dict[str, dict[str, Any]],
    records: dict[str, dict[str, Any] | None],
) -> None:
    """Merge what was installed into ``DEST/.skillcheck-installed.json`` (our manifest), so
    that ``open_bundle(DEST)`` verifies the installed skills; skills installed unverified
    (None) are left out of it, as are skills whose directory is gone."""

    entries = dict(previous)
    for name, entry in records.items():
        entries.pop(name, None)
        if entry is not None:
            entries[name] = entry
    skills = [entries[n] for n in sorted(entries) if (dest / n).is_dir()]
    data = dumps_manifest(
        {"$schema": MANIFEST_SCHEMA, "generator": f"skillcheck {__version__}", "skills": skills}
    )
    write_atomic(dest / INSTALLED_NAME, data, mode=0o644)
