"""Positional encodings: their defining properties, gradients, and torch for the tied head."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from rowbook.autograd import Tensor
from rowbook.nn import Parameter
from rowbook.nn.position import (
    LearnedPositionalEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    TiedOutput,
    sinusoidal_table,
)


def test_sinusoidal_table_matches_the_formula_elementwise():
    d = 6
    table = sinusoidal_table(50, d)
    for p in (0, 1, 7, 49):
        for i in range(d):
            angle = p / 10000 ** (2 * (i // 2) / d)
            expected = math.sin(angle) if i % 2 == 0 else math.cos(angle)
            assert table[p, i] == pytest.approx(expected, abs=1e-12)


def test_sinusoidal_odd_width_and_relative_shift_is_linear():
    table = sinusoidal_table(20, 7)
    assert table.shape == (20, 7) and np.isfinite(table).all()
    # PE[p + k] is a fixed rotation of PE[p] in every (sin, cos) pair: the property
    # that lets attention read relative offsets.
    d, k = 8, 3
    pe = sinusoidal_table(40, d)
    for i in range(d // 2):
        w = 10000 ** (-2 * i / d)
        rot = np.array([[math.cos(k * w), -math.sin(k * w)], [math.sin(k * w), math.cos(k * w)]])
        np.testing.assert_allclose(
            pe[5:30, 2 * i : 2 * i + 2] @ rot, pe[5 + k : 30 + k, 2 * i : 2 * i + 2], atol=1e-12
        )


def test_sinusoidal_module_adds_and_scales():
    x = np.ones((2, 5, 4), dtype=np.float32)
    out = SinusoidalPositionalEncoding(4, max_len=10, scale=True)(x)
    np.testing.assert_allclose(
        out.data, np.broadcast_to(2.0 + sinusoidal_table(5, 4), (2, 5, 4)), rtol=1e-6
    )
    with pytest.raises(ValueError, match="sequence length 11 exceeds max_len=10"):
        SinusoidalPositionalEncoding(4, max_len=10)(np.ones((11, 4), dtype=np.float32))


def test_learned_positions_get_gradient_per_position():
    pos = LearnedPositionalEmbedding(8, 3, rng=0)
    x = Tensor(np.zeros((2, 4, 3), dtype=np.float32))
    (pos(x) * np.arange(4, dtype=np.float32)[None, :, None]).sum().backward()
    expected = np.zeros((8, 3), dtype=np.float32)
    expected[:4] = 2 * np.arange(4)[:, None]  # two sequences in the batch
    np.testing.assert_array_equal(pos.weight.grad, expected)


def _rope_complex(x: np.ndarray, positions: np.ndarray, base: float = 10000.0) -> np.ndarray:
    """Reference: treat (x[i], x[i + d/2]) as a complex number and multiply by e^{i p theta}."""
    half = x.shape[-1] // 2
    theta = base ** (-np.arange(half) * 2 / x.shape[-1])
    z = (x[..., :half] + 1j * x[..., half:]) * np.exp(1j * positions[:, None] * theta)
    return np.concatenate([z.real, z.imag], axis=-1)


def test_rope_equals_complex_rotation_and_keeps_norms():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 8))
    out = RotaryEmbedding(8)(Tensor(x)).data
    np.testing.assert_allclose(out, _rope_complex(x, np.arange(6.0)), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(out, axis=-1), np.linalg.norm(x, axis=-1), rtol=1e-12)


@pytest.mark.parametrize("interleaved", [False, True])
def test_rope_scores_depend_only_on_the_offset(interleaved):
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal(16), rng.standard_normal(16)
    rope = RotaryEmbedding(16, interleaved=interleaved)

    def score(m: int, n: int) -> float:
        qm = rope(Tensor(q[None]), positions=[m]).data[0]
        kn = rope(Tensor(k[None]), positions=[n]).data[0]
        return float(qm @ kn)

    assert score(3, 1) == pytest.approx(score(10, 8), abs=1e-10)
    assert score(0, 5) == pytest.approx(score(20, 25), abs=1e-10)
    assert score(3, 1) != pytest.approx(score(3, 2), abs=1e-6)


def test_rope_gradient_is_the_inverse_rotation():
    rng = np.random.default_rng(2)
    x = Tensor(rng.standard_normal((5, 4)), requires_grad=True)
    g = rng.standard_normal((5, 4))
    RotaryEmbedding(4)(x).backward(g)
    # A rotation's Jacobian is the rotation; its transpose rotates by the negative angle.
    np.testing.assert_allclose(x.grad, _rope_complex(g, -np.arange(5.0)), atol=1e-12)


def test_rope_rejects_bad_shapes():
    with pytest.raises(ValueError, match="positive even dim, got 5"):
        RotaryEmbedding(5)
    with pytest.raises(ValueError, match="last dimension 6"):
        RotaryEmbedding(4)(np.ones((3, 6)))


def test_tied_output_sums_both_gradients_into_the_table_like_torch():
    rng = np.random.default_rng(3)
    V, d = 7, 4
    E0 = rng.standard_normal((V, d))
    ids = np.array([[1, 3, 3], [0, 6, 1]])
    targets = rng.standard_normal((2, 3, V))

    from rowbook.autograd import ops
    from rowbook.nn import Module

    class Holder(Module):
        def __init__(self) -> None:
            self.weight = Parameter(E0.copy())

    table = Holder()
    head = TiedOutput(table)
    logits = head(ops.gather(table.weight, ids))
    ((logits - targets) ** 2).mean().backward()

    E_t = torch.tensor(E0, requires_grad=True)
    logits_t = torch.nn.functional.embedding(torch.from_numpy(ids), E_t) @ E_t.T
    ((logits_t - torch.from_numpy(targets)) ** 2).mean().backward()
    np.testing.assert_allclose(logits.data, logits_t.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(table.weight.grad, E_t.grad.numpy(), rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError, match="2-D `weight` Parameter"):
        TiedOutput(Holder.__new__(Holder))
