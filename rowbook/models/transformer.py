r"""A decoder-only Transformer: one configuration, one network, GPT-2 and Llama as settings.

The table ``E`` (V, d) is where it starts: ``X_0 = E[ids] (* sqrt d) (+ P)``, then ``L``
pre-norm blocks, a final norm, and the output layer (``E^T`` itself when tied)::

    h   = x + Dropout(Attention(Norm_1(x)))         # causal, H query heads, H_kv key/value heads
    x'  = h + Dropout(MLP(Norm_2(h)))
    logits = Norm(x_L) W_out^T                      # W_out = E when the table is tied

========================  =============================  ==================================
                          GPT-2                          Llama
========================  =============================  ==================================
positions                 learned ``P`` (context, d)     RoPE on queries and keys
norm                      LayerNorm (with bias)          RMSNorm
MLP                       ``W_2 GELU_tanh(W_1 x + b_1)``   ``W_d (SiLU(W_g x) * W_u x)`` (SwiGLU)
biases                    everywhere                     none
heads                     H_kv = H                       grouped-query, H_kv <= H
========================  =============================  ==================================

:class:`~rowbook.models.transformer_config.TransformerConfig` holds every setting (in its
own module, which sizing reads without this one); :class:`TransformerNet` is the
:class:`~rowbook.nn.Module`, whose call on ``(B, T)`` ids returns the ``(B, T, V)`` logits
as a :class:`~rowbook.autograd.Tensor`, so a training step can be written by hand.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rowbook.autograd import Tensor, ops
from rowbook.models.transformer_config import (
    TransformerConfig,
    rope_frequencies,
)
from rowbook.nn import (
    Dropout,
    Embedding,
    KVCache,
    LayerNorm,
    LearnedPositionalEmbedding,
    Linear,
    Module,
    MultiheadAttention,
    RMSNorm,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    TiedOutput,
    init,
)
from rowbook.nn import functional as F

__all__ = ["MLP", "Block", "TransformerNet"]


def _norm(config: TransformerConfig) -> Module:
    if config.norm == "layernorm":
        return LayerNorm(config.d_model, eps=config.norm_eps, bias=config.bias)
    return RMSNorm(config.d_model, eps=config.norm_eps)


def _activate(x: Tensor, activation: str) -> Tensor:
    if activation == "gelu_tanh":
        return F.gelu(x, "tanh")
    if activation == "gelu":
        return F.gelu(x)
    return F.silu(x) if activation == "silu" else ops.relu(x)


class MLP(Module):
    """GPT-2's ``W_2 act(W_1 x + b_1) + b_2`` or Llama's SwiGLU ``W_d (act(W_g x) * W_u x)``.

    Shape
    -----
    - Input: ``(*, d)``; Output: ``(*, d)``
    """

    def __init__(self, config: TransformerConfig, rng: np.random.Generator) -> None:
        d, hidden, bias = config.d_model, config.d_ff, config.bias
        self.activation, self.gated = config.activation, config.mlp == "swiglu"
        if self.gated:
            self.gate = Linear(d, hidden, bias=bias, rng=rng)
            self.up = Linear(d, hidden, bias=bias, rng=rng)
            self.down = Linear(hidden, d, bias=bias, rng=rng)
        else:
            self.fc = Linear(d, hidden, bias=bias, rng=rng)
            self.proj = Linear(hidden, d, bias=bias, rng=rng)

    def forward(self, x: Tensor) -> Tensor:
        if self.gated:
            return self.down(_activate(self.gate(x), self.activation) * self.up(x))
        return self.proj(_activate(self.fc(x), self.activation))


class Block(Module):
    """One pre-norm block: ``h = x + attn(norm1(x))``, ``out = h + mlp(norm2(h))``.

    Shape
    -----
    - Input: ``(B, T, d)``; Output: ``(B, T, d)``
    """

    def __init__(
        self, config: TransformerConfig, rotary: RotaryEmbedding | None, rng: np.random.Generator
    ) -> None:
        self.norm1 = _norm(config)
        self.attention = MultiheadAttention(
            config.d_model,
            config.n_heads,
            config.dropout,
            config.bias,
            n_kv_heads=config.n_kv_heads,
            head_dim=config.head_dim,
            rotary=rotary,
            rng=rng,
        )
        self.norm2 = _norm(config)
        self.mlp = MLP(config, rng)
        self.drop = Dropout(config.dropout, rng=rng)

    def forward(
        self,
        x: Tensor,
        key_padding_mask: np.ndarray | None = None,
        cache: KVCache | None = None,
        layer: int = 0,
    ) -> Tensor:
        attended, _ = self.attention(
            self.norm1(x),
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=True,
            cache=cache,
            layer=layer,
        )
        h = x + self.drop(attended)
        return h + self.drop(self.mlp(self.norm2(h)))


class TransformerNet(Module):
    """The decoder-only network of a :class:`TransformerConfig`.

    Parameters
    ----------
    config
        The settings.
    sparse
        Look the table up with ``sparse=True`` (row-sparse gradients, for SparseAdam;
        an untied table only, since a tied output layer gives it a dense gradient).
    rng
        Generator or seed of the initialisation: every weight matrix and the tables from
        N(0, 0.02^2), the projections into the residual stream from N(0, (0.02 / sqrt(2 L))^2)
        (GPT-2's scaling), biases 0, norms 1.

    Shape
    -----
    - Input: ``(B, T)`` ids (``T <= context`` with learned or sinusoidal positions)
    - Output: ``(B, T, V)`` logits
    """

    def __init__(self, config: TransformerConfig, *, sparse: bool = False, rng: Any = None) -> None:
        rng = init.as_generator(rng)
        self.config = config
        self.rng = rng  # drew the weights; draws every dropout mask
        d = config.d_model
        self.embedding = Embedding(config.vocab_size, d, sparse=sparse, rng=rng)
        self.positions: Module | None = None
        rotary = None
        if config.positions == "learned":
            self.positions = LearnedPositionalEmbedding(config.context, d, rng=rng)
        elif config.positions == "sinusoidal":
            self.positions = SinusoidalPositionalEncoding(d, max_len=config.context)
        elif config.positions == "rope":
            rotary = RotaryEmbedding(config.head_dim, base=config.rope_base)
            rotary.inv_freq = rope_frequencies(config)
        self.drop = Dropout(config.dropout, rng=rng)
        self.blocks = [Block(config, rotary, rng) for _ in range(config.n_layers)]
        self.norm = _norm(config) if config.n_layers else None  # none before the table alone
        if config.tie_embeddings:
            self.head: Module = TiedOutput(self.embedding)
        else:
            self.head = Linear(d, config.vocab_size, bias=False, rng=rng)
        self._initialise(rng)

    def _initialise(self, rng: np.random.Generator) -> None:
        residual_std = 0.02 / math.sqrt(2 * max(self.config.n_layers, 1))  # GPT-2's scaling
        for name, p in self.named_parameters():
            if name.endswith(("out_proj.weight", "mlp.proj.weight", "mlp.down.weight")):
                init.normal_(p, std=residual_std, rng=rng)
            elif p.ndim == 2:
                init.normal_(p, std=0.02, rng=rng)
            elif name.endswith("bias"):
                init.zeros_(p)

    def forward(
        self, ids: Any, key_padding_mask: Any = None, cache: KVCache | None = None
    ) -> Tensor:
        """Logits ``(B, T, V)`` of the next token after each position of ``ids`` ``(B, T)``.

        ``key_padding_mask`` ``(B, T)`` is True on padding positions (left out as keys);
        with a ``cache``, ``ids`` are the positions after those it holds, and it is advanced.
        """
        start = 0 if cache is None else cache.length
        x = self.embedding(ids)  # (B, T, d)
        if self.config.scale_embeddings:
            x = x * math.sqrt(self.config.d_model)
        if self.positions is not None:
            x = self.positions(x, offset=start)
        x = self.drop(x)
        for i, block in enumerate(self.blocks):
            x = block(x, key_padding_mask, cache, i)
        if cache is not None:
            cache.advance(x.shape[1])
        return self.head(x if self.norm is None else self.norm(x))  # (B, T, V)

    def new_cache(self, batch: int, max_length: int) -> KVCache:
        """An empty :class:`~rowbook.nn.KVCache` for ``batch`` sequences of ``max_length``."""
        c = self.config
        return KVCache(
            c.n_layers,
            batch,
            c.n_kv_heads,
            c.head_dim,
            max_length,
            dtype=self.embedding.weight.dtype,
        )
