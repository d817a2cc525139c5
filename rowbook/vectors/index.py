"""Approximate nearest neighbors: a faiss index over a table's unit rows.

One file over 400 lines on purpose: the index, its build with the calibration that can
rebuild it denser, its save and its queries are one object's life, read together. What a
calibration measures (the ladder of settings walked cheap to dear, the lower bound, the
recall held to the exact scan) is :func:`rowbook.vectors.calibrate.calibrate_search`, which
the index calls twice, with its search by vector and its search by key.

An exact query scans every row (``U @ q``, V x d multiply-adds); past a few hundred
thousand rows that is tens of milliseconds. An index finds candidates without the scan;
rowbook then re-scores the candidates exactly, so the scores returned are the true
cosines and only the *choice* of neighbors is approximate. Two kinds, both on faiss
(``pip install rowbook[ann]``), inner product on unit rows = cosine:

* ``"hnsw"`` (Malkov & Yashunin 2018): a navigable graph; slow to build (minutes per
  million rows on two cores), fastest to query, no training. ``M`` links per node,
  ``ef_search`` candidates kept while searching (higher: better recall, slower).
* ``"ivf"``: k-means cells (``nlist``, default ``sqrt(V)``), a query scans the
  ``nprobe`` nearest cells. Builds in seconds; ``nprobe == nlist`` is an exact scan.

With no kind given, :meth:`VectorIndex.build` picks one and its settings from the
table's size (:func:`default_settings`; the reasons are in that method's docstring).

faiss was chosen over hnswlib (no wheel for this platform: it compiles from source) and
usearch after measuring the three on 200,000 clustered 100-d unit vectors (build with one
thread, recall@10 against the exact scan): faiss HNSW 1.000 recall, 0.49 ms per query,
usearch HNSW 1.000, 1.25 ms, the exact scan 12.4 ms (a shared, busy machine; the benchmark
in ``benchmarks/bench_index.py`` measures 1M rows).

An HNSW graph stores its rows in the order a breadth-first walk of its bottom layer reaches
them, so that a search's hops read nearby memory (:mod:`rowbook.vectors.graph_order`); the
index maps them back, and queries, answers and files speak of table rows only.

Index files are faiss's own format, written and read by faiss. They are a cache of the
vectors, not a data format: load only index files you made (``Vectors.load`` never loads
one by itself; :meth:`VectorIndex.load` checks the row count and dimension against the
vectors it is attached to).
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rowbook._memory import on_huge_pages
from rowbook._progress import ProgressBar
from rowbook.checks import check_choice, check_finite, check_int
from rowbook.vectors import calibrate
from rowbook.vectors.calibrate import RECALL, Calibration, check_recall
from rowbook.vectors.graph_order import bfs_order
from rowbook.vectors.index_file import read_index_file, write_index_file

__all__ = [
    "ADD_ROWS",
    "DENSER",
    "HNSW_FROM",
    "NEAR_EXHAUSTIVE",
    "REBUILD_ROWS",
    "ApproximateAnswer",
    "IndexKind",
    "VectorIndex",
    "default_settings",
]

IndexKind = Literal["hnsw", "ivf"]


def _settings(rows: int, kind: IndexKind | None, given: dict[str, Any]) -> dict[str, Any]:
    """The settings of a build: :func:`default_settings` for ``rows`` (and ``kind``), each
    one ``given`` (not None) put over its default after its check."""
    if kind is not None:
        check_choice("kind", kind, ("hnsw", "ivf"))
    settings = default_settings(rows, kind)
    for name, value in given.items():
        if value is not None:
            check_int(name, value, 1)
            if name in settings:
                settings[name] = value
    return settings


def _empty_index(faiss: Any, settings: dict[str, Any], data: np.ndarray, seed: int) -> Any:
    """The faiss index ``settings`` describe, trained on ``data`` (IVF's k-means), no rows yet."""
    rows, dim = data.shape
    if settings["kind"] == "hnsw":
        index = faiss.IndexHNSWFlat(dim, settings["M"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings["ef_construction"]
        return index
    cells = min(rows, settings["nlist"])
    index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, cells, faiss.METRIC_INNER_PRODUCT)
    index.cp.seed = seed
    index.cp.min_points_per_centroid = 1  # small tables: no warning printed on stderr
    index.cp.max_points_per_centroid = 64  # k-means on a sample: seconds, not minutes
    index.train(data)
    return index


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        raise ImportError(
            "approximate neighbors need faiss: pip install 'rowbook[ann]' (faiss-cpu)"
        ) from None
    return faiss


#: Rows added to an index at a time: the progress bar's step.
ADD_ROWS = 1 << 15
#: Tables at least this long get an HNSW graph by default; shorter ones an IVF index.
HNSW_FROM = 100_000
#: The denser graph :meth:`VectorIndex.build` builds instead of its default one when the
#: calibration finds the default maps the rows poorly (:meth:`VectorIndex._maps_poorly`).
DENSER = {"M": 48, "ef_construction": 256}
#: Tables up to this many rows get the denser graph when they need it; it takes about ten
#: times the default graph's build (10 minutes a million rows on 2 idle cores): the
#: budget is 20 minutes.
REBUILD_ROWS = 2_000_000
_REBUILDING = (
    "its queries need a wider search than the graph was built with: building a denser "
    "graph (M={M}, ef_construction={ef_construction}; this one took {seconds:.0f} s, that "
    "one takes about ten times as long)"
)
_NOT_REBUILT = (
    "its queries need a wider search than the graph was built with; a denser graph "
    "(build_index('hnsw', M={M}, ef_construction={ef_construction})) needs less, but takes "
    "about ten times the build, past the budget above {rows:,} rows"
)
#: The share of the rows a query computes distances to at which the index is taken to be no
#: faster than the exact scan (one BLAS pass over every row): HNSW reaches rows at random,
#: one at a time, several times the cost of a row of the scan; IVF scans its cells' rows in
#: runs. (Estimates from those costs, not measured thresholds.)
NEAR_EXHAUSTIVE = {"hnsw": 0.1, "ivf": 0.5}


def default_settings(rows: int, kind: IndexKind | None = None) -> dict[str, Any]:
    """The kind (unless given) and settings :meth:`VectorIndex.build` chooses for ``rows``
    rows (see its docstring for why).

    Examples
    --------
    >>> default_settings(20_000)
    {'kind': 'ivf', 'nlist': 141, 'nprobe': 8}
    >>> default_settings(1_000_000)
    {'kind': 'hnsw', 'M': 16, 'ef_construction': 64, 'ef_search': 32}
    """
    kind = kind or ("ivf" if rows < HNSW_FROM else "hnsw")
    if kind == "ivf":
        return {"kind": "ivf", "nlist": max(1, round(math.sqrt(rows))), "nprobe": 8}
    return {"kind": "hnsw", "M": 16, "ef_construction": 64, "ef_search": 32}


def _stored_rows(faiss: Any, index: Any) -> tuple[Any, np.ndarray | None]:
    """A loaded faiss index and the table row of each stored row: an ``IndexIDMap``'s inner
    index and its ids (a graph saved in its search order), or ``index`` itself and None
    (table order: every file saved before the search order, and every IVF index)."""
    if not isinstance(index, faiss.IndexIDMap):
        return index, None
    inner = faiss.downcast_index(index.index)
    inner.referenced_objects = [index]  # the IDMap owns the index: kept while it is used
    return inner, faiss.vector_to_array(index.id_map)  # (V,) int64


def _each_row_once(order: np.ndarray, rows: int) -> bool:
    """``order`` holds the rows 0 to ``rows - 1``, each once.

    >>> _each_row_once(np.array([2, 0, 1]), 3), _each_row_once(np.array([2, 2, 1]), 3)
    (True, False)
    """
    if len(order) != rows or (rows and (order.min() < 0 or order.max() >= rows)):
        return False
    return bool((np.bincount(order, minlength=rows) == 1).all())


class ApproximateAnswer(list):
    """The answer of an approximate query: a list (of ``(key, cosine)`` pairs, or of such
    lists for a batch), as the exact query returns, that also says what the index was
    built for.

    Attributes
    ----------
    recall : float or None
        The recall@10 the index measured when it was built for queries of this kind
        (:attr:`VectorIndex.recall`, or :attr:`VectorIndex.key_recall` for queries by key;
        None for an index built with a fixed setting, ``recall=None``).
    exact : bool
        The index answers by the exact scan (its target needed a near-exhaustive search).

    Examples
    --------
    >>> answer = ApproximateAnswer([("queen", 0.99)], None)
    >>> answer == [("queen", 0.99)], answer.recall
    (True, None)
    """

    def __init__(self, pairs: list, index: VectorIndex | None, by_key: bool = False) -> None:
        super().__init__(pairs)
        self.recall = None if index is None else index.key_recall if by_key else index.recall
        self.exact = False if index is None else index.exact


class VectorIndex:
    """An approximate nearest-neighbour index over ``(V, d)`` unit rows.

    Build it with :meth:`build` (or ``Vectors.build_index``); :meth:`search` returns the
    row ids of candidates, best first (:meth:`search_batch`, for many queries at once).
    The tuning knobs can be changed after building (``index.ef_search = 256``,
    ``index.nprobe = 64``).

    Examples
    --------
    >>> unit = np.eye(4, dtype=np.float32)
    >>> index = VectorIndex.build(unit, kind="ivf", nlist=2, nprobe=2)
    >>> index.search(unit[2], 1).tolist()
    [2]
    """

    def __init__(
        self,
        faiss_index: Any,
        kind: IndexKind,
        rows: int,
        dim: int,
        calibration: Calibration | None = None,
        order: np.ndarray | None = None,
    ) -> None:
        self._index, self.kind, self.rows, self.dim = faiss_index, kind, rows, dim
        self._ptr = _faiss().swig_ptr
        self._searched = faiss_index  # the exact scan instead, when calibration says so
        self.calibration = calibration
        self._key_search = None  # faiss's parameters of a search by key (None: ef_search)
        if calibration is not None and calibration.key_value is not None and kind == "hnsw":
            self._search_keys_at(calibration.key_value)
        self._stored_order(order)
        if calibration is not None and calibration.exact:
            self._answer_exactly()

    def _stored_order(self, order: np.ndarray | None) -> None:
        """Where the rows are stored: ``order`` (V,) is the table row of each stored row
        (None: in table order). faiss answers with stored rows, a query by key starts at
        its row's stored one."""
        self._order = order  # (V,) stored row -> table row
        self._node = None  # (V,) int32 table row -> stored row
        if order is not None:
            self._node = np.empty(len(order), dtype=np.int32)
            self._node[order] = np.arange(len(order), dtype=np.int32)

    @property
    def recall(self) -> float | None:
        """The recall@10 measured when the index was calibrated (None: a fixed setting)."""
        return None if self.calibration is None else self.calibration.recall

    @property
    def key_recall(self) -> float | None:
        """The recall@10 measured for queries by key (:attr:`ef_search_by_key`); the
        :attr:`recall` of an index whose queries by key have no setting of their own."""
        chosen = self.calibration
        if chosen is None or chosen.key_recall is None:
            return self.recall
        return chosen.key_recall

    @property
    def exact(self) -> bool:
        """True when the index answers by the exact scan: the calibration found that its
        target needs a near-exhaustive search (or an IVF index scans every cell). Setting
        ``ef_search`` / ``nprobe`` goes back to the approximate search."""
        if self.kind == "ivf":
            return self._index.nprobe == self._index.nlist
        return self._searched is not self._index

    def _answer_exactly(self) -> None:
        if self.kind == "hnsw":
            self._searched = _faiss().downcast_index(self._index.storage)
        else:
            self._index.nprobe = self._index.nlist

    @classmethod
    def build(
        cls,
        unit_rows: np.ndarray,
        kind: IndexKind | None = None,
        *,
        M: int | None = None,
        ef_construction: int | None = None,
        ef_search: int | None = None,
        nlist: int | None = None,
        nprobe: int | None = None,
        recall: float | None = RECALL,
        threads: int | None = None,
        seed: int = 1,
        progress: bool | None = None,
        verbose: bool = True,
    ) -> VectorIndex:
        """Index ``unit_rows`` (V, d) float32, rows of unit length (zero rows allowed).

        With no ``kind``, the kind and its build settings come from the table's size
        (:func:`default_settings`); a setting given overrides its default.

        **The search setting comes from the recall asked** (``recall``, default 0.95, of the
        10 nearest rows): the index is queried with 1,000 of its rows and their answers held
        to the exact scan's; ``ef_search`` (HNSW) or ``nprobe`` (IVF) is raised from a cheap
        value until recall@10, less two standard errors of its mean over the queries,
        reaches ``recall`` (:mod:`rowbook.vectors.calibrate`). The choice, the recall
        measured and the seconds it took are printed once (``verbose``) and kept in
        :attr:`calibration` (saved with the index). When the target needs a search that
        computes about as many distances as the exact scan (a tenth of the rows for HNSW,
        half for IVF), the index says so and answers exactly (:attr:`exact`).
        ``recall=None``, or an ``ef_search`` / ``nprobe`` given, keeps that fixed setting
        (the values of :func:`default_settings` when none is given).

        **Queries by key are calibrated apart** (HNSW): ``most_similar(key,
        approximate=True)`` asks with a row the graph holds and starts its search at that
        row's node, an easier query than a new vector's, so the held-out rows' setting is
        more than it needs. 1,000 other rows of the table are asked that way against the
        exact scan, on the same ladder up to the held-out rows' ``ef_search``, held to the
        same lower bound: :attr:`ef_search_by_key` and :attr:`key_recall`, printed on a
        second line and saved with the index.

        * **V < 100,000: IVF**, ``nlist = sqrt(V)`` cells, ``nprobe = 8`` scanned per
          query. It builds in a second or two (k-means on at most 64 rows per cell), and
          scanning the ``nlist`` centroids then 8 cells of ``sqrt(V)`` rows each costs
          about ``9 sqrt(V) d`` multiply-adds: 0.03 of the exact scan at 100,000 rows, far
          less below it. Recall@10 on the benchmark's clustered tables: 0.999 at 20,000 rows,
          0.985 at 60,000 (built in 4 and 6 s under load).
        * **V >= 100,000: HNSW**, ``M = 16`` links per node, ``ef_construction = 64``,
          ``ef_search = 32``. A query walks the graph in about ``ef_search * M`` distance
          computations whatever V, where IVF's cost grows as ``sqrt(V)``. Measured on
          1M x 100 clustered rows (``benchmarks/bench_index.py``, 2026-11-26, 2 cores at a
          load average of 12-16): recall@10 0.975, a query 0.16 ms in a loop of queries
          (0.44 ms right after an exact scan has flushed the caches), the exact scan
          279 ms under that load (15.7 ms on an idle machine when the issue was written). ``ef_search`` 24 gave recall 0.948, 16
          gave 0.891; 48 and 64 bought 0.985 and 0.992 for 1.3x and 1.6x the time, 128 (the
          old default) 0.999 for 3.8x: recall nobody asked for. ``M = 32`` (the faiss
          default) doubles the links walked. Building took 35 minutes at that load, 7.9
          minutes at a load of 3-5 (82 s at 100,000 rows), a progress bar showing it.

        ``kind="hnsw"``: ``M`` links per node (default 16), ``ef_construction`` (64),
        ``ef_search`` candidates kept while searching (32). ``kind="ivf"``: ``nlist`` cells
        (``sqrt(V)``), ``nprobe`` scanned (8; ``nprobe == nlist`` is an exact scan).
        ``threads`` sets faiss's OpenMP threads; ``progress`` shows a bar while rows are
        added (default: for 100,000 rows or more, on a terminal).

        **A graph that maps its rows poorly is built again, denser.** When the calibrated
        ``ef_search`` exceeds the ``ef_construction`` the graph was built with (whether the
        target then needs the exact scan or not), the links were chosen from too few candidates for these rows
        (hnswlib's rule of thumb: recall at ``ef = ef_construction`` well under the target
        means a better graph is to be had). Unless ``M`` or ``ef_construction`` was given,
        the graph is then built again with :data:`DENSER` (``M = 48``, ``ef_construction =
        256``: about ten times the build) and calibrated on the same held-out rows, which
        the message says; past :data:`REBUILD_ROWS` (2M rows, a build budget of about 20
        minutes on 2 idle cores) it says which call builds it instead.

        (The measurements in the list above were made before the calibration, with the fixed
        ``ef_search`` of :func:`default_settings`; on the issue's clustered rows with noise
        that fixed value gave recall@10 0.854, the reason the setting is now measured. On
        :func:`rowbook.data.synthetic_vectors.clustered_vectors` rows (noise 0.4) at 1M rows
        the default graph needs ``ef_search`` 512 (0.965, 3-14x faster than the exact scan
        where blobs get 92-154x): a third of such a row's 10 nearest lie outside its
        sub-topic, rows of other topics that point its way by chance, in a thick shell (10th
        neighbour at cosine 0.729, 100th at 0.669). ``M = 32, ef_construction = 128`` needed
        128 there, ``M = 48, ef_construction = 256`` 64; IVF misses those rows in far cells.
        The figures are in ``docs/benchmarks.md``.)
        """
        faiss = _faiss()
        data = np.ascontiguousarray(unit_rows, dtype=np.float32)  # (V, d)
        rows, _ = data.shape
        if rows == 0:
            raise ValueError("cannot index an empty table; add vectors first")
        check_finite("unit_rows", data)
        given = {
            "M": M,
            "ef_construction": ef_construction,
            "ef_search": ef_search,
            "nlist": nlist,
            "nprobe": nprobe,
        }
        settings = _settings(rows, kind, given)
        target = check_recall(recall)
        check_int("threads", threads, 1, allow_none=True)
        if threads is not None:
            faiss.omp_set_num_threads(threads)
        knob = "ef_search" if settings["kind"] == "hnsw" else "nprobe"
        calibrating = target is not None and given[knob] is None and rows >= 2
        held = calibrate.held_out_rows(rows, seed) if calibrating else np.zeros(0, np.int64)
        target = target if calibrating else None
        show = rows >= HNSW_FROM if progress is None else bool(progress)
        start = time.perf_counter()
        built = cls._indexed(data, settings, held, target, seed, show, verbose)
        chosen = {name: given[name] for name in DENSER}
        if built._maps_poorly() and chosen == dict.fromkeys(DENSER):
            denser = settings | DENSER
            if rows <= REBUILD_ROWS:
                if verbose:
                    seconds = time.perf_counter() - start
                    said = _REBUILDING.format(seconds=seconds, **DENSER)
                    print(f"{built!r}: {said}", file=sys.stderr)
                built = cls._indexed(data, denser, held, target, seed, show, verbose)
            elif verbose:
                print(
                    f"{built!r}: {_NOT_REBUILT.format(rows=REBUILD_ROWS, **DENSER)}",
                    file=sys.stderr,
                )
        if built.kind == "hnsw":
            built._store_in_search_order()
            if target is not None and not built.exact:
                built._calibrate_keys(data, target, seed, verbose)
        return built

    @classmethod
    def _indexed(
        cls,
        data: np.ndarray,
        settings: dict[str, Any],
        held: np.ndarray,
        target: float | None,
        seed: int,
        show: bool,
        verbose: bool,
    ) -> VectorIndex:
        """The index ``settings`` describe over ``data`` (V, d): every row but ``held`` (Q,)
        added, the search setting calibrated for ``target`` on ``held`` (None: the fixed
        setting, nothing held), then ``held`` added (an HNSW graph stores them in that order)."""
        rows, dim = data.shape
        built = cls(_empty_index(_faiss(), settings, data, seed), settings["kind"], rows, dim)
        knob = "ef_search" if settings["kind"] == "hnsw" else "nprobe"
        setattr(built, knob, settings[knob])
        kept = np.setdiff1d(np.arange(rows), held)  # (V - Q,) added first, in order
        bar = ProgressBar(rows, unit="row", show=show)
        try:
            built._add(data, kept, bar)
            if target is not None:
                built._calibrate(data, kept, held, target, verbose)
            built._add(data, held, bar)
        finally:
            bar.close()
        if settings["kind"] == "hnsw":  # stored in the order added
            built._stored_order(np.concatenate([kept, held]))
        return built

    def _store_in_search_order(self) -> None:
        """Store the graph's rows in the order a breadth-first walk of its bottom layer
        reaches them (:mod:`rowbook.vectors.graph_order`), so that a search's hops read
        nearby memory; :attr:`_order` maps them back to the table's rows."""
        faiss, graph = _faiss(), self._index.hnsw
        width = int(faiss.vector_to_array(graph.cum_nneighbor_per_level)[1])  # 2 M links
        offsets = faiss.vector_to_array(graph.offsets)  # (V + 1,)
        links = faiss.vector_to_array(graph.neighbors)  # every node's links, -1 after the last
        stored = bfs_order(offsets, links, width, int(graph.entry_point))  # (V,) new -> old
        self._index.permute_entries(stored)
        order = np.arange(self.rows) if self._order is None else self._order
        self._stored_order(order[stored])
        self._on_huge_pages()

    def _on_huge_pages(self, now: bool = True) -> None:
        """Move an HNSW graph's rows and links onto 2 MB pages (:func:`rowbook._memory.on_huge_pages`,
        a hint the kernel may decline): with 4 kB pages a search misses the TLB at nearly
        every hop. The pages and the search order gain together: on 300k rows (M 48,
        ``ef_search`` 56, queries by key in turns of 30 after exact scans, load 16) 0.169 ms a
        query against 0.186 in table order on small pages; 0.192 in search order on small
        pages, 0.182 in table order on huge ones. ``now``: moved at once (seconds for a
        million rows, beside a build of minutes); else in the background, as after a load,
        which stays quick."""
        if self.kind != "hnsw":
            return
        rows = _faiss().downcast_index(self._index.storage).codes
        for stored in (rows, self._index.hnsw.neighbors):
            on_huge_pages(int(stored.data()), stored.byte_size(), now)

    def _maps_poorly(self) -> bool:
        """A graph whose calibrated queries need a wider search than the one that built it
        (``ef_search > ef_construction``, the exact scan reached on the way or not): its
        links were chosen from too few candidates for these rows (hnswlib's rule of thumb:
        recall at ``ef = ef_construction`` well under the target means a better graph is to
        be had). A table so small that a narrow search already costs a tenth of the scan
        answers exactly without a second graph, which could not do better."""
        chosen = self.calibration
        if self.kind != "hnsw" or chosen is None:
            return False
        return chosen.value > self.ef_construction

    def _add(self, data: np.ndarray, ids: np.ndarray, bar: ProgressBar) -> None:
        """Add the rows ``ids`` of ``data``; an HNSW graph numbers them in the order added,
        an IVF index keeps their ids."""
        whole = len(ids) == len(data)  # every row, in order: slices, no copies
        for start in range(0, len(ids), ADD_ROWS):
            part = ids[start : start + ADD_ROWS]
            rows = data[start : start + len(part)] if whole else data[part]  # (b, d)
            if self.kind == "hnsw":
                self._index.add(rows)
            else:
                self._index.add_with_ids(rows, part.astype(np.int64))
            bar.update(len(part))

    # -- calibration -------------------------------------------------------------------

    def _calibrate(
        self, data: np.ndarray, kept: np.ndarray, held: np.ndarray, target: float, verbose: bool
    ) -> None:
        """Choose the search setting for ``target`` (see :meth:`build`): the ``held`` rows
        (Q,), not yet added, query the index of the ``kept`` rows, against the exact scan
        of those rows (:func:`~rowbook.vectors.calibrate.calibrate_search`)."""
        start = time.perf_counter()
        knob, values = self._knob_values()

        def search(queries: np.ndarray, value: int) -> tuple[list[np.ndarray], float]:
            setattr(self, knob, value)
            answers, computed = self._counted(queries, calibrate.K)
            found = [kept[a] if self.kind == "hnsw" else a for a in answers]
            return found, computed / (len(queries) * len(kept))

        value, measured, exact, share = calibrate.calibrate_search(
            search, data, held, values, target, NEAR_EXHAUSTIVE[self.kind], absent=held
        )
        setattr(self, knob, value)
        recall = 1.0 if exact else float(measured.mean())
        seconds = time.perf_counter() - start
        self.calibration = Calibration(target, recall, len(held), knob, value, exact, seconds)
        if exact:
            self._answer_exactly()
        if verbose:
            cost = "" if exact else f"; a query computes {share:.2%} of the scan's distances"
            print(f"{self!r}: {self.calibration}{cost}", file=sys.stderr)

    def _calibrate_keys(self, data: np.ndarray, target: float, seed: int, verbose: bool) -> None:
        """Choose the ``ef_search`` of a query by key (:attr:`ef_search_by_key`) for
        ``target``: other rows of the table (:func:`~rowbook.vectors.calibrate.held_out_rows`
        with the next seed), each searched from its own node as ``most_similar(key,
        approximate=True)`` searches, against the exact scan (the row itself left out), on
        the values of the ladder up to the ``ef_search`` the queries by vector chose, which
        it settles for when no narrower one is enough
        (:func:`~rowbook.vectors.calibrate.calibrate_search`). A query
        by key is easier than a new row's query: its walk starts at the row, among links
        chosen for it (on 300k clustered rows at noise 0.4, ``M=48``: recall@10 0.972 by
        key at ``ef_search`` 16, where new rows asked by vector got 0.903 at 16 and 0.960 at
        32, the held-out rows' setting)."""
        start = time.perf_counter()
        keys = calibrate.held_out_rows(self.rows, seed + 1)  # (Q,)
        widest = self.ef_search
        values = [v for v in self._knob_values()[1] if v <= widest]

        def search(queries: np.ndarray, value: int) -> tuple[list[np.ndarray], float]:
            self._search_keys_at(value)  # each query from its own node, itself found too
            answers, computed = self._counted(queries, calibrate.K + 1, keys)
            return answers, computed / (len(queries) * self.rows)

        value, measured, _, _ = calibrate.calibrate_search(
            search, data, keys, values, target, NEAR_EXHAUSTIVE[self.kind], settle=widest
        )
        self._search_keys_at(value)
        seconds = self.calibration.seconds + time.perf_counter() - start
        self.calibration = dataclasses.replace(
            self.calibration, key_value=value, key_recall=float(measured.mean()), seconds=seconds
        )
        if verbose:
            print(
                f"{self!r}: queries by key calibrated on {len(keys)} other rows "
                f"({time.perf_counter() - start:.1f} s): ef_search={value}, "
                f"recall@{calibrate.K} {measured.mean():.3f}",
                file=sys.stderr,
            )

    def _search_keys_at(self, value: int) -> None:
        """Search queries by key with ``ef_search`` ``value`` (faiss's search parameters)."""
        self._key_search = _faiss().SearchParametersHNSW()
        self._key_search.efSearch = value

    def _knob_values(self) -> tuple[str, list[int]]:
        """The knob and its values to try, cheap to dear, up to an exhaustive search."""
        if self.kind == "hnsw":
            steps = [12, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256, 384]
            steps += [512, 768, 1024, 1536, 2048]
            return "ef_search", [v for v in steps if v < self.rows] + [max(self.rows, 16)]
        cells = self._index.nlist
        steps = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512]
        return "nprobe", [v for v in steps if v < cells] + [cells]

    def _counted(
        self, queries: np.ndarray, k: int, start: np.ndarray | None = None
    ) -> tuple[list[np.ndarray], int]:
        """:meth:`search_batch`'s answers and the distances it computed (faiss's counters;
        an IVF query also scores every cell's centroid)."""
        faiss = _faiss()
        stats = faiss.cvar.hnsw_stats if self.kind == "hnsw" else faiss.cvar.indexIVF_stats
        stats.reset()
        answers = self.search_batch(queries, k, start)
        extra = 0 if self.kind == "hnsw" else self._index.nlist * len(queries)
        return answers, int(stats.ndis) + extra

    # -- tuning ------------------------------------------------------------------------

    @property
    def M(self) -> int | None:
        """HNSW: links per node, twice as many in the bottom layer (``None`` for IVF)."""
        return self._index.hnsw.nb_neighbors(1) if self.kind == "hnsw" else None

    @property
    def ef_construction(self) -> int | None:
        """HNSW: candidates kept while the graph was built (``None`` for IVF)."""
        return self._index.hnsw.efConstruction if self.kind == "hnsw" else None

    @property
    def ef_search(self) -> int | None:
        """HNSW: candidates kept while searching (``None`` for an IVF index)."""
        return self._index.hnsw.efSearch if self.kind == "hnsw" else None

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if self.kind == "hnsw":
            self._index.hnsw.efSearch = check_int("ef_search", value, 1)
            self._searched = self._index  # the graph again, if it answered exactly
            self._key_search = None  # a fixed setting: queries by key too

    @property
    def ef_search_by_key(self) -> int | None:
        """HNSW: candidates kept while searching for a query by key (from its own node;
        :meth:`search_batch`'s ``start``): the calibration's own choice for such queries,
        else :attr:`ef_search` (``None`` for IVF). Setting :attr:`ef_search` sets both."""
        if self.kind != "hnsw":
            return None
        return self.ef_search if self._key_search is None else self._key_search.efSearch

    @ef_search_by_key.setter
    def ef_search_by_key(self, value: int) -> None:
        if self.kind == "hnsw":
            self._search_keys_at(check_int("ef_search_by_key", value, 1))

    @property
    def nprobe(self) -> int | None:
        """IVF: cells scanned per query (``None`` for an HNSW index)."""
        return self._index.nprobe if self.kind == "ivf" else None

    @nprobe.setter
    def nprobe(self, value: int) -> None:
        if self.kind == "ivf":
            self._index.nprobe = min(check_int("nprobe", value, 1), self._index.nlist)

    # -- queries -----------------------------------------------------------------------

    def search(self, query: np.ndarray, k: int) -> np.ndarray:
        """Row ids of up to ``k`` candidates nearest to ``query`` (d,) by inner product, best first."""
        return self.search_batch(query.reshape(1, -1), k)[0]

    def search_batch(
        self, queries: np.ndarray, k: int, start: np.ndarray | None = None
    ) -> list[np.ndarray]:
        """:meth:`search` for each row of ``queries`` (n, d), in one call to faiss (which
        shares the queries out between its threads): a list of ``n`` id arrays.

        ``start`` (n,) gives, for queries that are rows of the table (a query by key), each
        one's own row: an HNSW search then begins at that row's node in the bottom layer
        instead of walking down the upper layers to it, the walk a query by vector needs
        to get there (:meth:`_search_from`).

        faiss's ``search_c`` is called with the arrays made and checked here (its Python
        wrapper costs 3 of the 20 microseconds of a query on a 20,000-row HNSW graph); a
        row's ``-1`` ids (fewer than ``k`` found), which faiss leaves at its end, are cut off.
        """
        q = np.ascontiguousarray(queries, dtype=np.float32)  # (n, d)
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise ValueError(f"queries must be (n, {self.dim}), got shape {q.shape}")
        check_finite("queries", q)
        k = min(int(k), self.rows)
        if k <= 0:
            return [np.empty(0, dtype=np.int64) for _ in q]
        distances = np.empty((len(q), k), dtype=np.float32)  # (n, k)
        ids = np.empty((len(q), k), dtype=np.int64)  # (n, k)
        ptr = self._ptr
        if start is not None and self.kind == "hnsw" and not self.exact:
            self._search_from(q, self._start_rows(start, len(q)), distances, ids)
        else:
            self._searched.search_c(len(q), ptr(q), k, ptr(distances), ptr(ids))
        if self._order is not None:  # stored rows -> table rows, -1 (no answer) kept
            ids = np.where(ids >= 0, self._order[ids], -1)
        return [row if row[-1] >= 0 else row[row >= 0] for row in ids]

    def _start_rows(self, start: np.ndarray, n: int) -> np.ndarray:
        """``start`` checked: (n,) rows of the table, as the graph's int32 node ids (the
        rows where they are stored)."""
        rows = np.asarray(start)
        if rows.shape != (n,) or rows.dtype.kind not in "iu":
            raise ValueError(f"start must be ({n},) row numbers, one a query, got {rows!r}")
        if n and (rows.min() < 0 or rows.max() >= self.rows):
            raise ValueError(f"start must hold rows 0 to {self.rows - 1}, got {rows!r}")
        if self._node is not None:
            return self._node[rows]
        return np.ascontiguousarray(rows, dtype=np.int32)

    def _search_from(
        self, q: np.ndarray, start: np.ndarray, distances: np.ndarray, ids: np.ndarray
    ) -> None:
        """The HNSW search of each query (n, d) in the bottom layer only, from the node of its
        row ``start`` (n,) int32, into ``distances`` and ``ids`` (n, k).

        A search by vector walks down the upper layers to the nearest node it can find and
        searches the bottom layer from there; a query by key is its row, so that node is
        known. faiss is given the starting node's inner product with the query, ``q . q``
        (the query is that row).

        The search keeps :attr:`ef_search_by_key` candidates.

        faiss shares these queries out between its threads even when there is one (its
        ``search`` does not): one query is searched on one thread, or it waits for the
        others to start and end (48 ms where the search takes 0.05, at a load of 9)."""
        faiss, ptr = _faiss(), self._ptr
        own = np.einsum("ij,ij->i", q, q).astype(np.float32)  # (n,)
        threads = faiss.omp_get_max_threads()
        if len(q) == 1:
            faiss.omp_set_num_threads(1)
        try:
            self._index.search_level_0(
                len(q),
                ptr(q),
                ids.shape[1],
                ptr(start),
                ptr(own),
                ptr(distances),
                ptr(ids),
                1,  # one starting node a query
                1,  # one search a starting node
                self._key_search,
            )
        finally:
            faiss.omp_set_num_threads(threads)

    # -- files -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index (faiss's format) atomically, its :attr:`calibration` after it
        (:mod:`rowbook.vectors.index_file`). A graph stored in its search order is written
        inside faiss's ``IndexIDMap``, whose ids are the table rows of the stored ones: faiss
        reading the file answers with table rows too."""
        faiss, saved = _faiss(), self._index
        if self._order is not None:  # faiss's IDMap takes an empty index: the graph put in after
            saved = faiss.IndexIDMap(faiss.IndexFlatIP(self.dim))
            saved.index, saved.ntotal = self._index, self.rows
            faiss.copy_array_to_vector(self._order.astype(np.int64), saved.id_map)
        write_index_file(path, faiss.serialize_index(saved), self.calibration)

    @classmethod
    def load(cls, path: str | os.PathLike[str], rows: int, dim: int) -> VectorIndex:
        """Read an index written by :meth:`save` for a table of ``rows`` x ``dim``; only your own files."""
        faiss = _faiss()
        path = Path(path)
        blob, calibration = read_index_file(path)
        try:
            index = faiss.deserialize_index(blob)
        except RuntimeError as err:
            raise ValueError(
                f"{path} is not a faiss index file ({str(err).splitlines()[0]})"
            ) from None
        index, order = _stored_rows(faiss, index)
        if not isinstance(index, faiss.IndexHNSW | faiss.IndexIVF):
            raise ValueError(
                f"{path} holds a faiss {type(index).__name__}, not an index rowbook builds"
            )
        kind: IndexKind = "hnsw" if isinstance(index, faiss.IndexHNSW) else "ivf"
        if index.ntotal != rows or index.d != dim:
            raise ValueError(
                f"{path} indexes {index.ntotal} rows of dimension {index.d}, but the vectors have "
                f"{rows} x {dim}; rebuild it with build_index()"
            )
        if order is not None and not _each_row_once(order, rows):
            raise ValueError(
                f"{path}: the ids of its rows are not the table's rows 0 to {rows - 1}, each "
                "once; rebuild it with build_index()"
            )
        loaded = cls(index, kind, rows, dim, calibration, order)
        loaded._on_huge_pages(now=False)
        return loaded

    def __repr__(self) -> str:
        knob = (
            f"M={self.M}, ef_search={self.ef_search}"
            if self.kind == "hnsw"
            else f"nprobe={self.nprobe}"
        )
        return f"VectorIndex({self.kind}, {self.rows} x {self.dim}, {knob})"
