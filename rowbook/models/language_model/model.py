r"""TransformerLM: a GPT-2 or a Llama as one model under the one contract, trained on text.

One file over 400 lines on purpose: it is the one class's contract (parameters, fit,
generation, checkpoint doors, learned views); the network, config and checkpoints are in the
modules beside it.

The texts go through a :class:`~rowbook.text.TextPipeline` with a byte-level BPE of
``vocab_size`` entries (``<|endoftext|>`` first, then the 256 bytes, then the merges);
each text ends with ``<|endoftext|>``, the texts are joined into one stream of ids, and
the stream is cut into windows of ``context + 1`` ids. A window teaches every next token
at once: the network reads ``w[:-1]`` and its logits are scored against ``w[1:]`` by
cross entropy (causal attention keeps each position from seeing its future). Perplexity
is ``exp`` of the mean cross entropy per token.

Optimizers: ``"adamw"`` steps every parameter with AdamW (weight decay on the matrices and
tables, none on biases and norms, as nanoGPT); ``"sparse_adam"`` looks the table up with
row-sparse gradients and steps it with SparseAdam (only the rows of the batch's tokens),
AdamW stepping the rest; it needs ``tie_embeddings=False``, since a tied output layer
gives every row of the table a gradient.

:meth:`TransformerLM.from_hf` and :meth:`TransformerLM.save_hf` read and write Hugging
Face checkpoints (:mod:`rowbook.models.language_model.hf_checkpoint`); :meth:`TransformerLM.generate`
continues a prompt with a KV cache.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rowbook.autograd import Tensor, no_grad
from rowbook.checks import ParameterError, check_choice, check_int, check_number
from rowbook.corpus_files import read_texts
from rowbook.kernel_math import blas_single_thread
from rowbook.models.language_model import gguf_checkpoint, gguf_save, hf_checkpoint
from rowbook.models.language_model.config import TransformerConfig, architecture_names
from rowbook.models.language_model.kv_cache import CacheDtype, make_cache
from rowbook.models.language_model.sampling import check_sampling, choose_token
from rowbook.models.language_model.state import LMExtras
from rowbook.models.language_model.transformer import TransformerNet
from rowbook.models.network import NetworkModel, NetworkState, pipeline_from_state
from rowbook.nn import KVCache
from rowbook.nn import functional as F
from rowbook.optim import AdamW, OptimizerChain, SparseAdam
from rowbook.text import ByteLevelBPE, TextPipeline
from rowbook.text.bpe.bytelevel import END_OF_TEXT
from rowbook.training import Trainer, hold_out
from rowbook.vectors import Vectors

__all__ = ["END_OF_TEXT", "TransformerLM", "token_windows"]

_EVAL_WINDOWS = 8


def token_windows(stream: np.ndarray, context: int) -> np.ndarray:
    """``(N, context + 1)`` windows of ``stream``, each starting where the last one's inputs end.

    A stream shorter than one window gives one window of all of it.

    >>> token_windows(np.arange(7), 3).tolist()
    [[0, 1, 2, 3], [3, 4, 5, 6]]
    """
    if len(stream) < context + 1:
        return stream[None, :].copy()
    n = (len(stream) - 1) // context
    return np.ascontiguousarray(sliding_window_view(stream, context + 1)[::context][:n])


def _loss(net: TransformerNet, batch: tuple[np.ndarray, ...]) -> Tensor:
    windows = batch[0]  # (B, T + 1)
    logits = net(windows[:, :-1])  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), windows[:, 1:].reshape(-1))


def _metrics(net: TransformerNet, data: tuple[np.ndarray, ...]) -> dict[str, float]:
    """Mean cross entropy per token over ``data``'s windows, dropout off, without a graph."""
    windows, total = data[0], 0.0
    net.eval()
    try:
        with no_grad():
            for start in range(0, len(windows), _EVAL_WINDOWS):
                part = windows[start : start + _EVAL_WINDOWS]
                logits = net(part[:, :-1])
                total += F.cross_entropy(
                    logits.reshape(-1, logits.shape[-1]), part[:, 1:].reshape(-1), reduction="sum"
                ).item()
    finally:
        net.train()
    loss = total / max(windows[:, 1:].size, 1)
    return {"loss": loss, "perplexity": math.exp(loss)}


