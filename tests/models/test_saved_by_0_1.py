"""Model files saved by rowbook 0.1.0 still load and answer as they did when saved.

``saved_by_0_1/`` holds one small file per model class (and a classifier over a byte-level
BPE pipeline), written by that release with ``saved_by_0_1/make_files.py``, together with
what each model answered then (``expected.npz``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rowbook

HERE = Path(__file__).parent / "saved_by_0_1"
PROBE = ["the cat sat", "a dog is on the rug"]
NAMES = sorted(p.stem for p in HERE.glob("*.npz") if p.stem != "expected")


#: The model classes of rowbook 0.1.0: each has a file here.
CLASSES_OF_0_1 = {
    "ColorHarmony",
    "NPLM",
    "TextClassifier",
    "LSTMClassifier",
    "Word2Vec",
    "GloVe",
    "FastText",
}


def test_every_model_class_of_0_1_has_a_saved_file():
    assert {name.split("-")[0] for name in NAMES} == CLASSES_OF_0_1


@pytest.mark.parametrize("name", NAMES)
def test_a_file_saved_by_0_1_loads_and_answers_as_it_did(name):
    expected = np.load(HERE / "expected.npz")
    model = rowbook.load(HERE / f"{name}.npz")
    assert type(model).__name__ == name.split("-")[0]
    assert list(model.vectors.index_to_key) == expected[f"{name}/keys"].tolist()
    assert np.array_equal(model.vectors.vectors, expected[f"{name}/vectors"])
    if f"{name}/proba" in expected:
        args = ([0, 1, 2], [3, 4, 5]) if name == "ColorHarmony" else (PROBE,)
        assert np.array_equal(model.predict_proba(*args), expected[f"{name}/proba"])
    if f"{name}/perplexity" in expected:
        assert model.perplexity(PROBE) == float(expected[f"{name}/perplexity"])


def test_a_checkpoint_saved_by_0_1_resumes(tmp_path):
    """The one resume rule reads old state versions too: a 0.1 run continues here."""
    import shutil

    lines = ["the cat sat on the mat", "the dog sat on the rug", "a cat is not a dog"] * 4
    for name, model, args in [
        (
            "TextClassifier",
            rowbook.TextClassifier(dim=4, hidden=4, epochs=3),
            (lines, [0, 1, 0] * 4),
        ),
        ("NPLM", rowbook.NPLM(level="word", context=2, dim=4, hidden=8, epochs=3), (lines,)),
    ]:
        path = tmp_path / f"{name}.npz"
        shutil.copy(HERE / f"{name}.npz", path)
        model.fit(*args, resume=path, checkpoint=path)
        assert len(model.history_.epochs) == 3 and model.history_.resumed_at == [2]
