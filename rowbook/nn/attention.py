r"""Multi-head attention (Vaswani et al. 2017) with grouped-query heads, and the KV cache.

The rows ``X`` (B, T, d) coming out of the embedding table are projected into queries,
keys and values, split into heads of ``d_k`` features, attended head by head
(:func:`~rowbook.nn.sdpa.scaled_dot_product_attention`), joined and projected back::

    Q = X W_q^T + b_q     (B, H, T, d_k)         K, V = X W_k^T + b_k, X W_v^T + b_v   (B, H_kv, T, d_k)
    O = softmax(Q K^T / sqrt(d_k) + mask) V      (B, H, T, d_k) -> (B, T, H d_k)
    Y = O W_o^T + b_o                            (B, T, d)

``H_kv = H`` is multi-head attention, ``1 < H_kv < H`` grouped-query attention (Ainslie et
al. 2023: ``H / H_kv`` query heads share each key/value head), ``H_kv = 1`` multi-query
attention (Shazeer 2019). Fewer key/value heads shrink the :class:`KVCache`, which holds
every layer's ``K`` and ``V`` while generating, so that each new token is projected and
attended once instead of recomputing the whole prefix:
``2 x layers x T x H_kv x d_k x batch x itemsize`` bytes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rowbook.autograd import Tensor, as_tensor, no_grad, ops
from rowbook.checks import check_heads, check_number
from rowbook.nn import functional as F
from rowbook.nn import init
from rowbook.nn.layers import Linear
from rowbook.nn.module import Module, Parameter
from rowbook.nn.position import RotaryEmbedding
from rowbook.nn.sdpa import attend, causal_mask

__all__ = ["KVCache", "MultiheadAttention", "padding_mask"]


def padding_mask(ids: Any, padding_idx: int | None) -> np.ndarray | None:
    """``(B, S)`` key padding mask, True where ``ids == padding_idx`` (torch's convention: True
    is left out), or None without a padding id.

    >>> padding_mask([[5, 6, 0], [7, 0, 0]], 0).astype(int)
    array([[0, 0, 1],
           [0, 1, 1]])
    """
    if padding_idx is None:
        return None
    return np.asarray(ids.data if isinstance(ids, Tensor) else ids) == padding_idx


class KVCache:
    """Every layer's keys and values of the positions seen so far, for generation.

    The arrays are allocated once for ``max_length`` positions (``np.zeros``: pages are
    mapped as they are written), so :attr:`nbytes` is exactly
    ``2 x n_layers x max_length x n_kv_heads x head_dim x batch x itemsize``.

    Examples
    --------
    >>> cache = KVCache(n_layers=32, batch=1, n_kv_heads=32, head_dim=128, max_length=4096,
    ...                 dtype=np.float16)
    >>> cache.nbytes / 2**30  # LLaMA-2-7B at 4,096 tokens: 2 GiB per sequence
    2.0
    """

    def __init__(
        self,
        n_layers: int,
        batch: int,
        n_kv_heads: int,
        head_dim: int,
        max_length: int,
        dtype: Any = np.float32,
    ) -> None:
        self.dtype = np.dtype(dtype)
        self.max_length, self.length = max_length, 0
        self._allocate(n_layers, (batch, n_kv_heads, max_length, head_dim))  # (B, H_kv, T, d_k)

    def _allocate(self, n_layers: int, shape: tuple[int, int, int, int]) -> None:
        """Each layer's arrays of keys and values, ``shape`` each (a subclass stores them
        in another form)."""
        self.keys = [np.zeros(shape, dtype=self.dtype) for _ in range(n_layers)]
        self.values = [np.zeros(shape, dtype=self.dtype) for _ in range(n_layers)]

    @property
    def nbytes(self) -> int:
        """Bytes of all the keys and values held (allocated for ``max_length`` positions)."""
        return sum(k.nbytes + v.nbytes for k, v in zip(self.keys, self.values, strict=True))

    def store(
        self, layer: int, keys: np.ndarray, values: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Write the new positions' ``(B, H_kv, l, d_k)`` keys and values after the
        :attr:`length` already held; the keys and values of all positions so far."""
        end = self._end(keys)
        self.keys[layer][:, :, self.length : end] = keys
        self.values[layer][:, :, self.length : end] = values
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]

    def _end(self, keys: np.ndarray) -> int:
        """Where the new positions of ``keys`` ``(B, H_kv, l, d_k)`` end, if they fit."""
        end = self.length + keys.shape[2]
        if end > self.max_length:
            raise ValueError(
                f"the KV cache holds {self.max_length} positions and already has "
                f"{self.length}; {keys.shape[2]} more do not fit"
            )
        return end

    def advance(self, n: int) -> None:
        """Count ``n`` more positions as held (after every layer has stored them)."""
        self.length += n


