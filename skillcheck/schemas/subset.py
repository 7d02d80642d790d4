"""A JSON Schema validator for the subset of keywords skillcheck's own config schema uses.

Importing jsonschema costs ~65-95 ms, paid on every pre-commit run of a repository that
configures skillcheck; this covers the handful of keywords config.schema.json needs in a
millisecond. A test checks it agrees with jsonschema, and ``validate`` refuses a schema
that uses any keyword outside the subset, so the schema cannot outgrow it unnoticed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SUPPORTED = frozenset(
    {
        "$schema", "$id", "$defs", "$ref", "title", "description", "type", "enum",
        "pattern", "properties", "additionalProperties", "items", "oneOf", "minimum",
        "minItems", "minLength", "required",
    }
)  # fmt: skip


@dataclass(frozen=True)
class SchemaError:
    path: tuple[str | int, ...]  # where in the instance
    message: str
    instance: Any
    keyword: str


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "null":
        return value is None
    raise ValueError(f"unsupported type {kind!r}")


def _check_keywords(schema: dict[str, Any]) -> None:
    unknown = set(schema) - SUPPORTED
    if unknown:
        raise ValueError(f"schema keyword(s) outside the supported subset: {sorted(unknown)}")


def validate(instance: Any, schema: dict[str, Any]) -> list[SchemaError]:
    """All violations of ``schema`` by ``instance`` (empty when valid)."""
    root = schema
    errors: list[SchemaError] = []

    def resolve(ref: str) -> dict[str, Any]:
        if not ref.startswith("#/"):
            raise ValueError(f"only local $ref supported, not {ref!r}")
        node: Any = root
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    def walk(value: Any, sub: dict[str, Any], path: tuple[str | int, ...], out: list) -> None:
        _check_keywords(sub)
        if "$ref" in sub:
            walk(value, resolve(sub["$ref"]), path, out)
        if "type" in sub:
            kinds = sub["type"] if isinstance(sub["type"], list) else [sub["type"]]
            if not any(_type_ok(value, k) for k in kinds):
                out.append(
                    SchemaError(path, f"{value!r} is not of type {sub['type']!r}", value, "type")
                )
                return
        if "enum" in sub and value not in sub["enum"]:
            out.append(SchemaError(path, f"{value!r} is not one of {sub['enum']!r}", value, "enum"))
        if isinstance(value, str):
            if "pattern" in sub and not re.search(sub["pattern"], value):
                out.append(
                    SchemaError(
                        path, f"{value!r} does not match {sub['pattern']!r}", value, "pattern"
                    )
                )
            if "minLength" in sub and len(value) < sub["minLength"]:
                out.append(SchemaError(path, f"{value!r} is too short", value, "minLength"))
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and "minimum" in sub
            and value < sub["minimum"]
        ):
            out.append(
                SchemaError(
                    path,
                    f"{value!r} is less than the minimum of {sub['minimum']!r}",
                    value,
                    "minimum",
                )
            )
        if isinstance(value, list):
            if "minItems" in sub and len(value) < sub["minItems"]:
                out.append(SchemaError(path, f"{value!r} should be non-empty", value, "minItems"))
            if "items" in sub:
                for index, item in enumerate(value):
                    walk(item, sub["items"], (*path, index), out)
        if isinstance(value, dict):
            props = sub.get("properties", {})
            for key in sub.get("required", ()):
                if key not in value:
                    out.append(
                        SchemaError(path, f"{key!r} is a required property", value, "required")
                    )
            extra = sub.get("additionalProperties", True)
            for key, item in value.items():
                if key in props:
                    walk(item, props[key], (*path, key), out)
                elif extra is False:
                    out.append(
                        SchemaError(
                            path,
                            f"Additional properties are not allowed ({key!r} was unexpected)",
                            value,
                            "additionalProperties",
                        )
                    )
                elif isinstance(extra, dict):
                    walk(item, extra, (*path, key), out)
        if "oneOf" in sub:
            trials = []
            for option in sub["oneOf"]:
                trial: list[SchemaError] = []
                walk(value, option, path, trial)
                trials.append(trial)
            matches = sum(not trial for trial in trials)
            # no form fits: explain with the form of the right type, which says most
            typed = [t for t in trials if t and not (t[0].keyword == "type" and t[0].path == path)]
            if matches == 0 and len(typed) == 1:
                out.extend(typed[0])
            elif matches != 1:
                out.append(
                    SchemaError(
                        path,
                        f"{value!r} is not valid under exactly one of the allowed forms",
                        value,
                        "oneOf",
                    )
                )

    walk(instance, schema, (), errors)
    return errors
