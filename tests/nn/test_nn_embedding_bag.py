"""EmbeddingBag: the fast kernels held to the plain formulation ``M @ E``, and the semantics.

PyTorch parity over every option combination is in test_nn_embedding_bag_torch.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook.autograd import Tensor
from rowbook.autograd.gradcheck import gradcheck
from rowbook.autograd.sparse import scatter_add_rows, scatter_add_rows_reference
from rowbook.nn import EmbeddingBag
from rowbook.nn import functional as F
from rowbook.nn.bag import (
    bag_bounds,
    bag_matrix_reference,
    bag_max,
    bag_max_backward,
    bag_of_positions,
    bag_scatter_add,
    bag_sum,
    embedding_bag_reference,
)

V, D = 12, 5


def random_bags(seed: int, n: int = 40, num_bags: int = 9):
    """Random ids and non-decreasing offsets starting at 0: empty bags included."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, V, size=n)
    cuts = np.sort(rng.integers(0, n + 1, size=num_bags - 1))
    return ids, np.concatenate([[0], cuts]), rng


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("padding_idx", [None, 0, 7])
@pytest.mark.parametrize("mode", ["sum", "mean", "max", "weighted"])
def test_kernels_equal_the_plain_formulation(mode, padding_idx, seed):
    ids, offsets, rng = random_bags(seed)
    E = rng.normal(size=(V, D))
    psw = rng.normal(size=len(ids)) if mode == "weighted" else None
    flat, bounds = bag_bounds(ids, offsets, include_last_offset=False)
    reduce = "sum" if mode == "weighted" else mode
    expected = embedding_bag_reference(E, flat, bounds, reduce, padding_idx, psw)
    if reduce == "max":
        out, _ = bag_max(E, flat, bounds, padding_idx)
        np.testing.assert_array_equal(out, expected)  # max only copies entries
    else:
        out, _ = bag_sum(E, flat, bounds, padding_idx, psw, mean=reduce == "mean")
        np.testing.assert_allclose(out, expected, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("mode", ["sum", "mean", "weighted"])
def test_gradient_is_the_transposed_bag_matrix(mode, sparse, seed):
    """dE = M.T @ G, computed as a scatter-add: dense and row-sparse alike."""
    ids, offsets, rng = random_bags(seed)
    E = Tensor(rng.normal(size=(V, D)), requires_grad=True)
    psw = rng.normal(size=len(ids)) if mode == "weighted" else None
    reduce = "sum" if mode == "weighted" else mode
    out = F.embedding_bag(
        ids, E, offsets, mode=reduce, per_sample_weights=psw, padding_idx=3, sparse=sparse
    )
    G = rng.normal(size=out.shape)
    out.backward(G)
    flat, bounds = bag_bounds(ids, offsets, False)
    M = bag_matrix_reference(flat, bounds, V, 3, psw, mean=reduce == "mean")  # (B, V)
    grad = E.grad.to_dense() if sparse else E.grad
    np.testing.assert_allclose(grad, M.T @ G, rtol=1e-13, atol=1e-14)
    if sparse:
        touched = np.unique(flat[flat != 3])
        np.testing.assert_array_equal(E.grad.indices, touched)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backward_kernels_equal_their_references_bit_for_bit(dtype):
    """The bag scatter equals scatter_add_rows on materialised rows; max equals np.add.at."""
    ids, offsets, rng = random_bags(0, n=300, num_bags=40)
    flat, bounds = bag_bounds(ids, offsets, False)
    bags = bag_of_positions(bounds, len(flat))
    G = rng.normal(size=(40, D)).astype(dtype)
    scale = rng.uniform(0.1, 2, size=len(flat))
    fast = bag_scatter_add(flat, bags, G, V, scale)
    slow = scatter_add_rows(flat, G[bags], V, scale=scale)
    np.testing.assert_array_equal(fast.indices, slow.indices)
    np.testing.assert_array_equal(fast.values, slow.values)
    np.testing.assert_array_equal(
        fast.to_dense(), scatter_add_rows_reference(flat, G[bags], V, scale=scale)
    )
    _, argmax = bag_max(rng.normal(size=(V, D)).astype(dtype), flat, bounds)
    reference = np.zeros((V, D), dtype)
    bag, col = np.nonzero(argmax >= 0)
    np.add.at(reference, (argmax[bag, col], col), G[bag, col])
    np.testing.assert_array_equal(bag_max_backward(argmax, G, V), reference)


@pytest.mark.parametrize("padding_idx", [None, 2])
def test_per_sample_weights_and_table_pass_gradcheck(padding_idx):
    rng = np.random.default_rng(0)
    ids, offsets = np.array([2, 5, 5, 1, 2, 0, 4]), np.array([0, 3, 3, 5])
    E = Tensor(rng.normal(size=(6, 3)), requires_grad=True)
    psw = Tensor(rng.normal(size=7), requires_grad=True)
    assert gradcheck(
        lambda e, w: F.embedding_bag(
            ids, e, offsets, mode="sum", per_sample_weights=w, padding_idx=padding_idx
        ),
        [E, psw],
    )
    if padding_idx is not None:  # padding positions get a zero weight gradient
        psw.grad = None
        F.embedding_bag(
            ids, E, offsets, mode="sum", per_sample_weights=psw, padding_idx=padding_idx
        ).sum().backward()
        np.testing.assert_array_equal(psw.grad[ids == padding_idx], 0.0)


@pytest.mark.parametrize("mode", ["mean", "max"])
def test_table_gradcheck_for_mean_and_max(mode):
    rng = np.random.default_rng(1)
    ids = np.array([[0, 3, 3], [2, 2, 1], [4, 4, 4]])
    E = Tensor(rng.normal(size=(5, 4)), requires_grad=True)
    assert gradcheck(lambda e: F.embedding_bag(ids, e, mode=mode, padding_idx=4), [E])


def test_mean_leaves_padding_out_of_the_count_and_empty_bags_give_zeros():
    E = np.arange(12.0).reshape(6, 2)
    ids, offsets = [0, 1, 3, 0, 0, 5], [0, 3, 3, 5]  # bags: [0 1 3], [], [0 0], [5]
    out = F.embedding_bag(ids, E, offsets, mode="mean", padding_idx=0).numpy()
    np.testing.assert_array_equal(out, [(E[1] + E[3]) / 2, [0, 0], [0, 0], E[5]])
    out = F.embedding_bag(ids, E, offsets, mode="max", padding_idx=0).numpy()
    np.testing.assert_array_equal(out, [np.maximum(E[1], E[3]), [0, 0], [0, 0], E[5]])


def test_max_sends_the_gradient_to_the_first_maximal_row_per_column():
    E = Tensor(np.array([[1.0, 9.0], [5.0, 2.0], [5.0, 9.0]]), requires_grad=True)
    out = F.embedding_bag([[0, 1, 2]], E, mode="max")
    np.testing.assert_array_equal(out.numpy(), [[5.0, 9.0]])
    out.backward(np.array([[10.0, 20.0]]))
    np.testing.assert_array_equal(E.grad, [[0.0, 20.0], [10.0, 0.0], [0.0, 0.0]])
    theirs = torch.tensor(E.numpy(), requires_grad=True)
    torch.nn.functional.embedding_bag(torch.tensor([[0, 1, 2]]), theirs, mode="max").backward(
        torch.tensor([[10.0, 20.0]], dtype=torch.float64)
    )
    np.testing.assert_array_equal(E.grad, theirs.grad.numpy())


def test_trailing_ids_after_the_last_offset_are_ignored():
    """include_last_offset: ids after offsets[-1] belong to no bag, in every mode."""
    rng = np.random.default_rng(3)
    E = rng.normal(size=(V, D)) * 3
    ids = np.array([1, 2, 3, 4, 9, 10, 11])
    for mode in ("sum", "mean", "max"):
        full, cut = Tensor(E.copy(), requires_grad=True), Tensor(E.copy(), requires_grad=True)
        kw = {"mode": mode, "include_last_offset": True, "max_norm": 1.0}
        out = F.embedding_bag(ids, full, [0, 2, 4], **kw)
        expected = F.embedding_bag(ids[:4], cut, [0, 2, 4], **kw)
        np.testing.assert_array_equal(out.numpy(), expected.numpy())
        out.sum().backward()
        expected.sum().backward()
        np.testing.assert_array_equal(full.grad, cut.grad)
        np.testing.assert_array_equal(full.data, cut.data)  # trailing rows not renormalised


def test_fixed_size_bags_of_zero_ids_give_zeros():
    """(B, 0) ids are B empty bags (torch 2.13 raises 'step must be nonzero' here)."""
    out = F.embedding_bag(np.zeros((3, 0), dtype=np.int64), np.ones((4, 2)), mode="mean")
    np.testing.assert_array_equal(out.numpy(), np.zeros((3, 2)))
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        torch.nn.functional.embedding_bag(torch.zeros(3, 0, dtype=torch.long), torch.ones(4, 2))


def test_bag_bounds_and_positions():
    _, bounds = bag_bounds(np.array([5, 6, 7, 8]), [0, 1, 1, 3], include_last_offset=True)
    np.testing.assert_array_equal(bounds, [0, 1, 1, 3])
    np.testing.assert_array_equal(bag_of_positions(bounds, 4), [0, 2, 2, -1])


# -- the layer ----------------------------------------------------------------------------


def test_layer_init_forward_and_from_pretrained():
    bag = EmbeddingBag(10, 4, mode="sum", padding_idx=-1, rng=np.random.default_rng(9))
    expected = np.random.default_rng(9).normal(size=(10, 4)).astype(np.float32)
    expected[9] = 0
    np.testing.assert_array_equal(bag.weight.data, expected)
    assert bag.padding_idx == 9 and bag.weight.dtype == np.float32
    out = bag([1, 9, 2, 3], offsets=[0, 2])
    np.testing.assert_array_equal(out.numpy(), [expected[1], expected[2] + expected[3]])
    table = np.ones((3, 2))
    frozen = EmbeddingBag.from_pretrained(table, padding_idx=0)
    assert not frozen.weight.requires_grad and frozen.weight.data[0].tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"mode": "sum", "padding_idx": -3},
        {"max_norm": 1.5, "norm_type": 1.0},
        {"scale_grad_by_freq": True, "mode": "max"},
        {"include_last_offset": True, "sparse": True},
    ],
)
def test_repr_matches_torch(kwargs):
    if kwargs.get("mode") == "max":
        kwargs = {**kwargs, "scale_grad_by_freq": False}
    ours = EmbeddingBag(10, 3, rng=0, **kwargs)
    theirs = torch.nn.EmbeddingBag(10, 3, **kwargs)
    assert repr(ours) == repr(theirs)
