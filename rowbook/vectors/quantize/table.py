"""QuantizedVectors: keys over a quantised table, answering the queries of :class:`Vectors`.

One file over 400 lines on purpose: both classes live here, beside their one file format,
so that reading a file picks its class in one place (apart, the file's reader and the
subword class would import each other).

A :class:`QuantizedVectors` holds the keys, the counts and a
:class:`~rowbook.vectors.quantize.matrix.QuantizedMatrix`; it is what
``Vectors.quantize(...)`` returns and what ``Vectors.load`` gives for a quantised file. It
answers every query of :class:`~rowbook.vectors.Vectors` through the three places queries
read rows (``_rows``, ``_unit_rows``, ``_cosines``):

* a **scan** (``most_similar``, ``most_similar_cosmul``, ``distances``, the analogy
  evaluation) scores the codes: the cosine of the query with each decoded row, computed
  without decoding (see :mod:`rowbook.vectors.quantize.matrix`);
* a **row** (``table["king"]``, ``similarity``, the inputs of a query) is decoded.

**Re-ranking.** :meth:`QuantizedVectors.link` ties the table to its float table, mapped
from its file: single rows are then read exactly from that file, and the best ``rerank``
candidates of every scan (the 100 best, by default) are re-scored exactly against it. The
codes choose the candidates, the float rows decide the order. The rows are read with
``pread`` (:class:`~rowbook.vectors.mapped.FileRows`), so the queries leave no pages of
the float file resident in the process: its memory is the keys and the codes. The link is saved with the quantised file (the float file's
path, size and time) and restored by ``load`` when the file is still there, unchanged.

A quantised table is frozen: it has the queries of a
:class:`~rowbook.vectors.searchable.SearchableTable` but not the editing of
:class:`~rowbook.vectors.Vectors` (edit the float table and quantise it again). A faiss
index (``build_index``) can be built over its decoded rows; it holds float copies of them.

:class:`QuantizedSubwordVectors` is a fastText table quantised: two quantised matrices, the
word rows (what the scans score) and the input matrix (word rows, then n-gram buckets), from
which ``vector_for`` averages the decoded rows of an unseen word's bag.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np

from rowbook.checks import InputTypeError, check_finite, check_int
from rowbook.io import fields_of, load_state, save_state
from rowbook.vectors.calibrate import RECALL, Calibration, calibrate_rerank, check_recall
from rowbook.vectors.keys import read_only
from rowbook.vectors.mapped import FileRows, maps_a_file
from rowbook.vectors.neighbors import unit_rows
from rowbook.vectors.prune import kept_rows, kept_subword_rows, say_pruned
from rowbook.vectors.quantize.matrix import QuantizedMatrix
from rowbook.vectors.quantize.saved import matrix_from_state
from rowbook.vectors.searchable import SearchableTable
from rowbook.vectors.subword_bags import SubwordBags, check_kept
from rowbook.vectors.table import KeyedTable

__all__ = ["QUANTIZED_KIND", "QuantizedSubwordVectors", "QuantizedVectors"]

QUANTIZED_KIND = "quantized vectors"
PathLike = str | os.PathLike[str]


class QuantizedVectors(SearchableTable):
    """Keys over a quantised table: the queries of :class:`~rowbook.vectors.Vectors`, rows decoded.

    Parameters
    ----------
    keys : sequence of str
        One unique key per row, in row order.
    matrix : QuantizedMatrix
        The rows: an :class:`~rowbook.vectors.quantize.matrix.Int8Matrix` or a
        :class:`~rowbook.vectors.quantize.matrix.PQMatrix`.
    counts : array_like, optional
        ``(V,)`` corpus counts.

    Attributes
    ----------
    cost : QuantizationCost or None
        What quantising cost (bytes, and the measured loss with ``report=True``), when this
        table was made by ``Vectors.quantize``.
    rerank : int or None
        Best code-scored rows re-scored exactly when linked (:meth:`link`).
    calibration : Calibration or None
        How :meth:`link` chose ``rerank`` for the recall asked (None when it was given).

    Examples
    --------
    >>> from rowbook import Vectors
    >>> table = Vectors(["king", "queen", "apple"], [[1.0, 0.1], [0.9, 0.2], [-0.2, 1.0]])
    >>> small = table.quantize("int8", verbose=False)
    >>> small.most_similar("king", topn=1)   # the float table says 0.99293
    [('queen', 0.99333)]
    >>> small.matrix
    Int8Matrix(3 x 2, 26 bytes)
    """

    def __init__(
        self, keys: Any, matrix: QuantizedMatrix, counts: np.ndarray | None = None
    ) -> None:
        if not isinstance(matrix, QuantizedMatrix):
            raise InputTypeError(
                f"matrix must be an Int8Matrix or PQMatrix, got {type(matrix).__name__}"
            )
        self._set_keys(keys, counts, len(matrix), "quantised rows")
        self._matrix = matrix
        self._vectors = self._owned = None  # no float table: rows come from the codes
        self._norms = self._unit = self.vector_index = None
        self._mapped, self._allow_nonfinite = maps_a_file(matrix.codes), False
        self.path: Path | None = None
        self._float: KeyedTable | None = None  # the linked float table, mapped
        self._float_rows: FileRows | None = None  # its rows read from its file (pread)
        self.rerank: int | None = None
        self.calibration: Calibration | None = None  # how rerank was chosen, if measured
        self.cost = None

    # -- what the table holds ----------------------------------------------------------

    @property
    def matrix(self) -> QuantizedMatrix:
        """The quantised rows (for ``Embedding.from_pretrained`` and ``EmbeddingBag``)."""
        return self._matrix

    @property
    def float_table(self) -> KeyedTable | None:
        """The float table this one is linked to (:meth:`link`), or None."""
        return self._float

    @property
    def vector_size(self) -> int:
        return self._matrix.dim

    @property
    def nbytes(self) -> int:
        """Bytes of the quantised rows (codes, scales, codebooks)."""
        return self._matrix.nbytes

    @property
    def vectors(self) -> np.ndarray:
        """Every row decoded, (V, d) float32: a full-size float table in memory."""
        return read_only(self._matrix.decode())

    @property
    def norms(self) -> np.ndarray:
        """Norm of every decoded row, (V,) float32."""
        return self._matrix.norms()

    def fill_norms(self, force: bool = False) -> None:
        """Compute the norms the scans divide by, once (``|u^|`` of every row)."""
        self._matrix.direction_norms()

    def get_normed_vectors(self) -> np.ndarray:
        """Every decoded row scaled to unit length, (V, d) float32: a full-size table in memory."""
        if self._unit is None:
            self._unit = read_only(unit_rows(self._matrix.decode())[1])
        return self._unit

    def __repr__(self) -> str:
        linked = f", linked to {self._float.path or 'a float table'}" if self._float else ""
        return (
            f"{type(self).__name__}(n_keys={len(self)}, vector_size={self.vector_size}, "
            f"{self._matrix.method}, {self._matrix.nbytes:,} bytes{linked})"
        )

    # -- how queries read rows ---------------------------------------------------------

    def rows_at(self, index: Any) -> np.ndarray:
        """Rows decoded from the codes, or read exactly from the linked float table."""
        if self._float_rows is not None:
            return self._float_rows[index]
        if self._float is not None:
            return self._float.rows_at(index)
        return self._matrix.decode(index)

    def unit_rows_at(self, index: Any) -> np.ndarray:
        if self._float_rows is not None:
            return unit_rows(self._float_rows[index].astype(np.float32, copy=False))[1]
        if self._float is not None:
            return self._float.unit_rows_at(index)
        return unit_rows(self._matrix.decode(index))[1]

    def cosines(self, queries: np.ndarray, stop: int) -> np.ndarray:
        """Cosines scored from the codes, without decoding (estimates: see :meth:`rerank_pool`)."""
        check_finite("queries", queries)
        scores = self._matrix.cosines(queries, stop)  # (Q, stop)
        return scores[0] if queries.ndim == 1 else scores

    def rerank_pool(self, wanted: int) -> int | None:
        if self._float is None or not self.rerank:
            return None
        return max(self.rerank, wanted)

    # -- re-ranking against the float table ----------------------------------------------

    def link(
        self,
        float_table: KeyedTable | PathLike,
        rerank: int | None = None,
        *,
        recall: float = RECALL,
        verbose: bool = True,
    ) -> Self:
        """Tie this table to its float table for exact rows and re-ranked scans.

        ``float_table`` is a :class:`~rowbook.vectors.Vectors` (best mapped:
        ``Vectors.load(path, mmap=True)``) or the path of a rowbook ``.npz`` / safetensors
        file, which is then mapped. Its keys must be this table's. ``rerank`` candidates of
        every scan are re-scored exactly (0: none, rows are still read exactly). With no
        ``rerank``, it is measured for ``recall`` (recall@10 of the re-ranked answers, 0.95
        by default): 1,000 keys are asked of the codes and of the float table's exact scan,
        and the pool is the fewest best code-scored rows that hold the true neighbours
        often enough (:func:`rowbook.vectors.calibrate.calibrate_rerank`; one pass over the
        float table, printed once, kept in :attr:`calibration` and saved with the link).
        """
        if rerank is not None:
            rerank = check_int("rerank", rerank, 0)
        target = check_recall(recall, allow_none=False)
        if isinstance(float_table, QuantizedVectors):
            raise InputTypeError("link a float table, not another quantised one")
        if not isinstance(float_table, KeyedTable):
            float_table = SearchableTable.load(float_table, mmap=True)
        if float_table.index_to_key != self._keys or float_table.vector_size != self.vector_size:
            raise ValueError(
                f"the float table ({len(float_table)} x {float_table.vector_size}) "
                f"does not hold this table's {len(self)} keys in the same order "
                f"with vector_size {self.vector_size}; link the table these codes "
                "were made from"
            )
        self._float, self.rerank, self.calibration = float_table, rerank, None
        self._float_rows = FileRows.of(float_table.vectors) if float_table.mapped else None
        if rerank is None:
            self.calibration = calibrate_rerank(
                lambda q: self._matrix.cosines(q, len(self)),
                lambda q: float_table.cosines(q, len(self)),
                self.unit_rows_at,
                len(self),
                target,
            )
            self.rerank = self.calibration.value
            if verbose:
                print(f"{self!r}: {self.calibration}", file=sys.stderr)
        return self

    def unlink(self) -> None:
        """Drop the link: rows are decoded and scans ranked by the codes alone."""
        self._float, self._float_rows, self.rerank, self.calibration = None, None, None, None

    # -- smaller tables ----------------------------------------------------------------

    def vectors_for_all(self, keys: Any) -> Self:
        """A quantised table of the given keys this one holds, deduplicated, in order: their
        codes (and counts) taken as they are."""
        rows = [self.get_index(key) for key in dict.fromkeys(keys) if key in self]
        return self._taken(np.array(rows, dtype=np.int64))

    def prune(self, keep: int, *, verbose: bool = True) -> Self:
        """The ``keep`` most frequent keys (see :meth:`rowbook.vectors.Vectors.prune`): their
        codes taken, the codebooks kept; prints the bytes saved unless ``verbose=False``."""
        pruned = self._taken(kept_rows(self, keep))
        say_pruned(verbose, len(self), len(pruned), self.nbytes, pruned.nbytes)
        return pruned

    def _taken(self, rows: np.ndarray) -> Self:
        counts = None if self._counts is None else self._counts[rows]
        return QuantizedVectors([self._keys[i] for i in rows], self._matrix.take(rows), counts)

    def build_index(self, kind: str = "hnsw", **options: Any) -> Any:
        """A faiss index over the decoded unit rows (see :meth:`Vectors.build_index`).

        faiss's HNSW and IVF indexes hold float32 copies of the rows, so the index weighs
        what the float table does: build one where the queries' speed matters more than
        memory. Candidates are then scored from the codes, or exactly when linked.
        """
        return super().build_index(kind, **options)  # recall measured on the decoded rows

    # -- files -------------------------------------------------------------------------

    def save(self, path: PathLike) -> None:
        """Write keys, counts, codes and codebooks (and the link, if any) to one ``.npz``,
        atomically, pickle-free (kind ``"quantized vectors"``)."""
        save_state(path, self._state(), kind=QUANTIZED_KIND)

    def _state(self) -> dict[str, Any]:
        link = None
        if self._float is not None and self._float.path is not None:
            source = Path(self._float.path).resolve()
            stat = source.stat()
            link = {
                "path": str(source),
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                "rerank": self.rerank,
                "calibration": None if self.calibration is None else self.calibration.to_dict(),
            }
        return {
            "keys": list(self._keys),
            "counts": self._counts,
            "matrix": self._matrix.get_state(),
            "link": link,
            "subword": None,
        }

    @classmethod
    def load(cls, path: PathLike, *, mmap: bool = False, link: bool = True) -> QuantizedVectors:
        """Read a file written by :meth:`save`, every field checked; a subword table comes
        back as :class:`~rowbook.vectors.quantize.subword.QuantizedSubwordVectors`.

        ``mmap`` maps the codes instead of reading them. With ``link`` (default) a saved link
        is restored if the float file is still there with the same size and time; otherwise
        a warning says so and the table answers from its codes alone.
        """
        state = load_state(path, kind=QUANTIZED_KIND, mmap_mode="r" if mmap else None)
        with fields_of(path, "quantized vectors file"):
            table = _from_state(state, f"{path}")
        table.path = Path(path) if table.mapped else None
        record = state.get("link")
        if link and record is not None:
            _restore_link(table, record, path)
        return table


class QuantizedSubwordVectors(SubwordBags, QuantizedVectors):
    """A :class:`~rowbook.vectors.SubwordVectors` whose word rows and input matrix are quantised.

    Parameters
    ----------
    keys : sequence of str
        The vocabulary words.
    matrix : QuantizedMatrix
        The quantised word rows (``nwords`` of them).
    input_matrix : QuantizedMatrix
        The quantised input matrix (``nwords + bucket`` rows, or fewer when pruned).
    minn, maxn, bucket, counts, kept_buckets
        As in :class:`~rowbook.vectors.SubwordVectors`.
    """

    def __init__(
        self,
        keys: Sequence[str],
        matrix: QuantizedMatrix,
        input_matrix: QuantizedMatrix,
        *,
        minn: int,
        maxn: int,
        bucket: int,
        counts: np.ndarray | None = None,
        kept_buckets: np.ndarray | None = None,
    ) -> None:
        QuantizedVectors.__init__(self, keys, matrix, counts)
        buckets = self._set_subwords(minn, maxn, bucket, kept_buckets)
        if not isinstance(input_matrix, QuantizedMatrix) or input_matrix.shape != (
            len(self._keys) + buckets,
            matrix.dim,
        ):
            raise ValueError(
                f"input_matrix must be a quantised ({len(self._keys)} + {buckets}, "
                f"{matrix.dim}) table, got {input_matrix!r}"
            )
        self._input = input_matrix

    def _input_rows(self, ids: np.ndarray) -> np.ndarray:
        return self._input.decode(ids)  # (n, d): only the bag's rows decoded

    @property
    def nbytes(self) -> int:
        """Bytes of both quantised matrices."""
        return self._matrix.nbytes + self._input.nbytes

    def prune(self, keep: int, *, verbose: bool = True) -> Self:
        """The ``keep`` most frequent words and the buckets their bags use, codes taken as
        they are (see :meth:`rowbook.vectors.SubwordVectors.prune`)."""
        kept = kept_subword_rows(self, keep)
        pruned = type(self)(
            kept.words,
            self._matrix.take(kept.rows),
            self._input.take(kept.input_rows),
            minn=self.minn,
            maxn=self.maxn,
            bucket=self.bucket,
            counts=None if self._counts is None else self._counts[kept.rows],
            kept_buckets=kept.buckets,
        )
        detail = f", {len(kept.buckets):,} of {self.bucket:,} n-gram buckets"
        say_pruned(verbose, len(self), len(kept.words), self.nbytes, pruned.nbytes, detail)
        return pruned

    def _state(self) -> dict[str, Any]:
        state = super()._state()
        state["subword"] = {
            "minn": self.minn,
            "maxn": self.maxn,
            "bucket": self.bucket,
            "input": self._input.get_state(),
            "kept_buckets": self._kept,
        }
        return state

    @classmethod
    def from_state(
        cls,
        keys: list[str],
        matrix: QuantizedMatrix,
        counts: np.ndarray | None,
        subword: Any,
        where: str,
    ) -> QuantizedSubwordVectors:
        """The table a quantised file's ``subword`` field describes, every field checked."""
        if not isinstance(subword, dict) or not all(
            isinstance(subword.get(k), int)
            and not isinstance(subword.get(k), bool)
            and subword.get(k) >= 0
            for k in ("minn", "maxn", "bucket")
        ):
            raise ValueError(f"{where}: 'subword' must hold integers minn, maxn, bucket >= 0")
        kept = subword.get("kept_buckets")
        if kept is not None and not (isinstance(kept, np.ndarray) and kept.dtype.kind in "iu"):
            raise ValueError(f"{where}: 'subword.kept_buckets' must be None or integers")
        try:
            kept = check_kept(kept, subword["bucket"])
        except ValueError as err:
            raise ValueError(f"{where}: 'subword.{err}") from None
        rows = len(keys) + (subword["bucket"] if kept is None else len(kept))
        input_ = matrix_from_state(subword.get("input"), f"{where}: 'subword.input'", rows)
        if input_.dim != matrix.dim:
            raise ValueError(
                f"{where}: 'subword.input' has {input_.dim} columns, the word "
                f"rows {matrix.dim}; the file is damaged"
            )
        if len(set(keys)) != len(keys):
            raise ValueError(f"{where}: 'keys' must be unique; the file repeats some")
        return cls(
            keys,
            matrix,
            input_,
            minn=subword["minn"],
            maxn=subword["maxn"],
            bucket=subword["bucket"],
            counts=counts,
            kept_buckets=kept,
        )


