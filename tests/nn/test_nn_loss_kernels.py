"""The fused cross-entropy kernels equal the general NumPy path and torch, on inputs large
enough to take them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from rowbook.autograd import Tensor
from rowbook.nn import loss
from rowbook.nn.functional import cross_entropy


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_fused_cross_entropy_equals_the_reference_and_torch(dtype, reduction, monkeypatch):
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((64, 1000)) * 5).astype(dtype)  # 64,000 values: fused
    targets = rng.integers(0, 1000, 64)
    targets[[3, 9]] = -100  # ignored positions
    g = rng.standard_normal(64).astype(dtype) if reduction == "none" else None
    results = []
    for threshold in (loss.FUSED_MIN_SIZE, 10**12):  # the kernels, then the reference
        monkeypatch.setattr(loss, "FUSED_MIN_SIZE", threshold)
        x = Tensor(logits.copy(), requires_grad=True)
        out = cross_entropy(x, targets, reduction=reduction)
        out.backward(g)
        results.append((out.data, x.grad))
    t = torch.tensor(logits, requires_grad=True)
    expected = torch.nn.functional.cross_entropy(t, torch.tensor(targets), reduction=reduction)
    expected.backward(None if g is None else torch.tensor(g))
    atol = 1e-5 if dtype == np.float32 else 1e-12
    for value, grad in results:
        np.testing.assert_allclose(value, expected.detach().numpy(), rtol=atol, atol=atol)
        np.testing.assert_allclose(grad, t.grad.numpy(), atol=atol)
    assert not results[0][1][[3, 9]].any()
