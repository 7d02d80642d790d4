"""Editor schemas for the frontmatter, and the team `frontmatter-schema` rule (SK406)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from conftest import FIXTURES, invoke, lint_json, write_skill
from referencing import Registry, Resource

from skillcheck.source.frontmatter import parse_document
from skillcheck.targets import SPEC_FIELDS, TARGETS

SCHEMAS = Path(__file__).resolve().parent.parent / "skillcheck" / "schemas"
FRONTMATTER = sorted(SCHEMAS.glob("frontmatter*.schema.json"))
VALID = sorted((FIXTURES / "valid").glob("*/SKILL.md"))


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _validator(path: Path) -> jsonschema.protocols.Validator:
    """A validator whose relative $refs resolve to the shipped files (as an editor does)."""
    registry = Registry().with_resources(
        (schema["$id"], Resource.from_contents(schema)) for schema in map(_load, FRONTMATTER)
    )
    schema = _load(path)
    return jsonschema.validators.validator_for(schema)(schema, registry=registry)


def _values(path: Path) -> dict:
    return parse_document(path, path.read_bytes()).frontmatter.values


def test_there_is_a_base_schema_and_one_per_target_with_extra_keys() -> None:
    names = {p.name for p in FRONTMATTER}
    extended = {t.name for t in TARGETS.values() if t.known_fields - SPEC_FIELDS}
    assert names == {"frontmatter.schema.json"} | {f"frontmatter.{t}.schema.json" for t in extended}


@pytest.mark.parametrize("path", FRONTMATTER, ids=[p.name for p in FRONTMATTER])
def test_shipped_schemas_are_valid_json_schemas(path: Path) -> None:
    schema = _load(path)
    cls = jsonschema.validators.validator_for(schema, default=None)
    assert cls is jsonschema.Draft7Validator  # the draft YAML language servers support best
    cls.check_schema(schema)
    assert schema["$id"].endswith("/" + path.name)
    assert schema["description"]
    # every documented key says what it is for (editors show it on hover)
    for key, sub in schema.get("properties", {}).items():
        assert sub.get("description"), f"{path.name}: {key} has no description"


def test_target_schemas_document_exactly_the_targets_extra_keys() -> None:
    for target in TARGETS.values():
        extra = target.known_fields - SPEC_FIELDS
        if not extra:
            continue
        schema = _load(SCHEMAS / f"frontmatter.{target.name}.schema.json")
        assert set(schema["properties"]) - SPEC_FIELDS == extra, target.name
        assert schema["allOf"] == [{"$ref": "frontmatter.schema.json"}]


@pytest.mark.parametrize("skill_md", VALID, ids=[p.parent.name for p in VALID])
def test_valid_fixtures_satisfy_every_shipped_schema(skill_md: Path) -> None:
    values = _values(skill_md)
    for path in FRONTMATTER:
        errors = [e.message for e in _validator(path).iter_errors(values)]
        assert errors == [], f"{skill_md} against {path.name}"


def test_there_are_valid_fixtures_to_check() -> None:
    assert len(VALID) >= 3


@pytest.mark.parametrize(
    ("frontmatter", "failing"),
    [
        ("name: PDF_Tools\ndescription: Reads PDFs.\n", "name"),
        ("name: pdf--tools\ndescription: Reads PDFs.\n", "name"),
        ("name: -pdf\ndescription: Reads PDFs.\n", "name"),
        (f"name: {'a' * 65}\ndescription: Reads PDFs.\n", "name"),
        ("name: pdf\ndescription: '   '\n", "description"),
        (f"name: pdf\ndescription: {'x' * 1025}\n", "description"),
        ("name: pdf\ndescription: yes\n", "description"),
        ("name: pdf\ndescription: Reads.\ncompatibility: ''\n", "compatibility"),
        ("name: pdf\ndescription: Reads.\nmetadata:\n  version: 1.10\n", "metadata"),
        ("name: pdf\ndescription: Reads.\nallowed-tools: [Read, Grep]\n", "allowed-tools"),
        ("name: pdf\n", ""),  # description missing
    ],
)
def test_base_schema_rejects_what_the_spec_forbids(frontmatter: str, failing: str) -> None:
    values = parse_document(Path("SKILL.md"), f"---\n{frontmatter}---\n".encode()).frontmatter
    errors = list(_validator(SCHEMAS / "frontmatter.schema.json").iter_errors(values.values))
    assert errors
    assert {e.absolute_path[0] if e.absolute_path else "" for e in errors} == {failing}


def test_base_schema_allows_and_documents_other_keys() -> None:
    schema = _load(SCHEMAS / "frontmatter.schema.json")
    values = {"name": "pdf", "description": "Reads PDFs.", "when_to_use": "Always."}
    assert list(_validator(SCHEMAS / "frontmatter.schema.json").iter_errors(values)) == []
    assert schema["additionalProperties"] is True
    assert "metadata" in schema["description"] and "reject" in schema["description"]
    claude = _validator(SCHEMAS / "frontmatter.claude-code.schema.json")
    assert [e.message for e in claude.iter_errors({**values, "effort": "extreme"})]
    assert not list(claude.iter_errors({**values, "effort": "high", "user-invocable": "no"}))


# --- SK406: the team's own schema ----------------------------------------------------------

TEAM_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["metadata"],
    "properties": {
        "metadata": {
            "type": "object",
            "required": ["owner"],
            "additionalProperties": False,
            "properties": {
                "owner": {"type": "string", "description": "The owning team's handle."},
                "version": {"type": "string"},
            },
        },
        "paths": {"type": "array", "items": {"type": "string", "pattern": "^src/"}},
    },
}


def _team(tmp_path: Path, schema: object = TEAM_SCHEMA, text: str | None = None) -> None:
    (tmp_path / "conventions").mkdir(exist_ok=True)
    target = tmp_path / "conventions" / "skill.schema.json"
    target.write_text(text if text is not None else json.dumps(schema), encoding="utf-8")
    (tmp_path / "skillcheck.toml").write_text(
        'frontmatter-schema = "conventions/skill.schema.json"\n', encoding="utf-8"
    )


def _sk406(tmp_path: Path) -> list[tuple[str, int, int, str]]:
    _code, report = lint_json(".", cwd=tmp_path)
    return sorted(
        (d["path"], d["line"], d["column"], d["message"])
        for d in report["diagnostics"]
        if d["code"] == "SK406"
    )


DESC = "description: Extracts text from PDF files. Use when the user asks about PDFs.\n"


def test_team_schema_requiring_metadata_owner(tmp_path: Path) -> None:
    _team(tmp_path)
    write_skill(tmp_path, "owned", frontmatter=f"name: owned\n{DESC}metadata:\n  owner: data\n")
    write_skill(
        tmp_path,
        "unowned",
        frontmatter=f'name: unowned\n{DESC.replace("PDF", "CSV")}metadata:\n  version: "1"\n',
    )
    write_skill(tmp_path, "bare", frontmatter=f"name: bare\n{DESC.replace('PDF', 'log')}")
    found = _sk406(tmp_path)
    assert [f[:3] for f in found] == [
        ("bare/SKILL.md", 1, 1),  # top-level key missing: the opening ---
        ("unowned/SKILL.md", 4, 1),  # metadata.owner missing: the metadata key
    ]
    assert "'owner' is a required property" in found[1][3] and "skill.schema.json" in found[1][3]
    assert "'metadata' is a required property" in found[0][3]
    code, _report = lint_json(".", cwd=tmp_path)
    assert code == 1


def test_team_schema_violations_point_at_the_offending_node(tmp_path: Path) -> None:
    _team(tmp_path)
    front = (
        f"name: pdf-tools\n{DESC}metadata:\n  owner: 7\n  team: x\n"
        "paths:\n  - src/a.py\n  - lib/b.py\n"
    )
    write_skill(tmp_path, "pdf-tools", frontmatter=front)
    found = _sk406(tmp_path)
    assert [f[:3] for f in found] == [
        ("pdf-tools/SKILL.md", 5, 10),  # owner: 7 is not a string
        ("pdf-tools/SKILL.md", 6, 3),  # team: not allowed in metadata
        ("pdf-tools/SKILL.md", 9, 5),  # paths[1] does not match ^src/
    ]
    assert "'metadata.owner'" in found[0][3] and "7 is not of type 'string'" in found[0][3]
    assert "'team'" in found[1][3]
    assert "'paths.1'" in found[2][3] and "lib/b.py" in found[2][3]
    _code, report = lint_json(".", cwd=tmp_path)
    helps = [d["help"] for d in report["diagnostics"] if d["code"] == "SK406"]
    assert "The owning team's handle." in helps


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "No such file or directory"),
        ('{"type": "object",', "not valid JSON"),
        ('{"type": "objekt"}', "not a valid JSON Schema at type"),
        ("[1, 2]", "a JSON Schema is an object, not list"),
    ],
)
def test_a_missing_or_invalid_schema_is_a_config_error(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    write_skill(tmp_path, "pdf-tools")
    _team(tmp_path, text=content or "{}")
    if content is None:
        (tmp_path / "conventions" / "skill.schema.json").unlink()
    result = invoke("lint", ".", cwd=tmp_path)
    assert result.exit_code == 2
    assert "skillcheck.toml" in result.stderr and "conventions/skill.schema.json" in result.stderr
    assert reason in result.stderr
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_the_schema_is_compiled_once_per_run_and_reread_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _team(tmp_path)
    for name in ("a-skill", "b-skill", "c-skill"):
        write_skill(tmp_path, name, frontmatter=f"name: {name}\n{DESC.replace('PDF', name)}")
    compiled = []
    real = jsonschema.validators.validator_for

    def counting(schema, *args, **kwargs):
        if schema in (TEAM_SCHEMA, {"type": "object"}):  # not the metaschemas it consults
            compiled.append(schema)
        return real(schema, *args, **kwargs)

    monkeypatch.setattr(jsonschema.validators, "validator_for", counting)
    assert len(_sk406(tmp_path)) == 3
    assert len(compiled) == 1
    # the same path with other content (a new run in the same process) is read again
    _team(tmp_path, {"type": "object"})
    assert _sk406(tmp_path) == []
    assert len(compiled) == 2
