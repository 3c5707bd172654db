"""Every error a user can meet is a MaguyvaError, reported in one sentence."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import maguyva
from maguyva import Index, MaguyvaError, errors
from maguyva.embed import make_embedder

#: Exceptions of the package that are not errors a user meets: the MCP server's carrier of a
#: failed call's message to the protocol layer.
INTERNAL = {"maguyva.serve.mcp.tools.ToolFailure"}


def package_exceptions() -> dict[str, type[BaseException]]:
    found = {}
    for module_info in pkgutil.walk_packages(maguyva.__path__, "maguyva."):
        if module_info.name == "maguyva.__main__":
            continue  # runs the command line
        module = importlib.import_module(module_info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__.startswith("maguyva."):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_exception_of_the_package_is_in_the_family_and_defined_in_one_module():
    found = package_exceptions()
    assert len(found) >= 15
    outside = {name for name, kind in found.items() if not issubclass(kind, MaguyvaError)} - INTERNAL
    assert outside == set()
    assert {kind.__module__ for name, kind in found.items() if name not in INTERNAL} == {"maguyva.errors"}
    for name, kind in found.items():
        assert kind.__doc__ and kind.__doc__.strip()[0].isupper(), name


def test_the_family_keeps_the_built_in_bases_callers_expect():
    assert issubclass(errors.IndexNotFoundError, FileNotFoundError)
    assert issubclass(errors.IndexWriteError, OSError)
    assert issubclass(errors.QueryError, ValueError) and issubclass(errors.RequestError, ValueError)
    assert issubclass(errors.EmbeddingError, RuntimeError)
    assert maguyva.MaguyvaError is errors.MaguyvaError


def test_the_compiled_core_raises_the_family_s_error_for_a_damaged_file(tmp_path: Path):
    from maguyva import _core

    assert _core.CorruptIndexError is errors.CorruptIndexError is maguyva.CorruptIndexError
    damaged = tmp_path / "text.idx"
    damaged.write_bytes(b"not a trigram index")
    with pytest.raises(MaguyvaError) as caught:
        _core.TrigramIndex.load(damaged)
    assert isinstance(caught.value, errors.IndexStoreError) and isinstance(caught.value, ValueError)
    assert str(damaged) in str(caught.value)


def test_errors_met_through_the_api_are_one_family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MAGUYVA_HOME", str(tmp_path / "home"))
    tree = tmp_path / "ledger"
    tree.mkdir()
    (tree / "accounts.py").write_text("def balance(entries):\n    return sum(e.amount for e in entries)\n")
    with pytest.raises(MaguyvaError, match="index"):
        Index.open(tree)
    with Index.build(tree) as index:
        for bad in ({"query": "   "}, {"query": "balance", "top_k": 0}, {"query": "balance", "preset": "fastest"}):
            with pytest.raises(MaguyvaError) as caught:
                index.search(**bad)
            assert "\n" not in str(caught.value)
        with pytest.raises(MaguyvaError, match="limit"):
            index.search("x" * 100_000)
    with pytest.raises(MaguyvaError, match="unknown embedder"):
        Index.build(tree, embedder="local:no-such-model").close()
    with pytest.raises(MaguyvaError, match="no local embedding model"):
        make_embedder("local", model="no-such-model")
