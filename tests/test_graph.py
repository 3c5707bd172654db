"""Edge resolution, centrality and graph walks on hand-made files, symbols and references."""

from __future__ import annotations

import numpy as np
import pytest

from maguyva.index.graph import (
    EDGE_KINDS,
    DependencyGraph,
    Edge,
    EdgeColumns,
    FileNode,
    ReferenceRow,
    SymbolNode,
    centrality,
    import_parts,
    in_degree,
    resolve_edges,
)

FILES = [
    FileNode(0, "pkg/__init__.py"),
    FileNode(1, "pkg/http.py"),
    FileNode(2, "pkg/retry.py"),
    FileNode(3, "app/main.py"),
    FileNode(4, "other/http.py"),
]


def sym(i, file_id, qualified, kind="function", start=1):
    return SymbolNode(i, file_id, qualified.rsplit(".", 1)[-1], qualified, kind, start, start + 5)


SYMBOLS = [
    sym(0, 1, "Session", "class", 1),
    sym(1, 1, "Session.request", "method", 3),
    sym(2, 1, "Session.get", "method", 10),
    sym(3, 2, "retry", "function", 1),
    sym(4, 3, "main", "function", 1),
    sym(5, 4, "request", "function", 1),  # same name as a method elsewhere
    sym(6, 2, "Backoff", "class", 20),
    sym(7, 2, "ExpBackoff", "class", 30),
]
NODE = {s.qualified_name + f"@{s.file_id}": len(FILES) + s.id for s in SYMBOLS}


def ref(file_id, kind, name, line, enclosing=None, qualifier="", names=()):
    return ReferenceRow(file_id, kind, name, line, enclosing, qualifier, tuple(names))


REFS = [
    ref(1, "import", ".retry", 1, names=["retry"]),
    ref(1, "call", "request", 11, "Session.get", "self"),  # -> Session.request, same file
    ref(1, "call", "retry", 5, "Session.request"),  # -> retry in the imported module
    ref(3, "import", "pkg.http", 1, names=["Session"]),
    ref(3, "call", "Session", 2, "main"),  # constructor -> class, via the import
    ref(3, "call", "get", 3, "main", "s"),  # unique global definition named get
    ref(3, "call", "print", 4, "main"),  # builtin: no definition, no edge
    ref(2, "inherit", "Backoff", 30, "ExpBackoff"),
    ref(4, "call", "retry", 2, "request"),  # not imported, but the only `retry` anywhere
]


def test_resolution_prefers_same_file_then_imports_then_unique_global():
    edges = {(e.src, e.dst, e.kind) for e in resolve_edges(FILES, SYMBOLS, REFS)}
    assert (1, 2, "import") in edges
    assert (3, 1, "import") in edges
    assert (NODE["Session.get@1"], NODE["Session.request@1"], "call") in edges
    assert (NODE["Session.request@1"], NODE["retry@2"], "call") in edges
    assert (NODE["main@3"], NODE["Session@1"], "call") in edges
    assert (NODE["main@3"], NODE["Session.get@1"], "call") in edges
    assert (NODE["ExpBackoff@2"], NODE["Backoff@2"], "inherit") in edges
    assert (NODE["request@4"], NODE["retry@2"], "call") in edges
    assert not any(e[1] == NODE["request@4"] for e in edges), "ambiguous name linked to the wrong file"
    assert len(edges) == 8


def test_ambiguous_names_are_not_linked():
    symbols = [sym(0, 1, "parse"), sym(1, 4, "parse"), sym(2, 3, "main")]
    edges = resolve_edges(FILES, symbols, [ref(3, "call", "parse", 2, "main")])
    assert edges == []


def test_import_parts():
    assert import_parts(".utils", "pkg/sub/a.py") == ["pkg", "sub", "utils"]
    assert import_parts("..core", "pkg/sub/a.py") == ["pkg", "core"]
    assert import_parts("./lib/x", "src/a.js") == ["src", "lib", "x"]
    assert import_parts("../y", "src/a/b.ts") == ["src", "y"]
    assert import_parts("net/http.h", "a.c") == ["net", "http"]
    assert import_parts("crate::walk", "src/lib.rs") == ["walk"]
    assert import_parts("os.path", "a.py") == ["os", "path"]


