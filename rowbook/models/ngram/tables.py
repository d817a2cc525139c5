r"""What a fitted n-gram model holds, and the scoring of many predictions at once.

:class:`NGramTables` keeps, for every order k = 1..n, the sorted keys of
:mod:`rowbook.models.ngram.counts` and either the counts (add-k and maximum likelihood
read their probabilities off them) or a backoff model's log10 probabilities and
backoff weights (Kneser-Ney, or whatever built an ARPA file).

Predictions are scored in windows: a window is a row of n ids, the n-1 context ids then
the predicted id, with -1 where the context is shorter (the sentence starts there, with
``<s>``). The rank of every k-gram ending in every column is looked up one order on the
other (:func:`window_ranks`), and then

* a **backoff model** (ARPA semantics, as KenLM's query code reads them) uses the
  longest k-gram that ends with the predicted word and was seen, plus the backoff weights
  of the longer contexts that were not extended:
  ``log p(w | c) = log p(w | c)`` if ``c w`` was seen, else ``log b(c) + log p(w | c')``,
  with ``log b(c) = 0`` for a context that was never seen;
* **add-k** (Lidstone; k = 1 is Laplace) uses the whole context:
  ``p(w | c) = (C(c w) + k) / (sum_x C(c x) + k V)``, and ``k = 0`` is the maximum
  likelihood estimate (0 for an unseen context, as ``nltk.lm.MLE`` gives).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rowbook.models.ngram.counts import lookup

__all__ = ["NGramTables", "addk_log10", "backoff_log10", "window_ranks"]


@dataclass(frozen=True)
class NGramTables:
    """The learned tables of an n-gram model (every list has one entry per order 1..n).

    Attributes
    ----------
    V
        the vocabulary size (ids ``0 .. V-1``).
    keys
        ``(m_k,)`` int64 sorted keys ``rank_{k-1}(context) * V + word``.
    counts
        ``(m_k,)`` int64 counts, or None (a model read from an ARPA file).
    log10_prob
        ``(m_k,)`` float64 log10 probabilities of a backoff model, or None.
    log10_backoff
        ``(m_k,)`` float64 log10 backoff weights of orders 1..n-1, or None.
    """

    V: int
    keys: list[np.ndarray]
    counts: list[np.ndarray] | None = None
    log10_prob: list[np.ndarray] | None = None
    log10_backoff: list[np.ndarray] | None = None

    @property
    def n(self) -> int:
        """The order of the model."""
        return len(self.keys)

    def sizes(self) -> list[int]:
        """How many k-grams each order holds."""
        return [len(k) for k in self.keys]


def window_ranks(keys: list[np.ndarray], V: int, W: np.ndarray) -> list[np.ndarray]:
    """``ranks[k-1][:, p]``: the rank of the k-gram ending in column ``p`` of every window,
    -1 where it was not seen or runs past the start of the context.

    Examples
    --------
    >>> keys = [np.arange(4), np.array([1 * 4 + 2, 2 * 4 + 3])]  # bigrams (1, 2), (2, 3)
    >>> ranks = window_ranks(keys, 4, np.array([[1, 2], [2, 3], [-1, 3], [3, 2]]))
    >>> ranks[1][:, 1].tolist()
    [0, 1, -1, -1]
    """
    ranks = [np.where(W >= 0, W, -1)]  # (N, L): a unigram's rank is its id
    for k in range(2, len(keys) + 1):
        prev, r = ranks[-1], np.full(W.shape, -1, dtype=np.int64)
        ok = (prev[:, :-1] >= 0) & (W[:, 1:] >= 0)
        r[:, 1:][ok] = lookup(keys[k - 1], prev[:, :-1][ok] * V + W[:, 1:][ok])
        ranks.append(r)
    return ranks


def backoff_log10(tables: NGramTables, W: np.ndarray) -> np.ndarray:
    """``(N,)`` log10 p(last id | context) of every window under the backoff model."""
    ranks, last = window_ranks(tables.keys, tables.V, W), W.shape[1] - 1
    log_p = tables.log10_prob[0][W[:, last]]  # (N,)
    log_b = np.zeros(len(W))  # backoff weights of the contexts not extended so far
    for k in range(2, tables.n + 1):
        found = ranks[k - 1][:, last]
        context = ranks[k - 2][:, last - 1]
        log_p = np.where(found >= 0, tables.log10_prob[k - 1][found], log_p)
        weight = np.where(context >= 0, tables.log10_backoff[k - 2][context], 0.0)
        log_b = np.where(found >= 0, 0.0, log_b + weight)
    return log_p + log_b


def context_totals(tables: NGramTables, bos: int) -> list[np.ndarray]:
    """``totals[k-1][r]``: ``sum_x C(c x)`` over the k-grams whose context has rank ``r``
    in order k-1 (one total for order 1: every token but ``<s>``)."""
    counts = tables.counts
    totals = [np.array([counts[0].sum() - counts[0][bos]], dtype=np.float64)]
    for k in range(2, tables.n + 1):
        prefix = tables.keys[k - 1] // tables.V
        totals.append(np.bincount(prefix, weights=counts[k - 1], minlength=len(tables.keys[k - 2])))
    return totals


def addk_log10(tables: NGramTables, W: np.ndarray, k: float, bos: int) -> np.ndarray:
    """``(N,)`` log10 of add-k's ``(C(c w) + k) / (sum_x C(c x) + k V)`` for every window,
    with the whole context (``-inf`` where ``k = 0`` and the count is 0)."""
    ranks, last = window_ranks(tables.keys, tables.V, W), W.shape[1] - 1
    order = 1 + (W[:, :last] >= 0).sum(axis=1)  # (N,) the context is all of the window
    totals = context_totals(tables, bos)
    count, total = np.zeros(len(W)), np.zeros(len(W))
    for j in range(1, tables.n + 1):
        rows = np.flatnonzero(order == j)
        found = ranks[j - 1][rows, last]
        count[rows] = np.where(found >= 0, tables.counts[j - 1][np.maximum(found, 0)], 0)
        if j == 1:
            total[rows] = totals[0][0]
        else:
            context = ranks[j - 2][rows, last - 1]
            total[rows] = np.where(context >= 0, totals[j - 1][np.maximum(context, 0)], 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = (count + k) / (total + k * tables.V)
        return np.log10(np.where(np.isnan(p), 0.0, p))
