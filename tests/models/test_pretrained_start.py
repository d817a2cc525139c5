"""from_vectors: pretrained word2vec rows as the starting table of TextClassifier,
LSTMClassifier and NPLM; the other rows as the usual initialisation draws them; freezing;
saved and loaded models."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook import Vectors
from rowbook.models import NPLM, LSTMClassifier, TextClassifier, Word2Vec

TEXTS = ["good film", "bad film", "good plot", "bad plot", "a good cast", "a bad cast"] * 6
LABELS = [1, 0, 1, 0, 1, 0] * 6


@pytest.fixture(scope="module")
def word2vec_rows():
    """Rows of a word2vec trained on other text: some words shared, some not."""
    corpus = [s.split() for s in ["good film good plot", "bad film bad plot", "the cat sat"] * 30]
    model = Word2Vec(vector_size=8, window=2, min_count=1, epochs=3, seed=1, workers=1)
    return model.fit(corpus).vectors


def _fit(cls, vectors=None, **params):
    if cls is NPLM:
        params = {"level": "word", "context": 2, "val_fraction": 0, **params}
        make = cls.from_vectors(vectors, **params) if vectors is not None else cls(**params)
        return make.fit(TEXTS)
    make = cls.from_vectors(vectors, **params) if vectors is not None else cls(**params)
    return make.fit(TEXTS, LABELS)


MODELS = [TextClassifier, LSTMClassifier, NPLM]


@pytest.mark.parametrize("cls", MODELS)
def test_shared_words_start_from_the_vectors_and_the_rest_as_usual(cls, word2vec_rows):
    started = _fit(cls, word2vec_rows, epochs=0, seed=3).vectors
    usual = _fit(cls, dim=8, epochs=0, seed=3).vectors
    assert started.index_to_key == usual.index_to_key
    shared = [k for k in started.index_to_key if k in word2vec_rows]
    assert {"good", "bad", "film", "plot"} <= set(shared)
    np.testing.assert_array_equal(started[shared], word2vec_rows[shared])
    others = [k for k in started.index_to_key if k not in word2vec_rows]
    assert others and "cast" in others
    np.testing.assert_array_equal(started[others], usual[others])


@pytest.mark.parametrize("cls", MODELS)
def test_a_frozen_table_stays_as_it_started_while_the_rest_trains(cls, word2vec_rows):
    frozen = _fit(cls, word2vec_rows, epochs=3, freeze_embeddings=True, seed=0)
    untrained = _fit(cls, word2vec_rows, epochs=0, seed=0)
    np.testing.assert_array_equal(frozen.vectors.vectors, untrained.vectors.vectors)
    moved = [
        not np.array_equal(a.data, b.data)
        for a, b in zip(frozen.net_.parameters(), untrained.net_.parameters(), strict=True)
    ]
    assert sum(moved) >= 2  # the layers after the table trained
    tuned = _fit(cls, word2vec_rows, epochs=3, seed=0)
    assert not np.array_equal(tuned.vectors["good"], word2vec_rows["good"])


@pytest.mark.parametrize("cls", MODELS)
def test_saved_and_loaded_models_keep_the_trained_table(cls, word2vec_rows, tmp_path):
    model = _fit(cls, word2vec_rows, epochs=2, seed=0)
    model.save(tmp_path / "m.npz")
    loaded = cls.load(tmp_path / "m.npz")
    np.testing.assert_array_equal(loaded.vectors.vectors, model.vectors.vectors)
    assert loaded.get_params() == model.get_params()
    if cls is NPLM:
        assert loaded.perplexity(TEXTS[:4]) == model.perplexity(TEXTS[:4])
    else:
        np.testing.assert_array_equal(loaded.predict_proba(TEXTS), model.predict_proba(TEXTS))


def test_resuming_continues_the_file_not_the_vectors(word2vec_rows, tmp_path):
    path = tmp_path / "ckpt.npz"
    whole = NPLM.from_vectors(word2vec_rows, level="word", context=2, epochs=3, val_fraction=0)
    whole.fit(TEXTS)
    part = NPLM.from_vectors(word2vec_rows, level="word", context=2, epochs=1, val_fraction=0)
    part.fit(TEXTS, checkpoint=path)
    other = Vectors(word2vec_rows.index_to_key, np.zeros_like(word2vec_rows.vectors))
    rest = NPLM.from_vectors(other, level="word", context=2, epochs=3, val_fraction=0)
    rest.fit(TEXTS, resume=path)
    np.testing.assert_array_equal(rest.vectors.vectors, whole.vectors.vectors)


def test_bad_vectors_are_refused_with_the_fix(word2vec_rows):
    with pytest.raises(
        ValueError, match=r"dim must be 8, the vectors' size, got 16.*leave dim out"
    ):
        TextClassifier.from_vectors(word2vec_rows, dim=16)
    with pytest.raises(TypeError, match=r"vectors must be a rowbook\.Vectors, got ndarray"):
        NPLM.from_vectors(word2vec_rows.vectors)
    with pytest.raises(ValueError, match="freeze_embeddings must be one of False, True"):
        LSTMClassifier(freeze_embeddings="yes")