class MultiheadAttention(Module):
    r"""Self- (or cross-) attention over ``num_heads`` heads, ``n_kv_heads`` of them for keys
    and values, as ``torch.nn.MultiheadAttention`` when ``n_kv_heads == num_heads``.

    Parameters
    ----------
    embed_dim
        d, the width of the rows in and out.
    num_heads
        H, the query heads.
    dropout
        Probability of dropping an attention weight while training.
    bias
        Biases on the input and output projections.
    n_kv_heads
        H_kv, the key/value heads (None: ``num_heads``); must divide ``num_heads``.
    head_dim
        d_k (None: ``embed_dim / num_heads``, which must then be an integer).
    batch_first
        Inputs are ``(B, T, d)`` (default; torch's default is False, ``(T, B, d)``).
    rotary
        A :class:`~rowbook.nn.RotaryEmbedding` applied to queries and keys (Llama), or None.
    dtype, rng
        dtype of the parameters, and the generator (or seed) of their initialisation and of
        the dropout masks.

    Attributes
    ----------
    in_proj_weight
        ``(H d_k + 2 H_kv d_k, d)``: ``W_q``, ``W_k`` and ``W_v`` stacked, torch's layout.
    in_proj_bias
        ``(H d_k + 2 H_kv d_k,)`` or None.
    out_proj
        The :class:`~rowbook.nn.Linear` ``W_o``, ``b_o``.

    Shape
    -----
    - query: ``(B, L, d)``; key, value: ``(B, S, d)`` (self-attention: omit them)
    - key_padding_mask: ``(B, S)``, True (or ``-inf``) on keys to leave out
    - attn_mask: ``(L, S)`` or ``(B H, L, S)``, True (or ``-inf``) where a query may not attend
    - output: ``(B, L, d)``, and the attention weights ``(B, L, S)`` (``(B, H, L, S)`` without
      averaging) when ``need_weights``

    Examples
    --------
    >>> mha = MultiheadAttention(8, num_heads=4, n_kv_heads=2, rng=0)
    >>> out, weights = mha(np.ones((2, 5, 8), dtype=np.float32), is_causal=True, need_weights=False)
    >>> out.shape, weights is None, mha.in_proj_weight.shape
    ((2, 5, 8), True, (16, 8))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        *,
        n_kv_heads: int | None = None,
        head_dim: int | None = None,
        batch_first: bool = True,
        rotary: RotaryEmbedding | None = None,
        dtype: Any = np.float32,
        rng: Any = None,
    ) -> None:
        owner = "MultiheadAttention"
        self.n_kv_heads, self.head_dim = check_heads(
            embed_dim, num_heads, n_kv_heads, head_dim, owner
        )
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.dropout = check_number("dropout", dropout, 0.0, 1.0, owner=owner)
        self.batch_first, self.rotary = bool(batch_first), rotary
        rng = init.as_generator(rng)
        self.rng = rng
        q_dim, kv_dim = num_heads * self.head_dim, self.n_kv_heads * self.head_dim
        self.in_proj_weight = Parameter(np.empty((q_dim + 2 * kv_dim, embed_dim), dtype=dtype))
        self.in_proj_bias = Parameter(np.zeros(q_dim + 2 * kv_dim, dtype=dtype)) if bias else None
        self.out_proj = Linear(q_dim, embed_dim, bias=bias, dtype=dtype, rng=rng)
        init.xavier_uniform_(self.in_proj_weight, rng=rng)  # torch's choice for the fused weight
        if bias:
            init.zeros_(self.out_proj.bias)

    def _project(self, x: Tensor, part: int, heads: int) -> Tensor:
        """Rows ``x`` (B, T, d) through one of W_q, W_k, W_v, split into heads: (B, h, T, d_k)."""
        q_dim, kv_dim = self.num_heads * self.head_dim, self.n_kv_heads * self.head_dim
        start = (0, q_dim, q_dim + kv_dim)[part]
        rows = slice(start, start + (q_dim if part == 0 else kv_dim))
        bias = self.in_proj_bias[rows] if self.in_proj_bias is not None else None
        y = F.linear(x, self.in_proj_weight[rows], bias)  # (B, T, h d_k)
        return y.reshape(x.shape[0], x.shape[1], heads, self.head_dim).transpose(0, 2, 1, 3)

    def forward(
        self,
        query: Any,
        key: Any = None,
        value: Any = None,
        key_padding_mask: Any = None,
        need_weights: bool = True,
        attn_mask: Any = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
        *,
        cache: KVCache | None = None,
        layer: int = 0,
    ) -> tuple[Tensor, Tensor | None]:
        """``(output, weights)``; ``weights`` (averaged over heads unless told otherwise) are
        computed without a graph, and only when ``need_weights``.

        With a ``cache`` (self-attention only), the new positions' keys and values are stored
        in layer ``layer`` of it and the queries attend to every position held, the new ones
        causally; the caller advances the cache after the last layer.
        """
        x = as_tensor(query)
        self_attention = key is None and value is None
        if not self.batch_first:
            x = x.transpose(1, 0, 2)
        key = x if key is None else as_tensor(key)
        value = key if value is None else as_tensor(value)
        if not self.batch_first and not self_attention:
            key, value = key.transpose(1, 0, 2), value.transpose(1, 0, 2)
        if x.shape[-1] != self.embed_dim:
            raise ValueError(
                f"MultiheadAttention(embed_dim={self.embed_dim}) got inputs of shape "
                f"{x.shape}; the last dimension must be {self.embed_dim}"
            )
        q = self._project(x, 0, self.num_heads)
        k = self._project(key, 1, self.n_kv_heads)
        v = self._project(value, 2, self.n_kv_heads)
        start = cache.length if cache is not None else 0
        if self.rotary is not None:
            positions = start + np.arange(q.shape[2])
            q, k = self.rotary(q, positions), self.rotary(k, start + np.arange(k.shape[2]))
        offset = 0 if is_causal else None
        if cache is not None:
            if not self_attention:
                raise ValueError("MultiheadAttention: a KV cache holds self-attention only")
            keys, values = cache.store(layer, k.data, v.data)
            k, v, offset = Tensor(keys), Tensor(values), start
        mask = self._mask(key_padding_mask, attn_mask, x.shape[0], q.shape[2], k.shape[2], x.dtype)
        p = self.dropout if self.training else 0.0
        out = attend(
            q,
            k,
            v,
            scale=1.0 / math.sqrt(self.head_dim),
            causal_offset=offset,
            mask=mask,
            dropout_p=p,
            rng=self.rng,
        )  # (B, H, L, d_k)
        weights = None
        if need_weights:
            weights = self._weights(q, k, offset, mask, average_attn_weights)
        out = out.transpose(0, 2, 1, 3).reshape(x.shape[0], q.shape[2], -1)  # (B, L, H d_k)
        out = self.out_proj(out)
        return (out if self.batch_first else out.transpose(1, 0, 2)), weights

    def _mask(
        self, key_padding_mask: Any, attn_mask: Any, B: int, L: int, S: int, dtype: np.dtype
    ) -> np.ndarray | None:
        """torch's two masks (True or -inf: left out) as one SDPA mask (True or 0: may attend)."""
        mask = None
        for given, shape in ((key_padding_mask, (B, 1, 1, S)), (attn_mask, None)):
            if given is None:
                continue
            m = np.asarray(given.data if isinstance(given, Tensor) else given)
            m = ~m if m.dtype == np.bool_ else m.astype(dtype)
            if shape is not None:
                m = m.reshape(shape)
            elif m.ndim == 3:  # (B H, L, S)
                m = m.reshape(B, self.num_heads, L, S)
            if mask is None:
                mask = m
            elif mask.dtype == np.bool_ and m.dtype == np.bool_:
                mask = mask & m
            else:
                mask = _additive(mask, dtype) + _additive(m, dtype)
        return mask

    def _weights(
        self, q: Tensor, k: Tensor, offset: int | None, mask: np.ndarray | None, average: bool
    ) -> Tensor:
        """The attention weights ``softmax(Q K^T / sqrt(d_k) + mask)``, without a graph."""
        group = self.num_heads // self.n_kv_heads
        with no_grad():
            keys = np.repeat(k.data, group, axis=1)  # (B, H, S, d_k)
            scores = q.data @ np.swapaxes(keys, -1, -2) / np.sqrt(self.head_dim).astype(q.dtype)
            if offset is not None:
                scores = np.where(causal_mask(q.shape[2], keys.shape[2], offset), scores, -np.inf)
            if mask is not None:
                scores = (
                    np.where(mask, scores, -np.inf) if mask.dtype == np.bool_ else scores + mask
                )
            weights = ops.softmax(Tensor(scores), axis=-1).data  # (B, H, L, S)
        weights = np.nan_to_num(weights, nan=0.0)
        return Tensor(weights.mean(axis=1) if average else weights)

    def extra_repr(self) -> str:
        kv = f", n_kv_heads={self.n_kv_heads}" if self.n_kv_heads != self.num_heads else ""
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}{kv}, dropout={self.dropout}"


def _additive(mask: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """A boolean "may attend" mask as 0 / -inf; a float mask as it is."""
    if mask.dtype != np.bool_:
        return mask
    return np.where(mask, 0.0, -np.inf).astype(dtype)
