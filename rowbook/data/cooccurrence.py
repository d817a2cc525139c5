"""GloVe's co-occurrence counts: ``X[i, j]`` sums ``1 / distance`` over the window.

Following the reference ``cooccur.c`` (Pennington et al. 2014): for each word of a line
(out-of-vocabulary words already removed, so windows span over them) and each word ``k``
positions to its left with ``1 <= k <= window``, the pair (left word, word) gains
``1 / k`` (or 1 without distance weighting); with ``symmetric=True`` the reversed pair
gains the same, so ``X`` is symmetric and a word's right context counts too. Windows do
not cross lines. A word next to itself adds to the diagonal, twice when symmetric.

Counting is memory-aware: the pairs of a block of ``block_tokens`` tokens are generated
by a numba kernel, summed into a ``scipy.sparse`` matrix (duplicates add up), and
blocks are added together, so memory is the final matrix plus one block of pairs
(``block_tokens * window * 2`` triples).
"""

from __future__ import annotations

import numba
import numpy as np
import scipy.sparse as sp

from rowbook.data.corpus import EncodedCorpus

__all__ = ["cooccurrence_matrix", "cooccurrence_pairs_reference"]


@numba.njit(nogil=True, cache=True)
def _block_pairs(ids, starts, s0, s1, window, symmetric, weighted, rows, cols, vals):  # pragma: no cover
    n = 0
    for s in range(s0, s1):
        for j in range(starts[s], starts[s + 1]):
            lo = max(starts[s], j - window)
            for k in range(j - 1, lo - 1, -1):
                v = 1.0 / (j - k) if weighted else 1.0
                rows[n], cols[n], vals[n] = ids[k], ids[j], v
                n += 1
                if symmetric:
                    rows[n], cols[n], vals[n] = ids[j], ids[k], v
                    n += 1
    return n


def cooccurrence_pairs_reference(
    sentences: list[list[int]], window: int, *, symmetric: bool = True, weighted: bool = True
) -> dict[tuple[int, int], float]:
    """The definition, pair by pair, in plain Python (what the tests hold the kernel to).

    Examples
    --------
    >>> cooccurrence_pairs_reference([[0, 1, 2]], window=2)
    {(0, 1): 1.0, (1, 0): 1.0, (1, 2): 1.0, (2, 1): 1.0, (0, 2): 0.5, (2, 0): 0.5}
    """
    counts: dict[tuple[int, int], float] = {}
    for sentence in sentences:
        for j, word in enumerate(sentence):
            for k in range(j - 1, max(0, j - window) - 1, -1):
                v = 1.0 / (j - k) if weighted else 1.0
                pairs = [(sentence[k], word), (word, sentence[k])] if symmetric else [(sentence[k], word)]
                for pair in pairs:
                    counts[pair] = counts.get(pair, 0.0) + v
    return counts


def cooccurrence_matrix(
    corpus: EncodedCorpus,
    vocab_size: int,
    window: int,
    *,
    symmetric: bool = True,
    weighted: bool = True,
    block_tokens: int = 1 << 18,
) -> sp.csr_matrix:
    """``(V, V)`` float64 CSR matrix of window co-occurrences of an encoded corpus.

    Examples
    --------
    >>> from rowbook.data.corpus import read_corpus
    >>> _, enc = read_corpus([["a", "b", "c"]])
    >>> cooccurrence_matrix(enc, 3, window=2).toarray()
    array([[0. , 1. , 0.5],
           [1. , 0. , 1. ],
           [0.5, 1. , 0. ]])
    """
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    total = sp.csr_matrix((vocab_size, vocab_size), dtype=np.float64)
    per_token = window * (2 if symmetric else 1)
    s, n_sent = 0, corpus.n_sentences
    while s < n_sent:
        e = _block_end(corpus.starts, s, block_tokens)
        size = int(corpus.starts[e] - corpus.starts[s]) * per_token
        rows, cols = np.empty(size, np.int32), np.empty(size, np.int32)  # (P,)
        vals = np.empty(size, np.float64)
        n = _block_pairs(corpus.ids, corpus.starts, s, e, window, symmetric, weighted, rows, cols, vals)
        block = sp.coo_matrix((vals[:n], (rows[:n], cols[:n])), shape=(vocab_size, vocab_size))
        total = total + block.tocsr()  # tocsr sums duplicate pairs
        s = e
    total.sum_duplicates()
    return total


def _block_end(starts: np.ndarray, s: int, block_tokens: int) -> int:
    """First sentence after ``s`` once at least ``block_tokens`` tokens are covered."""
    e = int(np.searchsorted(starts, starts[s] + block_tokens, side="left"))
    return min(max(e, s + 1), len(starts) - 1)
