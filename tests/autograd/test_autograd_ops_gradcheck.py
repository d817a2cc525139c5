"""A float64 numerical gradient check for every op in ``rowbook.autograd.ops``."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.autograd import Tensor, ops
from rowbook.autograd.gradcheck import gradcheck


def _t(shape, kind: str = "normal", seed: int = 0) -> Tensor:
    """A float64 leaf: ``normal`` values, ``pos`` in [0.5, 2], or ``spread`` (no near-ties)."""
    rng = np.random.default_rng(seed + 7 * len(shape) + sum(shape))
    if kind == "pos":
        data = rng.uniform(0.5, 2.0, shape)
    elif kind == "spread":  # distinct values at least 0.01 apart: max/relu/maximum are smooth
        n = int(np.prod(shape))
        data = (rng.permutation(n) - n / 2 + 0.5) * 0.1 + rng.uniform(0.01, 0.02, n)
        data = data.reshape(shape)
    else:
        data = rng.standard_normal(shape)
    return Tensor(data, requires_grad=True)


ARITHMETIC = {
    "add": (ops.add, [(2, 3), (2, 3)]),
    "add_broadcast": (ops.add, [(4, 1, 3), (2, 1)]),
    "add_scalar": (lambda a: a + 2.5, [(3,)]),
    "radd_scalar": (lambda a: 2.5 + a, [(3,)]),
    "sub": (ops.sub, [(2, 3), (3,)]),
    "rsub_scalar": (lambda a: 1.0 - a, [(2, 2)]),
    "mul": (ops.mul, [(2, 3), (2, 3)]),
    "mul_broadcast": (ops.mul, [(3, 1), (1, 4)]),
    "mul_self": (lambda a: a * a, [(3,)]),
    "div": (ops.div, [(2, 3), ("pos", (2, 3))]),
    "div_broadcast": (ops.div, [(2, 3), ("pos", (3,))]),
    "rdiv_scalar": (lambda a: 2.0 / a, [("pos", (4,))]),
    "neg": (ops.neg, [(2, 3)]),
    "neg_operator": (lambda a: -a, [(5,)]),
    "pow_scalar_2": (lambda a: a**2, [(2, 3)]),
    "pow_scalar_3": (lambda a: a**3, [(4,)]),
    "pow_scalar_half": (lambda a: a**0.5, [("pos", (4,))]),
    "pow_scalar_negative": (lambda a: a**-1.5, [("pos", (4,))]),
    "pow_tensor_both": (ops.pow, [("pos", (2, 3)), (2, 3)]),
    "pow_tensor_broadcast": (ops.pow, [("pos", (2, 3)), (3,)]),
    "rpow_scalar_base": (lambda b: 2.0**b, [(4,)]),
    "maximum": (ops.maximum, [("spread", (2, 3)), ("spread", (2, 3))]),
    "maximum_broadcast": (ops.maximum, [("spread", (4, 3)), ("spread", (3,))]),
    "maximum_scalar": (lambda a: ops.maximum(a, 0.05), [("spread", (6,))]),
    "where": (lambda a, b: ops.where(np.array([True, False, True]), a, b), [(2, 3), (2, 3)]),
    "where_broadcast": (lambda a, b: ops.where(np.array([[True], [False]]), a, b), [(2, 3), (3,)]),
    "astype_identity": (lambda a: a.astype(np.float64), [(3,)]),
}

MATMUL = {
    "1d@1d": [(3,), (3,)],
    "2d@2d": [(2, 3), (3, 4)],
    "1d@2d": [(3,), (3, 4)],
    "2d@1d": [(2, 3), (3,)],
    "3d@2d": [(5, 2, 3), (3, 4)],
    "3d@3d": [(2, 2, 3), (2, 3, 4)],
    "batch_broadcast": [(2, 1, 2, 3), (3, 3, 2)],
    "1d@3d": [(3,), (2, 3, 4)],
    "3d@1d": [(2, 4, 3), (3,)],
}

AXES = [None, 0, -1, (0, 2), (-1, -3), (1,)]

SHAPE = {
    "reshape": (lambda a: a.reshape(3, 2, 2), [(2, 6)]),
    "reshape_minus_one": (lambda a: a.reshape(-1), [(2, 3, 2)]),
    "transpose_default": (lambda a: ops.transpose(a), [(2, 3, 4)]),
    "transpose_axes": (lambda a: ops.transpose(a, (1, 0, 2)), [(2, 3, 4)]),
    "transpose_negative_axes": (lambda a: ops.transpose(a, (0, -1, 1)), [(2, 3, 4)]),
    "T": (lambda a: a.T, [(2, 3)]),
    "concatenate_0": (lambda a, b: ops.concatenate([a, b, a], 0), [(2, 3), (1, 3)]),
    "concatenate_neg": (lambda a, b: ops.concatenate([a, b], axis=-1), [(2, 3), (2, 1)]),
    "stack_0": (lambda a, b: ops.stack([a, b]), [(2, 3), (2, 3)]),
    "stack_neg": (lambda a, b: ops.stack([a, b, a], axis=-1), [(2, 3), (2, 3)]),
    "stack_middle": (lambda a, b: ops.stack([a, b], axis=1), [(2, 3), (2, 3)]),
}

INDEX = {
    "int": 1,
    "negative_int": -1,
    "slice": slice(1, 3),
    "step": slice(None, None, 2),
    "negative_step": slice(None, None, -2),
    "tuple_slices": (slice(0, 2), slice(1, None)),
    "ellipsis": (Ellipsis, 1),
    "none": (None, slice(None), 1),
    "int_array_duplicates": np.array([0, 2, 0, 0]),
    "list_duplicates": [3, 3, 1],
    "2d_int_array": np.array([[0, 1], [1, 1]]),
    "mixed_slice_array": (slice(None), np.array([2, 0, 2])),
    "two_arrays_duplicates": (np.array([0, 0, 3]), np.array([1, 1, 2])),
    "bool_mask": np.array([True, False, True, True]),
}

ELEMENTWISE = {
    "exp": (ops.exp, "normal"),
    "log": (ops.log, "pos"),
    "sqrt": (ops.sqrt, "pos"),
    "tanh": (ops.tanh, "normal"),
    "sigmoid": (ops.sigmoid, "normal"),
    "relu": (ops.relu, "spread"),
    "logsigmoid": (ops.logsigmoid, "normal"),
    "softmax_last": (ops.softmax, "normal"),
    "softmax_axis0": (lambda a: ops.softmax(a, axis=0), "normal"),
    "log_softmax_last": (ops.log_softmax, "normal"),
    "log_softmax_axis1": (lambda a: ops.log_softmax(a, axis=1), "normal"),
    "method_chain": (lambda a: a.tanh().exp().sigmoid().relu(), "normal"),
}


def _inputs(specs):
    return [
        _t(s[1], s[0], seed=i) if isinstance(s[0], str) else _t(s, seed=i)
        for i, s in enumerate(specs)
    ]


@pytest.mark.parametrize("name", ARITHMETIC)
def test_gradcheck_arithmetic(name):
    fn, specs = ARITHMETIC[name]
    assert gradcheck(fn, _inputs(specs))


@pytest.mark.parametrize("name", MATMUL)
def test_gradcheck_matmul(name):
    assert gradcheck(ops.matmul, _inputs(MATMUL[name]))


@pytest.mark.parametrize("reduce", ["sum", "mean", "max"])
@pytest.mark.parametrize("axis", AXES)
@pytest.mark.parametrize("keepdims", [False, True])
def test_gradcheck_reductions(reduce, axis, keepdims):
    x = _t((2, 3, 4), "spread")
    assert gradcheck(lambda a: getattr(ops, reduce)(a, axis=axis, keepdims=keepdims), [x])


def test_gradcheck_reduction_methods():
    assert gradcheck(lambda a: a.sum() + a.mean(axis=0).sum() + a.max(axis=1).sum(), [_t((3, 4))])


@pytest.mark.parametrize("name", SHAPE)
def test_gradcheck_shape_ops(name):
    fn, specs = SHAPE[name]
    assert gradcheck(fn, _inputs(specs))


@pytest.mark.parametrize("name", INDEX)
def test_gradcheck_getitem(name):
    index = INDEX[name]
    assert gradcheck(lambda a: a[index], [_t((4, 3))])


@pytest.mark.parametrize(
    "ids", [np.array([2, 0, 2, 2, 4]), np.array([[1, 1], [0, 3], [1, 4]]), np.array([3])]
)
@pytest.mark.parametrize("table", [(5, 3), (5,), (5, 2, 2)])
def test_gradcheck_gather(ids, table):
    assert gradcheck(lambda w: ops.gather(w, ids), [_t(table)])


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_gradcheck_elementwise(name):
    fn, kind = ELEMENTWISE[name]
    assert gradcheck(fn, [_t((3, 4), kind)])


def test_gradcheck_composite_graph_with_reuse():
    """A small network touching many ops at once, with tensors used more than once."""

    def net(x, W, b):
        h = ops.tanh(x @ W + b)  # (4, 3)
        z = ops.concatenate([h, h * h], axis=1)  # (4, 6)
        return ops.log_softmax(z, axis=-1)[np.arange(4), [0, 5, 2, 2]].mean() + (W**2).sum()

    assert gradcheck(net, [_t((4, 2)), _t((2, 3), seed=1), _t((3,), seed=2)])
