"""The worked models: colour harmony, neural language models, classifiers, word vectors.

Every model follows one contract, written down in :mod:`rowbook.models.base`: keyword
parameters, ``fit(data, *, checkpoint=None, resume=None) -> self``, ``vectors``,
``save(path)`` and ``Cls.load(path)``. :func:`load` opens any saved model.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:  # the names as editors see them; `as X`: re-exported
    from rowbook.models.base import Model as Model
    from rowbook.models.base import NotFittedError as NotFittedError
    from rowbook.models.classifier import (
        LSTMClassifier as LSTMClassifier,
    )
    from rowbook.models.classifier import (
        TextClassifier as TextClassifier,
    )
    from rowbook.models.color_harmony import (
        COLOR_NAMES as COLOR_NAMES,
    )
    from rowbook.models.color_harmony import (
        ColorHarmony as ColorHarmony,
    )
    from rowbook.models.fasttext_classifier.model import FastTextClassifier as FastTextClassifier
    from rowbook.models.language_model import TransformerLM as TransformerLM
    from rowbook.models.nplm import NPLM as NPLM
    from rowbook.models.word_vectors.fasttext import FastText as FastText
    from rowbook.models.word_vectors.glove import GloVe as GloVe
    from rowbook.models.word_vectors.word2vec import Word2Vec as Word2Vec

#: Every model class by the module that defines it: the one list of rowbook's models (what
#: :func:`load` opens, what ``rowbook.MODELS`` and the contract test enumerate, what
#: ``rowbook`` re-exports). Each is imported on first use: training word2vec does not load
#: the autograd stack the classifiers are built on, and ``import rowbook`` loads none.
MODEL_MODULES: dict[str, list[str]] = {
    "color_harmony": ["ColorHarmony"],
    "nplm": ["NPLM"],
    "classifier": ["TextClassifier", "LSTMClassifier"],
    "word_vectors.word2vec": ["Word2Vec"],
    "word_vectors.glove": ["GloVe"],
    "word_vectors.fasttext": ["FastText"],
    "language_model": ["TransformerLM"],
    "fasttext_classifier.model": ["FastTextClassifier"],
}
MODEL_NAMES: tuple[str, ...] = tuple(name for names in MODEL_MODULES.values() for name in names)
_getattr, _, _ = lazy_loader.attach(
    __name__,
    submod_attrs={
        **MODEL_MODULES,
        "color_harmony": ["ColorHarmony", "COLOR_NAMES"],
        "base": ["Model", "NotFittedError"],
    },
)


def __getattr__(name: str) -> object:
    """A model class, imported now; ``MODELS``: every model class by name (what
    :func:`load` can open and what the contract test checks), all of them imported."""
    if name == "MODELS":
        return {cls: _getattr(cls) for cls in MODEL_NAMES}
    return _getattr(name)


__all__ = [
    *MODEL_NAMES,
    "COLOR_NAMES",
    "MODEL_MODULES",
    "MODEL_NAMES",
    "MODELS",
    "Model",
    "NotFittedError",
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
    from rowbook.models.base import read_model_file

    document = read_model_file(path, mmap=mmap)
    if document["class"] not in MODEL_NAMES:
        raise ValueError(
            f"{path} holds a {document['class']!r} model, which this rowbook does not know "
            f"(it knows {', '.join(sorted(MODEL_NAMES))}); was it saved by a newer rowbook?"
        )
    return _getattr(document["class"])._from_document(document, path)
