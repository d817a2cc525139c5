r"""What d, V, L and T cost: parameters, bytes, optimizer state, KV cache and attention.

Counted from the one :class:`~rowbook.models.language_model.config.TransformerConfig` of a
decoder-only model (GPT-2 and Llama families), exactly as
:class:`~rowbook.models.TransformerLM` allocates it (the tests hold :func:`model_size` to it
parameter for parameter and byte for byte): :meth:`ModelSize.from_config` prices a config,
:func:`model_size` one given by its dimensions, :func:`model_size_from_hf` a ``config.json``.

* the table: ``V x d`` (``d_model``); tying the output layer to it saves another ``V x d``;
* learned positions (GPT-2): ``context x d``;
* a block: attention ``d (H + 2 H_kv) d_k + H d_k d`` (plus biases), the MLP ``2 d d_ff`` (GPT-2)
  or ``3 d d_ff`` (Llama's SwiGLU), two norms;
* the KV cache, per sequence: ``2 x L x T x H_kv x d_k x bytes``;
* attention per layer and sequence: ``4 T^2 H d_k`` FLOPs forward (``Q K^T`` and ``P V``,
  half of it with a causal mask skipped), and ``H T^2`` scores held by the plain path
  against ``H T`` log-sum-exps by the tiled one (:mod:`rowbook.nn.sdpa_tiled`).

:func:`rowbook.vocab_sweep.vocab_sweep` prices the vocabulary with these counts.

Examples
--------
>>> llama = preset("llama-2-7b")
>>> llama.kv_cache_bytes(4096, "float16") / 2**30, llama.kv_cache_bytes(8192, "float16") / 2**30
(2.0, 4.0)
>>> gpt2 = preset("gpt2")
>>> f"{gpt2.embedding_parameters / 1e6:.1f}M of {gpt2.parameters / 1e6:.1f}M"
'38.6M of 124.4M'
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from rowbook.checks import check_choice, check_int
from rowbook.models.language_model.config import TransformerConfig, default_d_ff

__all__ = [
    "DTYPE_BYTES",
    "PRESETS",
    "ModelSize",
    "default_d_ff",
    "dtype_bytes",
    "format_bytes",
    "model_size",
    "model_size_from_gguf",
    "model_size_from_hf",
    "preset",
]

#: Bytes per number of each storage type.
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "float64": 8}


@dataclass(frozen=True)
class ModelSize:
    """The sizes of one architecture, its :class:`TransformerConfig` stored as ``dtype``, for
    ``batch`` sequences; every count is exact, in numbers (parameters) or bytes."""

    config: TransformerConfig
    dtype: str = "float32"
    batch: int = 1

    @classmethod
    def from_config(cls, config: TransformerConfig, *, dtype: str = "float32", batch: int = 1):
        """The sizes of ``config`` (a model's ``config_``, or :func:`read_config`'s).

        >>> from rowbook.models.language_model.config import TransformerConfig
        >>> ModelSize.from_config(TransformerConfig(vocab_size=100, d_model=8, n_heads=2)).parameters
        6352
        """
        dtype_bytes(dtype)
        check_int("batch", batch, 1, owner="ModelSize")
        return cls(config, dtype, batch)

    # the config's settings these counts read, by their usual names
    family = property(lambda self: self.config.family)
    vocab_size = property(lambda self: self.config.vocab_size)
    d_model = property(lambda self: self.config.d_model)
    n_layers = property(lambda self: self.config.n_layers)
    n_heads = property(lambda self: self.config.n_heads)
    n_kv_heads = property(lambda self: self.config.n_kv_heads)
    head_dim = property(lambda self: self.config.head_dim)
    d_ff = property(lambda self: self.config.d_ff)
    context = property(lambda self: self.config.context)
    tied = property(lambda self: self.config.tie_embeddings)
    bias = property(lambda self: self.config.bias)

    # -- parameters ---------------------------------------------------------------------
    @property
    def embedding_parameters(self) -> int:
        """The table: ``V x d``."""
        return self.vocab_size * self.d_model

    @property
    def tying_saves(self) -> int:
        """What a separate output layer would add, and tying does not: ``V x d``."""
        return self.vocab_size * self.d_model

    @property
    def position_parameters(self) -> int:
        """Learned positions (GPT-2): ``context x d``; 0 for RoPE, sinusoidal or none."""
        return self.context * self.d_model if self.config.positions == "learned" else 0

    @property
    def norm_parameters(self) -> int:
        """One norm: ``d`` gains (and ``d`` offsets for a LayerNorm with biases, GPT-2's)."""
        offsets = self.config.norm == "layernorm" and self.bias
        return (2 if offsets else 1) * self.d_model

    @property
    def attention_parameters(self) -> int:
        """One layer's ``W_q, W_k, W_v, W_o`` (and biases)."""
        q, kv = self.n_heads * self.head_dim, self.n_kv_heads * self.head_dim
        weights = (q + 2 * kv) * self.d_model + q * self.d_model
        return weights + ((q + 2 * kv) + self.d_model if self.bias else 0)

    @property
    def mlp_parameters(self) -> int:
        """One layer's MLP: ``2 d d_ff`` (GPT-2) or ``3 d d_ff`` (SwiGLU), and biases."""
        matrices = 3 if self.config.mlp == "swiglu" else 2
        biases = (matrices - 1) * self.d_ff + self.d_model if self.bias else 0
        return matrices * self.d_model * self.d_ff + biases

    @property
    def layer_parameters(self) -> int:
        """One block: attention, MLP and its two norms."""
        return self.attention_parameters + self.mlp_parameters + 2 * self.norm_parameters

    @property
    def head_parameters(self) -> int:
        """The output layer: 0 when tied, else ``V x d``."""
        return 0 if self.tied else self.vocab_size * self.d_model

    @property
    def parameters(self) -> int:
        """Everything: table, positions, blocks, final norm, output layer."""
        blocks = self.n_layers * self.layer_parameters + (
            self.norm_parameters if self.n_layers else 0
        )
        return self.embedding_parameters + self.position_parameters + blocks + self.head_parameters

    def bytes(self, dtype: str | None = None) -> int:
        """The parameters stored as ``dtype`` (default: the model's)."""
        return self.parameters * dtype_bytes(dtype or self.dtype)

    # -- training state -------------------------------------------------------------------
    @property
    def adam_state_bytes(self) -> int:
        """Adam's two float32 moments for every parameter."""
        return 2 * 4 * self.parameters

    def sparse_step_bytes(self, rows: int | None = None) -> int:
        """The moments SparseAdam reads and writes for the table in one step: two float32
        rows per row touched (``rows``, default: every token of a batch distinct, at most V)."""
        rows = min(self.vocab_size, self.batch * self.context) if rows is None else rows
        return 2 * 4 * rows * self.d_model

    # -- inference and attention -----------------------------------------------------------
    def kv_cache_bytes(self, length: int | None = None, dtype: str | None = None) -> int:
        """``2 x L x T x H_kv x d_k x batch x bytes``: the keys and values of ``length`` positions."""
        T = self.context if length is None else length
        return (
            2
            * self.n_layers
            * T
            * self.n_kv_heads
            * self.head_dim
            * self.batch
            * dtype_bytes(dtype or self.dtype)
        )

    def attention_flops(self, length: int | None = None, causal: bool = False) -> int:
        """Forward FLOPs of ``Q K^T`` and ``P V`` in every layer: ``4 T^2 H d_k`` each (half causal)."""
        T = self.context if length is None else length
        flops = 4 * T * T * self.n_heads * self.head_dim * self.n_layers * self.batch
        return flops // 2 if causal else flops

    def attention_bytes(self, length: int | None = None, tiled: bool = False) -> int:
        """What one layer's attention holds besides Q, K, V and O: the ``H T^2`` scores of
        the plain path, or the ``H T`` log-sum-exps of the tiled one."""
        T = self.context if length is None else length
        per_head = T if tiled else T * T
        return self.n_heads * per_head * self.batch * dtype_bytes(self.dtype)

    def table(self, lengths: Sequence[int] = (1024, 4096, 8192)) -> str:
        """Everything above as aligned text, the costs of attention for each of ``lengths``."""
        rows = [
            ("parameters", f"{self.parameters:,}"),
            (
                "  table V x d",
                f"{self.embedding_parameters:,} ({self.vocab_size:,} x {self.d_model:,})",
            ),
            ("  per layer", f"{self.layer_parameters:,} x {self.n_layers}"),
            ("  output layer", "tied to the table" if self.tied else f"{self.head_parameters:,}"),
            (
                "tying saves",
                f"{self.tying_saves:,} (V x d: {100 * self.tying_saves / self.parameters:.1f}% of this model)",
            ),
            ("heads", f"{self.n_heads} query, {self.n_kv_heads} key/value, d_k = {self.head_dim}"),
        ]
        rows += [
            (f"bytes as {d}", format_bytes(self.bytes(d))) for d in ("float32", "bfloat16", "int8")
        ]
        rows += [
            ("Adam moments (float32)", format_bytes(self.adam_state_bytes)),
            ("SparseAdam, table rows / step", format_bytes(self.sparse_step_bytes())),
        ]
        for T in lengths:
            rows += [
                (
                    f"T={T:,}: KV cache / batch of {self.batch}",
                    format_bytes(self.kv_cache_bytes(T)),
                ),
                (f"T={T:,}: attention FLOPs (fwd)", f"{self.attention_flops(T):.3g}"),
                (f"T={T:,}: scores / layer, plain", format_bytes(self.attention_bytes(T))),
                (
                    f"T={T:,}: scores / layer, tiled",
                    format_bytes(self.attention_bytes(T, tiled=True)),
                ),
            ]
        width = max(len(k) for k, _ in rows)
        title = f"{self.family}: d={self.d_model}, L={self.n_layers}, V={self.vocab_size:,}, {self.dtype}"
        return "\n".join([title, *(f"{k:<{width}}  {v}" for k, v in rows)])

    def __str__(self) -> str:
        return self.table()


def dtype_bytes(dtype: str) -> int:
    """Bytes of one number stored as ``dtype``, refusing a type rowbook does not price.

    >>> dtype_bytes("bfloat16")
    2
    """
    check_choice("dtype", dtype, tuple(DTYPE_BYTES), owner="model_size")
    return DTYPE_BYTES[dtype]


def format_bytes(n: int) -> str:
    """``n`` bytes in binary units, exact bytes beside them.

    >>> format_bytes(2**31), format_bytes(1536)
    ('2.00 GiB (2,147,483,648 bytes)', '1.50 KiB (1,536 bytes)')
    """
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.2f} {unit} ({n:,} bytes)"
    return f"{n:,} bytes"


