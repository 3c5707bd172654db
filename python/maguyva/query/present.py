"""Presenting results: the answers inside a chunk, one result per file, and each result's span
and snippet."""

from __future__ import annotations

import numpy as np

from maguyva.index.reader import IndexReader
from maguyva.index.store import shown_path
from maguyva.query.intents import ANSWER_SPAN_MODALITY
from maguyva.query.rank.signals import Adjustment
from maguyva.query.results import Hit, ModalityPart
from maguyva.query.retrievers.base import Candidate

#: Lines of a result's span shown as its snippet.
SNIPPET_LINES = 8
#: Characters of each snippet line shown; a longer line is cut, marked with an ellipsis.
SNIPPET_LINE_CHARS = 400


def hit(
    reader: IndexReader,
    chunk: int,
    score: float,
    parts: dict[str, ModalityPart],
    adjustment: Adjustment | None = None,
    span: tuple[int, int] | None = None,
    features: dict[str, float] | None = None,
    placed_by: int | None = None,
) -> Hit:
    """The result showing `chunk`, or only the lines `span` of it; `placed_by`, the chunk of
    the same file whose score gave the result its place, when it is another."""
    file_id = int(reader.chunk_file[chunk])
    start, end = span or (int(reader.chunk_start[chunk]), int(reader.chunk_end[chunk]))
    lines = reader.lines_between(file_id, start, min(end, start - 1 + SNIPPET_LINES))
    return Hit(
        path=shown_path(reader.files[file_id].path),
        start_line=start,
        end_line=end,
        score=score,
        symbol=reader.chunk_symbol[chunk],
        modalities=parts,
        # A minified or generated file can hold a megabyte on one line: a snippet shows the
        # start of each line, on every surface.
        snippet="\n".join(line if len(line) <= SNIPPET_LINE_CHARS else line[:SNIPPET_LINE_CHARS] + "…"
                           for line in lines),
        chunk=chunk,
        adjustments=adjustment.explain() if adjustment else {},
        features=features or {},
        placed_by=None if placed_by is None else (int(reader.chunk_start[placed_by]), int(reader.chunk_end[placed_by])),
    )


def answer_spans(intent: str, lists: dict[str, list[Candidate]]) -> dict[int, tuple[tuple[int, int], ...]]:
    """chunk -> the answers inside it, for the intents whose answers are finer than chunks."""
    modality = ANSWER_SPAN_MODALITY.get(intent)
    if modality is None or modality not in lists:
        return {}
    return {c.chunk: c.spans for c in lists[modality] if c.spans}


def best_per_file(
    order: list[int], chunk_file: np.ndarray, preference: dict[int, float] | None = None
) -> tuple[list[int], dict[int, int]]:
    """`order` with one chunk of each file first, each file where its best chunk is, then the
    files' other chunks in their order: those are shown only when there are fewer files than
    results asked for (a small repository), rather than answering with fewer results. A file
    shows its best chunk, or with `preference` (chunk -> its standing among its file's
    candidates) its most preferred one; the second value maps each chunk shown in place of its
    file's best to that best chunk."""
    if not order:
        return [], {}
    chunks = np.asarray(order, dtype=np.int64)
    files = chunk_file[chunks]
    position = np.arange(len(chunks))
    # Each file's first chunk in `order` places it; the chunk it shows is its most preferred one
    # (of equals, the first in `order`).
    _, placing = np.unique(files, return_index=True)
    placing.sort()
    if preference is None:
        showing = placing
    else:
        standing = np.fromiter((preference[c] for c in order), dtype=np.float64, count=len(order))
        by_file = np.lexsort((position, -standing, files))
        _, first = np.unique(files[by_file], return_index=True)
        shown_of_file = dict(zip(files[by_file[first]].tolist(), by_file[first].tolist()))
        showing = np.array([shown_of_file[f] for f in files[placing].tolist()], dtype=np.int64)
    rest = np.ones(len(chunks), dtype=bool)
    rest[showing] = False
    shown, placers = chunks[showing].tolist(), chunks[placing].tolist()
    placed_by = {chunk: placer for chunk, placer in zip(shown, placers) if chunk != placer}
    return shown + chunks[rest].tolist(), placed_by
