"""Pictures of a lookup and its gradient: the one-hot product, and the rows a batch touches.

* :func:`one_hot_figure` draws ``one_hot(ids) @ E = E[ids]`` as three grids of numbers: the
  one-hot matrix (one 1 per row), the table, and the rows the product picks out. Every
  multiplication but one per output number is by zero; the lookup skips them.
* :func:`touched_rows_figure` draws, batch by batch, which rows of the table the gradient
  reaches (the :class:`~rowbook.autograd.RowSparse` indices of a sparse ``Embedding``'s
  backward), once without and once with a padding row: with ``padding_idx`` set, the
  padding column stays empty however many padded positions the batch holds.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from rowbook.viz.plots import new_figure, save_png

__all__ = [
    "one_hot_figure",
    "plot_one_hot",
    "plot_touched_rows",
    "touched_rows",
    "touched_rows_figure",
]


def _grid(
    ax: Any,
    values: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    title: str,
    *,
    fmt: str,
    cmap: str,
    highlight: np.ndarray | None = None,
) -> None:
    """A heatmap with each cell's number written in it."""
    ax.imshow(values, cmap=cmap, vmin=min(0.0, values.min()), vmax=max(1.0, values.max()))
    for (i, j), v in np.ndenumerate(values):
        bold = highlight is not None and highlight[i, j]
        style = {"fontweight": "bold", "color": "white"} if bold else {"color": "0.15"}
        ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7, **style)
    ax.set_xticks(range(len(cols)), cols, rotation=60, fontsize=7)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.set_title(title, fontsize=9)


def one_hot_figure(
    ids: Sequence[int],
    table: np.ndarray,
    *,
    tokens: Sequence[str] | None = None,
    vocab: Sequence[str] | None = None,
    figsize: tuple[float, float] = (10.0, 3.4),
    dpi: int = 100,
) -> Figure:
    """``one_hot(ids)`` (n, V) ``@`` ``table`` (V, d) ``=`` ``table[ids]`` (n, d), as grids.

    Parameters
    ----------
    ids
        the n looked-up ids.
    table
        the (V, d) table.
    tokens, vocab
        labels of the n positions and of the V rows (default: the numbers).
    """
    table = np.asarray(table, dtype=np.float64)  # (V, d)
    ids = np.asarray(ids, dtype=np.int64)  # (n,)
    V, d = table.shape
    if ids.ndim != 1 or (ids.size and not 0 <= ids.min() <= ids.max() < V):
        raise ValueError(f"ids must be a 1-d list of row ids in [0, {V}), got {ids.tolist()!r}")
    one_hot = np.zeros((len(ids), V))  # (n, V)
    one_hot[np.arange(len(ids)), ids] = 1.0
    tokens = [str(i) for i in ids] if tokens is None else list(tokens)
    vocab = [str(i) for i in range(V)] if vocab is None else list(vocab)
    dims = [f"d{k}" for k in range(d)]
    fig = new_figure(figsize, dpi)
    grid = fig.add_gridspec(1, 5, width_ratios=[V, 0.6, d, 0.6, d])
    left, times, middle, equals, right = (fig.add_subplot(grid[0, k]) for k in range(5))
    used = np.isin(np.arange(V), ids)[:, None].repeat(d, axis=1)  # (V, d): the rows read
    title = f"one_hot(ids)  ({len(ids)} x {V})"
    _grid(left, one_hot, tokens, vocab, title, fmt="{:.0f}", cmap="Blues", highlight=one_hot > 0)
    _grid(
        middle, table, vocab, dims, f"E  ({V} x {d})", fmt="{:.2f}", cmap="Greens", highlight=used
    )
    _grid(
        right, table[ids], tokens, dims, f"E[ids]  ({len(ids)} x {d})", fmt="{:.2f}", cmap="Greens"
    )
    for ax, sign in ((times, "@"), (equals, "=")):
        ax.axis("off")
        ax.text(0.5, 0.5, sign, ha="center", va="center", fontsize=18)
    wasted = len(ids) * V * d - len(ids) * d
    fig.suptitle(
        f"a lookup is a one-hot product: {len(ids) * V * d} multiply-adds, {wasted} of them by "
        f"zero; E[ids] copies {len(ids)} rows",
        fontsize=10,
    )
    return fig


