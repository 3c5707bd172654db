"""The graph modality: callers, blast radius, and what surrounds the code a query names.

- a walk (the plan gives its depth, `Query.walk_depth`): the dependants of the named symbol,
  callers by call edges before its other dependants (importers, subclasses), transitively to
  the depth (1 for references, more for a blast radius), nearer first.
- otherwise (the thorough preset): personalized PageRank seeded at the symbols the query
  names (its subject, or the code-shaped words of a sentence: `parseConfig`, `retry_after`,
  `Session.request`), so code tightly linked to them ranks high. Plain words do not seed it:
  "state" in "how state is saved" is not a reference to every symbol called `state`.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from maguyva import config
from maguyva.index.graph import Step
from maguyva.index.reader import IndexReader
from maguyva.index.segments import REFS
from maguyva.index.symbols import CASELESS, EXACT, named
from maguyva.lexicon import identifiers
from maguyva.query.retrievers.base import Candidate, Query

#: What makes a word of a sentence a name in code: an inner capital (camelCase, CamelCase), an
#: underscore, a `$`, or a qualifier.
_CODE_SHAPED = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]|_|\$|\.|::|#")


class GraphRetriever:
    """Walks of the dependency graph from the symbols a query names."""

    name = "graph"

    def retrieve(self, reader: IndexReader, query: Query, limit: int) -> list[Candidate]:
        found = self._walk(reader, query, limit)
        if query.allowed is None:
            return found
        allowed = query.allowed
        return [c for c in found if allowed[c.chunk]]

    def _walk(self, reader: IndexReader, query: Query, limit: int) -> list[Candidate]:
        subject = query.classification.subject
        if query.walk_depth is not None and subject:
            return _dependants(reader, symbol_nodes(reader, subject), query.walk_depth, limit)
        names = [subject] if subject else code_names(query.text)
        seeds = [node for name in names for node in symbol_nodes(reader, name)]
        return _personalized_pagerank(reader, list(dict.fromkeys(seeds))[:config.current().PPR_MAX_SEEDS], limit)


def code_names(text: str) -> list[str]:
    """The words of `text` shaped like names in code."""
    return [word for word in identifiers(text) if _CODE_SHAPED.search(word)]


def symbol_nodes(reader: IndexReader, name: str) -> list[int]:
    """Graph nodes of the symbols called `name` (or qualified so: "Session.request"), exact
    matches first, else case-insensitive ones; a qualifier narrows them when it fits some."""
    ids = named(reader, name, EXACT, narrow="prefer") or named(reader, name, CASELESS, narrow="prefer")
    return [len(reader.files) + symbol_id for symbol_id in ids]


def _dependants(reader: IndexReader, seeds: list[int], depth: int, limit: int) -> list[Candidate]:
    graph = reader.graph

    def reaching(node: int) -> list[Step]:
        if depth == 1:
            callers = graph.callers(node)
            called = {s.node for s in callers}
            return callers + [s for s in graph.dependants(node, 1) if s.node not in called]
        return graph.dependants(node, depth)

    steps = [step for seed in seeds for step in reaching(seed)]
    # A call of a method that a seed overrides may run the seed (dispatch): what reaches that
    # method counts too, as what a value passed on reaches does.
    reached = {*seeds, *(s.node for s in steps)}
    overriding = [step for seed in seeds for base in reader.overridden(seed) for step in reaching(base)]
    indirect = {id(step) for step in overriding}
    for step in overriding:
        if step.node not in reached:
            reached.add(step.node)
            steps.append(step)

    # Nearer first; callers before other dependants at the same depth (the list order); and
    # what is reached only through a value passed on (which may never be called) or through a
    # method the seed overrides, after all else, as if that far again.
    def distance(step: Step) -> int:
        return step.depth + (depth if id(step) in indirect or any(e.kind == "use" for e in step.path) else 0)

    steps.sort(key=distance)
    # What is reached only indirectly does not ride on the rank of a chunk a firm dependant shows.
    scored = [(s.node, 1.0 / distance(s)) for s in steps]
    return _as_chunks(reader, scored, limit, _call_lines(reader, steps), joins_from=1.0 / depth)


def _call_lines(reader: IndexReader, steps: list[Step]) -> list[tuple[int, ...]]:
    """Per step, the lines that show it when it is a file node (code outside any definition: a
    module's statements, a callback handed to a test runner): each line where that code calls
    the name its edge reaches, else the line of the edge's first reference; none for a symbol."""
    files = len(reader.files)
    calling = sorted({s.node for s in steps if s.node < files and s.path[0].kind == "call" and s.path[0].dst >= files})
    lines: dict[tuple[int, str], set[int]] = defaultdict(set)
    if calling:
        for _, file_id, name, line in reader.segments.rows_of_files(
            REFS, "file_id, name, line", calling, where="kind = 'call' AND enclosing IS NULL"
        ):
            lines[(file_id, name)].add(line)
        targets = sorted({s.path[0].dst - files for s in steps if s.node in calling})
        name_of = {symbol: name for symbol, name in reader.symbols_at(targets, "name")}
    out: list[tuple[int, ...]] = []
    for step in steps:
        edge = step.path[0]
        if step.node >= files:
            out.append(())
        elif step.node in calling and (found := lines.get((step.node, name_of[edge.dst - files]))):
            out.append(tuple(sorted(found)))
        else:
            out.append((edge.line,))
    return out


def _personalized_pagerank(reader: IndexReader, seeds: list[int], limit: int) -> list[Candidate]:
    """Personalized PageRank over the neighbourhood of the seeds (config.PPR_DEPTH edges either way,
    at most config.PPR_MAX_NODES nodes), by power iteration: nearly all of the rank stays that close to
    the seeds, and the walk then costs in proportion to the neighbourhood, not the repository."""
    if not seeds:
        return []
    nodes, src, dst = _neighbourhood(reader, seeds)
    size = len(nodes)
    restart = np.zeros(size)
    restart[: len(set(seeds))] = 1.0 / len(set(seeds))  # the seeds come first in `nodes`
    out_degree = np.bincount(src, minlength=size).astype(np.float64)
    dangling = out_degree == 0
    share = np.divide(1.0, out_degree, out=np.zeros(size), where=~dangling)
    rank = restart.copy()
    for _ in range(config.current().PPR_ITERATIONS):
        spread = np.bincount(dst, weights=rank[src] * share[src], minlength=size)
        # Rank that reaches a node with no edges goes back to the seeds.
        updated = config.current().PPR_ALPHA * (spread + rank[dangling].sum() * restart) + (1 - config.current().PPR_ALPHA) * restart
        converged = np.abs(updated - rank).sum() < config.current().PPR_TOLERANCE
        rank = updated
        if converged:
            break
    keep = np.flatnonzero(rank > 0)
    if len(keep) > 4 * limit:
        keep = keep[np.argpartition(-rank[keep], 4 * limit)[: 4 * limit]]
    node_ids = np.asarray(nodes)
    order = keep[np.lexsort((node_ids[keep], -rank[keep]))]
    return _as_chunks(reader, list(zip(node_ids[order].tolist(), rank[order].tolist())), limit)


def _neighbourhood(reader: IndexReader, seeds: list[int]) -> tuple[list[int], np.ndarray, np.ndarray]:
    """Nodes within config.PPR_DEPTH undirected edges of the seeds (seeds first, breadth first, capped),
    and the edges among them in both directions as index arrays."""
    graph = reader.graph
    nodes = list(dict.fromkeys(seeds))
    seen = set(nodes)
    frontier = nodes
    for _ in range(config.current().PPR_DEPTH):
        following = []
        for node in frontier:
            for edge in graph.outgoing.get(node, ()):
                if edge.dst not in seen:
                    seen.add(edge.dst)
                    following.append(edge.dst)
            for edge in graph.incoming.get(node, ()):
                if edge.src not in seen:
                    seen.add(edge.src)
                    following.append(edge.src)
        room = config.current().PPR_MAX_NODES - len(nodes)
        nodes.extend(following[:room])
        if len(following) >= room:
            break
        frontier = following
    position = {node: i for i, node in enumerate(nodes)}
    pairs = [
        (position[edge.src], position[edge.dst])
        for node in nodes
        for edge in graph.outgoing.get(node, ())
        if edge.dst in position
    ]
    forward = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    src = np.concatenate([forward[:, 0], forward[:, 1]])
    dst = np.concatenate([forward[:, 1], forward[:, 0]])
    return nodes, src, dst


def _as_chunks(
    reader: IndexReader,
    scored_nodes: list[tuple[int, float]],
    limit: int,
    lines: list[tuple[int, ...]] | None = None,
    joins_from: float = 0.0,
) -> list[Candidate]:
    """The chunk showing each node, first occurrence kept, at most `limit`; each with the spans
    of the symbols found in it (two callers defined in one chunk are two answers). With `lines`
    (per node, `_call_lines`), a file node is shown by the chunks holding those lines, each line
    an answer, rather than by the file's first chunk. A node scored below `joins_from` adds no
    answer to a chunk that a node scored higher shows: it would take that node's rank."""
    order: list[int] = []
    best: dict[int, float] = {}
    spans: dict[int, list[tuple[int, int]]] = {}
    files = len(reader.files)
    for at, (node, score) in enumerate(scored_nodes):
        shown: list[tuple[int | None, tuple[int, int] | None]]
        if lines is not None and node < files and lines[at]:
            # Code outside any definition: each line that calls is an answer.
            shown = [(reader.chunk_at(node, line), (line, line)) for line in lines[at]]
        else:
            chunk = reader.node_chunk(node)
            # A file node without its lines (code at module level) is answered by the chunk itself.
            span = reader.node_span(node)
            if span is None and chunk is not None:
                span = int(reader.chunk_start[chunk]), int(reader.chunk_end[chunk])
            shown = [(chunk, span)]
        for chunk, span in shown:
            if chunk is None or span is None:
                continue
            if chunk not in best:
                if len(order) == limit:
                    continue
                order.append(chunk)
                best[chunk] = score
                spans[chunk] = []
            elif score < joins_from and score < best[chunk]:
                continue
            if span not in spans[chunk]:
                spans[chunk].append(span)
    return [Candidate(chunk, best[chunk], tuple(spans[chunk])) for chunk in order]
