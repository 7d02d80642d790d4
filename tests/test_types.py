"""The package type-checks: mypy, with the configuration in pyproject.toml (no global
switch-offs; only libraries without type information are let through)."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_configuration_checks_the_package() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert config["files"] == ["skillcheck"]
    assert not config.get("ignore_missing_imports")  # only per module, in overrides
    assert not {"ignore_errors", "follow_imports"} & set(config)


@pytest.mark.slow  # runs mypy over the package
def test_mypy_passes(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "No module named mypy" not in result.stderr, "install the test extra (mypy)"
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success: no issues found" in result.stdout
