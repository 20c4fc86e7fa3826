"""The package is laid out in layers, and imports point one way only (read from the source's AST).

Layers, bottom to top (``aethel_lite/__init__.py`` says the same in words):

0. ``errors``, ``io``, ``imports`` — the base
1. ``caching``
2. ``core`` — the paper's method
3. ``data``
4. ``retrievers``
5. ``evaluation``, ``explain`` (why a passage was retrieved)
6. ``search``, ``swarm``
7. ``studies``
8. ``book``
9. ``cli``, ``cli_checks`` (the flag table and the checks before any work), and one module per
   command (``cli_eval``, ``cli_index``, ``cli_search``, ``cli_data``, ``cli_memo``; ``cli`` imports the
   one that runs through its command table)

A module may import from its own layer and the layers below it. No module imports one of the
package's own modules inside a function: such imports hid the import circle this layout removed.
Function-local imports are left only for heavy optional dependencies (torch, spaCy, numba, ...).
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "aethel_lite"
LAYERS = {
    "errors": 0,
    "io": 0,
    "imports": 0,
    "caching": 1,
    "core": 2,
    "data": 3,
    "retrievers": 4,
    "evaluation": 5,
    "explain": 5,
    "search": 6,
    "swarm": 6,
    "studies": 7,
    "book": 8,
    "cli": 9,
    "cli_checks": 9,
    "cli_eval": 9,
    "cli_index": 9,
    "cli_search": 9,
    "cli_data": 9,
    "cli_memo": 9,
}
MAX_MODULE_LINES = 700
MAX_CLASS_LINES = 400


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return out


MODULES = _modules()


def _target(module: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """The package modules an ``import from`` statement names (a name that is a submodule counts as one)."""
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    elif (node.module or "").split(".")[0] == "aethel_lite":
        target = node.module
    else:
        return []
    subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
    return subs or [target]


def _imports() -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]]:
    """(top-level, function-local) imports of package modules: (importer, imported, line)."""
    top, local = [], []
    for module, (path, is_package) in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        in_function = {
            id(n)
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            for n in ast.walk(f)
        }
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.ImportFrom):
                targets = _target(module, is_package, node)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.split(".")[0] == "aethel_lite"]
            for target in targets:
                (local if id(node) in in_function else top).append((module, target, node.lineno))
    return top, local


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def test_every_top_level_module_and_package_has_a_layer():
    names = {m.split(".")[1] for m in MODULES if m.count(".") >= 1}
    assert names <= set(LAYERS), f"not in any layer: {sorted(names - set(LAYERS))}"


def test_no_import_points_up_a_layer():
    top, local = _imports()
    upward = [
        f"{a} (layer {_layer(a)}) line {line} imports {b} (layer {_layer(b)})"
        for a, b, line in top + local
        if _layer(a) is not None and _layer(b) is not None and _layer(b) > _layer(a)
    ]
    assert upward == []


def test_no_package_module_is_imported_inside_a_function():
    _, local = _imports()
    assert [f"{a} line {line}: {b}" for a, b, line in local] == []


def test_the_import_graph_has_no_circle():
    top, _ = _imports()
    graph = nx.DiGraph()
    graph.add_nodes_from(MODULES)
    for a, b, _line in top:
        while b not in MODULES and "." in b:  # `from aethel_lite.x import name`: the module x
            b = b.rsplit(".", 1)[0]
        # a package's __init__ and its own submodules import each other by design: not a circle
        if b != a and not a.startswith(b + ".") and not b.startswith(a + "."):
            graph.add_edge(a, b)
    cycles = list(nx.simple_cycles(graph))
    assert cycles == [], f"import circles: {cycles[:5]}"


def test_the_layer_rule_itself_catches_an_upward_import(tmp_path):
    """The checker is not vacuous: an upward import in a core module is reported."""
    tree = ast.parse("from ..studies.scaling import scaling_run\n")
    (node,) = tree.body
    assert _target("aethel_lite.core.ppr", False, node) == ["aethel_lite.studies.scaling"]
    assert _layer("aethel_lite.studies.scaling") > _layer("aethel_lite.core.ppr")


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_and_classes_are_small(module):
    path, _ = MODULES[module]
    source = path.read_text(encoding="utf-8")
    assert source.count("\n") <= MAX_MODULE_LINES, f"{path.name}: {source.count(chr(10))} lines"
    big = [
        (n.name, n.end_lineno - n.lineno + 1)
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.ClassDef) and n.end_lineno - n.lineno + 1 > MAX_CLASS_LINES
    ]
    assert big == []
