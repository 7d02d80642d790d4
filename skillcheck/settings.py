"""Configuration: find, read and validate it, and the frozen Settings a run is shaped by.

``[tool.skillcheck]`` in ``pyproject.toml``, or top-level keys in ``skillcheck.toml`` /
``.skillcheck.toml``, found by walking up from the current directory (the first file that
configures skillcheck wins, like ruff). ``--config FILE`` overrides, ``--isolated`` ignores.
What needs the rule registry (selectors, rule options, a frontmatter schema) is resolved
above, in ``engine.config.build_settings``.

One home per layer: here, the file and its validation (``schemas/config.schema.json``, whose
rule options ``python -m skillcheck.report.docs --write-schema`` generates from the rules that
declare them, ``rules.base.Option``); ``engine.config``, the merge with the command line and
``--show-settings``; ``api_lint.load_settings`` and ``run_settings``, the library calls; in the
commands, ``cli.common`` (the shared flags) and ``cli.init`` (the starter file).
"""

from __future__ import annotations

import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillcheck.errors import ConfigError
from skillcheck.schemas import load_schema
from skillcheck.schemas.subset import validate as check
from skillcheck.targets import DEFAULT_TARGETS, parse_targets


@dataclass(frozen=True)
class Settings:
    """Everything that shapes a run, after config and command line are merged."""

    targets: tuple[str, ...] = DEFAULT_TARGETS
    select: frozenset[str] | None = None  # rule codes; None = every rule
    strict: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    # (gitignore-style patterns relative to config_root, rule codes)
    per_path_ignores: list[tuple[list[str], frozenset[str]]] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    config_root: Path | None = None
    respect_gitignore: bool = True
    jobs: int = 1  # processes checking skills; the command line defaults to the CPUs
    cache_dir: Path | None = None  # the result cache's directory; None: no cache
    # count tokens per tier of every skill (the JSON report and --statistics show them)
    figures: bool = True


CONFIG_NAMES = ("skillcheck.toml", ".skillcheck.toml", "pyproject.toml")


@dataclass
class Config:
    path: Path | None = None  # the file read, None for defaults
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def root(self) -> Path | None:
        return self.path.parent if self.path else None

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


MAX_CONFIG_BYTES = 4 * 1024 * 1024  # a configuration file larger than this is refused


def _check_config_file(path: Path) -> None:
    """An explicit --config must be a regular file: say what it is instead (a FIFO or a
    device would block or never end)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    if stat.S_ISDIR(mode):
        raise ConfigError(f"{path}: is a directory, not a configuration file")
    if not stat.S_ISREG(mode):
        raise ConfigError(f"{path}: is not a regular file (a device, FIFO or socket)")


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONFIG_BYTES + 1)
        if len(data) > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes")
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: invalid TOML: not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read: {exc.strerror or exc}") from None


def _section(path: Path, data: dict[str, Any]) -> dict[str, Any] | None:
    if path.name == "pyproject.toml":
        tool = data.get("tool")
        section = tool.get("skillcheck") if isinstance(tool, dict) else None
        if section is None:
            return None
        if not isinstance(section, dict):
            raise ConfigError(f"{path}: [tool.skillcheck] must be a table")
        return section
    return data


def find_config(start: Path) -> Path | None:
    for directory in [start, *start.parents]:
        for name in CONFIG_NAMES:
            candidate = directory / name
            if not candidate.is_file():
                continue
            if name == "pyproject.toml" and _section(candidate, _read_toml(candidate)) is None:
                continue
            return candidate
    return None


def load_config(
    explicit: Path | None = None, *, isolated: bool = False, cwd: Path | None = None
) -> Config:
    if isolated:
        return Config()
    path = explicit
    if path is None:
        path = find_config(cwd or Path.cwd())
        if path is None:
            return Config()
    else:
        _check_config_file(path)
    section = _section(path, _read_toml(path))
    if section is None:
        raise ConfigError(f"{path}: no [tool.skillcheck] table")
    validate(section, path)
    return Config(path=path.resolve(), values=section)


def validate(values: dict[str, Any], path: Path) -> None:
    """Check ``values`` against schemas/config.schema.json; raise ConfigError on the first fault."""
    import json

    schema = load_schema("config.schema.json")
    if path.name != "pyproject.toml" and isinstance(values.get("tool"), dict):
        raise ConfigError(
            f"{path}: [tool.skillcheck] is read only from pyproject.toml; in {path.name} write"
            " the keys at the top level (target = ..., not under a table)"
        )
    _check_target(values.get("target"), path)
    errors = sorted(check(values, schema), key=lambda e: [str(p) for p in e.path])
    if not errors:
        return
    error = errors[0]
    key = ".".join(str(p) for p in error.path)
    if error.keyword == "additionalProperties" and not key:
        allowed = ", ".join(sorted(schema["properties"]))
        unknown = sorted(set(values) - set(schema["properties"]))
        hint = _nearest(unknown[0], schema["properties"])
        raise ConfigError(f"{path}: unknown key {unknown[0]!r}{hint} (known keys: {allowed})")
    if error.keyword == "additionalProperties":
        known = schema["properties"].get(key, {}).get("properties", {})
        unknown = sorted(set(error.instance) - set(known))
        hint = _nearest(unknown[0], known)
        raise ConfigError(
            f"{path}: key {key!r}: unknown key {unknown[0]!r}{hint}"
            f" (known: {', '.join(sorted(known))})"
        )
    shown = json.dumps(error.instance) if not isinstance(error.instance, dict) else "a table"
    raise ConfigError(f"{path}: key {key or '(top level)'!r}: {shown}: {error.message}")


def _nearest(word: str, known: Any) -> str:
    """``; did you mean 'ignore'?`` for a misspelt key, else nothing."""
    import difflib

    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check_target(value: Any, path: Path) -> None:
    """A bad target gets the message ``--target`` gives (the schema's would list no names)."""
    if not isinstance(value, (str, list)) or not all(isinstance(v, str) for v in value):
        return  # not strings: the schema says what is wrong

    try:
        parse_targets(value)
    except ValueError as exc:
        raise ConfigError(f"{path}: key 'target': {exc}") from None


def toml_value(value: Any) -> str:
    """A value as TOML (--show-settings, the starter configuration); None, which TOML cannot
    write, as an empty string."""
    import json  # not at the top: `skillcheck --help` need not import it

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return (
            "{ " + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
        )
    if value is None:
        return '""'
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(str(value))
