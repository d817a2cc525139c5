"""The colour harmony example: the dataset rules, the trained table, save / load / resume."""

from __future__ import annotations

import numpy as np
import pytest

import rowbook
from rowbook.models import NotFittedError
from rowbook.models.color_harmony import COLOR_NAMES, ColorHarmony, harmony_pairs


def test_dataset_follows_the_wheel_rules():
    left, right, label = harmony_pairs()
    assert len(label) == 192 and len(COLOR_NAMES) == 16
    for a, b, y in zip(left, right, label, strict=True):
        wheel = min(abs(a - b), 16 - abs(a - b))
        assert wheel not in (6, 7)
        assert y == (1.0 if wheel in (0, 1, 8) else 0.0)
    assert sorted(zip(left.tolist(), right.tolist(), strict=True)) == sorted(
        set(zip(left.tolist(), right.tolist(), strict=True))
    )


@pytest.fixture(scope="module")
def trained() -> ColorHarmony:
    return ColorHarmony(seed=0, epochs=200, lr=0.1).fit()


def test_reaches_full_accuracy_with_the_seed_settings(trained):
    assert trained.accuracy() == 1.0
    assert trained.history_.epochs[-1]["loss"] < 0.01


def test_nearest_neighbour_is_the_complement(trained):
    neighbors = trained.nearest_neighbors()
    for i, name in enumerate(COLOR_NAMES):
        assert neighbors[name] == COLOR_NAMES[(i + 8) % 16]
    cos = trained.cosine_table()
    np.testing.assert_allclose(np.diag(cos), 1.0, rtol=1e-6)
    np.testing.assert_allclose(cos, cos.T, atol=1e-7)


def test_neighbors_and_cosines_agree_with_the_vectors_queries(trained):
    vectors = trained.vectors
    assert vectors.index_to_key == COLOR_NAMES
    cos = trained.cosine_table()
    assert cos[0, 5] == pytest.approx(vectors.similarity("red", "yellow_green"), abs=1e-6)


def test_untrained_model_is_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted"):
        ColorHarmony(seed=0).accuracy()


def test_save_load_gives_the_same_model_bit_for_bit(tmp_path):
    model = ColorHarmony(epochs=3, seed=1).fit()
    model.save(tmp_path / "colors.npz")
    loaded = rowbook.load(tmp_path / "colors.npz")
    assert isinstance(loaded, ColorHarmony) and loaded.get_params() == model.get_params()
    left, right, _ = harmony_pairs()
    np.testing.assert_array_equal(
        loaded.predict_proba(left, right), model.predict_proba(left, right)
    )
    np.testing.assert_array_equal(loaded.vectors.vectors, model.vectors.vectors)
    assert loaded.history_.epochs == model.history_.epochs


def test_checkpoint_then_resume_equals_one_run(tmp_path):
    path = tmp_path / "colors.npz"
    straight = ColorHarmony(epochs=4, seed=2).fit()
    ColorHarmony(epochs=2, seed=2).fit(checkpoint=path)
    assert ColorHarmony.load(path).history_.epochs[-1]["epoch"] == 1
    resumed = ColorHarmony(epochs=4, seed=2).fit(checkpoint=path, resume=path)
    np.testing.assert_array_equal(resumed.vectors.vectors, straight.vectors.vectors)
    for name, value in straight.net_.state_dict().items():
        np.testing.assert_array_equal(resumed.net_.state_dict()[name], value, err_msg=name)
    assert resumed.history_.resumed_at == [2]
    assert [e["loss"] for e in resumed.history_.epochs] == [
        e["loss"] for e in straight.history_.epochs
    ]
    np.testing.assert_array_equal(ColorHarmony.load(path).vectors.vectors, straight.vectors.vectors)


def test_resume_with_other_parameters_names_them(tmp_path):
    path = tmp_path / "colors.npz"
    ColorHarmony(epochs=1).fit(checkpoint=path)
    with pytest.raises(ValueError, match=r"other parameters \(lr saved 0.1, now 0.5\)"):
        ColorHarmony(epochs=2, lr=0.5).fit(resume=path)
    from rowbook.models import NPLM

    with pytest.raises(ValueError, match="holds a ColorHarmony model, not a NPLM"):
        NPLM(epochs=1).fit(["ab", "ba"], resume=path)


def test_fit_on_other_pairs_and_bad_pairs():
    left, right, label = harmony_pairs()
    model = ColorHarmony(epochs=1).fit((left[:10], right[:10], label[:10]))
    assert model.history_.epochs[0]["loss"] > 0
    with pytest.raises(ValueError, match=r"left must be 1-d colour ids in \[0, 16\)"):
        ColorHarmony(epochs=1).fit((left + 20, right, label))
    with pytest.raises(ValueError, match="ColorHarmony: lr must be"):
        ColorHarmony(lr=0.0)


def test_the_log_the_chapter_prints(trained):
    """Loss and accuracy before training, then each epoch's: held to the untrained network and
    to the model's own predictions."""
    from rowbook.models.color_harmony import HarmonyNet

    left, right, label = harmony_pairs()
    untrained = HarmonyNet(16, 4, 16, rng=0)  # what fit builds first, with the same seed
    logits = untrained(left, right).data.astype(np.float64)
    p = 1 / (1 + np.exp(-logits))
    initial = trained.history_.initial
    assert set(initial) == {"eval_loss", "eval_accuracy"}
    assert initial["eval_accuracy"] == pytest.approx(np.mean((p > 0.5) == (label > 0.5)))
    bce = -np.mean(label * np.log(p) + (1 - label) * np.log(1 - p))
    assert initial["eval_loss"] == pytest.approx(bce, rel=1e-5)
    last = trained.history_.epochs[-1]
    assert set(last) == {"epoch", "loss", "eval_loss", "eval_accuracy"}
    assert last["eval_accuracy"] == trained.accuracy() == 1.0
    z = trained.net_(left, right).data.astype(np.float64)  # logits: the stable form of the BCE
    expected = np.mean(np.maximum(z, 0) - z * label + np.log1p(np.exp(-np.abs(z))))
    assert last["eval_loss"] == pytest.approx(expected, rel=1e-3)  # float32 against float64