def _check_prompt(config: TransformerConfig, ids: np.ndarray, max_new_tokens: int) -> None:
    """A prompt of ids the table has, and room for it and the new tokens in the positions."""
    if ids.size == 0:
        raise ValueError("generate: the prompt is empty; give at least one token")
    if ids.min() < 0 or ids.max() >= config.vocab_size:
        raise ValueError(f"generate: prompt ids must be in 0..{config.vocab_size - 1}")
    total = ids.size + max_new_tokens
    if config.positions in ("learned", "sinusoidal") and total > config.context:
        raise ParameterError(
            "max_new_tokens",
            max_new_tokens,
            f"at most {config.context - ids.size} (context={config.context} of "
            f"this model's {config.positions} positions, minus the prompt's "
            f"{ids.size} tokens)",
            fix="shorten the prompt or ask for fewer tokens",
        )


class TransformerLM(NetworkModel[LMExtras]):
    """A decoder-only Transformer language model: GPT-2 or Llama by ``family``.

    Parameters
    ----------
    family
        ``"gpt2"`` (learned positions, LayerNorm, GELU MLP, biases) or ``"llama"`` (RoPE,
        RMSNorm, SwiGLU, no biases, grouped-query attention with ``n_kv_heads``).
    vocab_size
        Entries of the byte-level BPE learned by ``fit`` (fewer if the text runs out of
        pairs): the rows V of the table.
    d_model, n_layers, n_heads, n_kv_heads, d_ff, head_dim
        Width d, blocks L, query heads H, key/value heads (None: H), MLP width (None:
        ``4 d`` for GPT-2, Llama's ``8 d / 3`` rounded to 256), features per head (None:
        ``d / H``).
    context
        Longest sequence the model reads; the training windows' length.
    positions
        ``"learned"``, ``"sinusoidal"``, ``"rope"`` or ``"none"`` (None: the family's).
    norm, mlp
        ``"layernorm"`` or ``"rmsnorm"``; ``"gelu"`` (two matrices) or ``"swiglu"`` (three)
        (None: the family's). The architecture parameters are exactly the fields of
        :class:`~rowbook.models.language_model.config.TransformerConfig`, the one place they
        are checked.
    tie_embeddings
        Use the table as the output layer (``logits = h E^T``): saves V x d parameters.
    scale_embeddings
        Multiply the rows by ``sqrt(d)`` before adding positions (Vaswani et al.).
    dropout
        On the embeddings, the attention weights and both residual branches.
    bias, norm_eps, activation, rope_base, rope_scaling
        Details a checkpoint may set (None: the family's): biases, the norms' epsilon, the
        MLP's activation (``"gelu_tanh"``, ``"gelu"``, ``"silu"``, ``"relu"``), RoPE's base
        and scaling.
    epochs, batch_size, lr, weight_decay, optimizer, seed
        Training: passes over the windows, windows per step, AdamW's learning rate and
        decoupled weight decay, ``"adamw"`` or ``"sparse_adam"`` (see the module), seed of
        the initialisation and the shuffle.
    val_fraction
        Share of the texts held out to report held-out loss and perplexity each epoch
        (when ``fit`` gets no ``val_texts``).
    patience, progress
        Early stopping on the held-out loss (None: never); progress on standard error.

    Attributes
    ----------
    net_
        The :class:`~rowbook.models.language_model.transformer.TransformerNet`.
    pipeline_
        The fitted :class:`~rowbook.text.TextPipeline` (None for a checkpoint without a
        readable ``tokenizer.json``).
    config_
        The :class:`~rowbook.models.language_model.config.TransformerConfig` of ``net_``.
    eos_id_
        The id of ``<|endoftext|>`` (a checkpoint's end-of-text id; None when it has none).
    history_
        Per-epoch ``loss``, ``perplexity``, ``val_loss``, ``val_perplexity``.
    vectors
        The table ``E`` as :class:`~rowbook.Vectors`, keyed by the tokens.

    Examples
    --------
    >>> texts = ["the cat sat on the mat", "the dog sat on the log"] * 20
    >>> lm = TransformerLM(vocab_size=300, d_model=16, n_layers=1, n_heads=2, context=16,
    ...                    epochs=2, val_fraction=0).fit(texts)
    >>> len(lm.pipeline_.tokenizer_), lm.net_(np.array([[1, 2, 3]])).shape  # the text ran out of pairs
    (274, (1, 3, 274))
    """

    _run_only = ("epochs", "patience", "progress")

    def __init__(
        self,
        *,
        family: Literal["gpt2", "llama"] = "gpt2",
        vocab_size: int = 8000,
        d_model: int = 256,
        n_layers: int = 4,
        n_heads: int = 4,
        n_kv_heads: int | None = None,
        d_ff: int | None = None,
        context: int = 256,
        positions: Literal["learned", "sinusoidal", "rope", "none"] | None = None,
        norm: Literal["layernorm", "rmsnorm"] | None = None,
        mlp: Literal["gelu", "swiglu"] | None = None,
        tie_embeddings: bool = True,
        scale_embeddings: bool = False,
        dropout: float = 0.0,
        bias: bool | None = None,
        norm_eps: float | None = None,
        activation: Literal["gelu_tanh", "gelu", "silu", "relu"] | None = None,
        rope_base: float = 10000.0,
        rope_scaling: dict[str, Any] | None = None,
        head_dim: int | None = None,
        epochs: int = 1,
        batch_size: int = 16,
        lr: float = 1e-3,
        weight_decay: float = 0.1,
        optimizer: Literal["adamw", "sparse_adam"] = "adamw",
        seed: int = 0,
        val_fraction: float = 0.1,
        patience: int | None = None,
        progress: bool = False,
    ) -> None:
        self.family, self.vocab_size, self.d_model, self.n_layers = (
            family,
            vocab_size,
            d_model,
            n_layers,
        )
        self.n_heads, self.n_kv_heads, self.d_ff, self.context = n_heads, n_kv_heads, d_ff, context
        self.positions, self.norm, self.mlp = positions, norm, mlp
        self.tie_embeddings = tie_embeddings
        self.scale_embeddings, self.dropout, self.bias, self.norm_eps = (
            scale_embeddings,
            dropout,
            bias,
            norm_eps,
        )
        self.activation, self.rope_base, self.rope_scaling = activation, rope_base, rope_scaling
        self.head_dim, self.epochs, self.batch_size, self.lr = head_dim, epochs, batch_size, lr
        self.weight_decay, self.optimizer, self.seed = weight_decay, optimizer, seed
        self.val_fraction, self.patience, self.progress = val_fraction, patience, progress
        self._check_params()

    def _check_params(self) -> None:
        owner = "TransformerLM"
        self._config(self.vocab_size)  # the architecture's checks
        check_choice("optimizer", self.optimizer, ("adamw", "sparse_adam"), owner=owner)
        self._check_ints(owner, epochs=0, batch_size=1, seed=0)
        check_int("patience", self.patience, 1, allow_none=True, owner=owner)
        check_number("lr", self.lr, 0.0, low_open=True, owner=owner)
        check_number("weight_decay", self.weight_decay, 0.0, owner=owner)
        check_number("val_fraction", self.val_fraction, 0.0, 1.0, high_open=True, owner=owner)
        if self.tie_embeddings and self.optimizer == "sparse_adam":
            raise ParameterError(
                "optimizer",
                "sparse_adam",
                "'adamw' with tie_embeddings=True",
                owner=owner,
                fix="a tied output layer gives every row of the "
                "table a gradient, which SparseAdam refuses; untie the table "
                "(tie_embeddings=False) to step it row by row",
            )

    def _config(self, vocab_size: int) -> TransformerConfig:
        settings = {name: getattr(self, name) for name in architecture_names()}
        return TransformerConfig(**(settings | {"vocab_size": vocab_size}))

    # -- fitting ------------------------------------------------------------------------
    def fit(
        self,
        texts: Sequence[str] | os.PathLike,
        val_texts: Sequence[str] | None = None,
        *,
        checkpoint: str | os.PathLike[str] | None = None,
        resume: str | os.PathLike[str] | None = None,
    ) -> TransformerLM:
        """Learn the BPE (unless resuming) and train on ``texts`` (a list, or a path whose
        non-blank lines are the texts); returns ``self``.

        ``val_texts`` are scored after every epoch; without them ``val_fraction`` of the
        texts is held out. ``checkpoint`` and ``resume`` follow the model contract.
        """
        texts = read_texts(texts, "texts")
        if val_texts is None:
            texts, val_texts = hold_out(texts, self.val_fraction, self.seed)
        else:
            val_texts = read_texts(val_texts, "val_texts")
        state = self._resume_state(resume)
        if state is None:
            bpe = ByteLevelBPE()
            pipeline = TextPipeline(None, bpe).fit(
                texts, vocab_size=self.vocab_size, special_tokens=[END_OF_TEXT]
            )
            extras = LMExtras(pipeline, pipeline.vocab_size, bpe.token_to_id(END_OF_TEXT))
        else:
            extras = self._extras_from_state(state)
        train = (self._windows(extras, texts),)
        val = (self._windows(extras, val_texts),) if val_texts else None
        self._train(extras, train, val, checkpoint=checkpoint, state=state)
        return self

    def _windows(self, extras: LMExtras, texts: list[str]) -> np.ndarray:
        pieces = [np.append(extras.pipeline.encode(t), extras.eos) for t in texts]
        return token_windows(np.concatenate(pieces), self.context)

    def _build(self, extras: LMExtras) -> tuple[TransformerNet, Any]:
        sparse = self.optimizer == "sparse_adam"
        net = TransformerNet(self._config(extras.vocab_size), sparse=sparse, rng=self.seed)
        if extras.dropout_rng is not None:  # resumed: the masks continue where they were
            net.rng.bit_generator.state = extras.dropout_rng
        table = net.embedding.weight
        rest = [p for p in net.parameters() if not (sparse and p is table)]
        groups = [
            {"params": [p for p in rest if p.ndim >= 2]},
            {"params": [p for p in rest if p.ndim < 2], "weight_decay": 0.0},
        ]
        adamw = AdamW(
            [g for g in groups if g["params"]], lr=self.lr, weight_decay=self.weight_decay
        )
        if not sparse:
            return net, adamw
        return net, OptimizerChain(SparseAdam([table], lr=self.lr), adamw)

    def _trainer_for(self, net: TransformerNet, optimizer: Any) -> Trainer:
        return self._language_model_trainer(net, optimizer, _loss, _metrics)

    def _extras_to_state(self, fitted: NetworkState[LMExtras]) -> dict[str, Any]:
        pipeline = fitted.extras.pipeline
        return {
            "pipeline": None if pipeline is None else pipeline.to_dict(),
            "vocab": fitted.extras.vocab_size,
            "eos": fitted.extras.eos,
            "dropout_rng": fitted.net.rng.bit_generator.state,
        }

    def _extras_from_state(self, state: dict[str, Any]) -> LMExtras:
        pipeline = None if state["pipeline"] is None else pipeline_from_state(state)
        vocab, eos = check_int("vocab", state["vocab"], 1), state["eos"]
        if eos is not None:
            eos = check_int("eos", eos, 0)
        rng = state.get("dropout_rng")
        if rng is not None and not isinstance(rng, dict):
            raise ValueError(
                f"field 'dropout_rng' must be a generator state, got {type(rng).__name__}"
            )
        return LMExtras(pipeline, vocab, eos, rng)

    # -- learned state ------------------------------------------------------------------
    @property
    def pipeline_(self) -> TextPipeline | None:
        """The fitted text pipeline (None when the model came without a tokenizer)."""
        return self._require_fitted(".pipeline_").extras.pipeline

    @property
    def eos_id_(self) -> int | None:
        """The id of the end-of-text token (None when a checkpoint names none)."""
        return self._require_fitted(".eos_id_").extras.eos

    @property
    def config_(self) -> TransformerConfig:
        """The architecture of ``net_``, every family default filled in."""
        return self.net_.config

    @property
    def vectors(self) -> Vectors:
        """The token table ``E`` (V, d) keyed by the tokens (``"id:N"`` without a tokenizer)."""
        table = self.net_.embedding.weight.data
        pipeline = self._require_fitted(".vectors").extras.pipeline
        if pipeline is None:
            keys = [f"id:{i}" for i in range(len(table))]
        else:
            bpe = pipeline.tokenizer_  # a checkpoint's table may have more rows than tokens
            keys = [bpe.id_to_token(i) if i < len(bpe) else f"id:{i}" for i in range(len(table))]
        return Vectors(keys, table)

    # -- using the model ----------------------------------------------------------------
    def encode(self, text: str) -> np.ndarray:
        """``(T,)`` ids of ``text``."""
        pipeline = self._require_fitted(".encode()").extras.pipeline
        if pipeline is None:
            raise ValueError(
                "this model has no tokenizer (its checkpoint had no readable "
                "tokenizer.json): pass token ids instead of text"
            )
        return pipeline.encode(text)

    def perplexity(self, texts: Sequence[str]) -> float:
        """``exp`` of the mean cross entropy per token over ``texts`` (each ended by ``<|endoftext|>``)."""
        fitted = self._require_fitted("perplexity()")
        windows = self._windows(fitted.extras, read_texts(texts, "texts"))
        return _metrics(fitted.net, (windows,))["perplexity"]

    def generate(
        self,
        prompt: str | Sequence[int],
        max_new_tokens: int = 50,
        *,
        temperature: float = 1.0,
        top_k: int | None = None,
        top_p: float | None = None,
        seed: int | None = None,
        stop_at_eos: bool = True,
        use_cache: bool = True,
        cache_dtype: CacheDtype | None = None,
    ) -> str | np.ndarray:
        """Continue ``prompt`` by up to ``max_new_tokens`` tokens, with a KV cache.

        A text prompt gives the prompt and its continuation as text; a prompt of ids gives
        the ids. Each token comes from :func:`~rowbook.models.language_model.sampling.choose_token`
        (temperature 0: the most likely one). Generation stops after an end-of-text token
        when ``stop_at_eos``. The same ``seed`` gives the same tokens.

        ``use_cache=False`` runs the network over the whole sequence at every step (what the
        cache saves); ``cache_dtype`` stores the cache as ``"float32"``, ``"float16"`` or
        ``"int8"`` with per-head, per-position scales (:mod:`rowbook.models.language_model.kv_cache`; None:
        the model's dtype).
        """
        fitted = self._require_fitted(".generate()")
        net = fitted.net
        check_int("max_new_tokens", max_new_tokens, 0)
        check_sampling(temperature, top_k, top_p)
        as_text = isinstance(prompt, str)
        ids = self.encode(prompt) if as_text else np.asarray(prompt, dtype=np.int64).reshape(-1)
        _check_prompt(net.config, ids, max_new_tokens)
        if not use_cache and cache_dtype is not None:
            raise ParameterError(
                "cache_dtype", cache_dtype, "None with use_cache=False", fix="drop one of the two"
            )
        total = ids.size + max_new_tokens
        cache = make_cache(net, 1, total, cache_dtype) if use_cache else None
        tokens = self._generate_ids(
            net,
            ids,
            max_new_tokens,
            (temperature, top_k, top_p),
            np.random.default_rng(seed),
            fitted.extras.eos if stop_at_eos else None,
            cache,
        )
        return self.pipeline_.decode(tokens) if as_text else tokens

    def _generate_ids(
        self,
        net: TransformerNet,
        ids: np.ndarray,
        max_new_tokens: int,
        sampling: tuple[float, int | None, float | None],
        rng: np.random.Generator,
        eos: int | None,
        cache: KVCache | None,
    ) -> np.ndarray:
        """The prompt and its continuation, stopping after ``eos`` (None: never); without a
        ``cache`` each step reads the whole sequence again."""
        out = list(ids.tolist())
        net.eval()
        try:  # one token's products are small: BLAS's threads would only wait on each other
            with no_grad(), blas_single_thread():
                logits = net(ids[None, :], cache=cache).data[0, -1]  # (V,)
                for step in range(max_new_tokens):
                    token = choose_token(logits, rng, *sampling)
                    out.append(token)
                    if token == eos or step == max_new_tokens - 1:
                        break
                    fed = [token] if cache is not None else out  # (1,) or the whole (t,)
                    logits = net(np.array([fed]), cache=cache).data[0, -1]
        finally:
            net.train()
        return np.array(out, dtype=np.int64)

    # -- Hugging Face checkpoints -------------------------------------------------------
    @classmethod
    def from_hf(cls, directory: str | os.PathLike[str], **params: Any) -> TransformerLM:
        """The model of a Hugging Face ``GPT2LMHeadModel`` or ``LlamaForCausalLM`` folder
        (``config.json`` + ``model.safetensors``, or shards with their index), weights and
        (when readable) ``tokenizer.json``; ``params`` set training parameters (``lr``, ...)."""
        return hf_checkpoint.load_lm(cls, Path(directory), params)

    @classmethod
    def from_gguf(cls, path: str | os.PathLike[str], **params: Any) -> TransformerLM:
        """The model of a GGUF file (llama.cpp's ``llama`` or ``gpt2`` architecture), its
        tensors dequantised, its tokenizer the pipeline (:mod:`rowbook.models.language_model.gguf_checkpoint`)."""
        return gguf_checkpoint.load_gguf_lm(cls, path, params)

    def save_gguf(self, path: str | os.PathLike[str], dtype: str = "f16") -> None:
        """Write a GGUF file (matrices as ``"f32"``, ``"f16"`` or ``"q8_0"``) that llama.cpp's
        ``gguf`` reads and ``transformers`` loads (:mod:`rowbook.models.language_model.gguf_save`)."""
        gguf_save.save_gguf(self, path, dtype)

    def save_hf(self, directory: str | os.PathLike[str]) -> None:
        """Write ``config.json``, ``model.safetensors`` (and ``tokenizer.json``) that
        ``transformers`` loads with ``AutoModelForCausalLM.from_pretrained``."""
        hf_checkpoint.save_lm(self, Path(directory))
