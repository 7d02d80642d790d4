"""A JSON Schema validator for the subset of keywords skillcheck's own schemas use.

Importing jsonschema costs ~65-95 ms (135-180 ms measured on a busy machine), paid on every
pre-commit run of a repository that configures skillcheck; this covers the handful of
keywords config.schema.json needs in a millisecond. It is also the fast path of a bundle's
manifest check: a manifest it finds valid is valid (jsonschema walks a 1,000-skill manifest
in about a second, this in a fraction), and one it refuses goes to jsonschema for the verdict
and the message (see ``package.bundlecheck``). Tests check it agrees with jsonschema on both
schemas, and ``validate`` refuses a schema that uses any keyword outside the subset (raising
ValueError), so a schema cannot outgrow it unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

SUPPORTED = frozenset(
    {
        "$schema", "$id", "$defs", "$ref", "$comment", "title", "description", "type",
        "enum", "const", "pattern", "properties", "additionalProperties", "items",
        "contains", "oneOf", "minimum", "minItems", "minLength", "maxLength", "required",
    }
)  # fmt: skip


@dataclass(frozen=True)
class SchemaError:
    path: tuple[str | int, ...]  # where in the instance
    message: str
    instance: Any
    keyword: str


_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def _check_keywords(schema: dict[str, Any]) -> None:
    unknown = set(schema) - SUPPORTED
    if unknown:
        raise ValueError(f"schema keyword(s) outside the supported subset: {sorted(unknown)}")


def _equal(a: Any, b: Any) -> bool:
    """JSON equality, as jsonschema's ``const`` compares: a boolean equals no number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_equal, a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


Path = tuple[str | int, ...]
# a compiled schema node: appends the instance's violations to the list
Check = Callable[[Any, Path, list[SchemaError]], None]
# a compiled node of is_valid: whether the instance is valid
Test = Callable[[Any], bool]
F = TypeVar("F", Check, Test)
_COMPILED: dict[int, tuple[dict[str, Any], Check]] = {}  # id(root schema) -> (schema, check)


def validate(instance: Any, schema: dict[str, Any]) -> list[SchemaError]:
    """All violations of ``schema`` by ``instance`` (empty when valid).

    The schema is compiled once into one closure per node, holding only the keywords it
    uses: a 1,000-skill manifest is checked in tens of milliseconds.
    """
    cached = _COMPILED.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _COMPILED[id(schema)] = (schema, _Compiler(schema).compile(schema))
    errors: list[SchemaError] = []
    cached[1](instance, (), errors)
    return errors


