"""How many dimensions, drawn: :func:`rowbook.demo.dimensions.dimension_sweep`'s rows against d.

One column per model: the training and held-out losses on top (the gap between them is
what the model learned about its training sentences only), the share of planted analogies
answered below; d on a log scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from rowbook.viz.plots import PathLike, new_figure, save_png

__all__ = ["dimension_sweep_figure", "plot_dimension_sweep"]


def dimension_sweep_figure(
    rows: Sequence[Any],
    *,
    title: str | None = None,
    figsize: tuple[float, float] = (8.0, 5.0),
    dpi: int = 100,
) -> Figure:
    """Losses and analogy scores of ``rows`` (:class:`~rowbook.demo.dimensions.DimensionRow`)
    against d, one column per model."""
    if not rows:
        raise ValueError("rows is empty: run dimension_sweep on at least one d")
    models = list(dict.fromkeys(r.model for r in rows))
    fig = new_figure(figsize, dpi)
    axes = fig.subplots(2, len(models), sharex="col", squeeze=False)  # (2, models)
    for k, name in enumerate(models):
        mine = sorted((r for r in rows if r.model == name), key=lambda r: r.dim)
        dims = [r.dim for r in mine]
        loss, analogy = axes[0, k], axes[1, k]
        loss.plot(dims, [r.train_loss for r in mine], marker="o", label="training")
        loss.plot(dims, [r.held_out_loss for r in mine], marker="s", label="held out")
        loss.set_title(name)
        loss.set_ylabel("loss (nats)")
        loss.legend(fontsize=8)
        analogy.plot(dims, [100 * r.analogy for r in mine], marker="o", color="tab:green")
        analogy.set_ylabel("planted analogies (%)")
        analogy.set_xlabel("d")
        for ax in (loss, analogy):
            ax.set_xscale("log", base=2)
            ax.grid(True, alpha=0.3)
    fig.suptitle(title if title is not None else "too few dimensions, and too many")
    return fig


def plot_dimension_sweep(rows: Sequence[Any], path: PathLike, **kwargs: Any) -> Path:
    """Write :func:`dimension_sweep_figure` as a PNG at ``path``; returns the path."""
    return save_png(dimension_sweep_figure(rows, **kwargs), path)
