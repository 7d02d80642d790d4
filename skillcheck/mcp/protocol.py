"""SEP-2640 as data: skill URIs, ``Skill`` entries, and the checks the extension puts on hosts.

No MCP library here: the server and the client build on these, and so can a test. The
extension's text (``specification/stable/skills.mdx`` in modelcontextprotocol/ext-skills,
against base protocol revision 2026-07-28) is the authority for every rule below.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from skillcheck.errors import RefusedContent
from skillcheck.package.catalog import SKILL_FILE, file_digest, path_problem, show
from skillcheck.source.frontmatter import parse_document
from skillcheck.source.lazy import LazyPattern

EXTENSION_ID = "io.modelcontextprotocol/skills"
SCHEME = "skill://"
DIRECTORY_MIME = "inode/directory"
# the per-skill limits every conforming host must accept (SEP-2640 "Limits"); a server
# should not serve more, and we neither serve nor accept more
MAX_RESOURCES = 512
MAX_SKILL_BYTES = 16 * 1024 * 1024
_DIGEST = LazyPattern(r"sha256:[0-9a-f]{64}")


class EntryError(RefusedContent):
    """A ``Skill`` entry, or a file read for it, that a host must not use."""


def skill_root(path: str) -> str:
    """``skill://<skill-path>``: the skill's directory resource (no trailing slash). Paths are
    percent-encoded as URI paths are (``quote(..., safe="/")``, as other implementations do)."""
    return SCHEME + quote(path, safe="/")


def file_uri(path: str, rel: str) -> str:
    return f"{skill_root(path)}/{quote(rel, safe='/')}"


def _decoded(text: str) -> str:
    """A percent-encoded URI part decoded; ValueError when it is not UTF-8."""
    return unquote(text, errors="strict")


def skill_path_problem(path: str) -> str | None:
    """Why ``path`` (``a/b/name``, decoded) cannot be a skill path, or None."""
    return path_problem(path)


def json_frontmatter(values: dict[Any, Any]) -> dict[str, Any]:
    """The frontmatter as the JSON object SEP-2640 lists verbatim. YAML values JSON has no
    form for (dates, non-string keys, NaN) raise ValueError naming the field."""

    def convert(value: Any, where: str) -> Any:
        if value is None or isinstance(value, bool | int | str):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{where}: {value!r} has no JSON form")
            return value
        if isinstance(value, datetime.date):
            raise ValueError(f"{where}: a YAML date has no JSON form (quote it)")
        if isinstance(value, list):
            return [convert(v, f"{where}[{i}]") for i, v in enumerate(value)]
        if isinstance(value, dict):
            out = {}
            for k, v in value.items():
                if not isinstance(k, str):
                    raise ValueError(f"{where}: key {k!r} is not a string")
                out[k] = convert(v, f"{where}.{k}" if where else k)
            return out
        raise ValueError(f"{where}: {type(value).__name__} has no JSON form")

    result = convert(values, "")
    assert isinstance(result, dict)
    return result


def parse_frontmatter(data: bytes) -> dict[str, Any]:
    """SKILL.md's frontmatter as JSON, through the one frontmatter reader; ValueError when it
    has none, does not parse, or has no JSON form."""
    doc = parse_document(Path(SKILL_FILE), data)
    fm = doc.frontmatter
    if fm is None or fm.close_line is None:
        raise ValueError("SKILL.md has no frontmatter block")
    if fm.error is not None or fm.too_complex or fm.root is None:
        raise ValueError("SKILL.md frontmatter is not valid YAML")
    if fm.root.kind != "mapping":
        raise ValueError("SKILL.md frontmatter is not a mapping")
    return json_frontmatter(fm.values)


@dataclass(frozen=True)
class Resource:
    rel: str  # path relative to the skill root
    uri: str
    size: int
    digest: str


@dataclass(frozen=True)
class Entry:
    """A checked ``Skill`` entry."""

    uri: str  # of SKILL.md
    root: str  # the skill's directory resource, as the server writes it
    path: str  # the skill path (prefix segments and the name), decoded
    name: str
    frontmatter: dict[str, Any]
    resources: dict[str, Resource]  # by relative path, SKILL.md included

    @property
    def size(self) -> int:
        return sum(r.size for r in self.resources.values())


def check_entry(raw: Any, *, max_bytes: int = MAX_SKILL_BYTES) -> Entry:
    """The host's checks on one entry before anything is read (SEP-2640 "Skill Entries",
    "Resources", "Limits"): a complete, array-form manifest of safe, distinct files under
    the skill's root, SKILL.md among them, within the limits, and a name equal to the last
    segment of the skill path. Raises EntryError with a one-line reason."""
    if not isinstance(raw, dict):
        raise EntryError("a skills/list entry is not an object")
    uri = raw.get("uri")
    if not isinstance(uri, str):
        raise EntryError("entry has no string 'uri'")
    who = show(uri)
    suffix = "/" + SKILL_FILE
    if not uri.startswith(SCHEME) or not uri.endswith(suffix):
        raise EntryError(f"{who}: not a skill://<skill-path>/SKILL.md URI")
    root = uri[: -len(suffix)]
    try:
        path = _decoded(root[len(SCHEME) :])
    except ValueError:
        raise EntryError(f"{who}: skill path is not UTF-8 once decoded") from None
    problem = skill_path_problem(path)
    if problem:
        raise EntryError(f"{who}: unsafe skill path: {problem}")
    fm = raw.get("frontmatter")
    if not isinstance(fm, dict):
        raise EntryError(f"{who}: 'frontmatter' is not an object")
    name, description = fm.get("name"), fm.get("description")
    if not isinstance(name, str) or not isinstance(description, str):
        raise EntryError(f"{who}: frontmatter lacks string 'name' and 'description'")
    last = path.rsplit("/", 1)[-1]
    if name != last:
        raise EntryError(
            f"{who}: frontmatter name {show(name)} differs from the last path segment {show(last)}"
        )
    listed = raw.get("resources")
    if listed == "dynamic":
        raise EntryError(f"{who}: resources are 'dynamic': no digests, nothing can be verified")
    if not isinstance(listed, list):
        raise EntryError(f"{who}: 'resources' is neither an array nor 'dynamic'")
    if len(listed) > MAX_RESOURCES:
        raise EntryError(f"{who}: {len(listed)} resources, more than {MAX_RESOURCES}")
    resources: dict[str, Resource] = {}
    total = 0
    for item in listed:
        if not isinstance(item, dict):
            raise EntryError(f"{who}: a resource is not an object")
        ruri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
        if not isinstance(ruri, str) or not ruri.startswith(root + "/"):
            raise EntryError(f"{who}: resource {show(str(ruri))} is outside the skill")
        try:
            rel = _decoded(ruri[len(root) + 1 :])
        except ValueError:
            raise EntryError(f"{who}: resource {show(ruri)} is not UTF-8 once decoded") from None
        problem = path_problem(rel)
        if problem:
            raise EntryError(f"{who}: resource {show(ruri)}: {problem}")
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise EntryError(f"{who}: resource {show(ruri)}: digest is not sha256:<64 hex>")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise EntryError(f"{who}: resource {show(ruri)}: size is not a byte count")
        if rel in resources:
            raise EntryError(f"{who}: resource {show(ruri)} listed twice")
        total += size
        if total > max_bytes:
            raise EntryError(f"{who}: files total more than {max_bytes:,} bytes")
        resources[rel] = Resource(rel, ruri, size, digest)
    if SKILL_FILE not in resources:
        raise EntryError(f"{who}: the manifest does not list SKILL.md itself")
    return Entry(uri, root, path, name, fm, resources)


def check_file(entry: Entry, rel: str, data: bytes) -> None:
    """SEP-2640 "Verification on Read": size then digest; EntryError names the file."""
    res = entry.resources[rel]
    if len(data) != res.size:
        raise EntryError(f"{show(res.uri)}: {len(data)} bytes read, the manifest lists {res.size}")
    if file_digest(data) != res.digest:
        raise EntryError(f"{show(res.uri)}: content does not match the manifest's digest")


def check_frontmatter(entry: Entry, skill_md: bytes) -> None:
    """SEP-2640 "Frontmatter Verification": SKILL.md re-parsed equals the listed frontmatter."""
    try:
        parsed = parse_frontmatter(skill_md)
    except ValueError as exc:
        raise EntryError(f"{show(entry.uri)}: {exc}") from None
    if parsed != entry.frontmatter:
        fields = sorted(
            k
            for k in set(parsed) | set(entry.frontmatter)
            if parsed.get(k, ...) != entry.frontmatter.get(k, ...)
        )
        raise EntryError(
            f"{show(entry.uri)}: frontmatter differs from the listing "
            f"(field{'s' * (len(fields) != 1)} {', '.join(show(f) for f in fields)})"
        )
