"""skillcheck: a static linter and packager for Agent Skills directories."""

__version__ = "0.1.0"
