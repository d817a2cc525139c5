"""word2vec (Mikolov et al. 2013): skip-gram and CBOW, negative sampling and hierarchical softmax.

The learned tables have the layout of a ``rowbook.nn.Embedding`` weight
(``Embedding.from_pretrained(model.W_in_)`` works): ``W_in`` ``(V, d)``, the word vectors
returned as :attr:`Word2Vec.vectors`, initialised uniform(-1/d, 1/d) exactly as gensim 4
does; ``W_out`` ``(V, d)``, the negative-sampling output vectors, and ``W_nodes``
``(V - 1, d)``, the inner nodes of the hierarchical-softmax tree, both initialised to
zeros. Each step looks up a few rows and adds a gradient into the same rows; see
:mod:`~rowbook.models.word_vectors.word2vec_kernels` for the update and
:mod:`~rowbook.models.word_vectors.word2vec_reference` for its NumPy formulation. The
vocabulary, ``fit`` / ``resume``, ``build_vocab(update=True)``, ``train`` and the saved
state are the family's (:class:`~rowbook.models.word_vectors.base.WordVectorModel`).

Semantics follow gensim 4 and word2vec.c: vocabulary by descending count after
``min_count`` (and ``max_vocab_size``) pruning, frequent-word subsampling
(:func:`rowbook.data.keep_probabilities`), negatives from the unigram^0.75 table
(:func:`rowbook.data.negative_table`), the Huffman tree of hierarchical softmax
(:func:`rowbook.data.huffman_tree`), windows shrunk by a random ``b`` in
``[0, window)``, and a learning rate decaying linearly from ``lr`` to ``min_lr`` over
the epochs of one training call, updated every job of ~10,000 words.

Keeping a model (gensim's semantics): :meth:`Word2Vec.save` / :meth:`Word2Vec.load`,
:meth:`Word2Vec.build_vocab` with ``update=True`` to add the words of new text, and
:meth:`Word2Vec.train` for more epochs on any text. ``fit(corpus)`` is
``build_vocab(corpus)`` followed by ``train(corpus, epochs=epochs)`` (in one pass over
the corpus). Each ``train`` call runs its own schedule, ``lr`` down to ``min_lr``, so
``fit`` for 2 epochs then ``train`` for 3 is not a 5-epoch ``fit``: that one is what
``fit(..., checkpoint=path)`` interrupted after epoch 2 and ``fit(..., resume=path)``
give, bit for bit.

Differences from gensim worth knowing: the sigmoid is exact instead of a 1000-entry
table that skips pairs scoring beyond +-6; sentences longer than 10,000 in-vocabulary
words are cut into pieces (gensim drops the rest of the sentence); with both objectives
on, their steps are computed from the same hidden vector and added (gensim applies
them one after the other); the random draws come from a generator per job, seeded by
``seed``, the epoch's number in the model's life and the job, so one worker and one
seed give bit-identical tables, also across save, load and resume.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import numpy as np

from rowbook.checks import ParameterError, check_choice, check_int, check_number
from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.huffman import huffman_tree
from rowbook.data.id_stream import EncodedCorpus
from rowbook.data.sampling import job_seed, negative_guide, negative_table, sample_thresholds
from rowbook.models.base import NotFittedError
from rowbook.models.word_vectors.base import WordVectorModel
from rowbook.models.word_vectors.job_args import Word2VecJob
from rowbook.models.word_vectors.jobs import EpochJobs
from rowbook.models.word_vectors.state import Progress, TrainedState, table_view
from rowbook.models.word_vectors.word2vec_batched_kernels import SHARED_WINDOWS
from rowbook.models.word_vectors.word2vec_training import (
    grow_tables,
    initial_tables,
    job_lrs,
    job_plan,
)
from rowbook.vectors import Vectors

__all__ = ["DEFAULT_LR", "NotFittedError", "Progress", "Word2Vec"]

#: The default learning rate of each architecture when ``lr=None`` (word2vec.c's).
DEFAULT_LR = {"skipgram": 0.025, "cbow": 0.05}


class Word2Vec(WordVectorModel):
    """Train word vectors by skip-gram or CBOW (negative sampling, hierarchical softmax).

    Parameters
    ----------
    architecture : {"skipgram", "cbow"}
        Skip-gram predicts each centre word from every word of its window; CBOW predicts
        it from the mean (``cbow_mean=True``) or sum of the window's vectors.
    vector_size, window : int
        Dimension ``d`` of the vectors; maximum distance between centre and context.
    min_count, max_vocab_size : int
        Ignore words seen fewer than ``min_count`` times; cap the distinct words held
        during the corpus scan (gensim's pruning), ``None`` for no cap.
    sample : float
        Subsampling threshold (0 disables it), see :func:`rowbook.data.keep_probabilities`.
    negative, ns_exponent : int, float
        Negatives per example (0: no negative sampling) and the exponent of the unigram
        distribution they come from.
    hierarchical_softmax : bool
        Also (or, with ``negative=0``, only) train a hierarchical softmax over the Huffman
        tree of the vocabulary (:func:`rowbook.data.huffman_tree`); both objectives then
        share each example's hidden vector and their steps add up.
    cbow_mean : bool
        CBOW's hidden vector is the mean of the window's rows (else their sum).
    kernel : {"batched", "hogbatch", "classic"}
        How the examples step. ``"batched"``: minibatches sharing one draw of negatives, the
        rows read as they were before the minibatch. In skip-gram a minibatch is the window
        of a centre word, its context rows against the centre and the negatives (HogBatch,
        Ji et al. 2016; :mod:`~rowbook.models.word_vectors.word2vec_batched_kernels`), and
        2 consecutive windows share one draw of negatives (``SHARED_WINDOWS``: their rows
        stay in cache from one window to the next); in CBOW it is 8 windows far apart in
        the text, each window's mean against its own centre and all of them against the
        negatives (:mod:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels`). The
        same scores as ``"classic"`` on NewsArticles and the health tweets, 1.5-2.5x the
        kernel's speed. ``"hogbatch"`` (skip-gram only): the same minibatch with a draw of
        negatives for every window, as IntelLabs/pWord2Vec does (skip-gram's ``"batched"``
        before state version 4: such files load and resume with it). ``"classic"``: one
        example per (centre, context) pair in skip-gram and per window in CBOW, each with
        its own negatives, word2vec.c's and gensim's algorithm (one worker and a seed give
        the tables rowbook gave before the option). Models saved before the option, and
        CBOW models saved before ``"batched"`` covered CBOW, load and resume with
        ``"classic"``. ``docs/cores.md`` has the figures.
    lr, min_lr : float
        Learning rate at the start and at the end of each training call (linear decay).
        ``lr=None`` takes word2vec.c's default for the architecture: 0.025 for
        skip-gram, 0.05 for CBOW. CBOW takes one step per centre word from the window's
        mean, against skip-gram's one per (centre, context) pair, so at skip-gram's rate
        it learns less in the same epochs: on NewsArticles (5 epochs, 2 seeds) CBOW scores
        0.090 / 0.388 / 0.130 on questions-words / WordSim353 / SimLex-999 at 0.05,
        against 0.062 / 0.309 / 0.103 at 0.025 (gensim's single default for both).
    epochs, shrink_windows : int, bool
        Passes over the corpus in ``fit``; draw a random effective window per centre word.
    workers : int or None
        Training threads (``None``: one per core the process may use). One worker makes
        results reproducible.
    seed : int
        Seed of the initial vectors and of every random draw.
    batch_words : int
        Corpus words per job (the unit of threading and of learning-rate updates).
    compute_loss, progress : bool
        Track the training loss (a little slower); show a tqdm progress bar.
    row_stats : bool
        Record per-row telemetry of ``W_in`` (updates, gradient norms, last job, distance
        travelled), read as :attr:`row_stats_` (:mod:`~rowbook.models.word_vectors.telemetry`).

    Examples
    --------
    >>> corpus = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 50
    >>> model = Word2Vec(vector_size=8, min_count=1, epochs=2, workers=1).fit(corpus)
    >>> model.vectors.vectors.shape
    (4, 8)
    >>> model = model.build_vocab([["the", "bird", "sat"]] * 5, update=True)
    >>> model.train([["the", "bird", "sat"]] * 5, epochs=1).index_to_key_[-1]
    'bird'
    """

    _run_only: ClassVar[tuple[str, ...]] = ("workers", "progress", "compute_loss", "row_stats")
    #: 2: ``kernel`` joined the parameters (files before it trained with the classic kernel);
    #: 3: ``kernel="batched"`` minibatches CBOW too (version 2 trained CBOW classic);
    #: 4: skip-gram's ``"batched"`` shares a draw of negatives across ``SHARED_WINDOWS``
    #: windows (version 3's, a draw a window, is ``"hogbatch"``).
    _state_version: ClassVar[int] = 4
    _kernels: ClassVar[tuple[str, ...]] = ("batched", "hogbatch", "classic")

    def __init__(
        self,
        *,
        architecture: Literal["skipgram", "cbow"] = "skipgram",
        vector_size: int = 100,
        window: int = 5,
        min_count: int = 5,
        max_vocab_size: int | None = None,
        sample: float = 1e-3,
        negative: int = 5,
        hierarchical_softmax: bool = False,
        ns_exponent: float = 0.75,
        cbow_mean: bool = True,
        kernel: Literal["batched", "hogbatch", "classic"] = "batched",
        lr: float | None = None,
        min_lr: float = 1e-4,
        epochs: int = 5,
        shrink_windows: bool = True,
        workers: int | None = None,
        seed: int = 1,
        batch_words: int = 10_000,
        compute_loss: bool = False,
        progress: bool = False,
        row_stats: bool = False,
    ) -> None:
        self.architecture, self.vector_size, self.window = architecture, vector_size, window
        self.min_count, self.max_vocab_size, self.sample = min_count, max_vocab_size, sample
        self.negative, self.hierarchical_softmax = negative, hierarchical_softmax
        self.ns_exponent, self.cbow_mean, self.kernel = ns_exponent, cbow_mean, kernel
        self.lr, self.min_lr, self.epochs = lr, min_lr, epochs
        self.shrink_windows, self.workers, self.seed = shrink_windows, workers, seed
        self.batch_words, self.compute_loss, self.progress = batch_words, compute_loss, progress
        self.row_stats = row_stats
        self._check_params()

    def _check_params(self) -> None:
        check_choice("architecture", self.architecture, ("skipgram", "cbow"))
        check_choice("kernel", self._kernel, self._kernels)
        if self._kernel == "hogbatch" and self.architecture != "skipgram":
            raise ParameterError(
                "kernel",
                self.kernel,
                "'batched' or 'classic' for CBOW",
                fix="'hogbatch' is a skip-gram kernel (a window a minibatch)",
            )
        self._check_ints(
            vector_size=1, window=1, min_count=0, negative=0, epochs=1, seed=0, batch_words=1
        )
        if self.negative == 0 and not self.hierarchical_softmax:
            raise ParameterError(
                "negative",
                0,
                "an integer >= 1 unless hierarchical softmax is on",
                fix="0 turns negative sampling off, which needs hierarchical "
                "softmax on to train anything",
            )
        check_int("max_vocab_size", self.max_vocab_size, 1, allow_none=True)
        check_int("workers", self.workers, 1, allow_none=True)
        check_number("sample", self.sample, 0.0)
        check_number("ns_exponent", self.ns_exponent, -10.0, 10.0)
        check_number("lr", self.lr, 0.0, low_open=True, allow_none=True)
        check_number("min_lr", self.min_lr, 0.0, self._start_lr)

    @property
    def _start_lr(self) -> float:
        return DEFAULT_LR[self.architecture] if self.lr is None else self.lr

    @property
    def _kernel(self) -> str:
        """The kernel that steps: ``kernel`` (FastText chooses one for ``None``)."""
        return self.kernel

    @classmethod
    def _upgrade(cls, params: dict[str, Any], state: dict[str, Any], version: int):
        """Version 1 had no ``kernel``, version 2's ``"batched"`` was skip-gram's only: those
        models trained with the classic kernel (version 2: in CBOW), and load (and resume)
        with it. Word2Vec's skip-gram ``"batched"`` of versions 2 and 3 drew negatives for every
        window: ``"hogbatch"`` now (FastText's, which has no ``"hogbatch"``, is unchanged)."""
        if "kernel" in cls.param_names():
            if version == 1:
                return {"kernel": "classic", **params}, state
            cbow = params.get("architecture") == "cbow"
            if version in (2, 3) and params.get("kernel") == "batched":
                if not cbow:  # FastText's skip-gram "batched" did not change: no "hogbatch"
                    hog = "hogbatch" in cls._kernels
                    return ({**params, "kernel": "hogbatch"} if hog else params), state
                return ({**params, "kernel": "classic"} if version == 2 else params), state
            if version in (2, 3):
                return params, state
        return super()._upgrade(params, state, version)

    # -- what differs in the family: the tables, the vocabulary scan, the kernel -----------

    def _scan(self) -> dict[str, Any]:
        return {"ties": "gensim", "max_vocab_size": self.max_vocab_size}

    def _new_tables(self, vocab: CountedVocab) -> dict[str, np.ndarray]:
        return initial_tables(len(vocab), self.vector_size, self.seed, self.hierarchical_softmax)

    def _grow_tables(self, state: TrainedState, old_V: int) -> None:
        state.tables = grow_tables(state.tables, len(state.vocab), self.seed)

    def _table_shapes(self, V: int) -> dict[str, tuple[int, int]]:
        """The shape of every table for ``V`` words (what a saved model must hold)."""
        n_nodes = max(V - 1, 1) if self.hierarchical_softmax else 0
        d = self.vector_size
        return {"W_in": (V, d), "W_out": (V, d), "W_nodes": (n_nodes, d)}

    def _epoch_jobs(self, state: TrainedState, encoded: EncodedCorpus) -> EpochJobs:
        """Jobs of about ``batch_words`` corpus words (gensim's), each at the learning rate of
        the linear schedule where it starts, seeded by ``(seed, epoch of the model's life, job)``."""
        schedule = state.schedule
        bounds, words_before = job_plan(encoded, self.batch_words)
        step = self._job_step(state.vocab, state.tables, encoded, bounds)
        words = schedule.total_words or encoded.total_words

        def lrs(epoch: int) -> np.ndarray:
            return job_lrs(
                self._start_lr, self.min_lr, epoch, schedule.epochs, words_before[:-1], words
            )

        return EpochJobs(
            sizes=np.diff(words_before),
            total=encoded.total_words,
            run=lambda j, lr, trained, stats: step(j, lr, job_seed(self.seed, trained, j), stats),
            lrs=lrs,
            loss_known=self.compute_loss,
        )

    def _job_step(
        self,
        vocab: CountedVocab,
        tables: dict[str, np.ndarray],
        encoded: EncodedCorpus,
        bounds: np.ndarray,
    ):
        """``step(j, lr, seed, stats)`` trains job ``j`` into ``tables`` and returns its loss."""
        thresholds = sample_thresholds(vocab.counts, self.sample)
        table = negative_table(vocab.counts, self.ns_exponent)
        out = (tables["W_out"], table, negative_guide(table), self.negative)
        tree = (
            (tables["W_nodes"], *huffman_tree(vocab.counts)) if self.hierarchical_softmax else None
        )
        skipgram = self.architecture == "skipgram"
        job = Word2VecJob(
            tables["W_in"],
            thresholds,
            use_sample=self.sample > 0,
            out=out,
            tree=tree,
            window=self.window,
            shrink=self.shrink_windows,
            skipgram=skipgram,
            cbow_mean=self.cbow_mean,
            compute_loss=self.compute_loss,
            batched=self.kernel != "classic",
            shared=SHARED_WINDOWS if self.kernel == "batched" else 1,
        )

        def step(j: int, lr: float, seed: int, stats: Any) -> float:
            ids, starts = encoded.sentences(bounds[j], bounds[j + 1])  # read from disk if spilled
            return job.run(ids, starts, lr, seed, stats)[1]

        return step

    def _make_vectors(self, state: TrainedState) -> Vectors:
        """The word vectors: ``W_in`` (shared with the model) and the vocabulary's counts."""
        return Vectors(state.vocab.keys, state.tables["W_in"], state.vocab.counts)

    # -- learned state ------------------------------------------------------------------

    W_in_ = table_view(
        "W_in",
        "``(V, d)`` float32 input embedding table (the word vectors, gensim's ``wv.vectors``).",
    )

    W_out_ = table_view(
        "W_out",
        "``(V, d)`` float32 output embedding table (gensim's ``syn1neg``).",
    )

    W_nodes_ = table_view(
        "W_nodes",
        "``(V - 1, d)`` inner-node vectors of hierarchical softmax (gensim's ``syn1``); "
        "empty unless ``hierarchical_softmax=True``.",
    )
