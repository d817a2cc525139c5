"""Read a corpus once: count words, choose the vocabulary, and keep the text as word ids.

A corpus is either an iterable of token lists (``[["the", "cat"], ...]``, re-iterable or
a one-shot generator) or a path to a text file read line by line, one sentence per line,
split on whitespace unless a ``tokenizer`` (any ``str -> list[str]`` callable, or an object
with a ``tokenize`` method such as a ``TextPipeline``) is given.

:func:`read_corpus` makes a single pass. Every token is interned to a provisional id, so
the text is held as 4 bytes per token instead of as strings; counts come from a
``bincount`` of those ids. The vocabulary then follows gensim 4 (``Word2Vec.build_vocab``):

* ``max_vocab_size`` caps the number of distinct words *during* the scan: whenever it is
  exceeded, words seen fewer than ``k`` times are forgotten (``k = 1, 2, ...`` on
  successive prunes), and a forgotten word that comes back starts counting from zero;
* words with ``count >= min_count`` are kept;
* they are ordered by descending count; ties go to the word whose (last) first sighting
  came *later*, which is what gensim's ``sort_by_descending_frequency`` does; GloVe's
  ``vocab_count`` breaks ties alphabetically instead (``ties="alphabetical"``).

Out-of-vocabulary words are then dropped from the id stream, so windows span over them
(word2vec.c, gensim and GloVe all do this), and sentences longer than
``max_sentence_length`` in-vocabulary words are cut into pieces (gensim silently drops
the words after the 10,000th).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

__all__ = [
    "Corpus",
    "CountedVocab",
    "EncodedCorpus",
    "encode_corpus",
    "iter_sentences",
    "job_boundaries",
    "read_corpus",
    "truncate_vocab",
]

Corpus = Iterable[Sequence[str]] | str | os.PathLike

MAX_SENTENCE_LENGTH = 10_000


@dataclass(frozen=True, eq=False)
class CountedVocab:
    """Words in id order (descending count) with their corpus counts.

    ``total_words`` counts every token read, in or out of the vocabulary;
    ``corpus_count`` the sentences (lines).
    """

    keys: tuple[str, ...]
    counts: np.ndarray  # (V,) int64
    total_words: int
    corpus_count: int

    def __len__(self) -> int:
        return len(self.keys)


@dataclass(frozen=True, eq=False)
class EncodedCorpus:
    """The corpus as in-vocabulary word ids, sentence by sentence.

    Sentence ``s`` is ``ids[starts[s]:starts[s + 1]]``; ``raw_lengths[s]`` is how many
    tokens it had before out-of-vocabulary words were dropped (what learning-rate decay
    and words-per-second are measured in, as in gensim).
    """

    ids: np.ndarray  # (N,) int32
    starts: np.ndarray  # (S + 1,) int64
    raw_lengths: np.ndarray  # (S,) int64

    @property
    def n_sentences(self) -> int:
        return len(self.raw_lengths)

    @property
    def total_words(self) -> int:
        return int(self.raw_lengths.sum())


def _tokenize_with(tokenizer: Any) -> Callable[[str], list[str]]:
    if tokenizer is None:
        return str.split
    if hasattr(tokenizer, "tokenize"):
        return tokenizer.tokenize
    if callable(tokenizer):
        return tokenizer
    raise TypeError(
        f"tokenizer must be None, a callable str -> list[str] or have a tokenize method, "
        f"got {type(tokenizer).__name__}"
    )


def iter_sentences(corpus: Corpus, tokenizer: Any = None) -> Iterator[Sequence[str]]:
    """Yield the sentences (token lists) of ``corpus``; a path is read line by line.

    >>> list(iter_sentences([["a", "b"], ("c",)]))
    [['a', 'b'], ('c',)]
    """
    if isinstance(corpus, str | os.PathLike):
        path = Path(corpus)
        if not path.is_file():
            raise FileNotFoundError(
                f"corpus {str(corpus)!r} is not a file; pass a path to a text file or an "
                "iterable of token lists"
            )
        tokenize = _tokenize_with(tokenizer)
        with open(path, encoding="utf-8") as f:
            for line in f:
                yield tokenize(line)
        return
    if isinstance(corpus, bytes) or not isinstance(corpus, Iterable):
        raise TypeError(
            f"corpus must be a path or an iterable of token lists, got {type(corpus).__name__}"
        )
    for number, sentence in enumerate(corpus):
        if isinstance(sentence, str | bytes):
            raise TypeError(
                f"corpus item {number} is a {type(sentence).__name__}, not a list of tokens; "
                "split it first (e.g. [line.split() for line in lines]) or pass a file path"
            )
        yield sentence


class _Interner(dict):
    """``interner[key]`` is the key's id, assigning the next id to a new key."""

    def __missing__(self, key: str) -> int:
        index = self[key] = len(self.keys_in_order)
        self.keys_in_order.append(key)
        return index

    def __init__(self) -> None:
        super().__init__()
        self.keys_in_order: list[str] = []


