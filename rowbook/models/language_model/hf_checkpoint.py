"""Hugging Face checkpoints of ``GPT2LMHeadModel`` and ``LlamaForCausalLM``, both ways.

One file over 400 lines on purpose: the config, the tensor plan, the reader and the writer
of the one format must agree name for name, so they stay together.

A checkpoint folder holds ``config.json``, the weights (``model.safetensors``, or shards
listed by ``model.safetensors.index.json``) and often ``tokenizer.json``. Reading one:

1. ``config.json`` (at most :data:`MAX_CONFIG_BYTES`) gives the architecture; each field is
   checked for its type and against :data:`LIMITS`, and a ``model_type`` other than
   ``gpt2`` and ``llama`` is refused;
2. every tensor is memory-mapped (:func:`rowbook.io.map_safetensors`: a file can only claim
   the bytes it has), looked up by the name ``transformers`` gives it, checked against the
   shape the config implies, and copied into :class:`~rowbook.models.language_model.transformer.TransformerNet`
   as float32 (``F16`` and ``BF16`` widened); a tensor the config does not explain is an error;
3. ``tokenizer.json`` becomes the model's pipeline when it is a byte-level BPE rowbook reads
   (GPT-2's is); otherwise the model works on ids and its table's keys are ``id:N``.

The names, and what changes on the way (:func:`tensor_plan`): GPT-2 stores its projections
as ``Conv1D`` weights, ``(in, out)``, so they are transposed; Llama's separate
``q_proj``, ``k_proj``, ``v_proj`` are stacked into rowbook's fused ``in_proj_weight``.
Writing (:func:`save_lm`) is the same plan backwards.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from rowbook._safetensors import as_float32
from rowbook.io import map_safetensors, read_json, save_safetensors, write_json
from rowbook.models.language_model.config import TransformerConfig
from rowbook.models.language_model.state import LMExtras

__all__ = [
    "LIMITS",
    "MAX_CONFIG_BYTES",
    "SUPPORTED",
    "config_settings",
    "hf_vectors",
    "joined",
    "load_lm",
    "read_config",
    "save_lm",
    "tensor_plan",
]

#: ``model_type`` -> the ``transformers`` class whose checkpoints rowbook reads and writes.
SUPPORTED = {"gpt2": "GPT2LMHeadModel", "llama": "LlamaForCausalLM"}
#: Largest ``config.json`` read, in bytes.
MAX_CONFIG_BYTES = 1 << 20
#: Largest value of each architecture setting read from a config (a claim past these is
#: refused before anything is allocated).
LIMITS = {
    "vocab_size": 1 << 22,
    "d_model": 1 << 16,
    "n_layers": 1 << 10,
    "n_heads": 1 << 10,
    "n_kv_heads": 1 << 10,
    "d_ff": 1 << 18,
    "context": 1 << 22,
    "head_dim": 1 << 12,
}
_ACTIVATIONS = {
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "gelu": "gelu",
    "relu": "relu",
    "silu": "silu",
    "swish": "silu",
}
_HF_ACTIVATION = {"gelu_tanh": "gelu_new", "gelu": "gelu", "relu": "relu", "silu": "silu"}
_MISSING = object()
_BUFFERS = (".attn.bias", ".attn.masked_bias", "rotary_emb.inv_freq")  # not weights


def _field(cfg: dict[str, Any], key: str, path: Path, kind: type, default: Any = _MISSING) -> Any:
    """``cfg[key]`` if it is an int, float (int or float) or bool as ``kind`` says; ``default``
    when it is absent or null (an error without one)."""
    value = cfg.get(key)
    if value is None:
        if default is _MISSING:
            raise ValueError(f"{path}: field {key!r} is missing")
        return default
    if kind is bool:
        ok = isinstance(value, bool)
    else:
        ok = isinstance(value, int if kind is int else int | float) and not isinstance(value, bool)
    if not ok:
        what = {int: "an integer", float: "a number", bool: "true or false"}[kind]
        raise ValueError(f"{path}: field {key!r} must be {what}, got {value!r}")
    return value


def _activation(name: Any, path: Path, key: str) -> str:
    if not isinstance(name, str) or name not in _ACTIVATIONS:
        raise ValueError(
            f"{path}: {key} {name!r} is not one rowbook computes ({', '.join(_ACTIVATIONS)})"
        )
    return _ACTIVATIONS[name]


def _gpt2(cfg: dict[str, Any], path: Path) -> dict[str, Any]:
    if not cfg.get("scale_attn_weights", True) or cfg.get("scale_attn_by_inverse_layer_idx", False):
        raise ValueError(
            f"{path}: only GPT-2's attention scaled by 1 / sqrt(d_k) is implemented "
            "(scale_attn_weights=true, scale_attn_by_inverse_layer_idx=false)"
        )
    d = _field(cfg, "n_embd", path, int)
    return {
        "family": "gpt2",
        "vocab_size": _field(cfg, "vocab_size", path, int),
        "d_model": d,
        "n_layers": _field(cfg, "n_layer", path, int),
        "n_heads": _field(cfg, "n_head", path, int),
        "d_ff": _field(cfg, "n_inner", path, int, None) or 4 * d,
        "context": _field(cfg, "n_positions", path, int),
        "positions": "learned",
        "bias": True,
        "norm_eps": float(_field(cfg, "layer_norm_epsilon", path, float, 1e-5)),
        "activation": _activation(
            cfg.get("activation_function", "gelu_new"), path, "activation_function"
        ),
        "tie_embeddings": _field(cfg, "tie_word_embeddings", path, bool, True),
    }


def _rope(cfg: dict[str, Any], path: Path) -> tuple[float, dict[str, Any] | None]:
    """RoPE's base and scaling, from transformers 5's ``rope_parameters`` or 4's fields."""
    rope = cfg.get("rope_parameters") or cfg.get("rope_scaling") or {}
    if not isinstance(rope, dict):
        raise ValueError(f"{path}: field 'rope_parameters' must be an object, got {rope!r}")
    base = rope.get("rope_theta", cfg.get("rope_theta", 10000.0))
    if isinstance(base, bool) or not isinstance(base, int | float) or base <= 0:
        raise ValueError(f"{path}: rope_theta must be a positive number, got {base!r}")
    kind = rope.get("rope_type", rope.get("type", "default"))
    if kind == "default":
        return float(base), None
    scaling = {k: v for k, v in rope.items() if k not in ("rope_theta", "type")} | {
        "rope_type": kind
    }
    return float(base), scaling


