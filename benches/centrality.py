"""The index's centrality (PageRank and in-degree) against rustworkx's PageRank and numpy's
in-degree, on a generation's graph and on copies of it laid side by side.

    python benches/centrality.py INDEX/gen-NNNNNN [--copies 1 10] [--runs 5]

Both give the same values (checked first, to the bit); prints the median time of each.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from maguyva import config
from maguyva.index import graph, store


def with_rustworkx(node_count: int, edges: graph.EdgeColumns) -> tuple[np.ndarray, np.ndarray]:
    """What `graph.node_values` computed before PageRank moved into the core."""
    import rustworkx as rx

    counted = graph.counted(edges)
    tuning = config.current()
    dag = rx.PyDiGraph()
    dag.add_nodes_from(range(node_count))
    dag.add_edges_from_no_data(list(zip(counted.src.tolist(), counted.dst.tolist())))
    ranks = rx.pagerank(dag, alpha=tuning.PAGERANK_ALPHA, max_iter=tuning.PAGERANK_ITERATIONS, tol=tuning.PAGERANK_TOLERANCE)
    values = np.fromiter(ranks.values(), dtype=np.float64, count=node_count)
    scaled = (np.maximum(0.0, node_count * values - 1.0) / tuning.CENTRALITY_DIVISOR).astype(np.float32)
    pairs = np.unique(counted.src * node_count + counted.dst)
    return scaled, np.bincount(pairs % max(node_count, 1), minlength=node_count).astype(np.int32)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("generation", type=Path, help="a generation folder of an index (gen-NNNNNN)")
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    matrix = np.load(args.generation / store.EDGES)
    node_count = len(np.load(args.generation / store.NODES))
    for copies in args.copies:
        offset = np.zeros(matrix.shape[1], dtype=np.int64)
        offset[:2] = node_count
        laid = np.concatenate([matrix + k * offset for k in range(copies)])
        edges = graph.EdgeColumns(*(np.ascontiguousarray(laid[:, i]) for i in range(laid.shape[1])))
        nodes = node_count * copies
        before, now = with_rustworkx(nodes, edges), graph.node_values(nodes, edges)
        if not all(np.array_equal(a, b) for a, b in zip(before, now)):
            raise SystemExit("the two centralities differ")
        for name, compute in (("rustworkx and numpy", with_rustworkx), ("maguyva core", graph.node_values)):
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                compute(nodes, edges)
                times.append((time.perf_counter() - started) * 1e3)
            print(f"{nodes:>9,} nodes {len(laid):>10,} edges  {name:<20} median {statistics.median(times):8.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
