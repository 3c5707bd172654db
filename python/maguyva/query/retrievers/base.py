"""The one protocol every retrieval modality implements."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Protocol

import numpy as np

from maguyva.index.reader import IndexReader
from maguyva.query.classify import Classification


class Candidate(NamedTuple):
    """A chunk a modality found, with that modality's own score (higher is better). Scores of
    different modalities are not comparable; fusion uses only the order. A tuple: a question
    makes a hundred or more, and a frozen dataclass costs twice as much to make."""

    chunk: int
    score: float
    #: The answers inside the chunk, when they are finer than it, as (first, last) lines in
    #: order: the calling functions of a reference, the matching lines of an exact string.
    spans: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Query:
    """A question as the retrievers see it: its text and classification, and what the plan asks
    of them (`maguyva.query.route.request`), so that no retriever reads intent names."""

    text: str
    classification: Classification
    #: A literal to look for alone, as written (its case first); None: the question's terms.
    literal: str | None = None
    #: A regular expression to match alone (`/pattern/`), in place of any literal or terms.
    pattern: str | None = None
    #: The chunks the question's filters keep (`maguyva.query.filters`), as a bool array over
    #: chunks; None: every chunk.
    allowed: np.ndarray | None = None
    #: The question's terms are matched with their case only (`case:yes`).
    case_sensitive: bool = False
    #: Whether an answer is each line holding the terms, not the chunk around them.
    line_spans: bool = False
    #: Edges to walk from the named symbol to its dependants (1: its direct references); None:
    #: no walk, the graph ranks what surrounds the names instead.
    walk_depth: int | None = None
    #: How much a chunk's file path counts beside the chunk in the semantic modality's distance
    #: (`QUICK_PATH_WEIGHT` in the quick preset); 0: the chunk's own code alone.
    path_weight: float = 0.0


class Retriever(Protocol):
    """A retrieval modality: "semantic", "text", "structural" or "graph". One whose work can run
    on the core's threads while the caller runs the others also has `start(reader, query,
    limit)`, which returns a function that finishes the answer (the text modality's)."""

    name: str

    def retrieve(self, reader: IndexReader, query: Query, limit: int) -> list[Candidate]:
        """At most `limit` chunks of `reader`'s index, best first."""
        ...

