"""The structural and graph modalities addressed directly: definitions by name, callers, and
the blast radius of a change, over one opened index.

These answer questions whose shape the asker already knows ("where is X defined", "who calls
X", "what depends on X"), so nothing is classified or fused: a name is looked up in the symbol
table and the dependency graph is walked from it.

A name matches a definition in one of three tiers, a higher tier hiding the lower ones:
exact (the name, or a qualified name or its tail: `Session.request`, `Foo::bar`), then ignoring
case, then ignoring case and word separators (`parse_config` finds `parseConfig`). Within a
tier, the project's own code comes before tests and vendored or generated files, then the more
depended-on definition, then by path and line.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from maguyva.index.graph import RESOLUTIONS, Edge
from maguyva.index.reader import IndexReader
from maguyva.index.roles import is_test_path, path_demotion
from maguyva.index.symbols import CASELESS, EXACT, SEPARATORLESS, named
from maguyva.lexicon import KIND_FAMILIES, normalize_qualified

#: Symbol kinds a definition can be looked up by (each also admits its family: asking for a
#: "function" finds methods too, a "class" finds structs and interfaces).
KINDS: tuple[str, ...] = tuple(KIND_FAMILIES)


@dataclass(frozen=True, slots=True)
class Definition:
    """A definition found in the symbol table."""

    id: int
    name: str
    qualified_name: str
    kind: str
    path: str
    start_line: int
    end_line: int
    signature: str
    docstring: str
    #: Symbols and files that call or inherit it.
    dependants: int
    #: How well the name matched: EXACT, CASELESS or SEPARATORLESS.
    tier: int


@dataclass(frozen=True, slots=True)
class Dependant:
    """Code that depends on a definition, found by walking the graph towards it."""

    #: The symbol's qualified name, or None when the dependant is a file's top-level code.
    symbol: str | None
    kind: str  # a symbol kind, or "file"
    path: str
    #: Where the dependency is written (the call, import or base-class line).
    line: int
    #: Edges between it and the definition (1: direct).
    depth: int
    #: What it uses there: the kind of its edge ("call", "import", "inherit", "use": passed as a value) ...
    via: str
    #: ... and the qualified name (or path) of what that edge points at.
    uses: str
    #: How the least certain edge between it and the definition was resolved (one of
    #: `graph.RESOLUTIONS`: "exact", "imported", "by_name", "candidate"): how far to trust it.
    resolution: str


def find_definitions(reader: IndexReader, name: str, kind: str | None = None, limit: int = 20) -> list[Definition]:
    """Definitions called `name` (or qualified so), best tier only, at most `limit`."""
    wanted = normalize_qualified(name)
    if not wanted:
        return []
    family = KIND_FAMILIES.get(kind) if kind else None
    for tier in (EXACT, CASELESS, SEPARATORLESS):
        ids = named(reader, wanted, tier)
        found = [d for d in _definitions(reader, ids, tier) if family is None or d.kind in family]
        if found:
            found.sort(key=definition_order)
            return found[:limit]
    return []


def _definitions(reader: IndexReader, ids: list[int], tier: int) -> list[Definition]:
    if not ids:
        return []
    rows = reader.symbols_at(ids, "file_id, name, qualified_name, kind, start_line, end_line, signature, docstring")
    files = reader.files
    degree = reader.node_in_degree
    return [
        Definition(
            i, name, qualified, kind, files[f].path, start, end, signature, docstring, int(degree[len(files) + i]), tier
        )
        for i, f, name, qualified, kind, start, end, signature, docstring in rows
    ]


def definition_order(d: Definition) -> tuple[bool, bool, int, str, int]:
    vendored = path_demotion(d.path) < 1
    return (vendored, is_test_path(d.path), -d.dependants, d.path, d.start_line)


def graph_node(reader: IndexReader, definition: Definition) -> int:
    """The dependency-graph node of a definition (files are numbered first)."""
    return len(reader.files) + definition.id


def callers(
    reader: IndexReader, definitions: list[Definition], depth: int = 1, limit: int = 50
) -> tuple[list[Dependant], int]:
    """Code that calls the definitions, directly (depth 1) or through up to `depth` calls,
    nearest first, each caller once at its shortest distance; at most `limit`, and how many
    there are in all."""
    nodes = [graph_node(reader, d) for d in definitions]
    # The callers of a method a definition overrides may run it (dispatch): candidates.
    overridden = [(base, 0, "candidate") for node in nodes for base in reader.overridden(node) if base not in nodes]
    found = walk_in(reader, [(node, 0, RESOLUTIONS[0]) for node in nodes] + overridden, depth)
    return describe(reader, found, limit), len(found)


def walk_in(
    reader: IndexReader, starts: Sequence[tuple[int, int, str]], depth: int, calls_only: bool = True
) -> list[tuple[int, int, Edge, str]]:
    """(node, depth, its edge towards the start, the least certain resolution on the way) of
    what reaches the `starts` (node, its depth, its resolution) by incoming edges (calls only, or
    any) up to `depth` in all, breadth first, each node once."""
    incoming = reader.graph.incoming
    seen = {node for node, _, _ in starts}
    found: list[tuple[int, int, Edge, str]] = []
    frontier = deque(starts)
    while frontier:
        node, distance, trust = frontier.popleft()
        if distance == depth:
            continue
        for edge in sorted(incoming.get(node, ()), key=lambda e: (e.src, e.line)):
            if (calls_only and edge.kind != "call") or edge.src in seen:
                continue
            seen.add(edge.src)
            weakest = least_certain((trust, edge.how))
            found.append((edge.src, distance + 1, edge, weakest))
            frontier.append((edge.src, distance + 1, weakest))
    return found


def least_certain(resolutions: Iterable[str]) -> str:
    """The least certain of `resolutions` (`graph.RESOLUTIONS` is ordered most certain first)."""
    return RESOLUTIONS[max(RESOLUTIONS.index(how) for how in resolutions)]


def impact(
    reader: IndexReader, definitions: list[Definition], depth: int = 3, limit: int = 100
) -> tuple[list[Dependant], int]:
    """Everything that depends on the definitions (calls, imports, inherits, uses) within `depth`
    edges, nearest first, at most `limit`; and how many there are in all."""
    graph = reader.graph
    best: dict[int, tuple[int, Edge, str]] = {}
    seeds = {graph_node(reader, d) for d in definitions}
    # What reaches a method a definition overrides may run it (dispatch): candidates, after
    # what reaches the definition itself.
    overridden = sorted({base for seed in seeds for base in reader.overridden(seed)} - seeds)
    starts = [(seed, RESOLUTIONS[0]) for seed in sorted(seeds)] + [(base, "candidate") for base in overridden]
    for start, trust in starts:
        for step in graph.dependants(start, depth):
            if step.node in seeds:
                continue
            known = best.get(step.node)
            if known is None or step.depth < known[0]:
                best[step.node] = (step.depth, step.path[0], least_certain((trust, *(e.how for e in step.path))))
    ordered = sorted(best.items(), key=lambda item: (item[1][0], item[0]))
    found = [(node, d, edge, how) for node, (d, edge, how) in ordered]
    return describe(reader, found, limit), len(found)


def describe(reader: IndexReader, found: list[tuple[int, int, Edge, str]], limit: int) -> list[Dependant]:
    """The first `limit` dependants from (node, depth, its edge towards the definition, the least
    certain resolution on its way there): nearest first, candidates after the rest, then the
    project's own code before tests and vendored code, then by path and line."""
    file_count = len(reader.files)
    locations = reader.symbol_locations

    def path_of(node: int) -> str:
        return reader.files[node if node < file_count else locations[node - file_count][0]].path

    def order(item: tuple[int, int, Edge, str]) -> tuple[int, bool, bool, bool, str, int]:
        node, depth, edge, how = item
        path = path_of(node)
        return (depth, how == "candidate", path_demotion(path) < 1, is_test_path(path), path, edge.line)

    found = sorted(found, key=order)[:limit]
    symbol_ids = {n - file_count for node, _, edge, _ in found for n in (node, edge.dst) if n >= file_count}
    symbols: dict[int, tuple[int, str, str]] = {}
    if symbol_ids:
        for i, file_id, qualified, kind in reader.symbols_at(sorted(symbol_ids), "file_id, qualified_name, kind"):
            symbols[i] = (file_id, qualified, kind)

    def label(node: int) -> str:
        return reader.files[node].path if node < file_count else symbols[node - file_count][1]

    out = []
    for node, depth, edge, how in found:
        if node < file_count:
            symbol, kind, path = None, "file", reader.files[node].path
        else:
            file_id, symbol, kind = symbols[node - file_count]
            path = reader.files[file_id].path
        out.append(Dependant(symbol, kind, path, edge.line, depth, edge.kind, label(edge.dst), how))
    return out