def _llama(cfg: dict[str, Any], path: Path) -> dict[str, Any]:
    attention_bias = _field(cfg, "attention_bias", path, bool, False)
    if _field(cfg, "mlp_bias", path, bool, False) != attention_bias:
        raise ValueError(
            f"{path}: attention_bias and mlp_bias differ; rowbook's Llama has biases "
            "on both or on neither"
        )
    heads = _field(cfg, "num_attention_heads", path, int)
    base, scaling = _rope(cfg, path)
    return {
        "family": "llama",
        "vocab_size": _field(cfg, "vocab_size", path, int),
        "d_model": _field(cfg, "hidden_size", path, int),
        "n_layers": _field(cfg, "num_hidden_layers", path, int),
        "n_heads": heads,
        "n_kv_heads": _field(cfg, "num_key_value_heads", path, int, None) or heads,
        "head_dim": _field(cfg, "head_dim", path, int, None),
        "d_ff": _field(cfg, "intermediate_size", path, int),
        "context": _field(cfg, "max_position_embeddings", path, int),
        "positions": "rope",
        "bias": attention_bias,
        "norm_eps": float(_field(cfg, "rms_norm_eps", path, float, 1e-6)),
        "activation": _activation(cfg.get("hidden_act", "silu"), path, "hidden_act"),
        "rope_base": base,
        "rope_scaling": scaling,
        "tie_embeddings": _field(cfg, "tie_word_embeddings", path, bool, False),
    }


def read_config(directory: Path) -> tuple[TransformerConfig, int | None]:
    """``(the model's TransformerConfig, end-of-text id)`` of ``directory/config.json`` (or of
    the config file ``directory`` names)."""
    path = directory if directory.is_file() else directory / "config.json"
    cfg = read_json(path, "Hugging Face config", max_bytes=MAX_CONFIG_BYTES)
    return config_settings(cfg, path)


