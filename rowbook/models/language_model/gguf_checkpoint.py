"""A GGUF file's ``llama`` or ``gpt2`` model as a :class:`~rowbook.models.TransformerLM`.

The metadata (``{arch}.embedding_length``, ``block_count``, ``attention.head_count``, ...)
is put in ``config.json``'s words (:func:`hf_config`) and checked by the rules the Hugging
Face reader applies (:func:`rowbook.models.language_model.hf_checkpoint.config_settings`): the same limits,
the same errors. Each tensor is dequantised (:mod:`rowbook.gguf.quants`), renamed to its
``transformers`` name (:func:`hf_names`) and undone where llama.cpp's converter changed it:

* Llama's query and key rows are interleaved per head for llama.cpp's RoPE (pairs
  ``(x_0, x_1), (x_2, x_3), ...`` rotate), where ``transformers`` rotates the halves
  ``(x_i, x_{i + d/2})``: :func:`unpermute` puts them back, as ``transformers``' GGUF
  loader does;
* GPT-2's projections are stored as ``(out, in)``, Hugging Face's ``Conv1D`` holds
  ``(in, out)``: they are transposed to the checkpoint's layout.

The tensors then follow :func:`rowbook.models.language_model.hf_checkpoint.tensor_plan` into the network,
the one plan both readers share. A model without ``output.weight`` is tied. The tokenizer
inside the file becomes the model's pipeline (:mod:`rowbook.gguf.tokenizer`).
"""

from __future__ import annotations

import os
import re
import warnings
from typing import Any

import numpy as np

from rowbook.gguf.format import GGUFFile, read_gguf
from rowbook.models.language_model.hf_checkpoint import config_settings, joined, tensor_plan
from rowbook.models.language_model.state import LMExtras

__all__ = [
    "ARCHITECTURES",
    "gguf_name",
    "hf_config",
    "hf_names",
    "load_gguf_lm",
    "permute",
    "unpermute",
]

