"""The library calls: the pack gate holds for a Python caller, and errors carry exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write_skill

from skillcheck import api
from skillcheck.errors import SkillcheckError
from skillcheck.package.archive import BundleError, BundleIOError
from skillcheck.package.catalog import CatalogError
from skillcheck.settings import Settings

PACKAGE = Path(__file__).resolve().parent.parent / "skillcheck"


def test_pack_refuses_a_skill_with_an_error_and_writes_nothing(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf-tools", frontmatter="name: Not Valid\ndescription: x\n")
    out = tmp_path / "out.tar.gz"
    with pytest.raises(api.Refused) as refused:
        api.pack([tmp_path], Settings(), output=out)
    assert refused.value.exit_code == 1
    assert any(d.code == "SK204" for d in refused.value.result.diagnostics)
    assert not out.exists()


def test_pack_writes_a_clean_skill(tmp_path: Path) -> None:
    write_skill(tmp_path / "skills", "pdf-tools")
    out = tmp_path / "out.tar.gz"
    packed = api.pack([tmp_path / "skills"], Settings(), output=out)
    assert (packed.count, packed.where) == (1, out)
    assert out.is_file() and packed.digest.startswith("sha256:")


def test_pack_needs_one_destination(tmp_path: Path) -> None:
    with pytest.raises(api.UsageError, match="exactly one of"):
        api.pack([tmp_path], Settings())


def test_exit_codes_ride_on_the_errors() -> None:
    assert BundleError("x").exit_code == 1  # refused content
    assert CatalogError("x").exit_code == 1
    assert BundleIOError("x").exit_code == 2  # the file system or the call


def test_every_exception_class_has_the_one_root() -> None:
    """Public exception classes derive from SkillcheckError (private ones are control flow
    inside one module)."""
    import importlib
    import inspect

    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        if name.endswith("__main__"):
            continue
        module = importlib.import_module(name)
        for cls_name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == name and issubclass(cls, Exception) and cls_name[0] != "_":
                found.append(cls)
                assert issubclass(cls, SkillcheckError), f"{name}.{cls_name}"
    assert len(found) >= 10  # the probe sees them


def test_settings_are_frozen_and_a_library_call_leaves_the_callers_alone(tmp_path: Path) -> None:
    # one Settings may shape several runs: no call changes it under its owner
    import dataclasses

    settings = Settings(figures=False, jobs=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.jobs = 2  # type: ignore[misc]
    write_skill(tmp_path / "skills", "pdf-tools")
    packed = api.pack([tmp_path / "skills"], settings, output=tmp_path / "out.tar.gz")
    assert packed.count == 1
    assert settings == Settings(figures=False, jobs=1)