def config_settings(cfg: Any, path: Path) -> tuple[TransformerConfig, int | None]:
    """:func:`read_config` of a parsed config (``path`` names it in errors): a GGUF file's
    metadata, put in ``config.json``'s words, is checked by the same rules."""
    if not isinstance(cfg, dict):
        raise ValueError(f"{path} must hold a JSON object, got {type(cfg).__name__}")
    model_type = cfg.get("model_type")
    if not isinstance(model_type, str) or model_type not in SUPPORTED:
        known = ", ".join(f"{k!r} ({v})" for k, v in SUPPORTED.items())
        raise ValueError(
            f"{path}: model_type {model_type!r} is not supported; rowbook opens {known}"
        )
    settings = _gpt2(cfg, path) if model_type == "gpt2" else _llama(cfg, path)
    for key, limit in LIMITS.items():
        value = settings.get(key)
        if value is not None and not 1 <= value <= limit:
            raise ValueError(
                f"{path}: {key} = {value} is outside 1..{limit:,}; not a checkpoint "
                "rowbook can open"
            )
    try:
        config = TransformerConfig(**settings)
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    eos = cfg.get("eos_token_id")
    eos = eos[0] if isinstance(eos, list) and eos else eos
    valid = isinstance(eos, int) and not isinstance(eos, bool) and 0 <= eos < config.vocab_size
    return config, eos if valid else None


def tensor_plan(config: Any, names: set[str]) -> dict[str, tuple[list[str], str]]:
    """rowbook parameter name -> (the checkpoint's tensor names, ``"copy"`` | ``"transpose"`` |
    ``"stack"``); ``names`` (the checkpoint's, or empty to write) picks GPT-2's prefix."""
    plan: dict[str, tuple[list[str], str]] = {}
    if config.family == "gpt2":
        p = "" if "wte.weight" in names else "transformer."
        plan["embedding.weight"] = ([f"{p}wte.weight"], "copy")
        plan["positions.weight"] = ([f"{p}wpe.weight"], "copy")
        for i in range(config.n_layers):
            ours, theirs = f"blocks.{i}.", f"{p}h.{i}."
            for a, b in (("norm1", "ln_1"), ("norm2", "ln_2")):
                for kind in ("weight", "bias"):
                    plan[f"{ours}{a}.{kind}"] = ([f"{theirs}{b}.{kind}"], "copy")
            for a, b in (
                ("attention.in_proj_", "attn.c_attn."),
                ("attention.out_proj.", "attn.c_proj."),
                ("mlp.fc.", "mlp.c_fc."),
                ("mlp.proj.", "mlp.c_proj."),
            ):
                plan[f"{ours}{a}weight"] = (
                    [f"{theirs}{b}weight"],
                    "transpose",
                )  # Conv1D: (in, out)
                plan[f"{ours}{a}bias"] = ([f"{theirs}{b}bias"], "copy")
        plan["norm.weight"], plan["norm.bias"] = (
            ([f"{p}ln_f.weight"], "copy"),
            ([f"{p}ln_f.bias"], "copy"),
        )
    else:
        plan["embedding.weight"] = (["model.embed_tokens.weight"], "copy")
        for i in range(config.n_layers):
            ours, theirs = f"blocks.{i}.", f"model.layers.{i}."
            plan[f"{ours}norm1.weight"] = ([f"{theirs}input_layernorm.weight"], "copy")
            plan[f"{ours}norm2.weight"] = ([f"{theirs}post_attention_layernorm.weight"], "copy")
            for kind in ("weight", "bias"):
                qkv = [f"{theirs}self_attn.{x}_proj.{kind}" for x in "qkv"]
                plan[f"{ours}attention.in_proj_{kind}"] = (qkv, "stack")
                plan[f"{ours}attention.out_proj.{kind}"] = (
                    [f"{theirs}self_attn.o_proj.{kind}"],
                    "copy",
                )
                for x in ("gate", "up", "down"):
                    plan[f"{ours}mlp.{x}.{kind}"] = ([f"{theirs}mlp.{x}_proj.{kind}"], "copy")
        plan["norm.weight"] = (["model.norm.weight"], "copy")
    plan["head.weight"] = (["lm_head.weight"], "copy")
    return plan


