"""The one configuration of a decoder-only Transformer, read by everything that needs it.

:class:`TransformerConfig` is what :class:`~rowbook.models.transformer.TransformerNet` is
built from, what :class:`~rowbook.models.TransformerLM` makes of its parameters (its
``config_``), what a Hugging Face ``config.json`` is read into
(:func:`rowbook.models.hf_checkpoint.read_config`) and what :mod:`rowbook.sizing` prices
(:meth:`rowbook.sizing.ModelSize.from_config`). A setting left at ``None`` takes the
family's choice (:data:`FAMILIES`); every check of a setting is here, once.

The module imports no network code, so sizing a model does not load the autograd stack.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

import numpy as np

from rowbook.checks import ParameterError, check_choice, check_heads, check_int, check_number

__all__ = [
    "FAMILIES",
    "TransformerConfig",
    "architecture_names",
    "default_d_ff",
    "rope_frequencies",
]

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
        for name in ("vocab_size", "context"):
            check_int(name, getattr(self, name), 1, owner=owner)
        check_int("n_layers", self.n_layers, 0, owner=owner)  # 0: the table and the output alone
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


def default_d_ff(family: str, d_model: int) -> int:
    """GPT-2's ``4 d``; Llama's ``2/3 * 4 d`` rounded up to a multiple of 256 (Meta's rule).

    >>> default_d_ff("gpt2", 768), default_d_ff("llama", 4096)
    (3072, 11008)
    """
    if family == "gpt2":
        return 4 * d_model
    return 256 * math.ceil(int(2 * 4 * d_model / 3) / 256)


def architecture_names() -> tuple[str, ...]:
    """The settings of :class:`TransformerConfig`, in order: what a model's parameters must
    hold to build one (``TransformerLM``'s signature is tested to have each).

    >>> architecture_names()[:4]
    ('vocab_size', 'd_model', 'n_layers', 'n_heads')
    """
    return tuple(f.name for f in fields(TransformerConfig))