def _bincount_since(raw_ids: array, start: int, size: int) -> np.ndarray:
    """Counts of the provisional ids appended since ``start`` (the buffer view dies here)."""
    fresh = np.frombuffer(raw_ids, dtype=np.int32)[start:] if len(raw_ids) else np.zeros(0, np.int32)
    return np.bincount(fresh, minlength=size).astype(np.int64)


def _scan(sentences: Iterable[Sequence[str]], max_vocab_size: int | None):
    """Intern every token; prune like gensim whenever the live vocabulary is too big.

    Returns the provisional keys, the (N,) provisional ids, the (S,) sentence lengths,
    the ids still live at the end, and the counts by provisional id.
    """
    interner, raw_ids, lengths = _Interner(), array("i"), array("q")
    counts = np.zeros(0, dtype=np.int64)  # by provisional id, for tokens before counted_upto
    counted_upto, min_reduce = 0, 1
    for sentence in sentences:
        raw_ids.extend(map(interner.__getitem__, sentence))
        lengths.append(len(sentence))
        if max_vocab_size and len(interner) > max_vocab_size:
            counts = _with_fresh(counts, raw_ids, counted_upto, len(interner.keys_in_order))
            counted_upto = len(raw_ids)
            for key in [k for k, i in interner.items() if counts[i] < min_reduce]:
                del interner[key]
            min_reduce += 1
    counts = _with_fresh(counts, raw_ids, counted_upto, len(interner.keys_in_order))
    ids = np.array(raw_ids, dtype=np.int32)
    live = np.fromiter(interner.values(), dtype=np.int64, count=len(interner))
    return interner.keys_in_order, ids, np.array(lengths, dtype=np.int64), live, counts


def _with_fresh(counts: np.ndarray, raw_ids: array, start: int, size: int) -> np.ndarray:
    total = _bincount_since(raw_ids, start, size)
    total[: len(counts)] += counts
    return total


def _order(keys: Sequence[str], ids: np.ndarray, counts: np.ndarray, ties: str) -> np.ndarray:
    if ties == "alphabetical":
        return np.array(sorted(range(len(ids)), key=lambda i: (-counts[i], keys[i])), dtype=np.int64)
    return np.lexsort((-ids, -counts))  # gensim: descending count, later first sighting first


def read_corpus(
    corpus: Corpus,
    *,
    min_count: int = 1,
    max_vocab_size: int | None = None,
    tokenizer: Any = None,
    ties: Literal["gensim", "alphabetical"] = "gensim",
    max_sentence_length: int = MAX_SENTENCE_LENGTH,
) -> tuple[CountedVocab, EncodedCorpus]:
    """Scan ``corpus`` once; return its vocabulary and its in-vocabulary id stream.

    >>> vocab, enc = read_corpus([["a", "b", "a"], ["c", "a", "b"]], min_count=2)
    >>> vocab.keys, vocab.counts.tolist(), vocab.total_words
    (('a', 'b'), [3, 2], 6)
    >>> enc.ids.tolist(), enc.starts.tolist(), enc.raw_lengths.tolist()
    ([0, 1, 0, 0, 1], [0, 3, 5], [3, 3])
    """
    keys, raw, lengths, live, counts = _scan(iter_sentences(corpus, tokenizer), max_vocab_size)
    live_counts = counts[live]
    kept = live[live_counts >= min_count]
    kept = kept[_order(keys, kept, counts[kept], ties)]
    vocab_keys = tuple(keys[i] for i in kept)
    vocab = CountedVocab(vocab_keys, counts[kept].astype(np.int64), int(lengths.sum()), len(lengths))
    remap = np.full(len(keys), -1, dtype=np.int32)
    remap[kept] = np.arange(len(kept), dtype=np.int32)
    if len(live) < len(keys):  # forgotten ids of words that came back map by their key
        index = dict(zip(vocab_keys, range(len(kept)), strict=True))
        dead = np.setdiff1d(np.arange(len(keys)), live)
        remap[dead] = [index.get(keys[i], -1) for i in dead]
    return vocab, _encode(remap[raw] if len(raw) else raw, lengths, max_sentence_length)


