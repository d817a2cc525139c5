"""A small 3-D toy space with semantic clusters: what "similar words, nearby rows" looks like.

Twenty words in four groups (animals, fruit, vehicles, numbers), each group drawn around one
direction of a 3-D space with a little seeded noise, so every word's nearest neighbour by
cosine is a word of its own group and the groups sit in different directions from the
origin. Real tables have hundreds of dimensions; three are the most a picture can show
without a projection.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from rowbook.viz.plots import new_figure, save_png

__all__ = ["TOY_GROUPS", "plot_toy_space", "toy_space", "toy_space_figure"]

#: The groups, the words in each, and the direction the group points in.
TOY_GROUPS: dict[str, tuple[tuple[str, ...], tuple[float, float, float]]] = {
    "animals": (("cat", "dog", "horse", "cow", "mouse"), (1.0, 0.2, 0.1)),
    "fruit": (("apple", "pear", "banana", "plum", "cherry"), (0.1, 1.0, 0.2)),
    "vehicles": (("car", "bus", "train", "bike", "truck"), (0.2, 0.1, 1.0)),
    "numbers": (("one", "two", "three", "four", "five"), (0.8, 0.9, 0.9)),
}


def toy_space(*, noise: float = 0.15, seed: int = 0) -> tuple[np.ndarray, list[str], list[str]]:
    """``(vectors (20, 3), words, groups)``: each group around its direction, plus noise.

    >>> vectors, words, groups = toy_space()
    >>> vectors.shape, words[:2], groups[:2]
    ((20, 3), ['cat', 'dog'], ['animals', 'animals'])
    """
    rng = np.random.default_rng(seed)
    vectors, words, groups = [], [], []
    for group, (members, direction) in TOY_GROUPS.items():
        center = np.asarray(direction)  # (3,)
        for word in members:
            vectors.append(center + rng.normal(0.0, noise, size=3))
            words.append(word)
            groups.append(group)
    return np.array(vectors), words, groups  # (20, 3)


def toy_space_figure(
    *,
    noise: float = 0.15,
    seed: int = 0,
    figsize: tuple[float, float] = (6.5, 5.5),
    dpi: int = 90,
) -> Figure:
    """The toy space in 3-D: one colour per group, each word labelled, an arrow per group."""
    vectors, words, groups = toy_space(noise=noise, seed=seed)
    fig = new_figure(figsize, dpi)
    ax = fig.add_subplot(projection="3d")
    palette = dict(zip(TOY_GROUPS, ("#1f77b4", "#2ca02c", "#d62728", "#9467bd"), strict=True))
    for group, (_, direction) in TOY_GROUPS.items():
        rows = [i for i, g in enumerate(groups) if g == group]
        ax.scatter(*vectors[rows].T, color=palette[group], s=30, label=group, depthshade=False)
        ax.plot(
            *np.stack([np.zeros(3), direction]).T, color=palette[group], linewidth=0.8, alpha=0.5
        )
        for i in rows:
            ax.text(*vectors[i], f" {words[i]}", fontsize=7, color=palette[group])
    ax.scatter([0], [0], [0], color="0.3", marker="+", s=40)
    ax.set_xlabel("d0")
    ax.set_ylabel("d1")
    ax.set_zlabel("d2")
    ax.view_init(elev=20, azim=35)
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("a 3-D toy space: each word's nearest neighbour is in its own group", fontsize=9)
    return fig


def plot_toy_space(path: str | os.PathLike[str], **kwargs: Any) -> Path:
    """Write :func:`toy_space_figure` as a PNG at ``path``; returns the path."""
    return save_png(toy_space_figure(**kwargs), path)
