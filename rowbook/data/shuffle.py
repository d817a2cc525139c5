"""GloVe's ``shuffle``: the co-occurrence records in a seeded random order, in RAM or on disk.

glove.c's ``shuffle`` permutes the records once before training. Here the order is
defined record by record: each record ``(row, col)`` gets the key

    key = mix64(seed + (row * 2**32 + col + 1) * 0x9E3779B97F4A7C15)  (mod 2**64),

the ``row * 2**32 + col``-th number of SplitMix64 seeded with ``seed``
(:func:`record_keys`), and records are trained in ascending key order. ``mix64`` is a
bijection, so distinct records have distinct keys, and a key depends on nothing but
``(seed, row, col)``: the order is the same however the records were counted, spilled
or cut into bands, which is why every memory budget gives the same vectors bit for bit.

In RAM (:func:`shuffle_records`) the order is an ``argsort`` of the keys. Under a budget
(:func:`shuffle_to_file`) it is an external sort: chunks of a quarter of the budget
are sorted by key and written as *runs* (24 bytes a record: key, row, col, value), then
the key space is cut into equal bands (the keys are uniform, so each band holds its share
of the records) and each band is gathered from every run (runs are sorted: a binary
search finds its segment), sorted and appended to one records file (16 bytes a record).
Training reads each job's records from that file with ``pread``
(:meth:`RecordFile.read`), so resident memory holds a few jobs, not the records.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from rowbook.data.sampling import mix64
from rowbook.data.spill_folder import SpillFolder, pread_into, pwrite_all

__all__ = [
    "ColumnFile",
    "RecordArrays",
    "RecordFile",
    "band_records",
    "record_keys",
    "shuffle_records",
    "shuffle_to_file",
]

GOLDEN = 0x9E3779B97F4A7C15  # SplitMix64's increment
RUN_DTYPES = (np.uint64, np.int32, np.int32, np.float64)  # key, row, col, value: 24 bytes
RECORD_DTYPES = RUN_DTYPES[1:]  # row, col, value: 16 bytes
PIECE_RECORDS = 1 << 20  # records keyed at once while filling a chunk


def record_keys(rows: np.ndarray, cols: np.ndarray, seed: int) -> np.ndarray:
    """The ``(n,)`` uint64 sort keys of records ``(rows[k], cols[k])`` (see the module docstring).

    A record's key does not depend on the other records.

    Examples
    --------
    >>> rows, cols = np.array([0, 0, 5]), np.array([1, 2, 1])
    >>> keys = record_keys(rows, cols, seed=1)
    >>> bool(np.array_equal(keys[1:], record_keys(rows[1:], cols[1:], seed=1)))
    True
    >>> len(set(keys.tolist())), bool((keys != record_keys(rows, cols, seed=2)).all())
    (3, True)
    """
    z = np.asarray(rows).astype(np.uint64) << np.uint64(32)  # (n,)
    z |= np.asarray(cols).astype(np.uint64)
    z += np.uint64(1)
    z *= np.uint64(GOLDEN)
    z += np.uint64(seed % 2**64)
    return mix64(z)


def band_records(band: sp.csr_matrix, r0: int, a: int, b: int) -> tuple[np.ndarray, ...]:
    """``(rows, cols, vals)`` of the stored entries ``[a, b)`` of a CSR band whose first row is ``r0``.

    Examples
    --------
    >>> band = sp.csr_matrix(np.array([[0.0, 2.0], [3.0, 4.0]]))
    >>> [x.tolist() for x in band_records(band, 10, 1, 3)]
    [[11, 11], [0, 1], [3.0, 4.0]]
    """
    indptr = band.indptr
    i0 = int(np.searchsorted(indptr, a, side="right")) - 1  # the row holding entry a
    i1 = int(np.searchsorted(indptr, b, side="left"))  # one past the row holding entry b - 1
    lengths = np.diff(np.clip(indptr[i0 : i1 + 1], a, b))  # (i1 - i0,)
    rows = np.repeat(np.arange(r0 + i0, r0 + i1, dtype=np.int32), lengths)
    return (
        rows,
        band.indices[a:b].astype(np.int32, copy=False),
        band.data[a:b].astype(np.float64, copy=False),
    )


@dataclass(frozen=True)
class RecordArrays:
    """The shuffled records held in RAM; ``read(lo, hi)`` gives records ``[lo, hi)`` (views)."""

    rows: np.ndarray  # (n,) int32
    cols: np.ndarray  # (n,) int32
    vals: np.ndarray  # (n,) float64

    def __len__(self) -> int:
        return len(self.vals)

    def read(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.rows[lo:hi], self.cols[lo:hi], self.vals[lo:hi]

    def close(self) -> None:
        """Nothing to remove (the same interface as :class:`RecordFile`)."""


def shuffle_records(bands: Iterable[sp.csr_matrix], seed: int) -> RecordArrays:
    """The records of CSR row bands (consecutive, the first at row 0) in ascending key order, in RAM."""
    parts, r0 = [], 0
    for band in bands:
        parts.append(band_records(band, r0, 0, band.nnz))
        r0 += band.shape[0]
    rows, cols, vals = (np.concatenate(p) for p in zip(*parts, strict=True))
    order = np.argsort(record_keys(rows, cols, seed))
    return RecordArrays(rows[order], cols[order], vals[order])


class ColumnFile:
    """``n`` records stored column after column (each column contiguous) in one file.

    Read and written with ``pread`` / ``pwrite`` by record ranges, never mapped, so the
    file's pages do not count toward the process's resident memory. The file lives in a
    :class:`~rowbook.data.spill_folder.SpillFolder`: a full disk while writing is its
    one clear error.
    """

    def __init__(self, folder: SpillFolder, name: str, dtypes: tuple[type, ...], n: int) -> None:
        self.spill, self.path, self.n = folder, folder.path / name, n
        self.dtypes = tuple(np.dtype(t) for t in dtypes)
        sizes = [0] + [n * t.itemsize for t in self.dtypes]
        self.offsets = np.cumsum(sizes)[:-1].tolist()  # where each column starts
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)

    def __len__(self) -> int:
        return self.n

    #: What a full disk stops (its message), and the room a shuffle of n records needs.
    WHAT = "GloVe's shuffled records (40 bytes a record: 24 in sorted runs, then 16 in one file)"
    need: int | None = None

    @property
    def nbytes(self) -> int:
        return self.n * sum(t.itemsize for t in self.dtypes)

    def write(self, c: int, start: int, values: np.ndarray) -> None:
        """Write ``values`` into column ``c`` from record ``start`` on."""
        item = self.dtypes[c]
        with self.spill.writing(self.WHAT, self.need, written=self.spill_bytes()):
            pwrite_all(
                self.fd, values.astype(item, copy=False), self.offsets[c] + start * item.itemsize
            )

    def spill_bytes(self) -> int:
        """Bytes in this file's folder so far (what a full disk's message says was written)."""
        return sum(f.stat().st_size for f in self.spill.path.iterdir())

    def read_into(self, lo: int, hi: int, outs: Iterable[np.ndarray], at: int) -> None:
        """Read records ``[lo, hi)`` into ``out[at : at + hi - lo]`` for each column's ``out``."""
        for c, out in enumerate(outs):
            item = self.dtypes[c].itemsize
            pread_into(self.fd, out[at : at + hi - lo], self.offsets[c] + lo * item)

    def read(self, lo: int, hi: int) -> tuple[np.ndarray, ...]:
        outs = tuple(np.empty(max(0, hi - lo), t) for t in self.dtypes)
        self.read_into(lo, hi, outs, 0)
        return outs

    def first_at_least(self, key: int, lo: int) -> int:
        """Binary search of a key-sorted file (column 0): the first record ``>= lo`` whose
        key is at least ``key``, reading one key per step."""
        hi, one = self.n, np.empty(1, self.dtypes[0])
        while lo < hi:
            mid = (lo + hi) // 2
            pread_into(self.fd, one, self.offsets[0] + mid * one.itemsize)
            lo, hi = (mid + 1, hi) if int(one[0]) < key else (lo, mid)
        return lo

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


