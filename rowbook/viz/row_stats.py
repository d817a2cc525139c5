"""Pictures of per-row training telemetry (:class:`~rowbook.optim.RowStats`).

Which rows of a table actually trained? One figure answers it in two panels and a list:

* **updates against frequency rank** (log-log): on a Zipf corpus the most frequent rows are
  updated on almost every step and the count falls with the rank; rows under the dashed
  line at 1 were never updated;
* **distance travelled against updates**: how far each row moved from where it started,
  against how many updates moved it (rows never updated are left out: they did not move);
* **the rows never touched**, listed under the panels (their number, and the first of them):
  the "glitch tokens" of a table, rows that keep their random start.

The figure takes only the record, so anything that fills a :class:`~rowbook.optim.RowStats`
(an optimizer built with ``row_stats=True``, or a trainer) can be drawn the same way. Tables
of many rows are drawn from a seeded sample of at most ``max_points`` rows.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from rowbook.checks import check_int
from rowbook.viz.labels import visible_label
from rowbook.viz.plots import new_figure, save_png

if TYPE_CHECKING:
    from rowbook.optim.row_stats import RowStats

__all__ = ["never_touched_text", "plot_row_stats", "row_stats_figure"]


def never_touched_text(stats: RowStats, show: int = 12) -> str:
    """One line naming the rows never updated: how many, and the first ``show`` of them.

    >>> from rowbook.optim import RowStats
    >>> stats = RowStats([3, 0, 1, 0], [1.0, 0, 0.5, 0], [3, 0, 2, 0], [0.2, 0, 0.1, 0], 3,
    ...                  keys=("the", "glitch", "cat", "\\t"))
    >>> never_touched_text(stats)
    "never touched: 2 of 4 rows: 'glitch', '\\\\t'"
    """
    rows = np.flatnonzero(stats.updates == 0)
    if not len(rows):
        return f"every one of the {len(stats)} rows was updated at least once"
    labels = stats.labels()
    named = ", ".join(f"'{visible_label(labels[i])}'" for i in rows[:show])
    more = f", and {len(rows) - show} more" if len(rows) > show else ""
    return f"never touched: {len(rows)} of {len(stats)} rows: {named}{more}"


def _sample(n: int, max_points: int, seed: int) -> np.ndarray:
    if n <= max_points:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, max_points, replace=False))


def row_stats_figure(
    stats: RowStats,
    *,
    title: str | None = None,
    max_points: int = 20_000,
    seed: int = 0,
    figsize: tuple[float, float] = (11.0, 4.8),
    dpi: int = 100,
) -> Figure:
    """Updates against frequency rank, distance against updates, the rows never touched.

    Parameters
    ----------
    stats
        The record (from ``optimizer.row_stats()``, or filled by a trainer). Its ``counts``
        give the frequency rank; without counts, rows are taken to be numbered by frequency.
    title
        The figure title (default: the rows and steps it covers).
    max_points
        Rows drawn at most (a seeded sample of them beyond that).
    """
    check_int("max_points", max_points, 1)
    shown = _sample(len(stats), max_points, seed)
    rank = stats.frequency_rank()[shown]
    updates = stats.updates[shown]
    fig = new_figure(figsize, dpi)
    left, right = fig.subplots(1, 2)
    marker = {"s": 6, "alpha": 0.5, "linewidths": 0, "rasterized": len(shown) > 2000}
    left.scatter(rank, np.maximum(updates, 0.5), c="#1f77b4", **marker)
    left.axhline(1, color="0.5", linestyle="--", linewidth=0.8)
    left.set_xscale("log")
    left.set_yscale("log")
    left.set_xlabel("frequency rank" + ("" if stats.counts is not None else " (row number + 1)"))
    left.set_ylabel("steps that updated the row (0 drawn at 0.5)")
    left.set_title("updates against frequency")
    moved = updates > 0
    if moved.any():
        right.scatter(updates[moved], stats.distance[shown][moved], c="#d62728", **marker)
        right.set_xscale("log")
    else:
        right.text(
            0.5, 0.5, "no row was updated", ha="center", va="center", transform=right.transAxes
        )
    right.set_xlabel("steps that updated the row")
    right.set_ylabel("distance travelled from the starting row")
    right.set_title("how far rows moved")
    for ax in (left, right):
        ax.grid(True, alpha=0.3)
    sampled = f", {len(shown):,} drawn" if len(shown) < len(stats) else ""
    fig.suptitle(
        title
        if title is not None
        else f"row statistics: {len(stats):,} rows, {stats.steps:,} steps{sampled}"
    )
    fig.text(
        0.01,
        0.005,
        never_touched_text(stats),
        fontsize=8,
        color="0.25",
        ha="left",
        va="bottom",
        wrap=True,
    )
    fig.get_layout_engine().set(rect=(0, 0.05, 1, 0.95))
    return fig


def plot_row_stats(stats: RowStats, path: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Write :func:`row_stats_figure` as a PNG at ``path``; returns the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rowbook.optim import RowStats
    >>> stats = RowStats([5, 2, 0], [2.0, 1.0, 0.0], [5, 4, 0], [0.4, 0.2, 0.0], 5)
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "rows.png"
    >>> plot_row_stats(stats, out) == out
    True
    """
    return save_png(row_stats_figure(stats, **kwargs), path)
