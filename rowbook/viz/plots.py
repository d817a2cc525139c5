"""PNG pictures with matplotlib (Agg, no display): scatter, cosine heatmap, training curves,
the cost of a vocabulary.

Each picture comes in two forms: ``*_figure(...)`` builds and returns a matplotlib
:class:`~matplotlib.figure.Figure` (for notebooks, or to adjust before saving), and
``plot_*(..., path)`` builds it, writes it atomically as a PNG of exactly
``figsize * dpi`` pixels and returns the path. Figures are made without ``pyplot``,
so nothing global is touched and nothing is left open.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from rowbook.checks import InputTypeError, UnknownKeyError, check_choice
from rowbook.io import atomic_write
from rowbook.viz.labels import LabelMode, place_labels, visible_label
from rowbook.viz.points import as_points, cosine_matrix
from rowbook.viz.project import Method, describe_projection, project, variance_shares

if TYPE_CHECKING:
    from rowbook.vectors import Vectors

__all__ = [
    "new_figure",
    "plot_scatter",
    "plot_similarity",
    "plot_training",
    "plot_vocab_sweep",
    "save_png",
    "scatter_figure",
    "similarity_figure",
    "training_figure",
    "vocab_sweep_figure",
]

PathLike = str | os.PathLike[str]


def new_figure(figsize: tuple[float, float], dpi: int) -> Figure:
    """A matplotlib Figure with an Agg canvas and constrained layout, no ``pyplot`` involved."""
    fig = Figure(figsize=figsize, dpi=dpi, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save_png(fig: Figure, path: PathLike) -> Path:
    """Write ``fig`` as a PNG at ``path`` atomically (temporary file, then rename)."""
    path = Path(path)
    with atomic_write(path) as f:
        fig.savefig(f, format="png", dpi=fig.dpi)
    return path


# -- scatter -----------------------------------------------------------------------------


def scatter_figure(
    data: np.ndarray | Vectors,
    labels: Sequence[Any] | None = None,
    *,
    words: Sequence[str] | None = None,
    groups: Sequence[Any] | None = None,
    colors: Sequence[str] | None = None,
    method: Method = "pca",
    show_labels: LabelMode = "auto",
    title: str | None = None,
    subject: str | None = None,
    seed: int = 0,
    figsize: tuple[float, float] = (8.0, 6.0),
    dpi: int = 100,
) -> Figure:
    """A labelled 2-D scatter of the rows, projected by ``method`` (PCA by default).

    Parameters
    ----------
    data, labels, words
        An (n, d) array with optional labels, or a Vectors with optional ``words``.
    groups, colors
        Colour by category (with a legend), or one ``"#rrggbb"`` per point.
    method : {"pca", "tsne", "none"}
        See :func:`rowbook.viz.project.project`; ``"none"`` needs d == 2.
    show_labels : {"auto", "all", "none"}
        ``"auto"`` writes every label that has room beside its point (earlier rows first;
        never two overlapping, a leader line when one is set away) and says how many are
        hidden; ``"all"`` writes every label, overlapping where there is no room.
        Invisible characters are shown (see :func:`rowbook.viz.labels.visible_label`).
    title, subject
        The title, or what the points are (default ``"n points"``) for the default title
        ``"<subject>, PCA 2-D, 41% variance"``.
    """
    points = as_points(data, labels, words, groups=groups, colors=colors)
    check_choice("show_labels", show_labels, ("auto", "all", "none"))
    coords, axis_names = project(points.X, 2, method=method, seed=seed)  # (n, 2)
    fig = new_figure(figsize, dpi)
    ax = fig.add_subplot()
    marker = {"s": 36, "edgecolors": "black", "linewidths": 0.4}
    ax.scatter(coords[:, 0], coords[:, 1], c=points.colors, zorder=2, **marker)
    for group, colour in points.legend:
        ax.scatter([], [], c=colour, label=group, **marker)  # legend entries only
    if points.legend:  # beside the axes, where no label or point can be under it
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, title="group")
    ax.set_xlabel(axis_names[0])
    ax.set_ylabel(axis_names[1])
    if method != "tsne":
        ax.set_aspect("equal", adjustable="datalim")  # same units on both axes: keep the shape
    ax.margins(0.12)
    ax.grid(True, alpha=0.3, zorder=0)
    if title is None:
        shown = describe_projection(method, 2, variance_shares(points.X, coords))
        title = f"{subject or f'{len(coords)} points'}, {shown}"
    ax.set_title(title)
    _label_points(fig, ax, coords, [visible_label(s) for s in points.labels], show_labels)
    return fig


def _label_points(
    fig: Figure, ax: Any, coords: np.ndarray, labels: list[str], show: LabelMode
) -> None:
    """Lay the figure out, freeze it, and place the labels (see :mod:`rowbook.viz.labels`)."""
    fig.draw_without_rendering()  # the layout and the axes limits are final from here on
    fig.set_layout_engine("none")
    ax.set_autoscale_on(False)
    n = len(labels)
    note = ax.text(
        0.99,
        0.01,
        f"{n} of {n} labels hidden (no room)",
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=8,
        color="0.35",
        zorder=3,
    )
    hidden = place_labels(ax, coords, labels, show=show, marker_radius=_marker_radius(fig))
    if hidden and show == "auto":
        note.set_text(f"{hidden} of {n} labels hidden (no room)")
    else:
        note.remove()


def _marker_radius(fig: Figure, area: float = 36.0) -> float:
    """Pixels from a marker's centre to its edge (``s`` is the area in points squared)."""
    return (np.sqrt(area) / 2 + 0.4) * fig.dpi / 72


