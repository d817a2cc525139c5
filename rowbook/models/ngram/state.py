"""NGramLM's text in and state out: the pipeline, sentences as ids, the learned state
(:class:`NGramState`) and its saved tables checked.

Kept beside :mod:`rowbook.models.ngram.model` so the model reads top to bottom.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from rowbook.checks import ParameterError
from rowbook.models.ngram.tables import NGramTables
from rowbook.text import CharTokenizer, Normalizer, TextPipeline, Vocab, WordTokenizer

__all__ = [
    "BOS",
    "EOS",
    "UNK",
    "NGramState",
    "check_discounts",
    "ngram_pipeline",
    "ngram_vocab",
    "sentence_ids",
    "tables_from_state",
    "tables_to_state",
]

UNK, BOS, EOS = "<unk>", "<s>", "</s>"


@dataclass(frozen=True)
class NGramState:
    """What a fitted :class:`~rowbook.models.NGramLM` holds: the fitted ``pipeline``, the
    ``tables`` of every order, and Kneser-Ney's ``(n, 4)`` ``discounts`` (None for the other
    smoothings and for a model read from ARPA)."""

    pipeline: TextPipeline
    tables: NGramTables
    discounts: np.ndarray | None


def ngram_vocab(min_count: int = 1) -> Vocab:
    """An unfitted vocabulary numbered as KenLM numbers it: ``<unk>`` 0, ``<s>`` 1, ``</s>`` 2.

    >>> ngram_vocab().fit([["a", "b", "a"]]).itos
    ['<unk>', '<s>', '</s>', 'a', 'b']
    """
    return Vocab(min_count=min_count, pad_token=None, unk_token=UNK, bos_token=BOS, eos_token=EOS)


def _is_tokens(texts: Sequence[Any]) -> bool:
    """Whether ``texts`` are lists of tokens (else str); a mix is refused. (The tokens
    themselves are checked by :meth:`Vocab.encode <rowbook.text.Vocab.encode>`.)"""
    if isinstance(texts, str):
        raise TypeError("texts must be a list of texts, got one str; wrap it: [text]")
    if not len(texts):
        raise ValueError("texts must hold at least one text, got an empty list")
    strings = sum(isinstance(t, str) for t in texts)
    lists = sum(isinstance(t, list | tuple) for t in texts)
    if strings != len(texts) and lists != len(texts):
        raise TypeError(
            "texts must all be str (one sentence each) or all be lists of str tokens, got "
            f"items of types {sorted({type(t).__name__ for t in texts})}"
        )
    return lists == len(texts)


def ngram_pipeline(
    texts: Sequence[Any], level: str, min_count: int, normalizer: Normalizer | None
) -> TextPipeline:
    """The pipeline fitted on ``texts`` (str, or lists of tokens that skip the tokenizer)."""
    tokenizer = CharTokenizer() if level == "char" else WordTokenizer()
    vocab = ngram_vocab(min_count)
    if _is_tokens(texts):
        vocab.fit([[w for sentence in texts for w in sentence]])  # one pass, same order
        pipeline = TextPipeline(normalizer, tokenizer, vocab).fit([])
    else:
        pipeline = TextPipeline(normalizer, tokenizer, vocab).fit(texts)
    if len(pipeline.vocab_) == len(vocab.specials):
        raise ParameterError(
            "min_count",
            min_count,
            "at most the count of the most frequent token",
            fix="no token of the texts occurs that often: lower it or use more text",
        )
    return pipeline


def sentence_ids(pipeline: TextPipeline, texts: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(ids (N,), lengths (S,))``: the ids of every text, joined, and each text's length;
    the texts are tokenized by ``pipeline`` unless they are lists of tokens already."""
    tokens = texts if _is_tokens(texts) else [pipeline.tokenize(t) for t in texts]
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    return pipeline.vocab_.encode([w for sentence in tokens for w in sentence]), lengths


def check_discounts(discounts: Any, fallback: Any, n: int) -> None:
    """Refuse discounts that are not ``(D_1, D_2, D_3+)`` triples with ``0 <= D_j <= j``
    (``discounts`` may also hold one triple per order)."""
    shapes = {"discounts": [(3,), (n, 3)], "discount_fallback": [(3,)]}
    for name, value in (("discounts", discounts), ("discount_fallback", fallback)):
        if value is None:
            continue
        try:
            D = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            D = np.zeros(0)
        if D.shape not in shapes[name]:
            per_order = f" or one triple per order ({n} of them)" if name == "discounts" else ""
            raise ParameterError(name, value, f"a (D1, D2, D3+) triple{per_order}", owner="NGramLM")
        if not np.all(np.isfinite(D)) or np.any(D < 0) or np.any(D > [1, 2, 3]):
            raise ParameterError(name, value, "discounts with 0 <= D_j <= j", owner="NGramLM")


def tables_to_state(tables: NGramTables) -> dict[str, Any]:
    """The tables as the arrays of a saved model's state."""
    return {
        "keys": tables.keys,
        "counts": tables.counts,
        "log10_prob": tables.log10_prob,
        "log10_backoff": tables.log10_backoff,
    }


def tables_from_state(state: dict[str, Any], V: int, n: int, smoothing: str) -> NGramTables:
    """The tables of a saved state, every array checked against the others (a damaged or
    hand-edited file is refused with the field that is wrong)."""
    keys = _arrays(state, "keys", n, np.int64)
    for k, array in enumerate(keys, start=1):
        bound = V if k == 1 else len(keys[k - 2]) * V
        if len(array) and (np.any(np.diff(array) <= 0) or array[0] < 0 or array[-1] >= bound):
            raise ValueError(
                f"field 'state.keys[{k - 1}]' must be sorted distinct keys below {bound}"
            )
    if len(keys[0]) != V:
        raise ValueError(f"field 'state.keys[0]' must list the {V} ids of the vocabulary")
    counts = _arrays(state, "counts", n, np.int64, keys)
    log10_prob = _arrays(state, "log10_prob", n, np.float64, keys)
    log10_backoff = _arrays(state, "log10_backoff", n - 1, np.float64, keys)
    if (log10_prob is None) != (log10_backoff is None) or (
        log10_prob is None and (counts is None or smoothing == "kneser_ney")
    ):
        raise ValueError(
            "field 'state.log10_prob' / 'state.log10_backoff' must both be set for a "
            "Kneser-Ney model, and 'state.counts' for the others"
        )
    return NGramTables(V, keys, counts, log10_prob, log10_backoff)


def _arrays(
    state: dict[str, Any], field: str, length: int, dtype: Any, like: list[np.ndarray] | None = None
) -> list[np.ndarray] | None:
    value = state.get(field)
    if value is None and like is not None:
        return None
    if not isinstance(value, list) or len(value) != length:
        raise ValueError(f"field 'state.{field}' must be a list of {length} arrays")
    arrays = []
    for k, array in enumerate(value):
        ok = isinstance(array, np.ndarray) and array.ndim == 1 and array.dtype == dtype
        if not ok or (like is not None and len(array) != len(like[k])):
            raise ValueError(
                f"field 'state.{field}[{k}]' must be a 1-D {np.dtype(dtype).name} array"
                + ("" if like is None else f" of {len(like[k])} entries")
            )
        arrays.append(array)
    return arrays
