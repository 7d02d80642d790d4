"""The result cache: an unchanged skill is not read or checked again, and nothing a user sees
depends on whether the cache was there, warm, stale, damaged, forged or unwritable.

Runs go through the API (``lint(paths, settings)``, rendered as the CLI renders) to see
``result.how``, and through the CLI where the user-visible wiring matters. Most tests make
freshly written files count as settled (``cache.RACY_NS = 0``); one checks that, by default,
files younger than two seconds are verified by content on the next run.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import io
import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import invoke, skillcheck_command, write_skill
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from skillgen import generate
from test_jobs import defect_tree

from skillcheck.engine import cache as cache_module
from skillcheck.engine.summary import from_json, to_json
from skillcheck.source.skill import (
    Diagnostic,
    Figures,
    Fix,
    Outcome,
    Pos,
    Severity,
    SkillSummary,
    Span,
)

# --- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written before a run count as settled: entries store their identity at once."""
    monkeypatch.setattr(cache_module, "RACY_NS", 0)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(
    cache: Path | None, fmt: str = "text", paths: tuple[str, ...] = ("skills",), **config
) -> tuple[int, str, Counter[str]]:
    """(exit code, report, how) of a lint run as ``skillcheck lint --isolated`` makes it, with
    the configuration ``config`` (skillcheck.toml keys) and ``--cache-dir cache``."""
    from skillcheck.engine.config import build_settings
    from skillcheck.engine.lint import lint
    from skillcheck.report import ReportOptions, render
    from skillcheck.settings import Config

    options = dataclasses.replace(
        build_settings(Config(values=config)), cache_dir=cache, jobs=1, figures=fmt == "json"
    )
    result = lint([Path(p) for p in paths], options)
    report = render(fmt, result, ReportOptions(cwd=Path.cwd()))
    return (1 if result.failed(options.strict) else 0), report, result.how


def cli(*args: str) -> tuple[int, str, str]:
    result = invoke("lint", "--isolated", "--jobs", "1", *args)
    return result.exit_code, result.stdout, result.stderr


def record_of(path: Path):
    """The record in a cache file (sealed with this user's key: ``cache.seal``)."""
    return json.loads(path.read_bytes())["record"]


def _key() -> bytes:
    key = cache_module.cache_key()
    assert key is not None
    return key


def put_record(path: Path, value) -> None:
    """Write ``value`` as the cache would: sealed with this user's key, so a test of what
    the cache checks inside an entry is not stopped at the seal."""
    path.write_bytes(cache_module.seal(json.dumps(value).encode(), _key()))


def entries(cache: Path) -> dict[str, Path]:
    """Skill directory name -> its entry file."""
    out = {}
    for path in cache.glob("*/*.json"):
        try:
            root = record_of(path).get("root")
        except (OSError, ValueError, KeyError):
            continue
        if root is not None:
            out[Path(root).name] = path
    return out


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def codes_by_skill(report: str) -> set[tuple[str, str]]:
    """(skill directory, code) of every diagnostic in a JSON report."""
    return {(d["path"].split("/")[1], d["code"]) for d in json.loads(report)["diagnostics"]}


# --- warm runs -----------------------------------------------------------------------------------


def test_a_warm_run_is_all_cached_and_opens_no_file_of_the_skills(
    project: Path, settled: None
) -> None:
    made = defect_tree(project, 30)
    skills = len(made) + 1  # and a nested one
    cache = project / "cache"
    cold = {fmt: run(cache, fmt) for fmt in ("json", "text")}
    assert cold["json"][2] == Counter(checked=skills)
    assert cold["text"][2] == Counter(cached=skills)  # the json run's entries serve text
    assert cold["text"][0] == 1
    assert {fmt: run(None, fmt)[:2] for fmt in cold} == {f: c[:2] for f, c in cold.items()}

    opened: list[str] = []
    tree = str(project / "skills")
    real = os.open, builtins.open, io.open

    def spy(index: int):
        def opener(file, *args, **kwargs):
            if isinstance(file, (str, os.PathLike)) and os.path.abspath(file).startswith(tree):
                opened.append(os.fspath(file))
            return real[index](file, *args, **kwargs)

        return opener

    with pytest.MonkeyPatch.context() as spying:
        spying.setattr(os, "open", spy(0))
        spying.setattr(builtins, "open", spy(1))
        spying.setattr(io, "open", spy(2))
        warm = {fmt: run(cache, fmt) for fmt in ("json", "text")}
        warm_cli = cli("--cache-dir", str(cache), "skills")

    assert opened == []
    assert warm == {fmt: (c[0], c[1], Counter(cached=skills)) for fmt, c in cold.items()}
    assert warm_cli[:2] == cold["text"][:2]


