"""rowbook: embeddings as lookup tables, from raw text to learned, inspectable tables.

The public API, in pipeline order::

    text -> Normalizer -> WordTokenizer / CharTokenizer / ByteLevelBPE -> Vocab -> ids
         -> Embedding / EmbeddingBag (gather forward, scatter-add backward, RowSparse grads)
         -> model -> loss -> backward -> SGD / Adagrad / Adam / SparseAdam
         -> Vectors (similarity, neighbors, analogies, evaluation, file formats)

Sub-packages: :mod:`rowbook.text`, :mod:`rowbook.autograd`, :mod:`rowbook.nn`,
:mod:`rowbook.optim`, :mod:`rowbook.models`, :mod:`rowbook.vectors`, :mod:`rowbook.viz`.
:func:`load` opens any file rowbook writes or reads, recognised by its content
(:mod:`rowbook.file_kinds`).
Each name is imported on first use, so ``import rowbook`` itself is cheap.
"""

from typing import TYPE_CHECKING

import lazy_loader

if TYPE_CHECKING:  # the names as type checkers and editors see them; imported on use below
    from rowbook import autograd, nn, optim
    from rowbook.autograd import RowSparse, Tensor, no_grad
    from rowbook.file_kinds import load
    from rowbook.models import (
        NPLM,
        ColorHarmony,
        FastText,
        FastTextClassifier,
        GloVe,
        LSTMClassifier,
        NGramLM,
        TextClassifier,
        TransformerLM,
        Word2Vec,
    )
    from rowbook.nn import Embedding, EmbeddingBag
    from rowbook.optim import SGD, Adagrad, Adam, AdamW, RowWiseAdagrad, SparseAdam
    from rowbook.text import (
        ByteLevelBPE,
        CharTokenizer,
        Normalizer,
        SentencePieceBPE,
        TextPipeline,
        Unigram,
        Vocab,
        WordPiece,
        WordTokenizer,
        load_tokenizer,
    )
    from rowbook.training import TrainConfig, Trainer
    from rowbook.vectors import SubwordVectors, Vectors

#: Where each public name lives. ``import rowbook`` imports none of them: a name's module
#: is imported when the name is first used (``lazy_loader``, as SciPy and scikit-image do),
#: so a script that trains word2vec never loads the autograd stack, SciPy's statistics or
#: the plotting code. ``EAGER_IMPORT=1`` imports everything at once (to check the names).
__getattr__, __dir__, _ = lazy_loader.attach(
    __name__,
    submodules=[
        "autograd",
        "nn",
        "optim",
        "text",
        "data",
        "models",
        "vectors",
        "viz",
        "training",
        "io",
        "checks",
    ],
    submod_attrs={
        "text": [
            "Normalizer",
            "WordTokenizer",
            "CharTokenizer",
            "ByteLevelBPE",
            "WordPiece",
            "Unigram",
            "SentencePieceBPE",
            "load_tokenizer",
            "Vocab",
            "TextPipeline",
        ],
        "autograd": ["Tensor", "RowSparse", "no_grad"],
        "nn": ["Embedding", "EmbeddingBag"],
        "optim": ["SGD", "Adagrad", "RowWiseAdagrad", "Adam", "AdamW", "SparseAdam"],
        "training": ["TrainConfig", "Trainer"],
        "models": [
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
        ],
        "file_kinds": ["load"],
        "vectors": ["Vectors", "SubwordVectors"],
    },
)

__version__ = "0.1.0"

__all__ = [  # noqa: RUF022 - pipeline order, not alphabetical
    # text
    "Normalizer",
    "WordTokenizer",
    "CharTokenizer",
    "ByteLevelBPE",
    "WordPiece",
    "Unigram",
    "SentencePieceBPE",
    "load_tokenizer",
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
    "TransformerLM",
    "FastTextClassifier",
    "NGramLM",
    # any file
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
