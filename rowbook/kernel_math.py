"""What numba kernels share (:mod:`rowbook.nn`'s and the word-vector trainers'): fast-math
flags, a vectorisable ``exp``, and BLAS on one thread. A module of its own, below both, so
that a trainer taking ``fast_exp`` does not import the neural-network package.

* :data:`FASTMATH`: LLVM's fast-math flags without "no NaNs" and "no infinities", so masked
  scores of ``-inf`` keep their meaning while loops still vectorise.
* :func:`fast_exp`: in float32, Cephes' ``expf`` (``2^n p(r)`` with ``x = n ln 2 + r``,
  1.2e-7 relative error) written so that a loop of it vectorises, which libm's ``expf``
  does not (5x slower on an attention tile); 0 below ``-87``, where float32 runs out of
  normal numbers (``exp(-inf) = 0``). In float64, ``math.exp``.
* :func:`blas_single_thread`: a context in which BLAS runs on one thread. Many small
  products run in parallel tasks, or one after the other, faster that way: BLAS's own
  threads, woken for every product, measured up to 100x slower on a busy 2-core machine.

Examples
--------
>>> import numba
>>> @numba.njit
... def exps(x):
...     return [fast_exp(np.float32(v)) for v in x]
>>> [round(float(v), 5) for v in exps(np.array([0.0, 1.0, -np.inf], dtype=np.float32))]
[1.0, 2.71828, 0.0]
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, overload, register_jitable

__all__ = ["FASTMATH", "blas_single_thread", "fast_exp", "fast_sigmoid"]

#: LLVM's fast-math flags minus "no NaNs" and "no infinities".
FASTMATH = {"reassoc", "contract", "arcp", "nsz", "afn"}

_controller: Any = None
_inside = threading.local()


@contextlib.contextmanager
def blas_single_thread() -> Iterator[None]:
    """A context in which BLAS runs on one thread (``threadpoolctl``, its controller built
    once). Nested uses cost nothing: the outermost one sets and restores the limit (which
    takes about 0.1 ms, as long as a one-token step of a small model's layer)."""
    global _controller
    if getattr(_inside, "depth", 0):
        yield
        return
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    _inside.depth = 1
    try:
        with _controller.limit(limits=1, user_api="blas"):
            yield
    finally:
        _inside.depth = 0


@intrinsic
def _bits_to_float32(typingctx, bits):  # pragma: no cover - compiled
    """The float32 whose bit pattern is the int32 ``bits`` (a bitcast, vectorisable)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


@register_jitable(inline="always", fastmath=FASTMATH)
def _exp_float32(x):  # pragma: no cover - compiled
    x = min(max(x, np.float32(-87.33654)), np.float32(88.72284))
    n = np.floor(x * np.float32(1.44269504088896341) + np.float32(0.5))
    r = x - n * np.float32(0.693359375) + n * np.float32(2.12194440e-4)
    p = np.float32(1.9875691500e-4) * r + np.float32(1.3981999507e-3)
    p = ((p * r + np.float32(8.3334519073e-3)) * r + np.float32(4.1665795894e-2)) * r
    p = ((p + np.float32(1.6666665459e-1)) * r + np.float32(5.0000001201e-1)) * (r * r)
    return (p + r + np.float32(1.0)) * _bits_to_float32((np.int32(n) + np.int32(127)) << 23)


def fast_exp(x: float) -> float:
    """``exp(x)`` (0 for ``x <= -87``); compiled code gets the overload below."""
    return math.exp(x) if x > -87.0 else 0.0


@overload(fast_exp, inline="always", fastmath=FASTMATH)
def _fast_exp_compiled(x):  # pragma: no cover - compiled
    if isinstance(x, types.Float) and x.bitwidth == 32:

        def exp_float32(x):
            return _exp_float32(x) * np.float32(x > np.float32(-87.0))  # 0 for exp(-inf)

        return exp_float32
    return lambda x: math.exp(x)


@register_jitable(inline="always", fastmath=FASTMATH)
def fast_sigmoid(x):  # pragma: no cover - compiled where it counts
    """``1 / (1 + exp(-x))`` through :func:`fast_exp`: a loop of it vectorises in a function
    compiled with ``error_model="numpy"`` (numba's default checks each division for zero,
    which keeps the loop scalar). The word-vector trainers' batched kernels take it.

    >>> round(float(fast_sigmoid(np.float32(1.0))), 6)
    0.731059
    """
    return np.float32(1.0) / (np.float32(1.0) + fast_exp(-x))
