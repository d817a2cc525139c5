r"""Pointwise functions of a Transformer block, each forward followed by its backward.

* :func:`gelu` (Hendrycks & Gimpel 2016), ``x * Phi(x)`` with ``Phi`` the standard normal
  CDF, or GPT-2's tanh approximation;
* :func:`silu` (Elfwing et al. 2018; "swish"), ``x * sigmoid(x)``, the gate of Llama's SwiGLU;
* :func:`dropout` (Srivastava et al. 2014), zeroing each element with probability ``p``
  and scaling the survivors by ``1 / (1 - p)`` while training, the identity otherwise.

PyTorch's ``F.gelu``, ``F.silu`` and ``F.dropout``; the layers are
:class:`~rowbook.nn.layers.GELU`, :class:`~rowbook.nn.layers.SiLU` and
:class:`~rowbook.nn.layers.Dropout`.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rowbook.autograd import Tensor, as_tensor
from rowbook.checks import InputTypeError, check_choice, check_number
from rowbook.nn import activation_kernels as K
from rowbook.nn.init import as_generator

__all__ = ["dropout", "dropout_mask", "gelu", "silu"]


def _floating(x: Any, name: str) -> Tensor:
    t = as_tensor(x)
    if t.dtype.kind != "f":
        raise InputTypeError(f"{name} needs a floating tensor, got dtype {t.dtype}")
    return t


def _fused(v: np.ndarray) -> bool:
    """Whether the numba kernels take ``v``: a large contiguous float32 or float64 array."""
    return (
        v.size >= K.KERNEL_MIN_SIZE and v.dtype in (np.float32, np.float64) and v.flags.c_contiguous
    )


def gelu(x: Any, approximate: Literal["none", "tanh"] = "none") -> Tensor:
    r"""``GELU(x) = x Phi(x) = x (1 + erf(x / sqrt 2)) / 2``, or its tanh approximation.

    ``approximate="tanh"`` is GPT-2's ``x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) / 2``
    (Hugging Face's ``gelu_new``). Derivatives: ``Phi(x) + x phi(x)`` for the exact form;
    ``(1 + t) / 2 + x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2) / 2`` for the tanh form.
    Large arrays go through :mod:`rowbook.nn.activation_kernels` (the same formulas fused).

    Shape
    -----
    - x: any shape; output: the same

    Examples
    --------
    >>> gelu(np.array([-1.0, 0.0, 1.0])).numpy().round(4)
    array([-0.1587,  0.    ,  0.8413])
    >>> gelu(np.array([1.0]), approximate="tanh").numpy().round(4)
    array([0.8412])
    """
    check_choice("approximate", approximate, ("none", "tanh"), owner="gelu")
    x = _floating(x, "gelu")
    v = x.data
    if _fused(v):
        out = K.gelu_forward(v, approximate)
        return Tensor._make(out, (x,), lambda g: (K.gelu_backward(v, g, approximate),), "gelu")
    out = K.gelu_reference(v, approximate)
    return Tensor._make(out, (x,), lambda g: (g * K.gelu_grad_reference(v, approximate),), "gelu")


def silu(x: Any) -> Tensor:
    r"""``SiLU(x) = x sigmoid(x)``; derivative ``s (1 + x (1 - s))`` with ``s = sigmoid(x)``.

    Shape
    -----
    - x: any shape; output: the same

    Examples
    --------
    >>> silu(np.array([-1.0, 0.0, 2.0])).numpy().round(4)
    array([-0.2689,  0.    ,  1.7616])
    """
    x = _floating(x, "silu")
    v = x.data
    if _fused(v):
        return Tensor._make(K.silu_forward(v), (x,), lambda g: (K.silu_backward(v, g),), "silu")
    return Tensor._make(
        K.silu_reference(v), (x,), lambda g: (g * K.silu_grad_reference(v),), "silu"
    )


def dropout_mask(shape: tuple[int, ...], p: float, rng: Any, dtype: Any) -> np.ndarray:
    """The scaled keep-mask of :func:`dropout`: ``1 / (1 - p)`` with probability ``1 - p``, else 0.

    Examples
    --------
    >>> dropout_mask((6,), 0.5, 0, np.float32)
    array([2., 0., 0., 0., 2., 2.], dtype=float32)
    """
    keep = as_generator(rng).random(shape) >= p
    scale = np.asarray(0.0 if p >= 1 else 1.0 / (1.0 - p), dtype=dtype)
    return keep * scale


def dropout(x: Any, p: float = 0.5, training: bool = True, *, rng: Any = None) -> Tensor:
    r"""Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    The identity when ``training`` is False or ``p == 0``. The mask is drawn from ``rng``
    (a :class:`numpy.random.Generator` or a seed), so a seeded run drops the same elements
    again; it cannot reproduce torch's draws, only their law. The backward multiplies the
    gradient by the same mask.

    Shape
    -----
    - x: any shape; output: the same

    Examples
    --------
    >>> out = dropout(np.ones(8, dtype=np.float32), p=0.25, rng=0)
    >>> sorted(set(out.numpy().round(4).tolist()))
    [0.0, 1.3333]
    >>> dropout(np.ones(3), p=0.25, training=False).numpy()
    array([1., 1., 1.])
    """
    check_number("p", p, 0.0, 1.0, owner="dropout")
    x = as_tensor(x)
    if not training or p == 0:
        return x
    mask = dropout_mask(x.shape, p, rng, x.dtype)
    return Tensor._make(x.data * mask, (x,), lambda g: (g * mask,), "dropout")
