"""A picture of what moved between two tables (:func:`rowbook.vectors.compare`).

Two panels:

* **where the most-moved words went**: the first table's rows turned by the alignment ``R``
  and the second table's rows, projected together on the two principal axes of both; an
  arrow runs from each of the ``top`` most-moved words' place in the first table to its
  place in the second, over a grey sample of the other shared words (in the second table);
* **how far**: the ``top`` most-moved words' ``1 - cosine`` after alignment as bars (flagged
  words, the outliers of :meth:`~rowbook.vectors.compare.Comparison.flagged`, in red),
  beside the median of all shared words.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from rowbook.checks import check_int
from rowbook.viz.labels import place_labels, visible_label
from rowbook.viz.plots import new_figure, save_png
from rowbook.viz.project import PCA

if TYPE_CHECKING:
    from rowbook.vectors import Comparison, Vectors

__all__ = ["moved_figure", "plot_moved"]


def _rows(table: Vectors, keys: list[str], width: int) -> np.ndarray:
    """Unit rows of ``keys`` in ``table``, padded with zero columns to ``width``: (n, width)."""
    unit = table.get_normed_vectors()[[table.get_index(k) for k in keys]]  # (n, d)
    out = np.zeros((len(keys), width))
    out[:, : unit.shape[1]] = unit
    return out


def moved_figure(
    comparison: Comparison,
    a: Vectors,
    b: Vectors,
    *,
    top: int = 20,
    names: tuple[str, str] = ("a", "b"),
    background: int = 300,
    seed: int = 0,
    title: str | None = None,
    figsize: tuple[float, float] = (13.0, 6.0),
    dpi: int = 100,
) -> Figure:
    """The ``top`` most-moved words of ``comparison``: where they went and how far.

    Parameters
    ----------
    comparison
        What :func:`rowbook.vectors.compare` returned for ``a`` and ``b``.
    a, b
        The two tables compared (their unit rows are drawn).
    top
        Words drawn with an arrow and a bar.
    names
        What to call the two tables in the legend (file names, say).
    background
        Other shared words drawn in grey (a seeded sample).
    """
    check_int("top", top, 1)
    check_int("background", background, 0)
    moved = comparison.most_moved(top)
    words = [key for key, _ in moved]
    width = comparison.rotation.shape[0]
    start = _rows(a, words, width) @ comparison.rotation  # (t, d): a's rows, turned onto b's
    end = _rows(b, words, width)  # (t, d)
    chosen = set(words)
    others = [k for k in comparison.keys if k not in chosen]
    rng = np.random.default_rng(seed)
    if len(others) > background:
        others = [others[i] for i in np.sort(rng.choice(len(others), background, replace=False))]
    rest = _rows(b, others, width) if others else np.zeros((0, width))  # (r, d)
    stacked = np.concatenate([start, end, rest])
    coords = PCA(n_components=2).fit_transform(stacked) if len(stacked) >= 2 else stacked[:, :2]
    t = len(words)
    fig = new_figure(figsize, dpi)
    where, bars = fig.subplots(1, 2, width_ratios=(1.4, 1.0))
    if len(rest):
        where.scatter(*coords[2 * t :].T, s=8, c="0.8", linewidths=0, label="other shared words")
    where.scatter(*coords[:t].T, s=18, c="#1f77b4", zorder=3, label=f"in {names[0]} (aligned)")
    where.scatter(*coords[t : 2 * t].T, s=18, c="#d62728", zorder=3, label=f"in {names[1]}")
    for (x0, y0), (x1, y1) in zip(coords[:t], coords[t : 2 * t], strict=True):
        where.annotate(
            "",
            xy=(x1, y1),
            xytext=(x0, y0),
            zorder=2,
            arrowprops={"arrowstyle": "->", "color": "0.35", "lw": 0.8},
        )
    where.set_xlabel("PC1 of both tables' rows")
    where.set_ylabel("PC2")
    where.set_title(f"where the {t} most-moved words went")
    where.legend(loc="upper left", bbox_to_anchor=(0.0, -0.1), fontsize=8, ncol=3)
    where.grid(True, alpha=0.3)
    flagged = set(comparison.flagged())
    distance = 1.0 - np.array([c for _, c in moved])  # (t,): 0 for a word that did not move
    colours = ["#d62728" if w in flagged else "#1f77b4" for w in words]
    bars.barh(np.arange(t), distance, color=colours)
    bars.set_yticks(np.arange(t), [visible_label(w) for w in words], fontsize=8)
    bars.invert_yaxis()
    median = 1.0 - comparison.summary()["median_cosine"]
    bars.axvline(median, color="0.3", linestyle="--", linewidth=0.8)
    bars.text(
        median, -0.6, f" median of all {len(comparison):,}", fontsize=8, color="0.3", va="bottom"
    )
    bars.set_xlabel("1 - cosine after alignment (red: flagged as an outlier)")
    bars.set_xlim(0.0, max(float(distance.max(initial=0.0)), median) * 1.1 or 1.0)
    bars.set_title("how far")
    bars.grid(True, axis="x", alpha=0.3)
    s = comparison.summary()
    fig.suptitle(
        title
        if title is not None
        else f"{names[0]} against {names[1]}: {s['shared']:,} shared words, mean overlap@"
        f"{s['k']} {s['mean_overlap']:.3f}, alignment error {s['alignment_error']:.3f}"
    )
    fig.draw_without_rendering()  # the layout is final: place the word labels in pixels
    fig.set_layout_engine("none")
    where.set_autoscale_on(False)
    place_labels(where, coords[t : 2 * t], [visible_label(w) for w in words], fontsize=8)
    return fig


def plot_moved(
    comparison: Comparison, a: Vectors, b: Vectors, path: str | os.PathLike[str], **kwargs: Any
) -> Path:
    """Write :func:`moved_figure` as a PNG at ``path``; returns the path.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rowbook.vectors import Vectors, compare
    >>> rng = np.random.default_rng(0)
    >>> keys = [f"w{i}" for i in range(50)]
    >>> a, b = Vectors(keys, rng.standard_normal((50, 5))), Vectors(keys, rng.standard_normal((50, 5)))
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "moved.png"
    >>> plot_moved(compare(a, b), a, b, out, top=5) == out
    True
    """
    return save_png(moved_figure(comparison, a, b, **kwargs), path)
