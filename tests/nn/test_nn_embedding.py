"""Embedding: lookup == one-hot matmul, Linear on one-hot, the cat sat on the mat example.

PyTorch parity over every option combination is in test_nn_embedding_torch.py; the bad
inputs are in test_nn_functional.py.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch

from rowbook.autograd import RowSparse, Tensor, scatter_add_rows
from rowbook.nn import Embedding, Linear
from rowbook.nn import functional as F

ID_SHAPES = [(6,), (3, 4), (), (0,), (2, 0, 3), (2, 3, 2)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape", ID_SHAPES, ids=str)
def test_lookup_equals_one_hot_matmul_bit_for_bit(shape, dtype):
    """Each output entry is one product by 1.0 plus exact zeros, so even float32 is exact."""
    rng = np.random.default_rng(1)
    V, d = 11, 5
    E = rng.normal(size=(V, d)).astype(dtype)
    ids = rng.integers(0, V, size=shape)
    looked_up = F.embedding(ids, E).numpy()
    onehot = F.one_hot(ids, V, dtype=dtype).numpy()  # (*, V)
    assert looked_up.shape == (*shape, d) and looked_up.dtype == dtype
    np.testing.assert_array_equal(looked_up, onehot @ E)  # NumPy/BLAS matmul
    np.testing.assert_array_equal(looked_up, (F.one_hot(ids, V, dtype=dtype) @ Tensor(E)).numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_lookup_gradient_equals_one_hot_transpose_matmul(dtype):
    """dE = one_hot(ids).T @ G: duplicates sum; exact with distinct ids."""
    rng = np.random.default_rng(2)
    V, d = 8, 3
    for ids, exact in [(np.array([5, 1, 7, 2]), True), (rng.integers(0, V, size=(4, 6)), False)]:
        G = rng.normal(size=(*ids.shape, d)).astype(dtype)
        E = Tensor(rng.normal(size=(V, d)).astype(dtype), requires_grad=True)
        F.embedding(ids, E).backward(G)
        onehot = F.one_hot(ids, V, dtype=dtype).numpy().reshape(-1, V)
        expected = onehot.T @ G.reshape(-1, d)
        if exact:
            np.testing.assert_array_equal(E.grad, expected)
        else:
            rtol = 1e-6 if dtype == np.float32 else 1e-14
            np.testing.assert_allclose(E.grad, expected, rtol=rtol)


def test_linear_on_one_hot_with_weight_E_transposed_is_the_lookup():
    """nn.Linear(V, d, bias=False) with weight E.T on one-hot rows == Embedding."""
    torch.manual_seed(123)
    E = torch.nn.Embedding(4, 5).weight.detach().numpy().copy()  # torch's one-hot example table
    ids = np.array([2, 3, 1])
    emb = Embedding.from_pretrained(E.copy(), freeze=False)
    linear = Linear(4, 5, bias=False)
    linear.weight.data[...] = E.T
    out_emb = emb(ids)
    out_lin = linear(F.one_hot(ids, 4, dtype=np.float32))
    np.testing.assert_array_equal(out_emb.numpy(), out_lin.numpy())
    np.testing.assert_array_equal(out_emb.numpy(), E[ids])
    G = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32)
    out_emb.backward(G)
    out_lin.backward(G)
    np.testing.assert_array_equal(emb.weight.grad, linear.weight.grad.T)


def test_linear_and_lookup_gradients_agree_with_duplicate_ids():
    rng = np.random.default_rng(4)
    V, d = 6, 3
    E = rng.normal(size=(V, d))
    ids = np.array([[1, 4, 1], [4, 4, 0]])
    emb = Embedding.from_pretrained(E.copy(), freeze=False)
    linear = Linear(V, d, bias=False, dtype=np.float64)
    linear.weight.data[...] = E.T
    G = rng.normal(size=(2, 3, d))
    emb(ids).backward(G)
    linear(F.one_hot(ids, V, dtype=np.float64)).backward(G)
    np.testing.assert_allclose(emb.weight.grad, linear.weight.grad.T, rtol=1e-14, atol=1e-15)


# -- the cat sat on the mat example -------------------------------------------------------

VOCAB = {"<pad>": 0, "<unk>": 1, "the": 2, "cat": 3, "sat": 4, "on": 5, "mat": 6}
TABLE = [  # the hand-written 7 x 4 table, as decimal strings for exact fractions
    ["0.00", "0.00", "0.00", "0.00"],
    ["0.10", "0.20", "0.30", "0.40"],
    ["0.20", "0.10", "0.05", "0.30"],
    ["0.80", "0.60", "0.20", "0.10"],
    ["0.40", "0.70", "0.90", "0.20"],
    ["0.30", "0.30", "0.10", "0.50"],
    ["0.70", "0.50", "0.30", "0.20"],
]
TARGETS = ["0", "1", "1", "0.5", "0", "1"]  # one value per position, repeated over d = 4


def exact_cat_sat():
    """Loss and dL/dE as exact fractions: L = mean((E[ids] - T)^2) over 6 x 4 entries."""
    ids = [VOCAB[w] for w in "the cat sat on the mat".split()]
    E = [[Fraction(x) for x in row] for row in TABLE]
    diff = [[E[i][j] - Fraction(t) for j in range(4)] for i, t in zip(ids, TARGETS, strict=True)]
    loss = sum(x * x for row in diff for x in row) / 24
    grad = [[Fraction(0)] * 4 for _ in E]
    for i, row in zip(ids, diff, strict=True):
        for j in range(4):
            grad[i][j] += 2 * row[j] / 24
    return ids, loss, grad


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
def test_cat_sat_on_the_mat_worked_example(dtype):
    ids, exact_loss, exact_grad = exact_cat_sat()
    assert ids == [2, 3, 4, 5, 2, 6]
    emb = Embedding(7, 4, padding_idx=0, dtype=dtype, rng=0)
    emb.weight.data[...] = np.array(TABLE, dtype=float)
    target = np.repeat(np.array(TARGETS, dtype=float)[:, None], 4, axis=1).astype(dtype)
    out = emb(ids)  # (6, 4)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    tol = {"rtol": 1e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-14, "atol": 1e-16}

    assert round(loss.item(), 4) == 0.1977
    np.testing.assert_allclose(loss.item(), float(exact_loss), **tol)
    assert exact_loss == Fraction(4745, 24000)
    grad = emb.weight.grad
    np.testing.assert_allclose(grad, np.array(exact_grad, dtype=float), **tol)
    # the rows the seed states, to 4 dp and as exact fractions: each position adds
    # 2 (e - t) / 24; 'the' (target 0) sits at two positions, 'cat' (target 1) at one
    the, cat = np.round(grad[2].astype(float), 4), np.round(grad[3].astype(float), 4)
    np.testing.assert_array_equal(the, [0.0333, 0.0167, 0.0083, 0.0500])
    np.testing.assert_array_equal(cat, [-0.0167, -0.0333, -0.0667, -0.0750])
    assert exact_grad[2] == [Fraction(x) / 6 for x in ("0.2", "0.1", "0.05", "0.3")]
    assert exact_grad[3] == [Fraction(x) / 12 for x in ("-0.2", "-0.4", "-0.8", "-0.9")]
    np.testing.assert_array_equal(grad[0], 0)  # <pad>: padding_idx (and never looked up)
    np.testing.assert_array_equal(grad[1], 0)  # <unk>: never looked up


def test_cat_sat_padding_row_gets_no_gradient_even_when_looked_up():
    emb = Embedding.from_pretrained(np.array(TABLE, dtype=float), freeze=False, padding_idx=0)
    emb([0, 2, 0]).sum().backward()
    np.testing.assert_array_equal(emb.weight.grad[0], 0)
    np.testing.assert_array_equal(emb.weight.grad[2], 1)


# -- the layer ----------------------------------------------------------------------------


def test_init_is_standard_normal_from_the_generator():
    emb = Embedding(50, 8, rng=np.random.default_rng(42))
    expected = np.random.default_rng(42).normal(size=(50, 8)).astype(np.float32)
    np.testing.assert_array_equal(emb.weight.data, expected)
    big = Embedding(2000, 50, rng=1).weight.data
    assert abs(big.mean()) < 0.01 and abs(big.std() - 1) < 0.01  # torch: init.normal_(0, 1)
    assert emb.weight.dtype == np.float32 and emb.weight.requires_grad


@pytest.mark.parametrize("padding_idx", [0, 3, -1, -10])
def test_padding_idx_normalised_and_zeroed_like_torch(padding_idx):
    emb = Embedding(10, 3, padding_idx=padding_idx, rng=0)
    assert emb.padding_idx == torch.nn.Embedding(10, 3, padding_idx=padding_idx).padding_idx
    np.testing.assert_array_equal(emb.weight.data[emb.padding_idx], 0)
    assert np.count_nonzero(np.all(emb.weight.data == 0, axis=1)) == 1


def test_from_pretrained_shares_memory_keeps_padding_row_and_freezes():
    table = np.arange(12.0).reshape(4, 3)
    emb = Embedding.from_pretrained(table, padding_idx=1)
    np.testing.assert_array_equal(emb.weight.data[1], [3.0, 4.0, 5.0])  # not zeroed
    assert not emb.weight.requires_grad and not emb([1, 2]).requires_grad  # freeze=True
    table[2, 0] = 99.0
    assert emb([2]).numpy()[0, 0] == 99.0  # shares memory, as torch does
    trainable = Embedding.from_pretrained(table, freeze=False)
    assert trainable.weight.requires_grad and trainable.weight.dtype == np.float64
    weight = torch.tensor(table)
    assert torch.nn.Embedding.from_pretrained(weight, padding_idx=1).weight[1].tolist() == [3, 4, 5]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"padding_idx": -2},
        {"max_norm": 1.0, "norm_type": 1.0},
        {"scale_grad_by_freq": True},
        {"sparse": True},
        {"max_norm": 2, "norm_type": float("inf"), "padding_idx": 0},
    ],
)
def test_repr_matches_torch(kwargs):
    ours = Embedding(10, 3, rng=0, **kwargs)
    theirs = torch.nn.Embedding(10, 3, **kwargs)
    assert ours.extra_repr() == theirs.extra_repr()
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@pytest.mark.parametrize("sparse", [False, True])
def test_duplicate_ids_sum_and_gradients_accumulate_across_calls(sparse):
    """``grad[ids] += g`` keeps one of the duplicates; the scatter-add must sum them."""
    rng = np.random.default_rng(5)
    emb = Embedding(6, 2, sparse=sparse, dtype=np.float64, rng=0)
    ids = np.array([4, 1, 4, 4, 0])
    G = rng.normal(size=(5, 2))
    emb(ids).backward(G)
    reference = np.zeros((6, 2))
    np.add.at(reference, ids, G)
    assert isinstance(emb.weight.grad, RowSparse if sparse else np.ndarray)
    grad = emb.weight.grad.to_dense() if sparse else emb.weight.grad
    np.testing.assert_allclose(grad, reference, rtol=1e-15)
    buggy = np.zeros((6, 2))
    buggy[ids] += G
    assert not np.allclose(grad, buggy)  # the bug this rules out
    emb(ids).backward(G)  # a second backward adds to the first
    again = emb.weight.grad.to_dense() if sparse else emb.weight.grad
    np.testing.assert_allclose(again, 2 * reference, rtol=1e-15)
    if sparse:
        np.testing.assert_array_equal(emb.weight.grad.indices, [0, 1, 4])


def test_scale_grad_by_freq_divides_each_position_by_its_count():
    emb = Embedding(5, 2, scale_grad_by_freq=True, dtype=np.float64, rng=0)
    ids = np.array([3, 3, 3, 1])
    emb(ids).backward(np.ones((4, 2)))
    counts = np.array([3, 3, 3, 1.0])
    expected = scatter_add_rows(ids, np.ones((4, 2)), 5, scale=1 / counts).to_dense()
    np.testing.assert_allclose(emb.weight.grad, expected)
    np.testing.assert_allclose(emb.weight.grad[[1, 3]], 1.0)


def test_max_norm_renormalises_in_place_before_the_lookup():
    table = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    emb = Embedding.from_pretrained(table, max_norm=1.0)
    out = emb([0, 1, 0]).numpy()
    scale = 1.0 / (5.0 + 1e-7)  # max_norm / (norm + 1e-7), only where norm > max_norm
    np.testing.assert_allclose(table[0], [3 * scale, 4 * scale], rtol=1e-15)
    np.testing.assert_array_equal(table[1], [0.3, 0.4])  # norm 0.5 <= 1: untouched
    np.testing.assert_array_equal(table[2], [6.0, 8.0])  # not looked up: untouched
    np.testing.assert_array_equal(out, table[[0, 1, 0]])


@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (1, 1, 1, 1)], ids=str)
def test_any_id_shape(shape):
    emb = Embedding(4, 3, rng=0)
    ids = np.zeros(shape, dtype=np.int64)
    out = emb(ids)
    assert out.shape == (*shape, 3)
    assert torch.nn.Embedding(4, 3)(torch.from_numpy(ids)).shape == out.shape


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint64])
def test_any_integer_dtype_is_accepted(dtype):
    emb = Embedding(4, 3, rng=0)
    out = emb(np.array([3, 0], dtype=dtype)).numpy()
    np.testing.assert_array_equal(out, emb.weight.data[[3, 0]])
