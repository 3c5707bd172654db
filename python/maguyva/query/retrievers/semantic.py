"""The semantic modality: the query's binary embedding against every chunk's, by Hamming distance."""

from __future__ import annotations

from collections.abc import Callable

from maguyva._core import hamming_top_k
from maguyva.embed import Embedder
from maguyva.index.reader import IndexReader
from maguyva.query.retrievers.base import Candidate, Query


class SemanticRetriever:
    """Nearest chunks by Hamming distance between packed sign-bit codes."""

    name = "semantic"

    def __init__(self, embedder: Callable[[], Embedder]):
        # The embedder is made on first use, so queries that never need it never load it.
        self._embedder = embedder

    def retrieve(self, reader: IndexReader, query: Query, limit: int) -> list[Candidate]:
        if len(reader.codes) == 0:
            return []
        code = self._embedder().embed_query(query.text)
        rows, distances = hamming_top_k(reader.codes, code, limit)
        bits = reader.codes.shape[1] * 8
        return [Candidate(r, 1.0 - d / bits) for r, d in zip(rows.tolist(), distances.tolist())]
