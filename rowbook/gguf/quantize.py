"""Quantising float rows into ggml blocks: Q8_0 as ggml does it, a plain Q4_K, and random
blocks of any type.

* :func:`quantize_q8_0` is ggml's ``quantize_row_q8_0_ref``: per block of 32 values,
  ``d = max |x| / 127`` stored as fp16, ``q = round(x / d)`` half away from zero; the tests
  hold it to ``gguf.quants.quantize`` byte for byte.
* :func:`quantize_q4_k` writes valid Q4_K super-blocks (256 values: eight sub-blocks of 32,
  each ``x ~ (d sc) q - (dmin m)`` with 4-bit ``q`` and 6-bit ``sc``, ``m``) by the plain
  min-max rule: a sub-block's step is ``(max - min) / 15``, its offset ``-min``. ggml's own
  ``quantize_row_q4_K_ref`` searches each sub-block's step and offset for a smaller squared
  error, so its tables lose a little less than these; ``gguf`` has no K quantiser to hold
  this one to, and the tests check what its blocks decode to instead (by ``gguf`` and by
  :mod:`rowbook.gguf.quants`, equal to the bit) and how far that is from the input.
* :func:`random_blocks` makes valid blocks of any type rowbook reads (random bytes whose fp16
  scales, at :data:`SCALE_OFFSETS`, are finite): what the tests hold the dequantisers to and
  the benchmark times, K types included, which ``gguf`` cannot quantise.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SCALE_OFFSETS", "quantize_q4_k", "quantize_q8_0", "random_blocks"]

#: Byte offsets of the fp16 scales (``d``, ``dmin``) in a block of each quantised type.
SCALE_OFFSETS: dict[str, tuple[int, ...]] = {
    "Q8_0": (0,),
    "Q4_0": (0,),
    "Q4_1": (0, 2),
    "Q5_0": (0,),
    "Q5_1": (0, 2),
    "Q2_K": (80, 82),
    "Q3_K": (108,),
    "Q4_K": (0, 2),
    "Q5_K": (0, 2),
    "Q6_K": (208,),
}


def random_blocks(type_name: str, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """The stored bytes of a random ``shape`` (rows, row length) tensor of ``type_name``, its
    scales finite: ``(rows, row_bytes)`` uint8 (F16 and BF16: random normal values).

    >>> random_blocks("Q4_K", (2, 512), np.random.default_rng(0)).shape  # 2 blocks a row
    (2, 288)
    """
    from rowbook.gguf.types import GGML_TYPES

    _, block, type_bytes = next(v for v in GGML_TYPES.values() if v[0] == type_name)
    n_blocks = shape[0] * shape[1] // block
    if type_name in ("F16", "BF16"):
        values = rng.standard_normal(n_blocks).astype(np.float32)
        raw = (values.astype(np.float16) if type_name == "F16" else values).view(np.uint8)
        raw = raw.reshape(-1, 4)[:, 2:] if type_name == "BF16" else raw
        return np.ascontiguousarray(raw).reshape(shape[0], -1)
    raw = rng.integers(0, 256, size=(n_blocks, type_bytes), dtype=np.uint8)
    for at in SCALE_OFFSETS[type_name]:
        scale = rng.uniform(-0.1, 0.1, n_blocks).astype(np.float16)
        raw[:, at : at + 2] = scale.view(np.uint8).reshape(n_blocks, 2)
    return raw.reshape(shape[0], -1)


def quantize_q8_0(x: np.ndarray) -> np.ndarray:
    """``(..., n)`` float values (``n`` a multiple of 32) -> Q8_0 blocks, ``(..., n / 32 * 34)``
    uint8.

    Examples
    --------
    >>> from rowbook.gguf.quants import dequantize_blocks
    >>> blocks = quantize_q8_0(np.linspace(-1, 1, 32, dtype=np.float32))
    >>> float(np.abs(dequantize_blocks(blocks, "Q8_0") - np.linspace(-1, 1, 32)).max()) < 0.005
    True
    """
    x = np.asarray(x, dtype=np.float32)
    blocks = x.reshape(-1, 32)  # (n_blocks, 32)
    d = np.abs(blocks).max(axis=1, keepdims=True) / np.float32(127)
    with np.errstate(divide="ignore"):
        inverse = np.where(d == 0, np.float32(0), np.float32(1) / d)
    scaled = blocks * inverse
    a = np.abs(scaled)
    rounded = np.sign(scaled) * (np.floor(a) + np.floor(2 * (a - np.floor(a))))  # half away
    out = np.concatenate(
        [d.astype(np.float16).view(np.uint8), rounded.astype(np.int8).view(np.uint8)], axis=1
    )
    return out.reshape(*x.shape[:-1], x.shape[-1] // 32 * 34)


def _six_bits(values: np.ndarray, top: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``values`` (n, 8) >= 0 as 6-bit multiples of an fp16 ``top / 63`` (n, 1)."""
    step = (top / 63).astype(np.float16).astype(np.float32)  # (n, 1), as it will be read
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(step > 0, np.rint(values / step), 0)
    return np.clip(q, 0, 63).astype(np.uint8), step


def _pack_scales(sc: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Eight 6-bit scales and minimums (n, 8) -> ggml's 12 bytes (``get_scale_min_k4``)."""
    s = np.zeros((sc.shape[0], 12), np.uint8)
    s[:, 0:4] = sc[:, :4] | ((sc[:, 4:] >> 4) << 6)
    s[:, 4:8] = m[:, :4] | ((m[:, 4:] >> 4) << 6)
    s[:, 8:12] = (sc[:, 4:] & 0x0F) | ((m[:, 4:] & 0x0F) << 4)
    return s


def quantize_q4_k(x: np.ndarray) -> np.ndarray:
    """``(..., n)`` float values (``n`` a multiple of 256) -> Q4_K blocks,
    ``(..., n / 256 * 144)`` uint8.

    Examples
    --------
    >>> from rowbook.gguf.quants import dequantize_blocks
    >>> x = np.sin(np.arange(256, dtype=np.float32))
    >>> float(np.abs(dequantize_blocks(quantize_q4_k(x), "Q4_K")[0] - x).max()) < 0.1
    True
    """
    x = np.asarray(x, dtype=np.float32)
    sub = x.reshape(-1, 8, 32)  # (n_blocks, 8 sub-blocks, 32)
    low = np.minimum(sub.min(axis=2), 0)  # (n, 8): the offset is never negative, as ggml's
    step = (sub.max(axis=2) - low) / 15
    sc, d = _six_bits(step, step.max(axis=1, keepdims=True))
    m, dmin = _six_bits(-low, (-low).max(axis=1, keepdims=True))
    scale = d * sc  # (n, 8): the steps as they will be read
    offset = dmin * m
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(scale[..., None] > 0, np.rint((sub + offset[..., None]) / scale[..., None]), 0)
    q = np.clip(q, 0, 15).astype(np.uint8)  # (n, 8, 32)
    qs = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(-1, 128)  # sub-blocks 2c and 2c + 1 share bytes
    head = np.concatenate([d, dmin], axis=1).astype(np.float16).view(np.uint8)  # (n, 4)
    out = np.concatenate([head, _pack_scales(sc, m), qs], axis=1)
    return out.reshape(*x.shape[:-1], x.shape[-1] // 256 * 144)
