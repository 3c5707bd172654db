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


# -- a file's path beside its chunks (the quick preset) ------------------------------------------

_TRADES = ("kiln", "glaze", "loom", "anvil", "forge", "lathe", "quarry", "tannery", "mill", "apiary")
_TASKS = ("firing_schedule", "stock_count", "repair_log", "price_list", "shift_roster")


@pytest.fixture(scope="module")
def workshop(tmp_path_factory):
    """Fifty modules whose paths name a trade and a task, with bodies of assorted lengths."""
    root = tmp_path_factory.mktemp("workshop")
    rng = np.random.default_rng(7)
    for n, (trade, task) in enumerate((t, k) for t in _TRADES for k in _TASKS):
        folder = root / trade
        folder.mkdir(exist_ok=True)
        steps = "".join(f"    ledger.append(({i}, '{rng.choice(_TASKS)}'))\n" for i in range(int(rng.integers(3, 40))))
        (folder / f"{task}.py").write_text(
            f"import json\n\n\ndef {task}_{n}(ledger):\n{steps}    return ledger\n\n\n"
            f"def summary_{n}(ledger):\n    return json.dumps(ledger)\n"
        )
    return Index.build(root, index_dir=tmp_path_factory.mktemp("workshop-index"))


def _every_chunk_scored(reader, embedder, question: str, weight: float, allowed) -> list[int]:
    """Every chunk the modality may answer with, ordered by its distance plus `weight` times its
    path's (the path's words embedded as a text), nearest first, the lower chunk on a tie."""
    def distances(codes, code):
        return np.unpackbits(codes ^ code, axis=1).sum(axis=1)

    code = embedder.embed_query(question)
    words = [f.path.replace("/", " ").replace("_", " ").replace(".", " ") for f in reader.files]
    by_file = weight * distances(embedder.embed_documents(words), code)
    totals = distances(reader.codes, code) + by_file[reader.chunk_file]
    eligible = ~bare_chunks(reader) if allowed is None else allowed & ~bare_chunks(reader)
    chunks = np.flatnonzero(eligible)
    return chunks[np.lexsort((chunks, totals[chunks]))].tolist()


@pytest.mark.parametrize("weight", [0.1, 0.5, 3.0])
@pytest.mark.parametrize("limit", [1, 4, 25])
@pytest.mark.parametrize("filtered", [False, True])
def test_the_nearest_by_chunk_and_path_are_those_of_every_chunk_scored(workshop, weight, limit, filtered):
    reader = workshop.reader
    retriever = SemanticRetriever(workshop.searcher.embedder)
    allowed = None
    if filtered:  # the trades of the first half
        allowed = np.isin(reader.chunk_file, [f.id for f in reader.files if f.path.split("/")[0] in _TRADES[:5]])
    for question in ("kiln firing schedule", "how is the loom repaired", "price of anvils", "json ledger summary"):
        query = Query(question, classify(question), allowed=allowed, path_weight=weight)
        found = retriever.retrieve(reader, query, limit)
        expected = _every_chunk_scored(reader, workshop.searcher.embedder(), question, weight, allowed)[:limit]
        assert [c.chunk for c in found] == expected
        scores = [c.score for c in found]
        assert scores == sorted(scores, reverse=True) and all(0 <= s <= 1 for s in scores)


def test_only_the_quick_preset_weighs_paths(workshop):
    question = "kiln firing schedule"
    quick = workshop.searcher.search(question, preset="quick")
    assert config.DEFAULT.QUICK_PATH_WEIGHT > 0
    from maguyva.query import route

    classification = classify(question)
    assert route.request(question, classification, "quick").path_weight == config.DEFAULT.QUICK_PATH_WEIGHT
    assert route.request(question, classification, "default").path_weight == 0
    assert route.request(question, classification, "thorough").path_weight == 0
    # Without the weight the quick preset is the chunks' own distances again.
    plain = Index.open(workshop.root, index_dir=workshop.index_dir, tuning=config.Tuning(QUICK_PATH_WEIGHT=0.0))
    alone = plain.search(question, preset="quick")
    retriever = SemanticRetriever(plain.searcher.embedder)
    nearest = retriever.retrieve(plain.reader, Query(question, classification), 50)
    expected = _first_per_file(plain.reader, [c.chunk for c in nearest])
    assert [h.chunk for h in alone.results] == expected[: len(alone.results)]
    assert [h.path for h in quick.results][0].startswith("kiln/")
    plain.close()


def _first_per_file(reader, chunks: list[int]) -> list[int]:
    """The first of `chunks` from each file, in order."""
    first: dict[int, int] = {}
    for chunk in chunks:
        first.setdefault(int(reader.chunk_file[chunk]), chunk)
    return list(first.values())


class _CountingEmbedder:
    """The index's embedder, counting the texts it is asked to embed as documents."""

    def __init__(self, inner):
        self.inner, self.embedded = inner, []
        self.provider, self.model, self.dims = inner.provider, inner.model, inner.dims

    def embed_documents(self, texts):
        self.embedded.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


def test_a_new_layout_embeds_only_the_paths_the_last_one_lacked(tmp_path):
    from maguyva.query.retrievers.semantic import _PathCodes

    root = tmp_path / "orchard"
    (root / "trees").mkdir(parents=True)
    for name in ("pruning_calendar", "graft_records", "harvest_tally"):
        (root / "trees" / f"{name}.py").write_text(f"def {name}(rows):\n    return sorted(rows)\n")
    first = Index.build(root, index_dir=tmp_path / "index")
    counting = _CountingEmbedder(first.searcher.embedder())
    paths = _PathCodes()
    before = paths.of(first.reader, counting)
    assert sorted(counting.embedded) == [
        "trees graft records py", "trees harvest tally py", "trees pruning calendar py"
    ]
    (root / "trees" / "cider_press.py").write_text("def press(apples):\n    return len(apples)\n")
    (root / "trees" / "graft_records.py").unlink()
    second = Index.build(root, index_dir=tmp_path / "index")
    counting.embedded.clear()
    after = paths.of(second.reader, counting)
    assert counting.embedded == ["trees cider press py"]
    fresh = _PathCodes().of(second.reader, first.searcher.embedder())
    np.testing.assert_array_equal(after, fresh)
    kept = "trees/harvest_tally.py"
    row_now, row_before = ({f.path: f.id for f in index.reader.files} for index in (second, first))
    np.testing.assert_array_equal(after[row_now[kept]], before[row_before[kept]])
    # The same layout again: nothing embedded.
    counting.embedded.clear()
    assert paths.of(second.reader, counting) is after and counting.embedded == []
    first.close(), second.close()
