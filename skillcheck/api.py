"""The library calls behind the commands: settings and ``lint`` (from ``api_lint``),
``catalog``, ``pack`` and ``install``, with the gate a Python caller gets too: nothing is
catalogued or packed while a skill has an error (or any finding, when strict)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from skillcheck import __version__
from skillcheck.api_lint import LintResult, describe_settings, lint, load_settings, run_settings
from skillcheck.engine.runner import Extra, RunProgress
from skillcheck.errors import RefusedContent, UsageError
from skillcheck.package.archive import DEFAULT_LIMITS, Limits
from skillcheck.package.bundle import Source, write_bundle
from skillcheck.package.bundlecheck import valid_pack_record
from skillcheck.package.catalog import (
    PACK_RECORD,
    build_manifest,
    manifest_of_records,
    pack_record,
)
from skillcheck.package.install import DEFAULT_TIMEOUT, InstallReport, open_source
from skillcheck.package.install import install as install_from
from skillcheck.package.loader import Bundle, BundleError, open_bundle, unpack, verify
from skillcheck.package.wellknown import (
    Artifact,
    FetchError,
    base_url_problem,
    pack_uploads,
    publish,
)
from skillcheck.rules import all_rules
from skillcheck.settings import Settings
from skillcheck.source.discover import absolute
from skillcheck.source.skill import Severity

__all__ = [
    "Bundle",
    "BundleError",
    "LintResult",
    "Packed",
    "Refused",
    "Settings",
    "catalog_root",
    "check_destination",
    "check_for_shipping",
    "describe_settings",
    "install",
    "lint",
    "load_settings",
    "manifest",
    "open_bundle",
    "pack",
    "run_settings",
    "unpack",
    "verify",
]


UPLOAD_TARGET = "claude-api"  # the loader upload zips (``pack --uploads``) are written for


class Refused(RefusedContent):
    """Lint found errors (or, strict, any finding): ``result`` holds them (exit 1)."""

    def __init__(self, result: LintResult) -> None:
        super().__init__("refusing: fix the findings above first")
        self.result = result


def check_for_shipping(
    paths: Sequence[Path],
    settings: Settings,
    *,
    progress: RunProgress | None = None,
    records: bool = False,
    allow: Collection[str] = (),
) -> LintResult:
    """Lint ``paths`` (default: the current directory), keeping the loaded skills; raise
    Refused when the result fails, UsageError when there is no skill.

    ``records``: instead of keeping the loaded skills, derive each one's ``pack_record``
    where it is checked (``result.extras``), cached with its lint result, so skills whose
    files are unchanged since the last pack are neither checked nor loaded again.

    ``allow``: rule codes whose findings do not refuse (``--allow``): the explicit, per-rule
    way to ship a skill a security rule reports (a scanner's own test skill)."""
    # the manifest's token counts, as lint's budget rules count them
    settings = replace(settings, figures=True)
    extra = None
    if records:
        derive = functools.partial(pack_record, tokenizer=_tokenizer(settings))
        extra = Extra(PACK_RECORD, derive, valid_pack_record)
    result = lint(
        list(paths) or [Path(".")], settings, keep=not records, progress=progress, extra=extra
    )
    if result.failed(settings.strict, allow):
        raise Refused(result)
    if not result.skills:
        raise UsageError("no skills found (a skill is a directory with a SKILL.md)")
    return result


def catalog_root(paths: Sequence[Path]) -> Path:
    """What each skill's ``path`` is relative to: a single directory PATH, else the current
    directory, so the manifest does not depend on where the checkout lives."""
    if len(paths) == 1 and paths[0].is_dir():
        return absolute(paths[0])
    return Path.cwd()


def manifest(result: LintResult, settings: Settings, paths: Sequence[Path]) -> dict[str, Any]:
    """The catalog manifest of a checked result."""
    return build_manifest(
        result.loaded,
        catalog_root(paths),
        tokenizer=_tokenizer(settings),
        generator=f"skillcheck {__version__}",
        figures={skill.root: skill.figures for skill in result.skills},
    )


def _tokenizer(settings: Settings) -> Any:
    return settings.options.get("tokenizer", "estimate")


@dataclass
class Packed:
    count: int  # skills packed
    where: Path  # the archive, the well-known directory or the uploads directory
    digest: str = ""  # the archive's, for --output
    uploads: list[tuple[str, str]] = field(default_factory=list)  # (zip name, digest)
    # findings the gate let through (warnings and info; errors too with an allowing config)
    let_through: dict[Severity, int] = field(default_factory=dict)


def check_destination(
    output: Path | None, well_known: Path | None, uploads: Path | None, base_url: str | None
) -> None:
    """Raise UsageError unless exactly one destination is given (and a base URL only for a
    well-known directory): checked before anything is read."""
    if [output, well_known, uploads].count(None) != 2:
        raise UsageError(
            "pack needs exactly one of --output FILE, --well-known DIR or --uploads DIR"
        )
    if base_url and well_known is None:
        raise UsageError("--base-url goes with --well-known")
    problem = base_url_problem(base_url)
    if problem:
        raise UsageError(problem)


def pack(
    paths: Sequence[Path],
    settings: Settings,
    *,
    output: Path | None = None,
    well_known: Path | None = None,
    uploads: Path | None = None,
    fmt: str = "tar.gz",
    base_url: str | None = None,
    mtime: int | None = None,
    progress: RunProgress | None = None,
    allow: Collection[str] = (),
) -> Packed:
    """Check, then write exactly one of: a bundle archive (``output``), a well-known
    directory or one upload zip per skill. Raises Refused when the check fails."""
    check_destination(output, well_known, uploads, base_url)
    if output is not None:  # no skill loaded in this process: each one's record instead
        result = check_for_shipping(paths, settings, progress=progress, records=True, allow=allow)
        data = manifest_of_records(
            zip([skill.root for skill in result.skills], result.extras, strict=True),
            catalog_root(paths),
            generator=f"skillcheck {__version__}",
        )
        sources = {
            record["entry"]["name"]: Source(skill.root, skill.display_root, record["links"])
            for skill, record in zip(result.skills, result.extras, strict=True)
        }
        digest = write_bundle(data, sources, output, fmt=fmt, mtime=mtime)
        return Packed(len(result.skills), output, digest, let_through=result.counts())
    if uploads is not None and UPLOAD_TARGET not in settings.targets:
        # an upload zip is for claude.ai and the Skills API: its gate is that loader's rules
        # (reserved words in `name`, keys it rejects), whatever else was asked for
        settings = replace(settings, targets=(*settings.targets, UPLOAD_TARGET))
    result = check_for_shipping(paths, settings, progress=progress, allow=allow)
    data = manifest(result, settings, paths)
    count = len(result.skills)
    if well_known is not None:
        publish(result.loaded, data, well_known, base_url, mtime, archive_format=fmt)
        return Packed(count, well_known, let_through=result.counts())
    if uploads is not None:
        zips = list(pack_uploads(result.loaded, data, uploads, mtime))
        return Packed(count, uploads, uploads=zips, let_through=result.counts())
    raise AssertionError("check_destination lets exactly one destination through")


def security_codes() -> frozenset[str]:
    """The rules the shipping gates screen for: those with a ``security_severity``."""
    return frozenset(r.code for r in all_rules() if r.security_severity is not None)


def screen(
    skills: Mapping[str, Mapping[str, bytes]],
    settings: Settings,
    allow: Collection[str] = (),
    shown: Callable[[LintResult, Path], None] | None = None,
) -> LintResult | None:
    """Lint skills that exist only as bytes (a bundle being verified, an artifact about to
    be installed) with the security rules, in a private temporary copy; the result when one
    has a security error whose rule is not in ``allow``, else None.

    ``skills`` maps each skill's name to its files (relative POSIX path -> bytes); the paths
    were checked by the archive reader (relative, no ``..``), and are checked again here.
    ``shown`` gets a refusing result while the copy exists, with the copy's root (for paths
    shown as ``name/SKILL.md`` and source excerpts)."""
    import tempfile

    codes = security_codes()
    screening = replace(settings, select=codes - frozenset(allow), strict=False, figures=False)
    with tempfile.TemporaryDirectory(prefix="skillcheck-screen-") as tmp:
        root = Path(tmp).resolve()
        dirs = []
        for name, files in skills.items():
            skill_dir = (root / name).resolve()
            if not skill_dir.is_relative_to(root) or skill_dir == root:
                raise BundleError(f"{name!r}: not a safe skill name")
            for rel, data in files.items():
                target = (skill_dir / rel).resolve()
                if not target.is_relative_to(skill_dir):
                    raise BundleError(f"{name}/{rel}: not a safe path")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            dirs.append(skill_dir)
        if not dirs:
            return None
        result = lint(dirs, screening)
        if not result.failed(False, allow):
            return None
        if shown is not None:
            shown(result, root)
        return result


def install(
    source: str,
    dest: Path,
    *,
    skills: Sequence[str] = (),
    dry_run: bool = False,
    force: bool = False,
    allow_unverified: bool = False,
    base_url: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_LIMITS.max_total_bytes,
    progress: Callable[[str], None] | None = None,
    waiting: Callable[[str], None] | None = None,
    check: Callable[[Artifact], str | None] | None = None,
    screen: Callable[[str, dict[str, bytes]], str | None] | None = None,
) -> InstallReport:
    """Install the skills ``source`` publishes (an origin, an index URL or a directory; the
    Agent Skills Discovery RFC) into ``dest/<name>/``, verified, atomically: ``skills``
    names the ones to install (none: all); ``max_bytes`` bounds a download and an unpacked
    skill. A source that cannot be fetched is a UsageError; the other arguments are those of
    ``package.install.install``. The caller lints what was installed (``lint`` on each
    ``report.installed`` path)."""
    try:
        return install_from(
            open_source(source, timeout, base_url),
            dest,
            select=list(skills) or None,
            dry_run=dry_run,
            force=force,
            allow_unverified=allow_unverified,
            limits=Limits(max_total_bytes=max_bytes),
            progress=progress,
            waiting=waiting,
            check=check,
            screen=screen,
        )
    except FetchError as exc:  # a source that cannot be fetched is a usage problem (exit 2)
        raise UsageError(str(exc)) from None
