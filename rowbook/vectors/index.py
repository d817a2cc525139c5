"""Approximate nearest neighbors: a faiss index over a table's unit rows.

An exact query scans every row (``U @ q``, V x d multiply-adds); past a few hundred
thousand rows that is tens of milliseconds. An index finds candidates without the scan;
rowbook then re-scores the candidates exactly, so the scores returned are the true
cosines and only the *choice* of neighbors is approximate. Two kinds, both on faiss
(``pip install rowbook[ann]``), inner product on unit rows = cosine:

* ``"hnsw"`` (Malkov & Yashunin 2018): a navigable graph; slow to build (minutes per
  million rows on two cores), fastest to query, no training. ``M`` links per node,
  ``ef_search`` candidates kept while searching (higher: better recall, slower).
* ``"ivf"``: k-means cells (``nlist``, default ``4 sqrt(V)``), a query scans the
  ``nprobe`` nearest cells. Builds in seconds; ``nprobe == nlist`` is an exact scan.

faiss was chosen over hnswlib (no wheel for this platform: it compiles from source) and
usearch after measuring the three on 200,000 clustered 100-d unit vectors (build with one
thread, recall@10 against the exact scan): faiss HNSW 1.000 recall, 0.49 ms per query,
usearch HNSW 1.000, 1.25 ms, the exact scan 12.4 ms (a shared, busy machine; the benchmark
in ``benchmarks/bench_index.py`` measures 1M rows).

Index files are faiss's own format, written and read by faiss. They are a cache of the
vectors, not a data format: load only index files you made (``Vectors.load`` never loads
one by itself; :meth:`VectorIndex.load` checks the row count and dimension against the
vectors it is attached to).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rowbook.checks import check_choice, check_int

__all__ = ["IndexKind", "VectorIndex"]

IndexKind = Literal["hnsw", "ivf"]


def _faiss() -> Any:
    try:
        import faiss
    except ImportError:
        raise ImportError(
            "approximate neighbors need faiss: pip install 'rowbook[ann]' (faiss-cpu)"
        ) from None
    return faiss


class VectorIndex:
    """An approximate nearest-neighbour index over ``(V, d)`` unit rows.

    Build it with :meth:`build` (or ``Vectors.build_index``); :meth:`search` returns the
    row ids of candidates, best first. The tuning knobs can be changed after building
    (``index.ef_search = 256``, ``index.nprobe = 64``).

    Examples
    --------
    >>> unit = np.eye(4, dtype=np.float32)
    >>> index = VectorIndex.build(unit, kind="ivf", nlist=2, nprobe=2)
    >>> index.search(unit[2], 1).tolist()
    [2]
    """

    def __init__(self, faiss_index: Any, kind: IndexKind, rows: int, dim: int) -> None:
        self._index, self.kind, self.rows, self.dim = faiss_index, kind, rows, dim

    @classmethod
    def build(
        cls,
        unit_rows: np.ndarray,
        kind: IndexKind = "hnsw",
        *,
        M: int = 32,
        ef_construction: int = 100,
        ef_search: int = 128,
        nlist: int | None = None,
        nprobe: int = 16,
        threads: int | None = None,
        seed: int = 1,
    ) -> VectorIndex:
        """Index ``unit_rows`` (V, d) float32, rows of unit length (zero rows allowed)."""
        faiss = _faiss()
        check_choice("kind", kind, ("hnsw", "ivf"))
        for name, value in (
            ("M", M),
            ("ef_construction", ef_construction),
            ("ef_search", ef_search),
            ("nprobe", nprobe),
        ):
            check_int(name, value, 1)
        check_int("nlist", nlist, 1, allow_none=True)
        check_int("threads", threads, 1, allow_none=True)
        data = np.ascontiguousarray(unit_rows, dtype=np.float32)  # (V, d)
        rows, dim = data.shape
        if rows == 0:
            raise ValueError("cannot index an empty table; add vectors first")
        if threads is not None:
            faiss.omp_set_num_threads(threads)
        if kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, M, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = ef_construction
        else:
            cells = min(rows, nlist or max(1, int(4 * math.sqrt(rows))))
            index = faiss.IndexIVFFlat(
                faiss.IndexFlatIP(dim), dim, cells, faiss.METRIC_INNER_PRODUCT
            )
            index.cp.seed = seed
            index.cp.min_points_per_centroid = 1  # small tables: no warning printed on stderr
            index.train(data)
        index.add(data)
        built = cls(index, kind, rows, dim)
        built.ef_search, built.nprobe = ef_search, nprobe
        return built

    # -- tuning ------------------------------------------------------------------------

    @property
    def ef_search(self) -> int | None:
        """HNSW: candidates kept while searching (``None`` for an IVF index)."""
        return self._index.hnsw.efSearch if self.kind == "hnsw" else None

    @ef_search.setter
    def ef_search(self, value: int) -> None:
        if self.kind == "hnsw":
            self._index.hnsw.efSearch = check_int("ef_search", value, 1)

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
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)  # (1, d)
        _, ids = self._index.search(q, min(k, self.rows))  # (1, k)
        return ids[0][ids[0] >= 0]

    # -- files -------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index (faiss's format) atomically."""
        from rowbook.io import atomic_write

        blob = _faiss().serialize_index(self._index)  # (n,) uint8
        with atomic_write(path) as f:
            f.write(blob.tobytes())

    @classmethod
    def load(cls, path: str | os.PathLike[str], rows: int, dim: int) -> VectorIndex:
        """Read an index written by :meth:`save` for a table of ``rows`` x ``dim``; only your own files."""
        faiss = _faiss()
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(
                f"index file {path} does not exist; build it with build_index()"
            )
        blob = np.fromfile(path, dtype=np.uint8)
        try:
            index = faiss.deserialize_index(blob)
        except RuntimeError as err:
            raise ValueError(
                f"{path} is not a faiss index file ({str(err).splitlines()[0]})"
            ) from None
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
        return cls(index, kind, rows, dim)

    def __repr__(self) -> str:
        knob = f"ef_search={self.ef_search}" if self.kind == "hnsw" else f"nprobe={self.nprobe}"
        return f"VectorIndex({self.kind}, {self.rows} x {self.dim}, {knob})"
