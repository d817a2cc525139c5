"""Where a token sits: sinusoidal, learned and rotary position information, and tied heads.

A lookup ``E[ids]`` knows *which* token, not *where*. Three standard answers:

* :class:`SinusoidalPositionalEncoding` (Vaswani et al. 2017) adds a fixed table
  ``PE[p, 2i] = sin(p / base^(2i/d))``, ``PE[p, 2i+1] = cos(p / base^(2i/d))``;
* :class:`LearnedPositionalEmbedding` (BERT, GPT-2) adds a learned row per position;
* :class:`RotaryEmbedding` (Su et al. 2021, RoPE) rotates pairs of query/key features
  by ``p * theta_i``, so the score ``<R_m q, R_n k>`` depends only on ``m - n``.

The first two can also scale the token embeddings by ``sqrt(d_model)`` before adding,
as the Transformer paper does. :class:`TiedOutput` reuses an embedding table as the
output projection ``logits = h @ E.T`` (Press & Wolf 2017), so both uses of ``E`` add
their gradients into the same table.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rowbook.autograd import Tensor, as_tensor, ops
from rowbook.checks import InputTypeError
from rowbook.nn import functional as F
from rowbook.nn.module import Module, Parameter

__all__ = [
    "LearnedPositionalEmbedding",
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
    "TiedOutput",
    "sinusoidal_table",
]


def sinusoidal_table(num_positions: int, d_model: int, base: float = 10000.0) -> np.ndarray:
    """The (num_positions, d_model) sinusoidal table in float64.

    Examples
    --------
    >>> sinusoidal_table(2, 4).round(4)
    array([[0.    , 1.    , 0.    , 1.    ],
           [0.8415, 0.5403, 0.01  , 1.    ]])
    """
    if num_positions < 0 or d_model <= 0:
        raise ValueError(
            f"need num_positions >= 0 and d_model > 0, got {num_positions} and {d_model}"
        )
    position = np.arange(num_positions, dtype=np.float64)[:, None]  # (P, 1)
    inv_freq = base ** (-np.arange(0, d_model, 2, dtype=np.float64) / d_model)  # (ceil(d/2),)
    angles = position * inv_freq  # (P, ceil(d/2))
    table = np.empty((num_positions, d_model))
    table[:, 0::2] = np.sin(angles)
    table[:, 1::2] = np.cos(angles[:, : d_model // 2])
    return table


def _check_length(length: int, max_len: int, what: str) -> None:
    if length > max_len:
        raise ValueError(
            f"sequence length {length} exceeds max_len={max_len} of this {what}; build it with a larger max_len"
        )


def _scaled(x: Tensor, scale: bool) -> Tensor:
    return x * math.sqrt(x.shape[-1]) if scale else x


class SinusoidalPositionalEncoding(Module):
    """``x * sqrt(d) (optional) + PE[:T]`` with the fixed sinusoidal table.

    Shape
    -----
    - Input: ``(*, T, d_model)`` token embeddings
    - Output: same shape
    """

    _buffers = ("table",)  # converted by Module.to(dtype), as torch's registered buffer

    def __init__(
        self,
        d_model: int,
        max_len: int = 5000,
        *,
        base: float = 10000.0,
        scale: bool = False,
        dtype: Any = np.float32,
    ) -> None:
        self.d_model, self.max_len, self.scale = d_model, max_len, scale
        self.table = sinusoidal_table(max_len, d_model, base).astype(dtype)  # (max_len, d) buffer

    def forward(self, x: Any, offset: int = 0) -> Tensor:
        """``x`` (scaled) plus the rows of positions ``offset .. offset + T - 1``."""
        x = as_tensor(x)
        T = x.shape[-2]
        _check_length(offset + T, self.max_len, type(self).__name__)
        return _scaled(x, self.scale) + self.table[offset : offset + T]

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, max_len={self.max_len}, scale={self.scale}"


class LearnedPositionalEmbedding(Module):
    """``x * sqrt(d) (optional) + P[0:T]`` with a learned (max_len, d) table ``P``.

    Shape
    -----
    - Input: ``(*, T, d_model)`` token embeddings
    - Output: same shape
    """

    def __init__(
        self,
        max_len: int,
        d_model: int,
        *,
        scale: bool = False,
        std: float = 0.02,
        dtype: Any = np.float32,
        rng: Any = None,
    ) -> None:
        from rowbook.nn import init

        self.max_len, self.d_model, self.scale = max_len, d_model, scale
        self.weight = Parameter(np.empty((max_len, d_model), dtype=dtype))
        init.normal_(self.weight, std=std, rng=rng)

    def forward(self, x: Any, offset: int = 0) -> Tensor:
        """``x`` (scaled) plus the learned rows of positions ``offset .. offset + T - 1``."""
        x = as_tensor(x)
        length = x.shape[-2]
        _check_length(offset + length, self.max_len, type(self).__name__)
        return _scaled(x, self.scale) + ops.gather(self.weight, np.arange(offset, offset + length))

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}, scale={self.scale}"


class RotaryEmbedding(Module):
    """Rotary position embedding: rotate feature pairs of queries and keys by ``p * theta_i``.

    ``theta_i = base^(-2i/dim)``. Pairs are the two halves of the feature vector
    (``x[..., i]`` with ``x[..., i + dim/2]``), the GPT-NeoX / Llama convention; pass
    ``interleaved=True`` for the paper's ``(x[2i], x[2i+1])`` pairs.

    Shape
    -----
    - Input: ``(*, T, dim)`` queries or keys; ``positions`` ``(T,)`` (default ``0..T-1``)
    - Output: same shape
    """

    def __init__(self, dim: int, *, base: float = 10000.0, interleaved: bool = False) -> None:
        if dim <= 0 or dim % 2:
            raise ValueError(f"RotaryEmbedding needs a positive even dim, got {dim}")
        self.dim, self.base, self.interleaved = dim, base, interleaved
        self.inv_freq = base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)  # (dim/2,)

    def angles(self, positions: np.ndarray) -> np.ndarray:
        """``positions[:, None] * theta`` as a (T, dim/2) float64 array."""
        return np.asarray(positions, dtype=np.float64)[:, None] * self.inv_freq

    def forward(self, x: Any, positions: Any = None) -> Tensor:
        x = as_tensor(x)
        if x.shape[-1] != self.dim:
            raise ValueError(
                f"RotaryEmbedding(dim={self.dim}) got inputs with last dimension {x.shape[-1]}"
            )
        T = x.shape[-2]
        positions = np.arange(T) if positions is None else np.asarray(positions)
        if positions.shape != (T,):
            raise ValueError(f"positions must have shape ({T},), got {positions.shape}")
        theta = self.angles(positions)  # (T, dim/2)
        cos, sin = np.cos(theta).astype(x.dtype), np.sin(theta).astype(x.dtype)
        half = self.dim // 2
        if self.interleaved:
            first, second = x[..., 0::2], x[..., 1::2]
        else:
            first, second = x[..., :half], x[..., half:]
        rotated_first = first * cos - second * sin
        rotated_second = first * sin + second * cos
        if not self.interleaved:
            return ops.concatenate([rotated_first, rotated_second], axis=-1)
        pairs = ops.stack([rotated_first, rotated_second], axis=-1)  # (*, T, dim/2, 2)
        return pairs.reshape(*x.shape)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, base={self.base}, interleaved={self.interleaved}"


class TiedOutput(Module):
    """Output logits ``h @ E.T (+ b)`` that share the input embedding table ``E``.

    Shape
    -----
    - Input: ``(*, d)`` hidden states
    - Output: ``(*, V)`` logits
    """

    def __init__(self, embedding: Module, bias: bool = False) -> None:
        weight = getattr(embedding, "weight", None)
        if not isinstance(weight, Parameter) or weight.ndim != 2:
            raise InputTypeError(
                "TiedOutput needs a module with a 2-D `weight` Parameter, such as an Embedding"
            )
        self.embedding = embedding
        self.bias = Parameter(np.zeros(weight.shape[0], dtype=weight.dtype)) if bias else None

    def forward(self, h: Any) -> Tensor:
        return F.linear(h, self.embedding.weight, self.bias)  # one (N, d) x (d, V) product
