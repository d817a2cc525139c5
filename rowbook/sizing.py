r"""What d, V, L and T cost: parameters, bytes, optimizer state, KV cache and attention.

Counted for the decoder-only models of :mod:`rowbook.models.transformer` (GPT-2 and Llama
families), exactly as :class:`~rowbook.models.TransformerLM` allocates them (the tests hold
:func:`model_size` to it parameter for parameter and byte for byte):

* the table: ``V x d`` (``d_model``); tying the output layer to it saves another ``V x d``;
* learned positions (GPT-2): ``context x d``;
* a block: attention ``d (H + 2 H_kv) d_k + H d_k d`` (plus biases), the MLP ``2 d d_ff`` (GPT-2)
  or ``3 d d_ff`` (Llama's SwiGLU), two norms;
* the KV cache, per sequence: ``2 x L x T x H_kv x d_k x bytes``;
* attention per layer and sequence: ``4 T^2 H d_k`` FLOPs forward (``Q K^T`` and ``P V``,
  half of it with a causal mask skipped), and ``H T^2`` scores held by the plain path
  against ``H T`` log-sum-exps by the tiled one (:mod:`rowbook.nn.sdpa_tiled`).

:func:`vocab_sweep` prices the vocabulary: a larger V makes the table heavier and the
sequences shorter (fewer tokens per character), and attention cheaper with them; it trains
byte-level BPE, WordPiece or Unigram (or all three, side by side) and counts the tokens that
stand for text the vocabulary cannot spell (``[UNK]``, byte fallback).

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

import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rowbook.checks import check_choice, check_heads, check_int

__all__ = [
    "DTYPE_BYTES",
    "PRESETS",
    "SWEEP_MODELS",
    "ModelSize",
    "VocabRow",
    "default_d_ff",
    "model_size",
    "model_size_from_gguf",
    "model_size_from_hf",
    "preset",
    "vocab_sweep",
    "vocab_table",
]

#: Bytes per number of each storage type.
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "int8": 1, "float64": 8}
_FAMILIES = {
    "gpt2": {"norm": 2, "mlp": 2, "bias": True, "learned": True},
    "llama": {"norm": 1, "mlp": 3, "bias": False, "learned": False},
}


@dataclass(frozen=True)
class ModelSize:
    """The sizes of one architecture; every count is exact, in numbers (parameters) or bytes."""

    family: str
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    d_ff: int
    context: int
    tied: bool
    dtype: str
    batch: int
    bias: bool

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
        """Learned positions (GPT-2): ``context x d``; 0 for RoPE."""
        return self.context * self.d_model if _FAMILIES[self.family]["learned"] else 0

    @property
    def norm_parameters(self) -> int:
        """One norm: ``d`` gains (and ``d`` offsets for GPT-2's LayerNorm)."""
        return _FAMILIES[self.family]["norm"] * self.d_model

    @property
    def attention_parameters(self) -> int:
        """One layer's ``W_q, W_k, W_v, W_o`` (and biases)."""
        q, kv = self.n_heads * self.head_dim, self.n_kv_heads * self.head_dim
        weights = (q + 2 * kv) * self.d_model + q * self.d_model
        return weights + ((q + 2 * kv) + self.d_model if self.bias else 0)

    @property
    def mlp_parameters(self) -> int:
        """One layer's MLP: ``2 d d_ff`` (GPT-2) or ``3 d d_ff`` (SwiGLU), and biases."""
        matrices = _FAMILIES[self.family]["mlp"]
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
        return self.parameters * _width(dtype or self.dtype)

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
            * _width(dtype or self.dtype)
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
        return self.n_heads * per_head * self.batch * _width(self.dtype)

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
        rows += [(f"bytes as {d}", _size(self.bytes(d))) for d in ("float32", "bfloat16", "int8")]
        rows += [
            ("Adam moments (float32)", _size(self.adam_state_bytes)),
            ("SparseAdam, table rows / step", _size(self.sparse_step_bytes())),
        ]
        for T in lengths:
            rows += [
                (f"T={T:,}: KV cache / batch of {self.batch}", _size(self.kv_cache_bytes(T))),
                (f"T={T:,}: attention FLOPs (fwd)", f"{self.attention_flops(T):.3g}"),
                (f"T={T:,}: scores / layer, plain", _size(self.attention_bytes(T))),
                (f"T={T:,}: scores / layer, tiled", _size(self.attention_bytes(T, tiled=True))),
            ]
        width = max(len(k) for k, _ in rows)
        title = f"{self.family}: d={self.d_model}, L={self.n_layers}, V={self.vocab_size:,}, {self.dtype}"
        return "\n".join([title, *(f"{k:<{width}}  {v}" for k, v in rows)])

    def __str__(self) -> str:
        return self.table()


def default_d_ff(family: str, d_model: int) -> int:
    """GPT-2's ``4 d``; Llama's ``2/3 * 4 d`` rounded up to a multiple of 256 (Meta's rule).

    >>> default_d_ff("gpt2", 768), default_d_ff("llama", 4096)
    (3072, 11008)
    """
    if family == "gpt2":
        return 4 * d_model
    return 256 * math.ceil(int(2 * 4 * d_model / 3) / 256)


def _width(dtype: str) -> int:
    check_choice("dtype", dtype, tuple(DTYPE_BYTES), owner="model_size")
    return DTYPE_BYTES[dtype]


def _size(n: int) -> str:
    """``n`` bytes in binary units.

    >>> _size(2**31), _size(1536)
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
    check_choice("family", family, tuple(_FAMILIES), owner="model_size")
    for name, value, minimum in (
        ("vocab_size", vocab_size, 1),
        ("n_layers", n_layers, 0),
        ("context", context, 1),
        ("batch", batch, 1),
    ):
        check_int(name, value, minimum, owner="model_size")
    n_kv, head_dim = check_heads(d_model, n_heads, n_kv_heads, head_dim, "model_size")
    _width(dtype)
    return ModelSize(
        family,
        vocab_size,
        d_model,
        n_layers,
        n_heads,
        n_kv,
        head_dim,
        check_int("d_ff", d_ff, 1, owner="model_size") if d_ff else default_d_ff(family, d_model),
        context,
        bool(tied),
        dtype,
        batch,
        _FAMILIES[family]["bias"] if bias is None else bool(bias),
    )


def model_size_from_hf(
    path: str | os.PathLike[str], *, dtype: str = "float32", batch: int = 1
) -> ModelSize:
    """The :class:`ModelSize` of a Hugging Face ``config.json`` (or the folder holding it)."""
    from rowbook.models.hf_checkpoint import read_config

    settings, _ = read_config(Path(path))
    return _from_settings(settings, dtype, batch)


def model_size_from_gguf(
    path: str | os.PathLike[str], *, dtype: str = "float16", batch: int = 1
) -> ModelSize:
    """The :class:`ModelSize` of a GGUF model (llama.cpp's ``llama`` or ``gpt2``), from its
    metadata; ``dtype`` is the KV cache's (llama.cpp's default: float16). The bytes as
    stored, quantised, are the sum of its tensors' (``rowbook inspect`` prints them)."""
    from rowbook.gguf import read_gguf
    from rowbook.gguf.model import hf_config
    from rowbook.models.hf_checkpoint import config_settings

    file = read_gguf(path)
    settings, _ = config_settings(hf_config(file), file.path)
    return _from_settings(settings, dtype, batch)


def _from_settings(settings: dict[str, Any], dtype: str, batch: int) -> ModelSize:
    return model_size(
        settings["vocab_size"],
        settings["d_model"],
        settings["n_layers"],
        settings["n_heads"],
        settings.get("n_kv_heads"),
        settings["d_ff"],
        settings["context"],
        settings["tie_embeddings"],
        dtype,
        batch,
        settings["family"],
        settings.get("head_dim"),
        settings["bias"],
    )


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


@dataclass(frozen=True)
class VocabRow:
    """One vocabulary size of one scheme in :func:`vocab_sweep`.

    ``unknown_share`` is the share of held-out tokens that stand for text the vocabulary
    cannot spell: ``[UNK]`` for WordPiece, the unknown piece or a ``<0xXX>`` byte piece for
    Unigram, and for byte-level BPE a token whose bytes are not whole UTF-8 characters.
    """

    vocab_size: int
    tokens_per_char: float
    table_parameters: int
    table_bytes: int
    sequence_length: int
    attention_flops: int
    model: str = "bpe"
    unknown_share: float = 0.0


#: The schemes :func:`vocab_sweep` trains, and the smallest vocabulary each can have.
SWEEP_MODELS = {"bpe": 257, "wordpiece": 6, "unigram": 2}
SweepModel = Literal["bpe", "wordpiece", "unigram"]


def vocab_sweep(
    texts: Any,
    sizes: Sequence[int],
    *,
    model: SweepModel | Sequence[SweepModel] = "bpe",
    held_out: Any = None,
    val_fraction: float = 0.1,
    d_model: int = 768,
    dtype: str = "float32",
    characters: int = 4096,
    seed: int = 0,
    workers: int | None = None,
) -> list[VocabRow]:
    """For each scheme and vocabulary size: tokens per character of held-out text, the share
    of unknown or byte-fallback tokens, the table's size, and the length and attention cost
    of ``characters`` characters of such text.

    ``model`` names the scheme, or several to compare (the rows come scheme by scheme):

    * ``"bpe"``: one byte-level BPE is trained on ``texts`` up to the largest size; a smaller
      vocabulary is its first merges (:meth:`~rowbook.text.ByteLevelBPE.truncated`: a run
      that stopped there would have learned exactly those);
    * ``"wordpiece"`` (BERT's normalizer and specials, ``min_count=0``) and ``"unigram"``
      (Metaspace words, ``<unk>``): the words are counted once, then one tokenizer is
      trained at each size from the counts.

    ``texts`` is a list, or a path whose lines are the texts. ``held_out`` texts (default:
    ``val_fraction`` of ``texts``, drawn with ``seed`` and left out of training) are encoded
    by each, without template tokens. The table is ``V x d_model`` numbers of ``dtype``;
    attention FLOPs are one layer's forward ``4 T^2 d_model`` for a sequence of
    ``T = characters x tokens per character`` tokens. Sizes past what the text supports
    are reported at the size reached (once). ``workers`` processes count the words
    (``None``: one per CPU).

    Examples
    --------
    >>> texts = ["the cat sat on the mat", "the dog sat on the log"] * 20
    >>> rows = vocab_sweep(texts, [260, 280], held_out=["the cat sat on the log"], d_model=4)
    >>> [(r.vocab_size, round(r.tokens_per_char, 3), r.table_parameters) for r in rows]
    [(260, 0.727, 1040), (274, 0.273, 1096)]
    >>> rows = vocab_sweep(texts, [30, 40], model="wordpiece", held_out=["a cow sat"], d_model=4)
    >>> [(r.model, r.vocab_size, round(r.unknown_share, 3)) for r in rows]  # "cow": one [UNK]
    [('wordpiece', 30, 0.333), ('wordpiece', 34, 0.333)]
    """
    from rowbook.corpus_files import read_texts
    from rowbook.training import hold_out

    models = [model] if isinstance(model, str) else list(model)
    if not models:
        raise ValueError("vocab_sweep: model is empty; give 'bpe', 'wordpiece' or 'unigram'")
    for name in models:
        check_choice("model", name, tuple(SWEEP_MODELS), owner="vocab_sweep")
    least = max(SWEEP_MODELS[name] for name in models)
    sizes = sorted({check_int("sizes", n, least, owner="vocab_sweep") for n in sizes})
    if not sizes:
        raise ValueError("vocab_sweep: sizes is empty; give the vocabulary sizes to compare")
    check_int("d_model", d_model, 1, owner="vocab_sweep")
    check_int("characters", characters, 1, owner="vocab_sweep")
    width = _width(dtype)
    texts = read_texts(texts, "texts")
    if held_out is None:
        texts, held_out = hold_out(texts, val_fraction, seed)
    held_out = read_texts(held_out or [], "held_out")
    chars = max(sum(len(t) for t in held_out), 1)
    rows = []
    for name in models:
        for tokenizer in _sweep_tokenizers(name, texts, sizes, workers):
            ids = _held_out_ids(tokenizer, held_out)
            unknown = np.isin(ids, np.array(sorted(_unknown_ids(tokenizer)), dtype=np.int64))
            rate = ids.size / chars
            T = max(1, round(characters * rate))
            V = len(tokenizer)
            rows.append(
                VocabRow(
                    vocab_size=V,
                    tokens_per_char=rate,
                    table_parameters=V * d_model,
                    table_bytes=V * d_model * width,
                    sequence_length=T,
                    attention_flops=4 * T * T * d_model,
                    model=name,
                    unknown_share=float(unknown.mean()) if ids.size else 0.0,
                )
            )
    return rows


def _sweep_tokenizers(
    name: str, texts: list[str], sizes: list[int], workers: int | None
) -> Iterator[Any]:
    """The tokenizers of one scheme at each size (each size reached once)."""
    from rowbook.text import ByteLevelBPE, Unigram, WordPiece
    from rowbook.text.word_counts import count_words

    if name == "bpe":
        from rowbook.text.bpe.bytelevel import END_OF_TEXT

        bpe = ByteLevelBPE().fit(texts, sizes[-1], special_tokens=[END_OF_TEXT], workers=workers)
        for size in dict.fromkeys(min(n, len(bpe)) for n in sizes):
            yield bpe.truncated(size)
        return
    cls = WordPiece if name == "wordpiece" else Unigram
    options = {"min_count": 0} if name == "wordpiece" else {"special_tokens": ["<unk>"]}
    counts = count_words(texts, cls()._training_words, workers=workers)
    reached = set()
    for size in sizes:
        tokenizer = cls().fit((), size, word_counts=counts, **options)
        if len(tokenizer) not in reached:
            reached.add(len(tokenizer))
            yield tokenizer


def _held_out_ids(tokenizer: Any, held_out: list[str]) -> np.ndarray:
    """The ids of the held-out texts, one array, without template tokens."""
    from rowbook.text import ByteLevelBPE

    if isinstance(tokenizer, ByteLevelBPE):
        encodings = tokenizer.encode_batch(held_out, workers=1)
    else:
        encodings = tokenizer.encode_batch(held_out, add_special_tokens=False, workers=1)
    return np.array([i for e in encodings for i in e.ids], dtype=np.int64)  # (N,)


def _unknown_ids(tokenizer: Any) -> set[int]:
    """Ids that spell text the vocabulary could not (for byte-level BPE: partial characters)."""
    from rowbook.text import ByteLevelBPE, Unigram, WordPiece
    from rowbook.text.unigram.model import BYTE_PIECES

    if isinstance(tokenizer, WordPiece):
        return {tokenizer._unk_id} - {-1}
    if isinstance(tokenizer, Unigram):
        ids = {tokenizer.vocab[b] for b in BYTE_PIECES if b in tokenizer.vocab}
        return ids | ({tokenizer.unk_id} if tokenizer.unk_id is not None else set())
    if isinstance(tokenizer, ByteLevelBPE):
        partial = set()
        for i, spelled in enumerate(tokenizer._id_bytes):
            try:
                spelled.decode("utf-8")
            except UnicodeDecodeError:
                partial.add(i)
        return partial
    return set()


def vocab_table(rows: Sequence[VocabRow], characters: int = 4096) -> str:
    """:func:`vocab_sweep`'s rows as aligned text."""
    header = (
        "model",
        "V",
        "tokens/char",
        "unknown %",
        "table params",
        "table bytes",
        f"T ({characters:,} chars)",
        "attention FLOPs/layer",
    )
    lines = [
        (
            r.model,
            f"{r.vocab_size:,}",
            f"{r.tokens_per_char:.4f}",
            f"{100 * r.unknown_share:.3f}",
            f"{r.table_parameters:,}",
            _size(r.table_bytes).split(" (")[0],
            f"{r.sequence_length:,}",
            f"{r.attention_flops:.3g}",
        )
        for r in rows
    ]
    widths = [max(len(x) for x in column) for column in zip(header, *lines, strict=True)]
    return "\n".join(
        "  ".join(
            x.ljust(w) if k == 0 else x.rjust(w)
            for k, (x, w) in enumerate(zip(line, widths, strict=True))
        )
        for line in [header, *lines]
    )
