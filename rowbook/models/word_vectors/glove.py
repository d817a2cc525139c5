"""GloVe (Pennington, Socher and Manning 2014): word vectors from global co-occurrence counts.

The pipeline is the reference implementation's (``vocab_count``, ``cooccur``,
``shuffle``, ``glove``) in one ``fit``:

1. vocabulary: words with ``count >= min_count``, by descending count, ties
   alphabetical (``max_vocab`` keeps only the most frequent);
2. co-occurrences: ``X_ij`` sums ``1 / distance`` over windows of ``window`` words,
   symmetric by default (:func:`rowbook.data.cooccurrence_matrix`);
3. the non-zero records are shuffled once, in the order of a seeded hash of ``(row, col)``
   (:mod:`rowbook.data.shuffle`; on disk within ``memory`` when it is set);
4. ``epochs`` passes of AdaGrad over the records
   (:mod:`~rowbook.models.word_vectors.glove_kernels`), split between ``workers`` threads
   without locks, as glove.c does.

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
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from rowbook.checks import check_int, check_number
from rowbook.corpus_source import corpus_source
from rowbook.data.cooccurrence import count_cooccurrences, stack_bands
from rowbook.data.cooccurrence_file import CountedCooccurrence
from rowbook.data.corpus import Corpus
from rowbook.data.counted_vocab import CountedVocab, truncate_vocab
from rowbook.data.id_stream import EncodedCorpus
from rowbook.data.shuffle import RecordArrays, RecordFile, shuffle_records, shuffle_to_file
from rowbook.data.spill import resolve_spill_dir
from rowbook.models.word_vectors.base import WordVectorModel
from rowbook.models.word_vectors.job_args import GloVeJob
from rowbook.models.word_vectors.jobs import EpochJobs
from rowbook.models.word_vectors.state import GloVeState, Progress, check_tables, table_view
from rowbook.vectors import Vectors

__all__ = ["GloVe"]

_JOB_RECORDS = 1 << 16
_TABLES = ("W", "W_tilde", "b", "b_tilde")

Records = RecordArrays | RecordFile


class GloVe(WordVectorModel):
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
        Seed of the initial values and the shuffle; threads (``None``: one per core the
        process may use; one worker is reproducible); show a tqdm bar.
    row_stats : bool
        Record per-word telemetry (a record updates both of its words), read as
        :attr:`row_stats_` (:mod:`~rowbook.models.word_vectors.telemetry`).

    Examples
    --------
    >>> corpus = [["ice", "is", "cold"], ["steam", "is", "hot"]] * 20
    >>> model = GloVe(vector_size=4, min_count=1, epochs=3, workers=1).fit(corpus)
    >>> model.vectors.vectors.shape
    (5, 4)
    >>> len(model.train(corpus, epochs=2).history_)
    5
    """

    _table_dtype: ClassVar[type] = np.float64
    _state_type: ClassVar[type[GloVeState]] = GloVeState
    _lr_schedule: ClassVar[bool] = False
    _stats_shape_of: ClassVar[str] = "W"

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
        row_stats: bool = False,
    ) -> None:
        self.vector_size, self.window, self.x_max, self.alpha = vector_size, window, x_max, alpha
        self.epochs, self.lr, self.min_count, self.max_vocab = epochs, lr, min_count, max_vocab
        self.symmetric, self.distance_weighting, self.memory = symmetric, distance_weighting, memory
        self.seed, self.workers, self.progress, self.row_stats = seed, workers, progress, row_stats
        self._check_ints(vector_size=1, window=1, epochs=1, min_count=1, seed=0)
        check_int("max_vocab", max_vocab, 1, allow_none=True)
        check_int("workers", workers, 1, allow_none=True)
        check_number("x_max", x_max, 0.0, low_open=True)
        check_number("alpha", alpha, 0.0)
        check_number("lr", lr, 0.0, low_open=True)
        check_number("memory", memory, 0.001, allow_none=True)

    # -- what differs in the family: glove.c's vocabulary, the records, AdaGrad ------------

    def _scan(self) -> dict[str, Any]:
        return {"ties": "alphabetical", "max_vocab_size": None}

    def _kept(self, vocab: CountedVocab, encoded: EncodedCorpus | None):
        """glove.c's ``vocab_count``: after ``min_count``, the ``max_vocab`` most frequent."""
        if self.max_vocab is None or len(vocab) <= self.max_vocab:
            return vocab, encoded
        if encoded is not None:
            return truncate_vocab(vocab, encoded, self.max_vocab)
        n = self.max_vocab
        return CountedVocab(
            vocab.keys[:n], vocab.counts[:n], vocab.total_words, vocab.corpus_count
        ), None

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
        with closing(self._records([X], spill_dir, X.nnz)) as records:
            self._run(state, records, callback, checkpoint, keep_on_error=False)
        return self

    def cooccurrence(
        self,
        corpus: Corpus,
        *,
        tokenizer: Any = None,
        spill_dir: str | os.PathLike | bool | None = None,
    ) -> CountedCooccurrence:
        """What :meth:`fit` counts before it trains: the vocabulary (``min_count``,
        ``max_vocab``) and the co-occurrence matrix (``window``, ``symmetric``,
        ``distance_weighting``, under ``memory``), as glove.c's ``vocab_count`` and
        ``cooccur`` write them. Save it with :func:`rowbook.data.save_cooccurrence` (or
        ``rowbook cooccur``), and train on it later with :meth:`fit_cooccurrence`: the
        vectors are those ``fit`` gives.
        """
        source = corpus_source(corpus, tokenizer=tokenizer)
        spill = resolve_spill_dir(source, spill_dir)
        vocab, encoded = self._read_vocab(source, spill)
        with closing(encoded):
            X = stack_bands(self._counted(encoded, len(vocab), spill))
        return CountedCooccurrence(
            X, vocab.keys, vocab.counts, self.window, self.symmetric, self.distance_weighting
        )

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
            folder=spill_dir or None,  # False (ids in RAM): runs in the system's folder
        )

    def _records(
        self,
        bands: Iterable[sp.csr_matrix],
        spill_dir: str | os.PathLike | None,
        n_records: int | None = None,
    ) -> Records:
        """glove.c's ``shuffle``: the records in seeded-hash order, in RAM or on disk within
        ``memory`` (``n_records``, when known, checks the disk's room first)."""
        if self._budget is None:
            return shuffle_records(bands, self.seed)
        return shuffle_to_file(bands, self.seed, self._budget, spill_dir or None, n_records)

    @contextmanager
    def _training_data(
        self, state: GloVeState, encoded: EncodedCorpus, spill_dir: str | os.PathLike | None
    ) -> Iterator[Records]:
        """The co-occurrence records of ``encoded``, counted and shuffled; their temporary
        file (with ``memory``) is removed when training ends."""
        bands = self._counted(encoded, len(state.vocab), spill_dir)
        with closing(self._records(bands, spill_dir)) as records:
            yield records

    def _new_tables(self, vocab: CountedVocab) -> dict[str, np.ndarray]:
        """``W``, ``W_tilde`` and the biases uniform in ``[-0.5, 0.5) / (d + 1)``."""
        rng = np.random.default_rng(self.seed)
        scale = 1.0 / (self.vector_size + 1)
        shapes = self._table_shapes(len(vocab))
        return {name: (rng.random(shapes[name]) - 0.5) * scale for name in _TABLES}

    def _table_shapes(self, V: int) -> dict[str, tuple[int, ...]]:
        d = self.vector_size
        return dict(zip(_TABLES, ((V, d), (V, d), (V,), (V,)), strict=True))

    def _grow_tables(self, state: GloVeState, old_V: int) -> None:
        """New rows as a fresh model of the grown vocabulary starts them, their sums 1."""
        fresh = self._new_tables(state.vocab)
        for name in _TABLES:
            rows = fresh[name][old_V:]
            state.tables[name] = np.concatenate([state.tables[name], rows])
            state.sums[name] = np.concatenate([state.sums[name], np.ones_like(rows)])

    def _new_extra(self, V: int) -> dict[str, Any]:
        """AdaGrad's squared-gradient sums, starting at 1 (glove.c), and no records yet."""
        sums = {name: np.ones(shape) for name, shape in self._table_shapes(V).items()}
        return {"sums": sums, "n_records": 0}

    def _epoch_jobs(self, state: GloVeState, records: Records) -> EpochJobs:
        """Jobs of ``2**16`` records, in their shuffled order, at the constant step ``lr``."""
        nnz = state.n_records = len(records)
        bounds = np.append(np.arange(0, nnz, _JOB_RECORDS), nnz)  # (J + 1,)
        job = GloVeJob(
            params=tuple(state.tables[name] for name in _TABLES),
            grads=tuple(state.sums[name] for name in _TABLES),
            x_max=self.x_max,
            alpha=self.alpha,
        )

        def run(j: int, lr: float, trained: int, stats: Any) -> float:  # RAM views or file reads
            rows, cols, vals = records.read(int(bounds[j]), int(bounds[j + 1]))
            return job.run(rows, cols, vals, lr, stats)

        return EpochJobs(
            sizes=np.diff(bounds),
            total=nnz,
            run=run,
            lrs=lambda epoch: np.full(len(bounds) - 1, self.lr),
            unit="record",
            mean_loss=True,
        )

    def _stats_table(self, state: GloVeState) -> np.ndarray:
        """The words' vectors ``W + W_tilde``, whose rows the telemetry follows."""
        return state.tables["W"] + state.tables["W_tilde"]

    def _make_vectors(self, state: GloVeState) -> Vectors:
        """``W + W_tilde`` as float32 (glove.c's ``-model 2`` output)."""
        table = (state.tables["W"] + state.tables["W_tilde"]).astype(np.float32)
        return Vectors(state.vocab.keys, table, state.vocab.counts)

    # -- saved state --------------------------------------------------------------------

    def _extra_state(self, fitted: GloVeState) -> dict[str, Any]:
        return {"sums": dict(fitted.sums), "n_records": fitted.n_records}

    def _extra_from_state(self, saved: dict[str, Any], V: int) -> dict[str, Any]:
        sums = {k: np.asarray(v, dtype=np.float64, order="C") for k, v in saved["sums"].items()}
        check_tables(sums, self._table_shapes(V))
        return {"sums": sums, "n_records": int(saved["n_records"])}

    # -- learned state ------------------------------------------------------------------

    W_ = table_view("W", "``(V, d)`` float64 word vectors ``w_i``.")

    W_tilde_ = table_view("W_tilde", "``(V, d)`` float64 context vectors ``w~_j``.")

    @property
    def biases_(self) -> tuple[np.ndarray, np.ndarray]:
        """``(b, b_tilde)``, each ``(V,)``."""
        tables = self._require_fitted(".biases_").tables
        return tables["b"], tables["b_tilde"]

    @property
    def n_records_(self) -> int:
        """Number of non-zero co-occurrence records of the last training call."""
        return self._require_fitted(".n_records_").n_records
