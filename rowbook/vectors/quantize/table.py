"""QuantizedVectors: keys over a quantised table, answering the queries of :class:`Vectors`.

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

A quantised table is frozen: no ``add_vectors``, no ``unit_normalize_all``. A faiss index
(``build_index``) can be built over its decoded rows; it holds float copies of them.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any, Self

import numpy as np

from rowbook.checks import InputTypeError, check_int
from rowbook.io import fields_of, load_state, save_state
from rowbook.vectors.calibrate import RECALL, Calibration, calibrate_rerank, check_recall
from rowbook.vectors.core import Vectors
from rowbook.vectors.mapped import FileRows, maps_a_file
from rowbook.vectors.neighbors import unit_rows
from rowbook.vectors.quantize.matrix import QuantizedMatrix
from rowbook.vectors.quantize.saved import matrix_from_state

__all__ = ["QUANTIZED_KIND", "QuantizedVectors"]

QUANTIZED_KIND = "quantized vectors"
PathLike = str | os.PathLike[str]


class QuantizedVectors(Vectors):
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
        self._norms = self._unit = self._index = None
        self._mapped = maps_a_file(matrix.codes)
        self.path: Path | None = None
        self._float: Vectors | None = None  # the linked float table, mapped
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
    def float_table(self) -> Vectors | None:
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
        return _read_only(self._matrix.decode())

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
            self._unit = _read_only(unit_rows(self._matrix.decode())[1])
        return self._unit

    def __repr__(self) -> str:
        linked = f", linked to {self._float.path or 'a float table'}" if self._float else ""
        return (
            f"{type(self).__name__}(n_keys={len(self)}, vector_size={self.vector_size}, "
            f"{self._matrix.method}, {self._matrix.nbytes:,} bytes{linked})"
        )

    # -- how queries read rows ---------------------------------------------------------

    def _rows(self, index: Any) -> np.ndarray:
        if self._float_rows is not None:
            return self._float_rows[index]
        if self._float is not None:
            return self._float._rows(index)
        return self._matrix.decode(index)

    def _unit_rows(self, index: Any) -> np.ndarray:
        if self._float_rows is not None:
            return unit_rows(self._float_rows[index].astype(np.float32, copy=False))[1]
        if self._float is not None:
            return self._float._unit_rows(index)
        return unit_rows(self._matrix.decode(index))[1]

    def _cosines(self, queries: np.ndarray, stop: int) -> np.ndarray:
        scores = self._matrix.cosines(queries, stop)  # (Q, stop)
        return scores[0] if queries.ndim == 1 else scores

    def _rerank_pool(self, wanted: int) -> int | None:
        if self._float is None or not self.rerank:
            return None
        return max(self.rerank, wanted)

    # -- re-ranking against the float table ----------------------------------------------

    def link(
        self,
        float_table: Vectors | PathLike,
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
        by default): 300 keys are asked of the codes and of the float table's exact scan,
        and the pool is the fewest best code-scored rows that hold the true neighbours
        often enough (:func:`rowbook.vectors.calibrate.calibrate_rerank`; one pass over the
        float table, printed once, kept in :attr:`calibration` and saved with the link).
        """
        if rerank is not None:
            rerank = check_int("rerank", rerank, 0)
        target = check_recall(recall, allow_none=False)
        if not isinstance(float_table, Vectors):
            float_table = Vectors.load(float_table, mmap=True)
        if isinstance(float_table, QuantizedVectors):
            raise InputTypeError("link a float table, not another quantised one")
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
                lambda q: float_table._cosines(q, len(self)),
                self._unit_rows,
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

    # -- frozen ------------------------------------------------------------------------

    def add_vectors(self, *args: Any, **kwargs: Any) -> None:
        raise InputTypeError(_FROZEN)

    def __setitem__(self, keys: Any, weights: Any) -> None:
        raise InputTypeError(_FROZEN)

    def unit_normalize_all(self) -> None:
        raise InputTypeError(_FROZEN)

    def vectors_for_all(self, keys: Any) -> Vectors:
        """A float :class:`~rowbook.vectors.Vectors` of the given keys' decoded rows."""
        chosen = [key for key in dict.fromkeys(keys) if key in self]
        rows = (
            self._rows([self.get_index(k) for k in chosen])
            if chosen
            else np.zeros((0, self.vector_size))
        )
        counts = None if self._counts is None else self._counts[[self.get_index(k) for k in chosen]]
        return Vectors(chosen, rows, counts)

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


_FROZEN = (
    "a quantised table is frozen: edit the float table and quantise it again "
    "(vectors_for_all gives a float table of chosen keys)"
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
        from rowbook.vectors.quantize.subword import QuantizedSubwordVectors

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


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array
