"""Rules stay linear on the shapes that made them quadratic (issue 29, item 9), measured by
counting work, never by a clock: every Python call, and every call of a C method that always
reads its whole string, bytes or list (``split``, ``lower``, ``replace`` ...) weighted by that
object's length (``text.split`` over a whole file counts the file's length). Splitting or
re-scanning a file once per finding thus shows as quadratic growth whatever the machine's
load. (A positional ``find`` or regex search is one call: it reads only from its start.)"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import write_skill

_SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset)
# C methods that read the whole object they belong to, whatever their arguments
_WHOLE = frozenset(
    {"split", "rsplit", "splitlines", "lower", "upper", "casefold", "encode", "decode"}
    | {"replace", "translate", "expandtabs", "copy", "sort"}
)


def work(run: Callable[[], object]) -> int:
    """The work ``run`` does, counted as the module docstring says."""
    count = 0

    def profile(_frame, event: str, arg: object) -> None:
        nonlocal count
        if event == "call":
            count += 1
        elif event == "c_call":
            owner = getattr(arg, "__self__", None)
            whole = getattr(arg, "__name__", "") in _WHOLE and isinstance(owner, _SIZED)
            count += 1 + (len(owner) if whole else 0)  # type: ignore[arg-type]

    sys.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count


def _anchors(n: int) -> str:  # SK504: a broken anchor under each of n headings
    return "".join(f"## H{i}\n[to](#nope{i})\n" for i in range(n))


def _mentions(n: int) -> str:  # SK507: n lines naming a missing script
    return "".join(f"Run scripts/tool{i}.py now.\n" for i in range(n))


def _suppressed(n: int) -> str:  # SK501 under a suppression comment, n times
    return "".join(
        f"<!-- skillcheck-disable-next-line SK501 -->\nSee [x](missing{i}.md).\n\n"
        for i in range(n)
    )


SHAPES = {
    "SK504-anchors": ("SK504", _anchors),
    "SK507-mentions": ("SK507", _mentions),
    "SK501-suppressed": ("SK501,SK120", _suppressed),
}


def _lint_work(tmp_path: Path, codes: str, body: str) -> int:
    from skillcheck.engine.config import build_settings
    from skillcheck.engine.lint import lint
    from skillcheck.settings import Config

    skill = write_skill(tmp_path, "pdf-tools", body="# Steps\n\n" + body)
    (skill / "scripts").mkdir()
    (skill / "scripts" / "run.py").write_text("print('ok')\n")
    settings = dataclasses.replace(
        build_settings(Config(values={"select": codes.split(",")})), cache_dir=None, jobs=1
    )
    lint([skill], settings)  # warm: imports and compiled patterns are not the rule's work
    return work(lambda: lint([skill], settings))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_rule_does_linear_work_on_its_pathological_shape(tmp_path: Path, shape: str) -> None:
    codes, make = SHAPES[shape]
    small = _lint_work(tmp_path / "small", codes, make(200))
    large = _lint_work(tmp_path / "large", codes, make(800))
    # 4x the input: linear work grows about 4x, quadratic 16x; 6 leaves room for n log n
    assert large / small < 6, f"{shape}: {small:,} -> {large:,} ({large / small:.1f}x)"
