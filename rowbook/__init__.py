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

from rowbook._numba_cache import keep_fresh

keep_fresh()  # before any kernel is defined: numba's cache follows every rowbook module

from rowbook.models import MODEL_NAMES  # noqa: E402 - a plain tuple: imports no model

if TYPE_CHECKING:  # the names as type checkers and editors see them; imported on use below
    from rowbook import autograd, nn, optim
    from rowbook.autograd import RowSparse, Tensor, no_grad
    from rowbook.file_kinds import load, load_tokenizer
    from rowbook.models import (  # as X: re-exported (rowbook.models.MODEL_NAMES)
        NPLM as NPLM,
    )
    from rowbook.models import (
        ColorHarmony as ColorHarmony,
    )
    from rowbook.models import (
        FastText as FastText,
    )
    from rowbook.models import (
        FastTextClassifier as FastTextClassifier,
    )
    from rowbook.models import (
        GloVe as GloVe,
    )
    from rowbook.models import (
        LSTMClassifier as LSTMClassifier,
    )
    from rowbook.models import (
        NGramLM as NGramLM,
    )
    from rowbook.models import (
        TextClassifier as TextClassifier,
    )
    from rowbook.models import (
        TransformerLM as TransformerLM,
    )
    from rowbook.models import (
        Word2Vec as Word2Vec,
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
        "scratch",
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
            "Vocab",
            "TextPipeline",
        ],
        "autograd": ["Tensor", "RowSparse", "no_grad"],
        "nn": ["Embedding", "EmbeddingBag"],
        "optim": ["SGD", "Adagrad", "RowWiseAdagrad", "Adam", "AdamW", "SparseAdam"],
        "training": ["TrainConfig", "Trainer"],
        "models": list(MODEL_NAMES),
        "file_kinds": ["load", "load_tokenizer"],
        "vectors": ["Vectors", "SubwordVectors"],
    },
)

__version__ = "0.1.0"

__all__ = [
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
    # models (rowbook.models.MODEL_MODULES lists them)
    *MODEL_NAMES,
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
