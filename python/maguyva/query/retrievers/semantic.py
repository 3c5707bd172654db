"""The semantic modality: the query's binary embedding against every chunk's, by Hamming distance."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from maguyva import config
from maguyva._core import hamming_top_k
from maguyva.embed import Embedder
from maguyva.index.reader import IndexReader, per_reader
from maguyva.query.retrievers.base import Candidate, Query


@per_reader
def bare_chunks(reader: IndexReader) -> np.ndarray:
    """Per chunk, whether it is a short chunk with no definition in a file of several chunks
    (computed once per index)."""
    no_symbol = np.fromiter((s is None for s in reader.chunk_symbol), dtype=bool, count=len(reader.chunk_symbol))
    alone = np.diff(reader.file_chunk_offsets)[reader.chunk_file] == 1
    bare: np.ndarray = no_symbol & (reader.chunk_lines <= config.current().SEMANTIC_MAX_BARE_LINES) & ~alone
    return bare


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
        bare = bare_chunks(reader)
        if query.allowed is not None:
            # Only the chunks the filters keep are compared: a filtered question scans less.
            rows = np.flatnonzero(query.allowed & ~bare)
            if not len(rows):
                return []
            # Read in place through the kernel's allow-list, not gathered into a copy first.
            found, distances = hamming_top_k(reader.codes, code, min(limit, len(rows)), allow=rows)
            bits = reader.codes.shape[1] * 8
            return [Candidate(r, 1.0 - d / bits) for r, d in zip(found.tolist(), distances.tolist())]
        # Nearest chunks, more of them until `limit` remain once the bare ones are left out.
        wanted = limit
        while True:
            wanted = min(len(bare), 2 * wanted)
            rows, distances = hamming_top_k(reader.codes, code, wanted)
            keep = ~bare[rows]
            if int(keep.sum()) >= limit or wanted == len(bare):
                break
        bits = reader.codes.shape[1] * 8
        rows, distances = rows[keep][:limit], distances[keep][:limit]
        return [Candidate(r, 1.0 - d / bits) for r, d in zip(rows.tolist(), distances.tolist())]
