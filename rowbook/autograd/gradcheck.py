"""Numerical gradient check: the analytic backward against central differences.

For a function ``f`` of some float64 tensors, :func:`gradcheck` draws a fixed random
projection ``v`` of the output and compares, for every input element ``x_j``,

* the analytic value ``(J^T v)_j`` from :meth:`Tensor.backward` with ``grad=v``, and
* the numeric value ``(<v, f(x + eps e_j)> - <v, f(x - eps e_j)>) / (2 eps)``,

accepting ``|analytic - numeric| <= atol + rtol * |numeric|`` as
``torch.autograd.gradcheck`` does. Projecting on a random ``v`` checks one
vector-Jacobian product per call instead of the whole Jacobian: a wrong derivative
passes only for a measure-zero set of ``v``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rowbook.autograd.engine import backward
from rowbook.autograd.sparse import RowSparse
from rowbook.autograd.tensor import Tensor, is_grad_enabled, no_grad
from rowbook.checks import InputTypeError

__all__ = ["GradcheckError", "gradcheck"]


class GradcheckError(RuntimeError):
    """Raised by :func:`gradcheck` when analytic and numeric gradients disagree."""


def _outputs(result: Any) -> list[Tensor]:
    items = result if isinstance(result, tuple | list) else (result,)
    if not all(isinstance(o, Tensor) for o in items):
        raise InputTypeError(
            f"gradcheck: fn must return a Tensor or a tuple of Tensors, got {result!r}"
        )
    return [o for o in items if o.dtype.kind == "f"]


def _projected(fn: Callable[..., Any], inputs: Sequence[Any], vs: list[np.ndarray]) -> float:
    """``sum_k <v_k, f(inputs)_k>`` computed without recording a graph."""
    with no_grad():
        outs = _outputs(fn(*inputs))
    return float(sum(np.vdot(o.data.astype(np.float64), v) for o, v in zip(outs, vs, strict=True)))


def _analytic(fn: Callable[..., Any], inputs: Sequence[Any], checked: list[int], vs) -> list:
    for i in checked:
        inputs[i].grad = None
    outs = _outputs(fn(*inputs))
    pairs = [(o, v.astype(o.dtype)) for o, v in zip(outs, vs, strict=True) if o.requires_grad]
    if pairs:  # one walk: outputs may share a graph, which a walk frees
        backward([o for o, _ in pairs], [v for _, v in pairs])
    grads = []
    for i in checked:
        x, g = inputs[i], inputs[i].grad
        g = g.to_dense() if isinstance(g, RowSparse) else g
        if g is not None and (g.shape != x.shape or g.dtype != x.dtype):
            raise GradcheckError(
                f"gradcheck: input {i} has shape {x.shape} and dtype {x.dtype} but its gradient "
                f"has shape {g.shape} and dtype {g.dtype}"
            )
        grads.append(np.zeros(x.shape) if g is None else np.asarray(g, dtype=np.float64))
    return grads


def _numeric(fn, inputs, x: Tensor, vs, eps: float) -> np.ndarray:
    out = np.empty(x.shape, dtype=np.float64)
    for idx in np.ndindex(*x.shape):
        original = x.data[idx]
        x.data[idx] = original + eps
        plus = _projected(fn, inputs, vs)
        x.data[idx] = original - eps
        minus = _projected(fn, inputs, vs)
        x.data[idx] = original
        out[idx] = (plus - minus) / (2 * eps)
    return out


def _compare(i: int, analytic: np.ndarray, numeric: np.ndarray, atol: float, rtol: float) -> str:
    excess = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
    excess = np.where(np.isnan(excess), np.inf, excess)  # a NaN on either side fails
    if excess.size == 0 or np.all(excess <= 0):
        return ""
    worst = tuple(int(k) for k in np.unravel_index(np.argmax(excess), excess.shape))
    a, n = float(analytic[worst]), float(numeric[worst])
    return (
        f"gradcheck failed for input {i} (shape {analytic.shape}): worst element {worst}: "
        f"analytic {a!r}, numeric {n!r}, |difference| {abs(a - n):.3g} > "
        f"atol + rtol * |numeric| = {atol + rtol * abs(n):.3g}"
    )


def gradcheck(
    fn: Callable[..., Any],
    inputs: Sequence[Any] | Tensor,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
    raise_exception: bool = True,
) -> bool:
    """Check ``fn``'s analytic gradients against central differences in float64.

    Parameters
    ----------
    fn
        Function of ``*inputs`` returning a Tensor (or a tuple of Tensors).
    inputs
        Arguments for ``fn``. Every Tensor with ``requires_grad=True`` is checked and
        must be float64; other arguments are passed through unchanged.
    eps
        Step of the central difference.
    atol, rtol
        An element passes when ``|analytic - numeric| <= atol + rtol * |numeric|``.
    seed
        Seed of the random projection ``v`` of the outputs.
    raise_exception
        Raise :class:`GradcheckError` on failure (default) instead of returning False.

    Returns
    -------
    bool
        True when every checked element agrees.

    Examples
    --------
    >>> x = Tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    >>> gradcheck(lambda t: (t * t).exp(), [x])
    True
    """
    if not is_grad_enabled():
        raise RuntimeError("gradcheck records a graph: call it outside a no_grad() block")
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    checked = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True; nothing to check")
    for i in checked:
        if inputs[i].dtype != np.float64:
            raise InputTypeError(
                f"gradcheck: input {i} has dtype {inputs[i].dtype}; central differences need "
                "float64 inputs (build them with dtype=np.float64)"
            )
    originals = [(i, inputs[i].data, inputs[i].grad) for i in checked]
    for i in checked:  # perturb private copies, never the caller's arrays
        inputs[i].data = np.array(inputs[i].data, dtype=np.float64, copy=True, order="C")
    try:
        with no_grad():
            outs = _outputs(fn(*inputs))
        rng = np.random.default_rng(seed)
        vs = [rng.standard_normal(o.shape) for o in outs]
        analytic = _analytic(fn, inputs, checked, vs)
        for i, a in zip(checked, analytic, strict=True):
            message = _compare(i, a, _numeric(fn, inputs, inputs[i], vs, eps), atol, rtol)
            if message:
                if raise_exception:
                    raise GradcheckError(message)
                return False
    finally:
        for i, data, grad in originals:
            inputs[i].data, inputs[i].grad = data, grad
    return True