def encode_corpus(
    corpus: Corpus,
    keys: Sequence[str],
    *,
    tokenizer: Any = None,
    max_sentence_length: int = MAX_SENTENCE_LENGTH,
) -> EncodedCorpus:
    """The id stream of ``corpus`` over a vocabulary already chosen (``keys`` in id order).

    Words not in ``keys`` are dropped as :func:`read_corpus` drops out-of-vocabulary words,
    so encoding a corpus with the vocabulary ``read_corpus`` chose for it gives the same ids.

    >>> enc = encode_corpus([["a", "x", "b"], ["b"]], ("b", "a"))
    >>> enc.ids.tolist(), enc.starts.tolist(), enc.raw_lengths.tolist()
    ([1, 0, 0], [0, 2, 3], [3, 1])
    """
    scanned, raw, lengths, _, _ = _scan(iter_sentences(corpus, tokenizer), None)
    index = {key: i for i, key in enumerate(keys)}
    remap = np.array([index.get(key, -1) for key in scanned], dtype=np.int32)
    return _encode(remap[raw] if len(raw) else raw, lengths, max_sentence_length)


def _encode(mapped: np.ndarray, lengths: np.ndarray, max_len: int) -> EncodedCorpus:
    """Drop out-of-vocabulary ids (-1) and cut sentences longer than ``max_len``."""
    keep = mapped >= 0
    raw_starts = np.concatenate([[0], np.cumsum(lengths)])
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    kept_per_sentence = kept_before[raw_starts[1:]] - kept_before[raw_starts[:-1]]
    pieces = np.maximum(1, -(-kept_per_sentence // max_len))  # ceil, at least one piece
    piece_len = np.repeat(kept_per_sentence, pieces)
    first = np.concatenate([[0], np.cumsum(pieces)])[:-1]
    offset_in = np.arange(len(piece_len)) - np.repeat(first, pieces)
    piece_len = np.minimum(piece_len - offset_in * max_len, max_len)
    raw_piece = np.where(offset_in == 0, np.repeat(lengths, pieces), 0)  # raw count on 1st piece
    starts = np.concatenate([[0], np.cumsum(piece_len)]).astype(np.int64)
    return EncodedCorpus(mapped[keep].astype(np.int32), starts, raw_piece.astype(np.int64))


def job_boundaries(raw_lengths: np.ndarray, batch_words: int = MAX_SENTENCE_LENGTH) -> np.ndarray:
    """Split sentences into jobs of at most ``batch_words`` tokens, greedily, as gensim does.

    Returns sentence indices ``b`` such that job ``j`` is sentences ``[b[j], b[j + 1])``;
    a sentence longer than ``batch_words`` is a job of its own.

    >>> job_boundaries(np.array([4, 4, 4, 9, 1]), batch_words=8).tolist()
    [0, 2, 3, 4, 5]
    """
    bounds, size = [0], 0
    for s, length in enumerate(raw_lengths.tolist()):
        if size + length > batch_words and s > bounds[-1]:
            bounds.append(s)
            size = 0
        size += length
    if len(raw_lengths) > bounds[-1]:
        bounds.append(len(raw_lengths))
    return np.array(bounds, dtype=np.int64)


def truncate_vocab(vocab: CountedVocab, corpus: EncodedCorpus, n: int) -> tuple[CountedVocab, EncodedCorpus]:
    """Keep only the ``n`` most frequent words (ids ``< n``) and drop the others from the text.

    >>> vocab, enc = read_corpus([["a", "b", "a", "c"]])
    >>> small, enc2 = truncate_vocab(vocab, enc, 1)
    >>> small.keys, enc2.ids.tolist(), enc2.starts.tolist()
    (('a',), [0, 0], [0, 2])
    """
    keep = corpus.ids < n
    kept_before = np.concatenate([[0], np.cumsum(keep)]).astype(np.int64)
    small = CountedVocab(vocab.keys[:n], vocab.counts[:n], vocab.total_words, vocab.corpus_count)
    return small, EncodedCorpus(corpus.ids[keep], kept_before[corpus.starts], corpus.raw_lengths)