def model_size(
    vocab_size: int,
    d_model: int,
    n_layers: int,
    n_heads: int,
    n_kv_heads: int | None = None,
    d_ff: int | None = None,
    context: int = 2048,
    tied: bool = True,
    dtype: str = "float32",
    batch: int = 1,
    family: Literal["gpt2", "llama"] = "gpt2",
    head_dim: int | None = None,
    bias: bool | None = None,
) -> ModelSize:
    """The :class:`ModelSize` of a GPT-2 or Llama shaped model (``n_layers=0``: the table alone).

    ``d_ff`` defaults to the family's (``4 d``, or Llama's ``8 d / 3`` rounded up to 256),
    ``head_dim`` to ``d / n_heads``, ``bias`` to the family's; ``model_size.from_hf(path)``
    reads them from a Hugging Face ``config.json``.

    Examples
    --------
    >>> f"{model_size(3_000_000, 300, 0, 1).embedding_parameters:,}"  # word2vec's table
    '900,000,000'
    """
    check_int("batch", batch, 1, owner="model_size")
    dtype_bytes(dtype)
    config = TransformerConfig(
        vocab_size=vocab_size,
        d_model=d_model,
        n_layers=n_layers,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        d_ff=d_ff,
        context=context,
        family=family,
        bias=bias,
        tie_embeddings=bool(tied),
        head_dim=head_dim,
    )
    return ModelSize.from_config(config, dtype=dtype, batch=batch)


