"""The teaching pictures: the one-hot product, the rows a gradient touches, the BPE merges
as an animation, the 3-D toy space. Each writes its file, and the data drawn is checked."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

from rowbook.demo.lookup import HAND_TABLE
from rowbook.text import ByteLevelBPE
from rowbook.viz.bpe_animation import merge_frames, write_merge_animation
from rowbook.viz.lookup import plot_one_hot, plot_touched_rows, touched_rows
from rowbook.viz.toy_space import plot_toy_space, toy_space

VOCAB = ["<pad>", "<unk>", "the", "cat", "sat", "on", "mat"]
BATCHES = [[2, 3, 4, 5, 2, 6], [2, 3, 4, 0, 0, 0], [3, 1, 6, 0, 0, 0]]


def test_one_hot_picture_is_written(tmp_path):
    out = plot_one_hot([2, 3, 4, 5, 2, 6], HAND_TABLE, tmp_path / "one_hot.png", vocab=VOCAB)
    assert Image.open(out).size == (1000, 340)


def test_one_hot_refuses_ids_outside_the_table(tmp_path):
    with pytest.raises(ValueError, match=r"ids must be a 1-d list of row ids in \[0, 7\)"):
        plot_one_hot([7], HAND_TABLE, tmp_path / "x.png")


@pytest.mark.parametrize("padding_idx", [None, 0, 3])
def test_touched_rows_are_the_rows_torch_gives_a_gradient(padding_idx):
    touched = touched_rows(BATCHES, 7, padding_idx)
    for batch, row in zip(BATCHES, touched, strict=True):
        weight = torch.randn(7, 2, requires_grad=True)
        torch.nn.functional.embedding(
            torch.tensor(batch), weight, padding_idx=padding_idx
        ).sum().backward()
        np.testing.assert_array_equal(row, (weight.grad != 0).any(dim=1).numpy())
    expected = [sorted(set(b) - {padding_idx}) for b in BATCHES]
    assert [np.flatnonzero(row).tolist() for row in touched] == expected


def test_touched_rows_picture_is_written(tmp_path):
    out = plot_touched_rows(BATCHES, 7, tmp_path / "touched.png", labels=VOCAB)
    assert out.stat().st_size > 0 and Image.open(out).format == "PNG"


def test_merge_frames_replay_the_trained_merges(tmp_path):
    model = ByteLevelBPE().fit(["low lower lowest newer newest wider widest"] * 4, 256 + 8)
    text = "the lowest newer"
    frames = merge_frames(model, text)
    assert [f.merge for f in frames[1:]] == [tuple(m) for m in model.merges]
    assert frames[0].tokens == list("the\u0120lowest\u0120newer")  # bytes (a space is 'Ġ')
    assert frames[-1].tokens == model.tokenize(text)
    assert all("".join(f.tokens) == "".join(frames[0].tokens) for f in frames)
    lengths = [len(f.tokens) for f in frames]
    assert lengths == sorted(lengths, reverse=True)
    out = write_merge_animation(frames, tmp_path / "merges.gif")
    gif = Image.open(out)
    assert gif.format == "GIF" and gif.n_frames == len(frames) == 9


def test_an_empty_animation_is_refused(tmp_path):
    with pytest.raises(ValueError, match="frames is empty"):
        write_merge_animation([], tmp_path / "x.gif")


def test_toy_space_clusters_are_nearest_neighbours(tmp_path):
    vectors, words, groups = toy_space()
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cos = unit @ unit.T
    np.fill_diagonal(cos, -np.inf)
    assert all(groups[j] == groups[i] for i, j in enumerate(cos.argmax(axis=1)))
    assert len(set(words)) == 20
    assert Image.open(plot_toy_space(tmp_path / "toy.png")).format == "PNG"
