"""Catalog manifest: RFC digests, shipped files, determinism, renderings (issue 4)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

from skillcheck.package.catalog import (
    DEFAULT_EXCLUDES,
    MANIFEST_SCHEMA,
    CatalogError,
    build_manifest,
    dumps_manifest,
    file_digest,
    read_shipped,
    render_markdown,
    render_xml,
    shipped_files,
    skill_digest,
    split_allowed_tools,
)
from skillcheck.source.load import load_skill
from skillcheck.source.skill import Skill

GENERATOR = "skillcheck 0.0.test"


def make_skill(
    parent: Path,
    name: str,
    description: str = "Extracts text from PDF files. Use when the user asks about PDFs.",
    *,
    extra: str = "",
    body: str = "# Steps\n\nDo the thing.\n",
    files: dict[str, bytes | str] | None = None,
    executable: tuple[str, ...] = (),
) -> Path:
    root = parent / name
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}", encoding="utf-8"
    )
    for rel, content in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    for rel in executable:
        os.chmod(root / rel, 0o755)
    return root


def load(root: Path) -> Skill:
    return load_skill(root.absolute(), str(root))


# --- digests ----------------------------------------------------------------------------------


def test_rfc_worked_example(tmp_path: Path) -> None:
    """The RFC's worked example: SKILL.md = '# Hello\\n', scripts/run.sh = '#!/bin/sh\\n'."""
    skill_md, run_sh = b"# Hello\n", b"#!/bin/sh\n"
    assert file_digest(skill_md) == (
        "sha256:90f8ec5669cd34183b9b0fdf8b94f5efb4c3672876330f4aa76088c2b4ad17be"
    )
    assert file_digest(run_sh) == (
        "sha256:a8076d3d28d21e02012b20eaf7dbf75409a6277134439025f282e368e3305abf"
    )
    expected = "sha256:34f7a8c484e9991f3e71a309f31332d6335efc01f544105c4185a7c4ab12eb1e"
    pairs = [("scripts/run.sh", file_digest(run_sh)), ("SKILL.md", file_digest(skill_md))]
    assert skill_digest(pairs) == expected
    # bare hex is accepted too, and input order does not matter
    assert skill_digest([(p, d.removeprefix("sha256:")) for p, d in reversed(pairs)]) == expected

    # the same through the manifest of a real skill directory holding exactly those files
    root = tmp_path / "hello"
    (root / "scripts").mkdir(parents=True)
    (root / "SKILL.md").write_bytes(skill_md)
    (root / "scripts" / "run.sh").write_bytes(run_sh)
    skill = load(root)
    files = shipped_files(skill)
    assert [f.rel for f in files] == ["SKILL.md", "scripts/run.sh"]
    assert skill_digest((f.rel, file_digest(read_shipped(skill, f))) for f in files) == expected


def test_skill_digest_sorts_paths_bytewise() -> None:
    # "B" (0x42) < "a" (0x61) < "é" (0xc3 0xa9): byte order, not locale or case-insensitive
    pairs = [("é.md", "0" * 64), ("a.md", "1" * 64), ("B.md", "2" * 64)]
    import hashlib

    manual = b"".join(
        p.encode() + b"\0" + h.encode() + b"\n"
        for p, h in sorted(pairs, key=lambda ph: ph[0].encode())
    )
    assert skill_digest(pairs) == "sha256:" + hashlib.sha256(manual).hexdigest()


# --- the manifest -------------------------------------------------------------------------------


