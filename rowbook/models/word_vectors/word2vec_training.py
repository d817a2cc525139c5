"""What word2vec's training starts from: initial tables, their growth, jobs and the lr schedule.

:class:`~rowbook.models.word_vectors.word2vec.Word2Vec` trains with these, and a trainer built on it
(FastText's subword tables) reuses them: the tables start as gensim 4 starts them, grow
as gensim's ``build_vocab(update=True)`` grows them, the corpus is cut into jobs of about
``batch_words`` words as gensim cuts it, and every job trains at the learning rate of
gensim's linear schedule at the point of the corpus where the job starts.
"""

from __future__ import annotations

import numpy as np

from rowbook._memory import untouched_zeros
from rowbook.data.corpus import job_boundaries
from rowbook.data.id_stream import EncodedCorpus

__all__ = [
    "grow_tables",
    "initial_rows",
    "initial_rows_where",
    "initial_tables",
    "job_lrs",
    "job_plan",
]


def initial_rows(seed: int, n_rows: int, vector_size: int) -> np.ndarray:
    """``(n_rows, d)`` float32 uniform in ``[-1/d, 1/d)``, exactly as gensim 4's ``prep_vectors``.

    The rows are drawn one after the other from one generator, so row ``i`` depends only
    on ``seed``, ``i`` and ``d``: a longer table starts with the rows of a shorter one.

    Examples
    --------
    >>> a, b = initial_rows(1, 5, 3), initial_rows(1, 2, 3)
    >>> a.shape, bool((a[:2] == b).all()), bool((abs(a) <= 1 / 3).all())
    ((5, 3), True, True)
    """
    W = np.random.default_rng(seed).random((n_rows, vector_size), dtype=np.float32)  # (V, d)
    W *= np.float32(2.0)
    W -= np.float32(1.0)
    W /= np.float32(vector_size)
    return W


def initial_rows_where(seed: int, used: np.ndarray, vector_size: int) -> np.ndarray:
    """``(n_rows, d)`` float32: row ``i`` of :func:`initial_rows` where ``used[i]``, zero elsewhere.

    The zero rows are never written, so they cost no memory until training writes them
    (:func:`rowbook._memory.untouched_zeros`): a hash table of 2M buckets of which a corpus
    uses a few hundred thousand takes only those. Drawn in blocks, from the same stream
    as one :func:`initial_rows` call.

    Examples
    --------
    >>> W = initial_rows_where(1, np.array([True, False, True]), 2)
    >>> bool((W[[0, 2]] == initial_rows(1, 3, 2)[[0, 2]]).all()), W[1].tolist()
    (True, [0.0, 0.0])
    """
    n_rows, d = len(used), vector_size
    W = untouched_zeros((n_rows, d), np.float32)  # (n_rows, d), pages taken when written
    rng, chunk = np.random.default_rng(seed), 1 << 16
    for start in range(0, n_rows, chunk):  # the same stream as one initial_rows call
        block = rng.random((min(chunk, n_rows - start), d), dtype=np.float32)  # (chunk, d)
        block *= np.float32(2.0)
        block -= np.float32(1.0)
        block /= np.float32(d)
        rows = np.flatnonzero(used[start : start + len(block)])
        W[start + rows] = block[rows]
    return W


def initial_tables(
    V: int, vector_size: int, seed: int, hierarchical_softmax: bool
) -> dict[str, np.ndarray]:
    """``W_in`` from :func:`initial_rows`; ``W_out`` ``(V, d)`` and ``W_nodes`` ``(V - 1, d)`` zero.

    ``W_nodes`` has no rows unless ``hierarchical_softmax``.
    """
    n_nodes = max(V - 1, 1) if hierarchical_softmax else 0
    return {
        "W_in": initial_rows(seed, V, vector_size),  # (V, d)
        "W_out": np.zeros((V, vector_size), dtype=np.float32),  # (V, d)
        "W_nodes": np.zeros((n_nodes, vector_size), dtype=np.float32),  # (V - 1, d)
    }


def grow_tables(tables: dict[str, np.ndarray], V: int, seed: int) -> dict[str, np.ndarray]:
    """The tables for a vocabulary grown to ``V`` words (gensim's ``update_weights``).

    Old rows are kept unchanged; the new rows of ``W_in`` are the rows a fresh table of
    ``V`` words would have there (:func:`initial_rows`, so the same seed gives the same
    new rows), the new rows of ``W_out`` and ``W_nodes`` are zero.

    Examples
    --------
    >>> t = initial_tables(3, 4, seed=1, hierarchical_softmax=True)
    >>> g = grow_tables(t, 5, seed=1)
    >>> [g[k].shape for k in ("W_in", "W_out", "W_nodes")]
    [(5, 4), (5, 4), (4, 4)]
    >>> bool((g["W_in"] == initial_rows(1, 5, 4)).all())
    True
    """
    old_V, d = tables["W_in"].shape
    W_in = np.concatenate([tables["W_in"], initial_rows(seed, V, d)[old_V:]])  # (V, d)
    W_out = np.concatenate([tables["W_out"], np.zeros((V - old_V, d), dtype=np.float32)])
    n_nodes = len(tables["W_nodes"])
    grown_nodes = max(V - 1, 1) - n_nodes if n_nodes else 0
    W_nodes = np.concatenate([tables["W_nodes"], np.zeros((grown_nodes, d), dtype=np.float32)])
    return {"W_in": W_in, "W_out": W_out, "W_nodes": W_nodes}


def job_plan(encoded: EncodedCorpus, batch_words: int) -> tuple[np.ndarray, np.ndarray]:
    """``(bounds, words_before)``: job ``j`` is sentences ``bounds[j]:bounds[j + 1]``, and
    ``words_before[j]`` corpus words (out-of-vocabulary ones included) come before it.

    Examples
    --------
    >>> from rowbook.data.corpus import read_corpus
    >>> _, enc = read_corpus([["a", "b"], ["a"], ["b", "a", "b"]])
    >>> [x.tolist() for x in job_plan(enc, batch_words=3)]
    [[0, 2, 3], [0, 3, 6]]
    """
    bounds = job_boundaries(encoded.raw_lengths, batch_words)  # (J + 1,)
    words_before = np.concatenate([[0], np.cumsum(encoded.raw_lengths)])[bounds]  # (J + 1,)
    return bounds, words_before


def job_lrs(
    lr: float, min_lr: float, epoch: int, epochs: int, words_before: np.ndarray, total_words: int
) -> np.ndarray:
    """Each job's learning rate in epoch ``epoch`` of a schedule of ``epochs`` epochs.

    Linear from ``lr`` at the start of the schedule to ``min_lr`` at its end, measured in
    corpus words, and never below ``min_lr`` (gensim's ``_get_next_alpha``).

    Examples
    --------
    >>> job_lrs(0.1, 0.0, 1, 2, np.array([0, 50]), total_words=100).tolist()
    [0.05, 0.025]
    """
    done = (epoch + words_before / max(total_words, 1)) / epochs
    return np.maximum(min_lr, lr - (lr - min_lr) * done)
