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
    # "X as X": re-exported, though __all__ is built from _NAMES below
    from rowbook import autograd as autograd
    from rowbook import nn as nn
    from rowbook import optim as optim
    from rowbook.autograd import RowSparse as RowSparse
    from rowbook.autograd import Tensor as Tensor
    from rowbook.autograd import no_grad as no_grad
    from rowbook.file_kinds import load as load
    from rowbook.file_kinds import load_tokenizer as load_tokenizer
    from rowbook.models import NPLM as NPLM
    from rowbook.models import ColorHarmony as ColorHarmony
    from rowbook.models import FastText as FastText
    from rowbook.models import FastTextClassifier as FastTextClassifier
    from rowbook.models import GloVe as GloVe
    from rowbook.models import LSTMClassifier as LSTMClassifier
    from rowbook.models import NGramLM as NGramLM
    from rowbook.models import TextClassifier as TextClassifier
    from rowbook.models import TransformerLM as TransformerLM
    from rowbook.models import Word2Vec as Word2Vec
    from rowbook.nn import Embedding as Embedding
    from rowbook.nn import EmbeddingBag as EmbeddingBag
    from rowbook.optim import SGD as SGD
    from rowbook.optim import Adagrad as Adagrad
    from rowbook.optim import Adam as Adam
    from rowbook.optim import AdamW as AdamW
    from rowbook.optim import RowWiseAdagrad as RowWiseAdagrad
    from rowbook.optim import SparseAdam as SparseAdam
    from rowbook.text import ByteLevelBPE as ByteLevelBPE
    from rowbook.text import CharTokenizer as CharTokenizer
    from rowbook.text import Normalizer as Normalizer
    from rowbook.text import SentencePieceBPE as SentencePieceBPE
    from rowbook.text import TextPipeline as TextPipeline
    from rowbook.text import Unigram as Unigram
    from rowbook.text import Vocab as Vocab
    from rowbook.text import WordPiece as WordPiece
    from rowbook.text import WordTokenizer as WordTokenizer
    from rowbook.training import TrainConfig as TrainConfig
    from rowbook.training import Trainer as Trainer
    from rowbook.vectors import SubwordVectors as SubwordVectors
    from rowbook.vectors import Vectors as Vectors

#: Where each public name lives, in pipeline order; ``__all__`` below is read from it.
_NAMES = {
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
    "file_kinds": ["load_tokenizer", "load"],  # any file, recognised by its content
    "autograd": ["Tensor", "RowSparse", "no_grad"],
    "nn": ["Embedding", "EmbeddingBag"],
    "optim": ["SGD", "Adagrad", "RowWiseAdagrad", "Adam", "AdamW", "SparseAdam"],
    "training": ["TrainConfig", "Trainer"],
    "models": list(MODEL_NAMES),  # rowbook.models.MODEL_MODULES lists them
    "vectors": ["Vectors", "SubwordVectors"],  # the query side
}

# ``import rowbook`` imports none of the names: a name's module
# is imported when the name is first used (``lazy_loader``, as SciPy and scikit-image do),
# so a script that trains word2vec never loads the autograd stack, SciPy's statistics or
# the plotting code. ``EAGER_IMPORT=1`` imports everything at once (to check the names).
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
    submod_attrs=_NAMES,
)

__version__ = "0.1.0"

__all__ = [
    *(name for names in _NAMES.values() for name in names),
    # sub-packages
    "autograd",
    "nn",
    "optim",
    "__version__",
]
