"""Binary ops broadcast by NumPy's rules, with gradients summed back as torch does."""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import mutually_broadcastable_shapes

from rowbook.autograd import Tensor, ops
from rowbook.autograd.gradcheck import gradcheck

# name -> (ours, torch, numpy, whether the first / second operand must be positive)
BINARY = {
    "add": (ops.add, torch.add, np.add, False, False),
    "sub": (ops.sub, torch.sub, np.subtract, False, False),
    "mul": (ops.mul, torch.mul, np.multiply, False, False),
    "div": (ops.div, torch.div, np.divide, False, True),
    "pow": (ops.pow, torch.pow, np.power, True, False),
    "maximum": (ops.maximum, torch.maximum, np.maximum, False, False),
}

SHAPES = mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3)


def _operands(shapes, seed, positive):
    rng = np.random.default_rng(seed)
    return [
        np.asarray(rng.uniform(0.5, 2.0, s) if pos else rng.standard_normal(s))
        for s, pos in zip(shapes.input_shapes, positive, strict=True)
    ]


@settings(max_examples=60, deadline=None)
@given(shapes=SHAPES, name=st.sampled_from(sorted(BINARY)), seed=st.integers(0, 2**32 - 1))
def test_binary_op_broadcasts_like_numpy_and_torch(shapes, name, seed):
    ours_fn, torch_fn, numpy_fn, *positive = BINARY[name]
    a, b = _operands(shapes, seed, positive)
    ta, tb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    out = ours_fn(ta, tb)
    assert out.shape == shapes.result_shape
    np.testing.assert_array_equal(out.data, numpy_fn(a, b))
    seed_grad = np.asarray(np.random.default_rng(seed).standard_normal(out.shape))
    out.backward(seed_grad)
    xa, xb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch_fn(xa, xb).backward(torch.from_numpy(seed_grad))
    assert ta.grad.shape == a.shape and tb.grad.shape == b.shape
    np.testing.assert_allclose(ta.grad, xa.grad.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tb.grad, xb.grad.numpy(), rtol=1e-12, atol=1e-13)


@settings(max_examples=15, deadline=None)
@given(shapes=SHAPES, name=st.sampled_from(sorted(BINARY)), seed=st.integers(0, 2**32 - 1))
def test_binary_op_broadcast_gradcheck(shapes, name, seed):
    ours_fn, _, _, *positive = BINARY[name]
    a, b = _operands(shapes, seed, positive)
    assert gradcheck(ours_fn, [Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)])


@settings(max_examples=25, deadline=None)
@given(
    shapes=mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=3, max_side=3),
    seed=st.integers(0, 2**32 - 1),
)
def test_where_broadcasts_condition_and_both_branches(shapes, seed):
    rng = np.random.default_rng(seed)
    c_shape, a_shape, b_shape = shapes.input_shapes
    cond = np.asarray(rng.random(c_shape) < 0.5)
    a, b = np.asarray(rng.standard_normal(a_shape)), np.asarray(rng.standard_normal(b_shape))
    ta, tb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    out = ops.where(cond, ta, tb)
    np.testing.assert_array_equal(out.data, np.where(cond, a, b))
    g = np.asarray(rng.standard_normal(out.shape))
    out.backward(g)
    xa, xb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    torch.where(torch.from_numpy(cond), xa, xb).backward(torch.from_numpy(g))
    np.testing.assert_allclose(ta.grad, xa.grad.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tb.grad, xb.grad.numpy(), rtol=1e-12, atol=1e-13)


@settings(max_examples=30, deadline=None)
@given(
    batch=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=3),
    n=st.integers(1, 3),
    k=st.integers(1, 3),
    m=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_matmul_broadcasts_batch_dimensions(batch, n, k, m, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch.input_shapes[0], n, k))
    b = rng.standard_normal((*batch.input_shapes[1], k, m))
    ta, tb = Tensor(a, requires_grad=True), Tensor(b, requires_grad=True)
    out = ta @ tb
    g = rng.standard_normal(out.shape)
    out.backward(g)
    xa, xb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    (xa @ xb).backward(torch.from_numpy(g))
    np.testing.assert_allclose(ta.grad, xa.grad.numpy(), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(tb.grad, xb.grad.numpy(), rtol=1e-12, atol=1e-13)
