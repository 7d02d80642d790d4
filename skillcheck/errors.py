"""The one error root: every failure skillcheck reports as a one-line message carries its
exit code here (the bottom layer: imports nothing from skillcheck).

Exit codes: 0 clean, 1 findings or refused content, 2 usage / configuration / I/O (and bugs),
130 interrupted. ``cli.common.handle_errors`` is the one place that turns these into a message on
stderr and an exit status.
"""

from __future__ import annotations

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


class SkillcheckError(Exception):
    """An expected failure: ``exit_code`` says what kind (2: usage, configuration, I/O)."""

    exit_code = EXIT_ERROR


class RefusedContent(SkillcheckError):
    """The input itself is refused (a bundle that does not verify, a skill that cannot be
    shipped): a verdict on the content, exit 1."""

    exit_code = EXIT_FINDINGS


class UsageError(SkillcheckError):
    """A problem with how skillcheck was called: exit 2."""


class ConfigError(SkillcheckError):
    """A bad configuration file, key or value: exit 2 with file, key and reason."""


class InternalError(SkillcheckError):
    """A bug in skillcheck: reported as exit 2 with the rule and path."""
