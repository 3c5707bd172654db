"""The semantic modality: nearest chunks by Hamming distance, without bare header chunks."""

from __future__ import annotations

import numpy as np
import pytest

from maguyva import Index, config
from maguyva.query.classify import classify
from maguyva.query.retrievers.base import Query
from maguyva.query.retrievers.semantic import SemanticRetriever, bare_chunks


def _module(name: str) -> str:
    """Three import lines (a chunk of their own) above a function long enough to stay apart."""
    imports = "import os\nimport sys\nimport json\n\n\n"
    body = "".join(f"    total += len(os.listdir(path_{i}))\n" for i in range(24))
    return f"{imports}def {name}_report(path):\n    total = 0\n{body}    return total\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    root = tmp_path_factory.mktemp("semantic")
    for name in ("billing", "invoices", "payments", "refunds"):
        (root / f"{name}.py").write_text(_module(name))
    # A module that only re-exports: its one short chunk is the whole file.
    (root / "exports.py").write_text("from billing import billing_report\nfrom refunds import refunds_report\n")
    return Index.build(root, index_dir=tmp_path_factory.mktemp("semantic-index"))


def test_short_chunks_without_a_definition_are_bare(index):
    reader = index.reader
    bare = bare_chunks(reader)
    exports = next(f.id for f in reader.files if f.path == "exports.py")
    alone = int(reader.file_chunk_offsets[exports])
    headers = [c for c in range(len(bare)) if reader.chunk_symbol[c] is None and c != alone]
    assert len(headers) == 4 and all(reader.chunk_lines[c] <= config.DEFAULT.SEMANTIC_MAX_BARE_LINES for c in headers)
    assert reader.chunk_symbol[alone] is None and reader.chunk_lines[alone] <= config.DEFAULT.SEMANTIC_MAX_BARE_LINES
    # Short, no definition, but all of its file: still an answer.
    assert bare.tolist() == [c in headers for c in range(len(bare))]


def test_bare_chunks_are_never_answers_by_meaning(index):
    reader = index.reader
    retriever = SemanticRetriever(index.searcher.embedder)
    question = "billing invoices payments refunds imports"
    found = retriever.retrieve(reader, Query(question, classify(question)), limit=10)
    # Every chunk that is not bare, and only those, however large the limit.
    assert sorted(c.chunk for c in found) == np.flatnonzero(~bare_chunks(reader)).tolist()
    scores = [c.score for c in found]
    assert scores == sorted(scores, reverse=True)
    assert len(retriever.retrieve(reader, Query(question, classify(question)), limit=2)) == 2
