"""RowWiseAdagrad against FBGEMM's CPU update, written out row by row, and torch Adagrad.

FBGEMM (``rowwise_adagrad``, ``split_weight_update_cpu``) for a row with gradient
``g`` (the sum over the batch's repeats of that id) of width D::

    g' = g + wd * w                      (weight_decay_mode 1, L2, else g' = g)
    s += sum(g' * g') / D
    multiplier = lr / (sqrt(s) + eps)
    correction = 1 - multiplier * wd     (L2) | 1 - lr * wd (decoupled) | 1
    w = correction * w - multiplier * g
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook.autograd.sparse import scatter_add_rows
from rowbook.nn import Parameter
from rowbook.optim import RowWiseAdagrad

V, D = 25, 6


def fbgemm_rowwise_adagrad(w, s, ids, rows, *, lr, eps, wd, mode):
    """One step on the rows looked up by ``ids`` (raw, with repeats), in float64 loops."""
    grad = {}
    for i, r in zip(ids, rows, strict=True):
        grad[i] = grad.get(i, 0.0) + r
    for i, g in grad.items():
        g_l2 = g + wd * w[i] if mode == "l2" else g
        s[i] += sum(float(x) * float(x) for x in g_l2) / len(g)
        multiplier = lr / (np.sqrt(s[i]) + eps)
        correction = {"l2": 1 - multiplier * wd, "decoupled": 1 - lr * wd}[mode]
        w[i] = correction * w[i] - multiplier * g


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("wd", "mode"), [(0.0, "l2"), (0.1, "l2"), (0.2, "decoupled")])
def test_sparse_steps_match_fbgemm_formula(dtype, wd, mode):
    rng = np.random.default_rng(0)
    W0 = rng.standard_normal((V, D))
    expected_w, expected_s = W0.copy(), np.full(V, 0.1)
    p = Parameter(W0.astype(dtype))
    opt = RowWiseAdagrad(
        [p],
        lr=0.3,
        eps=1e-6,
        weight_decay=wd,
        weight_decay_mode=mode,
        initial_accumulator_value=0.1,
    )
    for _ in range(5):
        ids = rng.integers(0, V // 2, 15)
        rows = rng.standard_normal((15, D)).astype(dtype)
        p.grad = scatter_add_rows(ids, rows, V)
        opt.step()
        fbgemm_rowwise_adagrad(
            expected_w, expected_s, ids, rows.astype(np.float64), lr=0.3, eps=1e-6, wd=wd, mode=mode
        )
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-14}
    np.testing.assert_allclose(p.data, expected_w, **tol)
    np.testing.assert_allclose(opt.state[p]["sum"], expected_s, **tol)
    assert opt.state[p]["sum"].shape == (V,)
    untouched = np.arange(V // 2, V)
    np.testing.assert_array_equal(p.data[untouched], W0[untouched].astype(dtype))


def test_dense_gradient_updates_every_row_as_fbgemm_would_with_all_ids():
    rng = np.random.default_rng(1)
    W0 = rng.standard_normal((V, D))
    p = Parameter(W0.copy())
    opt = RowWiseAdagrad([p], lr=0.1, weight_decay=0.05)
    expected_w, expected_s = W0.copy(), np.zeros(V)
    for _ in range(3):
        g = rng.standard_normal((V, D))
        p.grad = g
        opt.step()
        fbgemm_rowwise_adagrad(
            expected_w, expected_s, np.arange(V), g, lr=0.1, eps=1e-10, wd=0.05, mode="l2"
        )
    np.testing.assert_allclose(p.data, expected_w, rtol=1e-12)


@pytest.mark.parametrize("shape", [(V,), (V, 1)])
@pytest.mark.parametrize("wd", [0.0, 0.1])
def test_one_entry_per_row_is_torch_adagrad(shape, wd):
    rng = np.random.default_rng(2)
    W0 = rng.standard_normal(shape)
    p, tp = Parameter(W0.copy()), torch.nn.Parameter(torch.from_numpy(W0.copy()))
    opt = RowWiseAdagrad([p], lr=0.2, eps=1e-8, weight_decay=wd, initial_accumulator_value=0.5)
    topt = torch.optim.Adagrad(
        [tp], lr=0.2, eps=1e-8, weight_decay=wd, initial_accumulator_value=0.5
    )
    for _ in range(5):
        p.grad = rng.standard_normal(shape)
        tp.grad = torch.from_numpy(p.grad.copy())
        opt.step()
        topt.step()
    np.testing.assert_allclose(p.data, tp.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(opt.state[p]["sum"], topt.state[tp]["sum"].numpy().reshape(V))


def test_weight_decay_applies_to_touched_rows_only():
    rng = np.random.default_rng(3)
    W0 = rng.standard_normal((V, D))
    sparse, dense = Parameter(W0.copy()), Parameter(W0.copy())
    kw = {"lr": 0.1, "weight_decay": 0.5, "weight_decay_mode": "decoupled"}
    opt_s, opt_d = RowWiseAdagrad([sparse], **kw), RowWiseAdagrad([dense], **kw)
    g = scatter_add_rows(np.array([4, 4, 11]), rng.standard_normal((3, D)), V)
    sparse.grad, dense.grad = g, g.to_dense()
    opt_s.step()
    opt_d.step()
    np.testing.assert_allclose(sparse.data[[4, 11]], dense.data[[4, 11]], rtol=1e-13)
    others = np.setdiff1d(np.arange(V), [4, 11])
    np.testing.assert_array_equal(sparse.data[others], W0[others])
    np.testing.assert_allclose(dense.data[others], W0[others] * (1 - 0.1 * 0.5), rtol=1e-13)
