"""The graph modality: callers, blast radius, and what surrounds the code a query names.

- find_references: the callers of the named symbol (its direct dependants by call edges), then
  its other direct dependants (importers, subclasses).
- impact_analysis: everything that depends on it, transitively to IMPACT_DEPTH edges, nearer first.
- any other intent (thorough preset): personalized PageRank seeded at the symbols whose names
  the query mentions, so code tightly linked to them ranks high.
"""

from __future__ import annotations

import re

import rustworkx as rx

from maguyva.index.reader import IndexReader
from maguyva.query.retrievers.base import Candidate, Query

#: How far a blast radius reaches.
IMPACT_DEPTH = 3
_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|#)[A-Za-z_$][A-Za-z0-9_$]*)*")


class GraphRetriever:
    """Walks of the dependency graph from the symbols a query names."""

    name = "graph"

    def retrieve(self, reader: IndexReader, query: Query, limit: int) -> list[Candidate]:
        classification = query.classification
        subject = classification.subject
        if classification.intent in ("find_references", "impact_analysis") and subject:
            seeds = symbol_nodes(reader, subject)
            depth = 1 if classification.intent == "find_references" else IMPACT_DEPTH
            return _dependants(reader, seeds, depth, limit)
        names = [subject] if subject else _IDENTIFIER.findall(query.text)
        seeds = [node for name in names for node in symbol_nodes(reader, name)]
        return _personalized_pagerank(reader, seeds, limit)


def symbol_nodes(reader: IndexReader, name: str) -> list[int]:
    """Graph nodes of the symbols called `name` (or qualified so: "Session.request"), exact
    matches first, else case-insensitive ones."""
    name = name.replace("::", ".").replace("#", ".").strip()
    tail = name.rsplit(".", 1)[-1]
    rows = reader.sql("SELECT id, qualified_name FROM symbols WHERE name = ? ORDER BY id", (tail,))
    if not rows:
        rows = reader.sql("SELECT id, qualified_name FROM symbols WHERE lower(name) = lower(?) ORDER BY id", (tail,))
    if "." in name:
        qualified = [r for r in rows if r[1] == name or r[1].endswith("." + name)]
        rows = qualified or rows
    return [len(reader.files) + symbol_id for symbol_id, _ in rows]


def _dependants(reader: IndexReader, seeds: list[int], depth: int, limit: int) -> list[Candidate]:
    graph = reader.graph
    steps = []
    for seed in seeds:
        if depth == 1:
            callers = graph.callers(seed)
            called = {s.node for s in callers}
            others = [s for s in graph.dependants(seed, 1) if s.node not in called]
            steps.extend(callers + others)
        else:
            steps.extend(graph.dependants(seed, depth))
    # Nearer first; callers before other dependants at the same depth (the list order).
    steps.sort(key=lambda s: s.depth)
    return _as_chunks(reader, [(s.node, 1.0 / s.depth) for s in steps], limit)


def _personalized_pagerank(reader: IndexReader, seeds: list[int], limit: int) -> list[Candidate]:
    if not seeds:
        return []
    graph = _undirected_view(reader)
    ranks = rx.pagerank(graph, personalization={s: 1.0 for s in seeds}, max_iter=100, tol=1e-6)
    ordered = sorted(ranks.items(), key=lambda item: (-item[1], item[0]))
    return _as_chunks(reader, [(node, score) for node, score in ordered if score > 0], limit)


def _undirected_view(reader: IndexReader) -> rx.PyDiGraph:
    """The dependency graph with every edge in both directions, built once per reader: related
    code is related whichever way the dependency points."""
    cached = getattr(reader, "_graph_both_ways", None)
    if cached is None:
        cached = rx.PyDiGraph()
        cached.add_nodes_from(range(reader.graph.node_count))
        edges = [(e.src, e.dst) for out in reader.graph.outgoing.values() for e in out]
        cached.add_edges_from_no_data(edges + [(b, a) for a, b in edges])
        reader._graph_both_ways = cached  # type: ignore[attr-defined]
    return cached


def _as_chunks(reader: IndexReader, scored_nodes: list[tuple[int, float]], limit: int) -> list[Candidate]:
    """The chunk showing each node, first occurrence kept, at most `limit`."""
    seen: set[int] = set()
    out: list[Candidate] = []
    for node, score in scored_nodes:
        chunk = reader.node_chunk(node)
        if chunk is None or chunk in seen:
            continue
        seen.add(chunk)
        out.append(Candidate(chunk, score))
        if len(out) == limit:
            break
    return out
