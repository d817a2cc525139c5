r"""Scaled dot-product attention: the plain path (the math), and the choice of path.

For queries ``Q`` (L, E), keys ``K`` (S, E) and values ``V`` (S, Ev) of one head,

    S = Q K^T * scale + mask          # (L, S) scores, scale = 1 / sqrt(E) by default
    P = softmax(S)                    # each row sums to 1 over the keys it may see
    O = P V                           # (L, Ev)

and the backward, with ``D = rowsum(dO * O)`` (= ``rowsum(dP * P)``)::

    dV = P^T dO      dP = dO V^T      dS = P * (dP - D)      dQ = dS K * scale      dK = dS^T Q * scale

The plain path builds ``S`` and keeps ``P`` for the backward: memory grows as ``L x S``
per head. :mod:`rowbook.nn.sdpa_tiled` computes the same outputs and gradients in tiles
with an online softmax and never holds more than a tile of ``S`` (FlashAttention-2);
:func:`scaled_dot_product_attention` takes it automatically for long sequences.

Masks follow PyTorch: a boolean mask is True where a query may attend, a float mask is
added to the scores; ``is_causal`` lets query ``i`` see keys ``0..i`` (the top-left
triangle, for ``L != S`` too). A query that may see no key gets zeros, and no gradient
(PyTorch 2.13's CPU kernels do the same). Grouped-query attention (``enable_gqa``): ``H``
query heads share ``H_kv`` key/value heads, query head ``h`` reading key head
``h // (H / H_kv)``, without copying the keys.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np

from rowbook.autograd import Tensor, as_tensor
from rowbook.checks import InputTypeError, check_choice, check_number
from rowbook.nn.activation import dropout_mask
from rowbook.nn.sdpa_tiled import blas_single_thread

__all__ = [
    "TILED_MIN_KEYS",
    "attention_plain",
    "causal_mask",
    "scaled_dot_product_attention",
]

#: ``implementation="auto"`` tiles attention when a head has at least this many keys and
#: ``L x S >= TILED_MIN_KEYS^2`` scores (and the mask is causal and/or by key): from there
#: the plain path's ``L x S`` scores stop fitting in cache, and the tiled kernel is faster as
#: well as smaller. A few queries over many keys (a generation step with a KV cache: L = 1)
#: stay plain: measured at 1 query x 1,024 keys x 4 heads, 0.1 ms plain against 16 ms tiled.
TILED_MIN_KEYS = 1024


def causal_mask(L: int, S: int, offset: int = 0) -> np.ndarray:
    """``(L, S)`` boolean mask, True where key ``j <= i + offset`` (``offset=0``: PyTorch's
    ``is_causal``, the top-left triangle; ``offset = S - L``: queries that are the last
    ``L`` of the ``S`` positions, as when decoding with a KV cache).

    Examples
    --------
    >>> causal_mask(2, 3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0]])
    >>> causal_mask(2, 3, offset=1).astype(int)
    array([[1, 1, 0],
           [1, 1, 1]])
    """
    return np.arange(S)[None, :] <= np.arange(L)[:, None] + offset


def _split_heads(q: np.ndarray, k: np.ndarray) -> tuple[int, int, int]:
    """``(batch, H_kv, group)`` of 4-D ``(B, H, L, E)`` queries and ``(B, H_kv, S, E)`` keys."""
    return q.shape[0], k.shape[1], q.shape[1] // k.shape[1]


def _group_mask(mask: np.ndarray, Hkv: int, g: int, L: int, S: int) -> np.ndarray:
    """A mask broadcastable to ``(B, H, L, S)`` as one broadcastable to ``(B, H_kv, g L, S)``,
    the scores of the ``g`` query heads that share a key head stacked as rows."""
    m = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)  # (b, h, l, s)
    if g == 1 or (m.shape[1] == 1 and m.shape[2] == 1):
        return m  # already fits, or depends on the key alone
    full = np.broadcast_to(m, (m.shape[0], Hkv * g, L, S))
    return full.reshape(m.shape[0], Hkv, g * L, S)


def attention_plain(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    scale: float,
    causal_offset: int | None = None,
    mask: np.ndarray | None = None,
    dropout: np.ndarray | None = None,
) -> tuple[np.ndarray, Any]:
    """The plain path on arrays: ``(O, backward)`` with ``backward(dO) -> (dQ, dK, dV)``.

    ``q`` (B, H, L, E), ``k`` (B, H_kv, S, E), ``v`` (B, H_kv, S, Ev); ``mask`` boolean or
    float, broadcastable to (B, H, L, S); ``dropout`` a scaled keep-mask of the weights'
    shape (B, H_kv, H / H_kv * L, S), or None. The ``H / H_kv`` query heads of a group are
    stacked as rows against their one key head, so every product is one batched matmul.
    """
    B, Hkv, g = _split_heads(q, k)
    L, S, E = q.shape[2], k.shape[2], q.shape[3]
    # Contiguous heads: NumPy multiplies stacks of strided views (heads split off a (B, T, H d)
    # projection) with its own loops, not BLAS, measured 17x slower at (16, 4, 256, 64).
    q, k, v = np.ascontiguousarray(q), np.ascontiguousarray(k), np.ascontiguousarray(v)
    qg = q.reshape(B, Hkv, g * L, E)  # a group's query heads as rows
    with blas_single_thread():  # many small products: BLAS's own threads cost more than they add
        scores = qg @ np.swapaxes(k, -1, -2)  # (B, Hkv, g L, S)
    scores *= scores.dtype.type(scale)
    allowed = None
    if causal_offset is not None:
        allowed = np.tile(causal_mask(L, S, causal_offset), (g, 1))  # (g L, S)
    if mask is not None and mask.dtype == np.bool_:
        grouped = _group_mask(mask, Hkv, g, L, S)
        allowed = grouped if allowed is None else allowed & grouped
    elif mask is not None:
        scores += _group_mask(mask.astype(scores.dtype, copy=False), Hkv, g, L, S)
    if allowed is not None:
        np.copyto(scores, -np.inf, where=~allowed)
    top = scores.max(axis=-1, keepdims=True)
    top[~np.isfinite(top)] = 0  # a row that sees no key: exp gives zeros, not NaN
    np.subtract(scores, top, out=scores)
    probs = np.exp(scores, out=scores)  # (B, Hkv, g L, S)
    total = probs.sum(axis=-1, keepdims=True)
    total[total == 0] = np.inf  # zeros over a zero sum stay zeros
    probs /= total
    weights = probs if dropout is None else probs * dropout
    with blas_single_thread():
        out = weights @ v  # (B, Hkv, g L, Ev)

    def backward(g_out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        go = np.ascontiguousarray(g_out).reshape(out.shape)
        with blas_single_thread():
            dv = np.swapaxes(weights, -1, -2) @ go  # (B, Hkv, S, Ev): the group's rows summed
            dp = go @ np.swapaxes(v, -1, -2)  # (B, Hkv, g L, S)
        if dropout is not None:
            dp *= dropout
        delta = (go * out).sum(axis=-1, keepdims=True)  # rowsum(dO * O) = rowsum(dP * P)
        dp -= delta
        dp *= probs  # dS
        dp *= dp.dtype.type(scale)
        with blas_single_thread():
            dq = (dp @ k).reshape(q.shape)
            dk = np.swapaxes(dp, -1, -2) @ qg  # (B, Hkv, S, E)
        return dq, dk, dv

    return out.reshape(B, Hkv * g, L, v.shape[3]), backward


def _as_4d(t: Tensor, name: str) -> np.ndarray:
    if t.ndim < 2:
        raise ValueError(
            f"scaled_dot_product_attention: {name} needs at least 2 dimensions "
            f"(..., length, features), got shape {t.shape}"
        )
    a = t.data
    if a.ndim == 2:
        return a[None, None]
    return a.reshape(-1, *a.shape[-3:])


def _check_shapes(q: Tensor, k: Tensor, v: Tensor, enable_gqa: bool) -> None:
    if not (q.ndim == k.ndim == v.ndim):
        raise ValueError(
            f"scaled_dot_product_attention: query, key and value must have the same "
            f"number of dimensions, got shapes {q.shape}, {k.shape}, {v.shape}"
        )
    if k.shape[:-1] != v.shape[:-1]:
        raise ValueError(
            f"scaled_dot_product_attention: key {k.shape} and value {v.shape} must "
            "agree on every dimension but the last"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"scaled_dot_product_attention: query and key must have the same last "
            f"dimension (E), got {q.shape} and {k.shape}"
        )
    heads_q = q.shape[-3] if q.ndim > 2 else 1
    heads_k = k.shape[-3] if k.ndim > 2 else 1
    same_lead = q.shape[:-3] == k.shape[:-3]
    if not same_lead or (heads_q != heads_k and not enable_gqa):
        raise ValueError(
            f"scaled_dot_product_attention: query {q.shape} and key {k.shape} must agree on "
            "their batch and head dimensions (pass enable_gqa=True for fewer key/value heads)"
        )
    if heads_q % heads_k:
        raise ValueError(
            f"scaled_dot_product_attention: with enable_gqa, the query heads "
            f"({heads_q}) must be a multiple of the key/value heads ({heads_k})"
        )


def _mask_array(attn_mask: Any, q: Tensor, L: int, S: int, dtype: np.dtype) -> np.ndarray | None:
    if attn_mask is None:
        return None
    if isinstance(attn_mask, Tensor) and attn_mask.requires_grad:
        raise ValueError(
            "scaled_dot_product_attention: attn_mask is a constant here; pass attn_mask.detach()"
        )
    mask = np.asarray(attn_mask.data if isinstance(attn_mask, Tensor) else attn_mask)
    if mask.dtype != np.bool_ and mask.dtype.kind != "f":
        raise InputTypeError(
            f"scaled_dot_product_attention: attn_mask must be boolean (True: may "
            f"attend) or floating (added to the scores), got dtype {mask.dtype}"
        )
    full = (*q.shape[:-2], L, S)
    try:
        np.broadcast_shapes(mask.shape, full)
    except ValueError:
        raise ValueError(
            f"scaled_dot_product_attention: attn_mask of shape {mask.shape} does not "
            f"broadcast to the scores' shape {full}"
        ) from None
    if mask.ndim > 4 or (mask.ndim == 4 and q.ndim > 4):
        mask = np.broadcast_to(mask, full).reshape(-1, *full[-3:])
    return mask if mask.dtype == np.bool_ else mask.astype(dtype, copy=False)


def key_mask_of(mask: np.ndarray | None, B: int) -> np.ndarray | bool | None:
    """``mask`` as a ``(B, S)`` boolean key mask when it only depends on batch and key
    (shape ``(b, 1, 1, S)`` or ``(S,)``); None without a mask; False when it is general."""
    if mask is None:
        return None
    if mask.dtype != np.bool_:
        return False
    m = mask.reshape((1,) * (4 - mask.ndim) + mask.shape)
    if m.shape[1] != 1 or m.shape[2] != 1:
        return False
    return np.ascontiguousarray(np.broadcast_to(m[:, 0, 0], (B, m.shape[3])))


def scaled_dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
    *,
    rng: Any = None,
    implementation: Literal["auto", "plain", "tiled"] = "auto",
) -> Tensor:
    r"""``softmax(Q K^T * scale + mask) V`` per head, as ``torch.nn.functional.scaled_dot_product_attention``.

    Parameters
    ----------
    query, key, value
        ``(..., L, E)``, ``(..., S, E)``, ``(..., S, Ev)``; with ``enable_gqa`` the head
        dimension (third from last) of ``key`` and ``value`` may divide the query's.
    attn_mask
        Boolean (True: may attend) or float (added to the scores), broadcastable to
        ``(..., L, S)``. Not together with ``is_causal``.
    dropout_p
        Probability of dropping an attention weight (the survivors are scaled by
        ``1 / (1 - p)``), drawn from ``rng``.
    is_causal
        Query ``i`` sees keys ``0..i`` only.
    scale
        Multiplies the scores; ``None``: ``1 / sqrt(E)``.
    enable_gqa
        Grouped-query attention: query head ``h`` uses key/value head ``h // (H / H_kv)``.
    rng
        ``numpy.random.Generator`` or seed of the dropout mask.
    implementation
        ``"plain"`` builds the ``L x S`` scores; ``"tiled"`` never does
        (:mod:`rowbook.nn.sdpa_tiled`: causal or key masks only, no dropout); ``"auto"``
        tiles from :data:`TILED_MIN_KEYS` keys and ``TILED_MIN_KEYS^2`` scores on when it can.

    Shape
    -----
    - query: ``(..., H, L, E)``; key: ``(..., H_kv, S, E)``; value: ``(..., H_kv, S, Ev)``
    - output: ``(..., H, L, Ev)``

    Examples
    --------
    >>> q = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> v = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> scaled_dot_product_attention(q, q, v, is_causal=True).numpy().round(3)
    array([[1.   , 2.   ],
           [2.339, 3.339]])
    """
    check_choice(
        "implementation",
        implementation,
        ("auto", "plain", "tiled"),
        owner="scaled_dot_product_attention",
    )
    check_number("dropout_p", dropout_p, 0.0, 1.0, owner="scaled_dot_product_attention")
    q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
    if q.dtype.kind != "f" or not (q.dtype == k.dtype == v.dtype):
        raise InputTypeError(
            f"scaled_dot_product_attention: query, key and value must share one "
            f"floating dtype, got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    _check_shapes(q, k, v, enable_gqa)
    if is_causal and attn_mask is not None:
        raise ValueError(
            "scaled_dot_product_attention: pass either attn_mask or is_causal, not "
            "both (fold the causal triangle into the mask)"
        )
    L, S = q.shape[-2], k.shape[-2]
    mask = _mask_array(attn_mask, q, L, S, q.dtype)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    return attend(
        q,
        k,
        v,
        scale=scale,
        causal_offset=0 if is_causal else None,
        mask=mask,
        dropout_p=dropout_p,
        rng=rng,
        implementation=implementation,
    )


def attend(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    *,
    scale: float,
    causal_offset: int | None = None,
    mask: np.ndarray | None = None,
    dropout_p: float = 0.0,
    rng: Any = None,
    implementation: str = "auto",
) -> Tensor:
    """Checked inputs to one graph node, by the plain or the tiled path (see the caller)."""
    from rowbook.nn import sdpa_tiled

    q4, k4, v4 = _as_4d(q, "query"), _as_4d(k, "key"), _as_4d(v, "value")
    key_mask = key_mask_of(mask, q4.shape[0])
    tileable = key_mask is not False and dropout_p == 0
    if implementation == "tiled" and not tileable:
        raise ValueError(
            "scaled_dot_product_attention: implementation='tiled' takes causal and "
            "key masks (shape (B, 1, 1, S)) and no dropout; use 'plain' or 'auto'"
        )
    tiled = implementation == "tiled" or (
        implementation == "auto"
        and tileable
        and k4.shape[2] >= TILED_MIN_KEYS
        and q4.shape[2] * k4.shape[2] >= TILED_MIN_KEYS**2
    )
    if tiled:
        out, backward = sdpa_tiled.attention_tiled(
            q4, k4, v4, scale=scale, causal_offset=causal_offset, key_mask=key_mask
        )
    else:
        B, Hkv, g = _split_heads(q4, k4)
        keep = None
        if dropout_p > 0:
            keep = dropout_mask((B, Hkv, g * q4.shape[2], k4.shape[2]), dropout_p, rng, q4.dtype)
        out, backward = attention_plain(
            q4, k4, v4, scale=scale, causal_offset=causal_offset, mask=mask, dropout=keep
        )
    out_shape = (*q.shape[:-1], v.shape[-1])

    def grads(g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        dq, dk, dv = backward(g.reshape(out.shape))
        return dq.reshape(q.shape), dk.reshape(k.shape), dv.reshape(v.shape)

    return Tensor._make(out.reshape(out_shape), (q, k, v), grads, "scaled_dot_product_attention")
