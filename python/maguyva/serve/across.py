"""Callers and dependants across the repositories of a corpus.

Each repository's graph links only its own code. A repository that uses another one of the corpus
does so by importing it by the name it is published under: a Python package (`import shop`,
`from shop.cart import Cart`), an npm package (`import { Cart } from "@acme/shop"`), a Go module
(`import "example.com/shop/cart"`) or a Rust crate (`use shop::cart::Cart`). So a call in one
repository reaches a definition of another when its file imports that repository by such a name
and the call names the definition: as a name the import brings (`imported`), or on what the import
binds (`shop.checkout(...)`, `cart.New(...)`: `imported` too); a method called on some other
receiver in such a file is kept as a `candidate`. From there the walk goes on in the calling
repository's own graph.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from maguyva.index.graph import RESOLUTIONS, DefinitionSpan, holding
from maguyva.index.reader import IndexReader, per_reader
from maguyva.index.segments import REFS
from maguyva.serve.navigate import Definition, Dependant, describe, walk_in

#: Top-level Python names that are never a package other code imports.
_NOT_PACKAGES = frozenset({"test", "tests", "testing", "docs", "doc", "examples", "example", "setup", "conftest",
                           "benchmarks", "scripts", "tools", "noxfile"})
_GO_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)
#: At most this many names a query is asked for in one SQL statement.
_IN_LIST = 500


@dataclass(frozen=True, slots=True)
class Packages:
    """The names other code imports a repository by, per kind of import path."""

    python: frozenset[str] = frozenset()
    #: npm package names, Go module paths and Rust crate names: import paths start with them.
    paths: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.python or self.paths)

    def imported_by(self, module: str) -> str | None:
        """What `module` (an import's module path) binds when it names this repository: the
        name its calls are qualified by (Python's first component, a Go package's last, an npm
        or Rust import's last part); None when it is not this repository's."""
        if module.split(".", 1)[0] in self.python and not module.startswith("."):
            return module.split(".", 1)[0]
        for path in self.paths:
            for separator in ("/", "::"):
                if module == path or module.startswith(path + separator):
                    return re.split(r"/|::", module)[-1]
        return None


@per_reader
def packages(reader: IndexReader) -> Packages:
    """The names the repository of `reader` is imported by: its top-level Python packages and
    modules (under the root or `src/`), and the names its package.json, go.mod and Cargo.toml
    give it."""
    present = {f.path for f in reader.files}
    python: set[str] = set()
    for path in present:
        if not path.endswith(".py"):
            continue
        parts = path.split("/")
        prefix = ""
        if parts[0] == "src" and len(parts) > 1:
            parts, prefix = parts[1:], "src/"
        if len(parts) == 1:
            python.add(parts[0][:-3])
        elif f"{prefix}{parts[0]}/__init__.py" in present:
            python.add(parts[0])
    python -= _NOT_PACKAGES
    python.discard("__init__")
    return Packages(frozenset(python), frozenset(_manifest_names(reader.root)))


def _manifest_names(root: Path) -> set[str]:
    names: set[str] = set()
    try:
        package = json.loads((root / "package.json").read_text(encoding="utf-8"))
        if isinstance(package, dict) and isinstance(package.get("name"), str) and package["name"]:
            names.add(package["name"])
    except (OSError, ValueError):
        pass
    try:
        module = _GO_MODULE.search((root / "go.mod").read_text(encoding="utf-8"))
        if module:
            names.add(module.group(1))
    except OSError:
        pass
    try:
        cargo = tomllib.loads((root / "Cargo.toml").read_text(encoding="utf-8"))
        crate = cargo.get("package", {}).get("name")
        if isinstance(crate, str) and crate:
            names.add(crate.replace("-", "_"))
    except (OSError, ValueError):
        pass
    return names


@dataclass(frozen=True, slots=True)
class _Call:
    file_id: int
    kind: str
    name: str
    line: int
    enclosing: str | None
    how: str


def calls_into(reader: IndexReader, into: Packages, definitions: Sequence[Definition]) -> list[_Call]:
    """The calls and inheritances in `reader`'s repository of `definitions` of another
    repository, which `into` names (module docstring)."""
    names = sorted({d.name for d in definitions})
    methods = {d.name for d in definitions if "." in d.qualified_name}
    if not names or not into:
        return []
    # file -> (names its imports of the other repository bring, names those imports bind)
    brings: dict[int, set[str]] = {}
    binds: dict[int, set[str]] = {}
    for file_id, module, items in _imports(reader):
        bound = into.imported_by(module)
        if bound is None:
            continue
        brings.setdefault(file_id, set()).update(items)
        binds.setdefault(file_id, set()).add(bound)
    if not brings:
        return []
    found: list[_Call] = []
    for start in range(0, len(names), _IN_LIST):
        part = names[start : start + _IN_LIST]
        marks = ", ".join("?" * len(part))
        rows = reader.segments.rows_where(
            REFS, "file_id, kind, name, line, enclosing, qualifier", f"kind IN ('call', 'inherit', 'use') AND name IN ({marks})", part
        )
        for _, file_id, kind, name, line, enclosing, qualifier in rows:
            if file_id not in brings:
                continue
            head = (qualifier or "").split(".", 1)[0]
            if (not qualifier and name in brings[file_id]) or (qualifier and head in binds[file_id] | brings[file_id]):
                how = "imported"
            elif qualifier and name in methods:
                how = "candidate"
            else:
                continue
            found.append(_Call(file_id, kind, name, line, enclosing, how))
    found.sort(key=lambda c: (c.file_id, c.line, c.name))
    return found


@per_reader
def _imports(reader: IndexReader) -> list[tuple[int, str, tuple[str, ...]]]:
    """(file, module, the last part of each name it brings) of every import of the index: read
    once while the reader lives, as every walk across repositories asks again."""
    return [
        (file_id, module, tuple(str(item).rsplit(".", 1)[-1] for item in (json.loads(listed) if listed else [])))
        for file_id, module, _, listed in reader.import_references()
    ]


def walk_into(
    reader: IndexReader, calls: Sequence[_Call], definitions: Sequence[Definition], depth: int, impact: bool
) -> list[Dependant]:
    """The dependants in `reader`'s repository of `definitions` (of another repository) that
    `calls` reach there, and, within `depth` edges in all, what depends on them in turn (`impact`:
    any edge; else calls only), nearest first, each node once."""
    file_count = len(reader.files)
    qualified_of = {d.name: d.qualified_name for d in definitions}
    # Each calling node once: by its most certain call, then its first line.
    first: dict[int, _Call] = {}
    for call in calls:
        if not impact and call.kind != "call":
            continue
        node = _node_of(reader, call.file_id, call.enclosing, call.line)
        known = first.get(node)
        if known is None or (RESOLUTIONS.index(call.how), call.line) < (RESOLUTIONS.index(known.how), known.line):
            first[node] = call
    out: list[Dependant] = []
    labels = _labels(reader, list(first))
    for node, call in sorted(first.items(), key=lambda item: (item[1].file_id, item[1].line)):
        symbol, kind, path = labels[node]
        out.append(Dependant(symbol, kind, path, call.line, 1, call.kind, qualified_of.get(call.name, call.name), call.how))
    if depth <= 1 or not first:
        return out
    # Further in: this repository's own edges, from the nodes reached.
    further = walk_in(reader, [(node, 1, call.how) for node, call in first.items()], depth, calls_only=not impact)
    return out + describe(reader, further, len(further))


def _node_of(reader: IndexReader, file_id: int, enclosing: str | None, line: int) -> int:
    """The graph node of the definition `enclosing` (a qualified name) in the file whose lines
    hold `line`, or the file's node for its top-level code."""
    if enclosing:
        ids = reader.symbols_by_name.get(enclosing.rsplit(".", 1)[-1], [])
        rows = reader.symbols_at(ids, "file_id, qualified_name, start_line, end_line") if ids else []
        found = holding([DefinitionSpan(int(i), a, b) for i, f, q, a, b in rows if f == file_id and q == enclosing], line)
        if found is not None:
            return len(reader.files) + found.id
    return file_id



def _labels(reader: IndexReader, nodes: Iterable[int]) -> dict[int, tuple[str | None, str, str]]:
    """node -> (qualified name or None for a file, kind, path)."""
    file_count = len(reader.files)
    wanted = sorted({n for n in nodes})
    symbol_ids = [n - file_count for n in wanted if n >= file_count]
    rows = {i: (f, q, k) for i, f, q, k in reader.symbols_at(symbol_ids, "file_id, qualified_name, kind")} if symbol_ids else {}
    labels: dict[int, tuple[str | None, str, str]] = {}
    for node in wanted:
        if node < file_count:
            labels[node] = (None, "file", reader.files[node].path)
        else:
            file_id, qualified, kind = rows[node - file_count]
            labels[node] = (qualified, kind, reader.files[file_id].path)
    return labels
