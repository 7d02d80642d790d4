"""The package's import graph is layered and acyclic, counting imports inside functions.

Each module belongs to one layer; a module imports only from its own layer or the layers
below it, and no set of modules imports each other in a circle (an import written inside a
function still runs, so it counts). The order follows the shape of the code: commands, the
Language Server, the library calls, reporters and packaging, the engine, the rules, what the
rules share, the settings, the source model, errors. A new module must be given a layer here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "skillcheck"

# top to bottom; a module's layer is the one naming it or its package (longest prefix wins)
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("cli", ("skillcheck.__main__", "skillcheck._entry", "skillcheck.cli")),
    # the Language Server and the MCP server/client: front ends on top of the API
    ("lsp/mcp", ("skillcheck.lsp", "skillcheck.mcp")),
    ("api", ("skillcheck.api", "skillcheck.api_lint")),
    ("report/package", ("skillcheck.report", "skillcheck.package")),
    ("fix", ("skillcheck.fix",)),
    ("engine", ("skillcheck.engine",)),
    ("rules", ("skillcheck.rules",)),
    ("analysis", ("skillcheck.analysis",)),
    # configuration: below everything that reads it, above the targets it validates
    ("settings", ("skillcheck.settings",)),
    ("source", ("skillcheck.source", "skillcheck.targets", "skillcheck.tokens")),
    ("errors", ("skillcheck.errors", "skillcheck.schemas", "skillcheck")),
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _layer(module: str) -> int:
    best: tuple[int, int] | None = None  # (prefix length, layer index)
    for index, (_name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            # the package itself (its __init__) names no submodule
            named = module == prefix or (prefix != "skillcheck" and module.startswith(prefix + "."))
            if named and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    if best is None:
        raise AssertionError(f"{module} has no layer in tests/test_layers.py")
    return best[1]


def _imports(module: str) -> set[str]:
    """The package's modules that ``module`` imports, anywhere in its body."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            # `from skillcheck import fix` imports the module skillcheck.fix
            names = [f"{source}.{a.name}" for a in node.names if f"{source}.{a.name}" in MODULES]
            names.append(source)
        else:
            continue
        found.update(name for name in names if name in MODULES and name != module)
    return found


GRAPH = {module: _imports(module) for module in MODULES}


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        _layer(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down(module: str) -> None:
    upward = sorted(t for t in GRAPH[module] if _layer(t) < _layer(module))
    names = [f"{t} ({LAYERS[_layer(t)][0]})" for t in upward]
    assert not upward, f"{module} ({LAYERS[_layer(module)][0]}) imports upward: {names}"


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle() -> None:
    assert _cycles(GRAPH) == []


# what a layer above the rules may import of them: the registry (``skillcheck.rules``) and
# the rule machinery it is made of (``rules.base``: Context, options, the decorator)
REGISTRY = {"skillcheck.rules", "skillcheck.rules.base"}


def _rule_modules_imported(module: str, graph: dict[str, set[str]]) -> list[str]:
    """The rule modules (other than the registry) that ``module``, above the rules, imports:
    rule modules hold rules only, and whatever else needs their machinery takes it from
    analysis/ or below."""
    if _layer(module) >= _layer("skillcheck.rules.base"):
        return []
    return sorted(
        t for t in graph[module] if t.startswith("skillcheck.rules.") and t not in REGISTRY
    )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_only_the_registry_is_imported_from_the_rules(module: str) -> None:
    found = _rule_modules_imported(module, GRAPH)
    assert not found, f"{module} imports rule modules {found}: move what it needs to analysis/"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) == 0))
def test_the_commands_call_the_library_not_the_engine(module: str) -> None:
    # DESIGN §11: a command parses options, calls api (or api_lint) and picks a reporter
    engine = sorted(t for t in GRAPH[module] if t.startswith("skillcheck.engine"))
    assert not engine, f"{module} imports {engine}: call skillcheck.api instead"


def test_the_checks_catch_a_cycle_and_an_upward_import() -> None:
    # the detectors themselves: a two-module circle is found, and rules -> engine is upward
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert _layer("skillcheck.engine.runner") < _layer("skillcheck.rules.base")
    assert "skillcheck.rules.base" in GRAPH["skillcheck.rules.fields"]
    # an engine, package or report module importing a rule module is caught; the registry
    # and the rules importing each other are not
    graph = {
        "skillcheck.engine.runner": {"skillcheck.rules", "skillcheck.rules.budgets"},
        "skillcheck.package.catalog": {"skillcheck.rules.collection", "skillcheck.rules.base"},
        "skillcheck.report.text": {"skillcheck.rules.fields"},
        "skillcheck.rules.budgets": {"skillcheck.rules.base", "skillcheck.rules.fields"},
    }
    assert _rule_modules_imported("skillcheck.engine.runner", graph) == ["skillcheck.rules.budgets"]
    assert _rule_modules_imported("skillcheck.package.catalog", graph) == [
        "skillcheck.rules.collection"
    ]
    assert _rule_modules_imported("skillcheck.report.text", graph) == ["skillcheck.rules.fields"]
    assert _rule_modules_imported("skillcheck.rules.budgets", graph) == []
    with pytest.raises(AssertionError, match="has no layer"):
        _layer("skillcheck.newmodule")
    # the commands do defer imports, and the deferred-import scan sees them
    assert _deferred_imports("skillcheck.cli.lint")


def _deferred_imports(module: str) -> list[str]:
    """The package modules ``module`` imports inside a function body."""
    out = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and (
                    inner.level or (inner.module or "").startswith("skillcheck")
                ):
                    out.append(f"line {inner.lineno}: from {inner.module}")
                elif isinstance(inner, ast.Import):
                    out += [
                        f"line {inner.lineno}: import {a.name}"
                        for a in inner.names
                        if a.name.startswith("skillcheck")
                    ]
    return out


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _layer(m) > 0))
def test_only_the_command_layer_defers_imports(module: str) -> None:
    # the commands defer imports for start-up time; below them an import inside a function
    # would only hide a cycle or an upward edge
    assert _deferred_imports(module) == []