class RecordFile(ColumnFile):
    """The shuffled ``(rows, cols, values)`` in a temporary file; ``read(lo, hi)`` gives records
    ``[lo, hi)``. Its folder is removed by :meth:`close` or when the object is collected."""

    def __init__(self, folder: SpillFolder, n: int) -> None:
        super().__init__(folder, "records", RECORD_DTYPES, n)
        self.folder = folder.path
        self._cleanup = weakref.finalize(self, _close_and_remove, self.fd, folder)

    def close(self) -> None:
        """Close and remove the file now."""
        self._cleanup()


def _close_and_remove(fd: int, folder: SpillFolder) -> None:
    os.close(fd)
    folder.remove()


def shuffle_to_file(
    bands: Iterable[sp.csr_matrix],
    seed: int,
    memory: int,
    spill_dir: str | os.PathLike[str] | None = None,
    n_records: int | None = None,
) -> RecordFile:
    """:func:`shuffle_records` within ``memory`` bytes: an external sort by key into a file.

    Runs of ``memory / 4`` (24 bytes a record) go to a temporary folder in ``spill_dir``
    (default: the system's temporary folder), which needs room for 24 bytes a record, then
    16 more for the records file; the runs are removed once merged. On any error (a full
    disk: :class:`~rowbook.data.spill_folder.SpillSpaceError`, which says the room needed
    when ``n_records``, the records' number, is given), the folder is removed.

    Examples
    --------
    >>> X = sp.random(50, 50, density=0.2, format="csr", random_state=0)
    >>> on_disk = shuffle_to_file([X[:20], X[20:]], seed=3, memory=1 << 20)
    >>> in_ram = shuffle_records([X], seed=3)
    >>> all(np.array_equal(a, b) for a, b in zip(on_disk.read(0, X.nnz), in_ram.read(0, X.nnz)))
    True
    >>> on_disk.close()
    """
    folder = SpillFolder(spill_dir, "records")
    runs: list[ColumnFile] = []
    out = None
    need = None if n_records is None else 40 * n_records
    if need is not None:
        folder.check_room(ColumnFile.WHAT, need)
    # Sorting a chunk holds its 24 bytes a record, the int64 order and one gathered column:
    # 40 bytes a record, so chunks of memory / 96 records take ~0.42 of the budget, beside
    # the band of counts in flight. Merge bands get the same size at the mean, which leaves
    # room for the spread of a band's count (its standard deviation is sqrt(band)).
    try:
        _write_runs(bands, seed, max(1, memory // 96), folder, runs, need)
        out = RecordFile(folder, sum(map(len, runs)))
        out.need = need if need is not None else sum(run.nbytes for run in runs) + out.nbytes
        _merge(runs, out, max(1, memory // 96))
    except BaseException:
        for run in runs:
            run.close()
        if out is not None:
            out.close()
        folder.remove()
        raise
    return out


def _write_runs(
    bands: Iterable[sp.csr_matrix],
    seed: int,
    chunk: int,
    folder: SpillFolder,
    runs: list[ColumnFile],
    need: int | None,
) -> None:
    """Cut the records of ``bands`` into chunks of ``chunk``, each sorted by key into a run."""
    buffers = [np.empty(chunk, t) for t in RUN_DTYPES]  # (chunk,) each: 24 bytes a record
    fill, r0 = 0, 0
    for band in bands:
        a = 0
        while a < band.nnz:
            b = min(band.nnz, a + chunk - fill, a + PIECE_RECORDS)
            rows, cols, vals = band_records(band, r0, a, b)
            piece = (record_keys(rows, cols, seed), rows, cols, vals)
            for buffer, values in zip(buffers, piece, strict=True):
                buffer[fill : fill + b - a] = values
            fill, a = fill + b - a, b
            if fill == chunk:
                runs.append(_sorted_run(buffers, fill, folder, f"run{len(runs)}", need))
                fill = 0
        r0 += band.shape[0]
    if fill:
        runs.append(_sorted_run(buffers, fill, folder, f"run{len(runs)}", need))


def _sorted_run(
    buffers: list[np.ndarray], n: int, folder: SpillFolder, name: str, need: int | None
) -> ColumnFile:
    order = np.argsort(buffers[0][:n])  # (n,) int64; keys are distinct: one possible order
    run = ColumnFile(folder, name, RUN_DTYPES, n)
    run.need = need
    try:
        for c, buffer in enumerate(buffers):  # one gathered column at a time
            run.write(c, 0, buffer[:n][order])
    except BaseException:
        run.close()
        raise
    return run


def _merge(runs: list[ColumnFile], out: RecordFile, band_target: int) -> None:
    """Gather equal bands of the key space from every run, sort each, append it to ``out``.

    The keys are uniform over ``[0, 2**64)``, so a band of ``1 / B`` of the key space holds
    about ``n / B`` records: ``B`` is chosen so that a band is about ``band_target``.
    """
    n_bands = max(1, -(-len(out) // band_target))
    starts = [0] * len(runs)
    done = 0
    for b in range(1, n_bands + 1):
        edge = (b << 64) // n_bands  # keys below this edge belong to bands 1..b
        ends = [run.first_at_least(edge, lo) for run, lo in zip(runs, starts, strict=True)]
        m = sum(ends) - sum(starts)
        columns = [np.empty(m, t) for t in RUN_DTYPES]  # (m,) each
        at = 0
        for run, lo, hi in zip(runs, starts, ends, strict=True):
            run.read_into(lo, hi, columns, at)
            at += hi - lo
        order = np.argsort(columns[0])  # (m,)
        for c in range(1, len(RUN_DTYPES)):
            out.write(c - 1, done, columns[c][order])
        done, starts = done + m, ends
    for run in runs:
        run.close()
        run.path.unlink()