def _resolve(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#/"):
        raise ValueError(f"only local $ref supported, not {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return node


def _kinds(declared: Any) -> list[Callable[[Any], bool]]:
    names = declared if isinstance(declared, list) else [declared]
    for kind in names:
        if kind not in _TYPES:
            raise ValueError(f"unsupported type {kind!r}")
    return [_TYPES[kind] for kind in names]


class _Builder(Generic[F]):
    """Compiles a schema once into one function per node (``F``: a Check or a Test)."""

    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.done: dict[int, F] = {}

    def resolve(self, ref: str) -> dict[str, Any]:
        return _resolve(self.root, ref)

    def compile(self, sub: dict[str, Any]) -> F:
        found = self.done.get(id(sub))
        if found is not None:
            return found
        body: list[F] = []  # filled below; a $ref cycle reaches this node through it
        self.done[id(sub)] = cast(F, lambda *args: body[0](*args))
        body.append(self._build(sub))
        self.done[id(sub)] = body[0]  # later references call it directly
        return body[0]

    def _build(self, sub: dict[str, Any]) -> F:
        raise NotImplementedError

    def _object_parts(self, sub: dict[str, Any]) -> tuple[dict[str, F], list[str], F | None, bool]:
        """An object node's property functions, required keys, additional-properties function
        and whether it is closed (``additionalProperties: false``)."""
        props = {key: self.compile(value) for key, value in sub.get("properties", {}).items()}
        extra = sub.get("additionalProperties", True)
        extra_fn = self.compile(extra) if isinstance(extra, dict) else None
        return props, list(sub.get("required", ())), extra_fn, extra is False


class _Compiler(_Builder[Check]):
    def _build(self, sub: dict[str, Any]) -> Check:
        """The checks of one node, in a fixed order; a wrong type ends the node's checks."""
        _check_keywords(sub)
        ref = self.compile(self.resolve(sub["$ref"])) if "$ref" in sub else None
        declared = sub.get("type")
        kinds = None if declared is None else _kinds(declared)
        steps: list[Check] = []
        if "enum" in sub:
            enum = sub["enum"]

            def check_enum(value: Any, path: Path, out: list[SchemaError]) -> None:
                if value not in enum:
                    out.append(
                        SchemaError(path, f"{value!r} is not one of {enum!r}", value, "enum")
                    )

            steps.append(check_enum)
        if "const" in sub:
            const = sub["const"]

            def check_const(value: Any, path: Path, out: list[SchemaError]) -> None:
                if not _equal(value, const):
                    out.append(SchemaError(path, f"{const!r} was expected", value, "const"))

            steps.append(check_const)
        if "pattern" in sub:
            pattern = sub["pattern"]
            regex = re.compile(pattern)

            def check_pattern(value: Any, path: Path, out: list[SchemaError]) -> None:
                if isinstance(value, str) and not regex.search(value):
                    message = f"{value!r} does not match {pattern!r}"
                    out.append(SchemaError(path, message, value, "pattern"))

            steps.append(check_pattern)
        if "minLength" in sub or "maxLength" in sub:
            shortest = sub.get("minLength", 0)
            longest = sub.get("maxLength")

            def check_length(value: Any, path: Path, out: list[SchemaError]) -> None:
                if not isinstance(value, str):
                    return
                if len(value) < shortest:
                    out.append(SchemaError(path, f"{value!r} is too short", value, "minLength"))
                if longest is not None and len(value) > longest:
                    out.append(SchemaError(path, f"{value!r} is too long", value, "maxLength"))

            steps.append(check_length)
        if "minimum" in sub:
            least = sub["minimum"]

            def check_minimum(value: Any, path: Path, out: list[SchemaError]) -> None:
                if isinstance(value, int | float) and not isinstance(value, bool) and value < least:
                    message = f"{value!r} is less than the minimum of {least!r}"
                    out.append(SchemaError(path, message, value, "minimum"))

            steps.append(check_minimum)
        if "minItems" in sub:
            fewest = sub["minItems"]

            def check_min_items(value: Any, path: Path, out: list[SchemaError]) -> None:
                if isinstance(value, list) and len(value) < fewest:
                    message = f"{value!r} should be non-empty"
                    out.append(SchemaError(path, message, value, "minItems"))

            steps.append(check_min_items)
        if "items" in sub:
            item_check = self.compile(sub["items"])

            def check_items(value: Any, path: Path, out: list[SchemaError]) -> None:
                if isinstance(value, list):
                    for index, item in enumerate(value):
                        item_check(item, (*path, index), out)

            steps.append(check_items)
        if "contains" in sub:
            wanted = self.compile(sub["contains"])

            def check_contains(value: Any, path: Path, out: list[SchemaError]) -> None:
                if isinstance(value, list) and not any(
                    not _violations(wanted, item, (*path, index))
                    for index, item in enumerate(value)
                ):
                    message = f"{value!r} does not contain items matching the given schema"
                    out.append(SchemaError(path, message, value, "contains"))

            steps.append(check_contains)
        if {"required", "properties", "additionalProperties"} & sub.keys():
            steps.append(self._object(sub))
        if "oneOf" in sub:
            options = [self.compile(option) for option in sub["oneOf"]]

            def check_one_of(value: Any, path: Path, out: list[SchemaError]) -> None:
                trials = [_violations(option, value, path) for option in options]
                matches = sum(not trial for trial in trials)
                # no form fits: explain with the form of the right type, which says most
                typed = [
                    t for t in trials if t and not (t[0].keyword == "type" and t[0].path == path)
                ]
                if matches == 0 and len(typed) == 1:
                    out.extend(typed[0])
                elif matches != 1:
                    message = f"{value!r} is not valid under exactly one of the allowed forms"
                    out.append(SchemaError(path, message, value, "oneOf"))

            steps.append(check_one_of)

        if ref is None and kinds is not None and len(steps) <= 1:  # the common leaf: no loop
            ok = kinds[0] if len(kinds) == 1 else (lambda v: any(k(v) for k in kinds))
            step = steps[0] if steps else None

            def leaf(value: Any, path: Path, out: list[SchemaError]) -> None:
                if not ok(value):
                    message = f"{value!r} is not of type {declared!r}"
                    out.append(SchemaError(path, message, value, "type"))
                elif step is not None:
                    step(value, path, out)

            return leaf

        def check(value: Any, path: Path, out: list[SchemaError]) -> None:
            if ref is not None:
                ref(value, path, out)
            if kinds is not None and not any(ok(value) for ok in kinds):
                message = f"{value!r} is not of type {declared!r}"
                out.append(SchemaError(path, message, value, "type"))
                return
            for step in steps:
                step(value, path, out)

        return check

    def _object(self, sub: dict[str, Any]) -> Check:
        props, required, extra_check, closed = self._object_parts(sub)

        def check_object(value: Any, path: Path, out: list[SchemaError]) -> None:
            if not isinstance(value, dict):
                return
            for key in required:
                if key not in value:
                    message = f"{key!r} is a required property"
                    out.append(SchemaError(path, message, value, "required"))
            for key, item in value.items():
                prop = props.get(key)
                if prop is not None:
                    prop(item, (*path, key), out)
                elif closed:
                    message = f"Additional properties are not allowed ({key!r} was unexpected)"
                    out.append(SchemaError(path, message, value, "additionalProperties"))
                elif extra_check is not None:
                    extra_check(item, (*path, key), out)

        return check_object


def _violations(check: Check, value: Any, path: Path) -> list[SchemaError]:
    found: list[SchemaError] = []
    check(value, path, found)
    return found


# --- validity alone -------------------------------------------------------------------------
# The same keywords as _Compiler, each a test that stops at the first violation and builds no
# path: what a caller that expects a valid instance and needs no message runs (each cached
# pack record, a manifest before it is written). Tests check it agrees with ``validate``.

_TESTS: dict[int, tuple[dict[str, Any], Test]] = {}  # id(root schema) -> (schema, test)


def is_valid(instance: Any, schema: dict[str, Any]) -> bool:
    """``not validate(instance, schema)``, in about two-thirds of its time on a valid
    instance (a warm pack of 1,000 skills: 45 ms instead of 70)."""
    cached = _TESTS.get(id(schema))
    if cached is None or cached[0] is not schema:
        cached = _TESTS[id(schema)] = (schema, _Tester(schema).compile(schema))
    return cached[1](instance)


def _every(tests: list[Test]) -> Test:
    if len(tests) == 1:
        return tests[0]

    def test(value: Any) -> bool:
        for one in tests:  # noqa: SIM110 - all() over a generator costs a frame per value
            if not one(value):
                return False
        return True

    return test


class _Tester(_Builder[Test]):
    def _build(self, sub: dict[str, Any]) -> Test:
        _check_keywords(sub)
        tests: list[Test] = []
        if "type" in sub:
            kinds = _kinds(sub["type"])
            tests.append(kinds[0] if len(kinds) == 1 else lambda v: any(k(v) for k in kinds))
        if "$ref" in sub:
            tests.append(self.compile(self.resolve(sub["$ref"])))
        if "enum" in sub:
            enum = sub["enum"]
            tests.append(lambda v: v in enum)
        if "const" in sub:
            const = sub["const"]
            tests.append(lambda v: _equal(v, const))
        if "pattern" in sub:
            regex = re.compile(sub["pattern"])
            tests.append(lambda v: not isinstance(v, str) or regex.search(v) is not None)
        if "minLength" in sub or "maxLength" in sub:
            shortest, longest = sub.get("minLength", 0), sub.get("maxLength")
            tests.append(
                lambda v: (
                    not isinstance(v, str)
                    or (shortest <= len(v) and (longest is None or len(v) <= longest))
                )
            )
        if "minimum" in sub:
            least = sub["minimum"]
            tests.append(
                lambda v: not isinstance(v, int | float) or isinstance(v, bool) or not v < least
            )
        if "minItems" in sub:
            fewest = sub["minItems"]
            tests.append(lambda v: not isinstance(v, list) or len(v) >= fewest)
        if "items" in sub:
            item = self.compile(sub["items"])
            tests.append(lambda v: not isinstance(v, list) or all(map(item, v)))
        if "contains" in sub:
            wanted = self.compile(sub["contains"])
            tests.append(lambda v: not isinstance(v, list) or any(map(wanted, v)))
        if {"required", "properties", "additionalProperties"} & sub.keys():
            tests.append(self._object(sub))
        if "oneOf" in sub:
            options = [self.compile(option) for option in sub["oneOf"]]
            tests.append(lambda v: sum(1 for option in options if option(v)) == 1)
        return _every(tests) if tests else lambda v: True

    def _object(self, sub: dict[str, Any]) -> Test:
        props, required, extra_test, closed = self._object_parts(sub)

        def test_object(value: Any) -> bool:
            if not isinstance(value, dict):
                return True
            for key in required:
                if key not in value:
                    return False
            for key, item in value.items():
                prop = props.get(key)
                if prop is not None:
                    if not prop(item):
                        return False
                elif closed or (extra_test is not None and not extra_test(item)):
                    return False
            return True

        return test_object
