"""What a picture draws: rows of a table, one label per row, optional groups or colours.

Every function in :mod:`rowbook.viz` takes its table the same two ways:

* an ``(n, d)`` array plus ``labels`` (default ``"0"``, ``"1"``, ...), or
* a :class:`~rowbook.vectors.Vectors` plus ``words`` (default: every key, in row order).

:func:`as_points` turns either into a float64 ``(n, d)`` array and ``n`` labels, and
checks the per-point ``groups`` (colour by category, with a legend) or ``colors``
(one ``"#rrggbb"`` per point).
"""

from __future__ import annotations

import colorsys
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from rowbook.checks import InputTypeError, UnknownKeyError

if TYPE_CHECKING:
    from rowbook.vectors import Vectors

__all__ = ["PALETTE", "Points", "as_points", "cosine_matrix", "group_colors", "hue_colors"]

# matplotlib's "tab10" colours, spelled out so the HTML view needs no matplotlib
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
_HEX = re.compile(r"#[0-9a-fA-F]{6}")


@dataclass(frozen=True)
class Points:
    """A checked table to draw: ``X`` (n, d) float64, ``labels`` and per-point ``colors``.

    ``groups`` is ``None`` or the ``n`` group names; ``legend`` lists ``(group, colour)``
    in first-seen order (empty without groups).
    """

    X: np.ndarray
    labels: list[str]
    colors: list[str]
    groups: list[str] | None
    legend: list[tuple[str, str]]


def hue_colors(n: int, *, saturation: float = 0.85, value: float = 0.9) -> list[str]:
    """``n`` colours evenly spaced around the hue circle, as ``"#rrggbb"``, red first.

    Handy for anything that lives on a wheel (the colour-harmony table).

    Examples
    --------
    >>> hue_colors(3)
    ['#e62222', '#22e622', '#2222e6']
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rgb = [colorsys.hsv_to_rgb(i / n, saturation, value) for i in range(n)]
    return ["#" + "".join(f"{round(255 * c):02x}" for c in triple) for triple in rgb]


def group_colors(groups: Sequence[Any]) -> tuple[list[str], list[tuple[str, str]]]:
    """One palette colour per distinct group (first-seen order, cycling after 10).

    Examples
    --------
    >>> group_colors(["a", "b", "a"])
    (['#1f77b4', '#ff7f0e', '#1f77b4'], [('a', '#1f77b4'), ('b', '#ff7f0e')])
    """
    names = [str(g) for g in groups]
    order = list(dict.fromkeys(names))
    colour = {g: PALETTE[i % len(PALETTE)] for i, g in enumerate(order)}
    return [colour[g] for g in names], [(g, colour[g]) for g in order]


def cosine_matrix(X: np.ndarray) -> np.ndarray:
    """``(n, n)`` cosine similarity of the rows of ``X``; a zero row scores 0 with everything.

    Examples
    --------
    >>> cosine_matrix(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])).round(3)
    array([[1.   , 0.707, 0.   ],
           [0.707, 1.   , 0.   ],
           [0.   , 0.   , 0.   ]])
    """
    X = np.asarray(X, dtype=np.float64)  # (n, d)
    norms = np.linalg.norm(X, axis=1, keepdims=True)  # (n, 1)
    unit = np.divide(X, norms, out=np.zeros_like(X), where=norms > 0)  # (n, d)
    return np.clip(unit @ unit.T, -1.0, 1.0)  # (n, n)


def as_points(
    data: np.ndarray | Vectors,
    labels: Sequence[Any] | None = None,
    words: Sequence[str] | None = None,
    *,
    groups: Sequence[Any] | None = None,
    colors: Sequence[str] | None = None,
) -> Points:
    """Check a table and its per-point annotations; see the module docstring."""
    if hasattr(data, "index_to_key") and hasattr(data, "vectors"):
        X, labels = _from_vectors(data, labels, words)
    else:
        X, labels = _from_array(data, labels, words)
    n = len(X)
    if groups is not None and colors is not None:
        raise ValueError("give groups (colour by category) or colors (one per point), not both")
    if groups is not None:
        _check_length("groups", groups, n)
        point_colors, legend = group_colors(groups)
        return Points(X, labels, point_colors, [str(g) for g in groups], legend)
    if colors is not None:
        _check_length("colors", colors, n)
        for i, c in enumerate(colors):
            if not isinstance(c, str) or not _HEX.fullmatch(c):
                raise ValueError(f"colors[{i}] must be a '#rrggbb' string, got {c!r}")
        return Points(X, labels, [c.lower() for c in colors], None, [])
    return Points(X, labels, [PALETTE[0]] * n, None, [])


def _from_vectors(
    vectors: Any, labels: Any, words: Sequence[str] | None
) -> tuple[np.ndarray, list[str]]:
    if labels is not None:
        raise ValueError("labels are the words of a Vectors; pick rows with words=[...] instead")
    if words is None:
        words = list(vectors.index_to_key)
    elif isinstance(words, str):
        raise InputTypeError(
            f"words must be a list of words, got the string {words!r}; use [{words!r}]"
        )
    words = list(words)
    if not words:
        raise ValueError("words is empty; give at least one word, or words=None for every key")
    known = vectors.key_to_index if hasattr(vectors, "key_to_index") else set(vectors.index_to_key)
    for w in words:
        if w not in known:
            raise UnknownKeyError(
                f"word {w!r} is not in the vectors ({len(vectors.index_to_key)} keys)"
            )
    X = np.asarray(vectors[words], dtype=np.float64).reshape(len(words), -1)  # (n, d)
    return _check_finite(X), [str(w) for w in words]


def _from_array(data: Any, labels: Any, words: Any) -> tuple[np.ndarray, list[str]]:
    if words is not None:
        raise ValueError("words selects rows of a Vectors; for an array, pass its rows and labels")
    try:
        X = np.asarray(data, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise InputTypeError(
            f"data must be an (n, d) array of numbers or a Vectors: {err}"
        ) from None
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"data must be a 2-D (n, d) array with n, d >= 1, got shape {X.shape}")
    if labels is None:
        return _check_finite(X), [str(i) for i in range(len(X))]
    if isinstance(labels, str):
        raise InputTypeError(f"labels must be a sequence of n labels, got the string {labels!r}")
    _check_length("labels", labels, len(X))
    return _check_finite(X), [str(label) for label in labels]


def _check_finite(X: np.ndarray) -> np.ndarray:
    bad = np.flatnonzero(~np.isfinite(X).all(axis=1))
    if bad.size:
        raise ValueError(
            f"data row {bad[0]} has a NaN or infinite value; drawing needs finite rows"
        )
    return X


def _check_length(name: str, values: Sequence[Any], n: int) -> None:
    if len(values) != n:
        raise ValueError(f"{name} must have one entry per point ({n}), got {len(values)}")
