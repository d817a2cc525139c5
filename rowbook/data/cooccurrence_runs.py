"""Co-occurrence counts of any size: exact integer sums in sorted runs, spilled to disk and merged.

The counts are kept exact, so the order in which pieces are added never matters. With
distance weighting a pair at distance ``k`` adds ``1 / k``; every such value is a whole
multiple of ``1 / L`` for ``L = lcm(1, ..., window)`` (360,360 for glove.c's window of
15), so the counter adds integers ``L / k`` and divides once at the end. Without
weighting ``L = 1``. Counts made in one piece, in blocks under a memory budget, or per
shard on many machines (:mod:`rowbook.distributed`) are therefore equal bit for bit.
The numerators must fit in int64: :func:`denominator` refuses a window whose ``L`` times
the largest possible count would not (``window <= 20`` covers 10^10-token corpora).

Counting under a budget follows glove.c's ``cooccur``. The pairs of a block of tokens
become a sparse matrix of numerators (scipy's COO -> CSR conversion: a counting sort by
row that sums duplicates). Blocks are added like a log-structured merge: a new matrix is
added to the previous one while that one is at most twice its size, so about
``log2(blocks)`` matrices are held and each count is copied ``log2(blocks)`` times, not
once per block. When the held matrices pass a quarter of the budget (adding two of them
briefly holds a third as large, so half the budget in all) they are summed into one
*run* written to disk; at the end the runs are added a band of rows at a time, so the
merge holds one band of every run. No step copies the whole accumulated matrix per block.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from rowbook.data.spill_folder import SpillFolder

__all__ = ["RunCounter", "denominator"]


def denominator(window: int, weighted: bool, max_count: int) -> int:
    """``L``: every count is a whole number of ``1 / L`` (see the module docstring).

    ``max_count`` bounds any one pair's number of occurrences (twice the tokens, for
    symmetric counts); ``L * max_count`` must fit in int64.

    Examples
    --------
    >>> denominator(15, True, 10**6), denominator(15, False, 10**6)
    (360360, 1)
    """
    L = math.lcm(*range(1, window + 1)) if weighted else 1
    if L * max(max_count, 1) >= 2**63:
        raise ValueError(
            f"window={window} with distance weighting needs counts in units of 1/{L}, which "
            f"overflow int64 for a corpus of this size ({max_count} pair occurrences); use a "
            "window <= 20 or distance_weighting=False"
        )
    return L


_PARTS = {"indptr": np.int64, "indices": np.int32, "data": np.int64}


class _RunFile:
    """A spilled run: its (V + 1,) row pointers in RAM, indices and numerators read by band.

    Bands are read with ``seek`` and ``read`` rather than a memory map, so the pages of
    run files never count toward the process's resident memory.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.indptr = np.fromfile(folder / "indptr", dtype=_PARTS["indptr"])  # (V + 1,)

    def _read(self, name: str, lo: int, hi: int) -> np.ndarray:
        dtype = np.dtype(_PARTS[name])
        with open(self.folder / name, "rb") as f:
            f.seek(lo * dtype.itemsize)
            return np.fromfile(f, dtype=dtype, count=hi - lo)

    def band(self, r0: int, r1: int, n_cols: int) -> sp.csr_matrix:
        lo, hi = int(self.indptr[r0]), int(self.indptr[r1])
        return sp.csr_matrix(
            (
                self._read("data", lo, hi),
                self._read("indices", lo, hi),
                self.indptr[r0 : r1 + 1] - lo,
            ),
            shape=(r1 - r0, n_cols),
        )


def _bytes(m: sp.csr_matrix) -> int:
    return m.data.nbytes + m.indices.nbytes + m.indptr.nbytes


class RunCounter:
    """Sum blocks of ``(rows, cols, numerators)`` within ``memory`` bytes, spilling to ``folder``.

    :meth:`add` takes one block; :meth:`bands` yields the exact sums as CSR matrices of
    consecutive row bands. Run files go to a :class:`~rowbook.data.spill_folder.SpillFolder`
    in ``folder`` (made at the first spill), removed by :meth:`close` (the counter is a
    context manager); a full disk is its one clear error.

    Examples
    --------
    >>> with RunCounter(shape=(3, 3), memory=None) as counter:
    ...     counter.add(np.array([0, 2, 0]), np.array([1, 1, 1]), np.array([4, 5, 6]))
    ...     counter.add(np.array([2]), np.array([1]), np.array([1]))
    ...     [band.toarray().tolist() for band in counter.bands()]
    [[[0, 10, 0], [0, 0, 0], [0, 6, 0]]]
    """

    MIN_MEMORY = 1 << 20  # a budget below 1 MB would spill every block

    def __init__(
        self,
        shape: tuple[int, int],
        memory: int | None,
        folder: str | os.PathLike[str] | None = None,
    ) -> None:
        self.shape, self.memory, self._parent = shape, memory, folder
        self._folder: SpillFolder | None = None
        self._held: list[sp.csr_matrix] = []
        self._on_disk: list[Path] = []

    def __enter__(self) -> RunCounter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._folder is not None:
            self._folder.remove()

    @property
    def spilled_runs(self) -> int:
        """How many runs went to disk (0 when everything fitted in the budget)."""
        return len(self._on_disk)

    def add(self, rows: np.ndarray, cols: np.ndarray, nums: np.ndarray) -> None:
        block = sp.coo_matrix((nums, (rows, cols)), shape=self.shape, dtype=np.int64).tocsr()
        held = self._held
        held.append(block)
        while len(held) > 1 and held[-2].nnz <= 2 * held[-1].nnz:  # ~log2(blocks) matrices
            held[-2:] = [held[-2] + held[-1]]
        if self.memory is not None and sum(map(_bytes, held)) > self.memory // 4:
            self._spill()

    def _summed(self) -> sp.csr_matrix:
        total = sp.csr_matrix(self.shape, dtype=np.int64)
        for m in reversed(self._held):  # smallest first
            total = total + m
        return total

    def _spill(self) -> None:
        run = self._summed()
        if self._folder is None:
            self._folder = SpillFolder(self._parent, "cooccur")
        folder = self._folder.path / f"run{len(self._on_disk)}"
        folder.mkdir()
        with self._folder.writing("the co-occurrence counts' sorted runs", _bytes(run)):
            for name in _PARTS:  # raw, read back by slices
                with open(folder / name, "wb") as f:
                    f.write(memoryview(getattr(run, name).astype(_PARTS[name])).cast("B"))
        self._on_disk.append(folder)
        self._held = []

    def bands(self, band_records: int | None = None) -> Iterator[sp.csr_matrix]:
        """The sums as CSR matrices of consecutive row bands of about ``band_records`` records
        in all (default: 4M), shared out between the runs."""
        if not self._on_disk:
            yield self._summed()
            return
        if self._held:
            self._spill()
        runs = [_RunFile(folder) for folder in self._on_disk]
        per_run = max(1, (band_records or 1 << 22) // len(runs))
        V, r0 = self.shape[0], 0
        while r0 < V:
            ends = [
                int(np.searchsorted(run.indptr, run.indptr[r0] + per_run, side="right")) - 1
                for run in runs
            ]
            r1 = min(V, max(r0 + 1, min(ends)))  # no run gives more than per_run (or one row)
            band = sp.csr_matrix((r1 - r0, self.shape[1]), dtype=np.int64)
            for run in runs:
                band = band + run.band(r0, r1, self.shape[1])
            yield band
            r0 = r1
