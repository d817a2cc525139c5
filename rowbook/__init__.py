"""rowbook: embeddings as lookup tables, from raw text to learned, inspectable tables.

The public API, in pipeline order::

    text -> Normalizer -> WordTokenizer / CharTokenizer / ByteLevelBPE -> Vocab -> ids
         -> Embedding / EmbeddingBag (gather forward, scatter-add backward, RowSparse grads)
         -> model -> loss -> backward -> SGD / Adagrad / Adam / SparseAdam
         -> Vectors (similarity, neighbors, analogies, evaluation, file formats)

Sub-packages: :mod:`rowbook.text`, :mod:`rowbook.autograd`, :mod:`rowbook.nn`,
:mod:`rowbook.optim`, :mod:`rowbook.models`, :mod:`rowbook.vectors`, :mod:`rowbook.viz`
(imported on demand: it loads matplotlib).
"""

from rowbook import autograd, nn, optim
from rowbook.autograd import RowSparse, Tensor, no_grad
from rowbook.models import (
    NPLM,
    ColorHarmony,
    FastText,
    GloVe,
    LSTMClassifier,
    TextClassifier,
    Word2Vec,
    load,
)
from rowbook.nn import Embedding, EmbeddingBag
from rowbook.optim import SGD, Adagrad, Adam, AdamW, RowWiseAdagrad, SparseAdam
from rowbook.text import ByteLevelBPE, CharTokenizer, Normalizer, TextPipeline, Vocab, WordTokenizer
from rowbook.training import TrainConfig, Trainer
from rowbook.vectors import SubwordVectors, Vectors

__version__ = "0.1.0"

__all__ = [  # noqa: RUF022 - pipeline order, not alphabetical
    # text
    "Normalizer",
    "WordTokenizer",
    "CharTokenizer",
    "ByteLevelBPE",
    "Vocab",
    "TextPipeline",
    # autograd and layers
    "Tensor",
    "RowSparse",
    "no_grad",
    "Embedding",
    "EmbeddingBag",
    # optimizers and training
    "SGD",
    "Adagrad",
    "RowWiseAdagrad",
    "Adam",
    "AdamW",
    "SparseAdam",
    "TrainConfig",
    "Trainer",
    # models
    "ColorHarmony",
    "NPLM",
    "TextClassifier",
    "LSTMClassifier",
    "Word2Vec",
    "GloVe",
    "FastText",
    "load",
    # query side
    "Vectors",
    "SubwordVectors",
    # sub-packages
    "autograd",
    "nn",
    "optim",
    "__version__",
]
