r"""Embedding and EmbeddingBag: layers that hold a ``(V, d)`` table and read rows by id.

The layers only store the table and the options; the math lives in
:func:`rowbook.nn.functional.embedding` and :func:`rowbook.nn.functional.embedding_bag`.
Both follow PyTorch 2.13's ``nn.Embedding`` / ``nn.EmbeddingBag`` (constructor, defaults,
initialisation N(0, 1), padding row, ``max_norm``, ``from_pretrained``, ``extra_repr``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rowbook.autograd import Tensor
from rowbook.checks import InputTypeError, check_finite_rows, check_int
from rowbook.nn import functional as F
from rowbook.nn import init
from rowbook.nn.functional import Mode
from rowbook.nn.lookup import (
    DecodedTable,
    check_bag_mode,
    check_max_norm,
    normalize_padding_idx,
)
from rowbook.nn.module import Module, Parameter

__all__ = ["Embedding", "EmbeddingBag"]


def _table(
    num_embeddings: int, embedding_dim: int, weight: Any, freeze: bool, dtype: Any
) -> Parameter:
    """The layer's Parameter: a new (V, d) array, or ``weight`` itself (memory shared); a
    quantised table (a :class:`~rowbook.nn.lookup.DecodedTable`) is kept as it is, frozen."""
    if weight is None:
        data = np.empty((num_embeddings, embedding_dim), dtype=dtype)  # (V, d)
        return Parameter(data, requires_grad=not freeze)
    if isinstance(weight, DecodedTable):
        if not freeze:
            raise ValueError(
                "a quantised table is frozen: pass freeze=True (from_pretrained's "
                "default); to train, start from the float table"
            )
        if tuple(weight.shape) != (num_embeddings, embedding_dim):
            raise ValueError(
                f"_weight has shape {tuple(weight.shape)}, expected "
                f"{(num_embeddings, embedding_dim)}"
            )
        return weight
    data = weight.data if isinstance(weight, Tensor) else np.asarray(weight)
    if data.shape != (num_embeddings, embedding_dim):
        raise ValueError(
            f"_weight has shape {data.shape}, expected (num_embeddings, embedding_dim) = "
            f"{(num_embeddings, embedding_dim)}"
        )
    if data.dtype.kind != "f":
        raise InputTypeError(
            f"the embedding table must be floating (float32/float64), got {data.dtype}"
        )
    return Parameter(data, requires_grad=not freeze)


def _values(embeddings: Any) -> np.ndarray:
    """The array of a table given as a ``Tensor`` or anything ``np.asarray`` reads."""
    return np.asarray(embeddings.data if isinstance(embeddings, Tensor) else embeddings)


def _check_finite(embeddings: Any, allow_nonfinite: bool) -> None:
    """Refuse a table holding ``inf`` / ``nan`` (a quantised table is not decoded for it: its
    rows are decoded as they are looked up)."""
    if not isinstance(embeddings, DecodedTable):
        check_finite_rows("embeddings", _values(embeddings), allow_nonfinite=allow_nonfinite)


def _pretrained_shape(embeddings: Any) -> tuple[int, int]:
    if isinstance(embeddings, DecodedTable):
        return tuple(embeddings.shape)
    shape = np.shape(_values(embeddings))
    if len(shape) != 2:
        raise ValueError(
            f"embeddings must be a 2-D (num_embeddings, embedding_dim) table, got shape {shape}"
        )
    return shape[0], shape[1]


class Embedding(Module):
    r"""A learnable table of ``num_embeddings`` vectors of size ``embedding_dim``, read by id.

    Looking up id ``i`` is the product of its one-hot row with the table,
    ``E[i] = one_hot(i) @ E``, computed as a row gather; the gradient
    ``dE = one_hot(ids).T @ G`` is a scatter-add into the looked-up rows only.

    Parameters
    ----------
    num_embeddings
        V, the number of rows (ids ``0..V-1``).
    embedding_dim
        d, the size of each row.
    padding_idx
        a row (negative counts from the end) zeroed at initialisation that never
        receives a gradient.
    max_norm
        rescale looked-up rows whose ``norm_type``-norm exceeds it, in place, before
        each lookup.
    norm_type
        the p of that norm. Default 2.
    scale_grad_by_freq
        divide each position's gradient by its id's count in the batch.
    sparse
        ``weight.grad`` becomes a :class:`~rowbook.autograd.RowSparse` of the touched rows.
    dtype
        dtype of a new table (float32 default).
    rng
        ``numpy.random.Generator`` or seed for the N(0, 1) initialisation.

    Attributes
    ----------
    weight
        Parameter of shape ``(num_embeddings, embedding_dim)``, initialised from N(0, 1).

    Shape
    -----
    - Input: ``(*)``, integer ids of any shape
    - Output: ``(*, embedding_dim)``

    Examples
    --------
    >>> emb = Embedding(10, 3, padding_idx=0, rng=0)
    >>> emb([[1, 2], [0, 9]]).shape
    (2, 2, 3)
    >>> emb
    Embedding(10, 3, padding_idx=0)
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        *,
        _weight: Any = None,
        _freeze: bool = False,
        dtype: Any = np.float32,
        rng: Any = None,
    ) -> None:
        self.num_embeddings = check_int("num_embeddings", num_embeddings, 0)
        self.embedding_dim = check_int("embedding_dim", embedding_dim, 0)
        self.padding_idx = normalize_padding_idx(padding_idx, self.num_embeddings)
        check_max_norm(max_norm, norm_type)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = bool(scale_grad_by_freq)
        self.sparse = bool(sparse)
        self.weight = _table(self.num_embeddings, self.embedding_dim, _weight, _freeze, dtype)
        if _weight is None:
            self.reset_parameters(rng=rng)

    def reset_parameters(self, rng: Any = None) -> None:
        """Draw the table from N(0, 1) (PyTorch's default), then zero the padding row."""
        init.normal_(self.weight, rng=rng)
        if self.padding_idx is not None:
            self.weight.data[self.padding_idx] = 0

    def forward(self, ids: Any) -> Tensor:
        return F.embedding(
            ids,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        return _settings_repr(
            self,
            padding_idx=None,
            max_norm=None,
            norm_type=2,
            scale_grad_by_freq=False,
            sparse=False,
        )

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Any,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        *,
        allow_nonfinite: bool = False,
    ) -> Embedding:
        """A layer over an existing ``(V, d)`` table, sharing its memory.

        ``embeddings`` may be a quantised table (``QuantizedVectors.matrix``): rows are then
        decoded as they are looked up, and the table stays frozen (no gradient, not among
        ``parameters()``, not in ``state_dict()``).

        The padding row is *not* zeroed (the table is used as given); ``freeze=True``
        (default) makes the table non-trainable (``weight.requires_grad = False``). A table
        holding ``inf`` or ``nan`` is refused, naming the row, unless ``allow_nonfinite``
        (torch takes it as is; every output and gradient through such a row is ``nan``).

        Examples
        --------
        >>> emb = Embedding.from_pretrained(np.array([[1.0, 2.3, 3.0], [4.0, 5.1, 6.3]]))
        >>> emb([1]).numpy()
        array([[4. , 5.1, 6.3]])
        """
        rows, cols = _pretrained_shape(embeddings)
        _check_finite(embeddings, allow_nonfinite)
        return cls(
            rows,
            cols,
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=embeddings,
            _freeze=freeze,
        )


