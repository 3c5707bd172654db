"""The type stub of the compiled module describes exactly what the module has."""

from __future__ import annotations

import ast
from pathlib import Path

import maguyva
from maguyva import _core

STUB = Path(maguyva.__file__).with_name("_core.pyi")


def stub_surface() -> dict[str, set[str]]:
    """Top-level names of the stub, and for each class its public members."""
    tree = ast.parse(STUB.read_text())
    surface: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            members = set()
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        members.add(item.name)
                    elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        members.add(item.target.id)
            surface[node.name] = {m for m in members if not m.startswith("_") or m == "__len__"}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            surface[node.target.id] = set()
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("maguyva."):
            # A re-export (`from maguyva.errors import X as X`): a name the module has too.
            surface.update({alias.asname or alias.name: set() for alias in node.names})
    return surface


def module_surface() -> dict[str, set[str]]:
    surface = {}
    for name in dir(_core):
        if name.startswith("_") and name != "__version__":
            continue
        value = getattr(_core, name)
        members = set()
        if isinstance(value, type) and not issubclass(value, BaseException):
            members = {m for m in vars(value) if not m.startswith("_") or m == "__len__"}
        surface[name] = members
    return surface


def test_stub_and_module_agree():
    assert stub_surface() == module_surface()


def test_package_reexports_exist():
    python_names = {"CorruptIndexError", "Corpus", "Hit", "Index", "MaguyvaError", "SearchResponse"}
    assert python_names <= set(maguyva.__all__)
    compiled = set(maguyva.__all__) - python_names
    assert compiled <= set(module_surface())
    for name in compiled:
        assert getattr(maguyva, name) is getattr(_core, name)
    assert (Path(maguyva.__file__).parent / "py.typed").exists()