def test_manifest_fields(tmp_path: Path) -> None:
    root = make_skill(
        tmp_path / "skills",
        "pdf-tools",
        extra=(
            "license: MIT\ncompatibility: Needs poppler\nallowed-tools: Bash(git log:*) Read\n"
            "metadata:\n  version: '1.2'\n  author: team\n"
        ),
        body="# PDF\n\nSee [forms](references/FORMS.md) and ![logo](assets/logo.png).\n"
        "Not [a url](https://example.com) nor [missing](references/NOPE.md).\n",
        files={
            "references/FORMS.md": "# Forms\n\nFill them in.\n",
            "assets/logo.png": b"\x89PNG\r\n\x1a\n\0\0\0binary",
            "scripts/run.sh": "#!/bin/sh\necho hi\n",
        },
        executable=("scripts/run.sh",),
    )
    skill = load(root)
    manifest = build_manifest([skill], tmp_path, tokenizer="estimate", generator=GENERATOR)
    assert list(manifest) == ["$schema", "generator", "skills"]
    assert manifest["$schema"] == MANIFEST_SCHEMA and manifest["generator"] == GENERATOR
    (entry,) = manifest["skills"]
    assert list(entry)[:4] == ["name", "description", "digest", "files"]  # the RFC's fields
    assert entry["name"] == "pdf-tools"
    assert [f["path"] for f in entry["files"]] == [
        "SKILL.md",
        "assets/logo.png",
        "references/FORMS.md",
        "scripts/run.sh",
    ]
    by_path = {f["path"]: f for f in entry["files"]}
    assert by_path["scripts/run.sh"]["executable"] is True
    assert by_path["SKILL.md"]["executable"] is False
    assert by_path["references/FORMS.md"]["size"] == len("# Forms\n\nFill them in.\n")
    assert by_path["references/FORMS.md"]["digest"] == file_digest(b"# Forms\n\nFill them in.\n")
    assert entry["digest"] == skill_digest((f["path"], f["digest"]) for f in entry["files"])
    assert entry["license"] == "MIT"
    assert entry["compatibility"] == "Needs poppler"
    assert entry["metadata"] == {"author": "team", "version": "1.2"}
    assert entry["allowed_tools"] == ["Bash(git log:*)", "Read"]
    assert entry["path"] == "skills/pdf-tools"
    assert entry["references"] == ["assets/logo.png", "references/FORMS.md"]
    # the same figures lint reports and its budget rules check
    from skillcheck.analysis.figures import skill_figures

    figures = skill_figures(skill, "estimate")
    assert entry["tokens"] == {
        "catalog": figures.catalog_tokens,
        "body": figures.body_tokens,
        "references": figures.reference_tokens,
    }
    assert entry["tokens"]["references"] > 0
    assert entry["lines"] == figures.body_lines == 4

    # valid against the schema shipped with the package
    import jsonschema

    schema_path = Path(__file__).parent.parent / "skillcheck" / "schemas" / "manifest.schema.json"
    jsonschema.validate(manifest, json.loads(schema_path.read_text()))


def test_manifest_is_deterministic(tmp_path: Path) -> None:
    names = ["zeta", "alpha", "mid-one"]
    for name in names:
        make_skill(tmp_path, name, files={"b.txt": "b", "a/x.md": "x", "A.txt": "A"})
    first = build_manifest([load(tmp_path / n) for n in names], tmp_path, generator=GENERATOR)
    shuffled = names[:]
    random.Random(4).shuffle(shuffled)
    second = build_manifest([load(tmp_path / n) for n in shuffled], tmp_path, generator=GENERATOR)
    data = dumps_manifest(first)
    assert data == dumps_manifest(second)
    assert data.endswith(b"}\n") and b"\r" not in data
    assert [s["name"] for s in first["skills"]] == ["alpha", "mid-one", "zeta"]
    # files: SKILL.md first, then byte order ("A.txt" < "a/x.md" < "b.txt")
    assert [f["path"] for f in first["skills"][0]["files"]] == [
        "SKILL.md",
        "A.txt",
        "a/x.md",
        "b.txt",
    ]
    assert "tokens" not in first["skills"][0]  # no tokenizer, no tokens
    assert json.loads(data) == first


def test_manifest_refuses_duplicate_and_invalid_names(tmp_path: Path) -> None:
    a = make_skill(tmp_path / "one", "same")
    b = make_skill(tmp_path / "two", "same")
    with pytest.raises(CatalogError, match="two skills are named 'same'"):
        build_manifest([load(a), load(b)], tmp_path, generator=GENERATOR)
    bad = make_skill(tmp_path, "Bad_Name")
    with pytest.raises(CatalogError, match="not a valid discovery-index name"):
        build_manifest([load(bad)], tmp_path, generator=GENERATOR)
    empty = make_skill(tmp_path, "empty-desc", description="''")
    with pytest.raises(CatalogError, match="description"):
        build_manifest([load(empty)], tmp_path, generator=GENERATOR)


