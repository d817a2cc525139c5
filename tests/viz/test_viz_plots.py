"""PNG pictures: valid files of the promised size, points where the projection puts them,
labels beside them, the heatmap holding the cosines, curves holding the metrics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from matplotlib import image as mpimg

from rowbook.training import History
from rowbook.vectors import Vectors
from rowbook.viz import (
    plot_scatter,
    plot_similarity,
    plot_training,
    scatter_figure,
    similarity_figure,
    training_figure,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _check_png(path: Path, size: tuple[int, int]) -> np.ndarray:
    assert path.read_bytes()[:8] == PNG_SIGNATURE
    pixels = mpimg.imread(path)  # (H, W, 4) floats in [0, 1]
    assert pixels.shape[:2] == (size[1], size[0])
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []  # atomic
    return pixels


def _pca_reference(X: np.ndarray, k: int) -> np.ndarray:
    """Coordinates on the top-k covariance eigenvectors (signs arbitrary)."""
    values, vectors = np.linalg.eigh(np.cov(X, rowvar=False))
    return (X - X.mean(axis=0)) @ vectors[:, np.argsort(values)[::-1][:k]]


def _assert_equal_up_to_column_signs(a: np.ndarray, b: np.ndarray) -> None:
    signs = np.sign(np.sum(a * b, axis=0))
    np.testing.assert_allclose(a, b * signs, atol=1e-8)


@pytest.fixture
def table() -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(0)
    X = rng.standard_normal((12, 6)) * np.array([4.0, 2.0, 1.0, 0.5, 0.2, 0.1])
    return X, [f"word{i}" for i in range(12)]


def test_scatter_png(tmp_path: Path, table: tuple[np.ndarray, list[str]]) -> None:
    X, labels = table
    out = plot_scatter(X, tmp_path / "scatter.png", labels=labels, figsize=(6, 4), dpi=80)
    assert out == tmp_path / "scatter.png"
    pixels = _check_png(out, (480, 320))
    assert (pixels[..., :3].min(axis=-1) < 0.5).mean() > 0.005  # something dark was drawn


def test_scatter_points_and_labels_follow_the_projection(
    table: tuple[np.ndarray, list[str]],
) -> None:
    X, labels = table
    fig = scatter_figure(X, labels)
    ax = fig.axes[0]
    offsets = np.asarray(ax.collections[0].get_offsets())  # (n, 2)
    _assert_equal_up_to_column_signs(offsets, _pca_reference(X, 2))
    assert sorted(t.get_text() for t in ax.texts) == sorted(labels)  # 12 labels: room for all
    assert ax.get_xlabel().startswith("PC1 (") and ax.get_ylabel().startswith("PC2 (")
    assert not scatter_figure(X, labels, show_labels="none").axes[0].texts


def test_scatter_of_vectors_with_words_and_groups(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    vectors = Vectors(["a", "b", "c", "d", "e"], rng.standard_normal((5, 3)))
    fig = scatter_figure(vectors, words=["e", "a", "c"], groups=["vowel", "vowel", "consonant"])
    ax = fig.axes[0]
    assert sorted(t.get_text() for t in ax.texts) == ["a", "c", "e"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["vowel", "consonant"]
    colours = ax.collections[0].get_facecolors()
    np.testing.assert_array_equal(colours[0], colours[1])
    assert not np.array_equal(colours[0], colours[2])
    with pytest.raises(KeyError, match="'zebra'"):
        plot_scatter(vectors, tmp_path / "x.png", words=["a", "zebra"])
    assert not list(tmp_path.iterdir())


def test_scatter_of_two_columns_as_they_are() -> None:
    X = np.array([[0.0, 1.0], [2.0, 3.0], [5.0, -1.0]])
    offsets = scatter_figure(X, method="none").axes[0].collections[0].get_offsets()
    np.testing.assert_array_equal(np.asarray(offsets), X)


def test_similarity_heatmap(tmp_path: Path, table: tuple[np.ndarray, list[str]]) -> None:
    X, labels = table
    fig = similarity_figure(X, labels)
    ax = fig.axes[0]
    t = torch.from_numpy(X)
    expected = torch.nn.functional.cosine_similarity(t[:, None], t[None], dim=-1).numpy()
    np.testing.assert_allclose(ax.images[0].get_array(), expected, atol=1e-12)
    assert [x.get_text() for x in ax.get_xticklabels()] == labels
    assert [y.get_text() for y in ax.get_yticklabels()] == labels
    assert ax.images[0].get_clim() == (-1.0, 1.0)
    cells = [t.get_text() for t in ax.texts]
    assert len(cells) == 144 and cells[1] == f"{expected[0, 1]:.2f}"
    out = plot_similarity(X, tmp_path / "cos.png", labels=labels, figsize=(5, 4), dpi=50)
    _check_png(out, (250, 200))


def test_training_curves_from_history(tmp_path: Path) -> None:
    epochs = [
        {"epoch": e, "loss": 1 / (e + 1), "val_loss": 1.2 / (e + 1), "val_accuracy": e / 10}
        for e in range(10)
    ]
    fig = training_figure(History(epochs=epochs))
    losses, others = fig.axes
    lines = {line.get_label(): line for ax in fig.axes for line in ax.get_lines()}
    assert [line.get_label() for line in losses.get_lines()] == ["loss", "val_loss"]
    assert [line.get_label() for line in others.get_lines()] == ["val_accuracy"]
    np.testing.assert_allclose(lines["loss"].get_xdata(), np.arange(1, 11))
    np.testing.assert_allclose(lines["val_loss"].get_ydata(), [e["val_loss"] for e in epochs])
    out = plot_training(epochs, tmp_path / "curves.png", log_loss=True, dpi=40)
    _check_png(out, (320, 180))
    assert training_figure(epochs, log_loss=True).axes[0].get_yscale() == "log"


def test_training_curves_selection_and_gaps() -> None:
    epochs = [{"loss": 3.0}, {"loss": 2.0, "accuracy": 0.5}, {"loss": 1.0, "accuracy": 0.75}]
    fig = training_figure(epochs, metrics=["accuracy"])
    (line,) = fig.axes[0].get_lines()
    np.testing.assert_array_equal(line.get_xdata(), [1, 2, 3])  # positions when there is no "epoch"
    np.testing.assert_array_equal(line.get_ydata(), [np.nan, 0.5, 0.75])
    with pytest.raises(
        KeyError, match=r"metric 'val_loss' is in no epoch; the epochs hold \['accuracy', 'loss'\]"
    ):
        training_figure(epochs, metrics=["val_loss"])
    with pytest.raises(ValueError, match="epochs is empty"):
        training_figure([])
    with pytest.raises(TypeError, match=r"epochs\[0\] must be a dict"):
        training_figure([1.0, 2.0])
    with pytest.raises(ValueError, match="no numeric metric"):
        training_figure([{"epoch": 0}])


def test_missing_folder_is_reported(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        plot_scatter(np.eye(3), tmp_path / "nope" / "x.png")
