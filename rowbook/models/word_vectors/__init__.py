"""The word-vector family: word2vec, fastText and GloVe on one base class.

fastText's supervised classifier is not of this family: it has labels, no growing
vocabulary and a prediction side, and reuses the reading, the jobs and the saved state
from here by composition (:mod:`rowbook.models.fasttext_classifier`).

=========================  ============================================================
module                     what it holds
=========================  ============================================================
``base``                   :class:`WordVectorModel`: vocabulary, ``fit`` / ``resume``,
                           ``build_vocab(update=)``, ``train``, the epochs, saved state
``state``                  that state as saved values, checked when read back
``jobs``                   jobs on Hogwild threads, their progress and the epoch loop
``word2vec``               :class:`Word2Vec` (skip-gram, CBOW; negative sampling,
                           hierarchical softmax) and its tables and schedule
                           (``word2vec_training``)
``fasttext``               :class:`FastText`: a Word2Vec whose input rows are n-gram bags
``glove``                  :class:`GloVe`: AdaGrad on counted co-occurrences
``*_kernels``              the numba kernels: ``word2vec_kernels`` (with the prefetch
                           hint and the draws every job makes), ``fasttext_kernels``,
                           ``glove_kernels`` (with its NumPy reference)
``word2vec_reference``     the plain-Python formulation word2vec's and fastText's kernels
                           are tested against, draw for draw
``fasttext_loop``          fastText's own training loop step for step on one thread
                           (``train_like_fasttext``), equal to the ``fasttext`` package's
``telemetry``              ``row_stats=True``: which rows trained, how hard and when,
                           recorded by the kernels a job at a time (``telemetry_kernels``)
=========================  ============================================================
"""

import lazy_loader

#: Imported on first use: training word2vec loads neither GloVe's SciPy nor fastText's files.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__,
    submod_attrs={
        "base": ["WordVectorModel"],
        "fasttext": ["FastText"],
        "glove": ["GloVe"],
        "jobs": ["Progress"],
        "word2vec": ["Word2Vec"],
    },
)