def plot_scatter(
    data: np.ndarray | Vectors, path: PathLike, labels: Sequence[Any] | None = None, **kwargs: Any
) -> Path:
    """Write :func:`scatter_figure` as a PNG at ``path``; returns the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "scatter.png"
    >>> plot_scatter(np.eye(3), out, labels=["a", "b", "c"]) == out
    True
    """
    return save_png(scatter_figure(data, labels, **kwargs), path)


# -- cosine heatmap ----------------------------------------------------------------------


def similarity_figure(
    data: np.ndarray | Vectors,
    labels: Sequence[Any] | None = None,
    *,
    words: Sequence[str] | None = None,
    values: bool | None = None,
    title: str | None = None,
    figsize: tuple[float, float] | None = None,
    dpi: int = 100,
) -> Figure:
    """Heatmap of the cosine similarity between every two rows, labelled on both axes.

    The colour scale is fixed to [-1, 1] (blue negative, red positive). ``values``
    prints each cosine in its cell (default: when there are at most 20 rows).
    ``figsize`` defaults to a size that grows with the number of rows.
    """
    points = as_points(data, labels, words)
    cos = cosine_matrix(points.X)  # (n, n)
    n = len(cos)
    if figsize is None:
        side = min(4.0 + 0.35 * n, 16.0)
        figsize = (side + 1.2, side)
    fig = new_figure(figsize, dpi)
    ax = fig.add_subplot()
    image = ax.imshow(cos, cmap="RdBu_r", vmin=-1.0, vmax=1.0)
    ax.set_xticks(range(n), points.labels, rotation=90, fontsize=8)
    ax.set_yticks(range(n), points.labels, fontsize=8)
    if n <= 20 if values is None else values:
        for i, j in np.ndindex(n, n):
            shade = "white" if abs(cos[i, j]) > 0.6 else "black"
            ax.text(j, i, f"{cos[i, j]:.2f}", ha="center", va="center", fontsize=6, color=shade)
    fig.colorbar(image, ax=ax, label="cosine similarity", shrink=0.8)
    ax.set_title(title if title is not None else "cosine similarity")
    return fig


def plot_similarity(
    data: np.ndarray | Vectors, path: PathLike, labels: Sequence[Any] | None = None, **kwargs: Any
) -> Path:
    """Write :func:`similarity_figure` as a PNG at ``path``; returns the path."""
    return save_png(similarity_figure(data, labels, **kwargs), path)


# -- training curves ---------------------------------------------------------------------


def training_figure(
    epochs: Sequence[Mapping[str, float]] | Any,
    *,
    metrics: Sequence[str] | None = None,
    log_loss: bool = False,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 4.5),
    dpi: int = 100,
) -> Figure:
    """Curves of per-epoch metrics: losses in the left panel, anything else in the right.

    ``epochs`` is a list of dicts such as ``rowbook.training.History.epochs`` (a
    ``History`` itself works too). The x axis is each dict's ``"epoch"`` (+1, so the
    first epoch is 1) or its position. ``metrics`` picks the names to draw (default:
    every numeric name except ``"epoch"``); an epoch missing a metric leaves a gap.
    ``log_loss`` puts the loss panel on a log scale.
    """
    rows = _epoch_rows(epochs)
    names = _metric_names(rows, metrics)
    x = [float(r["epoch"]) + 1 if "epoch" in r else i + 1 for i, r in enumerate(rows)]
    panels = [[m for m in names if "loss" in m], [m for m in names if "loss" not in m]]
    panels = [p for p in panels if p]
    fig = new_figure(figsize, dpi)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, panel in zip(axes, panels, strict=True):
        for name in panel:
            y = [float(r.get(name, math.nan)) for r in rows]
            ax.plot(x, y, marker="o" if len(x) <= 30 else None, markersize=3, label=name)
        ax.set_xlabel("epoch")
        ax.set_ylabel("loss" if "loss" in panel[0] else "metric")
        if log_loss and "loss" in panel[0]:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title if title is not None else f"training, {len(rows)} epochs")
    return fig


