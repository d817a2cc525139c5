"""The worked models: colour harmony, a neural language model, classifiers, word vectors.

Every model follows one contract, written down in :mod:`rowbook.models.base`: keyword
parameters, ``fit(data, *, checkpoint=None, resume=None) -> self``, ``vectors``,
``save(path)`` and ``Cls.load(path)``. :func:`load` opens any saved model.
"""

from __future__ import annotations

import os

from rowbook.models.base import Model, NotFittedError, read_model_file
from rowbook.models.classifier import LSTMClassifier, TextClassifier
from rowbook.models.color_harmony import COLOR_NAMES, ColorHarmony
from rowbook.models.fasttext import FastText
from rowbook.models.glove import GloVe
from rowbook.models.nplm import NPLM
from rowbook.models.word2vec import Word2Vec

__all__ = [
    "COLOR_NAMES",
    "MODELS",
    "NPLM",
    "ColorHarmony",
    "FastText",
    "GloVe",
    "LSTMClassifier",
    "Model",
    "NotFittedError",
    "TextClassifier",
    "Word2Vec",
    "load",
]

#: Every model class by name: what :func:`load` can open and what the contract test checks.
MODELS: dict[str, type] = {
    cls.__name__: cls
    for cls in (ColorHarmony, NPLM, TextClassifier, LSTMClassifier, Word2Vec, GloVe, FastText)
}


def load(path: str | os.PathLike[str]) -> Model:
    """The model saved at ``path``, of whichever class saved it.

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> corpus = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 20
    >>> model = Word2Vec(vector_size=8, min_count=1, epochs=1, workers=1).fit(corpus)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "cats.model.npz"
    >>> model.save(path)
    >>> loaded = load(path)
    >>> type(loaded).__name__, bool(np.array_equal(loaded.W_in, model.W_in))
    ('Word2Vec', True)
    """
    document = read_model_file(path)
    cls = MODELS.get(document["class"])
    if cls is None:
        raise ValueError(
            f"{path} holds a {document['class']!r} model, which this rowbook does not know "
            f"(it knows {', '.join(sorted(MODELS))}); was it saved by a newer rowbook?"
        )
    return cls._from_document(document, path)
