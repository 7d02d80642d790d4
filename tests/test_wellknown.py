"""Publishing and verifying well-known directories by the Agent Skills Discovery RFC as
merged (v0.2.0), and one upload zip per skill (issue 13). Checks use plain json, hashlib,
tarfile and zipfile, never our own readers, so a shared misreading cannot hide a bug."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest
from conftest import invoke, write_skill

RFC_SCHEMA = "https://schemas.agentskills.io/discovery/0.2.0/schema.json"
DESC = "Handles {} things. Use when asked about {}."


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_md(name: str, body: str = "# Steps\n\nDo it.\n") -> bytes:
    return f"---\nname: {name}\ndescription: {DESC.format(name, name)}\n---\n{body}".encode()


def make_skills(root: Path) -> Path:
    """alpha: SKILL.md + an executable script + a reference (an archive); beta: SKILL.md only."""
    write_skill(
        root,
        "alpha",
        f"name: alpha\ndescription: {DESC.format('alpha', 'alpha')}\n",
        "# Alpha\n\nRun `scripts/go.sh`; see [notes](references/NOTES.md).\n",
        {"scripts/go.sh": "#!/bin/sh\necho go\n", "references/NOTES.md": "# Notes\n\nHi.\n"},
    )
    os.chmod(root / "alpha" / "scripts" / "go.sh", 0o755)
    write_skill(root, "beta", f"name: beta\ndescription: {DESC.format('beta', 'beta')}\n")
    return root


def source_files(skill: Path) -> dict[str, tuple[bytes, bool]]:
    out = {}
    for dirpath, _, names in os.walk(skill):
        for name in names:
            path = Path(dirpath) / name
            mode = os.stat(path).st_mode
            out[path.relative_to(skill).as_posix()] = (path.read_bytes(), bool(mode & 0o111))
    return out


def tree_bytes(top: Path) -> dict[str, bytes]:
    return {
        p.relative_to(top).as_posix(): p.read_bytes() for p in sorted(top.rglob("*")) if p.is_file()
    }


def archive_files(data: bytes, fmt: str) -> dict[str, tuple[bytes, bool]]:
    out = {}
    if fmt == "tar.gz":
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for m in tar.getmembers():
                assert m.isreg(), m.name
                out[m.name] = (tar.extractfile(m).read(), bool(m.mode & 0o111))
    else:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            for info in zf.infolist():
                out[info.filename] = (zf.read(info), bool((info.external_attr >> 16) & 0o111))
    return out


def publish(tmp_path: Path, *extra: str) -> Path:
    skills = make_skills(tmp_path / "skills")
    wk = tmp_path / "fresh" / "public" / ".well-known" / "agent-skills"  # parents do not exist
    result = invoke("pack", str(skills), "--well-known", str(wk), "--isolated", *extra)
    assert result.exit_code == 0, result.output
    return wk


# --- publishing ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_published_directory_passes_an_independent_check(tmp_path: Path, fmt: str) -> None:
    wk = publish(tmp_path, "--format", fmt)
    skills = tmp_path / "skills"
    index = json.loads((wk / "index.json").read_bytes())
    assert list(index) == ["$schema", "skills"] and index["$schema"] == RFC_SCHEMA
    assert [e["name"] for e in index["skills"]] == ["alpha", "beta"]
    alpha, beta = index["skills"]
    for entry in (alpha, beta):
        assert list(entry) == ["name", "type", "description", "url", "digest"]
        assert entry["description"] == DESC.format(entry["name"], entry["name"])
        # url relative to the index; digest = SHA-256 of the raw bytes it names
        assert entry["digest"] == sha((wk / entry["url"]).read_bytes())
    assert alpha["type"] == "archive" and alpha["url"] == f"alpha.{fmt}"
    assert beta["type"] == "skill-md" and beta["url"] == "beta/SKILL.md"
    assert (wk / "beta" / "SKILL.md").read_bytes() == (skills / "beta" / "SKILL.md").read_bytes()
    # the archive holds the skill's files at its root, modes kept, nothing else
    assert archive_files((wk / alpha["url"]).read_bytes(), fmt) == source_files(skills / "alpha")
    # our manifest beside the index, under its own $schema, not claiming to be the index
    manifest = json.loads((wk / "manifest.json").read_bytes())
    assert manifest["$schema"] == "https://skillcheck.dev/schemas/manifest/1.0.0/schema.json"
    assert "version" not in manifest
    files = {f["path"]: f["digest"] for f in manifest["skills"][0]["files"]}
    assert files == {p: sha(d) for p, (d, _) in source_files(skills / "alpha").items()}
    assert sorted(os.listdir(wk)) == sorted(["alpha." + fmt, "beta", "index.json", "manifest.json"])
    result = invoke("verify", str(wk))
    assert result.exit_code == 0, result.output
    assert "OK (well-known, 2 skills, 4 files" in result.stdout


def test_publishing_is_reproducible(tmp_path: Path) -> None:
    first = tree_bytes(publish(tmp_path / "a"))
    os.utime(tmp_path / "a" / "skills" / "alpha" / "SKILL.md", (1, 1))
    second = tree_bytes(publish(tmp_path / "b"))
    assert first == second
    raw = first["alpha.tar.gz"]
    assert raw[4:8] == b"\0\0\0\0"  # gzip header without a time
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        assert {(m.uid, m.gid, m.uname, m.gname) for m in tar} == {(0, 0, "", "")}


def test_base_url_gives_absolute_urls(tmp_path: Path) -> None:
    base = "https://cdn.example.com/v2/skills/"
    wk = publish(tmp_path, "--base-url", base)
    index = json.loads((wk / "index.json").read_bytes())
    assert [e["url"] for e in index["skills"]] == [base + "alpha.tar.gz", base + "beta/SKILL.md"]
    assert invoke("verify", str(wk), "--base-url", base).exit_code == 0
    refused = invoke("verify", str(wk))
    assert refused.exit_code == 1 and "pass --base-url" in refused.stderr


# --- verifying anyone's publication ----------------------------------------------------------

WRANGLER = {
    "SKILL.md": (
        b"---\nname: wrangler\ndescription: Deploy and manage Cloudflare Workers projects.\n---\n"
        b"\n# Wrangler\n\nRun `scripts/deploy.sh` to deploy your Worker.\n\n"
        b"See [references/COMMANDS.md](references/COMMANDS.md) and "
        b"[references/CONFIGURATION.md](references/CONFIGURATION.md).\n",
        False,
    ),
    "scripts/deploy.sh": (b"#!/bin/sh\nwrangler deploy\n", True),
    "scripts/init.sh": (b"#!/bin/sh\nwrangler init\n", True),
    "references/COMMANDS.md": (b"# Commands\n\n`wrangler deploy`\n", False),
    "references/CONFIGURATION.md": (b"# Configuration\n\nname, main.\n", False),
    "assets/wrangler.toml.template": (b'name = "worker"\n', False),
}


def rfc_example(site: Path) -> dict[str, dict[str, tuple[bytes, bool]]]:
    """The RFC's own index example (two skill-md entries, one archive, path-absolute URLs),
    with real digests; ``site`` is the site root. Built with tarfile, not our writer."""
    wk = site / ".well-known" / "agent-skills"
    skills = {
        "code-review": {"SKILL.md": (skill_md("code-review"), False)},
        "git-workflow": {"SKILL.md": (skill_md("git-workflow"), False)},
        "wrangler": WRANGLER,
    }
    entries = []
    for name, files in skills.items():
        if len(files) == 1:
            (wk / name).mkdir(parents=True)
            data = files["SKILL.md"][0]
            (wk / name / "SKILL.md").write_bytes(data)
            kind, url = "skill-md", f"/.well-known/agent-skills/{name}/SKILL.md"
        else:
            raw = io.BytesIO()
            with tarfile.open(fileobj=raw, mode="w:gz") as tar:
                for path, (content, executable) in files.items():
                    info = tarfile.TarInfo(path)
                    info.size, info.mode = len(content), 0o755 if executable else 0o644
                    tar.addfile(info, io.BytesIO(content))
            data = raw.getvalue()
            (wk / f"{name}.tar.gz").write_bytes(data)
            kind, url = "archive", f"/.well-known/agent-skills/{name}.tar.gz"
        description = files["SKILL.md"][0].split(b"description: ")[1].split(b"\n")[0].decode()
        entries.append(
            {
                "name": name,
                "type": kind,
                "description": description,
                "url": url,
                "digest": sha(data),
            }
        )
    index = {"$schema": RFC_SCHEMA, "skills": entries}
    (wk / "index.json").write_text(json.dumps(index, indent=2))
    return skills


def independent_publication(wk: Path) -> dict[str, dict[str, tuple[bytes, bool]]]:
    """A publisher that is not skillcheck: zip and tar.gz made by other tools' habits
    (directory entries, ``./`` prefixes), archives in a subdirectory, unknown fields."""
    wk.mkdir(parents=True)
    skills = {
        "zipped": {
            "SKILL.md": (skill_md("zipped"), False),
            "scripts/run.py": (b"print('hi')\n", True),
            "references/REF.md": (b"# Ref\n", False),
        },
        "tarred": {"SKILL.md": (skill_md("tarred"), False), "assets/a.txt": (b"a\n", False)},
        "plain": {"SKILL.md": (skill_md("plain"), False)},
    }
    (wk / "dl").mkdir()
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("scripts/"), b"")
        zf.writestr(zipfile.ZipInfo("references/"), b"")
        for path, (content, executable) in skills["zipped"].items():
            info = zipfile.ZipInfo(path)
            info.create_system = 3
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            zf.writestr(info, content)
    (wk / "dl" / "zipped.zip").write_bytes(raw.getvalue())
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for dirname in (".", "./assets"):
            info = tarfile.TarInfo(dirname)
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(info)
        for path, (content, _) in skills["tarred"].items():
            info = tarfile.TarInfo("./" + path)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    (wk / "dl" / "tarred.tgz").write_bytes(gzip.compress(raw.getvalue()))
    (wk / "plain").mkdir()
    (wk / "plain" / "SKILL.md").write_bytes(skills["plain"]["SKILL.md"][0])
    urls = {"zipped": "dl/zipped.zip", "tarred": "./dl/tarred.tgz", "plain": "plain/SKILL.md"}
    index = {
        "$schema": RFC_SCHEMA,
        "publisher": "someone else",
        "skills": [
            {
                "name": name,
                "type": "skill-md" if name == "plain" else "archive",
                "description": f"The {name} skill.",
                "url": urls[name],
                "digest": sha((wk / urls[name]).read_bytes()),
                "x-extra": [1, 2],
            }
            for name in skills
        ]
        + [{"name": "future", "type": "plugin", "description": "?", "url": "f", "digest": "?"}],
    }
    (wk / "index.json").write_text(json.dumps(index))
    return skills


def test_the_rfc_example_verifies(tmp_path: Path) -> None:
    rfc_example(tmp_path / "site")
    for where in (tmp_path / "site", tmp_path / "site" / ".well-known" / "agent-skills"):
        result = invoke("verify", str(where))
        assert result.exit_code == 0, result.output
        assert "OK (well-known, 3 skills, 8 files" in result.stdout


def test_an_independent_publication_verifies_and_loads(tmp_path: Path) -> None:
    from skillcheck.package.loader import open_bundle

    wk = tmp_path / "wk"
    skills = independent_publication(wk)
    result = invoke("verify", str(wk))
    assert result.exit_code == 0, result.output
    assert "unknown type 'plugin'; skipped" in result.stderr
    bundle = open_bundle(wk)
    assert bundle.names() == ["plain", "tarred", "zipped"]
    for name, files in skills.items():
        assert bundle.skill(name).files == tuple(sorted(files))
        for path, (content, _) in files.items():
            assert bundle.read_bytes(name, path) == content
    assert "<name>\nzipped\n</name>" in bundle.catalog_xml()
    # every read checks the artifact again
    (wk / "dl" / "zipped.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    with pytest.raises(Exception, match="digest mismatch"):
        bundle.read_bytes("zipped", "SKILL.md")


def _rewrite(wk: Path, name: str, data: bytes, *, keep_digest: bool = False) -> None:
    """Replace a skill's artifact (and, unless ``keep_digest``, its index digest)."""
    index = json.loads((wk / "index.json").read_bytes())
    entry = next(e for e in index["skills"] if e["name"] == name)
    (wk / entry["url"]).write_bytes(data)
    if not keep_digest:
        entry["digest"] = sha(data)
    (wk / "index.json").write_text(json.dumps(index))


