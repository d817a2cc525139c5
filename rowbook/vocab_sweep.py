"""Vocabulary sweeps: what a larger V buys (shorter sequences) and costs (a heavier table).

:func:`vocab_sweep` trains byte-level BPE, WordPiece or Unigram (or all three, side by side)
at each size, encodes held-out text, and prices each row with :mod:`rowbook.sizing`: the
table's parameters and bytes, the sequence length of a fixed amount of text and the
attention it costs; it also counts the tokens that stand for text the vocabulary cannot
spell (``[UNK]``, byte fallback). :func:`vocab_table` prints the rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from rowbook.checks import check_choice, check_int
from rowbook.sizing import dtype_bytes, format_bytes

__all__ = ["SWEEP_MODELS", "VocabRow", "vocab_sweep", "vocab_table"]


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
    (``None``: one per core the process may use).

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
    width = dtype_bytes(dtype)
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
            format_bytes(r.table_bytes).split(" (")[0],
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
