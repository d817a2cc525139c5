"""QuantizedSubwordVectors: a fastText table quantised, still giving a vector for any word.

Two quantised matrices: the word rows (what the scans score) and the input matrix (word
rows, then n-gram buckets), from which :meth:`vector_for` averages the decoded rows of an
unseen word's bag. Each has its own codebook. Pruning first (``SubwordVectors.prune``)
drops the buckets no kept word uses, usually most of the bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from rowbook.nn.bag import bag_sum
from rowbook.vectors.quantize.cost import finish_quantized, quantize_matrix
from rowbook.vectors.quantize.matrix import QuantizedMatrix
from rowbook.vectors.quantize.saved import matrix_from_state
from rowbook.vectors.quantize.table import QuantizedVectors
from rowbook.vectors.subword import SubwordVectors, _check_kept

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["QuantizedSubwordVectors", "quantize_subword"]


class QuantizedSubwordVectors(QuantizedVectors, SubwordVectors):
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

    def _bag_mean(self, ids: np.ndarray) -> np.ndarray:
        rows = self._input.decode(ids)  # (n, d), only the bag's rows decoded
        return bag_sum(
            rows, np.arange(len(ids), dtype=np.int32), np.array([0, len(ids)]), mean=True
        )[0][0]

    @property
    def nbytes(self) -> int:
        """Bytes of both quantised matrices."""
        return self._matrix.nbytes + self._input.nbytes

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
            kept = _check_kept(kept, subword["bucket"])
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


def quantize_subword(
    vectors: SubwordVectors, method: str, options: dict, finish: dict
) -> QuantizedSubwordVectors:
    """``subword_vectors.quantize(...)``: the word rows and the input matrix quantised apart
    (``options`` and ``finish`` as in :func:`~rowbook.vectors.quantize.cost.quantize_vectors`)."""
    words = quantize_matrix(vectors.vectors, method, **options)
    input_ = quantize_matrix(vectors.input_matrix, method, **options)
    quantized = QuantizedSubwordVectors(
        vectors.index_to_key,
        words,
        input_,
        minn=vectors.minn,
        maxn=vectors.maxn,
        bucket=vectors.bucket,
        counts=vectors.counts,
        kept_buckets=vectors.kept_buckets,
    )
    before = vectors.vectors.nbytes + vectors.input_matrix.nbytes
    return finish_quantized(
        quantized, vectors, f"{method} (word rows and input matrix)", before, **finish
    )
