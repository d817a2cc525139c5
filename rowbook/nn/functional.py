r"""Stateless math: ``one_hot``, ``embedding``, ``embedding_bag``, ``linear``, and re-exported
from the modules beside it, the losses (:mod:`~rowbook.nn.loss`), the activations and dropout
(:mod:`~rowbook.nn.activation`), the normalisations (:mod:`~rowbook.nn.normalization`) and
attention (:mod:`~rowbook.nn.sdpa`).

One file over 400 lines on purpose: the embedding and bag lookups share their checks and
their sparse and quantised paths; the other families of functions already live in the
modules it re-exports.

A layer stores a table; these functions compute with a table passed in (PyTorch's
``nn.Embedding`` -> ``F.embedding``). The lookup is the matrix product it replaces,

    E[ids] = one_hot(ids) @ E        dE = one_hot(ids).T @ G

computed as a gather of rows (forward) and a scatter-add into the looked-up rows
(backward, duplicate ids summing), never by building ``one_hot(ids)``.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from rowbook.autograd import Tensor, as_tensor, gather_rows, scatter_add_rows
from rowbook.checks import InputTypeError
from rowbook.nn.activation import dropout, gelu, silu
from rowbook.nn.bag import (
    bag_bounds,
    bag_max,
    bag_max_backward,
    bag_of_positions,
    bag_scatter_add,
    bag_sum,
)
from rowbook.nn.lookup import (
    DecodedTable,
    as_ids,
    as_table,
    check_bag_mode,
    check_ids_in_range,
    check_max_norm,
    embedding_renorm_,
    id_counts,
    normalize_padding_idx,
)
from rowbook.nn.loss import binary_cross_entropy_with_logits, cross_entropy, mse_loss
from rowbook.nn.normalization import layer_norm, rms_norm
from rowbook.nn.sdpa import scaled_dot_product_attention

__all__ = [
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "dropout",
    "embedding",
    "embedding_bag",
    "gelu",
    "layer_norm",
    "linear",
    "mse_loss",
    "one_hot",
    "rms_norm",
    "scaled_dot_product_attention",
    "silu",
]

Mode = Literal["sum", "mean", "max"]


def one_hot(ids: Any, num_classes: int = -1, *, dtype: Any = np.int64) -> Tensor:
    """``O[..., v] = 1`` where ``v == ids[...]``: the matrix an embedding lookup never builds.

    Parameters
    ----------
    ids
        integer ids of any shape ``(*)``.
    num_classes
        width V of each one-hot row; ``-1`` means ``max(ids) + 1``.
    dtype
        dtype of the result (int64 as in PyTorch; pass the table's float dtype to
        multiply it with a table).

    Returns
    -------
    Tensor of shape ``(*, num_classes)``.

    Examples
    --------
    >>> one_hot([2, 0], 3).numpy()
    array([[0, 0, 1],
           [1, 0, 0]])
    """
    ids = as_ids(ids)
    if isinstance(num_classes, bool) or not isinstance(num_classes, int | np.integer):
        raise InputTypeError(f"num_classes must be an int, got {num_classes!r}")
    if num_classes == -1:
        if ids.size == 0:
            raise ValueError("one_hot cannot infer num_classes from empty ids; pass num_classes=")
        num_classes = max(int(ids.max()) + 1, 0)
    if num_classes < 0:
        raise ValueError(f"num_classes must be >= 0 or -1 (infer), got {num_classes}")
    flat = ids.reshape(-1)  # (N,)
    check_ids_in_range(flat, num_classes, ids.shape, size_name="num_classes")
    out = np.zeros((flat.size, num_classes), dtype=dtype)  # (N, V)
    out[np.arange(flat.size), flat] = 1
    return Tensor(out.reshape(*ids.shape, num_classes))


def linear(x: Any, weight: Any, bias: Any = None) -> Tensor:
    r"""``y = x W^T + b`` over the last dimension, as one matrix product of every row of ``x``.

    Backward, with ``X`` and ``G`` the inputs and gradients as ``(N, in)`` and ``(N, out)``
    rows: ``dX = G W``, ``dW = G^T X``, ``db = sum of the rows of G``. Flattening the
    leading dimensions first makes ``dW`` one product instead of a batch of them summed.

    Shape
    -----
    - x: ``(*, in)``; weight: ``(out, in)``; bias: ``(out,)``
    - output: ``(*, out)``

    Examples
    --------
    >>> linear(np.array([[1.0, 2.0]]), np.array([[1.0, 0.0], [1.0, 1.0]]), np.array([0.5, 0.0])).numpy()
    array([[1.5, 3. ]])
    """
    x, weight = as_tensor(x), as_tensor(weight)
    if weight.ndim != 2 or x.ndim == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"linear: x of shape {x.shape} needs a weight of shape (out, "
            f"{x.shape[-1] if x.ndim else '?'}), got {weight.shape}"
        )
    bias = None if bias is None else as_tensor(bias)
    if bias is not None and bias.shape != weight.shape[:1]:
        raise ValueError(f"linear: bias must have shape {weight.shape[:1]}, got {bias.shape}")
    rows = x.data.reshape(-1, weight.shape[1])  # (N, in)
    out = rows @ weight.data.T  # (N, out)
    if bias is not None:
        out += bias.data

    def backward(g: np.ndarray) -> tuple[np.ndarray | None, ...]:
        g2 = g.reshape(-1, weight.shape[0])  # (N, out)
        gx = (g2 @ weight.data).reshape(x.shape) if x.requires_grad else None
        gw = g2.T @ rows if weight.requires_grad else None
        if bias is None:
            return gx, gw
        return gx, gw, g2.sum(axis=0) if bias.requires_grad else None

    parents = (x, weight) if bias is None else (x, weight, bias)
    return Tensor._make(out.reshape(*x.shape[:-1], weight.shape[0]), parents, backward, "linear")


def embedding(
    ids: Any,
    weight: Any,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    r"""Rows of ``weight`` for ``ids``: ``E[i] = one_hot(i) @ E``, with PyTorch's options.

    Parameters
    ----------
    ids
        integer ids of any shape, each in ``0..V-1``.
    weight
        the ``(V, d)`` table (a Tensor to receive gradients).
    padding_idx
        this row gets no gradient (it is still looked up). Negative counts from
        the end.
    max_norm
        before the lookup, rescale *in place* each looked-up row whose
        ``norm_type``-norm exceeds it to ``max_norm / (norm + 1e-7)`` times itself.
    norm_type
        the p of that norm (``math.inf`` allowed).
    scale_grad_by_freq
        divide each position's gradient by the number of times its id
        occurs in ``ids``.
    sparse
        give ``weight`` a :class:`~rowbook.autograd.RowSparse` gradient (only the
        looked-up rows, padding row left out) instead of a dense ``(V, d)`` array.

    Shape
    -----
    - ids: ``(*)``, any shape including ``()`` and empty
    - weight: ``(V, d)``
    - output: ``(*, d)``

    Examples
    --------
    >>> E = Tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    >>> out = embedding([2, 0, 2], E)
    >>> out.numpy()
    array([[4., 5.],
           [0., 1.],
           [4., 5.]])
    >>> out.sum().backward()
    >>> E.grad
    array([[1., 1.],
           [0., 0.],
           [2., 2.]])
    """
    if isinstance(weight, DecodedTable):
        return _decoded_embedding(ids, weight, padding_idx, max_norm)
    weight = as_table(weight)
    num_rows, dim = weight.shape
    pad = normalize_padding_idx(padding_idx, num_rows)
    check_max_norm(max_norm, norm_type)
    ids = as_ids(ids)
    flat = ids.reshape(-1)  # (N,)
    check_ids_in_range(flat, num_rows, ids.shape)
    if max_norm is not None:
        embedding_renorm_(weight.data, flat, max_norm, norm_type)
    out = gather_rows(weight.data, flat)  # (N, d)

    def backward(g: np.ndarray) -> tuple[Any]:
        rows = g.reshape(flat.size, dim).astype(np.float32 if g.dtype == np.float16 else g.dtype)
        ids_k, rows_k = flat, rows
        if pad is not None:  # the padding row gets nothing (sparse: it is left out)
            keep = flat != pad
            ids_k, rows_k = flat[keep], rows[keep]
        scale = 1.0 / id_counts(ids_k) if scale_grad_by_freq else None
        grad = scatter_add_rows(ids_k, rows_k, num_rows, scale=scale)  # one_hot.T @ G
        return (grad if sparse else grad.to_dense(),)

    return Tensor._make(out.reshape(*ids.shape, dim), (weight,), backward, "embedding")


def embedding_bag(
    ids: Any,
    weight: Any,
    offsets: Any = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    mode: Mode = "mean",
    sparse: bool = False,
    per_sample_weights: Any = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    r"""Sum, mean or max of the rows of each bag of ids, without building the rows.

    For sum and mean, ``out = M @ E`` with ``M[b, v]`` the (weighted, or ``1/size_b``)
    count of id v in bag b (see :mod:`rowbook.nn.bag`). Padding ids are left out of every
    bag (and of the mean's size); empty bags give zeros.

    Parameters
    ----------
    ids
        2-D ``(B, N)`` fixed-size bags, or 1-D ids cut into bags by ``offsets``.
    weight
        the ``(V, d)`` table.
    offsets
        for 1-D ids, the start of each bag: starts at 0, non-decreasing, at most
        ``len(ids)``. Must be None for 2-D ids.
    max_norm, norm_type, scale_grad_by_freq, sparse, padding_idx
        as in :func:`embedding`
        (``mode="max"`` supports neither ``scale_grad_by_freq`` nor ``sparse``, as PyTorch).
    mode
        ``"sum"``, ``"mean"`` or ``"max"``.
    per_sample_weights
        same shape as ``ids``, multiplies each row; only with
        ``mode="sum"``. Receives a gradient if it is a Tensor requiring one.
    include_last_offset
        ``offsets`` has one more entry, the end of the last bag (CSR
        style); ids after it belong to no bag and are ignored.

    Shape
    -----
    - ids: ``(B, N)``, or ``(n,)`` with offsets ``(B,)`` (``(B + 1,)`` with
      include_last_offset)
    - weight: ``(V, d)``
    - output: ``(B, d)``

    Examples
    --------
    >>> E = np.arange(8.0).reshape(4, 2)
    >>> embedding_bag([1, 3, 0, 2], E, offsets=[0, 2, 2], mode="sum").numpy()
    array([[ 8., 10.],
           [ 0.,  0.],
           [ 4.,  6.]])
    """
    decoded = isinstance(weight, DecodedTable)
    weight = weight if decoded else as_table(weight)
    num_rows = weight.shape[0]
    check_bag_mode(mode, scale_grad_by_freq, sparse)
    pad = normalize_padding_idx(padding_idx, num_rows)
    check_max_norm(max_norm, norm_type)
    ids = as_ids(ids)
    flat, bounds = bag_bounds(ids, offsets, include_last_offset)  # (n,), (B + 1,)
    check_ids_in_range(flat, num_rows, ids.shape)
    if decoded:  # decode the rows the bags read, then bag that small table (no gradient to it)
        _refuse_max_norm(max_norm)
        uniq, inverse = np.unique(flat, return_inverse=True)  # (U,), positions -> row of uniq
        small_pad = int(np.searchsorted(uniq, pad)) if pad is not None and pad in uniq else None
        return embedding_bag(
            inverse.reshape(ids.shape),
            weight.decode(uniq),
            offsets,
            None,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            per_sample_weights,
            include_last_offset,
            small_pad,
        )
    if weight.dtype == np.float16:
        if max_norm is not None:
            embedding_renorm_(weight.data, flat[: bounds[-1]], max_norm, norm_type)
        options = {"mode": mode, "sparse": sparse, "scale_grad_by_freq": scale_grad_by_freq}
        return _half_bag(
            weight, ids, offsets, pad, per_sample_weights, include_last_offset, options
        )
    psw = _as_per_sample_weights(per_sample_weights, ids.shape, mode, weight.dtype)
    if max_norm is not None:
        embedding_renorm_(weight.data, flat[: bounds[-1]], max_norm, norm_type)
    if mode == "max":
        out, argmax = bag_max(weight.data, flat, bounds, pad)  # (B, d), (B, d)
        return Tensor._make(
            out, (weight,), lambda g: (bag_max_backward(argmax, g, num_rows),), "embedding_bag"
        )
    return _bag_sum(weight, flat, bounds, pad, psw, mode == "mean", scale_grad_by_freq, sparse)


def _decoded_embedding(ids: Any, weight: DecodedTable, padding_idx: Any, max_norm: Any) -> Tensor:
    """The rows of a frozen, decoded table (a quantised one): decoded float32, no gradient."""
    normalize_padding_idx(padding_idx, weight.shape[0])
    _refuse_max_norm(max_norm)
    ids = as_ids(ids)
    check_ids_in_range(ids.reshape(-1), weight.shape[0], ids.shape)
    return Tensor(weight.decode(ids).reshape(*ids.shape, weight.shape[1]))


def _refuse_max_norm(max_norm: Any) -> None:
    if max_norm is not None:
        raise ValueError(
            f"max_norm={max_norm!r} rescales rows in place, and a quantised table is "
            "frozen; pass max_norm=None, or look up a float table"
        )


def _bag_sum(
    weight: Tensor,
    ids: np.ndarray,
    bounds: np.ndarray,
    pad: int | None,
    psw: Tensor | None,
    mean: bool,
    scale_grad_by_freq: bool,
    sparse: bool,
) -> Tensor:
    """Sum/mean bags with backward ``dE = M.T @ G`` as a scatter-add over the kept positions."""
    psw_flat = None if psw is None else psw.data.reshape(-1)  # (n,)
    out, sizes = bag_sum(weight.data, ids, bounds, pad, psw_flat, mean)  # (B, d), (B,)

    def backward(g: np.ndarray) -> tuple[Any, ...]:
        bags = bag_of_positions(bounds, len(ids))  # (n,)
        keep = bags >= 0 if pad is None else (bags >= 0) & (ids != pad)
        ids_k, bags_k = ids[keep], bags[keep]  # (K,)
        scale = None if psw_flat is None else psw_flat[keep].astype(np.float64)
        if scale_grad_by_freq:  # PyTorch's order: weight, / count(id), / bag size
            scale = (1.0 if scale is None else scale) / id_counts(ids_k)
        if mean:
            scale = (1.0 if scale is None else scale) / sizes[bags_k]
        grad = bag_scatter_add(ids_k, bags_k, g, weight.shape[0], scale)  # M.T @ G
        grad_weight = grad if sparse else grad.to_dense()
        if psw is None:
            return (grad_weight,)
        grad_psw = np.zeros(len(ids), dtype=g.dtype)  # (n,): <G[bag], E[id]>, 0 for padding
        grad_psw[keep] = np.einsum("kd,kd->k", g[bags_k], weight.data[ids_k])
        return grad_weight, grad_psw.reshape(psw.shape)

    parents = (weight,) if psw is None else (weight, psw)
    return Tensor._make(out, parents, backward, "embedding_bag")


def _half_bag(
    weight: Tensor,
    ids: np.ndarray,
    offsets: Any,
    pad: int | None,
    psw: Any,
    include_last_offset: bool,
    options: dict[str, Any],
) -> Tensor:
    """A float16 table's bags as torch computes them on CPU: sums in float32, rounded once.

    Only the rows the bags read are converted: ``E[uniq]`` (U, d) in float32, with the ids
    renumbered into it; gradients flow back through the lookup to the float16 table. A
    mean is the float16 sum divided in float16 by the bag's size (torch's rounding).
    """
    uniq, inverse = np.unique(ids, return_inverse=True)  # (U,), positions -> row of uniq
    rows = embedding(uniq, weight, sparse=options["sparse"]).astype(np.float32)  # (U, d)
    small_pad = None
    if pad is not None and uniq.size and pad in uniq:
        small_pad = int(np.searchsorted(uniq, pad))
    if psw is not None:
        psw = psw.astype(np.float32) if isinstance(psw, Tensor) else np.asarray(psw, np.float32)
    mean = options["mode"] == "mean"
    bags = embedding_bag(
        inverse.reshape(ids.shape),
        rows,
        offsets,
        per_sample_weights=psw,
        include_last_offset=include_last_offset,
        padding_idx=small_pad,
        **{**options, "mode": "sum" if mean else options["mode"]},
    ).astype(np.float16)
    if not mean:
        return bags
    flat, bounds = bag_bounds(ids, offsets, include_last_offset)  # (n,), (B + 1,)
    kept = np.concatenate([[0], np.cumsum(flat != pad if pad is not None else np.ones_like(flat))])
    sizes = kept[bounds[1:]] - kept[bounds[:-1]]  # (B,) ids in each bag, padding left out
    return bags / np.maximum(sizes, 1).astype(np.float16)[:, None]


def _as_per_sample_weights(
    psw: Any, shape: tuple[int, ...], mode: str, dtype: np.dtype
) -> Tensor | None:
    if psw is None:
        return None
    if mode != "sum":
        raise ValueError(f"per_sample_weights is only supported with mode='sum', got mode={mode!r}")
    if isinstance(psw, Tensor | np.ndarray):
        if psw.dtype != dtype:
            raise InputTypeError(
                f"per_sample_weights must have the table's dtype {dtype}, got {psw.dtype}; "
                f"convert it with .astype(np.{dtype})"
            )
        table = psw if isinstance(psw, Tensor) else Tensor(psw)
    else:
        table = Tensor(np.asarray(psw, dtype=dtype))
    if table.shape != shape:
        raise ValueError(
            f"per_sample_weights must have the same shape as ids {shape}, got {table.shape}"
        )
    return table
