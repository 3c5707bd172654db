"""The semantic modality: the query's binary embedding against every chunk's, by Hamming distance."""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from maguyva import config
from maguyva._core import hamming_distances, hamming_top_k
from maguyva.embed import Embedder
from maguyva.index.reader import FileLayout, IndexReader, per_reader
from maguyva.query.retrievers.base import Candidate, Query

#: What separates the words of a path ("src/fetch/git_ssh.lua" -> "src fetch git ssh lua").
_PATH_SEPARATORS = re.compile(r"[/\\._\-]+")


@per_reader
def bare_chunks(reader: IndexReader) -> np.ndarray:
    """Per chunk, whether it is a short chunk with no definition in a file of several chunks
    (computed once per index)."""
    no_symbol = np.fromiter((s is None for s in reader.chunk_symbol), dtype=bool, count=len(reader.chunk_symbol))
    alone = np.diff(reader.file_chunk_offsets)[reader.chunk_file] == 1
    bare: np.ndarray = no_symbol & (reader.chunk_lines <= config.current().SEMANTIC_MAX_BARE_LINES) & ~alone
    return bare


class _PathCodes:
    """Per file id, the code of its path's words, made by the embedder that answers questions:
    kept while the files' layout lives, so an edit in place does not embed the paths again, and
    a new layout (a file added, removed or renamed) embeds only the paths the last one lacked."""

    def __init__(self) -> None:
        self._made: weakref.WeakKeyDictionary[FileLayout, dict[str, np.ndarray]] = weakref.WeakKeyDictionary()
        #: Per index folder and model, its last layout's paths (path -> row) and their codes.
        self._last: dict[tuple[str, str], tuple[dict[str, int], np.ndarray]] = {}
        self._lock = threading.Lock()

    def of(self, reader: IndexReader, embedder: Embedder) -> np.ndarray:
        layout, model = reader.layout, embedder.model
        with self._lock:
            known = self._made.get(layout, {}).get(model)
            if known is None:
                known = self._codes(str(reader.index_dir), [row[0] for row in layout.files], embedder)
                self._made.setdefault(layout, {})[model] = known
        return known

    def _codes(self, index_dir: str, paths: list[str], embedder: Embedder) -> np.ndarray:
        last_of = (index_dir, embedder.model)
        row_of, last = self._last.get(last_of, ({}, np.zeros((0, embedder.dims // 8), np.uint8)))
        before = np.fromiter((row_of.get(path, -1) for path in paths), dtype=np.int64, count=len(paths))
        codes = np.zeros((len(paths), embedder.dims // 8), np.uint8)
        kept = before >= 0
        codes[kept] = last[before[kept]]
        new = np.flatnonzero(~kept)
        if len(new):
            codes[new] = embedder.embed_documents([_PATH_SEPARATORS.sub(" ", paths[i]) for i in new.tolist()])
        self._last[last_of] = ({path: row for row, path in enumerate(paths)}, codes)
        return codes


_path_codes = _PathCodes()


class SemanticRetriever:
    """Nearest chunks by Hamming distance between packed sign-bit codes."""

    name = "semantic"

    def __init__(self, embedder: Callable[[], Embedder]):
        # The embedder is made on first use, so queries that never need it never load it.
        self._embedder = embedder

    def retrieve(self, reader: IndexReader, query: Query, limit: int) -> list[Candidate]:
        if len(reader.codes) == 0:
            return []
        embedder = self._embedder()
        code = embedder.embed_query(query.text)
        bare = bare_chunks(reader)
        # A distance in bits, or in thousandths of a bit with each chunk's file path's share added.
        units, by_path = 1.0, {}
        if query.path_weight > 0 and embedder.provider == "local":
            units = _UNITS_PER_BIT * (1.0 + query.path_weight)
            by_path = _path_offsets(reader, embedder, code, query.path_weight)
        bits = reader.codes.shape[1] * 8
        if query.allowed is not None:
            # Only the chunks the filters keep are compared: a filtered question scans less.
            rows = np.flatnonzero(query.allowed & ~bare)
            if not len(rows):
                return []
            # Read in place through the kernel's allow-list, not gathered into a copy first.
            found, distances = hamming_top_k(reader.codes, code, min(limit, len(rows)), allow=rows, **by_path)
        else:
            # Nearest chunks, more of them until `limit` remain once the bare ones are left out.
            wanted = limit
            while True:
                wanted = min(len(bare), 2 * wanted)
                found, distances = hamming_top_k(reader.codes, code, wanted, **by_path)
                keep = ~bare[found]
                if int(keep.sum()) >= limit or wanted == len(bare):
                    break
            found, distances = found[keep][:limit], distances[keep][:limit]
        return [Candidate(r, 1.0 - d / (bits * units)) for r, d in zip(found.tolist(), distances.tolist())]


@per_reader
def _chunk_files(reader: IndexReader) -> np.ndarray:
    """Per chunk, its file id, as the kernel's groups (uint32)."""
    return np.ascontiguousarray(reader.chunk_file, dtype=np.uint32)


#: With paths weighed, a bit of a chunk's own distance counts this many units, and its path's
#: weighted distance is rounded to a whole number of units (a thousandth of a bit).
_UNITS_PER_BIT = 1000


def _path_offsets(reader: IndexReader, embedder: Embedder, code: np.ndarray, weight: float) -> dict[str, Any]:
    """The kernel's arguments that add `weight` times each chunk's file path's distance to the
    question to the chunk's own (a question describing a file often says what its path does),
    in units of `_UNITS_PER_BIT`: one scan of the codes still finds the nearest."""
    path_distances = hamming_distances(_path_codes.of(reader, embedder), code)
    offsets = np.rint(path_distances * (weight * _UNITS_PER_BIT)).astype(np.uint32)
    return {"groups": _chunk_files(reader), "offsets": offsets, "scale": _UNITS_PER_BIT}
