"""Dequantising GGUF tensors: one compiled kernel per block type, beside its NumPy reference.

A quantised tensor is a run of blocks; each block holds ``block_size`` values in
``type_size`` bytes (:data:`rowbook.gguf.types.GGML_TYPES`). Each kernel here walks the
blocks once, value by value, and writes float32: the same arithmetic, in the same order, as
the reference of the same name in :mod:`rowbook.gguf.quants_reference` (NumPy, from the
definitions in ``gguf``'s ``quants.py`` and ggml's ``dequantize_row_*``), and the tests hold
every kernel to it and to ``gguf.quants.dequantize`` bit for bit. The float16 scales are
read through a table of all 65,536 half-precision values widened by NumPy, so the widening
is NumPy's own.

The NumPy formulation makes every intermediate a full array (nibbles, shifted copies,
scales broadcast); a kernel keeps them in registers, which is where its speed comes from
(``benchmarks/bench_gguf.py``: the throughput of both per type). The kernels release the
GIL; :func:`dequantize_blocks` can cut a large tensor into pieces over threads.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from rowbook.gguf.types import GGML_TYPES

__all__ = ["KERNELS", "SUPPORTED", "dequantize", "dequantize_blocks"]

_F16 = np.arange(1 << 16, dtype=np.uint16).view(np.float16).astype(np.float32)  # (65536,)
_PIECE_BLOCKS = 1 << 14  # blocks per thread's piece: ~4M values of a K type
_jit = numba.njit(cache=True, nogil=True, boundscheck=False)

# A kernel walks its one block layout, as ggml's dequantize_row_* do. Where two layouts
# differ by a field (a minimum, a fifth bit), one loop serves both with a flag per field; numba
# inlines it (inline="always") into each type's kernel with the flags constant, and the
# compiler folds their branches away there, so that no value pays a layout branch.


@_jit
def _h(f16, b, i):
    """The fp16 value at bytes ``b[i], b[i + 1]``, as float32."""
    return f16[np.int32(b[i]) | (np.int32(b[i + 1]) << 8)]


@_jit
def _bf16(blocks, f16, out):
    bits = out.view(np.uint32)
    for k in range(blocks.shape[0]):
        bits[k, 0] = (np.uint32(blocks[k, 0]) << 16) | (np.uint32(blocks[k, 1]) << 24)


@_jit
def _f16_kernel(blocks, f16, out):
    for k in range(blocks.shape[0]):
        out[k, 0] = _h(f16, blocks[k], 0)


@_jit
def _q8_0(blocks, f16, out):
    for k in range(blocks.shape[0]):
        b = blocks[k]
        d = _h(f16, b, 0)
        for j in range(32):
            q = np.int32(b[2 + j])
            out[k, j] = np.float32(q - 256 if q > 127 else q) * d


@numba.njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _legacy(blocks, f16, out, has_min, has_high):
    """Q4_0, Q4_1, Q5_0, Q5_1: ``d [| m] [| qh[4]] | qs[16]``; value j is the low nibble of
    qs[j], value j + 16 its high nibble, bit j (j + 16) of qh their fifth bit (``has_high``);
    a value is ``d q + m`` (``has_min``), else ``d (q - 8)`` (``d (q - 16)`` with five bits).
    """
    qs = 2 + 2 * has_min + 4 * has_high
    zero = 16 if has_high else 8
    for k in range(blocks.shape[0]):
        b = blocks[k]
        d = _h(f16, b, 0)
        m = _h(f16, b, 2) if has_min else np.float32(0)
        qh = np.uint32(0)
        if has_high:
            qh = np.uint32(b[qs - 4]) | (np.uint32(b[qs - 3]) << 8) | (np.uint32(b[qs - 2]) << 16)
            qh |= np.uint32(b[qs - 1]) << 24
        for j in range(16):
            lo = np.int32(b[qs + j] & 0x0F)
            hi = np.int32(b[qs + j] >> 4)
            if has_high:
                lo |= np.int32(((qh >> j) & 1) << 4)
                hi |= np.int32(((qh >> (j + 16)) & 1) << 4)
            if has_min:
                out[k, j] = d * np.float32(lo) + m
                out[k, j + 16] = d * np.float32(hi) + m
            else:
                out[k, j] = d * np.float32(lo - zero)
                out[k, j + 16] = d * np.float32(hi - zero)


@_jit
def _q2_k(blocks, f16, out):
    # scales[16] | qs[64] | d | dmin; sub-block i of 16 values: 2 bits of
    # qs[32 (i // 8) + 16 (i % 2) + lane] at shift 2 ((i % 8) // 2), its 4-bit scale and
    # minimum in scales[i]
    for k in range(blocks.shape[0]):
        b = blocks[k]
        d, dmin = _h(f16, b, 80), _h(f16, b, 82)
        for i in range(16):
            s = np.int32(b[i])
            dl, ml = d * np.float32(s & 0x0F), dmin * np.float32(s >> 4)
            at, shift = 16 + 32 * (i // 8) + 16 * (i % 2), 2 * ((i % 8) // 2)
            for lane in range(16):
                q = (np.int32(b[at + lane]) >> shift) & 3
                out[k, 16 * i + lane] = dl * np.float32(q) - ml


@_jit
def _q3_scale(b, i):
    """Q3_K's 6-bit scale of sub-block ``i`` (bytes 96..107), minus 32."""
    low = np.int32(b[96 + i % 8])
    low = low & 0x0F if i < 8 else low >> 4
    high = (np.int32(b[104 + i % 4]) >> (2 * (i // 4))) & 3
    return (low | (high << 4)) - 32


@_jit
def _q3_k(blocks, f16, out):
    # hmask[32] | qs[64] | scales[12] | d; the low 2 bits as Q2_K's, bit i // 2 of
    # hmask[16 (i % 2) + lane] the third: a clear bit subtracts 4
    for k in range(blocks.shape[0]):
        b = blocks[k]
        d = _h(f16, b, 108)
        for i in range(16):
            dl = d * np.float32(_q3_scale(b, i))
            at, shift = 32 + 32 * (i // 8) + 16 * (i % 2), 2 * ((i % 8) // 2)
            for lane in range(16):
                q = (np.int32(b[at + lane]) >> shift) & 3
                if not (np.int32(b[16 * (i % 2) + lane]) >> (i // 2)) & 1:
                    q -= 4
                out[k, 16 * i + lane] = dl * np.float32(q)


@_jit
def _scale_min_k4(b, j):
    """Q4_K / Q5_K's 6-bit scale and minimum of sub-block ``j`` (bytes 4..15 of a block)."""
    if j < 4:
        return np.int32(b[4 + j]) & 63, np.int32(b[8 + j]) & 63
    sc = (np.int32(b[12 + j - 4]) & 0x0F) | ((np.int32(b[4 + j - 4]) >> 6) << 4)
    m = (np.int32(b[12 + j - 4]) >> 4) | ((np.int32(b[8 + j - 4]) >> 6) << 4)
    return sc, m


@numba.njit(cache=True, nogil=True, boundscheck=False, inline="always")
def _k4(blocks, f16, out, has_high):
    """Q4_K, Q5_K: ``d | dmin | scales[12] [| qh[32]] | qs[128]``; sub-block j (32 values)
    from the low (j even) or high (j odd) nibbles of qs[32 (j // 2) : 32 (j // 2) + 32], bit j
    of qh[lane] the fifth bit (``has_high``)."""
    qs = 48 if has_high else 16
    for k in range(blocks.shape[0]):
        b = blocks[k]
        d, dmin = _h(f16, b, 0), _h(f16, b, 2)
        for j in range(8):
            sc, m = _scale_min_k4(b, j)
            dl, ml = d * np.float32(sc), dmin * np.float32(m)
            shift = 4 * (j % 2)
            for lane in range(32):
                q = (np.int32(b[qs + 32 * (j // 2) + lane]) >> shift) & 0x0F
                if has_high:
                    q |= ((np.int32(b[16 + lane]) >> j) & 1) << 4
                out[k, 32 * j + lane] = dl * np.float32(q) - ml


@_jit
def _q6_k(blocks, f16, out):
    # ql[128] | qh[64] | scales[16] (int8) | d; sub-block i of 16 values, r = 16 (i % 8):
    # low 4 bits of ql[64 (i // 8) + r % 64 + lane] at shift 4 (r // 64), high 2 bits of
    # qh[32 (i // 8) + r % 32 + lane] at shift 2 (r // 32)
    for k in range(blocks.shape[0]):
        b = blocks[k]
        d = _h(f16, b, 208)
        for i in range(16):
            s = np.int32(b[192 + i])
            dl = d * np.float32(s - 256 if s > 127 else s)
            r = 16 * (i % 8)
            low_at, low_shift = 64 * (i // 8) + r % 64, 4 * (r // 64)
            high_at, high_shift = 128 + 32 * (i // 8) + r % 32, 2 * (r // 32)
            for lane in range(16):
                low = (np.int32(b[low_at + lane]) >> low_shift) & 0x0F
                high = (np.int32(b[high_at + lane]) >> high_shift) & 3
                out[k, 16 * i + lane] = dl * np.float32((low | (high << 4)) - 32)


#: ggml type name -> its kernel ``(blocks, f16 table, out) -> None``; the types that share a
#: loop pass it their layout's flags, constants the compiler folds.
KERNELS = {
    "F16": _f16_kernel,
    "BF16": _bf16,
    "Q8_0": _q8_0,
    "Q4_0": _jit(lambda blocks, f16, out: _legacy(blocks, f16, out, False, False)),
    "Q4_1": _jit(lambda blocks, f16, out: _legacy(blocks, f16, out, True, False)),
    "Q5_0": _jit(lambda blocks, f16, out: _legacy(blocks, f16, out, False, True)),
    "Q5_1": _jit(lambda blocks, f16, out: _legacy(blocks, f16, out, True, True)),
    "Q2_K": _q2_k,
    "Q3_K": _q3_k,
    "Q4_K": _jit(lambda blocks, f16, out: _k4(blocks, f16, out, False)),
    "Q5_K": _jit(lambda blocks, f16, out: _k4(blocks, f16, out, True)),
    "Q6_K": _q6_k,
}
#: The ggml types rowbook dequantises.
SUPPORTED = ("F32", *KERNELS)


def dequantize_blocks(raw: np.ndarray, type_name: str, workers: int = 1) -> np.ndarray:
    """``raw`` bytes of whole blocks of ``type_name`` -> ``(n_blocks, block_size)`` float32.

    Examples
    --------
    >>> raw = np.array([0x00, 0x3C] + [1, 255] + [0] * 30, dtype=np.uint8)  # d = 1.0
    >>> dequantize_blocks(raw, "Q8_0")[0, :3]
    array([ 1., -1.,  0.], dtype=float32)
    """
    _, block, type_bytes = next(v for v in GGML_TYPES.values() if v[0] == type_name)
    blocks = np.ascontiguousarray(raw).reshape(-1, type_bytes)  # (n_blocks, type_size)
    if type_name == "F32":
        return blocks.view(np.float32).copy()
    out = np.empty((blocks.shape[0], block), dtype=np.float32)  # (n_blocks, block_size)
    kernel = KERNELS[type_name]
    n = blocks.shape[0]
    if workers <= 1 or n <= _PIECE_BLOCKS:
        kernel(blocks, _F16, out)
        return out
    starts = range(0, n, _PIECE_BLOCKS)
    with ThreadPoolExecutor(workers) as pool:
        done = pool.map(
            lambda s: kernel(blocks[s : s + _PIECE_BLOCKS], _F16, out[s : s + _PIECE_BLOCKS]),
            starts,
        )
        list(done)
    return out


def dequantize(
    raw: np.ndarray,
    ggml_type: int,
    shape: tuple[int, ...],
    *,
    name: str = "tensor",
    workers: int = 1,
) -> np.ndarray:
    """A tensor's stored bytes as a new float32 array of ``shape`` (NumPy order).

    ``workers`` threads share a large tensor. One is the default: on the project's two
    shared cores, with other work running, a 128,256 x 2,048 Q4_K table took 0.23 s on one
    thread and 0.30 s on two.
    A type rowbook does not dequantise (the ``IQ`` types, ``TQ``, ``MXFP4``) is a
    ``ValueError`` naming the tensor and the types it reads.
    """
    type_name = GGML_TYPES[ggml_type][0]
    if type_name not in SUPPORTED:
        raise ValueError(
            f"{name} is stored as {type_name}, which rowbook does not dequantise; it reads "
            f"{', '.join(SUPPORTED)}"
        )
    return dequantize_blocks(raw, type_name, workers).reshape(shape)
