"""``skillcheck install``: the Agent Skills Discovery RFC client.

SOURCE is an origin (``https://example.com``: the index at
``/.well-known/agent-skills/index.json``), an index URL (or a URL ending in ``/``, the
directory holding ``index.json``), or a local directory (see ``wellknown.LocalSource``).
Downloads use the standard library (``http.client``): each URL's host is resolved first and
the connection made to that address, which the loopback rules judge (not the URL's
spelling); a timeout on every socket operation and a deadline on each whole request
(connecting, headers, body, redirects), a size limit checked against Content-Length and
while reading, at most ``MAX_REDIRECTS`` redirects, ``https`` anywhere and plain ``http``
only to loopback (for every URL, redirect targets included). A malformed answer is a
one-line reason naming the URL, for that skill only.

Nothing unverified is written: each artifact's digest is checked, and its archive opened
with our strict readers, before a byte reaches DEST; each skill is written into a new
directory beside ``DEST/<name>`` and renamed into place, replacing an existing one only
with ``force``. Installs into one DEST take turns (a lock on DEST), so the record
``DEST/.skillcheck-installed.json`` is read and rewritten by one at a time; it must be a
regular file (a link or a FIFO there is refused before anything is written), and is
replaced by rename, never written through.
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import os
import socket
import stat
import threading
import urllib.parse
from collections.abc import Callable, Iterator
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
    url_text_problem,
)
from skillcheck.source.atomic import remove_leftovers, write_atomic
from skillcheck.source.load import kind_of, kind_word

MAX_REDIRECTS = 5
DEFAULT_TIMEOUT = 30.0  # seconds per socket operation; a whole request gets four times that
_CHUNK = 1 << 16
_REDIRECTS = (301, 302, 303, 307, 308)


def _is_local(address: str) -> bool:
    """Whether a connection to ``address`` (an IP address as getaddrinfo gives it) stays on
    this machine: loopback, the unspecified address (``0.0.0.0`` reaches local services on
    Linux), either as an IPv4-mapped IPv6 address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_unspecified


def _numeric(host: str, port: int) -> tuple[int, Any] | None:
    """``host`` as the address a connection to it uses, when it is spelled as a number in any
    form the resolver accepts (``2130706433``, ``0x7f000001``, ``127.1``, ``[::1]``): (family,
    sockaddr), found without a lookup. ``localhost`` is 127.0.0.1. None for a name."""
    if host.lower() == "localhost":
        return socket.AF_INET, ("127.0.0.1", port)
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (OSError, UnicodeError, ValueError):
        return None
    return (found[0][0], found[0][4]) if found else None


def url_problem(url: str) -> str | None:
    """Why skillcheck will not fetch ``url`` whatever it resolves to, or None: only https,
    and plain http to an address spelled as a number or ``localhost`` (a name would need a
    lookup to tell, and plain http goes to loopback only)."""
    problem = url_text_problem(url)
    if problem:
        return problem
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "only https (and http to loopback) URLs are fetched"
    if parts.scheme == "http":
        numeric = _numeric(parts.hostname, port or 80)
        if numeric is None or not _is_local(numeric[1][0]):
            return "plain http is allowed only to loopback addresses; use https"
    return None


def resolve(host: str, port: int) -> tuple[int, Any]:
    """The address a connection to ``host`` uses: (family, sockaddr). Raises OSError."""
    numeric = _numeric(host, port)
    if numeric is not None:
        return numeric
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    if not found:
        raise OSError(f"{host} has no address")
    return found[0][0], found[0][4]


class _Malformed(http.client.HTTPException):
    """A response http.client read without complaint that we refuse (our own words)."""


def _reason(exc: BaseException) -> str:
    """A one-line reason for what went wrong on the wire."""
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the server closed the connection without an answer"
    if isinstance(exc, http.client.BadStatusLine):
        return f"not an HTTP response (status line {show(str(exc.args[0]).strip())})"
    if isinstance(exc, http.client.LineTooLong):
        return "a header or status line is longer than 65536 bytes"
    if isinstance(exc, http.client.IncompleteRead):
        return f"the response ended early ({len(exc.partial)} bytes of the body read)"
    if isinstance(exc, _Malformed):
        return f"malformed HTTP response: {exc}"
    if isinstance(exc, http.client.HTTPException):
        return f"malformed HTTP response ({show(str(exc))})"
    if isinstance(exc, ValueError):
        return f"malformed HTTP response ({show(str(exc))})"
    if isinstance(exc, TimeoutError | socket.timeout):
        return "timed out"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return show(str(exc) or type(exc).__name__)


