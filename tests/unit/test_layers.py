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
    "corruptions": {"errors", "core"},
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