def test_a_warm_run_lists_each_directory_once(project: Path, settled: None) -> None:
    # discovery lends each skill's directory to the scan that looks the skill up in the
    # cache, and the scan leaves the skill's folders for discovery to search
    defect_tree(project, 12)
    cache = project / "cache"
    cold = run(cache)
    tree = project / "skills"
    folders = {str(tree), *(str(p) for p in tree.rglob("*") if p.is_dir())}
    listed: Counter[str] = Counter()
    real = os.scandir

    def spy(path=".", *args, **kwargs):  # type: ignore[no-untyped-def]
        if os.path.abspath(path).startswith(str(tree)):
            listed[os.path.abspath(path)] += 1
        return real(path, *args, **kwargs)

    with pytest.MonkeyPatch.context() as spying:
        spying.setattr(os, "scandir", spy)
        warm = run(cache)
    assert warm[:2] == cold[:2] and set(warm[2]) == {"cached"}
    assert set(listed) == folders
    assert [folder for folder, times in listed.items() if times > 1] == []


def test_entries_of_files_younger_than_two_seconds_are_verified_by_content(project: Path) -> None:
    """By default a file changed within two seconds of the run is not trusted by its
    timestamps (an edit in the same clock tick could go unseen)."""
    generate(project / "skills", 8, findings=0.5)
    cache = project / "cache"
    first = run(cache)
    assert first[2] == Counter(checked=8)
    again = run(cache)
    assert again == (first[0], first[1], Counter(content=8))


# --- what changed is checked again -----------------------------------------------------------


def test_editing_one_skill_checks_only_that_skill_again(project: Path, settled: None) -> None:
    made = generate(project / "skills", 10)
    cache = project / "cache"
    clean = run(cache, "json")
    assert clean[0] == 0 and clean[2] == Counter(checked=10)

    skill_md = made[4] / "SKILL.md"
    original = skill_md.read_bytes()
    with skill_md.open("a", encoding="utf-8") as handle:
        handle.write("\nSee [the changelog](references/changelog.md).\n")
    broken = run(cache, "json")
    assert broken[2] == Counter(cached=9, checked=1)
    assert codes_by_skill(broken[1]) == {(made[4].name, "SK501")}
    assert broken[:2] == run(None, "json")[:2]
    # entries made for the JSON report (token figures included) serve the text report
    text = run(cache)
    assert text[2] == Counter(cached=10)
    assert text[:2] == run(None)[:2]
    assert text[0] == 1 and f"skills/{made[4].name}/SKILL.md:" in text[1]

    skill_md.write_bytes(original)
    assert run(cache, "json") == (0, clean[1], Counter(cached=9, checked=1))


def test_a_link_target_appearing_and_vanishing_is_seen(project: Path, settled: None) -> None:
    made = generate(project / "skills", 6)
    with (made[2] / "SKILL.md").open("a", encoding="utf-8") as handle:
        handle.write("\nSee [the changelog](references/changelog.md).\n")
    cache = project / "cache"
    broken = run(cache, "json")
    assert (made[2].name, "SK501") in codes_by_skill(broken[1])

    (made[2] / "references" / "changelog.md").write_text("# Changelog\n\nNothing yet.\n")
    fixed = run(cache, "json")
    assert fixed[2] == Counter(cached=5, checked=1)
    assert (made[2].name, "SK501") not in codes_by_skill(fixed[1])
    assert fixed[:2] == run(None, "json")[:2]

    (made[2] / "references" / "changelog.md").unlink()
    assert run(cache, "json") == (broken[0], broken[1], Counter(cached=5, checked=1))