def joined(parts: list[np.ndarray], how: str) -> np.ndarray:
    """The parameter a :func:`tensor_plan` entry's tensors make: the one tensor as it is
    (``"copy"``) or transposed (``"transpose"``), or the tensors stacked row-wise (``"stack"``).

    >>> joined([np.ones((1, 2)), np.zeros((1, 2))], "stack").tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    if how == "transpose":
        return parts[0].T
    return np.concatenate(parts) if how == "stack" else parts[0]


def _weights(directory: Path) -> dict[str, tuple[np.ndarray, str, Path]]:
    """Every tensor of the checkpoint: name -> (mapped array, dtype, file)."""
    index = directory / "model.safetensors.index.json"
    if index.exists():
        weight_map = read_json(index, "safetensors index", max_bytes=64 * 2**20).get("weight_map")
        if not isinstance(weight_map, dict) or not weight_map:
            raise ValueError(f"{index}: field 'weight_map' must be a non-empty object")
        files = sorted(set(weight_map.values()), key=str)
        for name in files:
            if not isinstance(name, str) or Path(name).name != name or name.startswith("."):
                raise ValueError(f"{index}: shard {name!r} must be a file name in {directory}")
    else:
        files = ["model.safetensors"]
    found: dict[str, tuple[np.ndarray, str, Path]] = {}
    for name in files:
        arrays, dtypes, _ = map_safetensors(directory / name)
        found |= {k: (a, dtypes[k], directory / name) for k, a in arrays.items()}
    return found


def _expected(stack: int, shape: tuple[int, ...], how: str, config: Any) -> list[tuple[int, ...]]:
    if how == "transpose":
        return [shape[::-1]]
    if how == "copy":
        return [shape]
    q, kv = config.n_heads * config.head_dim, config.n_kv_heads * config.head_dim
    return [(n, *shape[1:]) for n in (q, kv, kv)][:stack]


def _read(net: Any, weights: dict[str, tuple[np.ndarray, str, Path]], directory: Path) -> None:
    config = net.config
    plan = tensor_plan(config, set(weights))
    used: set[str] = set()
    if config.tie_embeddings:
        used.add("lm_head.weight")  # written by some exporters, equal to the table
    for name, param in net.named_parameters():
        hf_names, how = plan[name]
        missing = [n for n in hf_names if n not in weights]
        if missing:
            raise ValueError(
                f"{directory}: tensor {missing[0]!r} is missing; config.json "
                f"describes a {config.family} model that has it"
            )
        parts = []
        for hf_name, shape in zip(
            hf_names, _expected(len(hf_names), param.shape, how, config), strict=True
        ):
            array, dtype, file = weights[hf_name]
            if array.shape != shape:
                raise ValueError(
                    f"{file}: tensor {hf_name!r} has shape {array.shape}, but "
                    f"config.json implies {shape}; the weights and the config "
                    "do not belong together"
                )
            parts.append(as_float32(array, dtype))
            used.add(hf_name)
        param.data[...] = joined(parts, how)
    extra = sorted(n for n in weights if n not in used and not n.endswith(_BUFFERS))
    if extra:
        raise ValueError(
            f"{directory}: tensor {extra[0]!r} (and {len(extra) - 1} more) is not part of "
            f"the {config.family} model config.json describes"
        )


def _tokenizer(directory: Path) -> tuple[Any, int | None]:
    """The pipeline of ``tokenizer.json`` when rowbook reads it, and its end-of-text id."""
    from rowbook.text import ByteLevelBPE, TextPipeline

    path = directory / "tokenizer.json"
    if not path.exists():
        return None, None
    try:
        bpe = ByteLevelBPE.from_tokenizer_json(path)
    except ValueError as err:
        warnings.warn(
            f"{path} is not a byte-level BPE rowbook reads ({err}); the model works on token ids",
            stacklevel=3,
        )
        return None, None
    eos = bpe.special_tokens.get("<|endoftext|>")
    return TextPipeline(None, bpe).fit([]), eos


def load_lm(cls: type, directory: Path, params: dict[str, Any]) -> Any:
    """A fitted ``cls`` (:class:`~rowbook.models.TransformerLM`) from a checkpoint folder."""
    config, eos = read_config(directory)
    settings = config.to_dict()
    fixed = sorted(set(params) & set(settings))
    if fixed:
        raise ValueError(
            f"from_hf: {', '.join(fixed)} come from {directory / 'config.json'}; "
            "pass training parameters only (lr, epochs, ...)"
        )
    try:
        model = cls(**settings, **params)
    except ValueError as err:
        raise ValueError(f"{directory / 'config.json'}: {err}") from None
    weights = _weights(directory)
    pipeline, tokenizer_eos = _tokenizer(directory)
    eos = tokenizer_eos if tokenizer_eos is not None else eos
    _read(model._set_network(LMExtras(pipeline, config.vocab_size, eos)), weights, directory)
    return model


def _hf_config(config: Any, eos: int | None) -> dict[str, Any]:
    problems = []
    if config.scale_embeddings:
        problems.append("scale_embeddings=True")
    if config.family == "gpt2":
        if config.positions != "learned" or not config.bias:
            problems.append("GPT-2 needs learned positions and biases")
        if (
            config.n_kv_heads != config.n_heads
            or config.head_dim * config.n_heads != config.d_model
        ):
            problems.append("GPT-2 has n_kv_heads = n_heads and head_dim = d_model / n_heads")
    elif config.positions != "rope":
        problems.append("Llama needs positions='rope'")
    if problems:
        raise ValueError(
            f"save_hf: this {config.family} model cannot be written as a "
            f"{SUPPORTED[config.family]} checkpoint: {'; '.join(problems)}"
        )
    common = {
        "model_type": config.family,
        "architectures": [SUPPORTED[config.family]],
        "vocab_size": config.vocab_size,
        "tie_word_embeddings": config.tie_embeddings,
        "bos_token_id": eos,
        "eos_token_id": eos,
    }
    if config.family == "gpt2":
        return common | {
            "n_embd": config.d_model,
            "n_layer": config.n_layers,
            "n_head": config.n_heads,
            "n_inner": config.d_ff,
            "n_positions": config.context,
            "activation_function": _HF_ACTIVATION[config.activation],
            "layer_norm_epsilon": config.norm_eps,
            "resid_pdrop": config.dropout,
            "embd_pdrop": config.dropout,
            "attn_pdrop": config.dropout,
        }
    rope = {"rope_theta": config.rope_base, "rope_type": "default"} | (config.rope_scaling or {})
    return common | {
        "hidden_size": config.d_model,
        "intermediate_size": config.d_ff,
        "num_hidden_layers": config.n_layers,
        "num_attention_heads": config.n_heads,
        "num_key_value_heads": config.n_kv_heads,
        "head_dim": config.head_dim,
        "max_position_embeddings": config.context,
        "rms_norm_eps": config.norm_eps,
        "hidden_act": _HF_ACTIVATION[config.activation],
        "rope_theta": config.rope_base,
        "rope_scaling": config.rope_scaling,
        "rope_parameters": rope,
        "attention_bias": config.bias,
        "mlp_bias": config.bias,
        "attention_dropout": config.dropout,
    }


def save_lm(model: Any, directory: Path) -> None:
    """``config.json``, ``model.safetensors`` (float32) and, with a tokenizer, ``tokenizer.json``."""
    fitted = model._require_fitted(".save_hf()")
    net, config = fitted.net, fitted.net.config
    hf_config = _hf_config(config, fitted.extras.eos)
    plan = tensor_plan(config, set())
    tensors: dict[str, np.ndarray] = {}
    for name, param in net.named_parameters():
        hf_names, how = plan[name]
        data = param.data.astype(np.float32)
        if how == "stack":
            sizes = [config.n_heads * config.head_dim, config.n_kv_heads * config.head_dim]
            tensors |= dict(zip(hf_names, np.split(data, np.cumsum(sizes)), strict=True))
        else:
            tensors[hf_names[0]] = data.T if how == "transpose" else data
    directory.mkdir(parents=True, exist_ok=True)
    write_json(directory / "config.json", hf_config)
    save_safetensors(directory / "model.safetensors", tensors, {"format": "pt"})
    pipeline = fitted.extras.pipeline
    if pipeline is not None:
        pipeline.tokenizer_.to_tokenizer_json(directory / "tokenizer.json")


def hf_vectors(directory: str | Path) -> Any:
    """The token table of a checkpoint folder as :class:`~rowbook.Vectors`, read alone (the
    other weights stay on disk): keys from ``tokenizer.json`` where it reads, else ``id:N``."""
    from rowbook.vectors import Vectors

    directory = Path(directory)
    config, _ = read_config(directory)
    weights = _weights(directory)
    name = (
        "model.embed_tokens.weight"
        if config.family == "llama"
        else ("wte.weight" if "wte.weight" in weights else "transformer.wte.weight")
    )
    if name not in weights:
        raise ValueError(f"{directory}: tensor {name!r} (the token table) is missing")
    array, dtype, file = weights[name]
    expected = (config.vocab_size, config.d_model)
    if array.shape != expected:
        raise ValueError(
            f"{file}: tensor {name!r} has shape {array.shape}, but config.json implies {expected}"
        )
    pipeline, _ = _tokenizer(directory)
    bpe = None if pipeline is None else pipeline.tokenizer_
    keys = [
        bpe.id_to_token(i) if bpe is not None and i < len(bpe) else f"id:{i}"
        for i in range(expected[0])
    ]
    return Vectors(keys, as_float32(array, dtype), copy=False)
