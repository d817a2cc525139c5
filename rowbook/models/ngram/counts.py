r"""N-gram counts of sentences of ids, every order at once, in NumPy.

Each sentence is framed as ``<s> w_1 ... w_m </s>`` and the framed sentences are joined
into one stream. The k-gram ending at stream position ``i`` lies inside its sentence when
``pos[i] >= k - 1`` (``pos`` counts from the sentence's ``<s>``), so a sentence gives
its k-grams that start with ``<s>`` once and no ``<s> <s>`` padding (KenLM's counts,
after its ``CollapseStream`` drops those).

Keys are built one order on the other: a unigram's rank is its id, and a k-gram's key is

    key_k = rank_{k-1}(w_1 .. w_{k-1}) * V + w_k

where ``rank_{k-1}`` is the place of the (k-1)-gram among the sorted keys of its order.
Every prefix of a counted k-gram is itself counted, so the key always exists, fits in an
int64 whatever the order (it is below ``#(k-1)-grams * V``), and sorting keys groups the
k-grams by their context (``prefix = key // V``), the layout the smoothing needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["OrderCounts", "count_ngrams", "frame_sentences", "lookup"]


@dataclass(frozen=True)
class OrderCounts:
    """The k-grams of one order, sorted by key.

    Attributes
    ----------
    keys
        ``(m,)`` int64, sorted: ``prefix * V + word``.
    counts
        ``(m,)`` int64 occurrences in the stream.
    suffix
        ``(m,)`` int64 rank of ``w_2 .. w_k`` in order k-1 (-1 for unigrams).
    at_start
        ``(m,)`` bool: the k-gram starts with ``<s>`` (it opens a sentence).
    """

    keys: np.ndarray
    counts: np.ndarray
    suffix: np.ndarray
    at_start: np.ndarray

    def prefix(self, V: int) -> np.ndarray:
        """``(m,)`` rank of each k-gram's context ``w_1 .. w_{k-1}`` in order k-1."""
        return self.keys // V


def frame_sentences(
    words: np.ndarray, lengths: np.ndarray, bos: int, eos: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, pos)``: the sentences (``words`` cut into ``lengths``) framed by ``bos`` /
    ``eos`` and joined, and each position's offset from its sentence's ``bos``.

    Examples
    --------
    >>> ids, pos = frame_sentences(np.array([5, 6, 7]), np.array([2, 1]), bos=1, eos=2)
    >>> ids.tolist(), pos.tolist()
    ([1, 5, 6, 2, 1, 7, 2], [0, 1, 2, 3, 0, 1, 2])
    """
    framed = lengths.astype(np.int64) + 2  # (S,)
    starts = np.cumsum(framed) - framed  # (S,) where each <s> goes
    ids = np.empty(int(framed.sum()), dtype=np.int64)  # (T,)
    ids[starts] = bos
    ids[starts + framed - 1] = eos
    word_starts = np.repeat(starts + 1 - (np.cumsum(lengths) - lengths), lengths)  # (N,)
    ids[word_starts + np.arange(len(words))] = words
    return ids, np.arange(len(ids), dtype=np.int64) - np.repeat(starts, framed)


def lookup(keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """The rank of each query among the sorted ``keys``, or -1 where it is absent.

    >>> lookup(np.array([3, 8, 9]), np.array([8, 4, 9, 10])).tolist()
    [1, -1, 2, -1]
    """
    if len(keys) == 0:
        return np.full(len(queries), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(keys, queries), len(keys) - 1)
    return np.where(keys[at] == queries, at, -1).astype(np.int64)


def count_ngrams(ids: np.ndarray, pos: np.ndarray, n: int, V: int, bos: int) -> list[OrderCounts]:
    """The counts of every order 1..n of a framed stream (see :func:`frame_sentences`).

    Order 1 lists every id of the vocabulary (``keys = arange(V)``), seen or not.

    Examples
    --------
    The two-sentence ``a a b a`` / ``b a a b`` corpus (ids a=3, b=4; <s>=1, </s>=2):

    >>> ids, pos = frame_sentences(np.array([3, 3, 4, 3, 4, 3, 3, 4]), np.array([4, 4]), 1, 2)
    >>> orders = count_ngrams(ids, pos, 3, V=5, bos=1)
    >>> orders[0].counts.tolist()
    [0, 2, 2, 5, 3]
    >>> [(int(k // 5), int(k % 5), int(c)) for k, c in zip(orders[1].keys, orders[1].counts)]
    [(1, 3, 1), (1, 4, 1), (3, 2, 1), (3, 3, 2), (3, 4, 2), (4, 2, 1), (4, 3, 2)]
    >>> len(orders[2].keys), orders[2].counts.tolist()
    (7, [1, 1, 2, 1, 1, 1, 1])
    """
    unigrams = OrderCounts(
        keys=np.arange(V, dtype=np.int64),
        counts=np.bincount(ids, minlength=V).astype(np.int64),
        suffix=np.full(V, -1, dtype=np.int64),
        at_start=np.arange(V) == bos,
    )
    orders, rank = [unigrams], ids  # rank of the (k-1)-gram ending at each position
    for k in range(2, n + 1):
        at = np.flatnonzero(pos >= k - 1)  # (N_k,) positions where a k-gram ends
        keys, inverse, counts = np.unique(
            rank[at - 1] * V + ids[at], return_inverse=True, return_counts=True
        )
        suffix = np.empty(len(keys), dtype=np.int64)
        suffix[inverse] = rank[at]
        at_start = np.zeros(len(keys), dtype=bool)
        at_start[inverse] = pos[at] == k - 1
        orders.append(OrderCounts(keys, counts.astype(np.int64), suffix, at_start))
        rank = np.full(len(ids), -1, dtype=np.int64)
        rank[at] = inverse
    return orders
