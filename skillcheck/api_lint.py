"""The library calls that check skills: the settings of a run and ``lint``.

Kept apart from ``api`` (which re-exports them beside ``catalog``, ``pack`` and ``install``) so
that ``skillcheck lint``, which the pre-commit hook starts on every commit, imports none of the
packaging (archives, HTTP, the catalog manifest): about a fifth of its import time.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from skillcheck.engine.cache import default_directory
from skillcheck.engine.config import build_settings, describe_settings
from skillcheck.engine.lint import LintResult, lint
from skillcheck.settings import Settings, load_config
from skillcheck.source.machine import available_cpus

__all__ = ["LintResult", "describe_settings", "lint", "load_settings", "run_settings"]


def load_settings(
    config_file: Path | None = None,
    *,
    isolated: bool = False,
    target: str | None = None,
    **overrides: Any,
) -> Settings:
    """The settings of a run: the configuration file found from the current directory (or
    ``config_file``; none when ``isolated``), merged with ``overrides`` (the command line's
    ``select``, ``extend_select``, ``ignore``, ``strict``, ``tokenizer``), which win."""
    config = load_config(config_file, isolated=isolated)
    return build_settings(config, target=target, **overrides)


def run_settings(
    settings: Settings, *, jobs: int = 0, cache: bool = True, cache_dir: Path | None = None
) -> Settings:
    """``settings`` with how the run goes, not what it checks: ``jobs`` processes (0: one
    per available CPU) and the result cache (``cache_dir``, else the default directory;
    none unless ``cache``)."""
    if not cache:
        cache_dir = None
    elif cache_dir is None:
        cache_dir = default_directory(settings.config_root or Path.cwd())
    return replace(settings, jobs=jobs or available_cpus(), cache_dir=cache_dir)
