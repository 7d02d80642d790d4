"""`skillcheck install`, the discovery RFC client, against publishers on a loopback
`http.server`: conforming, tampered, v0.1.0 and unknown-schema, redirects, oversized
artifacts, and a local directory (issue 13)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from conftest import invoke
from test_wellknown import (
    RFC_SCHEMA,
    independent_publication,
    make_skills,
    publish,
    rfc_example,
    sha,
    skill_md,
    source_files,
)

# what ``/slow`` waits for before it answers: set when the test's servers stop
_SLOW_ANSWERS = threading.Event()


class Handler(SimpleHTTPRequestHandler):
    """Serves a directory; ``/hop/N/<path>`` redirects N times before ``/<path>``, ``/away``
    redirects off loopback."""

    def log_message(self, *args: object) -> None:  # keep the test output clean
        pass

    def do_GET(self) -> None:
        if self.path == "/slow":
            # no answer while the client waits: it must give up on its own
            _SLOW_ANSWERS.wait(120)
            return self._redirect("/")
        parts = self.path.split("/")
        if len(parts) > 3 and parts[1] == "hop":
            hops = int(parts[2])
            rest = "/".join(parts[3:])
            target = f"/hop/{hops - 1}/{rest}" if hops > 1 else f"/{rest}"
            self._redirect(target)
            return
        if self.path == "/away":
            self._redirect("http://example.com/.well-known/agent-skills/index.json")
            return
        super().do_GET()

    def _redirect(self, location: str) -> None:
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()


@pytest.fixture
def serve() -> Iterator:
    """``serve(root)`` -> the base URL of a server on 127.0.0.1 for ``root``; every server
    stops at the end of the test (and on its own after two minutes at the latest)."""
    servers = []

    def start(root: Path) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        server.daemon_threads = True
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
        thread.daemon = True
        thread.start()
        guard = threading.Timer(120, server.shutdown)
        guard.daemon = True
        guard.start()
        servers.append((server, thread, guard))
        return f"http://127.0.0.1:{server.server_address[1]}"

    _SLOW_ANSWERS.clear()
    yield start
    _SLOW_ANSWERS.set()
    for server, thread, guard in servers:
        guard.cancel()
        server.shutdown()
        server.server_close()
        thread.join(5)


def site(tmp_path: Path) -> tuple[Path, Path]:
    """Our publication under ``tmp_path/fresh/public`` (the site root) and its skills."""
    wk = publish(tmp_path)
    return wk.parent.parent, tmp_path / "skills"


def installed(dest: Path) -> dict[str, dict[str, tuple[bytes, bool]]]:
    if not dest.exists():
        return {}
    return {p.name: source_files(p) for p in sorted(dest.iterdir()) if p.is_dir()}


def test_install_from_an_origin_byte_exactly(tmp_path: Path, serve) -> None:
    root, skills = site(tmp_path)
    url = serve(root)
    dest = tmp_path / "home" / ".claude" / "skills"
    result = invoke("install", url, str(dest))
    assert result.exit_code == 0, result.output
    assert installed(dest) == {n: source_files(skills / n) for n in ("alpha", "beta")}
    assert "Installed alpha -> " in result.stdout and "(3 files" in result.stdout
    # no temporary directory left; the record of what was installed, for the loader
    assert sorted(os.listdir(dest)) == [".skillcheck-installed.json", "alpha", "beta"]
    # installing again downloads nothing for skills unchanged since (the RFC's caching)
    again = invoke("install", url, str(dest))
    assert again.exit_code == 0, again.output
    assert "alpha is up to date" in again.stdout and "beta is up to date" in again.stdout
    # an existing skill that differs is kept unless --force; --skill picks one
    (dest / "alpha" / "SKILL.md").write_text("mine")
    again = invoke("install", url, str(dest), "--skill", "alpha")
    assert again.exit_code == 1 and "exists (use --force" in again.stderr
    assert (dest / "alpha" / "SKILL.md").read_text() == "mine"
    forced = invoke(
        "install",
        url + "/.well-known/agent-skills/index.json",
        str(dest),
        "--skill",
        "alpha",
        "--force",
    )
    assert forced.exit_code == 0, forced.output
    assert installed(dest)["alpha"] == source_files(skills / "alpha")


def test_dry_run_writes_nothing(tmp_path: Path, serve) -> None:
    root, _ = site(tmp_path)
    dest = tmp_path / "dest"
    result = invoke("install", serve(root), str(dest), "--dry-run")
    assert result.exit_code == 0, result.output
    assert "Would install beta" in result.stdout and not dest.exists()


def test_the_rfc_example_and_an_independent_publisher_install(tmp_path: Path, serve) -> None:
    expected = rfc_example(tmp_path / "site")
    dest = tmp_path / "dest"
    result = invoke("install", serve(tmp_path / "site"), str(dest))
    assert result.exit_code == 0, result.output
    assert installed(dest) == expected
    other = tmp_path / "other" / ".well-known" / "agent-skills"
    expected = independent_publication(other)
    dest = tmp_path / "dest2"
    result = invoke("install", serve(tmp_path / "other"), str(dest))
    assert result.exit_code == 0, result.output
    assert "unknown type 'plugin'; skipped" in result.stderr
    assert installed(dest) == expected
    # the same from the local directory
    dest = tmp_path / "dest3"
    assert invoke("install", str(other), str(dest)).exit_code == 0
    assert installed(dest) == expected


def test_lint_runs_on_what_was_installed(tmp_path: Path, serve) -> None:
    wk = tmp_path / "pub" / ".well-known" / "agent-skills"
    (wk / "odd").mkdir(parents=True)
    data = skill_md("other-name")  # the frontmatter name differs from the directory
    (wk / "odd" / "SKILL.md").write_bytes(data)
    index = {
        "$schema": RFC_SCHEMA,
        "skills": [
            {
                "name": "odd",
                "type": "skill-md",
                "description": "d",
                "url": "odd/SKILL.md",
                "digest": sha(data),
            }
        ],
    }
    (wk / "index.json").write_text(json.dumps(index))
    dest = tmp_path / "dest"
    result = invoke("install", serve(tmp_path / "pub"), str(dest))
    assert (dest / "odd" / "SKILL.md").read_bytes() == data
    assert result.exit_code == 1 and "other-name" in result.stderr


def _edit_index(root: Path, edit) -> None:
    path = root / ".well-known" / "agent-skills" / "index.json"
    index = json.loads(path.read_bytes())
    edit(index)
    path.write_text(json.dumps(index))


def test_tampered_artifact_is_refused_and_not_written(tmp_path: Path, serve) -> None:
    root, skills = site(tmp_path)
    (root / ".well-known" / "agent-skills" / "alpha.tar.gz").write_bytes(b"\x1f\x8bevil")
    dest = tmp_path / "dest"
    result = invoke("install", serve(root), str(dest))
    assert result.exit_code == 1
    assert "alpha: not installed: skill 'alpha': digest mismatch" in result.stderr
    assert installed(dest) == {"beta": source_files(skills / "beta")}  # the others are installed


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (
            lambda i: i.update(
                {"$schema": "https://schemas.agentskills.io/discovery/1.0.0/schema.json"}
            ),
            "unknown $schema",
        ),
        (lambda i: i.pop("$schema"), "v0.1.0 index, which carries no digests"),
    ],
    ids=["unknown-schema", "v0.1.0"],
)
def test_unverifiable_indexes_are_refused(tmp_path: Path, serve, edit, reason: str) -> None:
    root, _ = site(tmp_path)
    _edit_index(root, edit)
    dest = tmp_path / "dest"
    result = invoke("install", serve(root), str(dest))
    assert result.exit_code == 1 and reason in result.stderr
    assert not dest.exists()


def test_v010_installs_only_when_unverified_content_is_accepted(tmp_path: Path, serve) -> None:
    wk = tmp_path / "old" / ".well-known" / "agent-skills"
    files = {"SKILL.md": skill_md("legacy"), "references/R.md": b"# R\n"}
    for path, data in files.items():
        (wk / "legacy" / path).parent.mkdir(parents=True, exist_ok=True)
        (wk / "legacy" / path).write_bytes(data)
    index = {"skills": [{"name": "legacy", "description": "d", "files": sorted(files)}]}
    (wk / "index.json").write_text(json.dumps(index))
    url = serve(tmp_path / "old")
    dest = tmp_path / "dest"
    assert invoke("install", url, str(dest)).exit_code == 1 and not dest.exists()
    result = invoke("install", url, str(dest), "--allow-unverified")
    assert result.exit_code == 0, result.output
    assert "UNVERIFIED" in result.stderr and "UNVERIFIED" in result.stdout
    assert {p: d for p, (d, _) in installed(dest)["legacy"].items()} == files


def test_redirects_are_followed_and_bounded(tmp_path: Path, serve) -> None:
    root, skills = site(tmp_path)
    url = serve(root)
    dest = tmp_path / "dest"
    # relative artifact URLs resolve against the index URL reached after the redirects
    result = invoke("install", f"{url}/hop/3/.well-known/agent-skills/", str(dest))
    assert result.exit_code == 0, result.output
    assert installed(dest) == {n: source_files(skills / n) for n in ("alpha", "beta")}
    too_many = invoke("install", f"{url}/hop/9/.well-known/agent-skills/", str(tmp_path / "d2"))
    assert too_many.exit_code == 2 and "more than 5 redirects" in too_many.stderr
    away = invoke("install", f"{url}/away", str(tmp_path / "d3"))
    assert away.exit_code == 1 and "plain http is allowed only to loopback" in away.stderr
    assert not (tmp_path / "d2").exists() and not (tmp_path / "d3").exists()


def test_oversized_artifacts_are_refused(tmp_path: Path, serve) -> None:
    skills = make_skills(tmp_path / "skills")
    (skills / "alpha" / "assets").mkdir()
    (skills / "alpha" / "assets" / "big.bin").write_bytes(os.urandom(50_000))
    wk = tmp_path / "site" / ".well-known" / "agent-skills"
    assert invoke("pack", str(skills), "--well-known", str(wk), "--isolated").exit_code == 0
    dest = tmp_path / "dest"
    result = invoke("install", serve(tmp_path / "site"), str(dest), "--max-bytes", "20000")
    assert result.exit_code == 1
    assert "more than the limit of 20000" in result.stderr
    assert installed(dest) == {"beta": source_files(skills / "beta")}


def test_bad_sources_are_usage_errors(tmp_path: Path, serve) -> None:
    for source, reason in [
        ("http://example.com", "plain http is allowed only to loopback"),
        ("ftp://example.com/x", "only https"),
        (str(tmp_path / "nothing"), "not a directory"),
        (str(tmp_path), "no index.json"),
        (serve(tmp_path) + "/missing/index.json", "HTTP 404"),
        (str(publish(tmp_path / "p")), "the index lists no skill named 'nope'"),
    ]:
        result = invoke("install", source, str(tmp_path / "dest"), "--skill", "nope")
        assert result.exit_code == 2, (source, result.output)
        assert reason in result.stderr
        assert "Traceback" not in result.output


def test_the_loader_opens_an_install_dest(tmp_path: Path, serve) -> None:
    from skillcheck.package.archive import BundleError
    from skillcheck.package.loader import open_bundle

    root, skills = site(tmp_path)
    dest = tmp_path / "dest"
    (dest / "mine").mkdir(parents=True)  # a skill of the user's own, not ours to check
    (dest / "mine" / "SKILL.md").write_bytes(skill_md("mine"))
    url = serve(root)
    assert invoke("install", url, str(dest), "--skill", "beta").exit_code == 0
    assert invoke("install", url, str(dest), "--skill", "alpha").exit_code == 0
    bundle = open_bundle(dest)
    assert bundle.kind == "installed" and bundle.names() == ["alpha", "beta"]
    notes = (skills / "alpha" / "references" / "NOTES.md").read_bytes()
    assert bundle.read_bytes("alpha", "references/NOTES.md") == notes
    record = json.loads((dest / ".skillcheck-installed.json").read_bytes())
    assert record["skills"][0]["source"]["url"] == url + "/.well-known/agent-skills/alpha.tar.gz"
    (dest / "alpha" / "references" / "NOTES.md").write_bytes(b"edited")
    with pytest.raises(BundleError, match=r"alpha/references/NOTES\.md"):
        open_bundle(dest)


def test_slow_servers_time_out(tmp_path: Path, serve) -> None:
    # the server answers only when the test ends: a client without a timeout would hang
    # (until the server's two-minute guard)
    result = invoke("install", serve(tmp_path) + "/slow", str(tmp_path / "d"), "--timeout", "0.5")
    assert result.exit_code == 2 and "timed out" in result.stderr, result.output


def test_a_remote_publication_cannot_send_us_to_loopback() -> None:
    from skillcheck.package.archive import BundleError
    from skillcheck.package.install import HttpSource

    remote = HttpSource("https://skills.example.com/.well-known/agent-skills/index.json")
    for url in ("http://127.0.0.1:9/x.tar.gz", "https://localhost/x.tar.gz", "http://[::1]/x"):
        with pytest.raises(BundleError, match="may not point at a loopback address"):
            remote.fetch(url, 100)  # refused before any connection is attempted


def test_publishing_again_replaces_our_directory_only(tmp_path: Path) -> None:
    wk = publish(tmp_path)
    (tmp_path / "skills" / "beta" / "extra.md").write_text("# Extra\n")
    assert (
        invoke("pack", str(tmp_path / "skills"), "--well-known", str(wk), "--isolated").exit_code
        == 0
    )
    index = json.loads((wk / "index.json").read_bytes())
    assert [e["type"] for e in index["skills"]] == ["archive", "archive"]
    assert not (wk / "beta").exists()
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("x")
    result = invoke("pack", str(tmp_path / "skills"), "--well-known", str(foreign), "--isolated")
    assert result.exit_code == 2 and "refusing to replace it" in result.stderr
    assert os.listdir(foreign) == ["precious.txt"]


def test_a_failed_write_leaves_dest_as_it_was(tmp_path: Path, serve, monkeypatch) -> None:
    from skillcheck.package import install as install_module

    root, _ = site(tmp_path)
    dest = tmp_path / "dest"
    (dest / "alpha").mkdir(parents=True)
    (dest / "alpha" / "SKILL.md").write_text("old")
    calls = []

    def failing(root_: Path, rel: str, data: bytes, executable: bool) -> None:
        calls.append(rel)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        original(root_, rel, data, executable)

    original = install_module._write_new_file
    monkeypatch.setattr(install_module, "_write_new_file", failing)
    result = invoke("install", serve(root), str(dest), "--skill", "alpha", "--force")
    assert result.exit_code == 2 and "No space left on device" in result.stderr
    assert sorted(os.listdir(dest)) == ["alpha"]  # no temporary directory left
    assert os.listdir(dest / "alpha") == ["SKILL.md"]
    assert (dest / "alpha" / "SKILL.md").read_text() == "old"
