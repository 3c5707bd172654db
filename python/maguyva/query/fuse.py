"""Fusion: weighted Reciprocal Rank Fusion, one call into the compiled core (`rrf_fuse`), for a
repository's modalities (`fuse_modalities`) and for the answers of several repositories
(`fuse_rankings`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from maguyva._core import rrf_fuse
from maguyva.index.reader import IndexReader, chunk_demotion
from maguyva.query.route import Plan


@dataclass(frozen=True, slots=True)
class Fused:
    """The fused chunks, best first, with their scores, and per modality of the plan (columns in
    its order) each chunk's 0-based rank there (-1: not listed) and what it added."""

    chunks: np.ndarray
    scores: np.ndarray
    ranks: np.ndarray
    contributions: np.ndarray


def fuse_modalities(
    reader: IndexReader, plan: Plan, listed: dict[str, np.ndarray], *, one_per_file: bool, keep: int
) -> Fused:
    """The modalities' lists of chunks (`listed`, by name) merged by the plan's weights and k. A
    direct answer keeps its modality's order (only demotion applies: there is nothing to fuse,
    so no centrality boost reorders it); a fused one gets the boost. `one_per_file` keeps each
    file's best chunk only; `keep` is how many chunks are kept."""
    direct = plan.strategy == "direct"
    chunks, scores, ranks, contributions = rrf_fuse(
        [listed[name].astype(np.uint32) for name, _ in plan.modalities],
        [weight for _, weight in plan.modalities],
        float(plan.rrf_k),
        reader.no_centrality if direct else reader.chunk_centrality,
        chunk_demotion(reader),
        reader.chunk_file if one_per_file else reader.chunk_ids,
        keep,
    )
    return Fused(chunks, scores, ranks, contributions)


def fuse_rankings(scores: Sequence[Sequence[float]], k: float, keep: int) -> list[tuple[int, int]]:
    """Equal-weight RRF over ranked lists, each given by its items' scores in rank order: the
    best `keep` items as (list, rank). Each list weighs 1, so an item earns 1 / (k + rank + 1)
    whatever the size of its list; no boost or demotion applies (each list was ranked on its
    own), and every item is its own group. Items of equal rank tie, and a tie goes to the higher
    score within its list, then to the earlier list: fusion ids are given in that order, and
    `rrf_fuse` breaks ties by the smaller id."""
    entries = sorted((rank, -score, which) for which, ranked in enumerate(scores) for rank, score in enumerate(ranked))
    ids = {(which, rank): i for i, (rank, _, which) in enumerate(entries)}
    ranked_ids = [np.array([ids[which, r] for r in range(len(ranked))], dtype=np.uint32) for which, ranked in enumerate(scores)]
    n = len(entries)
    chosen, _, _, _ = rrf_fuse(
        ranked_ids, [1.0] * len(ranked_ids), k, np.zeros(n, np.float32), np.ones(n, np.float32),
        np.arange(n, dtype=np.uint32), keep,
    )  # fmt: skip
    return [(entries[i][2], entries[i][0]) for i in chosen.tolist()]
