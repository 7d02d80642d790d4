"""JSON Schemas shipped with skillcheck (config, report, manifest, frontmatter)."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from skillcheck.errors import ConfigError


@cache
def load_schema(name: str) -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath(name).read_text(encoding="utf-8"))


_SCHEMAS: dict[tuple[str, int, int], Any] = {}  # (path, mtime_ns, size) -> compiled validator


def load_frontmatter_schema(path: str, where: str = "configuration") -> Any:
    """The compiled validator for the JSON Schema at ``path``, compiled once per file version.

    Raises ConfigError (exit 2) naming ``where`` (the config file), the schema file and the
    reason when the file is missing, unreadable, not JSON or not a valid JSON Schema.
    """
    import json
    import os

    def fail(reason: str) -> ConfigError:
        return ConfigError(f"{where}: frontmatter-schema {path}: {reason}")

    try:
        info = os.stat(path)
    except OSError as exc:
        raise fail(exc.strerror or str(exc)) from None
    key = (path, info.st_mtime_ns, info.st_size)
    if key in _SCHEMAS:
        return _SCHEMAS[key]
    try:
        with open(path, "rb") as handle:
            schema = json.loads(handle.read(4 * 1024 * 1024 + 1))
    except OSError as exc:
        raise fail(exc.strerror or str(exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise fail(f"not valid JSON: {exc}") from None
    if not isinstance(schema, dict | bool):
        raise fail(f"a JSON Schema is an object, not {type(schema).__name__}")
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        shown = "/".join(str(p) for p in exc.absolute_path) or "(top level)"
        raise fail(f"not a valid JSON Schema at {shown}: {exc.message}") from None
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    _SCHEMAS[key] = validator
    return validator
