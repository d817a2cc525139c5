"""GloVe (Pennington, Socher and Manning 2014): word vectors from global co-occurrence counts.

The pipeline is the reference implementation's (``vocab_count``, ``cooccur``,
``shuffle``, ``glove``) in one ``fit``:

1. vocabulary: words with ``count >= min_count``, by descending count, ties
   alphabetical (``max_vocab`` keeps only the most frequent);
2. co-occurrences: ``X_ij`` sums ``1 / distance`` over windows of ``window`` words,
   symmetric by default (:func:`rowbook.data.cooccurrence_matrix`);
3. the non-zero records are shuffled once, in the order of a seeded hash of ``(row, col)``
   (:mod:`rowbook.data.shuffle`; on disk within ``memory`` when it is set);
4. ``epochs`` passes of AdaGrad over the records (:mod:`rowbook.models._glove_kernels`),
   split between ``workers`` threads without locks, as glove.c does.

``W``, ``W_tilde`` and the biases start uniform in ``[-0.5, 0.5) / (d + 1)`` (glove.c
divides by the vector size counted with the bias column) and the AdaGrad accumulators at
1. The vectors returned are ``W + W_tilde`` (glove.c's default ``-model 2``).

Keeping a model: :meth:`GloVe.save` / :meth:`GloVe.load` keep the tables and the AdaGrad
sums, :meth:`GloVe.build_vocab` with ``update=True`` adds the words of new text, and
:meth:`GloVe.train` runs more epochs on a corpus (its co-occurrences counted over the
model's vocabulary). AdaGrad's step size has no schedule and the records are
shuffled once by ``seed``, so ``fit`` for 2 epochs and ``train`` for 3 on the same corpus
is a 5-epoch ``fit``, bit for bit with one worker.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from rowbook.checks import check_int, check_number
from rowbook.data.cooccurrence import count_cooccurrences, stack_bands
from rowbook.data.cooccurrence_file import CountedCooccurrence
from rowbook.data.corpus import (
    Corpus,
    CountedVocab,
    EncodedCorpus,
    encode_corpus,
    read_corpus,
    truncate_vocab,
)
from rowbook.data.shuffle import RecordArrays, RecordFile, shuffle_records, shuffle_to_file
from rowbook.models._fitting import Progress, ProgressReporter, resolve_workers, run_jobs
from rowbook.models._glove_kernels import glove_records
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
from rowbook.models.base import Model
from rowbook.vectors import Vectors

__all__ = ["GloVe"]

_JOB_RECORDS = 1 << 16
_TABLES = ("W", "W_tilde", "b", "b_tilde")

Records = RecordArrays | RecordFile


class GloVe(Model):
    """Train GloVe vectors on a corpus.

    Parameters
    ----------
    vector_size, window : int
        Dimension of the vectors; how many words on each side count as context.
    x_max, alpha : float
        The weighting ``f(x) = min(1, (x / x_max) ** alpha)``.
    epochs, lr : int, float
        AdaGrad passes over the co-occurrence records in ``fit`` and the initial step size.
    min_count, max_vocab : int
        Keep words seen at least ``min_count`` times, at most the ``max_vocab`` most frequent.
    symmetric, distance_weighting : bool
        Count right contexts too; weight a pair by ``1 / distance`` (else by 1).
    memory : float or None
        Budget in GB for counting and shuffling co-occurrences, as glove.c's ``cooccur
        -memory`` and ``shuffle -memory``: past it, counted runs spill to temporary files
        and are merged (:func:`rowbook.data.count_cooccurrences`), the records are sorted
        into their shuffled order on disk and training reads them job by job
        (:func:`rowbook.data.shuffle.shuffle_to_file`); ``None`` does all of it in RAM.
        The counts, their order, and so the vectors are the same bit for bit whatever the
        budget.
    seed, workers, progress
        Seed of the initial values and the shuffle; threads (``None``: one per CPU; one
        worker is reproducible); show a tqdm bar.

    Examples
    --------
    >>> corpus = [["ice", "is", "cold"], ["steam", "is", "hot"]] * 20
    >>> model = GloVe(vector_size=4, min_count=1, epochs=3, workers=1).fit(corpus)
    >>> model.vectors.vectors.shape
    (5, 4)
    >>> len(model.train(corpus, epochs=2).history)
    5
    """

    #: Parameters a resumed ``fit`` may change: they do not alter what is learned.
    _RUN_ONLY = ("workers", "progress")

    def __init__(
        self,
        *,
        vector_size: int = 50,
        window: int = 15,
        x_max: float = 100.0,
        alpha: float = 0.75,
        epochs: int = 25,
        lr: float = 0.05,
        min_count: int = 5,
        max_vocab: int | None = None,
        symmetric: bool = True,
        distance_weighting: bool = True,
        memory: float | None = None,
        seed: int = 1,
        workers: int | None = None,
        progress: bool = False,
    ) -> None:
        self.vector_size, self.window, self.x_max, self.alpha = vector_size, window, x_max, alpha
        self.epochs, self.lr, self.min_count, self.max_vocab = epochs, lr, min_count, max_vocab
        self.symmetric, self.distance_weighting, self.memory = symmetric, distance_weighting, memory
        self.seed, self.workers, self.progress = seed, workers, progress
        for name, minimum in (
            ("vector_size", 1),
            ("window", 1),
            ("epochs", 1),
            ("min_count", 1),
            ("seed", 0),
        ):
            check_int(name, getattr(self, name), minimum)
        check_int("max_vocab", max_vocab, 1, allow_none=True)
        check_int("workers", workers, 1, allow_none=True)
        check_number("x_max", x_max, 0.0, low_open=True)
        check_number("alpha", alpha, 0.0)
        check_number("lr", lr, 0.0, low_open=True)
        check_number("memory", memory, 0.001, allow_none=True)

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
    ) -> GloVe:
        """Count co-occurrences in ``corpus`` and fit the vectors in ``epochs``; returns ``self``.

        The arguments are those of :meth:`rowbook.models.word2vec.Word2Vec.fit`; progress
        ``words`` here counts co-occurrence records. With ``memory`` set, ``spill_dir`` also
        holds the counting runs and the shuffled records (24 bytes a record while sorting,
        then 16), removed when training ends.
        """
        vocab, encoded = self._read_vocab(corpus, tokenizer, spill_dir)
        if resume is None or not Path(resume).exists():  # nothing saved yet: start afresh
            state = self._new_state(vocab)
        else:
            state = resume_state(self, resume, vocab, self._RUN_ONLY)
        records = self._records(self._counted(encoded, len(vocab), spill_dir), spill_dir)
        self._run(state, records, callback, checkpoint, keep_on_error=False)
        return self

    def build_vocab(self, corpus: Corpus, *, update: bool = False, tokenizer: Any = None) -> GloVe:
        """Read the vocabulary of ``corpus``; returns ``self`` (gensim's ``build_vocab``).

        ``update=False`` starts a new model (fresh tables, nothing trained). ``update=True``
        adds to a fitted (or loaded) model the words of ``corpus`` seen at least
        ``min_count`` times there (``max_vocab`` caps only the vocabulary ``fit`` builds);
        old words add their counts. Old rows and their AdaGrad sums are unchanged; new rows
        are the rows a fresh model of the grown vocabulary starts with, their sums 1.
        """
        if not update:
            self._fitted = self._new_state(self._read_vocab(corpus, tokenizer)[0])
            self._fitted["schedule"].update(by="build_vocab", epochs=0)
            return self
        state = self._require_fitted("build_vocab(..., update=True)")
        seen, _ = read_corpus(corpus, min_count=1, tokenizer=tokenizer, ties="alphabetical")
        old_V = len(state["vocab"])
        state["vocab"] = grow_vocab(state["vocab"], seen, self.min_count)
        tables, sums = self._new_tables(len(state["vocab"]))
        for name in _TABLES:
            state["tables"][name] = np.concatenate([state["tables"][name], tables[name][old_V:]])
            state["sums"][name] = np.concatenate([state["sums"][name], sums[name][old_V:]])
        state["vectors"] = None
        return self

    def train(
        self,
        corpus: Corpus,
        *,
        epochs: int,
        tokenizer: Any = None,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        spill_dir: str | os.PathLike | None = None,
    ) -> GloVe:
        """Run ``epochs`` more AdaGrad epochs on the co-occurrences of ``corpus``; returns ``self``.

        Co-occurrences are counted over the model's vocabulary (other words are skipped)
        and shuffled by ``seed``; the AdaGrad sums carry on from where training stopped.
        ``callback``, ``checkpoint`` and ``spill_dir`` are as in :meth:`fit`.
        """
        state = self._require_fitted("train(...)")
        check_int("epochs", epochs, 1)
        encoded = encode_corpus(
            corpus, state["vocab"].keys, tokenizer=tokenizer, spill_dir=spill_dir
        )
        if encoded.total_words == 0:
            raise ValueError(
                "the corpus is empty: no tokens were read; pass token lists or a non-empty text file"
            )
        state["schedule"].update(by="train", epochs=epochs, done=0)
        records = self._records(self._counted(encoded, len(state["vocab"]), spill_dir), spill_dir)
        self._run(state, records, callback, checkpoint, keep_on_error=True)
        return self

    def fit_cooccurrence(
        self,
        cooccurrence: Any,
        keys: Sequence[str],
        *,
        counts: Sequence[int] | None = None,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        spill_dir: str | os.PathLike | None = None,
    ) -> GloVe:
        """Fit the vectors in ``epochs`` on co-occurrences counted elsewhere; returns ``self``.

        ``cooccurrence`` is a ``(V, V)`` scipy sparse matrix (any format; summed duplicates)
        whose row and column ``i`` is the word ``keys[i]``: counted out of core
        (:func:`rowbook.data.count_cooccurrences`), per shard on a cluster
        (:mod:`rowbook.distributed`), or by another tool. ``counts`` (the words' corpus
        counts, optional) are kept with the vectors. The records are shuffled by ``seed``
        as in :meth:`fit` (on disk in ``spill_dir`` with ``memory`` set), so fitting a
        corpus and fitting its counted matrix give the same vectors.
        """
        keys = tuple(keys)
        X = sp.csr_matrix(cooccurrence)
        if X.shape != (len(keys), len(keys)):
            raise ValueError(
                f"cooccurrence has shape {X.shape}, but there are {len(keys)} keys; it must be "
                "(V, V) with row and column i for keys[i]"
            )
        if X.nnz == 0:
            raise ValueError("cooccurrence has no non-zero count: nothing to fit")
        given = np.zeros(len(keys), np.int64) if counts is None else np.asarray(counts, np.int64)
        vocab = CountedVocab(keys, given, int(given.sum()), 0)
        state = self._new_state(vocab)
        if not X.has_canonical_format:  # sum duplicates in a copy, not in the caller's matrix
            X = X.copy()
            X.sum_duplicates()
        self._run(state, self._records([X], spill_dir), callback, checkpoint, keep_on_error=False)
        return self

    def cooccurrence(
        self, corpus: Corpus, *, tokenizer: Any = None, spill_dir: str | os.PathLike | None = None
    ) -> CountedCooccurrence:
        """What :meth:`fit` counts before it trains: the vocabulary (``min_count``,
        ``max_vocab``) and the co-occurrence matrix (``window``, ``symmetric``,
        ``distance_weighting``, under ``memory``), as glove.c's ``vocab_count`` and
        ``cooccur`` write them. Save it with :func:`rowbook.data.save_cooccurrence` (or
        ``rowbook cooccur``), and train on it later with :meth:`fit_cooccurrence`: the
        vectors are those ``fit`` gives.
        """
        vocab, encoded = self._read_vocab(corpus, tokenizer, spill_dir)
        X = stack_bands(self._counted(encoded, len(vocab), spill_dir))
        return CountedCooccurrence(
            X, vocab.keys, vocab.counts, self.window, self.symmetric, self.distance_weighting
        )

    def _read_vocab(
        self, corpus: Corpus, tokenizer: Any, spill_dir: str | os.PathLike | None = None
    ) -> tuple[CountedVocab, EncodedCorpus]:
        """glove.c's ``vocab_count``: ``min_count``, then the ``max_vocab`` most frequent."""
        vocab, encoded = read_corpus(
            corpus,
            min_count=self.min_count,
            tokenizer=tokenizer,
            ties="alphabetical",
            spill_dir=spill_dir,
        )
        if self.max_vocab is not None and len(vocab) > self.max_vocab:
            vocab, encoded = truncate_vocab(vocab, encoded, self.max_vocab)
        check_vocab(vocab, self.min_count)
        return vocab, encoded

    @property
    def _budget(self) -> int | None:
        return None if self.memory is None else int(self.memory * 2**30)

    def _counted(
        self, encoded: EncodedCorpus, V: int, spill_dir: str | os.PathLike | None
    ) -> Iterable[sp.csr_matrix]:
        """glove.c's ``cooccur``: the counts as CSR bands of rows, within ``memory``."""
        return count_cooccurrences(
            encoded,
            V,
            self.window,
            symmetric=self.symmetric,
            weighted=self.distance_weighting,
            memory=self._budget,
            folder=spill_dir,
        )

    def _records(
        self, bands: Iterable[sp.csr_matrix], spill_dir: str | os.PathLike | None
    ) -> Records:
        """glove.c's ``shuffle``: the records in seeded-hash order, in RAM or on disk within ``memory``."""
        if self._budget is None:
            return shuffle_records(bands, self.seed)
        return shuffle_to_file(bands, self.seed, self._budget, spill_dir)

    def _run(
        self,
        state: dict[str, Any],
        records: Records,
        callback: Callable | None,
        checkpoint: str | os.PathLike | None,
        keep_on_error: bool,
    ) -> None:
        """Train ``state`` on ``records``, then remove the records' temporary file if any."""
        try:
            train = partial(self._train_epochs, state, records, callback, checkpoint)
            run_training(self, state, train, keep_on_error=keep_on_error)
        finally:
            records.close()

    def _new_tables(self, V: int) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """``W``, ``W_tilde`` and the biases uniform in ``[-0.5, 0.5) / (d + 1)``, AdaGrad sums 1."""
        d = self.vector_size
        rng = np.random.default_rng(self.seed)
        scale = 1.0 / (d + 1)
        shapes = ((V, d), (V, d), (V,), (V,))
        tables = {
            name: (rng.random(shape) - 0.5) * scale
            for name, shape in zip(_TABLES, shapes, strict=True)
        }
        return tables, {name: np.ones_like(table) for name, table in tables.items()}

    def _new_state(self, vocab: CountedVocab) -> dict[str, Any]:
        tables, sums = self._new_tables(len(vocab))
        schedule = {"by": "fit", "epochs": self.epochs, "done": 0, "trained": 0}
        return {
            "vocab": vocab,
            "tables": tables,
            "sums": sums,
            "history": [],
            "schedule": schedule,
            "n_records": 0,
            "vectors": None,
        }

    def _train_epochs(
        self,
        state: dict[str, Any],
        records: Records,
        callback: Callable | None,
        checkpoint: str | os.PathLike | None,
    ) -> None:
        nnz = state["n_records"] = len(records)
        bounds = np.append(np.arange(0, nnz, _JOB_RECORDS), nnz)  # (J + 1,)
        params = tuple(state["tables"][name] for name in _TABLES)
        grads = tuple(state["sums"][name] for name in _TABLES)
        schedule = state["schedule"]
        reporter = ProgressReporter(
            schedule["epochs"],
            nnz,
            show=self.progress,
            callback=callback,
            start_epoch=schedule["done"],
            unit="record",
            mean_loss=True,
        )

        def job(j: int) -> float:  # a job's records: views in RAM, or read from the file
            rows, cols, vals = records.read(int(bounds[j]), int(bounds[j + 1]))
            return glove_records(
                params, grads, rows, cols, vals, 0, len(vals), self.x_max, self.alpha, self.lr
            )

        def run_epoch(epoch: int, trained: int) -> None:
            run_jobs(
                len(bounds) - 1,
                resolve_workers(self.workers),
                job,
                lambda j, cost: reporter.job_done(int(bounds[j + 1] - bounds[j]), cost, self.lr),
            )

        save = None if checkpoint is None else lambda: self.save(checkpoint)
        run_epochs(schedule, state["history"], reporter, run_epoch, save)

    # -- saved state --------------------------------------------------------------------

    def _get_state(self) -> dict[str, Any]:
        state = self._require_fitted("save()")
        return {
            "vocab": vocab_state(state["vocab"]),
            "tables": dict(state["tables"]),
            "sums": dict(state["sums"]),
            "history": history_state(state["history"]),
            "schedule": dict(state["schedule"]),
            "n_records": state["n_records"],
        }

    def _set_state(self, state: dict[str, Any]) -> None:
        vocab = vocab_from_state(state["vocab"])
        tables = {k: np.asarray(v, dtype=np.float64, order="C") for k, v in state["tables"].items()}
        sums = {k: np.asarray(v, dtype=np.float64, order="C") for k, v in state["sums"].items()}
        V, d = len(vocab), self.vector_size
        shapes = dict(zip(_TABLES, ((V, d), (V, d), (V,), (V,)), strict=True))
        check_tables(tables, shapes)
        check_tables(sums, shapes)
        self._fitted = {
            "vocab": vocab,
            "tables": tables,
            "sums": sums,
            "history": history_from_state(state["history"]),
            "schedule": schedule_from_state(state["schedule"]),
            "n_records": int(state["n_records"]),
            "vectors": None,
        }

    # -- learned state ------------------------------------------------------------------

    @property
    def vectors(self) -> Vectors:
        """``W + W_tilde`` as a :class:`rowbook.Vectors` (glove.c's ``-model 2`` output)."""
        state = self._require_fitted(".vectors")
        if state["vectors"] is None:
            table = (state["tables"]["W"] + state["tables"]["W_tilde"]).astype(np.float32)
            state["vectors"] = Vectors(state["vocab"].keys, table, state["vocab"].counts)
        return state["vectors"]

    @property
    def W(self) -> np.ndarray:
        """``(V, d)`` float64 word vectors ``w_i``."""
        return self._learned("tables", "W")["W"]

    @property
    def W_tilde(self) -> np.ndarray:
        """``(V, d)`` float64 context vectors ``w~_j``."""
        return self._learned("tables", "W_tilde")["W_tilde"]

    @property
    def biases(self) -> tuple[np.ndarray, np.ndarray]:
        """``(b, b_tilde)``, each ``(V,)``."""
        tables = self._learned("tables", "biases")
        return tables["b"], tables["b_tilde"]

    @property
    def index_to_key(self) -> tuple[str, ...]:
        return self._learned("vocab", "index_to_key").keys

    @property
    def n_records(self) -> int:
        """Number of non-zero co-occurrence records of the last training call."""
        return self._learned("n_records", "n_records")

    @property
    def history(self) -> list[Progress]:
        """One :class:`Progress` per epoch trained; ``loss`` is the mean ``J_ij`` per record."""
        return self._learned("history", "history")
