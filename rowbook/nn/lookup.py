"""What every table lookup checks and does before it reads a row.

``embedding`` and ``embedding_bag`` share these steps, taken in PyTorch's order:

1. the table must be a 2-D floating array ``(V, d)``;
2. ``padding_idx`` may be negative and is normalised to ``padding_idx + V``;
3. ids must be integers in ``0..V-1`` (checked before anything is modified);
4. with ``max_norm``, every row that is about to be read and whose ``norm_type``-norm
   exceeds ``max_norm`` is rescaled *in place* by ``max_norm / (norm + 1e-7)``
   (``torch.embedding_renorm_``), outside autograd;
5. with ``scale_grad_by_freq``, each position's gradient is divided by the number of
   times its id occurs in the batch (:func:`id_counts`).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from rowbook.autograd import Tensor, as_tensor
from rowbook.checks import InputIndexError, InputTypeError

__all__ = [
    "DecodedTable",
    "as_ids",
    "as_table",
    "check_bag_mode",
    "check_ids_in_range",
    "check_max_norm",
    "embedding_renorm_",
    "id_counts",
    "normalize_padding_idx",
]


@runtime_checkable
class DecodedTable(Protocol):
    """A frozen ``(V, d)`` table whose rows are decoded when read: a quantised table
    (:class:`rowbook.vectors.quantize.Int8Matrix`, :class:`~rowbook.vectors.quantize.PQMatrix`).

    ``Embedding`` and ``EmbeddingBag`` look such a table up by decoding the rows the ids
    name (float32), and it receives no gradient.
    """

    shape: tuple[int, int]

    def decode(self, rows: Any = None) -> np.ndarray:
        """Decoded float32 rows ``(*rows.shape, d)``."""


def as_table(weight: Any) -> Tensor:
    """``weight`` as a Tensor holding a 2-D floating ``(num_embeddings, embedding_dim)`` table."""
    table = weight if isinstance(weight, Tensor) else as_tensor(weight)
    if table.ndim != 2:
        raise ValueError(
            f"weight must be a 2-D (num_embeddings, embedding_dim) table, got shape {table.shape} "
            f"({table.ndim}-D)"
        )
    if table.dtype not in (np.float16, np.float32, np.float64):
        raise InputTypeError(
            f"weight must be a float16, float32 or float64 table, got dtype {table.dtype}"
        )
    return table


def as_ids(ids: Any, name: str = "ids", what: str = "token ids") -> np.ndarray:
    """Integer ids of any shape as an int64 array; floats, bools and strings are refused.

    Examples
    --------
    >>> as_ids([[2, 3], [4, 2]])
    array([[2, 3],
           [4, 2]])
    >>> as_ids([]).dtype
    dtype('int64')
    """
    raw = ids.data if isinstance(ids, Tensor) else ids
    array = np.asarray(raw)
    if array.size == 0 and not isinstance(raw, np.ndarray):
        array = array.astype(np.int64)  # ``[]`` is a float64 array to NumPy; an empty id list here
    if array.dtype == np.bool_ or array.dtype.kind not in "iu":
        raise InputTypeError(
            f"{name} must be integers ({what}), got dtype {array.dtype}; "
            f"convert with np.asarray({name}, dtype=np.int64) (after rounding, if they are floats)"
        )
    if array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
        first = int(np.argmax(array > np.iinfo(np.int64).max))  # checked before the cast wraps it
        where = tuple(int(i) for i in np.unravel_index(first, array.shape)) if array.ndim else ()
        raise InputIndexError(
            f"{name} contains {int(array.reshape(-1)[first])} at position {where}, "
            "out of range: ids must fit in int64 (and be below the table size)"
        )
    return array.astype(np.int64, copy=False)


def check_ids_in_range(
    flat: np.ndarray,
    num_embeddings: int,
    shape: tuple[int, ...],
    name: str = "ids",
    size_name: str = "num_embeddings",
) -> None:
    """Raise IndexError naming the first id outside ``0..num_embeddings-1`` and where it sits."""
    if flat.size == 0 or (flat.min() >= 0 and flat.max() < num_embeddings):
        return
    first = int(np.flatnonzero((flat < 0) | (flat >= num_embeddings))[0])
    where = tuple(int(i) for i in np.unravel_index(first, shape)) if shape else ()
    valid = f"0..{num_embeddings - 1}" if num_embeddings else "none (the table is empty)"
    raise InputIndexError(
        f"{name} contains {int(flat[first])} at position {where}, out of range: valid ids "
        f"are {valid} ({size_name}={num_embeddings})"
    )


def normalize_padding_idx(padding_idx: Any, num_embeddings: int) -> int | None:
    """``None``, or ``padding_idx`` in ``0..V-1`` (a negative one counts from the end).

    Examples
    --------
    >>> normalize_padding_idx(-1, 7)
    6
    """
    if padding_idx is None:
        return None
    if isinstance(padding_idx, bool) or not isinstance(padding_idx, int | np.integer):
        raise InputTypeError(f"padding_idx must be an int or None, got {padding_idx!r}")
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise ValueError(
            f"padding_idx must be within -{num_embeddings}..{num_embeddings - 1} for "
            f"num_embeddings={num_embeddings}, got {padding_idx}"
        )
    return int(padding_idx) + num_embeddings if padding_idx < 0 else int(padding_idx)


def _is_number_at_least_zero(x: Any) -> bool:
    """A real number >= 0 (``inf`` yes; NaN and bools no)."""
    return not isinstance(x, bool) and isinstance(x, int | float | np.number) and x >= 0


def check_max_norm(max_norm: Any, norm_type: Any) -> None:
    """``max_norm`` is None or a number >= 0; ``norm_type`` is a p >= 0 (``inf`` allowed)."""
    if max_norm is not None and not _is_number_at_least_zero(max_norm):
        raise ValueError(f"max_norm must be None or a number >= 0, got {max_norm!r}")
    if not _is_number_at_least_zero(norm_type):
        raise ValueError(
            f"norm_type must be a number p >= 0 (1, 2 and math.inf are usual), got {norm_type!r}"
        )


def embedding_renorm_(
    weight: np.ndarray, ids: np.ndarray, max_norm: float, norm_type: float = 2.0
) -> np.ndarray:
    """Rescale in place each row of ``weight`` named in ``ids`` whose norm exceeds ``max_norm``.

    Each distinct row ``r`` with ``||r||_p > max_norm`` becomes ``r * max_norm / (||r||_p + 1e-7)``
    (the scale is computed in float64 and applied in ``weight``'s dtype, as PyTorch does);
    other rows, and rows not in ``ids``, are untouched.

    Examples
    --------
    >>> w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]])
    >>> _ = embedding_renorm_(w, np.array([0, 1, 0]), max_norm=1.0)
    >>> np.round(w, 6)
    array([[0.6, 0.8],
           [0.3, 0.4],
           [6. , 8. ]])
    """
    uniq = np.unique(ids)  # a row named twice is rescaled once
    if uniq.size == 0:
        return weight
    norms = np.linalg.norm(weight[uniq].astype(np.float64), ord=norm_type, axis=1)  # (U,)
    over = norms > max_norm
    if over.any():
        scale = (max_norm / (norms[over] + 1e-7)).astype(weight.dtype)  # (K,)
        weight[uniq[over]] *= scale[:, None]
    return weight


def id_counts(ids: np.ndarray) -> np.ndarray:
    """How often each position's id occurs in ``ids`` (int64, one count per position).

    ``scale_grad_by_freq`` divides each position's gradient by this count.

    Examples
    --------
    >>> id_counts(np.array([2, 3, 2, 2]))
    array([3, 1, 3, 3])
    """
    _, inverse, counts = np.unique(ids, return_inverse=True, return_counts=True)
    return counts[inverse.reshape(-1)]


def check_bag_mode(mode: Any, scale_grad_by_freq: bool = False, sparse: bool = False) -> None:
    """``mode`` is one of sum, mean, max; max supports neither option (as in PyTorch)."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("mode='max' does not support scale_grad_by_freq=True (as in PyTorch)")
    if mode == "max" and sparse:
        raise ValueError(
            "mode='max' does not support sparse=True gradients (as in PyTorch); "
            "use sparse=False or mode='sum'/'mean'"
        )
