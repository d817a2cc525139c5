"""The plain NumPy dequantisation of every block type rowbook reads: the math the compiled
kernels of :mod:`rowbook.gguf.quants` are held to, bit for bit.

Each function takes ``blocks``, ``(n_blocks, type_size)`` uint8, and returns
``(n_blocks, block_size)`` float32. The layouts are ggml's (``ggml-common.h``); the
arithmetic is done in float32 in the order ``gguf``'s ``quants.py`` and ggml's
``dequantize_row_*`` use, so the results agree to the bit:

* ``Q8_0``: ``x = d * q`` with ``q`` int8 and ``d`` one fp16 scale per 32 values;
* ``Q4_0`` / ``Q5_0``: ``x = d * (q - 8)`` / ``d * (q - 16)``, 4- or 5-bit ``q``;
* ``Q4_1`` / ``Q5_1``: ``x = d * q + m``;
* the K types hold super-blocks of 256 values in 16 or 8 sub-blocks, each with a 4- to
  8-bit scale (and for ``Q2_K``, ``Q4_K``, ``Q5_K`` a minimum) multiplied by the super-block's
  fp16 ``d`` (and ``dmin``): ``x = (d * sc) * q - (dmin * m)``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["REFERENCES"]

QK_K = 256


def _f16(b: np.ndarray) -> np.ndarray:
    """fp16 values stored as byte pairs: ``(n, 2k)`` uint8 -> ``(n, k)`` float32."""
    return np.ascontiguousarray(b).view(np.float16).astype(np.float32)


def _nibbles(qs: np.ndarray) -> np.ndarray:
    """``(n, k)`` bytes -> ``(n, 2k)``: the low nibbles of all, then the high nibbles."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=1)


