r"""The KV cache stored in int8, and the cache a generation asks for.

:class:`~rowbook.nn.KVCache` keeps every layer's keys and values in the network's float
dtype. :class:`Int8KVCache` keeps them in int8 with one scale per head and position:
each stored vector ``x`` of ``d_k`` numbers (one head's key, or value, at one position)
becomes

.. code-block:: text

    s = max_i |x_i| / 127           (float16, rounded up)
    q = round(x / s)                (int8, in -127..127: symmetric, no zero point)
    x^ = q s                        |x_i - x^_i| <= s / 2  (about 0.4% of max_i |x_i|)

Why per position and not one scale per head for the whole sequence: a position is written
once and never changes, so a new token cannot force the earlier ones to be quantised again,
and one outlying key spoils only its own vector's precision. The cost is one float16 scale
per ``d_k`` int8 numbers (llama.cpp's ``q8_0`` pays one per 32): the cache takes
``(d_k + 2) / (2 d_k)`` of float16's bytes, 0.508 at Llama's ``d_k = 128``; the int8 arrays
alone are exactly half.

The attention reads the whole prefix dequantised at each step, ``O(T d)`` work per layer,
the same order as the attention itself.

Examples
--------
>>> x = np.array([[0.5, -1.27, 0.01], [0.0, 0.0, 0.0]], dtype=np.float32)  # (2, d_k)
>>> q, s = quantize_rows(x)
>>> q.tolist(), s.tolist()
([[50, -127, 1], [0, 0, 0]], [0.01000213623046875, 0.0])
>>> bool(np.abs(dequantize_rows(q, s) - x).max() <= s.max() / 2)
True
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rowbook.checks import ParameterError
from rowbook.nn import KVCache

__all__ = ["CacheDtype", "Int8KVCache", "dequantize_rows", "make_cache", "quantize_rows"]

CacheDtype = Literal["float32", "float16", "int8"]
_FLOAT16_MAX = float(np.finfo(np.float16).max)


def quantize_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 codes of ``x`` (..., d_k) with one float16 scale per vector of the
    last axis: ``(q (..., d_k) int8, s (...) float16)``, ``x ~ q s``.

    The scale is ``max |x| / 127`` rounded up to a float16, so ``|x / s| <= 127`` and every
    number is within ``s / 2`` of ``q s``. An all-zero vector gets the scale 0.

    >>> q, s = quantize_rows(np.array([[2.54, -1.0]]))
    >>> q.tolist(), s.tolist()
    ([[127, -50]], [0.0200042724609375])
    """
    x = np.asarray(x)
    peak = np.abs(x).max(axis=-1).astype(np.float64)  # (...)
    if not np.all(np.isfinite(peak)) or peak.max(initial=0.0) > 127 * _FLOAT16_MAX:
        raise ValueError(
            f"int8 KV cache: a key or value of magnitude {peak.max():.3g} has no float16 "
            "scale (the model's activations overflowed?); use cache_dtype='float32'"
        )
    exact = peak / 127
    scale = exact.astype(np.float16)
    low = scale.astype(np.float64) < exact
    scale[low] = np.nextafter(scale[low], np.float16(np.inf))  # rounded up: |x / s| <= 127
    divisor = np.where(scale > 0, scale, 1).astype(np.float64)[..., None]  # (..., 1)
    codes = np.clip(np.rint(x / divisor), -127, 127).astype(np.int8)  # (..., d_k)
    return codes, scale


def dequantize_rows(codes: np.ndarray, scale: np.ndarray, dtype: Any = np.float32) -> np.ndarray:
    """``q s`` in ``dtype``: codes ``(..., d_k)`` times their scales ``(...)``.

    >>> dequantize_rows(np.array([[127, -50]], np.int8), np.array([0.25], np.float16))
    array([[ 31.75, -12.5 ]], dtype=float32)
    """
    return codes.astype(dtype) * scale.astype(dtype)[..., None]


class Int8KVCache(KVCache):
    """A :class:`~rowbook.nn.KVCache` whose keys and values are int8 with a float16 scale
    per head and position (see the module); :meth:`store` returns them dequantised in
    ``dtype``, so attention runs as with the float cache.

    :attr:`nbytes` is ``2 x n_layers x max_length x n_kv_heads x batch x (head_dim + 2)``.

    Examples
    --------
    >>> cache = Int8KVCache(n_layers=32, batch=1, n_kv_heads=32, head_dim=128, max_length=8192)
    >>> float16 = KVCache(32, 1, 32, 128, 8192, dtype=np.float16)
    >>> float16.nbytes / 2**30, cache.nbytes / 2**30, cache.nbytes / float16.nbytes  # LLaMA-2-7B
    (4.0, 2.03125, 0.5078125)
    """

    def _allocate(self, n_layers: int, shape: tuple[int, int, int, int]) -> None:
        self.keys = [np.zeros(shape, dtype=np.int8) for _ in range(n_layers)]
        self.values = [np.zeros(shape, dtype=np.int8) for _ in range(n_layers)]
        self.key_scales = [np.zeros(shape[:3], dtype=np.float16) for _ in range(n_layers)]
        self.value_scales = [np.zeros(shape[:3], dtype=np.float16) for _ in range(n_layers)]

    @property
    def nbytes(self) -> int:
        """Bytes of the int8 keys and values and of their scales."""
        scales = sum(
            k.nbytes + v.nbytes for k, v in zip(self.key_scales, self.value_scales, strict=True)
        )
        return super().nbytes + scales

    def store(
        self, layer: int, keys: np.ndarray, values: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Quantise and write the new positions' ``(B, H_kv, l, d_k)`` keys and values; all
        positions so far, dequantised."""
        end = self._end(keys)
        new = slice(self.length, end)
        self.keys[layer][:, :, new], self.key_scales[layer][:, :, new] = quantize_rows(keys)
        self.values[layer][:, :, new], self.value_scales[layer][:, :, new] = quantize_rows(values)
        return (
            dequantize_rows(
                self.keys[layer][:, :, :end], self.key_scales[layer][:, :, :end], self.dtype
            ),
            dequantize_rows(
                self.values[layer][:, :, :end], self.value_scales[layer][:, :, :end], self.dtype
            ),
        )


def make_cache(
    net: Any, batch: int, max_length: int, cache_dtype: CacheDtype | None = None
) -> KVCache:
    """An empty cache for ``net`` (a :class:`~rowbook.models.language_model.transformer.TransformerNet`):
    its own float dtype (None), ``"float32"``, ``"float16"`` or ``"int8"``."""
    c = net.config
    shape = (c.n_layers, batch, c.n_kv_heads, c.head_dim, max_length)
    dtype = net.embedding.weight.dtype
    if cache_dtype is None:
        return KVCache(*shape, dtype=dtype)
    if cache_dtype == "int8":
        return Int8KVCache(*shape, dtype=dtype)
    if cache_dtype in ("float32", "float16"):
        return KVCache(*shape, dtype=cache_dtype)
    raise ParameterError(
        "cache_dtype",
        cache_dtype,
        "None, 'float32', 'float16' or 'int8'",
        owner="generate",
        fix="None keeps the keys and values in the model's dtype",
    )
