"""The rank stage in one call: the fused candidates of a question answered with places to read,
adjusted by the hand-set signals and, with a model, scored by the learned weights; with the
choice of the chunk each file shows and each result's explanation."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from maguyva.index.reader import IndexReader
from maguyva.query.classify import Classification
from maguyva.query.fuse import Fused
from maguyva.query.rank import learned as rank
from maguyva.query.rank.signals import Adjustment, FusedParts, Signals, rerank
from maguyva.query.retrievers.base import Candidate

#: Called with each question's candidates, their features and hand-set scores (for training).
Recorder = Callable[[str, Classification, list[int], np.ndarray, "np.ndarray | None"], None]


@dataclass(frozen=True, slots=True)
class Ranked:
    """The candidates' scores in fusion's units, what the hand-set signals changed, each
    candidate's standing within its file (None: each file shows its best chunk), and each
    result's features with their parts of the score (None: the hand-set ranking explains by
    `adjustments`)."""

    scored: dict[int, float]
    adjustments: dict[int, Adjustment]
    preference: dict[int, float] | None
    explain: Callable[[int], dict[str, float]] | None


def rank_fused(
    reader: IndexReader,
    query: str,
    classification: Classification,
    fused_lists: Fused,
    names: list[str],
    lists: dict[str, list[Candidate]],
    listed_chunks: dict[str, np.ndarray],
    scored: dict[int, float],
    signals: Signals,
    ranker: rank.RankModel | None,
    record: Recorder | None,
    top_k: int,
) -> Ranked:
    """The fused candidates ranked: by `ranker`'s weights, or with none by the hand-set signals."""
    row_of = {chunk: i for i, chunk in enumerate(fused_lists.chunks.tolist())}
    chunk_list = list(row_of)
    fused = FusedParts(fused_lists.chunks, fused_lists.contributions, fused_lists.scores)
    adjustments = rerank(reader, query, classification, scored, signals, fused)
    # The fused chunks in fusion's order, then those a signal brought.
    candidates = chunk_list + [c for c in adjustments if c not in row_of]
    hand = None
    if ranker is None or record is not None:  # a learned model has no use for them
        hand = np.fromiter((adjustments[c].apply(scored.get(c, 0.0)) for c in candidates),
                           dtype=np.float64, count=len(candidates))
    if ranker is None and record is None:
        assert hand is not None
        return Ranked(dict(zip(candidates, hand.tolist())), adjustments, None, None)
    group = rank.group_of(classification)
    # Recording for training needs every feature; a model, only those it ranks by (those of its
    # choice within a file come once the files shown are known).
    needed = None if record is not None or ranker is None else ranker.ranking_needed(group)
    listed = rank.listed(lists, listed_chunks)
    x = rank.features(reader, query, classification, candidates, scored, adjustments, fused, names, listed, needed)
    if record is not None:
        record(query, classification, candidates, x, hand)
    if ranker is None:
        assert hand is not None
        return Ranked(dict(zip(candidates, hand.tolist())), adjustments, None, None)
    # Features are in units of the best fused score: scores go back to fusion's units,
    # comparable across repositories as the hand-set scores are.
    unit = rank.score_unit(scored)
    ranked = ranker.score(group, x)
    preference: dict[int, float] | None = None
    if ranker.choice_needed(group):
        # Only the files shown have a chunk to choose.
        file_ids = reader.chunk_file[np.asarray(candidates, dtype=np.int64)]
        rows = rank.rows_of_shown_files(file_ids, ranked, candidates, top_k)
        if needed is not None:
            rank.chunk_evidence(x, reader, query, candidates, listed, ranker.choice_needed(group) - needed, rows)
        standing = ranker.preference(group, x[rows])
        assert standing is not None  # the group has choice weights
        preference = dict.fromkeys(candidates, -math.inf)
        preference.update(zip(np.asarray(candidates)[rows].tolist(), standing.tolist()))
    row_of_candidate = {chunk: i for i, chunk in enumerate(candidates)}
    model = ranker

    def explain(chunk: int) -> dict[str, float]:
        return model.contributions(group, unit * x[row_of_candidate[chunk]])

    return Ranked(dict(zip(candidates, (unit * ranked).tolist())), adjustments, preference, explain)
