"""The worked models: colour harmony, neural language models, classifiers, word vectors.

Every model follows one contract, written down in :mod:`rowbook.models.base`: keyword
parameters, ``fit(data, *, checkpoint=None, resume=None) -> self``, ``vectors``,
``save(path)`` and ``Cls.load(path)``. :func:`load` opens any saved model.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import lazy_loader

from rowbook.models.base import Model, NotFittedError, read_model_file

if TYPE_CHECKING:
    from rowbook.models.classifier import LSTMClassifier, TextClassifier
    from rowbook.models.color_harmony import COLOR_NAMES, ColorHarmony
    from rowbook.models.language_model import TransformerLM
    from rowbook.models.ngram import NGramLM
    from rowbook.models.nplm import NPLM
    from rowbook.models.word_vectors.classifier import FastTextClassifier
    from rowbook.models.word_vectors.fasttext import FastText
    from rowbook.models.word_vectors.glove import GloVe
    from rowbook.models.word_vectors.word2vec import Word2Vec

#: The module of every model class, imported on first use: training word2vec does not
#: load the autograd stack the classifiers are built on.
_MODULES = {
    "color_harmony": ["ColorHarmony", "COLOR_NAMES"],
    "nplm": ["NPLM"],
    "classifier": ["TextClassifier", "LSTMClassifier"],
    "word_vectors.word2vec": ["Word2Vec"],
    "word_vectors.glove": ["GloVe"],
    "word_vectors.fasttext": ["FastText"],
    "language_model": ["TransformerLM"],
    "word_vectors.classifier": ["FastTextClassifier"],
    "ngram": ["NGramLM"],
}
_getattr, _, _ = lazy_loader.attach(__name__, submod_attrs=_MODULES)
_MODEL_NAMES = (
    "ColorHarmony",
    "NPLM",
    "TextClassifier",
    "LSTMClassifier",
    "Word2Vec",
    "GloVe",
    "FastText",
    "TransformerLM",
    "FastTextClassifier",
    "NGramLM",
)


def __getattr__(name: str) -> object:
    """A model class, imported now; ``MODELS``: every model class by name (what
    :func:`load` can open and what the contract test checks), all of them imported."""
    if name == "MODELS":
        return {cls: _getattr(cls) for cls in _MODEL_NAMES}
    return _getattr(name)


__all__ = [
    "COLOR_NAMES",
    "MODELS",
    "NPLM",
    "ColorHarmony",
    "FastText",
    "FastTextClassifier",
    "GloVe",
    "LSTMClassifier",
    "Model",
    "NGramLM",
    "NotFittedError",
    "TextClassifier",
    "TransformerLM",
    "Word2Vec",
    "load",
]


def load(path: str | os.PathLike[str], *, mmap: bool = False) -> Model:
    """The model saved at ``path``, of whichever class saved it.

    ``mmap=True`` maps the model's large arrays (its tables) from the file copy-on-write
    instead of reading them (see :meth:`rowbook.models.Model.load`).

    Examples
    --------
    >>> import tempfile, pathlib, numpy as np
    >>> from rowbook.models import Word2Vec
    >>> corpus = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 20
    >>> model = Word2Vec(vector_size=8, min_count=1, epochs=1, workers=1).fit(corpus)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "cats.model.npz"
    >>> model.save(path)
    >>> loaded = load(path)
    >>> type(loaded).__name__, bool(np.array_equal(loaded.W_in_, model.W_in_))
    ('Word2Vec', True)
    """
    document = read_model_file(path, mmap=mmap)
    if document["class"] not in _MODEL_NAMES:
        raise ValueError(
            f"{path} holds a {document['class']!r} model, which this rowbook does not know "
            f"(it knows {', '.join(sorted(_MODEL_NAMES))}); was it saved by a newer rowbook?"
        )
    return _getattr(document["class"])._from_document(document, path)
