"""GELU and SiLU, forward and backward, as fused numba kernels beside their NumPy references.

Each ``*_reference`` is the formula one array operation at a time (the tests and small
inputs use it); its kernel computes the same element by element in one parallel pass,
instead of the five to eight whole-array temporaries NumPy needs. In float32 the kernels
take ``tanh`` and the sigmoid from :func:`~rowbook.kernel_math.fast_exp` (a loop of libm's
``tanhf`` does not vectorise), which costs up to 1e-7 of absolute error in ``tanh``; float64
uses ``math.tanh``, ``math.erf`` and ``math.exp``.

>>> x = np.linspace(-4, 4, 9).astype(np.float32)
>>> bool(np.allclose(gelu_forward(x, "tanh"), gelu_reference(x, "tanh"), atol=1e-6))
True
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.core import types
from numba.extending import overload
from scipy import special

from rowbook.kernel_math import FASTMATH, fast_exp

__all__ = [
    "KERNEL_MIN_SIZE",
    "gelu_backward",
    "gelu_forward",
    "gelu_grad_reference",
    "gelu_reference",
    "silu_backward",
    "silu_forward",
    "silu_grad_reference",
    "silu_reference",
]

#: Arrays smaller than this go through the NumPy references (waking threads costs more).
KERNEL_MIN_SIZE = 1 << 15
_C = math.sqrt(2.0 / math.pi)
_K = 0.044715
_INV_SQRT2 = 1 / math.sqrt(2.0)
_INV_SQRT2PI = 1 / math.sqrt(2 * math.pi)


# -- references -------------------------------------------------------------------------


def gelu_reference(x: np.ndarray, approximate: str) -> np.ndarray:
    """``x Phi(x)``, or ``x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2``."""
    t = x.dtype.type
    if approximate == "tanh":
        return t(0.5) * x * (1 + np.tanh(t(_C) * (x + t(_K) * x * x * x)))
    return x * (t(0.5) * (1 + special.erf(x * t(_INV_SQRT2))))


def gelu_grad_reference(x: np.ndarray, approximate: str) -> np.ndarray:
    """``d GELU / dx``: ``Phi(x) + x phi(x)``, or the tanh form's derivative."""
    t = x.dtype.type
    if approximate == "tanh":
        th = np.tanh(t(_C) * (x + t(_K) * x * x * x))
        return t(0.5) * (1 + th) + t(0.5) * x * (1 - th * th) * t(_C) * (1 + t(3 * _K) * x * x)
    cdf = t(0.5) * (1 + special.erf(x * t(_INV_SQRT2)))
    return cdf + x * np.exp(t(-0.5) * x * x) * t(_INV_SQRT2PI)


def silu_reference(x: np.ndarray) -> np.ndarray:
    """``x sigmoid(x)``."""
    return x * special.expit(x)


def silu_grad_reference(x: np.ndarray) -> np.ndarray:
    """``s (1 + x (1 - s))`` with ``s = sigmoid(x)``."""
    s = special.expit(x)
    return s * (1 + x * (1 - s))


# -- kernels ----------------------------------------------------------------------------


def _tanh(x: float) -> float:
    return math.tanh(x)


@overload(_tanh, inline="always", fastmath=FASTMATH)
def _tanh_compiled(x):  # pragma: no cover - compiled
    if isinstance(x, types.Float) and x.bitwidth == 32:
        return lambda x: (
            np.float32(1) - np.float32(2) / (fast_exp(np.float32(2) * x) + np.float32(1))
        )
    return lambda x: math.tanh(x)


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


@overload(_sigmoid, inline="always", fastmath=FASTMATH)
def _sigmoid_compiled(x):  # pragma: no cover - compiled
    if isinstance(x, types.Float) and x.bitwidth == 32:
        return lambda x: np.float32(1) / (np.float32(1) + fast_exp(-x))
    return lambda x: 1.0 / (1.0 + math.exp(-x))


@numba.njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def _gelu_tanh(x, g, out):  # pragma: no cover - compiled
    c, k, half = x.dtype.type(_C), x.dtype.type(_K), x.dtype.type(0.5)
    for i in numba.prange(x.size):
        v = x[i]
        th = _tanh(c * (v + k * v * v * v))
        if g.size == 0:
            out[i] = half * v * (1 + th)
        else:
            out[i] = g[i] * (half * (1 + th) + half * v * (1 - th * th) * c * (1 + 3 * k * v * v))


@numba.njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def _gelu_erf(x, g, out):  # pragma: no cover - compiled
    half, s2, s2pi = x.dtype.type(0.5), x.dtype.type(_INV_SQRT2), x.dtype.type(_INV_SQRT2PI)
    for i in numba.prange(x.size):
        v = x[i]
        cdf = half * (1 + math.erf(v * s2))
        if g.size == 0:
            out[i] = v * cdf
        else:
            out[i] = g[i] * (cdf + v * math.exp(-half * v * v) * s2pi)


@numba.njit(parallel=True, cache=True, nogil=True, fastmath=FASTMATH)
def _silu(x, g, out):  # pragma: no cover - compiled
    for i in numba.prange(x.size):
        v = x[i]
        s = _sigmoid(v)
        out[i] = v * s if g.size == 0 else g[i] * (s * (1 + v * (1 - s)))


def _run(kernel, x: np.ndarray, g: np.ndarray | None) -> np.ndarray:
    out = np.empty_like(x)
    flat_g = (
        np.empty(0, x.dtype) if g is None else np.ascontiguousarray(g, dtype=x.dtype).reshape(-1)
    )
    kernel(x.reshape(-1), flat_g, out.reshape(-1))
    return out


def gelu_forward(x: np.ndarray, approximate: str) -> np.ndarray:
    """:func:`gelu_reference` in one pass (``x`` contiguous float32 or float64)."""
    return _run(_gelu_tanh if approximate == "tanh" else _gelu_erf, x, None)


def gelu_backward(x: np.ndarray, g: np.ndarray, approximate: str) -> np.ndarray:
    """``g * gelu_grad_reference(x)`` in one pass."""
    return _run(_gelu_tanh if approximate == "tanh" else _gelu_erf, x, g)


def silu_forward(x: np.ndarray) -> np.ndarray:
    """:func:`silu_reference` in one pass."""
    return _run(_silu, x, None)


def silu_backward(x: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``g * silu_grad_reference(x)`` in one pass."""
    return _run(_silu, x, g)
