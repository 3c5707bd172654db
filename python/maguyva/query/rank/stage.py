"""The rank stage: the fused candidates of a question answered with places to read, ranked one
way or another behind one protocol (`Ranking`): by the hand-set signals (`HandSetRanking`), or
by a learned model's weights over the candidates' features (`LearnedRanking`), with the choice of
the chunk each file shows and each result's explanation. Both start from the same adjustments
of the hand-set signals; either can record every candidate's features for training."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

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
class Question:
    """What a ranking is given: one question's fused candidates and what made them."""

    reader: IndexReader
    query: str
    classification: Classification
    fused: Fused
    #: The modalities of the fused contributions' columns, in order.
    modalities: list[str]
    #: Each modality's candidates, best first, and their chunk ids as arrays.
    lists: dict[str, list[Candidate]]
    listed_chunks: dict[str, np.ndarray]
    #: The fused score of each fused chunk.
    scored: dict[int, float]
    top_k: int


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


class Ranking(Protocol):
    """A way of ranking a question's fused candidates."""

    #: What the response says ranked it ("hand", or the model's name).
    @property
    def name(self) -> str: ...

    def rank(self, question: Question, signals: Signals, record: Recorder | None = None) -> Ranked:
        """The candidates of `question` ranked, the `signals` applied; `record`, when given,
        receives every candidate's features and hand-set score."""
        ...


@dataclass(frozen=True, slots=True)
class _Signalled:
    """What the hand-set signals made of a question: each candidate's adjustment, the
    candidates (the fused chunks in fusion's order, then those a signal brought) and the fused
    parts the features read."""

    adjustments: dict[int, Adjustment]
    candidates: list[int]
    parts: FusedParts


def _signalled(question: Question, signals: Signals) -> _Signalled:
    fused = question.fused
    row_of = {chunk: i for i, chunk in enumerate(fused.chunks.tolist())}
    parts = FusedParts(fused.chunks, fused.contributions, fused.scores)
    adjustments = rerank(question.reader, question.query, question.classification, question.scored, signals, parts)
    candidates = list(row_of) + [c for c in adjustments if c not in row_of]
    return _Signalled(adjustments, candidates, parts)


def _hand_scores(question: Question, signalled: _Signalled) -> np.ndarray:
    """Each candidate's score under the hand-set signals."""
    adjustments, scored = signalled.adjustments, question.scored
    return np.fromiter(
        (adjustments[c].apply(scored.get(c, 0.0)) for c in signalled.candidates),
        dtype=np.float64,
        count=len(signalled.candidates),
    )


def _features(
    question: Question, signalled: _Signalled, listed: rank.Listed, needed: frozenset[str] | None
) -> np.ndarray:
    return rank.features(
        question.reader, question.query, question.classification, signalled.candidates, question.scored,
        signalled.adjustments, signalled.parts, question.modalities, listed, needed,
    )  # fmt: skip


def _record(
    question: Question, signalled: _Signalled, listed: rank.Listed, record: Recorder, hand: np.ndarray
) -> np.ndarray:
    """Every feature of the candidates, handed to `record` with their hand-set scores."""
    x = _features(question, signalled, listed, None)
    record(question.query, question.classification, signalled.candidates, x, hand)
    return x


class HandSetRanking:
    """The hand-set signals' numbers (`signals.rerank`), kept for comparison."""

    name = "hand"

    def rank(self, question: Question, signals: Signals, record: Recorder | None = None) -> Ranked:
        signalled = _signalled(question, signals)
        hand = _hand_scores(question, signalled)
        if record is not None:
            _record(question, signalled, rank.listed(question.lists, question.listed_chunks), record, hand)
        return Ranked(dict(zip(signalled.candidates, hand.tolist())), signalled.adjustments, None, None)


class LearnedRanking:
    """A linear model's weights over the candidates' features (`RankModel`), with its choice of
    the chunk each file shows."""

    def __init__(self, model: rank.RankModel):
        self.model = model

    @property
    def name(self) -> str:
        return self.model.name

    def rank(self, question: Question, signals: Signals, record: Recorder | None = None) -> Ranked:
        model, reader = self.model, question.reader
        signalled = _signalled(question, signals)
        candidates = signalled.candidates
        group = rank.group_of(question.classification)
        listed = rank.listed(question.lists, question.listed_chunks)
        # Recording for training needs every feature; a model, only those it ranks by (those of its
        # choice within a file come once the files shown are known).
        needed = None if record is not None else model.ranking_needed(group)
        if record is not None:
            x = _record(question, signalled, listed, record, _hand_scores(question, signalled))
        else:
            x = _features(question, signalled, listed, needed)
        # Features are in units of the best fused score: scores go back to fusion's units,
        # comparable across repositories as the hand-set scores are.
        unit = rank.score_unit(question.scored)
        ranked = model.score(group, x)
        preference: dict[int, float] | None = None
        if model.choice_needed(group):
            # Only the files shown have a chunk to choose.
            file_ids = reader.chunk_file[np.asarray(candidates, dtype=np.int64)]
            rows = rank.rows_of_shown_files(file_ids, ranked, candidates, question.top_k)
            if needed is not None:
                rank.chunk_evidence(x, reader, question.query, candidates, listed, model.choice_needed(group) - needed, rows)
            standing = model.preference(group, x[rows])
            assert standing is not None  # the group has choice weights
            preference = dict.fromkeys(candidates, -math.inf)
            preference.update(zip(np.asarray(candidates)[rows].tolist(), standing.tolist()))
        row_of_candidate = {chunk: i for i, chunk in enumerate(candidates)}

        def explain(chunk: int) -> dict[str, float]:
            return model.contributions(group, unit * x[row_of_candidate[chunk]])

        return Ranked(dict(zip(candidates, (unit * ranked).tolist())), signalled.adjustments, preference, explain)
