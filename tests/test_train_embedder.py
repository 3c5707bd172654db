"""The embedder's training loop: its gradient is the loss's, its optimizer and ranking are sound."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

import train_embedder as te  # noqa: E402
from fixture_models import small_model  # noqa: E402


def texts(rng: np.random.Generator, n: int, vocab: int, longest: int) -> te.Texts:
    lengths = rng.integers(1, longest + 1, size=n)
    return te.Texts(rng.integers(0, vocab, size=int(lengths.sum())), lengths)


def batch_loss(table: np.ndarray, queries: te.Texts, docs: te.Texts, rows: np.ndarray, temperature: float) -> float:
    return te.contrastive_step(table, queries, docs, rows, temperature)[0]


def test_the_gradient_of_a_batch_is_the_derivative_of_its_loss():
    rng = np.random.default_rng(7)
    vocab, dims = 40, 6
    table = rng.standard_normal((vocab, dims)).astype(np.float64)
    queries, docs = texts(rng, 8, vocab, 5), texts(rng, 8, vocab, 12)
    rows = np.arange(8)
    loss, touched, grad = te.contrastive_step(table, queries, docs, rows, 0.5)
    dense = np.zeros_like(table)
    dense[touched] = grad
    step = 1e-6
    for token, dim in [(int(touched[0]), 0), (int(touched[len(touched) // 2]), 3), (int(touched[-1]), 5)]:
        up, down = table.copy(), table.copy()
        up[token, dim] += step
        down[token, dim] -= step
        numeric = (batch_loss(up, queries, docs, rows, 0.5) - batch_loss(down, queries, docs, rows, 0.5)) / (2 * step)
        assert dense[token, dim] == pytest.approx(numeric, rel=1e-4, abs=1e-7)
    # A token no text of the batch holds has no gradient.
    assert set(touched.tolist()) == set(np.concatenate([queries.ids, docs.ids]).tolist())


def test_the_fitting_gradient_is_the_derivative_of_the_cosine_distance():
    rng = np.random.default_rng(11)
    vocab, dims = 30, 5
    table = rng.standard_normal((vocab, dims)).astype(np.float64)
    windows = texts(rng, 6, vocab, 9)
    targets = rng.standard_normal((6, dims))
    targets /= np.linalg.norm(targets, axis=1, keepdims=True)
    rows = np.arange(6)
    _, touched, grad = te.fit_step(table, windows, targets, rows)
    dense = np.zeros_like(table)
    dense[touched] = grad
    step = 1e-6
    for token, dim in [(int(touched[0]), 1), (int(touched[-1]), 4)]:
        up, down = table.copy(), table.copy()
        up[token, dim] += step
        down[token, dim] -= step
        numeric = (te.fit_step(up, windows, targets, rows)[0] - te.fit_step(down, windows, targets, rows)[0]) / (2 * step)
        assert dense[token, dim] == pytest.approx(numeric, rel=1e-4, abs=1e-7)


def test_teacher_targets_are_the_teachers_vectors_mapped_into_the_tables_space():
    """When the table's mean rows are a linear image of the teacher's vectors, the targets are
    those rows' directions: fitting to them asks for no move."""
    rng = np.random.default_rng(4)
    table = rng.standard_normal((50, 6)).astype(np.float32)
    windows = texts(rng, 400, 50, 12)
    own = te.embed_all(table, windows)
    teacher = own @ rng.standard_normal((6, 9)).astype(np.float32)
    targets = te.teacher_targets(table, windows, teacher, ridge=1e-9)
    unit = own / np.linalg.norm(own, axis=1, keepdims=True)
    assert np.abs((targets * unit).sum(axis=1) - 1).max() < 1e-3


def test_training_steps_lower_the_loss_of_the_batch_they_learn_from():
    rng = np.random.default_rng(3)
    table = rng.standard_normal((60, 8)).astype(np.float32)
    queries, docs = texts(rng, 16, 60, 4), texts(rng, 16, 60, 10)
    rows = np.arange(16)
    optimizer = te.SparseAdam(table.shape, lr=0.05)
    before = batch_loss(table, queries, docs, rows, 0.1)
    for _ in range(30):
        _, touched, grad = te.contrastive_step(table, queries, docs, rows, 0.1)
        optimizer.step(table, touched, grad)
    assert batch_loss(table, queries, docs, rows, 0.1) < before / 2


def test_each_query_ranks_its_own_document_first_when_they_are_the_same_text():
    rng = np.random.default_rng(5)
    table = rng.standard_normal((200, 64)).astype(np.float32)
    same = texts(rng, 30, 200, 20)
    assert te.hamming_mrr(table, same, same) == pytest.approx(1.0)
    shuffled = te._subset(same, np.roll(np.arange(30), 1))
    assert te.hamming_mrr(table, same, shuffled) < 0.5


def test_held_out_repositories_share_no_pair_with_training():
    records = [{"repo": f"owner/r{i % 7}", "query": str(i)} for i in range(70)]
    train, held = te.split_by_repo(records, 0.3, seed=1)
    assert sorted(train + held) == list(range(70))
    assert not {records[i]["repo"] for i in train} & {records[i]["repo"] for i in held}
    assert len({records[i]["repo"] for i in held}) == 2