#: The GGUF architectures rowbook opens as a model.
ARCHITECTURES = ("llama", "gpt2")
_LLAMA = {
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
_GPT2 = {
    "attn_norm": "ln_1",
    "ffn_norm": "ln_2",
    "attn_qkv": "attn.c_attn",
    "attn_output": "attn.c_proj",
    "ffn_up": "mlp.c_fc",
    "ffn_down": "mlp.c_proj",
}
_TOP = {
    "llama": {"token_embd": "model.embed_tokens", "output_norm": "model.norm"},
    "gpt2": {"token_embd": "wte", "position_embd": "wpe", "output_norm": "ln_f"},
}
_HEAD_DIM = ("attention.key_length", "rope.dimension_count")
_BLOCK = re.compile(r"blk\.(\d+)\.(\w+)\.(weight|bias)")


def permute(w: np.ndarray, n_heads: int) -> np.ndarray:
    """llama.cpp's order of a query or key projection: each head's rows ``(half, i)``
    become ``(i, half)``, so that rotated pairs sit side by side.

    >>> permute(np.arange(4), 1)
    array([0, 2, 1, 3])
    """
    return (
        w.reshape(n_heads, 2, w.shape[0] // n_heads // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def unpermute(w: np.ndarray, n_heads: int) -> np.ndarray:
    """The inverse of :func:`permute`.

    >>> unpermute(permute(np.arange(8), 2), 2)
    array([0, 1, 2, 3, 4, 5, 6, 7])
    """
    return (
        w.reshape(n_heads, w.shape[0] // n_heads // 2, 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


def hf_names(arch: str, name: str) -> str | None:
    """The ``transformers`` name of GGUF tensor ``name`` (None for one rowbook does not read).

    >>> hf_names("llama", "blk.3.attn_q.weight"), hf_names("gpt2", "output.weight")
    ('model.layers.3.self_attn.q_proj.weight', 'lm_head.weight')
    """
    if name == "output.weight":
        return "lm_head.weight"
    stem, _, kind = name.rpartition(".")
    if stem in _TOP[arch]:
        return f"{_TOP[arch][stem]}.{kind}"
    match = _BLOCK.fullmatch(name)
    table = _LLAMA if arch == "llama" else _GPT2
    if match is None or match.group(2) not in table:
        return None
    prefix = "model.layers" if arch == "llama" else "h"
    return f"{prefix}.{match.group(1)}.{table[match.group(2)]}.{match.group(3)}"


def gguf_name(arch: str, hf: str) -> str:
    """The GGUF name of a ``transformers`` tensor: the inverse of :func:`hf_names`.

    >>> gguf_name("llama", "model.layers.3.self_attn.q_proj.weight"), gguf_name("gpt2", "wpe.weight")
    ('blk.3.attn_q.weight', 'position_embd.weight')
    """
    if hf == "lm_head.weight":
        return "output.weight"
    stem, _, kind = hf.rpartition(".")
    top = {theirs: ours for ours, theirs in _TOP[arch].items()}
    if stem in top:
        return f"{top[stem]}.{kind}"
    layer, _, part = stem.removeprefix("model.layers." if arch == "llama" else "h.").partition(".")
    table = {theirs: ours for ours, theirs in (_LLAMA if arch == "llama" else _GPT2).items()}
    return f"blk.{layer}.{table[part]}.{kind}"


def _number(file: GGUFFile, key: str, kind: type, default: Any = None) -> Any:
    value = file.get(key, default)
    ok = isinstance(value, int if kind is int else int | float) and not isinstance(value, bool)
    if value is None or not ok:
        what = "an integer" if kind is int else "a number"
        raise ValueError(f"{file.path}: metadata {key!r} must be {what}, got {value!r}")
    return value


def _rope_scaling(file: GGUFFile, arch: str) -> dict[str, Any] | None:
    kind = file.get(f"{arch}.rope.scaling.type", "none")
    if "rope_freqs.weight" in file.tensors:
        raise ValueError(
            f"{file.path}: tensor 'rope_freqs.weight' holds Llama 3's RoPE frequencies, which "
            "rowbook does not read from a GGUF; open the Hugging Face checkpoint with from_hf"
        )
    if kind == "none":
        return None
    if kind != "linear":
        raise ValueError(f"{file.path}: {arch}.rope.scaling.type {kind!r}: rowbook reads 'linear'")
    return {"rope_type": "linear", "factor": _number(file, f"{arch}.rope.scaling.factor", float)}


def hf_config(file: GGUFFile) -> dict[str, Any]:
    """The ``config.json`` a Hugging Face checkpoint of the same model would hold."""
    arch = file.get("general.architecture")
    if arch not in ARCHITECTURES:
        raise ValueError(
            f"{file.path}: general.architecture {arch!r} is not a model rowbook opens "
            f"({', '.join(ARCHITECTURES)}); its token table still reads with gguf_vectors"
        )
    if "token_embd.weight" not in file.tensors:
        raise ValueError(f"{file.path}: tensor 'token_embd.weight' (the token table) is missing")
    rows = file.tensors["token_embd.weight"].shape[0]
    n = {
        key: _number(file, f"{arch}.{key}", int)
        for key in ("embedding_length", "block_count", "attention.head_count", "context_length")
    }
    eos = file.get("tokenizer.ggml.eos_token_id")
    common = {
        "model_type": arch,
        "vocab_size": _number(file, f"{arch}.vocab_size", int, rows),
        "tie_word_embeddings": "output.weight" not in file.tensors,
        "eos_token_id": eos,
    }
    ff = _number(file, f"{arch}.feed_forward_length", int)
    if arch == "gpt2":
        return common | {
            "n_embd": n["embedding_length"],
            "n_layer": n["block_count"],
            "n_head": n["attention.head_count"],
            "n_inner": ff,
            "n_positions": n["context_length"],
            "layer_norm_epsilon": _number(file, "gpt2.attention.layer_norm_epsilon", float),
            "activation_function": "gelu_new",
        }
    bias = "blk.0.attn_q.bias" in file.tensors
    heads = n["attention.head_count"]
    head_dim = next(
        (_number(file, f"llama.{k}", int) for k in _HEAD_DIM if f"llama.{k}" in file.metadata), None
    )
    return common | {
        "hidden_size": n["embedding_length"],
        "num_hidden_layers": n["block_count"],
        "num_attention_heads": heads,
        "num_key_value_heads": _number(file, "llama.attention.head_count_kv", int, heads),
        "head_dim": head_dim,
        "intermediate_size": ff,
        "max_position_embeddings": n["context_length"],
        "rms_norm_eps": _number(file, "llama.attention.layer_norm_rms_epsilon", float),
        "rope_theta": _number(file, "llama.rope.freq_base", float, 10000.0),
        "rope_scaling": _rope_scaling(file, arch),
        "attention_bias": bias,
        "mlp_bias": "blk.0.ffn_up.bias" in file.tensors,
    }


def _hf_tensors(file: GGUFFile, config: Any) -> dict[str, tuple[np.ndarray, str]]:
    """Every tensor as its ``transformers`` name -> (float32 array in the checkpoint's
    layout, the GGUF name it came from)."""
    arch = config.family
    out = {}
    for name in file.tensors:
        hf = hf_names(arch, name)
        if hf is None:
            raise ValueError(
                f"{file.path}: tensor {name!r} is not part of the {arch} model its metadata describes"
            )
        array = file.tensor(name)
        if arch == "llama" and ".attn_q." in name:
            array = unpermute(array, config.n_heads)
        elif arch == "llama" and ".attn_k." in name:
            array = unpermute(array, config.n_kv_heads)
        elif arch == "gpt2" and array.ndim == 2 and name.startswith("blk."):
            array = array.T  # the projections, as Conv1D holds them: (in, out)
        out[hf] = (array, name)
    return out


def _read(net: Any, tensors: dict[str, tuple[np.ndarray, str]], path: Any) -> None:

    config = net.config
    plan = tensor_plan(config, set(tensors))
    used = {"lm_head.weight"} if config.tie_embeddings else set()
    for name, param in net.named_parameters():
        hf, how = plan[name]
        missing = [n for n in hf if n not in tensors]
        if missing:
            raise ValueError(f"{path}: the tensor rowbook reads as {missing[0]!r} is missing")
        parts = [tensors[n][0] for n in hf]
        value = joined(parts, how)
        if value.shape != param.shape:
            raise ValueError(
                f"{path}: tensor {tensors[hf[0]][1]!r} has shape {tensors[hf[0]][0].shape}, but "
                f"the metadata implies {param.shape}"
            )
        param.data[...] = value
        used.update(hf)
    extra = sorted(tensors[n][1] for n in tensors if n not in used)
    if extra:
        raise ValueError(f"{path}: tensor {extra[0]!r} has no place in the model")


def _pipeline(file: GGUFFile) -> tuple[Any, int | None]:
    from rowbook.gguf.tokenizer import gguf_tokenizer
    from rowbook.text import TextPipeline

    if "tokenizer.ggml.model" not in file.metadata:
        return None, None
    try:
        tok = gguf_tokenizer(file)
    except ValueError as err:
        warnings.warn(f"{err}; the model works on token ids", stacklevel=3)
        return None, None
    return TextPipeline(None, tok.tokenizer).fit([]), tok.eos_id


def load_gguf_lm(cls: type, source: str | os.PathLike[str] | GGUFFile, params: dict) -> Any:
    """A fitted ``cls`` (:class:`~rowbook.models.TransformerLM`) from a GGUF file."""
    file = source if isinstance(source, GGUFFile) else read_gguf(source)
    config, eos = config_settings(hf_config(file), file.path)
    settings = config.to_dict()
    fixed = sorted(set(params) & set(settings))
    if fixed:
        raise ValueError(
            f"from_gguf: {', '.join(fixed)} come from {file.path}; pass training parameters only"
        )
    try:
        model = cls(**settings, **params)
    except ValueError as err:
        raise ValueError(f"{file.path}: {err}") from None
    pipeline, tokenizer_eos = _pipeline(file)
    eos = tokenizer_eos if tokenizer_eos is not None else eos
    net = model._set_network(LMExtras(pipeline, config.vocab_size, eos))
    _read(net, _hf_tensors(file, net.config), file.path)
    return model
