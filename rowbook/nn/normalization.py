r"""Layer normalisation and RMS normalisation, each forward followed by its backward.

Both normalise every vector over its last dimensions (``normalized_shape``), never across
the batch. With ``x_hat`` the normalised input and ``w`` the gain,

* :func:`layer_norm` (Ba et al. 2016; GPT-2): ``x_hat = (x - mean) / sqrt(var + eps)``
  (biased variance), ``y = x_hat w + b``;
* :func:`rms_norm` (Zhang & Sennrich 2019; Llama): ``x_hat = x / sqrt(mean(x^2) + eps)``,
  ``y = x_hat w``: no centring, no bias.

The backward of both is one formula with ``gh = g w`` (the gradient of ``x_hat``) and
``r = 1 / sqrt(. + eps)``::

    layer norm:  dx = r (gh - mean(gh) - x_hat mean(gh x_hat))
    RMS norm:    dx = r (gh - x_hat mean(gh x_hat))
    dw = sum over the leading axes of g x_hat,   db = sum of g

PyTorch's ``F.layer_norm`` and ``F.rms_norm`` (``eps=None``: the dtype's machine epsilon);
the layers are :class:`~rowbook.nn.norm.LayerNorm` and :class:`~rowbook.nn.norm.RMSNorm`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rowbook.autograd import Tensor, as_tensor

__all__ = ["layer_norm", "normalized_axes", "rms_norm"]


def normalized_axes(x: Tensor, normalized_shape: int | Sequence[int], what: str) -> tuple[int, ...]:
    """The trailing axes of ``x`` that ``normalized_shape`` names, after checking they match.

    Examples
    --------
    >>> normalized_axes(Tensor(np.zeros((2, 3, 4))), 4, "layer_norm")
    (2,)
    >>> normalized_axes(Tensor(np.zeros((2, 3, 4))), (3, 4), "layer_norm")
    (1, 2)
    """
    shape = (
        (normalized_shape,)
        if isinstance(normalized_shape, int | np.integer)
        else tuple(normalized_shape)
    )
    k = len(shape)
    if k == 0 or x.ndim < k or tuple(x.shape[-k:]) != tuple(int(s) for s in shape):
        raise ValueError(
            f"{what}: normalized_shape {shape} must equal the last dimensions of the input, "
            f"got an input of shape {x.shape}"
        )
    return tuple(range(x.ndim - k, x.ndim))


def _affine(x_hat: np.ndarray, weight: Tensor | None, bias: Tensor | None) -> np.ndarray:
    out = x_hat * weight.data if weight is not None else x_hat.copy()
    if bias is not None:
        out += bias.data
    return out


def _param(p: Any, shape: tuple[int, ...], name: str, what: str, dtype: np.dtype) -> Tensor | None:
    if p is None:
        return None
    t = as_tensor(p, dtype=None if isinstance(p, Tensor) else dtype)
    if t.shape != shape:
        raise ValueError(
            f"{what}: {name} must have shape {shape} (normalized_shape), got {t.shape}"
        )
    return t


def _param_grads(
    g: np.ndarray,
    x_hat: np.ndarray,
    weight: Tensor | None,
    bias: Tensor | None,
    lead: tuple[int, ...],
) -> list[np.ndarray | None]:
    grads: list[np.ndarray | None] = []
    if weight is not None:
        grads.append((g * x_hat).sum(axis=lead) if weight.requires_grad else None)
    if bias is not None:
        grads.append(g.sum(axis=lead) if bias.requires_grad else None)
    return grads


def layer_norm(
    x: Any,
    normalized_shape: int | Sequence[int],
    weight: Any = None,
    bias: Any = None,
    eps: float = 1e-5,
) -> Tensor:
    r"""``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing ``normalized_shape``.

    Parameters
    ----------
    x
        Floating input.
    normalized_shape
        The trailing dimensions to normalise over (an int for the last one).
    weight, bias
        Optional gain and offset of shape ``normalized_shape``.
    eps
        Added to the (biased) variance.

    Shape
    -----
    - x: ``(*, *normalized_shape)``; output: the same

    Examples
    --------
    >>> layer_norm(np.array([[1.0, 2.0, 3.0]]), 3, eps=0.0).numpy().round(4)
    array([[-1.2247,  0.    ,  1.2247]])
    """
    x = as_tensor(x)
    axes = normalized_axes(x, normalized_shape, "layer_norm")
    shape = x.shape[axes[0] :]
    weight = _param(weight, shape, "weight", "layer_norm", x.dtype)
    bias = _param(bias, shape, "bias", "layer_norm", x.dtype)
    lead = tuple(range(axes[0]))
    centred = x.data - x.data.mean(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + x.dtype.type(eps))
    x_hat = centred * rstd
    out = _affine(x_hat, weight, bias)

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, ...]:
        gh = g * weight.data if weight is not None else g
        dx = None
        if x.requires_grad:
            dx = gh - gh.mean(axis=axes, keepdims=True)
            dx -= x_hat * (gh * x_hat).mean(axis=axes, keepdims=True)
            dx *= rstd
        return (dx, *_param_grads(g, x_hat, weight, bias, lead))

    parents = tuple(t for t in (x, weight, bias) if t is not None)
    return Tensor._make(out, parents, backward, "layer_norm")


def rms_norm(
    x: Any,
    normalized_shape: int | Sequence[int],
    weight: Any = None,
    eps: float | None = None,
) -> Tensor:
    r"""``x / sqrt(mean(x^2) + eps) * weight`` over the trailing ``normalized_shape``.

    ``eps=None`` is the input dtype's machine epsilon, as in ``torch.nn.RMSNorm``; Llama
    checkpoints set their own (``rms_norm_eps``, often ``1e-5`` or ``1e-6``).

    Shape
    -----
    - x: ``(*, *normalized_shape)``; output: the same

    Examples
    --------
    >>> rms_norm(np.array([[3.0, 4.0]]), 2, eps=0.0).numpy().round(4)
    array([[0.8485, 1.1314]])
    """
    x = as_tensor(x)
    axes = normalized_axes(x, normalized_shape, "rms_norm")
    weight = _param(weight, x.shape[axes[0] :], "weight", "rms_norm", x.dtype)
    lead = tuple(range(axes[0]))
    eps_value = np.finfo(x.dtype).eps if eps is None else eps
    rrms = 1.0 / np.sqrt((x.data * x.data).mean(axis=axes, keepdims=True) + x.dtype.type(eps_value))
    x_hat = x.data * rrms
    out = _affine(x_hat, weight, None)

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, ...]:
        gh = g * weight.data if weight is not None else g
        dx = None
        if x.requires_grad:
            dx = gh - x_hat * (gh * x_hat).mean(axis=axes, keepdims=True)
            dx *= rrms
        return (dx, *_param_grads(g, x_hat, weight, None, lead))

    parents = (x,) if weight is None else (x, weight)
    return Tensor._make(out, parents, backward, "rms_norm")
