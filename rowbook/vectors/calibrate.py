"""Search settings chosen from the recall asked for, measured against the exact scan.

An approximate search trades answers for speed through one knob: HNSW's ``ef_search``
(candidates kept while walking the graph), IVF's ``nprobe`` (cells scanned), a quantised
table's ``rerank`` (best code-scored rows re-scored exactly). The knob that is enough on one
table is not on another: a default chosen on one shape of neighbourhoods gave recall@10
0.975 there and 0.854 on clustered rows with noise. So the knob is measured instead of
assumed, on the table itself, at build time:

1. draw ``QUERIES`` rows of the table (seeded) and find each one's ``K`` true neighbours by
   the exact scan (:func:`exact_neighbours`, the row itself left out); an index is measured
   on rows it does not hold yet (:func:`held_out_rows`: a held row is an easier query), a
   quantised table's re-ranking on its own rows (the codes hold every row anyway);
2. try the knob's values from cheap to dear (:func:`choose_setting`) and keep the first whose
   recall@K reaches the target with a margin: the mean over the queries minus two standard
   errors (:func:`lower_bound`), so that a sample of a few hundred queries that happens to be
   easy does not choose a setting that misses the target on the next queries;
3. when no value reaches it before the search computes about as many distances as the exact
   scan (``near_exhaustive``), the search is not worth having: the caller answers exactly.

These are functions over arrays and callables. :func:`calibrate_search` is steps 2 and 3
over a search callable, the recall held to the exact scan: :mod:`rowbook.vectors.index`
calls it twice, for queries by vector (rows held out of the index) and for queries by key
(rows searched from their own node); the quantised tables
(:mod:`rowbook.vectors.quantize.table`) choose their pool with :func:`calibrate_rerank`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np

from rowbook.checks import check_number
from rowbook.vectors.neighbors import top_k_rows

__all__ = [
    "QUERIES",
    "RECALL",
    "Calibration",
    "K",
    "calibrate_rerank",
    "calibrate_search",
    "check_recall",
    "choose_rerank",
    "choose_setting",
    "exact_neighbours",
    "held_out_rows",
    "lower_bound",
    "neighbour_ranks",
    "recall_per_query",
]

#: The recall@K asked for by default.
RECALL = 0.95
#: Neighbours per query the recall counts (recall@10).
K = 10
#: Rows drawn as calibration queries (fewer in a small table: see :func:`held_out_rows`).
QUERIES = 1000
_SCORES_PER_BLOCK = 1 << 24  # exact scores held at once: 64 MB of float32


def check_recall(recall: Any, *, allow_none: bool = True) -> float | None:
    """``recall`` as a float in (0, 1], or None (a fixed setting) when allowed.

    >>> check_recall(0.95), check_recall(None)
    (0.95, None)
    """
    return check_number("recall", recall, 0.0, 1.0, low_open=True, allow_none=allow_none)


def held_out_rows(rows: int, seed: int = 0, queries: int = QUERIES) -> np.ndarray:
    """The rows that query an index built without them: ``queries`` distinct rows drawn
    at random (seeded), in increasing order; a tenth of a smaller table (at least one).

    A row the index holds is an easier query than a new one (an HNSW walk ends at the row
    itself, among the links chosen for it): measured on 50,000 clustered rows, recall@10
    0.967 for the rows' own queries where held-out queries got 0.918. So the calibration
    queries are left out of the index until it has been measured.

    >>> held_out_rows(20).tolist(), len(held_out_rows(100_000))
    ([12, 16], 1000)
    """
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(rows, max(1, min(queries, rows // 10)), replace=False))


def exact_neighbours(
    score: Callable[[np.ndarray], np.ndarray], queries: np.ndarray, rows: np.ndarray, k: int = K
) -> np.ndarray:
    """The ``k`` best rows of the exact scan for each query, the query's own row left out.

    ``score(block)`` gives the scores (b, V) of a block of queries (b, d) against every row;
    ``rows`` (Q,) are the queries' own rows (-1 for a query that is not a row).

    Examples
    --------
    >>> unit = np.eye(3, dtype=np.float32) + 0.1
    >>> exact_neighbours(lambda q: q @ unit.T, unit[:2], np.array([0, 1]), k=1).tolist()
    [[1], [0]]
    """
    truth = []
    block = max(1, _SCORES_PER_BLOCK // max(1, score(queries[:1]).shape[1]))
    for start in range(0, len(queries), block):
        scores = np.array(score(queries[start : start + block]), dtype=np.float32)  # (b, V)
        own = rows[start : start + block]
        mine = own >= 0
        scores[np.flatnonzero(mine), own[mine]] = -np.inf
        truth.append(top_k_rows(scores, k))  # (b, k)
    return np.concatenate(truth)  # (Q, k)


def recall_per_query(found: Sequence[np.ndarray], truth: np.ndarray) -> np.ndarray:
    """The share of each query's true neighbours (Q, k) among the rows found for it (Q,).

    >>> recall_per_query([np.array([1, 2]), np.array([3, 9])], np.array([[2, 1], [3, 4]]))
    array([1. , 0.5])
    """
    return np.array(
        [np.isin(t, f).mean() for f, t in zip(found, truth, strict=True)], dtype=np.float64
    )


def lower_bound(per_query: np.ndarray) -> float:
    """The mean recall minus two standard errors: what a setting is held to.

    >>> round(lower_bound(np.array([1.0, 0.9, 1.0, 0.9])), 4)
    0.8923
    """
    if len(per_query) < 2:
        return float(np.mean(per_query))
    spread = float(np.std(per_query, ddof=1)) / math.sqrt(len(per_query))
    return float(np.mean(per_query)) - 2.0 * spread


@dataclass(frozen=True)
class Calibration:
    """What a calibration chose and measured, kept with the index (and saved with it).

    Attributes
    ----------
    target : float
        The recall@10 asked for.
    recall : float
        The mean recall@10 measured at the chosen setting (1.0 when answering exactly).
    queries : int
        Rows of the table used as queries.
    setting : str
        The knob: ``"ef_search"``, ``"nprobe"`` or ``"rerank"``.
    value : int
        Its chosen value.
    exact : bool
        No value reached the target before the search cost about as much as the exact
        scan: queries are answered by the exact scan.
    seconds : float
        Time the measurement took.
    key_value : int or None
        HNSW: the ``ef_search`` of a query by key (a row of the table, its search started
        at the row's own node), measured on other rows of the table as such queries
        (never wider than ``value``); None for IVF, the exact scan, and files saved before
        it (their queries by key use ``value``).
    key_recall : float or None
        The mean recall@10 of those queries at ``key_value``.
    """

    target: float
    recall: float
    queries: int
    setting: str
    value: int
    exact: bool
    seconds: float
    key_value: int | None = None
    key_recall: float | None = None

    def __str__(self) -> str:
        chosen = (
            "the target needs a near-exhaustive search: answering exactly (recall 1.0, "
            "no faster than the exact scan; ask for a lower recall for speed)"
            if self.exact
            else f"{self.setting}={self.value}, recall@{K} {self.recall:.3f}"
        )
        if self.key_value is not None:
            chosen += (
                f"; queries by key (from their own row) {self.setting}={self.key_value}, "
                f"recall@{K} {self.key_recall:.3f}"
            )
        return (
            f"calibrated for recall@{K} >= {self.target:g} on {self.queries} queries "
            f"against the exact scan ({self.seconds:.1f} s): {chosen}"
        )

    def to_dict(self) -> dict[str, Any]:
        """The fields, for a file."""
        return asdict(self)

    @classmethod
    def from_dict(cls, record: Mapping[str, Any], where: str) -> Calibration:
        """The calibration a file holds, every field checked (``where`` names the file);
        a file saved before queries by key had their own setting lacks ``key_value`` and
        ``key_recall`` (None)."""
        kinds = {"target": float, "recall": float, "queries": int, "setting": str}
        kinds |= {"value": int, "exact": bool, "seconds": float}
        kinds |= {"key_value": int, "key_recall": float}
        required = [field.name for field in fields(cls) if field.default is not None]
        if (
            not isinstance(record, Mapping)
            or not set(required) <= set(record)
            or not set(record) <= set(kinds)
        ):
            raise ValueError(f"{where}: the calibration must hold the fields {', '.join(kinds)}")
        for name, kind in kinds.items():
            value = record.get(name)
            if value is None and name not in required:
                continue
            numeric = kind is float and isinstance(value, int)
            fits = (isinstance(value, kind) or numeric) and (kind is bool) == isinstance(
                value, bool
            )
            if not fits or (kind is int and value < 0):
                raise ValueError(
                    f"{where}: calibration field {name!r} is {value!r}, not a {kind.__name__}"
                )
        return cls(**record)


def choose_setting(
    measure: Callable[[int], tuple[np.ndarray, float]],
    values: Sequence[int],
    target: float,
    near_exhaustive: float,
) -> tuple[int, np.ndarray, bool]:
    """The first of ``values`` (cheap to dear) whose recall reaches ``target``.

    ``measure(value)`` searches the calibration queries at that value and gives their recall
    (Q,) and the share of the rows whose distance a query computed. Returns ``(value,
    recall, exact)``: ``exact`` when a value reached ``near_exhaustive`` (that share) before
    the target, the search being then no cheaper than the exact scan.

    Examples
    --------
    >>> table = {1: 0.80, 2: 0.90, 4: 0.97, 8: 0.99}
    >>> measure = lambda v: (np.full(100, table[v]), v / 100)
    >>> choose_setting(measure, [1, 2, 4, 8], 0.95, 0.5)[0]
    4
    >>> choose_setting(measure, [1, 2, 4, 8], 0.995, 0.05)[2]
    True
    """
    recall = np.zeros(0)
    for value in values:
        recall, share = measure(value)
        if share >= near_exhaustive:
            return value, recall, True
        if lower_bound(recall) >= target:
            return value, recall, False
    return values[-1], recall, lower_bound(recall) < target


def calibrate_search(
    search: Callable[[np.ndarray, int], tuple[Sequence[np.ndarray], float]],
    data: np.ndarray,
    asked: np.ndarray,
    values: Sequence[int],
    target: float,
    near_exhaustive: float,
    *,
    absent: np.ndarray | None = None,
    settle: int | None = None,
) -> tuple[int, np.ndarray, bool, float]:
    """The search setting for ``target``: :func:`choose_setting` over the ladder ``values``
    (cheap to dear), the rows ``asked`` (Q,) of ``data`` (V, d) the queries, their recall
    held to the exact scan of ``data`` (each query's own row left out, and the rows
    ``absent`` from the index searched).

    ``search(queries, value)`` searches the queries (Q, d) at that value and gives the rows
    found for each and the share of the rows whose distance a query computed. ``settle``:
    a search kept approximate whatever it costs (queries by key, held to the setting of
    queries by vector); when the value chosen falls short of ``target``, ``settle`` is
    measured and taken instead, and ``exact`` is False. Returns ``(value, recall (Q,),
    exact, share)``: :func:`choose_setting`'s, and the share at ``value``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> unit = rng.standard_normal((100, 8)).astype(np.float32)
    >>> unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    >>> ranked = np.argsort(-(unit @ unit.T), axis=1)[:, 1:]  # (V, V - 1) others, best first
    >>> asked = np.arange(0, 100, 10)  # (10,)
    >>> def search(queries, value):  # finds the ``value`` best rows, computes value / V
    ...     return [ranked[row, :value] for row in asked], value / 100
    >>> calibrate_search(search, unit, asked, [5, 10, 20], 0.95, 0.5)[::2]
    (10, False)
    >>> calibrate_search(search, unit, asked, [5, 10, 20], 0.95, 0.05)[::2]
    (5, True)
    >>> calibrate_search(search, unit, asked, [5, 10, 20], 0.95, 0.05, settle=20)[::2]
    (20, False)
    """
    queries = data[asked]  # (Q, d)

    def exact_scores(block: np.ndarray) -> np.ndarray:
        scores = block @ data.T  # (b, V)
        if absent is not None:
            scores[:, absent] = -np.inf
        return scores

    truth = exact_neighbours(exact_scores, queries, asked)  # (Q, K)
    shares: dict[int, float] = {}  # value -> share of the rows a query computed

    def measure(value: int) -> tuple[np.ndarray, float]:
        found, shares[value] = search(queries, value)
        return recall_per_query(found, truth), shares[value]

    value, recall, exact = choose_setting(measure, values, target, near_exhaustive)
    if settle is not None:
        if lower_bound(recall) < target:  # no narrower search is enough
            value, recall = settle, measure(settle)[0]
        exact = False
    return value, recall, exact, shares[value]


def neighbour_ranks(scores: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Where each true neighbour stands among estimated scores: the number of rows scored
    above it (0: first). ``scores`` (b, V) are the estimates, ``truth`` (b, k) the rows.

    >>> neighbour_ranks(np.array([[0.9, 0.2, 0.5, 0.7]]), np.array([[3, 1]])).tolist()
    [[1, 3]]
    """
    ranks = np.empty(truth.shape, dtype=np.int64)  # (b, k)
    for i, (row, wanted) in enumerate(zip(scores, truth, strict=True)):
        ranks[i] = (row[None, :] > row[wanted][:, None]).sum(axis=1)
    return ranks


def choose_rerank(ranks: np.ndarray, target: float, rows: int) -> tuple[int, np.ndarray, bool]:
    """The fewest best-estimated rows to re-score exactly so that recall@k reaches ``target``.

    A pool of ``P`` rows holds a true neighbour when fewer than ``P`` rows are scored above
    it (``ranks`` (Q, k), :func:`neighbour_ranks`); re-scored exactly, the true neighbours
    in the pool come first, so recall is the share of ranks below ``P``. Returns ``(P,
    recall (Q,), exact)``, ``exact`` when ``P`` would be every row.

    >>> choose_rerank(np.array([[0, 1], [2, 3]]), 0.9, 100)[0]
    4
    """
    pools = np.unique(np.concatenate([[ranks.shape[1]], ranks.ravel() + 1]))
    low, high = 0, len(pools) - 1  # the smallest pool that is enough: recall grows with P
    while low < high:
        middle = (low + high) // 2
        if lower_bound((ranks < pools[middle]).mean(axis=1)) >= target:
            high = middle
        else:
            low = middle + 1
    pool = int(pools[low])
    return min(pool, rows), (ranks < pool).mean(axis=1), pool >= rows


def calibrate_rerank(
    estimated: Callable[[np.ndarray], np.ndarray],
    exact: Callable[[np.ndarray], np.ndarray],
    unit_rows: Callable[[np.ndarray], np.ndarray],
    rows: int,
    target: float,
    seed: int = 0,
) -> Calibration:
    """The ``rerank`` pool for ``target``: ``QUERIES`` rows of the table (``unit_rows(ids)``
    gives their exact unit rows) ask the estimated scan (``estimated(queries)`` (b, V), the
    codes' scores) and the exact one (``exact``); the pool is :func:`choose_rerank`'s.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> unit = rng.standard_normal((500, 8)).astype(np.float32)
    >>> unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    >>> noisy = unit + 0.05 * rng.standard_normal(unit.shape).astype(np.float32)
    >>> chosen = calibrate_rerank(lambda q: q @ noisy.T, lambda q: q @ unit.T,
    ...                           lambda ids: unit[ids], 500, 0.95)
    >>> chosen.setting, 10 < chosen.value < 500, chosen.recall >= 0.95
    ('rerank', True, True)
    """
    start = time.perf_counter()
    ids = np.sort(np.random.default_rng(seed).choice(rows, min(QUERIES, rows), replace=False))
    asked = np.ascontiguousarray(unit_rows(ids), dtype=np.float32)  # (Q, d)
    truth = exact_neighbours(exact, asked, ids, min(K, rows - 1))  # (Q, K)
    block = max(1, _SCORES_PER_BLOCK // rows)
    ranks = np.concatenate(
        [
            neighbour_ranks(estimated(asked[s : s + block]), truth[s : s + block])
            for s in range(0, len(ids), block)
        ]
    )  # (Q, K)
    pool, recall, everything = choose_rerank(ranks, target, rows)
    seconds = time.perf_counter() - start
    return Calibration(target, float(recall.mean()), len(ids), "rerank", pool, everything, seconds)