def test_a_same_size_edit_of_a_reference_with_its_old_mtime_is_seen(
    project: Path, settled: None
) -> None:
    """Size, mode, mtime and inode stay; only the content (and the ctime) differ: the entry
    must not be trusted."""
    made = generate(project / "skills", 6)
    cache = project / "cache"
    clean = run(cache, "json")
    assert clean[0] == 0 and not codes_by_skill(clean[1])

    examples = made[3] / "references" / "examples.md"
    before = examples.stat()
    edit(examples, "## Worked examples", "## Worked exampley")  # SKILL.md links #worked-examples
    os.utime(examples, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = examples.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    seen = run(cache, "json")
    assert seen[2] == Counter(cached=5, checked=1)
    assert codes_by_skill(seen[1]) == {(made[3].name, "SK504")}
    assert seen[:2] == run(None, "json")[:2]


def test_collection_findings_follow_an_edit_of_one_skill(project: Path, settled: None) -> None:
    """SK801/SK802 compare skills: a cached skill's partner changing name or description
    makes them appear and disappear."""
    made = generate(project / "skills", 8)
    cache = project / "cache"
    clean = run(cache, "json")
    assert clean[0] == 0

    md = made[5] / "SKILL.md"
    original = md.read_text(encoding="utf-8")
    edit(md, f"name: {made[5].name}", f"name: {made[1].name}")
    dup = run(cache, "json")
    assert dup[2] == Counter(cached=7, checked=1)
    found = codes_by_skill(dup[1])
    assert {code for _skill, code in found} >= {"SK801"}
    assert dup[:2] == run(None, "json")[:2]
    assert run(cache, "json") == (dup[0], dup[1], Counter(cached=8))  # stable when warm

    md.write_text(original, encoding="utf-8")
    assert run(cache, "json") == (0, clean[1], Counter(cached=7, checked=1))

    # the same description as a skill that is not checked again
    description = next(
        line
        for line in (made[1] / "SKILL.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("description: ")
    )
    own = next(line for line in original.splitlines() if line.startswith("description: "))
    edit(md, own, description)
    near = run(cache, "json")
    assert near[2] == Counter(cached=7, checked=1)
    assert "SK802" in {code for _skill, code in codes_by_skill(near[1])}
    assert near[:2] == run(None, "json")[:2]

    # a new skill taking a cached skill's name; then the pair's other half removed
    shutil.copytree(made[2], project / "skills" / "zz-copy")
    copied = run(cache, "json")
    assert copied[2]["checked"] == 1 and copied[2]["cached"] == 8
    assert ("zz-copy", "SK801") in codes_by_skill(copied[1]) or (
        made[2].name,
        "SK801",
    ) in codes_by_skill(copied[1])
    assert copied[:2] == run(None, "json")[:2]
    shutil.rmtree(made[2])
    gone = run(cache, "json")
    assert "SK801" not in {code for _skill, code in codes_by_skill(gone[1])}
    assert gone[:2] == run(None, "json")[:2]


def test_touching_files_is_a_content_hit_then_cached_again(project: Path, settled: None) -> None:
    made = generate(project / "skills", 6, findings=0.5)
    cache = project / "cache"
    cold = run(cache)
    assert cold[2] == Counter(checked=6)

    old = 1_000_000_000 * 1_500_000_000  # 2017: a checkout's times differ from the last run's
    for path in made[1].rglob("*"):
        os.utime(path, ns=(old, old), follow_symlinks=False)
    assert run(cache) == (cold[0], cold[1], Counter(cached=5, content=1))
    assert run(cache) == (cold[0], cold[1], Counter(cached=6))  # the identity was refreshed

    # a checkout writes every file anew (new inodes, same bytes)
    for path in sorted(p for p in made[4].rglob("*") if p.is_file()):
        data, mode = path.read_bytes(), path.stat().st_mode
        path.unlink()
        path.write_bytes(data)
        path.chmod(mode)
    assert run(cache) == (cold[0], cold[1], Counter(cached=5, content=1))
    assert run(cache) == (cold[0], cold[1], Counter(cached=6))

    # a mode change is a change of the listing: checked again, same result
    script = next((made[2] / "scripts").iterdir())
    script.chmod(0o644)
    mode_change = run(cache)
    assert mode_change[2] == Counter(cached=5, checked=1)
    assert mode_change[:2] == run(None)[:2]


# --- damaged, forged and unusable caches -----------------------------------------------------


def _tree(project: Path) -> list[Path]:
    """Five skills: one with an error and a fixable warning, two near-duplicates."""
    root = project / "skills"
    made = []
    for name, what in (
        ("alpha-notes", "Takes meeting notes from audio recordings. Use when asked for minutes."),
        ("beta-charts", "Draws bar and line charts from CSV files. Use when asked for a plot."),
        ("gamma-charts", "Draws bar and line charts from CSV tables. Use when asked for a plot."),
        ("delta-mail", "Drafts polite replies to customer e-mails. Use when asked to answer mail."),
    ):
        made.append(write_skill(root, name, f"name: {name}\ndescription: {what}\n"))
    made.append(
        write_skill(
            root,
            "dirty-skill",
            "name: dirty-skill\nwebsite: https://example.com/\ndescription: Converts"
            " invoices to ledgers. Use when the user asks to book an invoice.\n",
            body="# Steps\n\nRead [the guide](references/guide.md) first.\n",
        )
    )
    return made


def _damage(kind: str, cache: Path) -> None:
    found = entries(cache)
    dirty = found["dirty-skill"]
    record = record_of(dirty)
    put = put_record

    if kind == "truncated":
        for path in found.values():
            data = path.read_bytes()
            path.write_bytes(data[: len(data) // 2])
    elif kind == "garbage":
        for n, path in enumerate(found.values()):
            path.write_bytes(bytes(range(256))[n:] * 3)
    elif kind == "empty":
        for path in found.values():
            path.write_bytes(b"")
    elif kind == "deep":
        dirty.write_bytes(b"[" * 200_000)
    elif kind == "not-an-object":
        put(dirty, [record])
    elif kind == "diagnostics-string":
        record["summary"]["diagnostics"] = "none at all"
        put(dirty, record)
    elif kind == "severity-99":
        for diag in record["summary"]["diagnostics"]:
            diag["severity"] = 99
        put(dirty, record)
    elif kind == "fix-out-of-range":
        fixed = [d for d in record["summary"]["diagnostics"] if "fix" in d]
        assert fixed, "the dirty skill has a fixable diagnostic"
        fixed[0]["fix"] = len(record["summary"]["fixes"]) + 5
        put(dirty, record)
    elif kind == "summary-null":
        record["summary"] = None
        put(dirty, record)
    elif kind == "other-version":
        clean = record_of(found["alpha-notes"])
        # an entry saying the skill is clean, from another version of skillcheck
        record["summary"]["diagnostics"] = clean["summary"]["diagnostics"]
        record["version"] = "0.0.1"
        put(dirty, record)
    elif kind == "other-format":
        record["summary"]["diagnostics"] = []
        record["format"] = 999
        put(dirty, record)
    elif kind == "other-root":
        # a clean skill's entry, with the dirty skill's real identity, in the dirty one's place
        clean = record_of(found["alpha-notes"])
        clean["identity"] = record["identity"]
        put(dirty, clean)
    elif kind == "forged-stale":
        # the right root, claiming no findings, with an identity and digests that are not
        # the skill's
        clean = record_of(found["alpha-notes"])
        forged = {**clean, "root": record["root"], "identity": "0" * 32}
        forged["summary"] = {**clean["summary"], "root": record["summary"]["root"]}
        put(dirty, forged)
    elif kind == "forged-no-identity":
        clean = record_of(found["alpha-notes"])
        forged = {**clean, "root": record["root"], "identity": None, "shape": record["shape"]}
        put(dirty, forged)
    elif kind in ("planted-real-digests", "planted-other-key"):
        # issue 30: a cache committed to the repository, by someone who computed the dirty
        # skill's real digests (anyone can) and wrote a clean summary with no identity
        clean = record_of(found["alpha-notes"])
        forged = {**record, "identity": None}
        forged["summary"] = {**clean["summary"], "root": record["summary"]["root"]}
        data = json.dumps(forged).encode()
        if kind == "planted-other-key":
            data = cache_module.seal(data, b"k" * cache_module.KEY_BYTES)
        dirty.write_bytes(data)
    elif kind == "collection-garbage":
        for path in cache.glob("*/collection.json"):
            path.write_bytes(cache_module.seal(b'{"format": 1, "diagnostics": [', _key()))
    elif kind == "collection-fix":
        (path,) = cache.glob("*/collection.json")
        data = record_of(path)
        assert data["diagnostics"], "SK802 on the two chart skills"
        data["diagnostics"][0]["fix"] = 0
        put(path, data)
    elif kind == "collection-types":
        (path,) = cache.glob("*/collection.json")
        data = record_of(path)
        data["diagnostics"] = [{"code": 5}, "x", None]
        put(path, data)
    else:
        raise AssertionError(kind)


DAMAGE = [
    "truncated",
    "garbage",
    "empty",
    "deep",
    "not-an-object",
    "diagnostics-string",
    "severity-99",
    "fix-out-of-range",
    "summary-null",
    "other-version",
    "other-format",
    "other-root",
    "forged-stale",
    "forged-no-identity",
    "planted-real-digests",
    "planted-other-key",
    "collection-garbage",
    "collection-fix",
    "collection-types",
]


@pytest.mark.parametrize("kind", DAMAGE)
def test_a_damaged_or_forged_cache_is_never_trusted(
    project: Path, settled: None, kind: str
) -> None:
    _tree(project)
    cache = project / "cache"
    expected = cli("--no-cache", "--format", "json", "skills")
    assert expected[0] == 1
    assert ("dirty-skill", "SK501") in codes_by_skill(expected[1])
    assert ("dirty-skill", "SK108") in codes_by_skill(expected[1])
    assert cli("--cache-dir", str(cache), "--format", "json", "skills") == expected
    _damage(kind, cache)

    exit_code, out, err = cli("--cache-dir", str(cache), "--format", "json", "skills")
    assert "Traceback" not in err
    assert exit_code == expected[0], err
    assert (out, err) == expected[1:]
    # the damage is repaired: the next run takes every skill from the cache
    assert run(cache, "json") == (1, expected[1], Counter(cached=5))


@pytest.mark.parametrize("kind", ["file", "below-a-file", "entry-is-a-directory", "read-only"])
def test_an_unusable_cache_directory_changes_nothing_the_user_sees(
    project: Path, settled: None, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    _tree(project)
    expected = cli("--no-cache", "skills")
    assert expected[0] == 1
    blocker = project / "blocker"
    if kind == "file":
        blocker.write_text("not a directory\n")
        where = blocker
    elif kind == "below-a-file":
        blocker.write_text("not a directory\n")
        where = blocker / "cache"
    elif kind == "entry-is-a-directory":
        where = project / "cache"
        assert cli("--cache-dir", str(where), "skills") == expected
        taken = list(entries(where).values())
        assert len(taken) == 5
        for path in taken:
            path.unlink()
            path.mkdir()
            (path / "keep").write_text("x")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only directories")
        where = project / "cache"
        where.mkdir(mode=0o500)
    # the environment variable: --cache-dir refuses a file at once (tested below)
    monkeypatch.setenv("SKILLCHECK_CACHE_DIR", str(where))
    try:
        for _ in range(2):
            exit_code, out, err = cli("skills")
            assert "Traceback" not in err
            assert (exit_code, out, err) == expected
        assert run(where)[:2] == expected[:2]
    finally:
        if where.is_dir():
            where.chmod(0o700)
    if kind == "entry-is-a-directory":
        assert all((path / "keep").exists() for path in taken)


def test_cache_dir_option_naming_a_file_is_a_usage_error(project: Path) -> None:
    _tree(project)
    (project / "blocker").write_text("x")
    exit_code, out, err = cli("--cache-dir", "blocker", "skills")
    assert exit_code == 2 and out == ""
    assert "blocker" in err and "Traceback" not in err
    assert (project / "blocker").read_text() == "x"


def test_concurrent_runs_share_a_cache_without_losing_or_breaking_entries(project: Path) -> None:
    generate(project / "skills", 16, findings=0.3)
    cache = project / "cache"
    command = [*skillcheck_command(), "lint", "--isolated", "--cache-dir", str(cache), "skills"]
    env = {**os.environ, "NO_COLOR": "1"}
    expected = cli("--no-cache", "skills")
    runs = [
        subprocess.Popen(
            command, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(3)
    ]
    for proc in runs:
        out, err = proc.communicate(timeout=60)
        assert (proc.returncode, out.decode(), err.decode()) == expected
    assert len(entries(cache)) == 16
    for path in cache.glob("*/*.json"):
        json.loads(path.read_bytes())  # whole files only
    assert not [p for p in cache.rglob("*") if p.name.endswith(".tmp")]
    assert cli("--cache-dir", str(cache), "skills") == expected


# --- configuration ---------------------------------------------------------------------------


def test_entries_are_never_reused_under_another_configuration(project: Path, settled: None) -> None:
    _tree(project)
    cache = project / "cache"

    def same(*args: str) -> tuple[int, str, str]:
        cached = cli("--cache-dir", str(cache), *args, "skills")
        assert cached == cli("--no-cache", *args, "skills"), args
        return cached

    names_only = same("--select", "SK2")
    assert names_only[0] == 0
    everything = same()
    assert "SK501" in everything[1] and "SK108" in everything[1]
    assert same("--target", "all") != everything
    same("--select", "SK5")
    same("--ignore", "SK108")
    assert same() == everything

    # skillcheck.toml: an extra field makes SK108 go away; removing it brings it back
    config = project / "skillcheck.toml"

    def with_config(text: str | None, *args: str) -> tuple[int, str, str]:
        if text is None:
            config.unlink(missing_ok=True)
        else:
            config.write_text(text)
        cached = invoke("lint", "-j1", "--cache-dir", str(cache), *args, "skills", cwd=project)
        fresh = invoke("lint", "-j1", "--no-cache", *args, "skills", cwd=project)
        assert (cached.exit_code, cached.stdout) == (fresh.exit_code, fresh.stdout), text
        return cached.exit_code, cached.stdout, cached.stderr

    extra = with_config('extra-fields = ["website"]\n')
    assert "SK108" not in extra[1] and "SK501" in extra[1]
    assert "SK108" in with_config(None)[1]
    assert "SK108" not in with_config('extra-fields = ["website"]\n')[1]
    with_config("[budgets]\nbody-tokens = 5\n")
    with_config('name-charset = "unicode"\n')

    # a frontmatter schema whose content changes under the same file name
    schemas = project / "schemas"
    schemas.mkdir()
    schema = schemas / "team.json"
    schema.write_text(json.dumps({"type": "object"}))
    config.write_text('frontmatter-schema = "schemas/team.json"\n')
    lenient = with_config(config.read_text())
    assert "SK406" not in lenient[1]
    schema.write_text(json.dumps({"type": "object", "required": ["license"]}))
    strict = with_config(config.read_text())
    assert strict[1].count("SK406") == 5


@pytest.mark.parametrize("settle", [True, False], ids=["by-identity", "by-content"])
def test_the_same_skills_named_from_elsewhere_report_the_same(
    project: Path, monkeypatch: pytest.MonkeyPatch, settle: bool
) -> None:
    """Paths in reports (and in SK80x messages naming the other skill) are relative to the
    working directory: entries made from one directory never leak another's paths."""
    if settle:
        monkeypatch.setattr(cache_module, "RACY_NS", 0)
    _tree(project)
    cache = str(project / "cache")
    for path in ("skills", "./skills", str(project / "skills"), "skills/../skills"):
        assert cli("--cache-dir", cache, path) == cli("--no-cache", path), path
    for cwd, path in ((project / "skills", "."), (project / "skills" / "alpha-notes", "..")):
        cached = invoke("lint", "--isolated", "-j1", "--cache-dir", cache, path, cwd=cwd)
        fresh = invoke("lint", "--isolated", "-j1", "--no-cache", path, cwd=cwd)
        assert (cached.exit_code, cached.stdout) == (fresh.exit_code, fresh.stdout), cwd
        assert "SK802" in fresh.stdout  # a message naming another skill by its path


# --- where the cache lives -------------------------------------------------------------------


def _run_default(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        k: v for k, v in os.environ.items() if k not in ("SKILLCHECK_CACHE_DIR", "XDG_CACHE_HOME")
    }
    env["NO_COLOR"] = "1"
    env["HOME"] = str(cwd.parent / f"{cwd.name}-home")  # the key's home: never the real one
    return subprocess.run(
        [*skillcheck_command(), "lint", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        timeout=60,
    )


def test_the_default_cache_is_in_the_project_root_and_never_linted(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools")
    first = _run_default(tmp_path, ".")
    assert first.returncode == 0, first.stderr
    cache = tmp_path / ".skillcheck_cache"
    assert cache.is_dir()
    assert "*" in (cache / ".gitignore").read_text().splitlines()
    assert (
        (cache / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    assert len(entries(cache)) == 1

    # something that looks like a broken skill inside the cache is not the project's
    write_skill(cache, "planted", frontmatter="name: Planted Skill\n")
    again = _run_default(tmp_path, ".", "--format", "json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert [s["path"] for s in report["skills"]] == ["pdf-tools"]
    assert report["diagnostics"] == []

    # with a configuration file, the project root is where that file is
    (tmp_path / "skillcheck.toml").write_text('target = "agentskills"\n')
    shutil.rmtree(cache)
    nested = tmp_path / "pdf-tools"
    below = _run_default(nested, ".")
    assert below.returncode == 0, below.stderr
    assert cache.is_dir() and not (nested / ".skillcheck_cache").exists()


def test_the_key_is_private_and_an_untrusted_key_disables_the_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = project / "home"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.setattr(cache_module, "_KEYS", {})
    key = cache_module.cache_key()
    path = home / "skillcheck" / "cache.key"
    assert key is not None and path.read_bytes() == key
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o644)  # readable by others: anyone could forge entries
    monkeypatch.setattr(cache_module, "_KEYS", {})
    assert cache_module.cache_key() is None
    _tree(project)
    expected = cli("--no-cache", "skills")
    assert cli("--cache-dir", "cache", "skills") == expected
    assert not list((project / "cache").glob("*/*.json"))  # nothing cached without a key


def test_xdg_cache_home_is_used_when_set(tmp_path: Path) -> None:
    write_skill(tmp_path / "project", "pdf-tools")
    env = {k: v for k, v in os.environ.items() if k != "SKILLCHECK_CACHE_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    done = subprocess.run(
        [*skillcheck_command(), "lint", "."],
        cwd=tmp_path / "project",
        env=env,
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert len(entries(tmp_path / "xdg" / "skillcheck")) == 1
    assert not (tmp_path / "project" / ".skillcheck_cache").exists()


def test_a_gitignore_already_in_the_cache_dir_is_kept(project: Path, settled: None) -> None:
    """``--cache-dir`` may name a directory that holds other things (``--cache-dir .`` even
    names the project root): a .gitignore there is the user's, not the cache's."""
    _tree(project)
    shared = project / "shared"
    shared.mkdir()
    (shared / ".gitignore").write_text("build/\n!keep-me\n")
    assert cli("--cache-dir", str(shared), "skills")[0] == 1
    assert (shared / ".gitignore").read_text() == "build/\n!keep-me\n"


def test_pruning_never_removes_folders_skillcheck_did_not_make(
    project: Path, settled: None
) -> None:
    _tree(project)
    shared = project / "shared"
    shared.mkdir()
    mine = [shared / f"{n:02d}-my-important-projects" for n in range(10)]
    for folder in mine:
        assert len(folder.name) == 24  # as long as a run key
        folder.mkdir()
        (folder / "data.txt").write_text("precious\n")
    assert cli("--cache-dir", str(shared), "skills")[0] == 1
    assert [f.name for f in mine if not (f / "data.txt").exists()] == []


def test_old_run_keys_are_pruned(project: Path, settled: None) -> None:
    generate(project / "skills", 2)
    cache = project / "cache"
    selections = ["SK1", "SK2", "SK3", "SK4", "SK5", "SK6", "SK7", "SK8", "SK9", "SK10,SK2"]
    for select in selections:
        assert cli("--cache-dir", str(cache), "--select", select, "skills")[0] == 0
    folders = [p for p in cache.iterdir() if p.is_dir()]
    assert len(folders) == cache_module.KEEP_RUN_KEYS
    # the newest configurations are the ones kept
    assert run(cache, select=["SK10", "SK2"])[2] == Counter(cached=2)


# --- the summary's JSON form -------------------------------------------------------------------

# lone surrogates (file names of invalid UTF-8), controls, escapes, bidi, non-ASCII
ODD = st.sampled_from(["\udcff", "\udc80", "\n", "\r", "\x00", "\x1b", "é", "\u202e", "\\"])
TEXT = st.text(st.characters() | ODD, max_size=6)
INTS = st.integers(min_value=-3, max_value=12) | st.integers(min_value=-(2**70), max_value=2**70)
PATHS = st.lists(
    TEXT.filter(lambda s: "/" not in s and s not in ("", ".")), min_size=1, max_size=3
).map(lambda parts: Path("/", *parts))
SPANS = st.builds(lambda a, b, c, d: Span(Pos(a, b), Pos(c, d)), INTS, INTS, INTS, INTS)
FIXES = st.builds(Fix, PATHS, INTS, INTS, st.binary(max_size=8), TEXT)
DIAGNOSTICS = st.builds(
    Diagnostic,
    code=TEXT,
    slug=TEXT,
    severity=st.sampled_from(Severity),
    message=TEXT,
    path=PATHS,
    line=INTS,
    column=INTS,
    end_line=INTS,
    end_column=INTS,
    targets=st.lists(TEXT, max_size=3).map(tuple),
    fix=st.none() | FIXES,
    help=st.none() | TEXT,
    skill=st.none() | PATHS,
    outcomes=st.dictionaries(TEXT, st.sampled_from(Outcome), max_size=3),
)


@st.composite
def suppressions(draw):
    from skillcheck.engine.suppress import Suppression

    return Suppression(
        span=draw(SPANS),
        next_line=draw(st.booleans()),
        codes=draw(st.none() | st.frozensets(TEXT, max_size=3)),
        words=draw(st.lists(st.tuples(TEXT, SPANS), max_size=3)),
        unknown=draw(st.lists(st.tuples(TEXT, SPANS), max_size=2)),
    )


@st.composite
def summaries(draw) -> SkillSummary:
    diagnostics = draw(st.lists(DIAGNOSTICS, max_size=4))
    if diagnostics and draw(st.booleans()):  # one edit fixing several findings
        shared = draw(FIXES)
        for diag in diagnostics:
            diag.fix = shared
    return SkillSummary(
        root=draw(PATHS),
        display_root=draw(TEXT),
        skill_md=draw(st.none() | PATHS),
        has_doc=draw(st.booleans()),
        name=draw(st.none() | TEXT),
        diagnostics=diagnostics,
        walk_errors=draw(st.lists(st.tuples(PATHS, TEXT), max_size=2)),
        usable=draw(st.booleans()),
        name_span=draw(st.none() | SPANS),
        description=draw(st.none() | TEXT),
        description_span=draw(st.none() | SPANS),
        data={
            "description-words": draw(st.frozensets(TEXT, max_size=4)),
            "nested-skill-md": draw(st.lists(PATHS, max_size=2)),
        },
        suppressions=draw(st.lists(suppressions(), max_size=2)),
        figures=draw(
            st.none() | st.builds(Figures, st.none() | INTS, INTS, INTS, INTS, INTS)  # type: ignore[arg-type]
        ),
        lines=draw(st.dictionaries(PATHS, st.dictionaries(INTS, TEXT, max_size=3), max_size=2)),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(summaries())
def test_a_summary_survives_the_cache_json_round_trip(summary: SkillSummary) -> None:
    # as the cache writes it: ASCII JSON (lone surrogates escaped)
    stored = json.dumps(to_json(summary), ensure_ascii=True, separators=(",", ":")).encode("ascii")
    assert from_json(json.loads(stored)) == summary


JSON = st.recursive(
    st.none() | st.booleans() | INTS | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


def _places(value, here=()):
    yield here
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _places(item, (*here, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _places(item, (*here, index))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # a failure shows as found: fast
)
@given(summaries(), st.data())
def test_damaged_summary_json_raises_only_what_the_cache_catches(summary, data) -> None:
    """The cache treats ValueError, TypeError, KeyError and AttributeError from ``from_json``
    as a damaged entry; anything else would escape as an internal error."""
    value = json.loads(json.dumps(to_json(summary)))
    for _ in range(data.draw(st.integers(1, 3))):
        where = data.draw(st.sampled_from(list(_places(value))))
        if not where:
            value = data.draw(JSON)
            continue
        parent = value
        for step in where[:-1]:
            parent = parent[step]
        if data.draw(st.booleans()):
            parent[where[-1]] = data.draw(JSON)
        elif isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent.pop(where[-1])
    with contextlib.suppress(ValueError, TypeError, KeyError, AttributeError):
        from_json(value)


def test_a_skill_md_symlinked_from_elsewhere_is_cached_and_follows_its_file(
    project: Path, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A skill whose SKILL.md is a symlink to a file outside it (elsewhere in the linted
    tree) is taken from the cache while that file is as it was, and so is the collection
    rules' result; a change to the file is checked, as without cache."""
    from skillcheck.engine import runner

    made = generate(project / "skills", 6)
    (project / "skills" / "shared").mkdir()
    outside = project / "skills" / "shared" / "outside.md"
    outside.write_bytes((made[0] / "SKILL.md").read_bytes())
    (made[0] / "SKILL.md").unlink()
    (made[0] / "SKILL.md").symlink_to(outside)
    cache = project / "cache"
    calls: list[int] = []
    real = runner.check_collection

    def counting(summaries, *args):  # type: ignore[no-untyped-def]
        calls.append(len(summaries))
        return real(summaries, *args)

    monkeypatch.setattr(runner, "check_collection", counting)
    first = run(cache, "json")
    assert calls == [6]
    again = run(cache, "json")
    assert again[2] == Counter(cached=6)
    assert again[:2] == first[:2]
    assert calls == [6]  # taken from collection.json

    # the linked skill now takes another skill's name: SK801 appears, as without cache
    text = outside.read_text(encoding="utf-8")
    outside.write_text(text.replace(f"name: {made[0].name}", f"name: {made[1].name}"))
    dup = run(cache, "json")
    assert dup[2] == Counter(cached=5, checked=1)
    assert calls == [6, 6]
    assert "SK801" in {code for _skill, code in codes_by_skill(dup[1])}
    assert dup[:2] == run(None, "json")[:2]


def test_a_symlinked_skill_md_hit_depends_on_the_trees_the_run_may_read(
    project: Path, settled: None
) -> None:
    """Whether a SKILL.md linked from outside the skill is read depends on the linted
    trees (outside them it is an error): a cache entry made with the file readable never
    answers for a run where it is not, and the other way round."""
    made = generate(project / "skills", 2)
    (project / "shared").mkdir()
    source = project / "shared" / "source.md"
    source.write_bytes((made[0] / "SKILL.md").read_bytes())
    (made[0] / "SKILL.md").unlink()
    (made[0] / "SKILL.md").symlink_to(source)
    cache = project / "cache"
    both = ("skills", "shared")
    readable = run(cache, "json", both)
    assert run(cache, "json", both)[2] == Counter(cached=2)
    alone = run(cache, "json")  # shared/ is not linted: the link leads outside
    assert alone[:2] == run(None, "json")[:2] != readable[:2]
    assert alone[2] == Counter(cached=1, checked=1)
    assert run(cache, "json")[2] == Counter(cached=2)
    assert run(cache, "json", both)[:2] == readable[:2]


# --- what the rules look at outside a skill is part of the key ------------------------------


def _outside_codes(cache: Path) -> set[tuple[str, str, str]]:
    report = json.loads(run(cache, "json")[1])
    return {(d["path"], d["code"], d["severity"]) for d in report["diagnostics"]}


def test_an_escaping_link_target_appearing_outside_the_skill_is_seen(
    project: Path, settled: None
) -> None:
    write_skill(project / "skills", "fmt", body="\nSee [style](../../shared/style.md).\n")
    cache = project / "cache"
    before = _outside_codes(cache)
    assert ("skills/fmt/SKILL.md", "SK501", "error") in before
    (project / "shared").mkdir()
    (project / "shared" / "style.md").write_text("# Style\n", encoding="utf-8")
    after = _outside_codes(cache)
    assert after == _outside_codes(None)
    assert ("skills/fmt/SKILL.md", "SK501", "error") not in after
    assert ("skills/fmt/SKILL.md", "SK502", "warning") in after


def test_the_evidence_of_a_fragment_appearing_outside_it_is_seen(
    project: Path, settled: None
) -> None:
    (project / ".git").mkdir()
    overlay = project / "skills" / "flavors" / "fmt"
    overlay.mkdir(parents=True)
    (overlay / "SKILL.md").write_text("## Extra steps\n\nMore.\n", encoding="utf-8")
    cache = project / "cache"
    assert ("skills/flavors/fmt/SKILL.md", "SK103", "error") in _outside_codes(cache)
    # the skill it is merged into appears beside it, outside the linted folder
    write_skill(project / "real", "fmt")
    (project / "skills" / "fmt").symlink_to(project / "real" / "fmt")
    after = _outside_codes(cache)
    assert ("skills/flavors/fmt/SKILL.md", "SK103", "warning") in after
    assert after == _outside_codes(None)


def test_a_plugin_manifest_appearing_above_a_skill_is_seen(project: Path, settled: None) -> None:
    body = "\nSee [x](${CLAUDE_PLUGIN_ROOT}/skills/fmt/references/gone.md).\n"
    write_skill(project / "plugin" / "skills", "fmt", body=body)
    cache = project / "cache"
    assert run(cache, "json", ("plugin/skills",))[0] == 0
    manifest = project / "plugin" / ".claude-plugin"
    manifest.mkdir()
    (manifest / "plugin.json").write_text('{"name": "p"}\n', encoding="utf-8")
    _code, report, how = run(cache, "json", ("plugin/skills",))
    found = {(d["code"], d["severity"]) for d in json.loads(report)["diagnostics"]}
    assert ("SK501", "error") in found and how == Counter(checked=1)
