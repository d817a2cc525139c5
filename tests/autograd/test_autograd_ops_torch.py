"""Values and gradients of the ops against torch 2.13, float32 and float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rowbook.autograd import Tensor, ops

TOL = {np.float32: {"rtol": 1e-5, "atol": 1e-6}, np.float64: {"rtol": 1e-12, "atol": 1e-13}}
IDS = np.array([[1, 1], [0, 3], [1, 4]])


def _data(spec, seed):
    rng = np.random.default_rng(seed)
    if isinstance(spec, np.ndarray):
        return spec
    kind, shape = spec if isinstance(spec[0], str) else ("normal", spec)
    return rng.uniform(0.5, 2.0, shape) if kind == "pos" else rng.standard_normal(shape)


CASES = {
    "add_broadcast": (ops.add, torch.add, [(4, 1, 3), (2, 1)]),
    "sub_broadcast": (ops.sub, torch.sub, [(3,), (2, 3)]),
    "mul_broadcast": (ops.mul, torch.mul, [(3, 1), (1, 4)]),
    "div_broadcast": (ops.div, torch.div, [(2, 3), ("pos", (3,))]),
    "neg": (ops.neg, torch.neg, [(2, 3)]),
    "pow_scalar": (lambda a: a**3, lambda a: a**3, [(2, 3)]),
    "pow_tensor": (ops.pow, torch.pow, [("pos", (2, 3)), (3,)]),
    "rpow": (lambda b: 2.0**b, lambda b: 2.0**b, [(4,)]),
    "pow_zero_base": (
        ops.pow,
        torch.pow,
        [np.array([0.0, 0.0, 0.0, 1.5]), np.array([0.0, 2.0, 3.0, 0.0])],
    ),
    "matmul_2d": (ops.matmul, torch.matmul, [(3, 5), (5, 4)]),
    "matmul_batch_broadcast": (ops.matmul, torch.matmul, [(2, 1, 3, 5), (4, 5, 2)]),
    "matmul_1d_3d": (ops.matmul, torch.matmul, [(5,), (2, 5, 3)]),
    "matmul_3d_1d": (ops.matmul, torch.matmul, [(2, 3, 5), (5,)]),
    "matmul_1d_1d": (ops.matmul, torch.matmul, [(5,), (5,)]),
    "sum_axes": (lambda a: a.sum(axis=(0, 2)), lambda a: a.sum(dim=(0, 2)), [(2, 3, 4)]),
    "sum_keepdims": (
        lambda a: a.sum(-1, keepdims=True),
        lambda a: a.sum(-1, keepdim=True),
        [(2, 3, 4)],
    ),
    "mean_all": (lambda a: a.mean(), torch.mean, [(2, 3, 4)]),
    "mean_axis": (lambda a: a.mean(axis=1), lambda a: a.mean(dim=1), [(2, 3, 4)]),
    "max_axis": (lambda a: a.max(axis=-1), lambda a: a.amax(dim=-1), [(2, 3, 4)]),
    "max_ties": (
        lambda a: a.max(axis=1),
        lambda a: a.amax(dim=1),
        [np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [0.0, -1.0, 5.0]])],
    ),
    "max_all_ties": (lambda a: a.max(), torch.amax, [np.array([[4.0, 1.0], [4.0, 4.0]])]),
    "maximum_ties": (
        ops.maximum,
        torch.maximum,
        [np.array([1.0, 2.0, 3.0, -1.0]), np.array([1.0, 0.0, 5.0, -1.0])],
    ),
    "reshape": (lambda a: a.reshape(4, -1), lambda a: a.reshape(4, -1), [(2, 3, 4)]),
    "transpose": (lambda a: a.transpose(2, 0, 1), lambda a: a.permute(2, 0, 1), [(2, 3, 4)]),
    "concatenate": (
        lambda a, b: ops.concatenate([a, b], axis=1),
        lambda a, b: torch.cat([a, b], dim=1),
        [(2, 3), (2, 4)],
    ),
    "stack": (
        lambda a, b: ops.stack([a, b], axis=-1),
        lambda a, b: torch.stack([a, b], dim=-1),
        [(2, 3), (2, 3)],
    ),
    "getitem_duplicates": (lambda a: a[[0, 2, 0, 0]], lambda a: a[[0, 2, 0, 0]], [(3, 4)]),
    "getitem_none_int": (lambda a: a[:, None, 1], lambda a: a[:, None, 1], [(3, 4)]),
    "getitem_step_ellipsis": (lambda a: a[..., ::2], lambda a: a[..., ::2], [(2, 3, 5)]),
    "getitem_two_arrays": (
        lambda a: a[[0, 0, 2], [1, 1, 3]],
        lambda a: a[[0, 0, 2], [1, 1, 3]],
        [(3, 4)],
    ),
    "gather_2d_ids": (lambda w: ops.gather(w, IDS), lambda w: w[torch.from_numpy(IDS)], [(5, 3)]),
    "exp": (ops.exp, torch.exp, [(3, 4)]),
    "log": (ops.log, torch.log, [("pos", (3, 4))]),
    "sqrt": (ops.sqrt, torch.sqrt, [("pos", (3, 4))]),
    "tanh": (ops.tanh, torch.tanh, [(3, 4)]),
    "sigmoid": (ops.sigmoid, torch.sigmoid, [(3, 4)]),
    "relu_with_zeros": (ops.relu, torch.relu, [np.array([-1.0, 0.0, 0.0, 2.0])]),
    "softmax": (ops.softmax, lambda a: torch.softmax(a, -1), [(3, 4)]),
    "softmax_axis0": (lambda a: ops.softmax(a, 0), lambda a: torch.softmax(a, 0), [(3, 4)]),
    "log_softmax": (ops.log_softmax, lambda a: torch.log_softmax(a, -1), [(3, 4)]),
    "logsigmoid": (ops.logsigmoid, F.logsigmoid, [(3, 4)]),
    "where": (
        lambda a, b: ops.where(np.array([[True], [False]]), a, b),
        lambda a, b: torch.where(torch.tensor([[True], [False]]), a, b),
        [(2, 3), (3,)],
    ),
}


@pytest.fixture
def leaf_grad_dtypes(monkeypatch):
    """The dtypes of the gradients reaching leaves, before the leaf casts them."""
    seen = []
    original = Tensor._accumulate_leaf

    def spy(self, g, adopted=None):
        seen.append(g.dtype)
        return original(self, g, adopted)

    monkeypatch.setattr(Tensor, "_accumulate_leaf", spy)
    return seen


def _compare_with_torch(ours_fn, theirs_fn, arrays, dtype):
    ours_in = [Tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    theirs_in = [torch.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    ours, theirs = ours_fn(*ours_in), theirs_fn(*theirs_in)
    assert ours.dtype == dtype
    np.testing.assert_allclose(ours.data, theirs.detach().numpy(), **TOL[dtype])
    seed = np.random.default_rng(9).standard_normal(ours.shape).astype(dtype)
    ours.backward(seed)
    theirs.backward(torch.from_numpy(seed))
    for o, t in zip(ours_in, theirs_in, strict=True):
        assert o.grad.dtype == dtype
        np.testing.assert_allclose(o.grad, t.grad.numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", CASES)
def test_op_matches_torch(name, dtype, leaf_grad_dtypes):
    ours_fn, theirs_fn, specs = CASES[name]
    arrays = [_data(spec, seed) for seed, spec in enumerate(specs)]
    _compare_with_torch(ours_fn, theirs_fn, arrays, dtype)
    # No silent float64 detour for float32 graphs (it costs a pass and a cast per leaf).
    assert leaf_grad_dtypes and set(leaf_grad_dtypes) == {np.dtype(dtype)}


EXTREME = np.array([[-1000.0, -20.0, 0.0, 20.0, 1000.0], [-1000.0, -1000.0, -1000.0, -999.0, 3.0]])
STABLE = {
    "softmax": (ops.softmax, lambda a: torch.softmax(a, -1)),
    "log_softmax": (ops.log_softmax, lambda a: torch.log_softmax(a, -1)),
    "logsigmoid": (ops.logsigmoid, F.logsigmoid),
    "sigmoid": (ops.sigmoid, torch.sigmoid),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", STABLE)
def test_numerically_stable_for_large_inputs(name, dtype):
    ours_fn, theirs_fn = STABLE[name]
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        out = ours_fn(Tensor(EXTREME.astype(dtype)))
    assert np.all(np.isfinite(out.data))
    _compare_with_torch(ours_fn, theirs_fn, [EXTREME], dtype)


def test_astype_matches_torch_and_casts_the_gradient_back():
    x = np.random.default_rng(1).standard_normal(4).astype(np.float32)
    ours_x, theirs_x = Tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours, theirs = ours_x.astype(np.float64) * 3.0, theirs_x.double() * 3.0
    assert ours.dtype == np.float64
    ours.backward(np.arange(4.0))
    theirs.backward(torch.arange(4.0, dtype=torch.float64))
    assert ours_x.grad.dtype == np.float32
    np.testing.assert_array_equal(ours_x.grad, theirs_x.grad.numpy())