def _tar(members: list[tuple[tarfile.TarInfo, bytes]]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return raw.getvalue()


def _member(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> tuple:
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname = kind, len(data) if kind == tarfile.REGTYPE else 0, link
    return info, data


SKILL = skill_md("alpha")
HOSTILE = {
    "tampered": (lambda wk: _rewrite(wk, "alpha", b"evil", keep_digest=True), "digest mismatch"),
    "traversal": (
        lambda wk: _rewrite(wk, "alpha", _tar([_member("SKILL.md", SKILL), _member("../x", b"x")])),
        "unsafe member path '../x'",
    ),
    "absolute": (
        lambda wk: _rewrite(wk, "alpha", _tar([_member("SKILL.md", SKILL), _member("/etc/x")])),
        "absolute path",
    ),
    "symlink": (
        lambda wk: _rewrite(
            wk, "alpha", _tar([_member("SKILL.md", SKILL), _member("l", b"", b"2", "/etc")])
        ),
        "is a symbolic link",
    ),
    "wrapper": (
        lambda wk: _rewrite(wk, "alpha", _tar([_member("alpha/SKILL.md", SKILL)])),
        "inside the folder 'alpha'/",
    ),
    "not-our-manifest": (
        lambda wk: _rewrite(wk, "alpha", _tar([_member("SKILL.md", SKILL)])),
        "is in manifest.json but not in the artifact",
    ),
    "skill-md": (lambda wk: _rewrite(wk, "beta", b"x", keep_digest=True), "digest mismatch"),
    "outside": (
        lambda wk: (wk / "index.json").write_text(
            (wk / "index.json").read_text().replace('"alpha.tar.gz"', '"../alpha.tar.gz"')
        ),
        "points outside",
    ),
    "other-host": (
        lambda wk: (wk / "index.json").write_text(
            (wk / "index.json").read_text().replace('"alpha.tar.gz"', '"https://evil.test/a"')
        ),
        "points outside",
    ),
    "unknown-schema": (
        lambda wk: (wk / "index.json").write_text(
            (wk / "index.json").read_text().replace("0.2.0", "9.0.0")
        ),
        "unknown $schema",
    ),
    "v0.1.0": (
        lambda wk: (wk / "index.json").write_text(
            json.dumps({"skills": [{"name": "beta", "description": "b", "files": ["SKILL.md"]}]})
        ),
        "v0.1.0 index, which carries no digests",
    ),
    "bad-name": (
        lambda wk: (wk / "index.json").write_text(
            (wk / "index.json").read_text().replace('"name": "beta"', '"name": "Beta--x"')
        ),
        "not a valid skill name",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_publications_are_refused(tmp_path: Path, case: str) -> None:
    wk = publish(tmp_path)
    tamper, reason = HOSTILE[case]
    tamper(wk)
    result = invoke("verify", str(wk))
    assert result.exit_code == 1, result.output
    assert reason in result.stderr
    assert "Traceback" not in result.output


def test_v010_is_accepted_only_when_asked(tmp_path: Path) -> None:
    wk = tmp_path / "old"
    (wk / "beta").mkdir(parents=True)
    (wk / "beta" / "SKILL.md").write_bytes(skill_md("beta"))
    index = {"skills": [{"name": "beta", "description": "b", "files": ["SKILL.md"]}]}
    (wk / "index.json").write_text(json.dumps(index))
    assert invoke("verify", str(wk)).exit_code == 1
    result = invoke("verify", str(wk), "--allow-unverified")
    assert result.exit_code == 0, result.output
    assert "NOT VERIFIED" in result.stdout


# --- one zip per skill ------------------------------------------------------------------------


def test_uploads_one_zip_per_skill(tmp_path: Path) -> None:
    skills = make_skills(tmp_path / "skills")
    outs = []
    for side in ("a", "b"):
        out = tmp_path / side / "uploads"
        result = invoke("pack", str(skills), "--uploads", str(out), "--isolated")
        assert result.exit_code == 0, result.output
        outs.append(tree_bytes(out))
    assert outs[0] == outs[1] and sorted(outs[0]) == ["alpha.zip", "beta.zip"]
    for name in ("alpha", "beta"):
        data = outs[0][f"{name}.zip"]
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            assert zf.comment == b""
            names = zf.namelist()
        assert {n.split("/")[0] for n in names} == {name}  # one top-level folder
        files = {n.removeprefix(f"{name}/"): v for n, v in archive_files(data, "zip").items()}
        assert files == source_files(skills / name)
        assert f"{name}/SKILL.md" in names


def test_pack_needs_one_output(tmp_path: Path) -> None:
    skills = make_skills(tmp_path / "skills")
    result = invoke("pack", str(skills), "--uploads", "x", "--well-known", "y")
    assert result.exit_code == 2 and "exactly one of" in result.stderr
    result = invoke("pack", str(skills), "--well-known", "y", "--base-url", "ftp://example.com/")
    assert result.exit_code == 2 and "not an absolute http(s) URL" in result.stderr


def test_published_files_are_world_readable(tmp_path: Path) -> None:
    wk = publish(tmp_path)
    for path in [wk, *wk.rglob("*")]:
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert mode in (0o644, 0o755), (path, oct(mode))


def test_readme_loader_example_runs_on_a_well_known_directory(tmp_path: Path) -> None:
    """The README's loader example, against our publication and against an install DEST."""
    import re

    readme = Path(__file__).resolve().parent.parent / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(encoding="utf-8"), re.S)
    examples = [b for b in blocks if "open_bundle(" in b]
    assert examples
    skills = tmp_path / "skills"
    write_skill(
        skills,
        "pdf-processing",
        "name: pdf-processing\ndescription: Fills PDF forms. Use when a PDF form comes up.\n",
        "# PDF\n\nForms: [FORMS](references/FORMS.md).\n",
        {"references/FORMS.md": "# Forms\n\nFill them in.\n"},
    )
    wk = tmp_path / "wk"
    assert invoke("pack", str(skills), "--well-known", str(wk), "--isolated").exit_code == 0
    dest = tmp_path / "dest"
    assert invoke("install", str(wk), str(dest)).exit_code == 0
    for path in (wk, dest):
        for code in examples:
            namespace: dict = {"bundle_path": path}
            exec(compile(code, "README.md", "exec"), namespace)
            assert namespace["forms"] == "# Forms\n\nFill them in.\n"


def test_an_executable_skill_md_alone_is_still_skill_md(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    write_skill(skills, "solo", f"name: solo\ndescription: {DESC.format('solo', 'solo')}\n")
    os.chmod(skills / "solo" / "SKILL.md", 0o755)
    wk = tmp_path / "wk"
    assert invoke("pack", str(skills), "--well-known", str(wk), "--isolated").exit_code == 0
    assert json.loads((wk / "index.json").read_bytes())["skills"][0]["type"] == "skill-md"
    result = invoke("verify", str(wk))
    assert result.exit_code == 0, result.output


def test_archive_format_follows_the_content_type_then_the_extension() -> None:
    from skillcheck.package.archive import BundleError
    from skillcheck.package.wellknown import archive_format

    gz, zp = b"\x1f\x8b\x08\x00", b"PK\x03\x04"
    assert archive_format("https://h/a.bin", "application/gzip", gz) == "tar.gz"
    assert archive_format("https://h/a.bin", "application/zip; charset=x", zp) == "zip"
    assert archive_format("https://h/a.zip", "application/octet-stream", zp) == "zip"
    assert archive_format("https://h/a.tgz", None, gz) == "tar.gz"
    with pytest.raises(BundleError, match="served as zip but its bytes are not"):
        archive_format("https://h/a.tar.gz", "application/zip", gz)
    with pytest.raises(BundleError, match="cannot tell the archive format"):
        archive_format("https://h/a", "application/octet-stream", gz)
