"""The initialisations compared on the colour-harmony model: each draws what its name says."""

from __future__ import annotations

import math

import pytest
import torch

from rowbook.demo.initialisation import INITIALISATIONS, compare_initialisations, init_table

SHAPE = (20_000, 4)


@pytest.mark.parametrize(
    ("name", "std"),
    [
        ("normal sigma=0.01", 0.01),
        ("normal sigma=0.1", 0.1),
        ("xavier N(0, 1/d)", 1 / math.sqrt(4)),
        ("example N(0, 0.5^2)", 0.5),
        ("pytorch default N(0, 1)", 1.0),
    ],
)
def test_normal_initialisations_have_their_scale(name, std):
    table = init_table(name, SHAPE, seed=1)
    assert abs(table.mean()) < 4 * std / math.sqrt(table.size)
    assert table.std() == pytest.approx(std, rel=0.02)


@pytest.mark.parametrize(("name", "a"), [("uniform a=0.05", 0.05), ("uniform a=0.5", 0.5)])
def test_uniform_initialisations_stay_in_their_bounds(name, a):
    table = init_table(name, SHAPE, seed=1)
    assert -a <= table.min() < -0.99 * a and 0.99 * a < table.max() <= a
    assert table.std() == pytest.approx(a / math.sqrt(3), rel=0.02)


def test_the_pytorch_default_is_torch_nn_embeddings():
    """torch.nn.Embedding.reset_parameters draws N(0, 1): same spread as ours."""
    torch.manual_seed(0)
    theirs = torch.nn.Embedding(*SHAPE).weight.detach().numpy()
    ours = init_table("pytorch default N(0, 1)", SHAPE)
    assert ours.std() == pytest.approx(theirs.std(), rel=0.03)


def test_unknown_initialisation_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="'zeros' is not one of"):
        compare_initialisations(["zeros"], epochs=1)


def test_compare_gives_one_row_per_initialisation():
    names = ["normal sigma=0.01", "pytorch default N(0, 1)"]
    rows = compare_initialisations(names, seeds=(0, 1), epochs=2)
    assert [r.name for r in rows] == names and set(INITIALISATIONS) >= set(names)
    for row in rows:
        assert len(row.epochs_to_100) == 2 and 0 < row.loss < 1 and 0 <= row.accuracy <= 1
    assert rows[0].loss != rows[1].loss
