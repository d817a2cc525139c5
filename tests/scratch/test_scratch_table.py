"""EmbeddingTable's lookup, hand-written backward and SGD step against nn.Embedding and torch."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from rowbook.autograd import RowSparse, Tensor
from rowbook.nn import Embedding
from rowbook.optim import SGD
from rowbook.scratch import EmbeddingTable


def random_problem(seed: int):
    """A small table, ids with repeats (and sometimes the padding row), upstream gradients."""
    rng = random.Random(seed)
    V, d, n = rng.randint(2, 9), rng.randint(1, 5), rng.randint(1, 12)
    padding_idx = rng.choice([None, rng.randrange(V)])
    table = EmbeddingTable(V, d, seed=seed, padding_idx=padding_idx)
    ids = [rng.randrange(V) for _ in range(n)]
    grads = [[rng.gauss(0, 1) for _ in range(d)] for _ in range(n)]
    return table, ids, grads, padding_idx


def library_grad(table, ids, grads, padding_idx, *, sparse: bool, calls: int = 1) -> np.ndarray:
    emb = Embedding.from_pretrained(
        np.array(table.weight, dtype=np.float64),
        freeze=False,
        padding_idx=padding_idx,
        sparse=sparse,
    )
    for _ in range(calls):
        (emb(np.array(ids)) * Tensor(np.array(grads))).sum().backward()  # dL/d lookup = grads
    grad = emb.weight.grad
    if grad is None:
        return np.zeros((len(table.weight), len(table.weight[0])))
    return grad.to_dense() if isinstance(grad, RowSparse) else grad


def torch_grad(table, ids, grads, padding_idx, calls: int = 1) -> np.ndarray:
    weight = torch.tensor(table.weight, dtype=torch.float64, requires_grad=True)
    for _ in range(calls):
        out = torch.nn.functional.embedding(torch.tensor(ids), weight, padding_idx=padding_idx)
        out.backward(torch.tensor(grads, dtype=torch.float64))
    return weight.grad.numpy()


@pytest.mark.parametrize("seed", range(200))
def test_backward_equals_nn_embedding_and_torch(seed):
    table, ids, grads, padding_idx = random_problem(seed)
    emb = Embedding.from_pretrained(np.array(table.weight), padding_idx=padding_idx)
    np.testing.assert_array_equal(np.array(table.lookup(ids)), emb(np.array(ids)).data)
    table.backward(ids, grads)
    ours = np.array(table.grad)
    for sparse in (False, True):
        np.testing.assert_allclose(
            ours, library_grad(table, ids, grads, padding_idx, sparse=sparse), rtol=0, atol=1e-12
        )
    np.testing.assert_allclose(ours, torch_grad(table, ids, grads, padding_idx), rtol=0, atol=1e-12)
    expected_rows = {i for i in ids if i != padding_idx}
    assert table.touched == expected_rows


@pytest.mark.parametrize("seed", range(50))
def test_two_backward_calls_accumulate(seed):
    table, ids, grads, padding_idx = random_problem(seed)
    table.backward(ids, grads)
    table.backward(ids, grads)
    ours = np.array(table.grad)
    np.testing.assert_allclose(
        ours, library_grad(table, ids, grads, padding_idx, sparse=True, calls=2), atol=1e-12
    )
    np.testing.assert_allclose(ours, torch_grad(table, ids, grads, padding_idx, 2), atol=1e-12)


def test_duplicate_ids_sum_and_the_padding_row_gets_nothing():
    table = EmbeddingTable(4, 2, padding_idx=0)
    table.backward([2, 0, 2, 2], [[1.0, 0.0], [5.0, 5.0], [0.5, 1.0], [0.25, 2.0]])
    assert table.grad[2] == [1.75, 3.0]
    assert table.grad[0] == [0.0, 0.0] and table.touched == {2}
    assert table.weight[0] == [0.0, 0.0]


@pytest.mark.parametrize("seed", range(50))
def test_sgd_step_equals_the_library_sparse_sgd_step(seed):
    table, ids, grads, padding_idx = random_problem(seed)
    emb = Embedding.from_pretrained(
        np.array(table.weight), freeze=False, padding_idx=padding_idx, sparse=True
    )
    (emb(np.array(ids)) * Tensor(np.array(grads))).sum().backward()
    SGD(emb.parameters(), lr=0.3).step()
    table.backward(ids, grads)
    table.step(0.3)
    np.testing.assert_allclose(np.array(table.weight), emb.weight.data, rtol=0, atol=1e-12)


def test_zero_grad_clears_the_touched_rows():
    table = EmbeddingTable(5, 3, seed=1)
    table.backward([1, 4], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    table.zero_grad()
    assert table.grad == [[0.0] * 3] * 5 and table.touched == set()
    before = [list(row) for row in table.weight]
    table.step(1.0)
    assert table.weight == before


def test_lookup_returns_copies():
    table = EmbeddingTable(3, 2, seed=0)
    rows = table.lookup([1])
    rows[0][0] = 99.0
    assert table.weight[1][0] != 99.0


def test_the_initial_table_is_seeded_normal():
    a, b = EmbeddingTable(200, 50, seed=3), EmbeddingTable(200, 50, seed=3)
    assert a.weight == b.weight != EmbeddingTable(200, 50, seed=4).weight
    values = np.array(EmbeddingTable(200, 50, std=0.5, seed=3).weight)
    assert abs(values.mean()) < 0.02 and abs(values.std() - 0.5) < 0.02


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: EmbeddingTable(0, 2), "num_embeddings must be a positive int, got 0"),
        (
            lambda: EmbeddingTable(3, 2, padding_idx=3),
            r"padding_idx must be None or an id in \[0, 3\)",
        ),
        (lambda: EmbeddingTable(3, 2).lookup([3]), "id 3 is outside the table's 3 rows"),
        (lambda: EmbeddingTable(3, 2).backward([0, 1], [[0.0, 0.0]]), "2 ids, 1 rows"),
    ],
)
def test_bad_input_is_named(call, match):
    with pytest.raises((ValueError, IndexError), match=match):
        call()