def test_module_resolution_picks_the_longest_matching_path():
    files = [FileNode(0, "a/http.py"), FileNode(1, "b/http.py"), FileNode(2, "b/client.py")]
    edges = resolve_edges(files, [], [ref(2, "import", "b.http", 1)])
    assert [(e.src, e.dst) for e in edges] == [(2, 1)]
    edges = resolve_edges(files, [], [ref(2, "import", "b.http.Thing", 1)])
    assert [(e.src, e.dst) for e in edges] == [(2, 1)]


def test_centrality_scaling_makes_hubs_stand_out():
    # A hub that 200 leaves call is far above average: it reaches the boost's cap.
    star = centrality(201, EdgeColumns.of([Edge(i, 200, "call", 1) for i in range(200)]))
    assert star.dtype == np.float32
    assert star[200] > 4.3
    assert np.all(star[:200] == 0)
    # In a ring every node is average: no boost anywhere.
    ring = centrality(10, EdgeColumns.of([Edge(i, (i + 1) % 10, "call", 1) for i in range(10)]))
    assert np.allclose(ring, 0, atol=1e-5)
    # A node called by ten of eleven is well above average, but not a hub of the cap's size.
    small = centrality(11, EdgeColumns.of([Edge(i, 10, "call", 1) for i in range(10)]))
    assert 0 < small[10] < 4.3
    assert centrality(0, EdgeColumns.of([])).shape == (0,)


def test_walks_callers_callees_and_dependants_with_paths():
    edges = [
        Edge(1, 0, "call", 5),
        Edge(2, 1, "call", 7),
        Edge(3, 1, "import", 1),
        Edge(4, 2, "call", 9),
        Edge(0, 5, "call", 2),
    ]
    g = DependencyGraph(6, edges)
    assert [s.node for s in g.callers(0)] == [1]
    assert [s.node for s in g.callees(0)] == [5]
    reach = g.dependants(0, depth=2)
    assert [(s.node, s.depth) for s in reach] == [(1, 1), (2, 2), (3, 2)]
    assert [(e.src, e.dst) for e in reach[1].path] == [(2, 1), (1, 0)]
    assert [s.node for s in g.dependants(0, depth=3)] == [1, 2, 3, 4]


def test_in_degree_counts_distinct_dependants():
    edges = [Edge(0, 2, "call", 1), Edge(0, 2, "import", 1), Edge(1, 2, "call", 3), Edge(2, 0, "call", 4)]
    assert in_degree(3, EdgeColumns.of(edges)).tolist() == [1, 0, 2]
    assert in_degree(3, EdgeColumns.of([])).tolist() == [0, 0, 0] and in_degree(0, EdgeColumns.of([])).tolist() == []


def test_edge_columns_keep_every_edge_and_sort_as_the_tuples_do():
    edges = [Edge(3, 1, "inherit", 2), Edge(0, 2, "import", 1), Edge(0, 2, "call", 9), Edge(3, 1, "call", 4)]
    columns = EdgeColumns.of(edges)
    assert columns.rows() == [tuple(e) for e in edges]
    as_codes = np.array([(e.src, e.dst, code, e.line) for e, code in zip(edges, [2, 1, 0, 0])], dtype=np.int64)
    assert EdgeColumns.of_matrix(as_codes, nodes=4).rows() == columns.rows()
    more = EdgeColumns.of([Edge(0, 2, "call", 3), Edge(1, 0, "call", 1)])
    assert columns.sorted_with(more).rows() == sorted([*map(tuple, edges), (0, 2, "call", 3), (1, 0, "call", 1)])
    assert len(EdgeColumns.of([])) == 0 and EdgeColumns.of([]).rows() == []


def test_edges_round_trip_as_a_matrix_and_one_out_of_range_is_refused(tmp_path):
    from maguyva.index import store

    edges = EdgeColumns.of([Edge(0, 3, "call", 7), Edge(1, 0, "import", 1), Edge(2, 1, "inherit", 4)])
    path = tmp_path / store.EDGES
    path.write_bytes(store.encode_edges(edges.matrix()))
    assert EdgeColumns.of_matrix(store.load_edges(path), nodes=4).rows() == edges.rows()
    with pytest.raises(ValueError, match="past the graph's 3"):
        EdgeColumns.of_matrix(store.load_edges(path), nodes=3)
    unknown = edges.matrix().copy()
    unknown[1, 2] = len(EDGE_KINDS)
    with pytest.raises(ValueError, match="kind out of range"):
        EdgeColumns.of_matrix(unknown, nodes=4)
