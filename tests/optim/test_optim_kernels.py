"""The fused Adam kernels equal their NumPy references bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.optim.adam_kernels import (
    PARALLEL_MIN_SIZE,
    adam_dense,
    adam_dense_reference,
    adam_rows,
    adam_rows_reference,
)


def _state(rng, shape, dtype):
    p = rng.standard_normal(shape).astype(dtype)
    m = (0.1 * rng.standard_normal(shape)).astype(dtype)
    v = (0.01 * rng.random(shape)).astype(dtype)
    return p, m, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    "options",
    [
        {"weight_decay": 0.0, "decoupled": False, "amsgrad": False, "beta1": 0.9},
        {"weight_decay": 0.1, "decoupled": False, "amsgrad": True, "beta1": 0.9},
        {"weight_decay": 0.1, "decoupled": True, "amsgrad": False, "beta1": 0.9},
        {"weight_decay": 0.0, "decoupled": False, "amsgrad": False, "beta1": 0.2},  # lerp, w >= 0.5
    ],
)
def test_dense_kernel_equals_reference(dtype, options):
    rng = np.random.default_rng(0)
    options = dict(options)
    amsgrad = options.pop("amsgrad")
    shape = (PARALLEL_MIN_SIZE // 17 + 1, 17)  # big enough for the fused kernel
    fast = _state(rng, shape, dtype)
    slow = tuple(a.copy() for a in fast)
    vmax_fast = (0.02 * rng.random(shape)).astype(dtype) if amsgrad else None
    vmax_slow = None if vmax_fast is None else vmax_fast.copy()
    for step in (1, 2, 7):
        g = rng.standard_normal(shape).astype(dtype)
        kw = {"step": step, "lr": 1e-2, "beta2": 0.99, "eps": 1e-8, **options}
        adam_dense(fast[0], g, fast[1], fast[2], vmax_fast, **kw)
        adam_dense_reference(slow[0], g, slow[1], slow[2], vmax_slow, **kw)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    if amsgrad:
        np.testing.assert_array_equal(vmax_fast, vmax_slow)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(500, 12), (400,), (300, 3, 4)])
def test_rows_kernel_equals_reference(dtype, shape):
    rng = np.random.default_rng(1)
    fast = _state(rng, shape, dtype)
    slow = tuple(a.copy() for a in fast)
    for step in (1, 2, 5):
        rows = np.unique(rng.integers(0, shape[0], 60))  # (U,)
        g = rng.standard_normal((len(rows), *shape[1:])).astype(dtype)
        kw = {"step": step, "lr": 1e-2, "beta1": 0.8, "beta2": 0.95, "eps": 1e-7}
        adam_rows(fast[0], rows, g, fast[1], fast[2], **kw)
        adam_rows_reference(slow[0], rows, g, slow[1], slow[2], **kw)
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)


def test_rows_reference_is_adam_on_the_rows():
    """The lazy update of a row is a dense Adam step of that row alone (same t).

    Exactly so with ``eps = 0``: SparseAdam adds eps to ``sqrt(v)`` before the bias
    correction, Adam after it (PyTorch's two formulas), which differ by eps terms.
    """
    rng = np.random.default_rng(2)
    p, m, v = _state(rng, (50, 4), np.float64)
    rows = np.array([3, 17, 40])
    sub = tuple(a[rows].copy() for a in (p, m, v))
    g = rng.standard_normal((3, 4))
    kw = {"step": 4, "lr": 1e-2, "beta1": 0.9, "beta2": 0.999, "eps": 0.0}
    adam_rows_reference(p, rows, g, m, v, **kw)
    adam_dense_reference(*sub[:1], g, *sub[1:], None, weight_decay=0.0, decoupled=False, **kw)
    for full, part in zip((p, m, v), sub, strict=True):
        np.testing.assert_allclose(full[rows], part, rtol=1e-13, atol=1e-15)