def _from_state(state: Any, where: str) -> QuantizedVectors:
    if not isinstance(state, dict):
        raise ValueError(f"{where}: a quantized vectors file holds an object")
    keys, counts = state.get("keys"), state.get("counts")
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise ValueError(f"{where}: 'keys' must be a list of strings")
    matrix = matrix_from_state(state.get("matrix"), f"{where}: 'matrix'", len(keys))
    if counts is not None and not (
        isinstance(counts, np.ndarray)
        and counts.shape == (len(keys),)
        and counts.dtype.kind in "iu"
        and not (counts < 0).any()
    ):
        raise ValueError(f"{where}: 'counts' must be None or {len(keys)} integers >= 0")
    subword = state.get("subword")
    if subword is not None:
        return QuantizedSubwordVectors.from_state(keys, matrix, counts, subword, where)
    if len(set(keys)) != len(keys):
        raise ValueError(f"{where}: 'keys' must be unique; the file repeats some")
    return QuantizedVectors(keys, matrix, counts)


def _restore_link(table: QuantizedVectors, record: Any, path: PathLike) -> None:
    fields = ("path", "size", "mtime_ns", "rerank")
    if not (
        isinstance(record, dict)
        and isinstance(record.get("path"), str)
        and all(isinstance(record.get(k), int) for k in fields[1:])
    ):
        raise ValueError(f"{path}: 'link' must be None or an object with {', '.join(fields)}")
    source = Path(record["path"])
    try:
        stat = source.stat()
    except OSError:
        stat = None
    if stat is None or (stat.st_size, stat.st_mtime_ns) != (record["size"], record["mtime_ns"]):
        state = "is missing" if stat is None else "has changed since"
        warnings.warn(
            f"{path}: its float table {source} {state} the codes were linked to it; "
            "queries use the codes alone (link(path) to re-link)",
            UserWarning,
            stacklevel=3,
        )
        return
    table.link(source, rerank=record["rerank"])
    saved = record.get("calibration")  # absent in files written before the calibration
    if saved is not None:
        table.calibration = Calibration.from_dict(saved, f"{path}: 'link'")