def _bits(qh: np.ndarray, n_bits: int) -> np.ndarray:
    """Bit ``j`` of the little-endian integer in ``qh``'s bytes, for ``j < n_bits``."""
    j = np.arange(n_bits)
    return (qh[:, j // 8] >> (j % 8).astype(np.uint8)) & 1


def bf16(blocks: np.ndarray) -> np.ndarray:
    bits = np.ascontiguousarray(blocks).view(np.uint16).astype(np.uint32) << 16
    return bits.view(np.float32)


def q8_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    return blocks[:, 2:].view(np.int8).astype(np.float32) * d


def q4_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    return d * (_nibbles(blocks[:, 2:]).astype(np.float32) - 8)


def q4_1(blocks: np.ndarray) -> np.ndarray:
    d, m = _f16(blocks[:, :2]), _f16(blocks[:, 2:4])
    return d * _nibbles(blocks[:, 4:]).astype(np.float32) + m


def q5_0(blocks: np.ndarray) -> np.ndarray:
    d = _f16(blocks[:, :2])
    q = _nibbles(blocks[:, 6:]) | (_bits(blocks[:, 2:6], 32) << 4)
    return d * (q.astype(np.float32) - 16)


def q5_1(blocks: np.ndarray) -> np.ndarray:
    d, m = _f16(blocks[:, :2]), _f16(blocks[:, 2:4])
    q = _nibbles(blocks[:, 8:]) | (_bits(blocks[:, 4:8], 32) << 4)
    return d * q.astype(np.float32) + m


def _crumbs(qs: np.ndarray) -> np.ndarray:
    """2-bit values of ``(n, 64)`` bytes in K order -> ``(n, 256)``: for each half of 32
    bytes, the four shifts 0, 2, 4, 6 in turn."""
    n = qs.shape[0]
    shifts = np.array([0, 2, 4, 6], np.uint8).reshape(1, 1, 4, 1)
    return ((qs.reshape(n, 2, 1, 32) >> shifts) & 3).reshape(n, QK_K)


def q2_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    scales, qs = blocks[:, :16], blocks[:, 16:80]
    d, dmin = _f16(blocks[:, 80:82]), _f16(blocks[:, 82:84])
    dl = (d * (scales & 0x0F).astype(np.float32)).reshape(n, 16, 1)
    ml = (dmin * (scales >> 4).astype(np.float32)).reshape(n, 16, 1)
    q = _crumbs(qs).reshape(n, 16, 16).astype(np.float32)
    return (dl * q - ml).reshape(n, QK_K)


def _q3_scales(s: np.ndarray) -> np.ndarray:
    """Q3_K's 16 six-bit scales from 12 bytes: low 4 bits from bytes 0-7 (low then high
    nibbles), high 2 bits from bytes 8-11 (shifts 0, 2, 4, 6), minus 32."""
    i = np.arange(16)
    low = np.where(i < 8, s[:, i % 8] & 0x0F, s[:, i % 8] >> 4)
    high = (s[:, 8 + i % 4] >> (2 * (i // 4)).astype(np.uint8)) & 3
    return ((low | (high << 4)).astype(np.int8) - 32).astype(np.float32)


def q3_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    hmask, qs, scales = blocks[:, :32], blocks[:, 32:96], blocks[:, 96:108]
    d = _f16(blocks[:, 108:110])
    dl = (d * _q3_scales(scales)).reshape(n, 16, 1)
    e = np.arange(QK_K)
    high = (hmask[:, e % 32] >> (e // 32).astype(np.uint8)) & 1
    q = _crumbs(qs).astype(np.int8) - ((high ^ 1) << 2).astype(np.int8)
    return (dl * q.reshape(n, 16, 16).astype(np.float32)).reshape(n, QK_K)


def scale_min_k4(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_K / Q5_K's eight 6-bit scales and minimums from 12 bytes (ggml's
    ``get_scale_min_k4``): ``(n, 8)`` each."""
    a, b, c = s[:, 0:4], s[:, 4:8], s[:, 8:12]
    sc = np.concatenate([a & 63, (c & 0x0F) | ((a >> 6) << 4)], axis=1)
    m = np.concatenate([b & 63, (c >> 4) | ((b >> 6) << 4)], axis=1)
    return sc, m


def _k4(blocks: np.ndarray, q: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    d, dmin = _f16(blocks[:, 0:2]), _f16(blocks[:, 2:4])
    sc, m = scale_min_k4(blocks[:, 4:16])
    dl = (d * sc.astype(np.float32)).reshape(n, 8, 1)
    ml = (dmin * m.astype(np.float32)).reshape(n, 8, 1)
    return (dl * q.reshape(n, 8, 32).astype(np.float32) - ml).reshape(n, QK_K)


def _k_nibbles(qs: np.ndarray) -> np.ndarray:
    """4-bit values of ``(n, 128)`` bytes in K order: each 32 bytes give 32 low nibbles,
    then 32 high nibbles."""
    n = qs.shape[0]
    q = qs.reshape(n, 4, 1, 32) >> np.array([0, 4], np.uint8).reshape(1, 1, 2, 1)
    return (q & 0x0F).reshape(n, QK_K)


def q4_k(blocks: np.ndarray) -> np.ndarray:
    return _k4(blocks, _k_nibbles(blocks[:, 16:144]))


def q5_k(blocks: np.ndarray) -> np.ndarray:
    qh, qs = blocks[:, 16:48], blocks[:, 48:176]
    e = np.arange(QK_K)
    high = (qh[:, e % 32] >> (e // 32).astype(np.uint8)) & 1
    return _k4(blocks, _k_nibbles(qs) | (high << 4))


def q6_k(blocks: np.ndarray) -> np.ndarray:
    n = blocks.shape[0]
    ql, qh, scales = blocks[:, :128], blocks[:, 128:192], blocks[:, 192:208]
    d = _f16(blocks[:, 208:210])
    dl = (d * scales.view(np.int8).astype(np.float32)).reshape(n, 16, 1)
    low = (ql.reshape(n, 2, 1, 64) >> np.array([0, 4], np.uint8).reshape(1, 1, 2, 1)) & 0x0F
    high = _crumbs(qh)
    q = (low.reshape(n, QK_K) | (high << 4)).astype(np.int8) - 32
    return (dl * q.reshape(n, 16, 16).astype(np.float32)).reshape(n, QK_K)


#: ggml type name -> its reference (F32 and F16 are NumPy's own casts).
REFERENCES = {
    "F32": lambda b: np.ascontiguousarray(b).view(np.float32),
    "F16": _f16,
    "BF16": bf16,
    "Q8_0": q8_0,
    "Q4_0": q4_0,
    "Q4_1": q4_1,
    "Q5_0": q5_0,
    "Q5_1": q5_1,
    "Q2_K": q2_k,
    "Q3_K": q3_k,
    "Q4_K": q4_k,
    "Q5_K": q5_k,
    "Q6_K": q6_k,
}