def test_allowed_tools_split() -> None:
    assert split_allowed_tools("Bash(git add:*), Read  Write") == [
        "Bash(git add:*)",
        "Read",
        "Write",
    ]
    assert split_allowed_tools(["Read", "Bash(x, y)"]) == ["Read", "Bash(x, y)"]
    assert split_allowed_tools(None) is None


# --- which files ship ---------------------------------------------------------------------------


def test_default_excludes_and_skillignore(tmp_path: Path) -> None:
    root = make_skill(
        tmp_path,
        "hygiene",
        files={
            ".git/HEAD": "ref",
            ".DS_Store": b"\0",
            "scripts/__pycache__/x.cpython-311.pyc": b"\0",
            "scripts/tool.pyc": b"\0",
            "scripts/tool.py": "print()",
            "node_modules/pkg/index.js": "x",
            ".env": "SECRET=1",
            "config/.env.local": "SECRET=2",
            "myenv/pyvenv.cfg": "home = /usr",
            "myenv/lib/site.py": "x",
            "build/out.txt": "x",
            "scripts/build/keep.txt": "kept: build/ is excluded at the root only",
            "assets/nested.zip": b"PK",
            "assets/template.zip": b"PK",
            "drafts/wip.md": "x",
            "notes.tmp": "x",
            ".skillignore": "drafts/\n*.tmp\n!assets/template.zip\n",
        },
    )
    rels = [f.rel for f in shipped_files(load(root))]
    assert rels == [
        "SKILL.md",
        "assets/template.zip",
        "scripts/build/keep.txt",
        "scripts/tool.py",
    ]
    assert "/.skillignore" in DEFAULT_EXCLUDES


def test_skillignore_with_a_byte_order_mark(tmp_path: Path) -> None:
    """A .skillignore saved with a UTF-8 BOM (Windows editors) still excludes its first
    pattern: the BOM is dropped, as git does for .gitignore."""
    root = make_skill(
        tmp_path,
        "bom-ignore",
        files={"drafts/wip.md": "x", ".skillignore": b"\xef\xbb\xbfdrafts/\n"},
    )
    assert [f.rel for f in shipped_files(load(root))] == ["SKILL.md"]


