"""Row-sparse steps: equal to the dense step on the rows they touch, blind to the rest.

Also: a row-sparse step allocates memory in proportion to the rows it names, never to
the table (measured with tracemalloc, which sees every NumPy allocation).
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import rowbook.optim as ro
from rowbook.autograd.sparse import RowSparse, scatter_add_rows
from rowbook.nn import Parameter

V, D = 30, 4


def _batches(rng, steps, rows=None):
    """Row-sparse gradients from lookups with repeated ids (optionally always on ``rows``)."""
    out = []
    for _ in range(steps):
        ids = rng.choice(rows, 12) if rows is not None else rng.integers(0, V // 2, 12)
        out.append(scatter_add_rows(ids, rng.standard_normal((12, D)), V))
    return out


def _train(opt_cls, kwargs, W0, grads):
    p = Parameter(W0.copy())
    opt = opt_cls([p], **kwargs)
    for g in grads:
        p.grad = g
        opt.step()
    return p, opt


EQUAL_TO_DENSE = [  # optimizers whose sparse step is exactly the dense step on every row
    (ro.SGD, {"lr": 0.1}),
    (ro.SGD, {"lr": 0.1, "momentum": 0.9}),
    (ro.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    (ro.Adagrad, {"lr": 0.1, "lr_decay": 0.1}),
    (ro.RowWiseAdagrad, {"lr": 0.1}),
]


@pytest.mark.parametrize(("opt_cls", "kwargs"), EQUAL_TO_DENSE)
def test_sparse_steps_equal_dense_steps(opt_cls, kwargs):
    rng = np.random.default_rng(0)
    W0 = rng.standard_normal((V, D))
    grads = _batches(rng, 5)
    sparse, _ = _train(opt_cls, kwargs, W0, grads)
    dense, _ = _train(opt_cls, kwargs, W0, [g.to_dense() for g in grads])
    np.testing.assert_allclose(sparse.data, dense.data, rtol=1e-13, atol=1e-15)
    never = np.setdiff1d(np.arange(V), np.concatenate([g.indices for g in grads]))
    assert len(never) > 0
    np.testing.assert_array_equal(sparse.data[never], W0[never])


LAZY = [(ro.SGD, {"lr": 0.1}), (ro.Adagrad, {}), (ro.RowWiseAdagrad, {}), (ro.SparseAdam, {})]


@pytest.mark.parametrize(("opt_cls", "kwargs"), LAZY)
def test_untouched_rows_and_their_state_do_not_change(opt_cls, kwargs):
    rng = np.random.default_rng(1)
    W0 = rng.standard_normal((V, D))
    p, opt = _train(opt_cls, kwargs, W0, _batches(rng, 3))
    before = p.data.copy()
    state = {k: np.copy(v) for k, v in opt.state[p].items() if isinstance(v, np.ndarray)}
    p.grad = scatter_add_rows(np.array([2, 5, 2]), rng.standard_normal((3, D)), V)
    opt.step()
    others = np.setdiff1d(np.arange(V), [2, 5])
    np.testing.assert_array_equal(p.data[others], before[others])
    assert not np.array_equal(p.data[[2, 5]], before[[2, 5]])
    for key, value in state.items():
        np.testing.assert_array_equal(opt.state[p][key][others], value[others], err_msg=key)


def test_sparse_adam_is_adam_on_the_rows_it_always_touches():
    """With the same rows in every batch, SparseAdam on them is Adam on the sub-table."""
    rng = np.random.default_rng(2)
    W0 = rng.standard_normal((V, D))
    rows = np.array([1, 4, 9, 20])
    grads = _batches(rng, 5, rows)
    kw = {"lr": 0.05, "betas": (0.8, 0.9)}  # eps enters the two differently: make it vanish
    sparse, opt = _train(ro.SparseAdam, {**kw, "eps": 1e-300}, W0, grads)
    dense, _ = _train(ro.Adam, {**kw, "eps": 0.0}, W0[rows], [g.values for g in grads])
    np.testing.assert_allclose(sparse.data[rows], dense.data, rtol=1e-12)
    others = np.setdiff1d(np.arange(V), rows)
    np.testing.assert_array_equal(sparse.data[others], W0[others])
    assert not opt.state[sparse]["exp_avg"][others].any()


def test_sgd_sparse_momentum_keeps_moving_rows_seen_before():
    """PyTorch's semantics: the momentum of a row absent from this batch still applies."""
    p, opt = _train(
        ro.SGD,
        {"lr": 0.1, "momentum": 0.5},
        np.zeros((V, D)),
        [scatter_add_rows(np.array([3]), np.ones((1, D)), V)],
    )
    p.grad = scatter_add_rows(np.array([7]), np.ones((1, D)), V)
    opt.step()
    np.testing.assert_allclose(p.data[3], -0.1 - 0.1 * 0.5)
    np.testing.assert_allclose(p.data[7], -0.1)
    np.testing.assert_array_equal(opt.state[p]["rows"], [3, 7])


@pytest.mark.parametrize(
    ("opt_cls", "kwargs"),
    [
        (ro.SparseAdam, {}),
        (ro.Adagrad, {}),
        (ro.RowWiseAdagrad, {"weight_decay": 0.1}),
        (ro.SGD, {"lr": 0.1}),
    ],
)
def test_sparse_step_memory_does_not_grow_with_the_table(opt_cls, kwargs):
    big = Parameter(np.zeros((200_000, 16), dtype=np.float32))  # 12.8 MB
    opt = opt_cls([big], **kwargs)
    rows = np.array([5, 77, 199_999])
    grad = RowSparse(rows, np.ones((3, 16), dtype=np.float32), big.shape)
    big.grad = grad
    opt.step()  # first step: lazily created state may be table-sized
    tracemalloc.start()
    try:
        big.grad = grad
        opt.step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64_000, f"{opt_cls.__name__} step allocated {peak} bytes"
    assert big.data[rows].any() and not big.data[6:77].any()
