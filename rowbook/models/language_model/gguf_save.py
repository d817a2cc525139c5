"""A rowbook :class:`~rowbook.models.TransformerLM` written as a GGUF file.

The reverse of :mod:`rowbook.models.language_model.gguf_checkpoint`: the architecture as llama.cpp's metadata keys, each
parameter under its GGUF name (Llama's fused ``in_proj_weight`` split into ``attn_q``,
``attn_k``, ``attn_v``, the query and key rows put in llama.cpp's RoPE order by
:func:`~rowbook.models.language_model.gguf_checkpoint.permute`), the matrices as ``dtype`` and the vectors (norms,
biases) as F32, as llama.cpp's converter stores them; a tied model has no ``output.weight``.
A byte-level BPE pipeline is written as the ``gpt2`` tokenizer whose pre-tokenizer name
matches its pattern.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from rowbook.gguf.quantize import quantize_q8_0
from rowbook.gguf.tokenizer import PRE_PATTERNS
from rowbook.gguf.writer import Metadata, write_gguf
from rowbook.models.language_model.gguf_checkpoint import gguf_name, permute
from rowbook.models.language_model.hf_checkpoint import tensor_plan
from rowbook.models.language_model.state import LMExtras

__all__ = ["DTYPES", "gguf_metadata", "save_gguf"]

#: ``dtype`` -> (ggml type of the matrices, ``general.file_type``: llama.cpp's ftype).
DTYPES = {"f32": ("F32", 0), "f16": ("F16", 1), "q8_0": ("Q8_0", 7)}
_PRE_NAMES = {"gpt2": "gpt-2", "llama": "llama-bpe"}


def gguf_metadata(config: Any) -> list[Metadata]:
    """The architecture keys llama.cpp (and ``transformers``' GGUF loader) read."""
    arch = config.family
    meta: list[Metadata] = [
        ("general.architecture", "string", arch),
        ("general.name", "string", f"rowbook {arch}"),
        (f"{arch}.context_length", "uint32", config.context),
        (f"{arch}.embedding_length", "uint32", config.d_model),
        (f"{arch}.block_count", "uint32", config.n_layers),
        (f"{arch}.feed_forward_length", "uint32", config.d_ff),
        (f"{arch}.attention.head_count", "uint32", config.n_heads),
        (f"{arch}.vocab_size", "uint32", config.vocab_size),
    ]
    if arch == "gpt2":
        return [*meta, ("gpt2.attention.layer_norm_epsilon", "float32", config.norm_eps)]
    meta += [
        ("llama.attention.head_count_kv", "uint32", config.n_kv_heads),
        ("llama.attention.layer_norm_rms_epsilon", "float32", config.norm_eps),
        ("llama.rope.freq_base", "float32", config.rope_base),
        ("llama.rope.dimension_count", "uint32", config.head_dim),
        ("llama.attention.key_length", "uint32", config.head_dim),
        ("llama.attention.value_length", "uint32", config.head_dim),
    ]
    scaling = config.rope_scaling
    if scaling:
        if scaling.get("rope_type") != "linear":
            raise ValueError(
                f"save_gguf: RoPE scaling {scaling.get('rope_type')!r} is stored by llama.cpp "
                "as a tensor rowbook does not write; 'linear' scaling is written"
            )
        meta += [
            ("llama.rope.scaling.type", "string", "linear"),
            ("llama.rope.scaling.factor", "float32", float(scaling["factor"])),
        ]
    return meta


def _tokenizer(extras: LMExtras, vocab_size: int) -> list[Metadata]:
    """The tokenizer's metadata, from the pipeline and end-of-text id a model keeps."""
    from rowbook.text import ByteLevelBPE

    pipeline, eos = extras.pipeline, extras.eos
    bpe = None if pipeline is None else pipeline.tokenizer_
    if not isinstance(bpe, ByteLevelBPE):  # no tokenizer GGUF's gpt2 model can hold
        tokens = [f"[id:{i}]" for i in range(vocab_size)]
        return [
            ("tokenizer.ggml.model", "string", "none"),
            ("tokenizer.ggml.tokens", "array", tokens),
        ]
    pre = next((name for name, (p, _) in PRE_PATTERNS.items() if p == bpe.pattern), None)
    if pre is None:
        raise ValueError(
            "save_gguf: the tokenizer's pre-tokenizer pattern is none of those GGUF names "
            f"({', '.join(PRE_PATTERNS)}); llama.cpp would split text differently"
        )
    tokens = [bpe.id_to_token(i) for i in range(len(bpe))]
    specials = set(bpe.special_tokens)
    types = [3 if t in specials else 1 for t in tokens]
    meta: list[Metadata] = [
        ("tokenizer.ggml.model", "string", "gpt2"),
        ("tokenizer.ggml.pre", "string", "gpt-2" if pre == "gpt2" else pre),
        ("tokenizer.ggml.tokens", "array", tokens),
        ("tokenizer.ggml.token_type", "array", types),
        ("tokenizer.ggml.merges", "array", [f"{a} {b}" for a, b in bpe.merges]),
        ("tokenizer.ggml.add_bos_token", "bool", False),
    ]
    if eos is not None:
        meta += [
            ("tokenizer.ggml.eos_token_id", "uint32", eos),
            ("tokenizer.ggml.bos_token_id", "uint32", eos),
        ]
    return meta


def _gguf_tensors(net: Any) -> list[tuple[str, np.ndarray]]:
    """``(GGUF name, float32 array in GGUF's layout)`` of every parameter."""

    config = net.config
    plan = tensor_plan(config, {"wte.weight"})  # GPT-2's names without "transformer."
    out = []
    for name, param in net.named_parameters():
        hf, how = plan[name]
        data = param.data.astype(np.float32)
        if how == "stack":  # Llama's fused q, k, v rows, split as llama.cpp stores them
            sizes = [config.n_heads * config.head_dim, config.n_kv_heads * config.head_dim]
            q, k, v = np.split(data, np.cumsum(sizes))
            q, k = permute(q, config.n_heads), permute(k, config.n_kv_heads)  # weights and biases
            out += [(gguf_name("llama", n), x) for n, x in zip(hf, (q, k, v), strict=True)]
        else:  # GPT-2's projections: rowbook's (out, in) is GGUF's layout already
            out.append((gguf_name(config.family, hf[0]), data))
    return out


def save_gguf(model: Any, path: str | os.PathLike[str], dtype: str = "f16") -> None:
    """Write ``model`` (a fitted :class:`~rowbook.models.TransformerLM`) to ``path``."""
    from rowbook.checks import check_choice

    check_choice("dtype", dtype, tuple(DTYPES), owner="save_gguf")
    fitted = model._require_fitted(".save_gguf()")
    net, config = fitted.net, fitted.net.config
    if config.scale_embeddings or (config.family == "gpt2" and config.positions != "learned"):
        raise ValueError(
            "save_gguf: llama.cpp's gpt2 and llama have no scaled embeddings and GPT-2 learned "
            "positions; this model cannot be written as one of them"
        )
    matrix_type, file_type = DTYPES[dtype]
    tensors = []
    for name, data in _gguf_tensors(net):
        if config.tie_embeddings and name == "output.weight":
            continue
        kind = matrix_type if data.ndim == 2 and data.shape[-1] % 32 == 0 else "F32"
        stored = (
            quantize_q8_0(data)
            if kind == "Q8_0"
            else data.astype(np.float16)
            if kind == "F16"
            else data
        )
        tensors.append((name, stored, kind, data.shape))
    meta = [*gguf_metadata(config), ("general.file_type", "uint32", file_type)]
    write_gguf(path, meta + _tokenizer(fitted.extras, config.vocab_size), tensors)
