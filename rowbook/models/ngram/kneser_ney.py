r"""Interpolated modified Kneser-Ney, built the way KenLM's ``lmplz`` builds it.

Chen & Goodman (1998), as KenLM implements it (``lm/builder/adjust_counts.cc``,
``initial_probabilities.cc``, ``interpolate.cc``):

1. **Adjusted counts** ``a``. The highest order keeps its counts. A lower-order n-gram
   that opens a sentence (``<s> ...``) keeps its count too, since nothing can stand left
   of ``<s>``; any other lower-order n-gram ``g`` counts its distinct left extensions,
   ``a(g) = N_{1+}(. g)``, the continuation count. The unigram ``<s>`` has ``a = 0``.
2. **Discounts** per order from the count-of-counts ``n_j`` (n-grams with ``a = j``),
   Chen & Goodman's eq. (26): ``Y = n_1 / (n_1 + 2 n_2)``,
   ``D_j = j - (j + 1) Y n_{j+1} / n_j`` for j = 1, 2, 3 (3 stands for 3+). They fail
   without singletons, doubletons or tripletons (small or artificial data); a fallback
   ``(D_1, D_2, D_3+)`` is then used where given (``lmplz --discount_fallback``).
3. **Initial probabilities** within each context ``c``:
   ``u(w | c) = (a(c w) - D(a(c w))) / sum_x a(c x)`` and the mass left over,
   ``gamma(c) = sum_j D_j N_j(c .) / sum_x a(c x)``.
4. **Interpolation** with the next lower order, from unigrams up:
   ``p(w | c) = u(w | c) + gamma(c) p(w | c')`` with ``c'`` the context without its first
   word, and for unigrams ``p(w) = u(w) + gamma() / |V \ {<s>}|`` (the uniform
   distribution over the vocabulary, ``<unk>`` included, ``<s>`` not). ``p(<s>) = 1``:
   ``<s>`` is never predicted. ``<unk>`` is a zeroton unless it was counted.

The backoff weight of a context is its ``gamma`` (1 where the n-gram has no extension),
so the tables are an ARPA backoff model: an n-gram that was seen has probability
``p``, one that was not backs off, ``p(w | c) = gamma(c) p(w | c')``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rowbook.models.ngram.counts import OrderCounts

__all__ = [
    "DiscountError",
    "adjusted_counts",
    "count_of_counts",
    "discounts_from_counts",
    "kneser_ney_tables",
]


class DiscountError(ValueError):
    """Modified Kneser-Ney cannot estimate an order's discounts from its count-of-counts."""


def adjusted_counts(orders: Sequence[OrderCounts], bos: int) -> list[np.ndarray]:
    """The adjusted counts ``a`` of every order (step 1 of the module docstring)."""
    adjusted = []
    for k, order in enumerate(orders[:-1]):
        continuation = np.bincount(orders[k + 1].suffix, minlength=len(order.keys))
        a = np.where(order.at_start, order.counts, continuation).astype(np.int64)
        if k == 0:
            a[bos] = 0
        adjusted.append(a)
    highest = orders[-1].counts.copy()
    if len(orders) == 1:
        highest[bos] = 0
    return [*adjusted, highest]


def count_of_counts(a: np.ndarray) -> np.ndarray:
    """``n_0 .. n_4``: how many n-grams have adjusted count 0, 1, 2, 3, 4.

    >>> count_of_counts(np.array([1, 1, 2, 3, 7, 4, 1])).tolist()
    [0, 3, 1, 1, 1]
    """
    return np.bincount(np.minimum(a, 5), minlength=6)[:5]


def discounts_from_counts(n: np.ndarray, order: int) -> np.ndarray:
    """``[0, D_1, D_2, D_3+]`` from the count-of-counts ``n`` (Chen & Goodman eq. 26).

    Examples
    --------
    >>> discounts_from_counts(np.array([0, 10, 4, 2, 1]), order=2).round(4).tolist()
    [0.0, 0.5556, 1.1667, 1.8889]
    """
    for j in (1, 2, 3):
        if n[j] == 0:
            raise DiscountError(
                f"modified Kneser-Ney cannot estimate the {order}-gram discounts: no "
                f"{order}-gram has adjusted count {j} (count-of-counts n1..n4 = "
                f"{n[1:].tolist()}), which happens on small or artificial data; use more "
                "text, or set discount_fallback, e.g. (0.5, 1.0, 1.5), as lmplz's "
                "--discount_fallback does"
            )
    Y = n[1] / (n[1] + 2.0 * n[2])
    D = np.array([0.0] + [j - (j + 1) * Y * n[j + 1] / n[j] for j in (1, 2, 3)])
    if np.any(D[1:] < 0) or np.any(D[1:] > [1, 2, 3]):
        raise DiscountError(
            f"the {order}-gram discounts D1, D2, D3+ = {D[1:].round(4).tolist()} are out of "
            f"range (0 <= D_j <= j), from count-of-counts n1..n4 = {n[1:].tolist()}; use more "
            "text, or set discount_fallback, e.g. (0.5, 1.0, 1.5)"
        )
    return D


def _discounts(
    adjusted: list[np.ndarray],
    fixed: np.ndarray | None,
    fallback: Sequence[float] | None,
) -> np.ndarray:
    """``(n, 4)``: each order's ``[0, D_1, D_2, D_3+]``, fixed, estimated, or the fallback."""
    if fixed is not None:
        return np.asarray(fixed, dtype=np.float64)
    rows = []
    for k, a in enumerate(adjusted, start=1):
        try:
            rows.append(discounts_from_counts(count_of_counts(a), k))
        except DiscountError:
            if fallback is None:
                raise
            rows.append(np.array([0.0, *fallback]))
    return np.array(rows)


def kneser_ney_tables(
    orders: Sequence[OrderCounts],
    V: int,
    bos: int,
    *,
    discounts: np.ndarray | None = None,
    fallback: Sequence[float] | None = None,
) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray]:
    """``(probs, backoffs, discounts)``: each order's interpolated probabilities (``(m_k,)``,
    aligned with ``orders[k].keys``), each lower order's backoff weights ``gamma`` (1 where
    the n-gram is no context), and the ``(n, 4)`` discounts used.

    ``discounts`` (``(n, 4)``) fixes them instead of estimating them; ``fallback``
    ``(D_1, D_2, D_3+)`` replaces an order's estimate that fails.
    """
    adjusted = adjusted_counts(orders, bos)
    D = _discounts(adjusted, discounts, fallback)
    probs: list[np.ndarray] = []
    backoffs: list[np.ndarray] = []
    lower = None
    for k, (order, a) in enumerate(zip(orders, adjusted, strict=True)):
        context = order.prefix(V) if k else np.zeros(len(a), dtype=np.int64)
        n_contexts = len(orders[k - 1].keys) if k else 1
        cut = D[k][np.minimum(a, 3)]  # (m_k,) D(a), 0 where a = 0
        total = np.bincount(context, weights=a, minlength=n_contexts)  # (contexts,)
        left = np.bincount(context, weights=cut, minlength=n_contexts)
        seen = total > 0
        gamma = np.divide(left, total, out=np.zeros(n_contexts), where=seen)
        u = (a - cut) / np.where(seen, total, 1.0)[context]
        if k == 0:
            p = u + gamma[0] / (V - 1)  # uniform over the vocabulary without <s>
            p[bos] = 1.0
        else:
            p = u + gamma[context] * lower[order.suffix]
            backoffs.append(np.where(seen, gamma, 1.0))
        probs.append(p)
        lower = p
    return probs, backoffs, D