def test_in_skill_symlink_ships_target_content(tmp_path: Path) -> None:
    root = make_skill(tmp_path, "links", files={"references/REAL.md": "real content\n"})
    os.symlink("references/REAL.md", root / "ALIAS.md")
    os.symlink("REAL.md", root / "references" / "SAME.md")
    os.symlink("ALIAS.md", root / "chain.md")  # a link to a link to a file
    skill = load(root)
    files = {f.rel: f for f in shipped_files(skill)}
    for rel in ("ALIAS.md", "references/SAME.md", "chain.md"):
        assert files[rel].kind == "file"
        assert files[rel].link_target == "references/REAL.md"
        assert read_shipped(skill, files[rel]) == b"real content\n"


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda r, o: os.symlink(o / "secret.txt", r / "leak.md"), "leaves the skill directory"),
        (lambda r, o: os.symlink("../outside/secret.txt", r / "leak.md"), "leaves the skill"),
        (lambda r, o: os.symlink("nowhere.md", r / "dangling.md"), "dangles"),
        (lambda r, o: os.symlink("loop.md", r / "loop.md"), "loop"),
        (lambda r, o: os.symlink("references", r / "dirlink"), "points at a directory"),
        (lambda r, o: os.symlink(".env", r / "innocent.txt"), "points at an excluded file"),
        (lambda r, o: os.mkfifo(r / "pipe"), "is a FIFO"),
        (lambda r, o: (r / "Readme.md").write_text("x"), "collides with 'README.md'"),
    ],
    ids=["absolute", "relative", "dangling", "loop", "dir", "excluded", "fifo", "case"],
)
def test_unshippable_files_are_errors(tmp_path: Path, setup, reason: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("root:x:0:0")
    root = make_skill(
        tmp_path, "unsafe", files={"references/a.md": "a", ".env": "S=1", "README.md": "r"}
    )
    setup(root, outside)
    with pytest.raises(CatalogError, match=reason):
        shipped_files(load(root))


def test_reads_never_follow_a_link_swapped_in_after_the_walk(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("root:x:0:0")
    root = make_skill(tmp_path, "racy", files={"references/a.md": "fine"})
    skill = load(root)
    files = {f.rel: f for f in shipped_files(skill)}
    (root / "references" / "a.md").unlink()
    os.symlink(outside, root / "references" / "a.md")
    with pytest.raises(CatalogError, match="cannot open"):
        read_shipped(skill, files["references/a.md"])
    # a directory swapped for a link is refused as well
    os.rename(root / "references", tmp_path / "moved")
    os.symlink(tmp_path / "moved", root / "references")
    with pytest.raises(CatalogError, match="cannot open"):
        read_shipped(skill, files["references/a.md"])


# --- renderings --------------------------------------------------------------------------------


def test_xml_equals_skills_ref_to_prompt(tmp_path: Path) -> None:
    from click.testing import CliRunner
    from skills_ref.cli import main as skills_ref_main
    from skills_ref.prompt import to_prompt

    roots = [
        make_skill(tmp_path / "skills", "pdf-tools"),
        make_skill(
            tmp_path / "skills",
            "escape-me",
            description=(
                '"Handles <xml> & \\"quotes\\" and \'single\' ones — ünïcode. Use when asked."'
            ),
        ),
        make_skill(
            tmp_path / "skills",
            "folded",
            description=">-\n  Folded over\n  two lines. Use when folding.",
        ),
    ]
    # a skill reached through a symlinked directory: skills-ref resolves the path
    os.symlink(tmp_path / "skills", tmp_path / "linked")
    roots.append(tmp_path / "linked" / "pdf-tools")
    skills = [load(r) for r in roots]
    assert render_xml(skills) == to_prompt(roots)
    assert render_xml([]) == to_prompt([])
    result = CliRunner().invoke(skills_ref_main, ["to-prompt", *map(str, roots)])
    assert result.exit_code == 0
    assert result.output == render_xml(skills) + "\n"  # what `catalog --format xml` prints


def test_markdown_rendering(tmp_path: Path) -> None:
    root = make_skill(tmp_path, "folded", description='"Line one.\\n  Line two\\e[31m."')
    manifest = build_manifest([load(root)], tmp_path, generator=GENERATOR)
    assert render_markdown(manifest) == "- folded: Line one. Line two\ufffd[31m.\n"
    assert render_markdown({"skills": []}) == ""


def test_reincluding_an_unwalked_directory_is_an_error(tmp_path: Path) -> None:
    root = make_skill(
        tmp_path,
        "vendored",
        files={"node_modules/pkg/index.js": "x", ".skillignore": "!node_modules/\n"},
    )
    with pytest.raises(CatalogError, match="was not walked"):
        shipped_files(load(root))


def test_a_file_vanishing_after_the_walk_is_left_out_of_the_catalog_and_pack_refuses(
    tmp_path: Path,
) -> None:
    """An editor's temp file renamed away between the walk and the read: the catalog describes
    what exists; pack (which checks the files against the manifest) refuses instead of shipping
    a changed skill."""
    from skillcheck.engine.lint import lint
    from skillcheck.package.archive import BundleError
    from skillcheck.package.bundle import pack_bundle
    from skillcheck.package.catalog import build_manifest
    from skillcheck.settings import Settings

    root = tmp_path / "skills"
    skill_dir = root / "pdf-tools"
    (skill_dir / "references").mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(
        "---\nname: pdf-tools\ndescription: Extracts text from PDF files. Use when the user asks"
        " about PDFs.\n---\n# Steps\n\nRead [the guide](references/guide.md).\n"
    )
    (skill_dir / "references" / "guide.md").write_text("# Guide\n")
    (skill_dir / ".SKILL.md.tmp").write_text("half-written\n")
    result = lint([root], Settings(), keep=True)
    (skill_dir / ".SKILL.md.tmp").unlink()
    manifest = build_manifest(result.loaded, root, generator="skillcheck test")
    paths = [f["path"] for f in manifest["skills"][0]["files"]]
    assert paths == ["SKILL.md", "references/guide.md"]
    with pytest.raises(BundleError, match="changed since the manifest was built"):
        pack_bundle(result.loaded, manifest, tmp_path / "out.tar.gz")
    assert not (tmp_path / "out.tar.gz").exists()