class EmbeddingBag(Module):
    r"""Sums, means or maxes of bags of rows of a table, without building the rows.

    For ``mode="sum"`` the output of bag b is ``sum_k w_k E[ids_k]`` over its positions
    (``w_k`` = per-sample weight or 1); ``"mean"`` divides by the number of non-padding ids;
    ``"max"`` takes the column-wise max. Equivalently ``out = M @ E`` with ``M`` the (B, V)
    bag-count matrix. Padding ids are left out of every bag; empty bags give zeros.

    Parameters
    ----------
    num_embeddings, embedding_dim, max_norm, norm_type, scale_grad_by_freq, sparse, dtype, rng
        As in :class:`Embedding`.
    mode
        ``"sum"``, ``"mean"`` (default) or ``"max"``; max supports neither
        ``scale_grad_by_freq`` nor ``sparse``.
    include_last_offset
        offsets carry the end of the last bag as an extra entry.
    padding_idx
        row excluded from the bags, zeroed at initialisation, never updated.

    Shape
    -----
    - Input: ``(B, N)`` bags of N ids, or ``(n,)`` ids with offsets ``(B,)``
      (``(B + 1,)`` with include_last_offset); per_sample_weights as the input
    - Output: ``(B, embedding_dim)``

    Examples
    --------
    >>> bag = EmbeddingBag.from_pretrained(np.eye(3), mode="sum")
    >>> bag([0, 2, 2, 1], offsets=[0, 3]).numpy()
    array([[1., 0., 2.],
           [0., 1., 0.]])
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: Mode = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        *,
        _weight: Any = None,
        _freeze: bool = False,
        dtype: Any = np.float32,
        rng: Any = None,
    ) -> None:
        self.num_embeddings = check_int("num_embeddings", num_embeddings, 0)
        self.embedding_dim = check_int("embedding_dim", embedding_dim, 0)
        check_max_norm(max_norm, norm_type)
        check_bag_mode(mode, scale_grad_by_freq, sparse)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = bool(scale_grad_by_freq)
        self.mode = mode
        self.sparse = bool(sparse)
        self.include_last_offset = bool(include_last_offset)
        self.padding_idx = normalize_padding_idx(padding_idx, self.num_embeddings)
        self.weight = _table(self.num_embeddings, self.embedding_dim, _weight, _freeze, dtype)
        if _weight is None:
            self.reset_parameters(rng=rng)

    reset_parameters = Embedding.reset_parameters

    def forward(self, ids: Any, offsets: Any = None, per_sample_weights: Any = None) -> Tensor:
        return F.embedding_bag(
            ids,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self) -> str:
        return _settings_repr(
            self,
            max_norm=None,
            norm_type=2,
            scale_grad_by_freq=False,
            mode=None,  # always shown, as PyTorch shows it
            padding_idx=None,
        )

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Any,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: Mode = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        *,
        allow_nonfinite: bool = False,
    ) -> EmbeddingBag:
        """A bag layer over an existing ``(V, d)`` table (memory shared, padding row kept;
        ``inf`` / ``nan`` refused unless ``allow_nonfinite``, as :meth:`Embedding.from_pretrained`);
        a quantised table is decoded as it is read, and stays frozen."""
        rows, cols = _pretrained_shape(embeddings)
        _check_finite(embeddings, allow_nonfinite)
        return cls(
            rows,
            cols,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            include_last_offset,
            padding_idx,
            _weight=embeddings,
            _freeze=freeze,
        )


def _settings_repr(layer: Module, **defaults: Any) -> str:
    """``V, d``, then ``name=value`` for each setting in ``defaults`` whose value in ``layer``
    is not the default given (PyTorch's repr of the two layers)."""
    shown = [f"{layer.num_embeddings}, {layer.embedding_dim}"]
    for name, default in defaults.items():
        value = getattr(layer, name)
        if value != default:
            shown.append(f"{name}={value!r}")
    return ", ".join(shown)
