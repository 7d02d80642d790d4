"""``skillcheck init``: a starter skillcheck.toml, with targets detected from the layout."""

from __future__ import annotations

import os
from pathlib import Path

import click

from skillcheck.cli.common import handle_errors
from skillcheck.errors import UsageError


@click.command("init")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False), default=".")
@click.option("--force", is_flag=True, help="Replace an existing skillcheck.toml.")
@handle_errors
def init_command(directory: Path, force: bool) -> None:
    """Write a starter skillcheck.toml, with targets detected from the layout
    (.claude/skills: claude-code, .github/skills: copilot, .agents/skills: codex...) and
    from plugin manifests (.claude-plugin, .codex-plugin, .cursor-plugin)."""
    try:
        path, text = write_starter_config(directory, force)
    except OSError as exc:
        raise UsageError(
            f"{directory}: cannot write skillcheck.toml: {exc.strerror or exc}"
        ) from None
    click.echo(text, nl=False)
    click.echo(f"Wrote {path}", err=True)


# --- skillcheck init --------------------------------------------------------------------------

# where a runtime looks for a project's skills -> the target that checks for it
LAYOUTS = (
    (".claude/skills", "claude-code"),
    (".github/skills", "copilot"),
    (".agents/skills", "codex"),
    (".codex/skills", "codex"),
    (".cursor/skills", "cursor"),
    (".agent/skills", "openskills"),
)


# a plugin's manifest folder -> the runtime that installs the plugin (and loads its skills/)
PLUGIN_FOLDERS = (
    (".claude-plugin", "claude-code"),
    (".codex-plugin", "codex"),
    (".cursor-plugin", "cursor"),
)


def _plugin_roots(root: Path) -> list[Path]:
    """Where a plugin's manifest folder may sit: the repository itself (one plugin, or a
    marketplace), and each plugin folder of a marketplace (``plugins/*``, ``*``)."""
    roots = [root]
    for parent in (root, root / "plugins"):
        try:
            roots.extend(sorted(p for p in parent.iterdir() if p.is_dir() and p.name[0] != "."))
        except OSError:
            continue
    return roots


def detect_targets(root: Path) -> tuple[list[str], list[str]]:
    """(targets, the directories that suggested them): the specification always, and each
    runtime whose project skills directory, or plugin manifest folder, exists under ``root``."""
    targets = ["agentskills"]
    found = []
    seen = [(rel, target) for rel, target in LAYOUTS if (root / rel).is_dir()]
    for folder, target in PLUGIN_FOLDERS:
        for where in _plugin_roots(root):
            if (where / folder).is_dir():
                seen.append(((where / folder).relative_to(root).as_posix(), target))
                break  # one plugin names the runtime: the others would say the same
    for rel, target in seen:
        found.append(rel)
        if target not in targets:
            targets.append(target)
    return targets, found


def starter_config(root: Path) -> str:
    from skillcheck.settings import toml_value

    targets, found = detect_targets(root)
    why = (
        "detected from " + ", ".join(found)
        if found
        else "no runtime's skills directory found: the specification only"
    )
    return (
        "# skillcheck configuration (https://github.com/skillcheck-dev/skillcheck#configuration)\n"
        f"# targets: {why}\n"
        f"target = {toml_value(targets)}\n"
        "# rules to skip, by code, prefix or slug:\n"
        "ignore = []\n"
        "# paths to leave out (gitignore patterns, relative to this file):\n"
        "exclude = []\n"
        "strict = false\n"
    )


def write_starter_config(root: Path, force: bool) -> tuple[Path, str]:
    """Write skillcheck.toml in ``root`` (validated before it is written); refuse to replace
    an existing one unless ``force``. Raises ConfigError or OSError."""
    from skillcheck.errors import ConfigError
    from skillcheck.settings import validate
    from skillcheck.source.atomic import write_atomic

    path = root / "skillcheck.toml"
    if os.path.lexists(path) and not force:
        raise ConfigError(f"{path}: already exists (use --force to replace it)")
    text = starter_config(root)
    import tomllib

    validate(tomllib.loads(text), path)
    write_atomic(path, text.encode("utf-8"))
    return path, text
