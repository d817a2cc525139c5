r"""Attention in tiles with an online softmax: the same outputs and gradients as the plain
path (:func:`rowbook.nn.sdpa.attention_plain`, its reference), without the ``L x S`` matrix.

This is FlashAttention-2 (Dao 2023) on a CPU. The queries are cut into blocks of
:data:`BLOCK_Q` rows and the keys and values into blocks of :data:`BLOCK_K`; one task
owns one query block of one head and walks the key blocks (only those the causal mask
lets it see), keeping per row a running maximum ``m``, a running sum ``l`` and an
unnormalised output ``acc``::

    S_ij = Q_i K_j^T * scale                      # one (BLOCK_Q, BLOCK_K) tile, masked
    m'   = max(m, rowmax(S_ij))
    P_ij = exp(S_ij - m')
    l    = exp(m - m') l + rowsum(P_ij)
    acc  = exp(m - m') acc + P_ij V_j
    O_i  = acc / l,      LSE_i = m + log(l)       # after the last block

Only ``O`` and the log-sum-exp ``LSE`` (one number per query) are kept for the backward,
which recomputes each tile's probabilities as ``P_ij = exp(S_ij - LSE_i)`` instead of
storing them (FlashAttention's recomputation). As in FlashAttention-2's backward, a task
owns one key/value block (here: all the blocks of one key/value head, so that the query
heads sharing it under grouped-query attention add into its ``dK``, ``dV`` without a race)
and walks the query blocks, with ``D_i = rowsum(dO_i * O_i)``::

    dV_j += P_ij^T dO_i      dP_ij = dO_i V_j^T      dS_ij = P_ij * (dP_ij - D_i) * scale
    dQ_i += dS_ij K_j        dK_j += dS_ij^T Q_i

Memory: the inputs and outputs, one padded copy of ``K`` and ``V`` in blocks, and a tile
of ``S`` per thread: ``O(T d)`` instead of ``O(T^2)``. The tile products are BLAS
calls (numba's ``np.dot``) on contiguous blocks, run with BLAS on one thread while the
tasks run in parallel (BLAS's own threads, woken for every small product, measured up
to 100x slower on a busy 2-core machine). What differs from the GPU algorithm: no
shared-memory staging (the tiles live in the L2 cache), the work split between threads is
by task instead of thread blocks, and the exponentials are exact, not ``exp2`` tricks.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba.extending import register_jitable

from rowbook.kernel_math import FASTMATH as _FASTMATH
from rowbook.kernel_math import blas_single_thread, fast_exp

__all__ = ["BLOCK_K", "BLOCK_Q", "attention_tiled", "blas_single_thread"]

#: Query rows per tile.
BLOCK_Q = 256
#: Keys per tile (256 x 256 measured 10-25% faster than 128 x 128 at T = 4,096, d_k = 64).
BLOCK_K = 256


def _blocks(x: np.ndarray, block: int) -> np.ndarray:
    """``(B, H, S, E)`` -> ``(B, H, ceil(S / block), block, E)``, zero-padded, contiguous."""
    B, H, S, E = x.shape
    n = -(-S // block)
    out = np.zeros((B, H, n, block, E), dtype=x.dtype)
    out.reshape(B, H, n * block, E)[:, :, :S] = x
    return out


@register_jitable(inline="always")
def _visible(S, j0, row, causal, offset, block):  # pragma: no cover - compiled
    """How many of the keys ``j0 .. j0 + block - 1`` query ``row`` may see (a prefix)."""
    limit = S - j0
    if causal:
        limit = min(limit, row + offset - j0 + 1)
    return max(0, min(limit, block))


@register_jitable(inline="always")
def _clean(S, j0, i0, masked, causal, offset, block):  # pragma: no cover - compiled
    """Whether every key of the tile at ``j0`` exists, is unmasked and is seen by row ``i0``
    (then by every row after it): the tile needs no mask."""
    if masked or j0 + block > S:
        return False
    return not causal or i0 + offset >= j0 + block - 1


@numba.njit(parallel=True, cache=True, nogil=True, fastmath=_FASTMATH)
def _forward_kernel(
    q, kb, vb, key_bias, masked, S, scale, causal, offset, block_q, out, lse
):  # pragma: no cover - compiled
    B, H, L, _ = q.shape
    Hkv, nkb, bk, Ev = kb.shape[1], kb.shape[2], kb.shape[3], vb.shape[4]
    group = H // Hkv
    nqb = (L + block_q - 1) // block_q
    minus_inf = q.dtype.type(-np.inf)
    for task in numba.prange(B * H * nqb):
        b, rest = task // (H * nqb), task % (H * nqb)
        h, ib = rest // nqb, rest % nqb
        hk, bias = h // group, key_bias[min(b, key_bias.shape[0] - 1)]
        i0 = ib * block_q
        i1 = min(L, i0 + block_q)
        rows = i1 - i0
        qi = q[b, h, i0:i1]
        m = np.full(rows, -np.inf, dtype=q.dtype)
        total = np.zeros(rows, dtype=q.dtype)
        acc = np.zeros((rows, Ev), dtype=q.dtype)
        last = nkb
        if causal:
            last = min(nkb, max(0, (i1 - 1 + offset) // bk + 1))
        for jb in range(last):
            j0 = jb * bk
            s = np.dot(qi, kb[b, hk, jb].T)  # (rows, bk)
            clean = _clean(S, j0, i0, masked, causal, offset, bk)
            for r in range(rows):
                top = minus_inf
                if clean:  # every key of the tile visible to every row: no mask to apply
                    for c in range(bk):
                        s[r, c] *= scale
                        top = max(top, s[r, c])
                else:
                    seen = _visible(S, j0, i0 + r, causal, offset, bk)
                    for c in range(bk):
                        x = s[r, c] * scale + bias[j0 + c] if c < seen else minus_inf
                        s[r, c] = x
                        top = max(top, x)
                new_m = max(m[r], top)
                if new_m == -np.inf:  # nothing visible yet: this row's tile adds nothing
                    s[r, :] = 0
                    continue
                alpha = fast_exp(m[r] - new_m)
                row_sum = q.dtype.type(0)
                for c in range(bk):
                    p = fast_exp(s[r, c] - new_m)
                    s[r, c] = p
                    row_sum += p
                total[r] = total[r] * alpha + row_sum
                m[r] = new_m
                for e in range(Ev):
                    acc[r, e] *= alpha
            acc += np.dot(s, vb[b, hk, jb])  # (rows, Ev)
        for r in range(rows):
            if total[r] > 0:
                out[b, h, i0 + r] = acc[r] / total[r]
                lse[b, h, i0 + r] = m[r] + math.log(total[r])
            else:  # a query that sees no key: zeros, and no gradient
                out[b, h, i0 + r] = 0
                lse[b, h, i0 + r] = np.inf


@numba.njit(parallel=True, cache=True, nogil=True, fastmath=_FASTMATH)
def _backward_kernel(
    q, kb, vb, key_bias, masked, do, lse, delta, S, scale, causal, offset, block_q, dq, dkb, dvb
):  # pragma: no cover - compiled
    B, H, L, _ = q.shape
    Hkv, nkb, bk = kb.shape[1], kb.shape[2], kb.shape[3]
    group = H // Hkv
    nqb = (L + block_q - 1) // block_q
    minus_inf = q.dtype.type(-np.inf)
    for task in numba.prange(B * Hkv):
        b, hk = task // Hkv, task % Hkv
        bias = key_bias[min(b, key_bias.shape[0] - 1)]
        for jb in range(nkb):
            j0 = jb * bk
            kj, vj = kb[b, hk, jb], vb[b, hk, jb]
            dk, dv = dkb[b, hk, jb], dvb[b, hk, jb]
            first = 0
            if causal:
                first = max(0, j0 - offset) // block_q
            for h in range(hk * group, (hk + 1) * group):
                for ib in range(first, nqb):
                    i0 = ib * block_q
                    i1 = min(L, i0 + block_q)
                    qi, doi = q[b, h, i0:i1], do[b, h, i0:i1]
                    p = np.dot(qi, kj.T)  # (rows, bk): S_ij, then P_ij
                    clean = _clean(S, j0, i0, masked, causal, offset, bk)
                    for r in range(i1 - i0):
                        row_lse = lse[b, h, i0 + r]
                        if clean:
                            for c in range(bk):
                                p[r, c] = fast_exp(p[r, c] * scale - row_lse)
                            continue
                        seen = _visible(S, j0, i0 + r, causal, offset, bk)
                        for c in range(bk):
                            x = p[r, c] * scale + bias[j0 + c] if c < seen else minus_inf
                            p[r, c] = fast_exp(x - row_lse)
                    dv += np.dot(p.T, doi)
                    ds = np.dot(doi, vj.T)  # dP_ij, then dS_ij
                    for r in range(i1 - i0):
                        d = delta[b, h, i0 + r]
                        for c in range(bk):
                            ds[r, c] = p[r, c] * (ds[r, c] - d) * scale
                    dqi = dq[b, h, i0:i1]
                    dqi += np.dot(ds, kj)
                    dk += np.dot(ds.T, qi)


def attention_tiled(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    scale: float,
    causal_offset: int | None = None,
    key_mask: np.ndarray | None = None,
) -> tuple[np.ndarray, Any]:
    """The tiled path on arrays: ``(O, backward)`` with ``backward(dO) -> (dQ, dK, dV)``.

    Same arguments as :func:`~rowbook.nn.sdpa.attention_plain`, with the mask limited to a
    ``(B, S)`` boolean ``key_mask`` (True: the key may be seen) and no dropout.
    """
    B, H, L, _ = q.shape
    S = k.shape[2]
    dtype = q.dtype.type
    qc = np.ascontiguousarray(q)
    kb, vb = _blocks(k, BLOCK_K), _blocks(v, BLOCK_K)  # (B, Hkv, nkb, BLOCK_K, E)
    causal, offset = causal_offset is not None, int(causal_offset or 0)
    key_bias = np.full((1 if key_mask is None else B, kb.shape[2] * BLOCK_K), -np.inf, q.dtype)
    key_bias[:, :S] = 0 if key_mask is None else np.where(key_mask, 0, -np.inf)  # (B | 1, S)
    masked = key_mask is not None
    out = np.empty((B, H, L, v.shape[3]), dtype=q.dtype)
    lse = np.empty((B, H, L), dtype=q.dtype)  # log-sum-exp of each query's scores
    with blas_single_thread():
        _forward_kernel(
            qc, kb, vb, key_bias, masked, S, dtype(scale), causal, offset, BLOCK_Q, out, lse
        )

    def backward(g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        do = np.ascontiguousarray(g, dtype=q.dtype)
        delta = np.einsum("bhle,bhle->bhl", do, out)  # rowsum(dO * O): (B, H, L)
        dq = np.zeros_like(qc)
        dkb, dvb = np.zeros_like(kb), np.zeros_like(vb)
        with blas_single_thread():
            _backward_kernel(
                qc,
                kb,
                vb,
                key_bias,
                masked,
                do,
                lse,
                delta,
                S,
                dtype(scale),
                causal,
                offset,
                BLOCK_Q,
                dq,
                dkb,
                dvb,
            )
        unblock = lambda x: x.reshape(B, x.shape[1], -1, x.shape[4])[:, :, :S]  # noqa: E731
        return dq, unblock(dkb), unblock(dvb)

    return out, backward
