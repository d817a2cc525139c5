"""Choosing the vocabulary of a counted corpus: which words, in which order, how many.

:func:`rowbook.data.read_corpus` counts a corpus's words in one scan; this module decides
what to keep, with the rules gensim 4 follows (``Word2Vec.build_vocab``):

* words with ``count >= min_count`` are kept;
* they are ordered by descending count; ties go to the word whose (last) first sighting
  came *later*, which is what gensim's ``sort_by_descending_frequency`` does; GloVe's
  ``vocab_count`` breaks ties alphabetically instead (``ties="alphabetical"``);
* :func:`truncate_vocab` keeps the ``n`` most frequent (GloVe's ``max_vocab``) and drops
  the others from the id stream.

:func:`vocab_from_counts` applies the same rules to counts made elsewhere (on Dask, by
shards), so a vocabulary chosen from them is the one a scan would choose.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rowbook.data import id_stream
from rowbook.data.id_stream import EncodedCorpus
from rowbook.data.spill_folder import SpillFolder

__all__ = ["CountedVocab", "truncate_vocab", "vocab_from_counts", "vocab_order"]


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


def vocab_order(
    keys: Sequence[str], ids: np.ndarray, counts: np.ndarray, ties: str = "gensim"
) -> np.ndarray:
    """The positions of ``ids`` in vocabulary order: descending ``counts`` (``counts[i]`` is
    the count of ``ids[i]``), ties by later first sighting (gensim) or by key
    (``"alphabetical"``). An id is the rank of a word's first sighting; ``keys[id]`` spells it.

    Examples
    --------
    >>> keys = ["a", "b", "c"]
    >>> vocab_order(keys, np.arange(3), np.array([2, 2, 5])).tolist()
    [2, 1, 0]
    >>> vocab_order(keys, np.arange(3), np.array([2, 2, 5]), "alphabetical").tolist()
    [2, 0, 1]
    >>> vocab_order(keys, np.array([2, 1]), np.array([2, 2]), "alphabetical").tolist()  # b, c
    [1, 0]
    """
    if ties == "alphabetical":
        return np.array(
            sorted(range(len(ids)), key=lambda i: (-counts[i], keys[ids[i]])), dtype=np.int64
        )
    return np.lexsort((-ids, -counts))  # gensim: descending count, later first sighting first


def vocab_from_counts(
    word_counts: Mapping[str, int],
    *,
    min_count: int = 1,
    ties: Literal["gensim", "alphabetical"] = "gensim",
    corpus_count: int = 0,
) -> CountedVocab:
    """The vocabulary :func:`read_corpus` would choose, from counts made elsewhere.

    ``word_counts`` must be in first-sighting order (a ``Counter`` filled in corpus order,
    or per-shard counters added in shard order) for gensim's tie rule to come out the same;
    ``max_vocab_size`` pruning happens during a scan and has no equivalent here (nor in
    gensim's ``build_vocab_from_freq``).

    Examples
    --------
    >>> vocab_from_counts({"a": 3, "b": 2, "c": 2, "d": 1}, min_count=2).keys
    ('a', 'c', 'b')
    """
    keys = list(word_counts)
    counts = np.fromiter((word_counts[k] for k in keys), dtype=np.int64, count=len(keys))
    if len(counts) and counts.min() < 0:
        raise ValueError(
            f"word counts must be >= 0, got {keys[int(counts.argmin())]!r}: {counts.min()}"
        )
    kept = np.flatnonzero(counts >= min_count)
    kept = kept[vocab_order(keys, kept, counts[kept], ties)]
    return CountedVocab(tuple(keys[i] for i in kept), counts[kept], int(counts.sum()), corpus_count)


def truncate_vocab(
    vocab: CountedVocab, corpus: EncodedCorpus, n: int
) -> tuple[CountedVocab, EncodedCorpus]:
    """Keep only the ``n`` most frequent words (ids ``< n``) and drop the others from the text.

    Examples
    --------
    >>> from rowbook.data import read_corpus
    >>> vocab, enc = read_corpus([["a", "b", "a", "c"]])
    >>> small, enc2 = truncate_vocab(vocab, enc, 1)
    >>> small.keys, enc2.ids.tolist(), enc2.starts.tolist()
    (('a',), [0, 0], [0, 2])
    """
    small = CountedVocab(vocab.keys[:n], vocab.counts[:n], vocab.total_words, vocab.corpus_count)
    if corpus.id_file is not None:  # block by block into a new id file: the ids stay on disk
        return small, _truncate_spilled(corpus, len(vocab.keys), n)
    keep = corpus.ids < n
    kept_before = np.concatenate([[0], np.cumsum(keep)]).astype(np.int64)
    return small, EncodedCorpus(corpus.ids[keep], kept_before[corpus.starts], corpus.raw_lengths)


def _truncate_spilled(corpus: EncodedCorpus, V: int, n: int) -> EncodedCorpus:
    """:func:`truncate_vocab`'s corpus from a spilled one of ``V`` words, block by block into a
    new id file in the same ``spill_dir``."""
    folder = SpillFolder(corpus.id_file.spill.parent, "ids")
    remap = np.where(np.arange(V) < n, np.arange(V), -1).astype(np.int32)  # (V,)
    pieces = np.diff(corpus.starts)  # (P,) ids of each sentence piece
    id_file, kept = id_stream.remap_to_file(corpus.id_file.blocks(), remap, pieces, folder)
    starts = np.concatenate([[0], np.cumsum(kept)]).astype(np.int64)  # (P + 1,)
    return EncodedCorpus(id_file.ids, starts, corpus.raw_lengths, id_file)
