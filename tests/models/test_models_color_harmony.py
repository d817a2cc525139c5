"""The colour-harmony example's predictor: the dataset rules and the trained table."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.models import NotFittedError
from rowbook.models.color_harmony import COLOR_NAMES, ColorHarmony, harmony_pairs


def test_dataset_follows_the_wheel_rules():
    left, right, label = harmony_pairs()
    assert len(label) == 192 and len(COLOR_NAMES) == 16
    for a, b, y in zip(left, right, label, strict=True):
        wheel = min(abs(a - b), 16 - abs(a - b))
        assert wheel not in (6, 7)
        assert y == (1.0 if wheel in (0, 1, 8) else 0.0)
    assert sorted(zip(left.tolist(), right.tolist(), strict=True)) == sorted(set(zip(left.tolist(), right.tolist(), strict=True)))


@pytest.fixture(scope="module")
def trained() -> ColorHarmony:
    return ColorHarmony(seed=0).fit(epochs=200, lr=0.1)


def test_reaches_full_accuracy_with_the_seed_settings(trained):
    assert trained.accuracy() == 1.0
    assert trained.history_.epochs[-1]["loss"] < 0.01


def test_nearest_neighbour_is_the_complement(trained):
    neighbours = trained.nearest_neighbors()
    for i, name in enumerate(COLOR_NAMES):
        assert neighbours[name] == COLOR_NAMES[(i + 8) % 16]
    cos = trained.cosine_table()
    np.testing.assert_allclose(np.diag(cos), 1.0, rtol=1e-6)
    np.testing.assert_allclose(cos, cos.T, atol=1e-7)


def test_untrained_model_is_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted"):
        ColorHarmony(seed=0).accuracy()
