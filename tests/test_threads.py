"""serial_below: a small kernel on one thread gives the numbers its parallel run gives."""

from __future__ import annotations

import numba
import numpy as np
import pytest

import rowbook._threads
from rowbook.nn.loss_kernels import lse_rows, softmax_minus_target
from rowbook.optim.adam_kernels import adam_dense


def _kernels(rng: np.random.Generator) -> list[np.ndarray]:
    z = rng.standard_normal((300, 1001)).astype(np.float32)
    ids = rng.integers(0, 1001, 300)
    lse, loss = lse_rows(z, ids)
    grad = softmax_minus_target(z, ids, lse, np.full(300, 1 / 300, np.float32))
    p, g = rng.standard_normal((2, 1 << 17)).astype(np.float32)
    m, v = np.zeros_like(p), np.zeros_like(p)
    for step in (1, 2, 3):
        adam_dense(
            p,
            g,
            m,
            v,
            None,
            step=step,
            lr=1e-2,
            beta1=0.9,
            beta2=0.999,
            eps=1e-8,
            weight_decay=0.01,
            decoupled=True,
        )
    return [lse, loss, grad, p, m, v]


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
def test_one_thread_and_two_give_the_same_bits(monkeypatch):
    numba.set_num_threads(2)
    serial = _kernels(np.random.default_rng(0))
    monkeypatch.setattr(rowbook._threads, "SERIAL_BELOW", 0)  # every kernel parallel
    parallel = _kernels(np.random.default_rng(0))
    for a, b in zip(serial, parallel, strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_thread_count_comes_back():
    before = numba.get_num_threads()
    with rowbook._threads.serial_below(10):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with rowbook._threads.serial_below(10, threshold=5):
        assert numba.get_num_threads() == before
