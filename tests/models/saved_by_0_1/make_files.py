"""Writes the model files of this folder, as rowbook 0.1.0 (commit b77e4d4) saved them.

The files stay as they are: ``tests/models/test_saved_by_0_1.py`` loads each with the
current rowbook and checks it answers as it did when saved (``expected.npz``, written here
by the same release). Run it again only to add a file, from a checkout of that release:
``python tests/models/saved_by_0_1/make_files.py``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

import rowbook
from rowbook.text import ByteLevelBPE, Normalizer, TextPipeline

HERE = Path(__file__).parent
TEXT = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat", "on", "the", "rug"]] * 10
LINES = ["the cat sat on the mat", "the dog sat on the rug", "a cat is not a dog"] * 4
PROBE = ["the cat sat", "a dog is on the rug"]


def main() -> None:
    bpe = ByteLevelBPE().fit(LINES, vocab_size=280, special_tokens=["<pad>"])
    bpe = TextPipeline(Normalizer(case="lower"), bpe, None)
    models = {
        "Word2Vec": rowbook.Word2Vec(vector_size=8, min_count=1, epochs=2, workers=1).fit(TEXT),
        "FastText": rowbook.FastText(
            vector_size=8, min_count=1, bucket=50, epochs=2, workers=1, architecture="cbow"
        ).fit(TEXT),
        "GloVe": rowbook.GloVe(vector_size=6, min_count=1, epochs=3, workers=1).fit(TEXT),
        "ColorHarmony": rowbook.ColorHarmony(epochs=2).fit(None),
        "NPLM": rowbook.NPLM(level="word", context=2, dim=4, hidden=8, epochs=2).fit(LINES),
        "TextClassifier": rowbook.TextClassifier(dim=4, hidden=4, epochs=2).fit(
            LINES, [0, 1, 0] * 4
        ),
        "TextClassifier-bpe": rowbook.TextClassifier(dim=4, hidden=4, epochs=2, pipeline=bpe).fit(
            LINES, ["a", "b", "a"] * 4
        ),
        "LSTMClassifier": rowbook.LSTMClassifier(dim=4, hidden=4, epochs=2).fit(
            LINES, [0, 1, 0] * 4
        ),
    }
    expected = {}
    for name, model in models.items():
        model.save(HERE / f"{name}.npz")
        expected[f"{name}/vectors"] = model.vectors.vectors
        expected[f"{name}/keys"] = np.array(model.vectors.index_to_key)
        if hasattr(model, "predict_proba") and name != "ColorHarmony":
            expected[f"{name}/proba"] = model.predict_proba(PROBE)
        if name == "ColorHarmony":
            expected[f"{name}/proba"] = model.predict_proba([0, 1, 2], [3, 4, 5])
        if hasattr(model, "perplexity"):
            expected[f"{name}/perplexity"] = np.array(model.perplexity(PROBE))
    np.savez(HERE / "expected.npz", **expected)


if __name__ == "__main__":
    main()
