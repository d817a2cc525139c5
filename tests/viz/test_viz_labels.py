"""PNG labels people can read: on a crowded plot no two label boxes intersect (as matplotlib
measures the drawn text), each label stays beside its point or has a leader line to it, the
hidden ones are counted on the picture, invisible characters are shown, the title says what
is drawn."""

from __future__ import annotations

import re

import numpy as np
import pytest
from matplotlib.lines import Line2D

from rowbook.viz import scatter_figure
from rowbook.viz.labels import SPACE, visible_label


def _drawn(fig):
    """(labels, their pixel boxes, the points in pixels, leader lines, the hidden note)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    ax = fig.axes[0]
    note = [t for t in ax.texts if "hidden" in t.get_text()]
    texts = [t for t in ax.texts if t not in note]
    boxes = np.array([t.get_window_extent(renderer).extents for t in texts]).reshape(-1, 4)
    points = ax.transData.transform(np.asarray(ax.collections[0].get_offsets()))
    leaders = [line for line in ax.lines if isinstance(line, Line2D)]
    return texts, boxes, points, leaders, note, ax.get_window_extent(renderer).extents


@pytest.fixture
def crowd() -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 10)) * np.linspace(3, 0.3, 10)
    return X, [f"word{i}" for i in range(150)]


def test_crowded_labels_never_overlap_and_the_hidden_are_counted(crowd) -> None:
    X, labels = crowd
    texts, boxes, points, leaders, note, frame = _drawn(scatter_figure(X, labels))
    n = len(boxes)
    assert 50 < n < 150  # crowded: some must go
    x0, y0, x1, y1 = (boxes[:, None, j] for j in range(4))
    meet = (x0 < x1.T) & (x0.T < x1) & (y0 < y1.T) & (y0.T < y1)
    np.fill_diagonal(meet, False)
    assert not meet.any(), [texts[i].get_text() for i in np.argwhere(meet)[0]]
    assert (boxes[:, :2] >= frame[:2] - 0.5).all() and (boxes[:, 2:] <= frame[2:] + 0.5).all()
    assert len(note) == 1 and note[0].get_text() == f"{150 - n} of 150 labels hidden (no room)"
    # the first rows win the space: the first label is shown
    assert texts[0].get_text() == "word0"
    # each label is next to its own point, or a leader line runs from its point to its box
    ends = {tuple(np.round(line.get_xydata()[-1], 6)) for line in leaders}
    for text, box in zip(texts, boxes, strict=True):
        i = labels.index(text.get_text())
        nearest = np.clip(points[i], box[:2], box[2:])
        if np.hypot(*(nearest - points[i])) > 12:
            end = text.axes.transData.inverted().transform(nearest)
            assert tuple(np.round(end, 6)) in ends, text.get_text()
        # and no label covers another point's centre
        inside = (points[:, 0] > box[0]) & (points[:, 0] < box[2])
        inside &= (points[:, 1] > box[1]) & (points[:, 1] < box[3])
        assert not inside.any(), text.get_text()


def test_show_all_or_none(crowd) -> None:
    X, labels = crowd
    texts, _, _, _, note, _ = _drawn(scatter_figure(X[:40], labels[:40], show_labels="all"))
    assert sorted(t.get_text() for t in texts) == sorted(labels[:40]) and not note
    assert not scatter_figure(X, labels, show_labels="none").axes[0].texts
    with pytest.raises(ValueError, match="show_labels must be one of 'auto', 'all', 'none'"):
        scatter_figure(X, labels, show_labels="some")


def test_invisible_characters_are_shown() -> None:
    chars = ["a", " ", "\t", "\n", "b", "\u200b", "c d"]
    X = np.random.default_rng(1).standard_normal((len(chars), 4))
    texts, *_ = _drawn(scatter_figure(X, chars, figsize=(8, 6)))
    assert sorted(t.get_text() for t in texts) == sorted(
        ["a", SPACE, "\\t", "\\n", "b", "\\u200b", "c d"]
    )
    assert visible_label("  x ") == SPACE * 2 + "x" + SPACE and visible_label("") == '""'


def test_title_says_what_is_drawn(crowd) -> None:
    X, labels = crowd
    centred = X - X.mean(0)
    values = np.linalg.eigvalsh(np.cov(centred, rowvar=False))[::-1]
    share = 100 * values[:2].sum() / values.sum()  # the variance the two PCA axes show
    fig = scatter_figure(X, labels, subject="word2vec, 150 most frequent words")
    title = fig.axes[0].get_title()
    assert title == f"word2vec, 150 most frequent words, PCA 2-D, {share:.0f}% variance"
    assert re.fullmatch(
        r"150 points, PCA 2-D, \d+% variance", scatter_figure(X).axes[0].get_title()
    )
    assert scatter_figure(X, title="mine").axes[0].get_title() == "mine"
