"""word2vec (Mikolov et al. 2013): skip-gram and CBOW, negative sampling and hierarchical softmax.

The learned tables have the layout of a ``rowbook.nn.Embedding`` weight
(``Embedding.from_pretrained(model.W_in)`` works): ``W_in`` ``(V, d)``, the word vectors
returned as :attr:`Word2Vec.vectors`, initialised uniform(-1/d, 1/d) exactly as gensim 4
does; ``W_out`` ``(V, d)``, the negative-sampling output vectors, and ``W_nodes``
``(V - 1, d)``, the inner nodes of the hierarchical-softmax tree, both initialised to
zeros. Each step looks up a few rows and adds a gradient into the same rows; see
:mod:`rowbook.models._w2v_kernels` for the update and its NumPy reference.

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

import os
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np

from rowbook.checks import ParameterError, check_choice, check_int, check_number
from rowbook.data.corpus import (
    Corpus,
    CountedVocab,
    EncodedCorpus,
    encode_corpus,
    read_corpus,
    vocab_from_counts,
)
from rowbook.data.huffman import huffman_tree
from rowbook.data.sampling import job_seed, negative_guide, negative_table, sample_thresholds
from rowbook.models._fitting import Progress, ProgressReporter, resolve_workers, run_jobs
from rowbook.models._w2v_kernels import train_job
from rowbook.models._w2v_training import grow_tables, initial_tables, job_lrs, job_plan
from rowbook.models._word_models import (
    check_tables,
    check_vocab,
    grow_vocab,
    history_from_state,
    history_state,
    resume_state,
    run_epochs,
    run_training,
    schedule_from_state,
    vocab_from_state,
    vocab_state,
)
from rowbook.models.base import Model, NotFittedError
from rowbook.vectors import Vectors

__all__ = ["DEFAULT_LR", "NotFittedError", "Progress", "Word2Vec"]

#: The default learning rate of each architecture when ``lr=None`` (word2vec.c's).
DEFAULT_LR = {"skipgram": 0.025, "cbow": 0.05}


class Word2Vec(Model):
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
        Training threads (``None``: one per CPU). One worker makes results reproducible.
    seed : int
        Seed of the initial vectors and of every random draw.
    batch_words : int
        Corpus words per job (the unit of threading and of learning-rate updates).
    compute_loss, progress : bool
        Track the training loss (a little slower); show a tqdm progress bar.

    Examples
    --------
    >>> corpus = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 50
    >>> model = Word2Vec(vector_size=8, min_count=1, epochs=2, workers=1).fit(corpus)
    >>> model.vectors.vectors.shape
    (4, 8)
    >>> model = model.build_vocab([["the", "bird", "sat"]] * 5, update=True)
    >>> model.train([["the", "bird", "sat"]] * 5, epochs=1).index_to_key[-1]
    'bird'
    """

    #: Parameters a resumed ``fit`` may change: they do not alter what is learned.
    _RUN_ONLY = ("workers", "progress", "compute_loss")

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
        lr: float | None = None,
        min_lr: float = 1e-4,
        epochs: int = 5,
        shrink_windows: bool = True,
        workers: int | None = None,
        seed: int = 1,
        batch_words: int = 10_000,
        compute_loss: bool = False,
        progress: bool = False,
    ) -> None:
        self.architecture, self.vector_size, self.window = architecture, vector_size, window
        self.min_count, self.max_vocab_size, self.sample = min_count, max_vocab_size, sample
        self.negative, self.hierarchical_softmax = negative, hierarchical_softmax
        self.ns_exponent, self.cbow_mean = ns_exponent, cbow_mean
        self.lr, self.min_lr, self.epochs = lr, min_lr, epochs
        self.shrink_windows, self.workers, self.seed = shrink_windows, workers, seed
        self.batch_words, self.compute_loss, self.progress = batch_words, compute_loss, progress
        self._check_params()

    def _check_params(self) -> None:
        check_choice("architecture", self.architecture, ("skipgram", "cbow"))
        for name, minimum in (
            ("vector_size", 1),
            ("window", 1),
            ("min_count", 0),
            ("negative", 0),
            ("epochs", 1),
            ("seed", 0),
            ("batch_words", 1),
        ):
            check_int(name, getattr(self, name), minimum)
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

    # -- training -----------------------------------------------------------------------

    def fit(
        self,
        corpus: Corpus,
        *,
        tokenizer: Any = None,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        resume: str | os.PathLike | None = None,
        spill_dir: str | os.PathLike | None = None,
        vocab: Mapping[str, int] | None = None,
    ) -> Word2Vec:
        """Learn the vocabulary and the vectors of ``corpus`` in ``epochs`` epochs; returns ``self``.

        Parameters
        ----------
        corpus : iterable of token lists, or a path
            Sentences as lists of tokens, or a text file with one sentence per line.
        tokenizer : callable or object with ``tokenize``, optional
            Splits each line of a file corpus (default: on whitespace).
        callback : callable, optional
            Called with a :class:`Progress` after every epoch; raising stops training.
        checkpoint : path, optional
            Save the model there (as :meth:`save` does, atomically) after every epoch.
        resume : path, optional
            A checkpoint, or a model saved by :meth:`save`, of a ``fit`` with the same
            parameters on the same corpus: training continues after its last epoch and
            ends where the uninterrupted run would (bit for bit with one worker). A path
            with no file yet starts afresh (give the same path as ``checkpoint``).
        spill_dir : path, optional
            A folder for the corpus's id stream (4 bytes per token), read back job by job:
            memory then stays at the vocabulary and the tables however long the corpus
            (:mod:`rowbook.data.id_stream`). The vectors are the same.
        vocab : mapping of str to int, optional
            Word counts of ``corpus`` made elsewhere, in first-sighting order (from
            :func:`rowbook.distributed.word_counts`, say): the vocabulary is chosen from them
            (``min_count``, gensim's order) and ``corpus`` is only read once, to encode it.
            With the corpus's own counts, the model is the one ``fit(corpus)`` learns.
        """
        if vocab is None:
            counted, encoded = read_corpus(
                corpus,
                min_count=self.min_count,
                max_vocab_size=self.max_vocab_size,
                tokenizer=tokenizer,
                spill_dir=spill_dir,
            )
        else:
            counted = self._vocab_of_counts(vocab)
            encoded = encode_corpus(corpus, counted.keys, tokenizer=tokenizer, spill_dir=spill_dir)
        check_vocab(counted, self.min_count)
        if resume is None or not Path(resume).exists():  # nothing saved yet: start afresh
            state = self._new_state(counted)
            state["schedule"].update(by="fit", epochs=self.epochs)
        else:
            state = resume_state(self, resume, counted, self._RUN_ONLY)
        train = partial(self._train_epochs, state, encoded, callback, checkpoint)
        run_training(self, state, train, keep_on_error=False)
        return self

    def _vocab_of_counts(self, word_freq: Mapping[str, int]) -> CountedVocab:
        """``fit(..., vocab=word_freq)``'s vocabulary; ``max_vocab_size`` has no meaning there."""
        if self.max_vocab_size is not None:
            raise ParameterError(
                "max_vocab_size",
                self.max_vocab_size,
                "None when fit is given vocab=",
                fix="it prunes while a corpus is counted, and these counts are made; "
                "min_count still applies",
            )
        return vocab_from_counts(word_freq, min_count=self.min_count)

    def build_vocab(
        self, corpus: Corpus, *, update: bool = False, tokenizer: Any = None
    ) -> Word2Vec:
        """Read the vocabulary of ``corpus``; returns ``self`` (gensim's ``build_vocab``).

        ``update=False`` starts a new model: the vocabulary of ``corpus`` and fresh tables,
        forgetting anything learned. ``update=True`` adds to a fitted (or loaded) model the
        words of ``corpus`` seen at least ``min_count`` times there, after the old ones;
        old words add their counts in ``corpus`` to theirs. Old rows are unchanged; new
        rows of ``W_in`` start as a fresh table of the grown vocabulary has them, the new
        output rows at zero. The Huffman tree is rebuilt from the new counts (as gensim).
        """
        if not update:
            vocab, _ = read_corpus(
                corpus,
                min_count=self.min_count,
                max_vocab_size=self.max_vocab_size,
                tokenizer=tokenizer,
            )
            check_vocab(vocab, self.min_count)
            self._fitted = self._new_state(vocab)
            return self
        state = self._require_fitted("build_vocab(..., update=True)")
        seen, _ = read_corpus(
            corpus, min_count=1, max_vocab_size=self.max_vocab_size, tokenizer=tokenizer
        )
        state["vocab"] = grow_vocab(state["vocab"], seen, self.min_count)
        state["tables"] = self._grown_tables(state["tables"], len(state["vocab"]))
        state["vectors"] = None
        return self

    def build_vocab_from_freq(
        self, word_freq: Mapping[str, int], *, update: bool = False
    ) -> Word2Vec:
        """The vocabulary from word counts made elsewhere; returns ``self`` (gensim's name).

        ``word_freq`` maps each word to its corpus count, in first-sighting order (as a
        ``Counter`` filled in corpus order keeps them; :func:`rowbook.distributed.word_counts`
        gives exactly that for a corpus counted in shards on Dask); ``min_count`` and the
        order are then those :meth:`build_vocab` would give. ``update`` as in
        :meth:`build_vocab`. Follow with :meth:`train`.
        """
        seen = vocab_from_counts(word_freq, min_count=1 if update else self.min_count)
        if not update:
            check_vocab(seen, self.min_count)
            self._fitted = self._new_state(seen)
            return self
        state = self._require_fitted("build_vocab_from_freq(..., update=True)")
        state["vocab"] = grow_vocab(state["vocab"], seen, self.min_count)
        state["tables"] = self._grown_tables(state["tables"], len(state["vocab"]))
        state["vectors"] = None
        return self

    def train(
        self,
        corpus: Corpus,
        *,
        epochs: int,
        total_words: int | None = None,
        tokenizer: Any = None,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
    ) -> Word2Vec:
        """Train ``epochs`` more epochs on ``corpus`` with the current vocabulary; returns ``self``.

        Words of ``corpus`` outside the vocabulary are skipped (add them first with
        :meth:`build_vocab` ``(corpus, update=True)``). The learning rate decays from ``lr``
        to ``min_lr`` over the ``epochs`` of this call, measured in ``total_words`` corpus
        words per epoch (default: the words of ``corpus``), as gensim's ``train`` does.
        Its :class:`Progress` records (added to :attr:`history`) count this call's epochs,
        ``1 .. epochs``. ``callback`` and ``checkpoint`` are as in :meth:`fit`; a
        checkpoint written here holds the model after each epoch: load it and ``train``
        the epochs still to do to finish an interrupted call (not bit for bit: a new call
        starts a new schedule).
        """
        state = self._require_fitted("train(...)")
        check_int("epochs", epochs, 1)
        check_int("total_words", total_words, 1, allow_none=True)
        encoded = encode_corpus(corpus, state["vocab"].keys, tokenizer=tokenizer)
        if encoded.total_words == 0:
            raise ValueError(
                "the corpus is empty: no tokens were read; pass token lists or a non-empty text file"
            )
        state["schedule"].update(by="train", epochs=epochs, done=0, total_words=total_words)
        train = partial(self._train_epochs, state, encoded, callback, checkpoint)
        run_training(self, state, train, keep_on_error=True)
        return self

    def _new_state(self, vocab: CountedVocab) -> dict[str, Any]:
        """A model of ``vocab`` with fresh tables, nothing trained (a schedule of 0 epochs)."""
        tables = self._new_tables(len(vocab))
        schedule = {"by": "build_vocab", "epochs": 0, "done": 0, "trained": 0, "total_words": None}
        return {
            "vocab": vocab,
            "tables": tables,
            "history": [],
            "schedule": schedule,
            "vectors": None,
        }

    # The tables (and, below, the kernel call _job_step): what a trainer built on this one
    # (FastText's subword tables) overrides.

    def _new_tables(self, V: int) -> dict[str, np.ndarray]:
        return initial_tables(V, self.vector_size, self.seed, self.hierarchical_softmax)

    def _grown_tables(self, tables: dict[str, np.ndarray], V: int) -> dict[str, np.ndarray]:
        return grow_tables(tables, V, self.seed)

    def _table_shapes(self, V: int) -> dict[str, tuple[int, int]]:
        """The shape of every table for ``V`` words (what a saved model must hold)."""
        n_nodes = max(V - 1, 1) if self.hierarchical_softmax else 0
        d = self.vector_size
        return {"W_in": (V, d), "W_out": (V, d), "W_nodes": (n_nodes, d)}

    def _train_epochs(
        self,
        state: dict[str, Any],
        encoded: EncodedCorpus,
        callback: Callable | None,
        checkpoint: str | os.PathLike | None,
    ) -> None:
        """The epochs left in the schedule: jobs on worker threads, checkpoint, callback."""
        schedule = state["schedule"]
        bounds, words_before = job_plan(encoded, self.batch_words)
        job_words = np.diff(words_before)
        total = schedule["total_words"] or encoded.total_words
        step = self._job_step(state["vocab"], state["tables"], encoded, bounds)
        reporter = ProgressReporter(
            schedule["epochs"],
            encoded.total_words,
            show=self.progress,
            callback=callback,
            start_epoch=schedule["done"],
            show_loss=self.compute_loss,
        )

        def run_epoch(epoch: int, trained: int) -> None:
            lrs = job_lrs(
                self._start_lr, self.min_lr, epoch, schedule["epochs"], words_before[:-1], total
            )
            run_jobs(
                len(bounds) - 1,
                resolve_workers(self.workers),
                lambda j: step(j, lrs[j], job_seed(self.seed, trained, j)),
                lambda j, r: reporter.job_done(int(job_words[j]), r[1], lrs[j]),
            )

        save = None if checkpoint is None else lambda: self.save(checkpoint)
        run_epochs(
            schedule, state["history"], reporter, run_epoch, save, loss_known=self.compute_loss
        )

    def _job_step(
        self,
        vocab: CountedVocab,
        tables: dict[str, np.ndarray],
        encoded: EncodedCorpus,
        bounds: np.ndarray,
    ) -> Callable[[int, float, int], tuple[int, float]]:
        """``step(j, lr, seed)`` trains job ``j`` into ``tables``: (words trained, loss)."""
        thresholds = sample_thresholds(vocab.counts, self.sample)
        table = negative_table(vocab.counts, self.ns_exponent)
        out = (tables["W_out"], table, negative_guide(table), self.negative)
        tree = (
            (tables["W_nodes"], *huffman_tree(vocab.counts)) if self.hierarchical_softmax else None
        )
        skipgram = self.architecture == "skipgram"

        def step(j: int, lr: float, seed: int) -> tuple[int, float]:
            ids, starts = encoded.sentences(bounds[j], bounds[j + 1])  # read from disk if spilled
            return train_job(
                tables["W_in"],
                ids,
                starts,
                0,
                len(starts) - 1,
                thresholds,
                self.sample > 0,
                out,
                tree,
                self.window,
                self.shrink_windows,
                skipgram,
                self.cbow_mean,
                lr,
                seed,
                self.compute_loss,
            )

        return step

    # -- saved state --------------------------------------------------------------------

    def _get_state(self) -> dict[str, Any]:
        state = self._require_fitted("save()")
        return {
            "vocab": vocab_state(state["vocab"]),
            "tables": dict(state["tables"]),
            "history": history_state(state["history"]),
            "schedule": dict(state["schedule"]),
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        vocab = vocab_from_state(state["vocab"])
        tables = {k: np.asarray(v, dtype=np.float32, order="C") for k, v in state["tables"].items()}
        check_tables(tables, self._table_shapes(len(vocab)))
        self._fitted = {
            "vocab": vocab,
            "tables": tables,
            "history": history_from_state(state["history"]),
            "schedule": schedule_from_state(state["schedule"], total_words=True),
            "vectors": None,
        }

    # -- learned state ------------------------------------------------------------------

    @property
    def vectors(self) -> Vectors:
        """The trained word vectors (a copy of ``W_in``) as a :class:`rowbook.Vectors`."""
        state = self._require_fitted(".vectors")
        if state["vectors"] is None:
            state["vectors"] = Vectors(
                state["vocab"].keys, state["tables"]["W_in"], state["vocab"].counts
            )
        return state["vectors"]

    @property
    def W_in(self) -> np.ndarray:
        """``(V, d)`` float32 input embedding table (the word vectors)."""
        return self._learned("tables", "W_in")["W_in"]

    @property
    def W_out(self) -> np.ndarray:
        """``(V, d)`` float32 output embedding table (gensim's ``syn1neg``)."""
        return self._learned("tables", "W_out")["W_out"]

    @property
    def W_nodes(self) -> np.ndarray:
        """``(V - 1, d)`` inner-node vectors of hierarchical softmax (gensim's ``syn1``);
        empty unless ``hierarchical_softmax=True``."""
        return self._learned("tables", "W_nodes")["W_nodes"]

    @property
    def index_to_key(self) -> tuple[str, ...]:
        return self._learned("vocab", "index_to_key").keys

    @property
    def counts(self) -> np.ndarray:
        """``(V,)`` corpus counts of the vocabulary words (summed over ``build_vocab`` updates)."""
        return self._learned("vocab", "counts").counts

    @property
    def history(self) -> list[Progress]:
        """One :class:`Progress` per epoch trained, over every ``fit`` / ``train`` call."""
        return self._learned("history", "history")