def plot_one_hot(
    ids: Sequence[int], table: np.ndarray, path: str | os.PathLike[str], **kwargs: Any
) -> Path:
    """Write :func:`one_hot_figure` as a PNG at ``path``; returns the path."""
    return save_png(one_hot_figure(ids, table, **kwargs), path)


def touched_rows(
    batches: Sequence[Sequence[int]], num_embeddings: int, padding_idx: int | None
) -> np.ndarray:
    """``(n_batches, num_embeddings)`` booleans: which rows each batch's gradient reaches.

    Read from the :class:`~rowbook.autograd.RowSparse` gradient of a sparse
    :class:`~rowbook.nn.Embedding` after ``emb(batch).sum().backward()``.

    >>> touched_rows([[2, 3, 0, 0], [1, 1, 0, 0]], 4, padding_idx=0).astype(int)
    array([[0, 0, 1, 1],
           [0, 1, 0, 0]])
    """
    from rowbook.nn import Embedding

    emb = Embedding(num_embeddings, 2, padding_idx=padding_idx, sparse=True, rng=0)
    out = np.zeros((len(batches), num_embeddings), dtype=bool)
    for b, batch in enumerate(batches):
        emb.weight.grad = None
        emb(np.asarray(batch)).sum().backward()
        if emb.weight.grad is not None:
            out[b, emb.weight.grad.indices] = True
    return out


def touched_rows_figure(
    batches: Sequence[Sequence[int]],
    num_embeddings: int,
    *,
    padding_idx: int = 0,
    labels: Sequence[str] | None = None,
    figsize: tuple[float, float] = (10.0, 3.6),
    dpi: int = 100,
) -> Figure:
    """Which rows each batch's gradient touches, with ``padding_idx`` off (left) and on (right).

    Each panel is a grid of batches (rows) by table rows (columns); a filled cell is a row
    the batch's gradient reaches, its number the count of positions that add into it.
    """
    labels = [str(i) for i in range(num_embeddings)] if labels is None else list(labels)
    counts = np.zeros((len(batches), num_embeddings), dtype=np.int64)  # (B, V)
    for b, batch in enumerate(batches):
        np.add.at(counts[b], np.asarray(batch).ravel(), 1)
    fig = new_figure(figsize, dpi)
    panels = fig.subplots(1, 2, sharey=True)
    for ax, pad in zip(panels, (None, padding_idx), strict=True):
        touched = touched_rows(batches, num_embeddings, pad)
        ax.imshow(touched, cmap="Oranges", vmin=0, vmax=1.4, aspect="auto")
        for (b, i), hit in np.ndenumerate(touched):
            if counts[b, i]:
                ax.text(
                    i,
                    b,
                    f"{counts[b, i]}" if hit else "x",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="0.1" if hit else "0.5",
                )
        ax.axvline(padding_idx, color="0.4", linestyle=":", linewidth=0.8)
        ax.set_xticks(range(num_embeddings), labels, rotation=60, fontsize=7)
        ax.set_yticks(range(len(batches)), [f"batch {b}" for b in range(len(batches))], fontsize=7)
        share = touched.sum(axis=1).mean() / num_embeddings
        ax.set_title(f"padding_idx={pad}: {share:.0%} of rows touched per batch", fontsize=9)
    fig.suptitle(
        "rows the gradient reaches (the RowSparse indices); the number is how many "
        "positions add into the row, x a padded position that adds nothing",
        fontsize=9,
    )
    return fig


def plot_touched_rows(
    batches: Sequence[Sequence[int]],
    num_embeddings: int,
    path: str | os.PathLike[str],
    **kwargs: Any,
) -> Path:
    """Write :func:`touched_rows_figure` as a PNG at ``path``; returns the path."""
    return save_png(touched_rows_figure(batches, num_embeddings, **kwargs), path)