def model_size_from_hf(
    path: str | os.PathLike[str], *, dtype: str = "float32", batch: int = 1
) -> ModelSize:
    """The :class:`ModelSize` of a Hugging Face ``config.json`` (or the folder holding it)."""
    from rowbook.models.language_model.hf_checkpoint import read_config

    config, _ = read_config(Path(path))
    return ModelSize.from_config(config, dtype=dtype, batch=batch)


def model_size_from_gguf(
    path: str | os.PathLike[str], *, dtype: str = "float16", batch: int = 1
) -> ModelSize:
    """The :class:`ModelSize` of a GGUF model (llama.cpp's ``llama`` or ``gpt2``), from its
    metadata; ``dtype`` is the KV cache's (llama.cpp's default: float16). The bytes as
    stored, quantised, are the sum of its tensors' (``rowbook inspect`` prints them)."""
    from rowbook.gguf import read_gguf
    from rowbook.models.language_model.gguf_checkpoint import hf_config
    from rowbook.models.language_model.hf_checkpoint import config_settings

    file = read_gguf(path)
    config, _ = config_settings(hf_config(file), file.path)
    return ModelSize.from_config(config, dtype=dtype, batch=batch)


model_size.from_hf = model_size_from_hf  # type: ignore[attr-defined]
model_size.from_gguf = model_size_from_gguf  # type: ignore[attr-defined]


