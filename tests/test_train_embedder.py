"""The embedder's training loop: its gradient is the loss's, its optimizer and ranking are sound."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

import train_embedder as te  # noqa: E402


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
