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

:class:`TransformerConfig` holds every setting; :class:`TransformerNet` is the
:class:`~rowbook.nn.Module`, whose call on ``(B, T)`` ids returns the ``(B, T, V)`` logits
as a :class:`~rowbook.autograd.Tensor`, so a training step can be written by hand.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from rowbook.autograd import Tensor, ops
from rowbook.checks import ParameterError, check_choice, check_heads, check_int, check_number
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
from rowbook.sizing import default_d_ff

__all__ = ["FAMILIES", "MLP", "Block", "TransformerConfig", "TransformerNet", "rope_frequencies"]

Family = Literal["gpt2", "llama"]
Positions = Literal["learned", "sinusoidal", "rope", "none"]
Activation = Literal["gelu_tanh", "gelu", "silu", "relu"]

#: What each family sets when a setting is left at None.
FAMILIES: dict[str, dict[str, Any]] = {
    "gpt2": {
        "positions": "learned",
        "norm": "layernorm",
        "mlp": "gelu",
        "activation": "gelu_tanh",
        "bias": True,
        "norm_eps": 1e-5,
    },
    "llama": {
        "positions": "rope",
        "norm": "rmsnorm",
        "mlp": "swiglu",
        "activation": "silu",
        "bias": False,
        "norm_eps": 1e-5,
    },
}


@dataclass(frozen=True)
class TransformerConfig:
    """Every setting of a :class:`TransformerNet`; ``None`` takes the family's choice.

    ``rope_scaling`` is None, ``{"rope_type": "linear", "factor": f}`` or Llama 3's
    ``{"rope_type": "llama3", "factor", "low_freq_factor", "high_freq_factor",
    "original_max_position_embeddings"}``.
    """

    vocab_size: int
    d_model: int = 256
    n_layers: int = 4
    n_heads: int = 4
    n_kv_heads: int | None = None
    d_ff: int | None = None
    context: int = 256
    family: Family = "gpt2"
    positions: Positions | None = None
    norm: Literal["layernorm", "rmsnorm"] | None = None
    mlp: Literal["gelu", "swiglu"] | None = None
    activation: Activation | None = None
    bias: bool | None = None
    tie_embeddings: bool = True
    scale_embeddings: bool = False
    dropout: float = 0.0
    norm_eps: float | None = None
    rope_base: float = 10000.0
    rope_scaling: dict[str, Any] | None = field(default=None, hash=False)
    head_dim: int | None = None

    def __post_init__(self) -> None:
        owner = "TransformerLM"
        check_choice("family", self.family, tuple(FAMILIES), owner=owner)
        for name, value in FAMILIES[self.family].items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)
        for name in ("vocab_size", "n_layers", "context"):
            check_int(name, getattr(self, name), 1, owner=owner)
        n_kv, head_dim = check_heads(
            self.d_model, self.n_heads, self.n_kv_heads, self.head_dim, owner
        )
        object.__setattr__(self, "n_kv_heads", n_kv)
        object.__setattr__(self, "head_dim", head_dim)
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", default_d_ff(self.family, self.d_model))
        check_int("d_ff", self.d_ff, 1, owner=owner)
        check_choice(
            "positions", self.positions, ("learned", "sinusoidal", "rope", "none"), owner=owner
        )
        check_choice("norm", self.norm, ("layernorm", "rmsnorm"), owner=owner)
        check_choice("mlp", self.mlp, ("gelu", "swiglu"), owner=owner)
        check_choice(
            "activation", self.activation, ("gelu_tanh", "gelu", "silu", "relu"), owner=owner
        )
        check_number("dropout", self.dropout, 0.0, 1.0, high_open=True, owner=owner)
        check_number("norm_eps", self.norm_eps, 0.0, owner=owner)
        check_number("rope_base", self.rope_base, 0.0, low_open=True, owner=owner)
        if self.positions == "rope" and head_dim % 2:
            raise ParameterError(
                "head_dim",
                head_dim,
                "even with positions='rope'",
                owner=owner,
                fix="RoPE rotates pairs of features",
            )
        rope_frequencies(self)  # checks rope_scaling

    def to_dict(self) -> dict[str, Any]:
        """The settings as JSON data (every family default filled in)."""
        return asdict(self)


def rope_frequencies(config: TransformerConfig) -> np.ndarray:
    """RoPE's ``theta_i = base^(-2i / d_k)``, rescaled as ``rope_scaling`` says (Hugging
    Face's ``_compute_default_rope_parameters``, ``linear`` and ``llama3``).

    >>> cfg = TransformerConfig(vocab_size=10, d_model=8, n_heads=2, family="llama")
    >>> rope_frequencies(cfg).round(4)
    array([1.  , 0.01])
    """
    dim = config.head_dim
    inv_freq = config.rope_base ** (-np.arange(0, dim, 2, dtype=np.float64) / dim)  # (d_k / 2,)
    scaling = config.rope_scaling
    if not scaling:
        return inv_freq
    kind = scaling.get("rope_type", scaling.get("type"))
    if kind == "linear":
        return inv_freq / float(scaling["factor"])
    if kind == "llama3":
        factor, low, high = (
            float(scaling[k]) for k in ("factor", "low_freq_factor", "high_freq_factor")
        )
        old = float(scaling["original_max_position_embeddings"])
        wavelen = 2 * math.pi / inv_freq
        scaled = np.where(wavelen > old / low, inv_freq / factor, inv_freq)
        smooth = (old / wavelen - low) / (high - low)
        medium = (wavelen >= old / high) & (wavelen <= old / low)
        return np.where(medium, (1 - smooth) * scaled / factor + smooth * scaled, scaled)
    raise ParameterError(
        "rope_scaling",
        scaling,
        "None or a rope_type of 'linear' or 'llama3'",
        owner="TransformerLM",
        fix="other RoPE scalings are not implemented",
    )


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
        self.norm = _norm(config)
        if config.tie_embeddings:
            self.head: Module = TiedOutput(self.embedding)
        else:
            self.head = Linear(d, config.vocab_size, bias=False, rng=rng)
        self._initialise(rng)

    def _initialise(self, rng: np.random.Generator) -> None:
        residual_std = 0.02 / math.sqrt(2 * self.config.n_layers)
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
        return self.head(self.norm(x))  # (B, T, V)

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