#: Published configurations (their ``config.json`` values): name -> :func:`model_size` arguments.
PRESETS: dict[str, dict[str, Any]] = {
    "gpt2": {"vocab_size": 50257, "d_model": 768, "n_layers": 12, "n_heads": 12, "context": 1024},
    "gpt-3": {
        "vocab_size": 50257,
        "d_model": 12288,
        "n_layers": 96,
        "n_heads": 96,
        "context": 2048,
    },
    # an encoder beyond its table: only the table's row of the sizes is BERT's
    "bert-base": {
        "vocab_size": 30522,
        "d_model": 768,
        "n_layers": 0,
        "n_heads": 12,
        "context": 512,
    },
    "llama-2-7b": {
        "vocab_size": 32000,
        "d_model": 4096,
        "n_layers": 32,
        "n_heads": 32,
        "n_kv_heads": 32,
        "d_ff": 11008,
        "context": 4096,
        "tied": False,
        "dtype": "float16",
        "family": "llama",
    },
    "llama-3-8b": {
        "vocab_size": 128256,
        "d_model": 4096,
        "n_layers": 32,
        "n_heads": 32,
        "n_kv_heads": 8,
        "d_ff": 14336,
        "context": 8192,
        "tied": False,
        "dtype": "bfloat16",
        "family": "llama",
    },
    # Gemma 2 as a Llama: GeGLU has SwiGLU's size; its two extra norms per layer are not counted
    "gemma-2-9b": {
        "vocab_size": 256128,
        "d_model": 3584,
        "n_layers": 42,
        "n_heads": 16,
        "n_kv_heads": 8,
        "d_ff": 14336,
        "context": 8192,
        "tied": True,
        "dtype": "bfloat16",
        "family": "llama",
        "head_dim": 256,
    },
}


def preset(name: str, **changes: Any) -> ModelSize:
    """The :class:`ModelSize` of a published configuration of :data:`PRESETS`, with ``changes``
    (``dtype="int8"``, ``batch=8``, ...)."""
    check_choice("preset", name, tuple(PRESETS))
    return model_size(**(PRESETS[name] | changes))