def test_the_rotation_is_orthogonal():
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((500, 16)).astype(np.float32)
    rotation = te.itq_rotation(vectors, 10, seed=0)
    assert np.allclose(rotation.T @ rotation, np.eye(16), atol=1e-4)


def test_a_joined_model_keeps_the_starting_codes_beside_the_trained_ones(tmp_path: Path):
    """--concat writes the starting table's columns, then the trained ones: each code is the
    starting model's code followed by the trained part's, so its Hamming distance is the sum."""
    import gzip
    import json

    from maguyva.embed.local import LocalEmbedder

    start = small_model(tmp_path / "start", dims=16, seed=3)
    words = ["retry the request", "parse the config file", "open a socket", "sort the rows", "hash a password",
             "render the page", "merge two lists", "resize an image"]
    pairs = tmp_path / "pairs.jsonl.gz"
    with gzip.open(pairs, "wt") as out:
        for i in range(64):
            query = words[i % len(words)]
            doc = f"src/m{i}.py\ndef f{i}():\n    # {query}\n    return {i}"
            out.write(json.dumps({"repo": f"owner/r{i % 4}", "kind": "docstring", "query": query, "doc": doc}) + "\n")
    joined = tmp_path / "joined"
    assert te.main(["train", "--pairs", str(pairs), "--out", str(joined), "--init", str(start), "--concat",
                    "--epochs", "2", "--batch", "16", "--holdout", "0", "--lr", "0.05"]) == 0
    first, both = LocalEmbedder(start), LocalEmbedder(joined)
    assert both.dims == 32 and json.loads((joined / "config.json").read_text())["dims"] == 32
    texts = words + [f"def f{i}(): return {i}" for i in range(8)]
    codes = np.unpackbits(both.embed_documents(texts), axis=1)
    np.testing.assert_array_equal(codes[:, :16], np.unpackbits(first.embed_documents(texts), axis=1))
    # The second half is the trained table: it moved away from where it started.
    table = np.asarray(both._table, dtype=np.float32)
    assert not np.allclose(table[:, 16:], np.asarray(first._table, dtype=np.float32), atol=1e-2)
    assert "first half of each row" in (joined / "NOTICE").read_text()


def test_identifier_words_split_at_underscores_and_case_changes():
    text = "def parseHTTPRequest_v2(maxRetryCount): return x9Value + __init__"
    assert list(te.identifier_words(text)) == [
        "def", "parse", "http", "request", "max", "retry", "count", "return", "value", "init"
    ]


def test_the_vocabulary_lists_widespread_words_the_model_does_not_know(tmp_path: Path, monkeypatch):
    """A word enters when enough repositories use it and the starting tokenizer lacks it; the most
    widespread come first."""
    import json

    start = small_model(tmp_path / "start", dims=8, seed=1)  # the shipped tokenizer's vocabulary
    specs = []
    for i in range(3):
        name = f"tree{i}"
        src = tmp_path / "trees" / name / "src"
        src.mkdir(parents=True)
        body = "def loadWidget(): return fetchQuux(widget_id)\n" + ("def spinGizmo(): pass\n" if i < 2 else "")
        (src / "main.py").write_text(body)
        specs.append({"repo": f"owner/{name}", "name": name, "commit": "0" * 40, "language": "python"})
    pins = tmp_path / "pins.json"
    pins.write_text(json.dumps({"repos": specs}))
    monkeypatch.setattr(te, "PINS", pins)
    out = tmp_path / "words.txt"

    def learned(min_repos: int) -> list[str]:
        assert te.main(["vocabulary", "--trees", str(tmp_path / "trees"), "--init", str(start),
                        "--min-repos", str(min_repos), "--out", str(out)]) == 0
        return out.read_text().split()

    # load, fetch, spin, def, return, pass and id are known words; widget is the most widespread.
    assert learned(2) == ["widget", "quux", "gizmo"]
    assert learned(3) == ["widget", "quux"]


def test_a_header_document_is_the_files_first_lines_or_with_whole_files_all_of_it(tmp_path: Path):
    tree = tmp_path / "bakery"
    (tree / "ovens").mkdir(parents=True)
    steps = "".join(f"def proof_stage_{i}(dough):\n    return dough + {i}\n\n" for i in range(40))
    (tree / "ovens" / "proofing.py").write_text(
        '"""Timings for every stage a sourdough rests before the oven bakes it."""\n\n' + steps
    )
    spec = {"repo": "owner/bakery", "name": "bakery"}

    def header_doc(whole_files: bool) -> str:
        (pair,) = [p for p in te.repo_pairs(spec, tree, whole_files) if p["kind"] == "header"]
        assert pair["query"].startswith("Timings for every stage a sourdough rests")
        return pair["doc"]

    first, whole = header_doc(False), header_doc(True)
    assert first.startswith("ovens/proofing.py\n") and whole.startswith("ovens/proofing.py\n")
    assert "Timings" not in whole and "proof_stage_39" in whole  # the header left out, the rest all there
    # The first DOC_LINES lines below the header: twenty stages of three lines, the blank line first.
    assert "proof_stage_19" in first and "proof_stage_20" not in first
