"""The dependency graph: calls, imports and inheritance between symbols and files.

Nodes are files and symbols (files first, so a file's node is its id, and a symbol's node is
the file count plus its id). An edge `a -> b` says that `a` depends on `b`: a symbol or file
calls `b`, imports it, inherits from it, or uses it as a value (passes the function on:
`register(on_save)`). Callers of `b` are its predecessors by calls; its blast radius is
everything that reaches it.

Call sites name their target only by identifier, so they are resolved the way a reader would:
a call on a receiver of a known type is that type's method, or one its bases define; otherwise a
definition in the same file first (in Go, the same package), then one in a file the caller
imports (or a name it imports, followed through a module that re-exports it, under its own name
or another), then the only definition of that name in the repository. A definition made inside a
function's body is seen only in its own file. An ambiguous name with no such evidence is left
unlinked rather than linked to every candidate: a wrong edge would mislead "who calls X".
Each edge records which of these found it (`RESOLUTIONS`), so an answer can say how far to trust it.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict, deque
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import numpy as np

from maguyva import config
from maguyva._core import graph_centrality
from maguyva.lexicon import PYTHON_BUILTIN_METHODS, TYPE_KINDS

#: Python files, whose names are visible only where they are defined or imported.
_PYTHON_SUFFIXES = (".py", ".pyi")

#: C and C++ files, whose functions are called across files by name alone (through headers).
_HEADER_LANGUAGE_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx")

#: File names that stand for their folder as a module (package initialisers and index files).
FOLDER_MODULES = frozenset({"__init__", "index", "mod", "lib", "main"})

_MODULE_SEPARATORS = re.compile(r"::|[./\\:]")


# Named tuples, not dataclasses: a build makes one per file, symbol and reference, and a tuple
# is made several times faster.
class FileNode(NamedTuple):
    id: int
    path: str


class SymbolNode(NamedTuple):
    id: int
    file_id: int
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int


class ReferenceRow(NamedTuple):
    file_id: int
    kind: str
    name: str
    line: int
    enclosing: str | None
    qualifier: str
    imported_names: tuple[str, ...]


class Edge(NamedTuple):
    src: int
    dst: int
    kind: str
    line: int
    #: How the edge was resolved, one of `RESOLUTIONS`.
    how: str


#: Every edge kind, in name order: an edge's kind code orders as its name does.
EDGE_KINDS = ("call", "import", "inherit", "use")

#: How an edge was resolved, the most certain first (an edge's code is its position):
#: - "exact": a call or inheritance of a name defined in the caller's own file (or, in Go, by
#:   a file of its package: its folder), or an import whose module path names one indexed file;
#: - "imported": a name defined in a file the caller imports (or a name it imports);
#: - "by_name": the only definition of that name in the index, with no import to confirm it;
#: - "candidate": one of the few files an import's module path could name (a tie), or another
#:   overload of the name a call resolved to (a definition of the same qualified name in the
#:   same file).
RESOLUTIONS = ("exact", "imported", "by_name", "candidate")
_RESOLUTION_CODE = {how: i for i, how in enumerate(RESOLUTIONS)}


@dataclass(frozen=True, slots=True)
class EdgeColumns:
    """Edges as columns (int64 `src`, `dst`, `line`; `kind` a code into `EDGE_KINDS`, `how` one
    into `RESOLUTIONS`), for the whole graph of a generation, where a list of `Edge`s costs an
    object per edge."""

    src: np.ndarray
    dst: np.ndarray
    kind: np.ndarray
    line: np.ndarray
    how: np.ndarray

    #: Values a row holds: src, dst, kind code, line, resolution code.
    WIDTH = 5

    @classmethod
    def of(cls, edges: Sequence[Edge]) -> EdgeColumns:
        code = {kind: i for i, kind in enumerate(EDGE_KINDS)}
        rows = np.array(
            [(e.src, e.dst, code[e.kind], e.line, _RESOLUTION_CODE[e.how]) for e in edges], dtype=np.int64
        ).reshape(-1, cls.WIDTH)
        return cls(*(rows[:, column] for column in range(cls.WIDTH)))

    @classmethod
    def of_matrix(cls, matrix: np.ndarray, nodes: int) -> EdgeColumns:
        """Of an (edges, 5) matrix of (src, dst, kind code, line, resolution code) rows
        (`store.load_edges`); ValueError when a kind, resolution or node is out of range (of
        `nodes`)."""
        # The columns copied out first, then checked: a column of a row-major matrix is read
        # with a stride (706,493 edges: 22 -> 13 ms).
        src, dst, kind, line, how = (np.ascontiguousarray(matrix[:, column]) for column in range(cls.WIDTH))
        if len(matrix) and (kind.min() < 0 or kind.max() >= len(EDGE_KINDS)):
            raise ValueError("an edge kind out of range")
        if len(matrix) and (how.min() < 0 or how.max() >= len(RESOLUTIONS)):
            raise ValueError("an edge's resolution out of range")
        if len(matrix) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= nodes):
            raise ValueError(f"an edge names a node past the graph's {nodes}")
        return cls(src, dst, kind, line, how)

    def matrix(self) -> np.ndarray:
        """The (edges, 5) matrix `of_matrix` reads."""
        return np.column_stack(self.columns()).reshape(-1, self.WIDTH)

    def __len__(self) -> int:
        return len(self.src)

    def __getitem__(self, which: np.ndarray) -> EdgeColumns:
        return EdgeColumns(*(column[which] for column in self.columns()))

    def sorted_with(self, other: EdgeColumns) -> EdgeColumns:
        """These edges and `other`'s, in (src, dst, kind, line) order, equal rows in that order
        (a stable sort of these, then `other`'s). An update's edges are a few resolved again and
        many carried over in order: those are merged in, not sorted again (707,428 edges: 177 ->
        78 ms)."""
        both = EdgeColumns(*(np.concatenate((a, b)) for a, b in zip(self.columns(), other.columns())))
        key = both._order_key()
        if key is None:
            return both[np.lexsort((both.line, both.kind, both.dst, both.src))]
        first, rest = key[: len(self)], key[len(self) :]
        if len(rest) <= len(first) or np.any(rest[1:] < rest[:-1]):
            return both[np.argsort(key, kind="stable")]
        # Each of the first rows, in their order, goes before the rest's rows of an equal key.
        ranked = np.argsort(first, kind="stable")
        places = np.searchsorted(rest, first[ranked], side="left") + np.arange(len(ranked))
        order = np.empty(len(key), dtype=np.int64)
        order[places] = ranked
        others = np.ones(len(key), dtype=bool)
        others[places] = False
        order[others] = np.arange(len(self), len(key))
        return both[order]

    def _order_key(self) -> np.ndarray | None:
        """One int64 per edge whose order is the (src, dst, kind, line) order, or None when the
        values are too large to fit one."""
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        nodes = int(max(self.src.max(), self.dst.max())) + 1
        lowest = int(self.line.min())
        lines = int(self.line.max()) - lowest + 1
        kinds = len(EDGE_KINDS)
        if min(int(self.src.min()), int(self.dst.min()), int(self.kind.min())) < 0 or int(self.kind.max()) >= kinds:
            return None
        if nodes * nodes * kinds * lines >= 2**63:
            return None
        key: np.ndarray = ((self.src * nodes + self.dst) * kinds + self.kind) * lines + (self.line - lowest)
        return key

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.src, self.dst, self.kind, self.line, self.how

    def rows(self) -> list[tuple[int, int, str, int, str]]:
        """(src, dst, kind name, line, resolution) per edge."""
        kinds = np.array(EDGE_KINDS, dtype=object)[self.kind].tolist()
        hows = np.array(RESOLUTIONS, dtype=object)[self.how].tolist()
        return list(zip(self.src.tolist(), self.dst.tolist(), kinds, self.line.tolist(), hows))


def resolve_edges(
    files: Sequence[FileNode],
    symbols: Sequence[SymbolNode],
    references: Iterable[ReferenceRow],
    rows_of: Callable[[list[int]], Iterable[ReferenceRow]] | None = None,
    symbols_named: Callable[[str], list[SymbolNode]] | None = None,
    nested_in: Callable[[int], frozenset[int]] | None = None,
) -> list[Edge]:
    """Every dependency edge the references support, deduplicated, in a stable order.
    An update resolves a few files' references again; what resolving them reads of the others
    comes from `rows_of(file_ids)`, those files' references (a module's imports, for its
    re-exports; a class's bases and its file's imports, for its inherited methods), from
    `symbols_named(name)`, the definitions of a name `symbols` leave out (a base class's), and
    from `nested_in(file_id)`, the ids of a file's definitions made inside a function's body
    (`nested_definitions`; else found among `symbols`)."""
    references = list(references)
    resolver = _Resolver(files, symbols, references, rows_of, symbols_named, nested_in)
    # Imports first: call resolution consults what each file imports.
    imports: dict[int, set[int]] = defaultdict(set)
    imported_names: dict[int, set[str]] = defaultdict(set)
    # The names a file binds to modules from outside the index (`import dataclasses`, `from os
    # import path`): what is called on them is theirs, never a definition of the index.
    outside: dict[int, set[str]] = defaultdict(set)
    # (src, dst, kind) -> the first reference's line and its resolution (every reference from one
    # file to one definition, of one kind, is resolved the same way: by the name, the file's
    # imports and the definitions).
    edges: dict[tuple[int, int, str], tuple[int, str]] = {}

    # The files each import can mean, by the import's position in `references`.
    targets_of: dict[int, list[int]] = {}
    for position, ref in enumerate(references):
        if ref.kind != "import":
            continue
        imported_names[ref.file_id].update(ref.imported_names)
        targets = targets_of[position] = resolver.module_files(ref.name, ref.file_id)
        if not targets:
            outside[ref.file_id].update(ref.imported_names or (ref.name.split(".", 1)[0],))
        for target in targets:
            if target != ref.file_id:
                imports[ref.file_id].add(target)
                edges.setdefault((ref.file_id, target, "import"), (ref.line, "exact" if len(targets) == 1 else "candidate"))
    resolver.file_imports.update(imports)
    reexports = _reexported(resolver, references, targets_of, rows_of)
    ambiguous_limit = config.current().AMBIGUOUS_CALL_MAX_DEFINITIONS
    # (src, dst, kind) -> the first line of a call only guessed at (`_Resolver.ambiguous`).
    guessed: dict[tuple[int, int, str], int] = {}
    for ref in references:
        if ref.kind not in ("call", "inherit", "use"):
            continue
        renamed = reexports.renamed.get(ref.file_id)
        found = resolver.renamed(ref, renamed) if renamed else None
        if found is None:
            found = resolver.definition(
                ref, imports[ref.file_id], imported_names[ref.file_id], outside[ref.file_id], reexports.origins[ref.file_id]
            )
        if found is None:
            if ref.kind == "call" and ambiguous_limit:
                guesses = resolver.ambiguous(ref, outside[ref.file_id], imported_names[ref.file_id], ambiguous_limit)
                if guesses:
                    src = resolver.node_of_enclosing(ref.file_id, ref.enclosing, ref.line)
                    for guess in guesses:
                        if resolver.symbol_node(guess) != src:
                            guessed.setdefault((src, resolver.symbol_node(guess), ref.kind), ref.line)
            continue
        defined, how = found
        src = resolver.node_of_enclosing(ref.file_id, ref.enclosing, ref.line)
        # Overloads are one name to a caller: which one a call picks takes its arguments' types,
        # so each is linked, the others than the one it resolved to as candidates. An overload
        # calling its own name calls another (`blend(a)` returning `blend(a, 0.5)`).
        overloads = [s for s in resolver.overloads(defined) if resolver.symbol_node(s) != src]
        for overload in overloads:
            chosen = overload is defined or (overload is overloads[0] and defined not in overloads)
            edges.setdefault((src, resolver.symbol_node(overload), ref.kind), (ref.line, how if chosen else "candidate"))
    # A guess where another call of the same caller resolved the same definition is that edge.
    for key, line in guessed.items():
        edges.setdefault(key, (line, "candidate"))
    return [Edge(src, dst, kind, line, how) for (src, dst, kind), (line, how) in sorted(edges.items())]


class DefinitionSpan(NamedTuple):
    """A definition by its id and lines, where only its lines are asked about."""

    id: int
    start_line: int
    end_line: int


Spanned = TypeVar("Spanned", SymbolNode, DefinitionSpan)


def nested_definitions(symbols: Sequence[Any]) -> list[int]:
    """Positions of a file's `symbols` (with `qualified_name`, `kind` and lines) made inside the
    body of a function or method of the file: local to it, never a name another file sees (a
    test's helper named like a method; not `Foo.prototype.bar = function`, outside `Foo`)."""
    bodies: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for s in symbols:
        if s.kind in ("function", "method"):
            bodies[s.qualified_name].append((s.start_line, s.end_line))
    found: list[int] = []
    if not bodies:
        return found
    for position, s in enumerate(symbols):
        qualified = s.qualified_name
        at = qualified.rfind(".")
        while at > 0:
            if any(a <= s.start_line and s.end_line <= b and (a, b) != (s.start_line, s.end_line) for a, b in bodies.get(qualified[:at], ())):
                found.append(position)
                break
            at = qualified.rfind(".", 0, at)
    return found


def holding(definitions: Sequence[Spanned], line: int) -> Spanned | None:
    """Of the definitions of one qualified name in one file, the innermost whose lines hold
    `line`, else the first. Overloads share a name (Java's and C#'s methods and constructors,
    `typing.overload`'s stubs, TypeScript's signatures), and so does a function defined again
    in another branch: a call is made by the one it is written in."""
    around = [d for d in definitions if d.start_line <= line <= d.end_line]
    if around:
        return min(around, key=lambda d: d.end_line - d.start_line)
    return definitions[0] if definitions else None


class Reexports(NamedTuple):
    """What files import from modules that import it from elsewhere (`_reexported`)."""

    #: Per file, the files that define what it imports by name from such a module.
    origins: defaultdict[int, set[int]]
    #: Per file, the names it imports that such a module binds under another name: the name as
    #: bound -> (the name defined, the files that can define it).
    renamed: defaultdict[int, dict[str, tuple[str, list[int]]]]


def _reexported(
    resolver: _Resolver,
    references: list[ReferenceRow],
    targets_of: dict[int, list[int]],
    rows_of: Callable[[list[int]], Iterable[ReferenceRow]] | None,
) -> Reexports:
    """Per file, the files that define what it imports by name from a module that imports it
    from them (`from .v2 import ModelField as ModelField` in a package's `__init__.py`; `from
    .v1 import *`), and the names such a module binds under another name (`from .ledger import
    post_entry as post`, `export { a as b } from './a'`): one step. What a file imports that way
    is theirs as much as the module's. `targets_of`: the files each import of `references` can
    mean, by its position."""
    found = Reexports(defaultdict(set), defaultdict(dict))
    named = [(ref, targets_of[p]) for p, ref in enumerate(references) if p in targets_of and ref.imported_names]
    modules = {target for _, targets in named for target in targets}
    if not modules:
        return found
    # Per module: what each of its imports brings, and from which files; the names it renames.
    forwards: defaultdict[int, list[tuple[frozenset[str], list[int]]]] = defaultdict(list)
    renames: defaultdict[int, dict[str, str]] = defaultdict(dict)
    for p, ref in enumerate(references):
        if ref.file_id in modules and p in targets_of and ref.imported_names:
            forwards[ref.file_id].append((frozenset(ref.imported_names), targets_of[p]))
        elif ref.file_id in modules and ref.kind == "alias":
            renames[ref.file_id][ref.qualifier] = ref.name
    elsewhere = sorted(modules - {ref.file_id for ref in references})
    if elsewhere and rows_of is not None:
        for ref in rows_of(elsewhere):
            if ref.kind == "import" and ref.imported_names:
                targets = resolver.module_files(ref.name, ref.file_id)
                forwards[ref.file_id].append((frozenset(ref.imported_names), targets))
            elif ref.kind == "alias":
                renames[ref.file_id][ref.qualifier] = ref.name
    for ref, targets in named:
        wanted = set(ref.imported_names)
        for module in targets:
            for names, origins in forwards.get(module, ()):
                if "*" in names or not wanted.isdisjoint(names):
                    found.origins[ref.file_id].update(o for o in origins if o not in (ref.file_id, module))
            for bound, original in renames.get(module, {}).items():
                if bound in wanted and bound not in found.renamed[ref.file_id]:
                    origins = sorted(
                        {o for names, files in forwards[module] if original in names for o in files} - {ref.file_id, module}
                    )
                    if origins:
                        found.renamed[ref.file_id][bound] = (original, origins)
    return found


def asked_for(references: Iterable[ReferenceRow]) -> tuple[set[str], set[int]]:
    """The names `references` call, inherit or import, and the files whose symbols they can be
    made inside: the only symbols their resolution looks at (an update resolves a few files')."""
    names: set[str] = set()
    enclosing_files: set[int] = set()
    for ref in references:
        names.add(ref.name)
        if ref.qualifier and ref.kind in ("call", "use"):
            # A receiver's type: a method it inherits is found through the type's bases.
            names.add(receiver_type(ref.qualifier))
        if ref.enclosing:
            enclosing_files.add(ref.file_id)
    return names, enclosing_files


def receiver_type(qualifier: str) -> str:
    """The type name a call's qualifier can be (`Session`, `http.Session` -> `Session`)."""
    return qualifier.rpartition(".")[2]


class _Named:
    """The definitions of one name that one kind of reference can mean, in order, with lookups by
    file and by qualified tail, made once per name and kind rather than once per reference (a
    common method name has thousands of definitions in a large repository, and each of its
    calls scanned them all)."""

    __slots__ = ("symbols", "by_file", "_grouped", "_tails", "_order")

    def __init__(self, symbols: list[SymbolNode]):
        self.symbols = symbols
        self.by_file: dict[int, list[SymbolNode]] = {}
        for symbol in symbols:
            self.by_file.setdefault(symbol.file_id, []).append(symbol)
        # Whether each file's definitions are one run of `symbols` (as nodes come, by id): a
        # file's run then stands for them in order.
        runs = 1 + sum(1 for a, b in zip(symbols, symbols[1:]) if a.file_id != b.file_id)
        self._grouped = runs == len(self.by_file)
        self._tails: dict[str, list[SymbolNode]] | None = None
        self._order: dict[int, int] | None = None

    def in_files(self, files: Iterable[int] | frozenset[int] | set[int]) -> list[SymbolNode]:
        """Those in `files`, in order."""
        files = files if isinstance(files, (set, frozenset)) else set(files)
        if len(files) < len(self.by_file):
            hits = [f for f in files if f in self.by_file]
        else:
            hits = [f for f in self.by_file if f in files]
        if not hits:
            return []
        if len(hits) == 1:
            return list(self.by_file[hits[0]])
        if not self._grouped:
            return [s for s in self.symbols if s.file_id in files]
        # `by_file` holds the files in the order their runs come.
        if self._order is None:
            self._order = {f: i for i, f in enumerate(self.by_file)}
        return [s for f in sorted(hits, key=self._order.__getitem__) for s in self.by_file[f]]

    def typed(self, method: str) -> list[SymbolNode]:
        """Those whose qualified name is `method` or ends with `.method`, in order."""
        if self._tails is None:
            tails: dict[str, list[SymbolNode]] = {}
            for symbol in self.symbols:
                qualified = symbol.qualified_name
                tails.setdefault(qualified, []).append(symbol)
                at = qualified.find(".")
                while at >= 0:
                    tails.setdefault(qualified[at + 1 :], []).append(symbol)
                    at = qualified.find(".", at + 1)
            self._tails = tails
        return self._tails.get(method, [])


class _Resolver:
    def __init__(
        self,
        files: Sequence[FileNode],
        symbols: Sequence[SymbolNode],
        references: list[ReferenceRow],
        rows_of: Callable[[list[int]], Iterable[ReferenceRow]] | None = None,
        symbols_named: Callable[[str], list[SymbolNode]] | None = None,
        nested_in: Callable[[int], frozenset[int]] | None = None,
    ):
        self.file_count = len(files)
        if nested_in is None:
            given: dict[int, list[SymbolNode]] = defaultdict(list)
            for symbol in symbols:
                given[symbol.file_id].append(symbol)
            nested: dict[int, frozenset[int]] = {}

            def nested_in(file_id: int) -> frozenset[int]:
                found = nested.get(file_id)
                if found is None:
                    defined = given.get(file_id, [])
                    found = nested[file_id] = frozenset(defined[i].id for i in nested_definitions(defined))
                return found

        self._nested_in = nested_in
        self.paths = {f.id: f.path for f in files}
        names, enclosing_files = asked_for(references)
        self._asked = names
        self._rows_of = rows_of
        self._symbols_named = symbols_named
        self._more_symbols: dict[str, list[SymbolNode]] = {}
        self._types: dict[str, list[SymbolNode]] = {}
        self._receiver_types: dict[str, list[SymbolNode]] = {}
        self._guesses: dict[tuple[str, str, str], tuple[list[SymbolNode] | None, list[SymbolNode]]] = {}
        # What files outside `references` import and inherit is read from `rows_of` when asked.
        self._read = {ref.file_id for ref in references}
        #: The files each file imports (those of `references` set by `resolve_edges`).
        self.file_imports: dict[int, set[int]] = {}
        self.by_name: dict[str, list[SymbolNode]] = defaultdict(list)
        self.by_qualified: dict[tuple[int, str], list[SymbolNode]] = defaultdict(list)
        for symbol in symbols:
            if symbol.name in names:
                self.by_name[symbol.name].append(symbol)
            if symbol.file_id in enclosing_files:
                self.by_qualified[(symbol.file_id, symbol.qualified_name)].append(symbol)
        # A class's base names, by (file, class): a method's `super` and `self` calls look there.
        self.bases: dict[tuple[int, str], list[str]] = defaultdict(list)
        for ref in references:
            if ref.kind == "inherit" and ref.enclosing:
                self.bases[(ref.file_id, ref.enclosing)].append(ref.name)
        self.by_module_tail = _files_by_module_tail(tuple(f.path for f in files), tuple(f.id for f in files))
        self._packages: dict[str, frozenset[int]] | None = None
        self._named: dict[tuple[str, str, bool], _Named] = {}
        self._module_parts: dict[int, list[str]] = {}

    def named(self, name: str, kind: str = "call", go_bare: bool = False) -> _Named:
        """The definitions of `name` a reference of `kind` can mean: a base is a type; a value
        passed on a function, a method or a type; a bare Go call no method."""
        key = (name, kind if kind in ("inherit", "use") else "", go_bare)
        found = self._named.get(key)
        if found is None:
            every = self.symbols_of(name)
            if kind == "inherit":
                every = [s for s in every if s.kind in TYPE_KINDS]
            elif kind == "use":
                every = [s for s in every if s.kind in _USED_KINDS]
            if go_bare:
                every = [s for s in every if s.kind != "method"]
            found = self._named[key] = _Named(every)
        return found

    def package_of(self, file_id: int) -> frozenset[int]:
        """The Go files of `file_id`'s folder (its package) when it is a Go file; else none."""
        path = self.paths[file_id]
        if not path.endswith(".go"):
            return frozenset()
        if self._packages is None:
            by_folder: dict[str, set[int]] = defaultdict(set)
            for f, p in self.paths.items():
                if p.endswith(".go"):
                    by_folder[_folder(p)].add(f)
            self._packages = {folder: frozenset(files) for folder, files in by_folder.items()}
        return self._packages[_folder(path)]

    def symbol_node(self, symbol: SymbolNode) -> int:
        return self.file_count + symbol.id

    def overloads(self, symbol: SymbolNode) -> list[SymbolNode]:
        """`symbol` and every other definition of its qualified name in its file, in order."""
        return [s for s in self.named(symbol.name).by_file.get(symbol.file_id, ()) if s.qualified_name == symbol.qualified_name]

    def node_of_enclosing(self, file_id: int, enclosing: str | None, line: int) -> int:
        """The node of the definition `enclosing` whose lines hold `line`, or the file's node
        for its top-level code."""
        found = self.by_qualified.get((file_id, enclosing), ()) if enclosing else ()
        symbol = holding(found, line)
        return self.symbol_node(symbol) if symbol else file_id

    def module_parts(self, file_id: int) -> list[str]:
        """`_module_parts` of a file's path, split once (imports of a common module name, such as
        `utils` or `index`, look at every file of that name)."""
        parts = self._module_parts.get(file_id)
        if parts is None:
            parts = self._module_parts[file_id] = _module_parts(self.paths[file_id])
        return parts

    def module_files(self, module: str, importer: int) -> list[int]:
        """Files an import of `module`, written in file `importer`, can mean: those whose path
        ends with the most of the module's components (at most three, for stable output)."""
        parts, context = import_path(module, self.paths[importer])
        while len(parts) > context:
            scored = [(_suffix_match(self.module_parts(f), parts), f) for f in self.by_module_tail.get(parts[-1], ())]
            scored = [(score, f) for score, f in scored if score]
            if scored:
                best = max(score for score, _ in scored)
                return sorted(f for score, f in scored if score == best)[:3]
            # `from pkg.module import Name`, `import pkg.Class`: the last part may be a member.
            parts = parts[:-1]
        return []

    def definition(
        self,
        ref: ReferenceRow,
        imported_files: set[int],
        imported_names: set[str],
        outside: set[str],
        reexported: set[int],
    ) -> tuple[SymbolNode, str] | None:
        """The definition `ref` names and how it was found (`RESOLUTIONS`), or None. A type, or
        a name the file imports, defined where a module it imports re-exports it from
        (`reexported`) is imported."""
        # A name passed as a value is most often a variable: only a function, a method or a
        # type it names where the file can see it (never by name alone) is a use. A bare Go call
        # names a function of its package, or of no package: never a method.
        go_bare = not ref.qualifier and self.paths[ref.file_id].endswith(".go")
        named = self.named(ref.name, ref.kind, go_bare)
        candidates = named.symbols
        if not candidates:
            return None
        if ref.qualifier and ref.kind in ("call", "use"):
            # A call on a type (`Session.create()`), or on a name bound to an instance of one
            # (`s.get()` after `s = Session()`, as the parser records it), is that type's.
            typed = named.typed(f"{ref.qualifier}.{ref.name}")
            tiers = ((ref.file_id,), "exact"), (self.package_of(ref.file_id), "exact"), (imported_files, "imported"), (reexported, "imported")
            for tier, how in tiers:
                found = [s for s in typed if s.file_id in tier] if typed else typed
                if found and (found := self.visible(found, ref)):
                    return min(found, key=lambda s: (s.file_id, s.start_line)), how
            types = self.receiver_types(ref.qualifier)
            if types:
                # A method the type does not define may be one it inherits (`s.close()` after
                # `s = Session()`, `close` defined by Session's base).
                inherited = self.through_type(ref, named, tiers, types)
                if inherited is not None:
                    return inherited
        if ref.qualifier in _OWN_RECEIVERS and ref.kind in ("call", "use") and ref.enclosing and "." in ref.enclosing:
            inherited = self.inherited(ref, named, imported_files | reexported if reexported else imported_files)
            if inherited is not None or ref.qualifier in _BASE_RECEIVERS:
                return inherited
        same_file = named.by_file.get(ref.file_id)
        if same_file:
            return _closest(same_file, ref), "exact"
        if go_bare:
            # Go's files of one folder are one package, whose names each sees without an import.
            package = named.in_files(self.package_of(ref.file_id))
            if package:
                return _closest(package, ref), "exact"
        imported = named.in_files(imported_files)
        if imported:
            imported = self.visible(imported, ref)
        if not imported and ref.name in imported_names and reexported:
            imported = self.visible(named.in_files(reexported), ref)
        if imported:
            return _closest(imported, ref), "imported"
        # One definition, counting a name's overloads as one.
        if not _one_name(candidates) or not self.visible(candidates[:1], ref):
            return None
        if ref.name in imported_names:
            return candidates[0], "imported"
        if ref.kind != "use" and _one_name(self.by_name[ref.name]) and self.visible_by_name(ref, outside):
            return candidates[0], "by_name"
        return None

    def ambiguous(self, ref: ReferenceRow, outside: set[str], imported_names: set[str], limit: int) -> list[SymbolNode]:
        """The definitions a call no evidence resolved may mean, when its name has a few (at
        most `limit` qualified names) that the caller could reach: every one of them, to be
        linked as candidates. A call on a receiver of unknown type may be any method of that
        name; a bare call, where names cross files with no import (C and C++, whose platforms
        define one function in several files), any function of it. Not a name Python could not
        see there (`visible_by_name`), nor a definition local to another file's function, nor a
        call on a name the file imports (a module, or a type defined outside the index: what it
        names, not a method of that name elsewhere)."""
        if ref.qualifier in _OWN_RECEIVERS:
            return []  # the class and the bases it declares said what it is, or that it is none
        if ref.qualifier and ref.qualifier.split(".", 1)[0] in imported_names:
            return []
        if ref.qualifier:
            wanted = "method"
        elif self.paths[ref.file_id].endswith(_HEADER_LANGUAGE_SUFFIXES):
            wanted = "function"
        else:
            return []
        seen_anywhere, nested = self.guesses(ref.name, ref.kind, wanted, limit)
        if seen_anywhere is None:
            return []
        every = seen_anywhere + [s for s in nested if s.file_id == ref.file_id]
        if not every or len({(s.file_id, s.qualified_name) for s in every}) > limit:
            return []
        if not self.visible_by_name(ref, outside):
            return []
        return every

    def guesses(
        self, name: str, kind: str, wanted: str, limit: int
    ) -> tuple[list[SymbolNode] | None, list[SymbolNode]]:
        """The definitions of `name` of kind `wanted` that any file sees (None when they are
        more than `limit` qualified names: a guess among them says nothing), and those made
        inside a function's body, seen only in their own file; once per name, as a common
        name's thousands of definitions are each unresolved call's otherwise."""
        key = (name, kind, wanted)
        found = self._guesses.get(key)
        if found is None:
            anywhere: list[SymbolNode] = []
            nested: list[SymbolNode] = []
            names: set[tuple[int, str]] = set()
            for symbol in self.named(name, kind).symbols:
                if symbol.kind != wanted:
                    continue
                if symbol.id in self._nested_in(symbol.file_id):
                    nested.append(symbol)
                    continue
                names.add((symbol.file_id, symbol.qualified_name))
                if len(names) > limit:
                    break
                anywhere.append(symbol)
            found = self._guesses[key] = (None if len(names) > limit else anywhere, nested)
        return found

    def visible(self, found: list[SymbolNode], ref: ReferenceRow) -> list[SymbolNode]:
        """Those of `found` that `ref` can name: a definition made inside a function's body
        (`nested_definitions`) is seen only in its own file."""
        nested_in = self._nested_in
        if all(s.file_id == ref.file_id or s.id not in nested_in(s.file_id) for s in found):
            return found
        return [s for s in found if s.file_id == ref.file_id or s.id not in nested_in(s.file_id)]

    def renamed(self, ref: ReferenceRow, renamed: dict[str, tuple[str, list[int]]]) -> tuple[SymbolNode, str] | None:
        """What `ref` names where it names, bare or as its qualifier, a name the file imports
        from a module that binds it under another name (`Reexports.renamed`): the original's
        definition in the files that module takes it from, `imported`."""
        if not ref.qualifier and ref.name in renamed:
            original, origins = renamed[ref.name]
            found = self.named(original, ref.kind).in_files(origins)
            return (_closest(found, ref._replace(name=original)), "imported") if found else None
        if ref.qualifier in renamed and ref.kind in ("call", "use"):
            original, origins = renamed[ref.qualifier]
            typed = [s for s in self.named(ref.name, ref.kind).typed(f"{original}.{ref.name}") if s.file_id in origins]
            return (min(typed, key=lambda s: (s.file_id, s.start_line)), "imported") if typed else None
        return None

    def inherited(self, ref: ReferenceRow, named: _Named, imported_files: set[int]) -> tuple[SymbolNode, str] | None:
        """What a call on the caller's own object names (`self.x()`, `this.x()`: its class's
        method; `super().x()`, `super.x()`: its base classes'), from the bases the class's own
        declaration names (`from_bases`)."""
        owner = ref.enclosing.rsplit(".", 1)[0] if ref.enclosing else ""
        if ref.qualifier not in _BASE_RECEIVERS:
            own = [s for s in named.by_file.get(ref.file_id, ()) if s.qualified_name == f"{owner}.{ref.name}"]
            if own:
                return own[0], "exact"
        return self.from_bases(ref.file_id, owner, ref.name, named, imported_files)

    def receiver_types(self, qualifier: str) -> list[SymbolNode]:
        """The type definitions a call's qualifier can name (`receiver_type`); none for the
        caller's own object, whose class `inherited` looks in."""
        found = self._receiver_types.get(qualifier)
        if found is None:
            found = self._receiver_types[qualifier] = [] if qualifier in _OWN_RECEIVERS else self.types_named(receiver_type(qualifier))
        return found

    def through_type(
        self, ref: ReferenceRow, named: _Named, tiers: Sequence[tuple[Collection[int], str]], types: list[SymbolNode]
    ) -> tuple[SymbolNode, str] | None:
        """The method `ref` calls on an instance of a type, where the caller does not see it by
        the type's name (`tiers`): the type as the caller sees it (outside Python, also the one
        type of that name anywhere), then its own method or one it inherits (`from_bases`)."""
        for tier, how in tiers:
            found = [s for s in types if s.file_id in tier]
            if found:
                owner = min(found, key=lambda s: (s.file_id, s.start_line))
                break
        else:
            if self.paths[ref.file_id].endswith(_PYTHON_SUFFIXES) or not _one_name(types):
                return None
            owner, how = types[0], "by_name"
        # Its own method first: the caller may see the type where it does not see the file
        # that defines it (a Java class of the same package, a Rust type through `super::`).
        own = [s for s in named.by_file.get(owner.file_id, ()) if s.qualified_name == f"{owner.qualified_name}.{ref.name}"]
        if own:
            return own[0], how
        inherited = self.from_bases(owner.file_id, owner.qualified_name, ref.name, named)
        return (inherited[0], _least_certain(how, inherited[1])) if inherited else None

    def from_bases(
        self, file_id: int, owner: str, method: str, named: _Named, imports: set[int] | None = None, depth: int = 0
    ) -> tuple[SymbolNode, str] | None:
        """The definition of `method` in the bases that class `owner` (qualified, defined in
        file `file_id`) declares, nearest first, up to `BASE_LEVELS` levels: `Base.method` in
        that file (`exact`), in a file it imports (`imports`, else its own; `imported`), or,
        outside Python, whose names are lexical, the one definition of it anywhere (`by_name`).
        A base is looked for the same way, in its turn."""
        bases = self.bases_of(file_id, owner)
        if not bases:
            return None
        if imports is None:
            imports = self.imports_of(file_id)
        python = self.paths[file_id].endswith(_PYTHON_SUFFIXES)
        for base in bases:
            typed = named.typed(f"{base}.{method}")
            for tier, how in ((file_id,), "exact"), (imports, "imported"):
                found = [s for s in typed if s.file_id in tier]
                if found:
                    return min(found, key=lambda s: (s.file_id, s.start_line)), how
            if not python and _one_name(typed):
                return typed[0], "by_name"
        if depth + 1 >= BASE_LEVELS:
            return None
        for base in bases:
            types = self.types_named(base)
            where = [s for s in types if s.file_id == file_id], [s for s in types if s.file_id in imports]
            for found, how in zip(where, ("exact", "imported")):
                if found:
                    break
            else:
                if python or not _one_name(types):
                    continue
                found, how = types, "by_name"
            cls = min(found, key=lambda s: (s.file_id, s.start_line))
            if cls.file_id == file_id and cls.qualified_name == owner:
                continue  # a class named as its own base (`class Error(errors.Error)`) is another
            above = self.from_bases(cls.file_id, cls.qualified_name, method, named, None, depth + 1)
            if above is not None:
                return above[0], _least_certain(how, above[1])
        return None

    def symbols_of(self, name: str) -> list[SymbolNode]:
        """The definitions of `name`, in order: of the symbols given, or, for a name the
        references being resolved do not ask for, from `symbols_named`."""
        if name in self._asked:
            return self.by_name.get(name, [])
        found = self._more_symbols.get(name)
        if found is None:
            found = self._more_symbols[name] = self._symbols_named(name) if self._symbols_named else []
        return found

    def types_named(self, name: str) -> list[SymbolNode]:
        """The type definitions of `name`, in order (asked for once per call on a receiver)."""
        found = self._types.get(name)
        if found is None:
            found = self._types[name] = [s for s in self.symbols_of(name) if s.kind in TYPE_KINDS]
        return found

    def bases_of(self, file_id: int, owner: str) -> list[str]:
        """The bases class `owner` of file `file_id` declares."""
        self._read_file(file_id)
        return self.bases.get((file_id, owner), [])

    def imports_of(self, file_id: int) -> set[int]:
        """The files `file_id` imports."""
        self._read_file(file_id)
        return self.file_imports.get(file_id, set())

    def _read_file(self, file_id: int) -> None:
        """The bases and imports of a file outside the references being resolved, from `rows_of`."""
        if file_id in self._read:
            return
        self._read.add(file_id)
        if self._rows_of is None:
            return
        imported = self.file_imports.setdefault(file_id, set())
        for ref in self._rows_of([file_id]):
            if ref.kind == "inherit" and ref.enclosing:
                self.bases[(file_id, ref.enclosing)].append(ref.name)
            elif ref.kind == "import":
                imported.update(t for t in self.module_files(ref.name, file_id) if t != file_id)

    def visible_by_name(self, ref: ReferenceRow, outside: set[str]) -> bool:
        """Whether the one definition of a name, in a file the caller does not import, can be
        what `ref` calls. Python's names are lexical: a bare name is one the file defines or
        imports; `self.name` and `cls.name` are the class's own or an ancestor's, which the file
        defines or imports too; a name on a module from outside the index (`dataclasses.asdict`)
        is that module's; and on a receiver of unknown type, a method name of Python's built-in
        types (`row.fields.update`) is as likely theirs. (Measured: each such link of the dev
        split's Python references was wrong, benches/resolutions.py.) Elsewhere (Go's packages,
        C's headers, Java's same-package classes) names cross files without an import, and the
        only definition is the one."""
        if not self.paths[ref.file_id].endswith(_PYTHON_SUFFIXES):
            return True
        if not ref.qualifier or ref.qualifier in ("self", "cls"):
            return False
        return ref.qualifier.split(".", 1)[0] not in outside and ref.name not in PYTHON_BUILTIN_METHODS


_module_tail_index: tuple[tuple[tuple[str, ...], tuple[int, ...]], dict[str, list[int]]] | None = None


def _files_by_module_tail(paths: tuple[str, ...], ids: tuple[int, ...]) -> dict[str, list[int]]:
    """The last component of a module path -> the files that provide it, of the files `paths`
    (with their `ids`); the latest kept, as an edit in place keeps every path. Not to be changed."""
    global _module_tail_index
    known = _module_tail_index
    if known is not None and known[0] == (paths, ids):
        return known[1]
    by_tail: defaultdict[str, list[int]] = defaultdict(list)
    for path, file_id in zip(paths, ids):
        for tail in module_tails(path):
            by_tail[tail].append(file_id)
    found = dict(by_tail)
    _module_tail_index = ((paths, ids), found)
    return found


def _folder(path: str) -> str:
    """The folder of a relative path ("" at the root)."""
    return path.rpartition("/")[0]


#: What a name passed as a value can be a use of.
_USED_KINDS = TYPE_KINDS | {"function", "method"}
#: Receivers that are the caller's own object: its class's methods, then its bases'.
_OWN_RECEIVERS = frozenset({"self", "cls", "this", "super", "super()"})
#: Of those, the ones that skip the class's own methods.
_BASE_RECEIVERS = frozenset({"super", "super()"})
#: How many levels of base classes a method is looked for in (a base's base's base).
BASE_LEVELS = 3


def _least_certain(a: str, b: str) -> str:
    """Of two resolutions, the less certain: a chain of lookups is as certain as its weakest."""
    return a if _RESOLUTION_CODE[a] >= _RESOLUTION_CODE[b] else b


def _one_name(definitions: Sequence[SymbolNode]) -> bool:
    """Whether `definitions` are one qualified name in one file (overloads of one name)."""
    return bool(definitions) and all(
        (d.file_id, d.qualified_name) == (definitions[0].file_id, definitions[0].qualified_name) for d in definitions
    )


def _closest(candidates: list[SymbolNode], ref: ReferenceRow) -> SymbolNode:
    """Among same-named definitions, one in the caller's own class, else the first in the file."""
    if ref.enclosing and "." in ref.enclosing:
        owner = ref.enclosing.rsplit(".", 1)[0]
        for symbol in candidates:
            if symbol.qualified_name == f"{owner}.{ref.name}":
                return symbol
    top_level = [s for s in candidates if "." not in s.qualified_name]
    return min(top_level or candidates, key=lambda s: (s.file_id, s.start_line))


#: Leading words of a module path that say where to start, not what to find.
_ANCHORS = frozenset({"crate", "self", "super", "@", "~", "$"})


def import_parts(module: str, importer_path: str) -> list[str]:
    """The path components an import names, relative imports resolved against the importer."""
    return import_path(module, importer_path)[0]


def import_path(module: str, importer_path: str) -> tuple[list[str], int]:
    """`import_parts`, and how many of the first are only where the importer is, put before a
    path that may not start there (a Rust path without `crate`, `self` or `super`): a file
    matching no more than those is not what the import names."""
    text = module.strip().strip("\"'<>`")
    folder = posixpath.dirname(importer_path)
    if importer_path.endswith(".rs"):
        return _rust_parts(text, importer_path)
    return _import_parts(text, folder), 0


def _import_parts(text: str, folder: str) -> list[str]:
    if text.startswith(("./", "../")):  # JavaScript, TypeScript, C includes, Lua...
        return _module_parts(posixpath.normpath(posixpath.join(folder, text)))
    if text.startswith("."):  # Python: one dot is the importer's package, each more goes up
        level = len(text) - len(text.lstrip("."))
        base = folder.split("/") if folder else []
        base = base[: len(base) - (level - 1)] if level > 1 else base
        return base + [p for p in text.lstrip(".").split(".") if p]
    if "/" in text and "." in text.rsplit("/", 1)[-1]:  # a file path: "net/http.h", "lib/x.php"
        return _module_parts(text)
    return [p for p in _MODULE_SEPARATORS.split(text) if p and p not in _ANCHORS and p != "*"]


def _rust_parts(path: str, importer_path: str) -> tuple[list[str], int]:
    """The path components a Rust path from the crate's root or the importer's module names:
    `crate::` starts in the folder holding the crate's root (the nearest `src`, else the
    importer's), `self::` in the importer's module (`src/a/b.rs` is `src/a/b`, `src/a/mod.rs`
    and `src/lib.rs` their folders), each `super::` one module up. A path without them is a
    child of the importer's module or an outside crate: with the module's components before
    it (`mod walk;` is `self::walk`), a file where the first would be matches more of it than
    one elsewhere."""
    parts = path.split("::")
    context = 0
    if parts[0] not in ("crate", "self", "super"):
        parts = ["self", *parts]
        context = len(_module_parts(importer_path))
    if parts[0] == "crate":
        folders = importer_path.split("/")[:-1]
        base = folders[: len(folders) - folders[::-1].index("src")] if "src" in folders else _module_parts(importer_path)
        parts = parts[1:]
    else:
        base = _module_parts(importer_path)
        if parts[0] == "self":
            parts = parts[1:]
        while parts and parts[0] == "super" and base:
            base = base[:-1]
            parts = parts[1:]
    return [*base, *(p for p in parts if p and p not in ("*", "self", "super"))], context


def _module_parts(path: str) -> list[str]:
    """`src/pkg/mod.py` -> ['src', 'pkg', 'mod']; `pkg/__init__.py` -> ['pkg']."""
    parts = path.split("/")
    stem = parts[-1].split(".", 1)[0]
    parts = parts[:-1] if stem in FOLDER_MODULES else [*parts[:-1], stem]
    return parts


def module_tails(path: str) -> list[str]:
    """The last module components by which an import can name the file at `path`."""
    parts = _module_parts(path)
    tails = [parts[-1]] if parts else []
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    if stem not in tails:
        tails.append(stem)  # `pkg/index.js` is also importable as `pkg/index`
    return tails


def _suffix_match(file_parts: list[str], module_parts: list[str]) -> int:
    """How many trailing components agree (0 if even the last one differs)."""
    n = 0
    for a, b in zip(reversed(file_parts), reversed(module_parts)):
        if a != b:
            break
        n += 1
    return n




def node_values(node_count: int, edges: EdgeColumns) -> tuple[np.ndarray, np.ndarray]:
    """Each node's centrality (float32) and in-degree (int32) over the `counted` edges.

    Centrality is PageRank (the core's `graph_centrality`, the same floats as rustworkx's
    `pagerank`; parallel edges weigh their number) scaled to
    `max(0, n * rank - 1) / config.CENTRALITY_DIVISOR`. PageRank sums to 1, so `n * rank` is 1
    for a node of average importance. The scaled value is 0 at or below average — no boost —
    and reaches the fusion boost's cap (e^(5/3) - 1, about 4.3) at about 70 times the average,
    so only the true hubs of a codebase get the full 1.5x, and a chunk twice as central as
    average gets about 2%. The in-degree is how many distinct nodes depend directly on a node.
    A power iteration that has not converged within `PAGERANK_ITERATIONS` keeps its last step.
    """
    edges = counted(edges)
    tuning = config.current()
    ranks, in_degree, _converged = graph_centrality(
        node_count, edges.src, edges.dst,
        alpha=tuning.PAGERANK_ALPHA, max_iterations=tuning.PAGERANK_ITERATIONS, tolerance=tuning.PAGERANK_TOLERANCE,
    )  # fmt: skip
    scaled = (np.maximum(0.0, node_count * ranks - 1.0) / tuning.CENTRALITY_DIVISOR).astype(np.float32)
    return scaled, in_degree.astype(np.int32)


def counted(edges: EdgeColumns) -> EdgeColumns:
    """The edges centrality and in-degree count: a call counts once, for the overload it was
    resolved to, not again for each other overload of its name (candidate call edges); and a
    value passed on does not count (it says what the code hands around, not what it relies on)."""
    overload = (edges.kind == EDGE_KINDS.index("call")) & (edges.how == RESOLUTIONS.index("candidate"))
    return edges[~overload & (edges.kind != EDGE_KINDS.index("use"))]


@dataclass(frozen=True, slots=True)
class Step:
    """One node reached by a graph walk, with the edge path that led there (nearest first)."""

    node: int
    depth: int
    path: tuple[Edge, ...]


class Adjacency:
    """Each node's edges at one end (their sources or their destinations), in the edges' order:
    what a dict of lists filled edge by edge would hold, made as `Edge`s only for the nodes a
    walk reaches (a generation of 706,493 edges would otherwise cost an object each, on the
    first graph question after every edit)."""

    def __init__(self, edges: EdgeColumns, ends: np.ndarray, node_count: int):
        self._edges = edges
        self._order = np.argsort(ends, kind="stable")
        self._offsets = np.searchsorted(ends[self._order], np.arange(node_count + 1)) if node_count else np.zeros(1, dtype=np.int64)
        self._made: dict[int, list[Edge]] = {}

    def get(self, node: int, default: Sequence[Edge] = ()) -> Sequence[Edge]:
        """The edges at `node`, or `default` when it has none."""
        made = self._made.get(node)
        if made is not None:
            return made
        if not 0 <= node < len(self._offsets) - 1:
            return default
        start, end = int(self._offsets[node]), int(self._offsets[node + 1])
        if start == end:
            return default
        made = self._made[node] = [Edge(*row) for row in self._edges[self._order[start:end]].rows()]
        return made


class DependencyGraph:
    """Adjacency of the dependency edges, for the walks the graph modality needs."""

    def __init__(self, node_count: int, edges: Sequence[Edge] | EdgeColumns):
        columns = edges if isinstance(edges, EdgeColumns) else EdgeColumns.of(edges)
        self.node_count = node_count
        self.outgoing = Adjacency(columns, columns.src, node_count)
        self.incoming = Adjacency(columns, columns.dst, node_count)

    def callers(self, node: int) -> list[Step]:
        """Nodes with a call edge to `node`."""
        return [Step(e.src, 1, (e,)) for e in self.incoming.get(node, ()) if e.kind == "call"]

    def callees(self, node: int) -> list[Step]:
        """Nodes `node` has a call edge to."""
        return [Step(e.dst, 1, (e,)) for e in self.outgoing.get(node, ()) if e.kind == "call"]

    def dependants(self, node: int, depth: int) -> list[Step]:
        """Everything that depends on `node` within `depth` edges (any kind), nearest first,
        each with the shortest path of edges from it to `node`: first what is reached without a
        value passed on (`use`, which may never be called), then what such edges add."""
        firm = self._walk(node, depth, skip="use")
        reached = {node, *(step.node for step in firm)}
        return firm + [step for step in self._walk(node, depth) if step.node not in reached]

    def _walk(self, node: int, depth: int, skip: str | None = None) -> list[Step]:
        """Breadth first from `node` against the edges (but those of kind `skip`)."""
        seen = {node}
        found: list[Step] = []
        frontier: deque[tuple[int, int, tuple[Edge, ...]]] = deque([(node, 0, ())])
        while frontier:
            current, d, path = frontier.popleft()
            if d == depth:
                continue
            for edge in sorted(self.incoming.get(current, ()), key=lambda e: (e.src, e.kind)):
                if edge.src in seen or edge.kind == skip:
                    continue
                seen.add(edge.src)
                step = Step(edge.src, d + 1, (edge, *path))
                found.append(step)
                frontier.append((edge.src, d + 1, step.path))
        return found
