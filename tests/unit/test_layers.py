"""The package layout holds: shared layers never import a paper package, paper packages never
import each other, the top level stays small, and every package says what it may import.

Imports are read from the source (module level and inside functions alike), so a lazy import
cannot hide a dependency.
"""

from __future__ import annotations

import ast
import re

import pytest
from helpers.paths import REPO

PACKAGE = REPO / "src" / "vcrbench"
SHARED = {"errors", "core", "data", "corruptions", "vif", "curves", "models", "evaluation",
          "training", "figures", "attacks"}
PAPERS = {"vcr", "human", "overlap", "reva"}
#: What each part of vcrbench may import (besides itself); docs/architecture.md, "Layers".
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "core": {"errors"},
    "data": {"errors", "core"},
    # the adaptive design flattens Δv over the curves' bins: a sampling design may use the Δv
    # binning (curves imports nothing of corruptions, so no circle)
    "corruptions": {"errors", "core", "curves"},
    "vif": {"errors"},
    "curves": {"errors", "core"},
    "models": {"errors", "core", "data"},
    "evaluation": {"errors", "core", "data", "corruptions", "vif", "models"},
    "training": {"errors", "core", "data", "corruptions", "models", "attacks"},
    "attacks": {"errors", "core", "models"},
    "figures": {"errors", "core", "curves"},
    "vcr": {"errors", "core", "curves", "evaluation"},
    "human": {"errors", "core", "data", "corruptions", "vif", "curves", "evaluation"},
    "overlap": {"errors", "core", "curves", "models"},
    "reva": {"errors", "core", "data", "corruptions", "vif", "curves", "models", "evaluation",
             "attacks"},
    "config": SHARED | PAPERS,
    "results": {"errors", "core", "vcr"},
    "host": {"errors"},
    "cli": SHARED | PAPERS | {"config", "results", "host"},
}


def _part(module: str) -> str:
    """The top-level part of ``vcrbench.<part>...``."""
    return module.split(".")[1]


def _imports(path) -> set[str]:
    """Every ``vcrbench.*`` module a source file imports (anywhere in it)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("vcrbench.")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "vcrbench":
                found |= {f"vcrbench.{a.name}" for a in node.names}
            elif node.module.startswith("vcrbench."):
                found.add(node.module)
    return found


def _sources() -> dict[str, list]:
    """part -> its source files."""
    parts: dict[str, list] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.name == "__init__.py" and len(relative.parts) == 1:
            continue
        parts.setdefault(relative.parts[0].removesuffix(".py"), []).append(path)
    return parts


def test_every_part_is_in_the_layering():
    assert set(_sources()) == set(ALLOWED), set(_sources()) ^ set(ALLOWED)


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_imports_follow_the_layers(part):
    wrong = sorted(
        f"{path.relative_to(PACKAGE)} imports {module}"
        for path in _sources()[part]
        for module in _imports(path)
        if _part(module) != part and _part(module) not in ALLOWED[part]
    )
    assert not wrong, "\n".join(wrong)


def test_the_top_level_holds_at_most_six_plain_modules():
    modules = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(modules) <= 6, modules


@pytest.mark.parametrize(
    "package", sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
)
def test_every_package_says_what_it_holds_and_may_import(package):
    init = PACKAGE / package / "__init__.py"
    docstring = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    assert len(docstring) > 200, f"{package}/__init__.py needs a docstring saying what it holds"
    statement = re.search(r"May import: (.*?)(?:\.\s|\.$|;)", docstring, re.S)
    if package == "config":
        assert "may import every package" in docstring, docstring
        return
    assert statement, f"{package}/__init__.py does not say what it may import ('May import: …')"
    named = set(re.findall(r"vcrbench\.(\w+)", statement.group(1))) | {"errors"}
    assert named == ALLOWED[package] | {"errors"}, (package, named, ALLOWED[package])


# ------------------------------------------------------------------------------- no circles


def _module_name(path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(tree: ast.AST, modules: set[str]) -> set[str]:
    """The ``vcrbench`` modules a parsed source imports when it runs, at module level or inside
    a function alike: ``from a.b import c`` is the module ``a.b.c`` when that is a module, else
    ``a.b``; an ``if TYPE_CHECKING:`` block never runs and is left out."""
    found: set[str] = set()
    nodes = [tree]
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            nodes.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name in modules}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules:
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules
                      else node.module for a in node.names}
        nodes.extend(ast.iter_child_nodes(node))
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the ``vcrbench`` modules it imports (:func:`_runtime_imports`), every module
    of the package."""
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {name: _runtime_imports(ast.parse(path.read_text(encoding="utf-8")), set(paths))
            - {name} for name, path in paths.items()}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The circles of an import graph found by a depth-first search: one path ``[a, b, …, a]``
    per import that leads back to a module on the search's path (at least one for every group
    of modules that import each other; an empty list for an acyclic graph)."""
    circles, done = [], set()
    for start in sorted(graph):
        if start in done:
            continue
        path, on_path, stack = [start], {start}, [iter(sorted(graph[start]))]
        while stack:
            successor = next(stack[-1], None)
            if successor is None:
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
                stack.pop()
            elif successor in on_path:
                circles.append(path[path.index(successor):] + [successor])
            elif successor not in done and successor in graph:
                path.append(successor)
                on_path.add(successor)
                stack.append(iter(sorted(graph[successor])))
    return circles


def test_the_circle_finder_finds_circles():
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c", "a"]]
    assert import_circles({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import x.y\n"
                     "def f():\n    from x import y, z\n")
    assert _runtime_imports(tree, {"x", "x.y", "x.z"}) == {"x.y", "x.z"}
    assert _runtime_imports(tree, {"x", "x.y"}) == {"x", "x.y"}


def test_no_import_circle():
    """No module of vcrbench imports itself through others, counting imports inside functions:
    a function-level import is there to keep start-up light, never to dodge a circle."""
    circles = import_circles(import_graph())
    assert not circles, "\n".join(" -> ".join(circle) for circle in circles)