class _Status(FetchError):
    """An HTTP status other than success (``fetch_optional`` tells 404 from the rest)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class HttpSource(Source):
    """A publication on the web (see the module docstring for the rules).

    Each URL is resolved first and the connection made to that very address, so the
    loopback rules judge the address used, not the URL's spelling. ``deadline`` bounds a
    whole request (connecting, headers, body, redirects); ``timeout`` each socket operation.
    A publication is on loopback when its index URL names a loopback address as a number
    or ``localhost``; one named by a host name is remote, whatever the name resolves to.
    """

    def __init__(
        self,
        index_url: str,
        timeout: float = DEFAULT_TIMEOUT,
        deadline: float | None = None,
        resolver: Callable[[str, int], tuple[int, Any]] = resolve,
    ) -> None:
        self.index_url = index_url
        self.timeout = timeout
        self.deadline = 4 * timeout if deadline is None else deadline
        self.resolver = resolver
        parts = urllib.parse.urlsplit(index_url)
        numeric = _numeric(parts.hostname or "", 443) if parts.hostname else None
        self.local = numeric is not None and _is_local(numeric[1][0])

    def _address(self, url: str) -> tuple[urllib.parse.SplitResult, int, Any]:
        """The URL's parts and the address to connect to, once the rules allow it."""
        problem = url_problem(url)
        if problem:
            raise BundleError(f"{show(url)}: {problem}")
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        try:
            family, sockaddr = self.resolver(host, port)
        except (OSError, UnicodeError) as exc:
            raise FetchError(f"{show(url)}: cannot resolve {show(host)}: {_reason(exc)}") from None
        if not self.local and _is_local(sockaddr[0]):
            raise BundleError(
                f"{show(url)}: a publication that is not on loopback may not point at a"
                f" loopback address ({host} is {sockaddr[0]})"
            )
        return parts, family, sockaddr

    def _connection(
        self,
        parts: urllib.parse.SplitResult,
        family: int,
        sockaddr: Any,
        socks: list[socket.socket],
    ) -> http.client.HTTPConnection:
        def connect(*_args: Any, **_kwargs: Any) -> socket.socket:
            sock = socket.socket(family, socket.SOCK_STREAM)
            # a second descriptor for the deadline to shut the connection down with: the
            # connection forgets its socket after an HTTP/1.0 answer, and TLS detaches it
            socks.append(sock.dup())
            sock.settimeout(self.timeout)
            try:
                sock.connect(sockaddr)
            except BaseException:
                sock.close()
                raise
            return sock

        cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        # the Host header and TLS (SNI, certificate) use the URL's name; the socket goes to
        # the address judged above, never to a second lookup of the name
        conn = cls(parts.hostname or "", parts.port, timeout=self.timeout)
        conn._create_connection = connect  # type: ignore[attr-defined]
        return conn

    def fetch(self, url: str, limit: int) -> tuple[bytes, str | None, str]:
        expired = threading.Event()
        socks: list[socket.socket] = []

        def expire() -> None:  # wakes a read blocked on a server that drips bytes
            expired.set()
            for sock in list(socks):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        timer = threading.Timer(self.deadline, expire)
        timer.daemon = True
        timer.start()
        late = FetchError(
            f"{show(url)}: took longer than {self.deadline:g} s (the deadline of a request:"
            " four times --timeout)"
        )
        try:
            result = self._fetch(url, limit, socks)
        except (OSError, ValueError, http.client.HTTPException) as exc:
            if expired.is_set():
                raise late from None
            raise FetchError(f"{show(url)}: {_reason(exc)}") from None
        finally:
            timer.cancel()
            for sock in socks:
                sock.close()
        if expired.is_set():  # cut off, what was read may look whole (headers ended by EOF)
            raise late
        return result

    def _fetch(
        self, first: str, limit: int, socks: list[socket.socket]
    ) -> tuple[bytes, str | None, str]:
        url = first
        for hop in range(MAX_REDIRECTS + 1):
            parts, family, sockaddr = self._address(url)
            conn = self._connection(parts, family, sockaddr, socks)
            target = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
            conn.request("GET", target, headers={"User-Agent": f"skillcheck/{__version__}"})
            response = conn.getresponse()
            if response.status in _REDIRECTS and response.getheader("Location") is not None:
                location = urllib.parse.urljoin(url, response.getheader("Location", ""))
                problem = url_problem(location)
                if problem:
                    raise BundleError(f"{show(url)} redirects to {show(location)}: {problem}")
                if hop == MAX_REDIRECTS:
                    raise FetchError(f"{show(first)}: more than {MAX_REDIRECTS} redirects")
                conn.close()
                url = location
                continue
            if not 200 <= response.status < 300:
                raise _Status(
                    f"{show(url)}: HTTP {response.status} {show(response.reason)[1:-1]}",
                    response.status,
                )
            length = response.getheader("Content-Length", "")
            if length.isdigit() and int(length) > limit:
                raise BundleError(f"{show(url)} is {length} bytes, more than the limit of {limit}")
            chunks = []
            total = 0
            try:
                while chunk := response.read(_CHUNK):
                    total += len(chunk)
                    if total > limit:
                        raise BundleError(f"{show(url)} is larger than the limit of {limit} bytes")
                    chunks.append(chunk)
            except http.client.IncompleteRead:
                if not response.chunked:
                    raise
                # http.client says the same of a chunk cut short and of a bad chunk size
                raise _Malformed("truncated or malformed chunked encoding") from None
            if length.isdigit() and total != int(length):
                # read(amt) returns what came before the server hung up, without complaint
                raise _Malformed(f"the response ended early ({total} of {length} bytes)")
            ctype = (
                response.headers.get_content_type() if "Content-Type" in response.headers else None
            )
            return b"".join(chunks), ctype, url
        raise AssertionError("unreachable")  # the loop returns or raises

    def fetch_optional(self, url: str, limit: int) -> bytes | None:
        try:
            return self.fetch(url, limit)[0]
        except _Status as exc:
            if exc.status in (404, 410):
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
    waiting: Callable[[str], None] | None = None,
    check: Callable[[Artifact], str | None] | None = None,
) -> InstallReport:
    """Install the publication's (selected) skills into ``dest/<name>/``; ``progress`` is
    called with each skill's name once its artifact is fetched and checked; ``waiting`` with
    a note when another install into ``dest`` is under way (this one waits for it).

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
    _check_dest(dest)  # a dry run fails where the real one would
    if dry_run:
        _install(source, pub, entries, dest, report, True, force, limits, progress, check)
        return report
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(f"{dest}: cannot create: {exc.strerror or exc}") from None
    with _locked(dest, waiting):
        _check_dest(dest)  # again, now that no other install can change it
        remove_leftovers(dest)
        _install(source, pub, entries, dest, report, False, force, limits, progress, check)
    return report


def _install(
    source: Source,
    pub: Any,
    entries: list[Any],
    dest: Path,
    report: InstallReport,
    dry_run: bool,
    force: bool,
    limits: Limits,
    progress: Callable[[str], None] | None,
    check: Callable[[Artifact], str | None] | None = None,
) -> None:
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
    try:
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
            target = dest / name
            if not dry_run:
                try:
                    _write_skill(artifact, target)
                except OSError as exc:
                    reason = f"{target}: cannot write: {exc.strerror or exc}"
                    report.failed.append((name, reason, 2))
                    continue
            report.installed.append(
                Installed(name, target, len(artifact.files), artifact.size, artifact.verified)
            )
            if not dry_run:
                records[name] = _record(artifact, pub.index_url) if artifact.verified else None
    finally:
        # whatever stops the loop, each skill written so far is in the record
        if records:
            _update_record(dest, previous, records)


# every install into one DEST holds this lock on DEST itself (no lock file to leave behind):
# two installs at once would each write the record from what they read, losing one's skills
@contextlib.contextmanager
def _locked(dest: Path, waiting: Callable[[str], None] | None = None) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no flock; installs are not serialised
        yield
        return
    try:
        fd = os.open(dest, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | os.O_CLOEXEC)
    except OSError as exc:
        raise FetchError(f"{dest}: cannot open: {exc.strerror or exc}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting(f"waiting for another install into {dest} to finish")
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _check_dest(dest: Path) -> None:
    """Raise ``FetchError`` when installing into ``dest`` cannot work: it, or the nearest
    existing folder above it, is not a directory; or its record is not a regular file."""
    probe = dest
    while not os.path.lexists(probe) and probe.parent != probe:
        probe = probe.parent
    if not probe.is_dir():
        raise FetchError(f"{probe}: not a directory")
    record = dest / INSTALLED_NAME
    try:
        mode = os.lstat(record).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FetchError(f"{record}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        # read and written by the same rule: never followed, never written through
        raise FetchError(
            f"{record}: a {kind_word(kind_of(mode))}, not a regular file; install keeps its"
            " record there: move it away and install again"
        )


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
    write_atomic(dest / INSTALLED_NAME, data, mode=0o644, follow_symlinks=False)