def plot_training(
    epochs: Sequence[Mapping[str, float]] | Any, path: PathLike, **kwargs: Any
) -> Path:
    """Write :func:`training_figure` as a PNG at ``path``; returns the path."""
    return save_png(training_figure(epochs, **kwargs), path)


# -- what a vocabulary costs -------------------------------------------------------------


def vocab_sweep_figure(
    rows: Sequence[Any],
    *,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 4.5),
    dpi: int = 100,
) -> Figure:
    """:func:`rowbook.vocab_sweep.vocab_sweep`'s rows against V (log scale): tokens per character
    on the left axis, falling; the table's parameters on the right, growing; one line of
    each per scheme when the rows compare several."""
    if not rows:
        raise ValueError("rows is empty: run vocab_sweep on at least one size")
    models = list(dict.fromkeys(getattr(r, "model", "bpe") for r in rows))
    fig = new_figure(figsize, dpi)
    ax = fig.subplots()
    table = ax.twinx()
    for k, name in enumerate(models):
        mine = [r for r in rows if getattr(r, "model", "bpe") == name]
        V = [r.vocab_size for r in mine]
        shade = {"alpha": 1.0 - 0.25 * k} if len(models) > 1 else {}
        label = f"{name}: " if len(models) > 1 else ""
        ax.plot(
            V,
            [r.tokens_per_char for r in mine],
            marker="o",
            color="tab:blue",
            linestyle=("-", "--", ":")[k % 3],
            label=f"{label}tokens per character",
            **shade,
        )
        table.plot(
            V,
            [r.table_parameters / 1e6 for r in mine],
            marker="s",
            color="tab:red",
            linestyle=("-", "--", ":")[k % 3],
            label=f"{label}table",
            **shade,
        )
    ax.set_xscale("log")
    ax.set_xlabel("vocabulary size V")
    ax.set_ylabel("tokens per character (held-out text)", color="tab:blue")
    ax.grid(True, alpha=0.3)
    table.set_ylabel("table parameters V x d (millions)", color="tab:red")
    if len(models) > 1:
        handles = ax.get_legend_handles_labels()[0] + table.get_legend_handles_labels()[0]
        ax.legend(handles, [h.get_label() for h in handles], fontsize=8)
    fig.suptitle(
        title if title is not None else "a larger vocabulary: shorter sequences, a heavier table"
    )
    return fig


def plot_vocab_sweep(rows: Sequence[Any], path: PathLike, **kwargs: Any) -> Path:
    """Write :func:`vocab_sweep_figure` as a PNG at ``path``; returns the path."""
    return save_png(vocab_sweep_figure(rows, **kwargs), path)


def _epoch_rows(epochs: Any) -> list[Mapping[str, float]]:
    rows = list(getattr(epochs, "epochs", epochs))
    if not rows:
        raise ValueError("epochs is empty; train for at least one epoch before plotting curves")
    for i, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise InputTypeError(
                f"epochs[{i}] must be a dict of metric -> value, got {type(row).__name__}"
            )
    return rows


def _metric_names(rows: list[Mapping[str, float]], metrics: Sequence[str] | None) -> list[str]:
    seen = dict.fromkeys(k for r in rows for k, v in r.items() if k != "epoch" and _is_number(v))
    if metrics is None:
        if not seen:
            raise ValueError("the epochs hold no numeric metric besides 'epoch'")
        return list(seen)
    if isinstance(metrics, str):
        raise InputTypeError(
            f"metrics must be a list of names, got the string {metrics!r}; use [{metrics!r}]"
        )
    for name in metrics:
        if name not in seen:
            raise UnknownKeyError(f"metric {name!r} is in no epoch; the epochs hold {sorted(seen)}")
    return list(metrics)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)
