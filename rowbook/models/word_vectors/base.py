"""The word-vector family's base class: what Word2Vec, FastText and GloVe share.

One file over 400 lines on purpose: it is the family's one base class (fit, resume,
build_vocab, train, the epoch loop, the saved state), which each model fills in through a
few hooks.

A word-vector model counts a vocabulary in a corpus, keeps the corpus as word ids, and
trains tables over the vocabulary in epochs of jobs on Hogwild threads
(:mod:`~rowbook.models.word_vectors.jobs`). :class:`WordVectorModel` owns all of that
once -- ``fit`` / ``resume``, ``build_vocab(update=)``, ``build_vocab_from_freq``,
``train``, the epoch loop with its checkpoints and callback, the saved state and the
common learned attributes -- and a model of the family provides only what differs:

* its tables: ``_new_tables``, ``_grow_tables``, ``_table_shapes`` (and ``_table_dtype``);
* its epoch: ``_epoch_jobs`` cuts the training data into jobs and runs its kernel on one;
  ``_training_data`` turns the encoded corpus into what the jobs read (word2vec: the ids
  themselves; GloVe: counted and shuffled co-occurrence records);
* its vocabulary rule: ``_scan`` (gensim's tie order and scan cap, or glove.c's) and
  ``_kept`` (GloVe keeps the ``max_vocab`` most frequent);
* its query view: ``_make_vectors``.

The corpus is decided once, where it arrives: ``fit``, ``build_vocab``, ``train`` (and
GloVe's ``cooccurrence``) turn what they are given into a
:class:`~rowbook.corpus_source.CorpusSource` with :func:`~rowbook.corpus_source.corpus_source`,
and everything below -- the spill decision, the first pass, the encoding -- takes that.

The learned state (``self._fitted``) is a
:class:`~rowbook.models.word_vectors.state.TrainedState` (GloVe's a ``GloVeState``, of the
class named by ``_state_type``): the vocabulary, the tables, the history (one
:class:`~rowbook.models.word_vectors.state.Progress` per epoch), the
:class:`~rowbook.models.word_vectors.state.Schedule` of the training call in progress or
last finished (``done`` of its ``epochs`` trained, ``trained`` epochs in the model's whole
life, what seeds each epoch's random draws), the telemetry and the cached query view. A
checkpoint is the model saved after every epoch, so ``fit(..., resume=path)`` picks the
schedule up where it stopped.
"""

from __future__ import annotations

import inspect
import os
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping
from contextlib import closing, contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from rowbook._threads import resolve_workers
from rowbook.checks import EmptyInputError, ParameterError, check_int
from rowbook.corpus_source import CorpusSource, corpus_source
from rowbook.data.corpus import Corpus, encode_source, read_source
from rowbook.data.counted_vocab import CountedVocab, vocab_from_counts
from rowbook.data.id_stream import EncodedCorpus
from rowbook.data.spill import resolve_spill_dir
from rowbook.io import fields_of
from rowbook.models.base import Model
from rowbook.models.word_vectors import telemetry
from rowbook.models.word_vectors.jobs import EpochJobs, run_schedule
from rowbook.models.word_vectors.state import (
    LearnedViews,
    Progress,
    Schedule,
    TrainedState,
    check_resumed,
    check_vocab,
    fitted_state,
    grow_vocab,
    saved_state,
)
from rowbook.vectors import Vectors

if TYPE_CHECKING:
    from rowbook.optim.row_stats import RowStats

__all__ = ["WordVectorModel"]


class WordVectorModel(LearnedViews, Model):
    """Base class of the word-vector models; see the module docstring for what it owns.

    Abstract, not a model itself: :class:`~rowbook.models.Word2Vec`,
    :class:`~rowbook.models.FastText` and :class:`~rowbook.models.GloVe` are.
    """

    _run_only: ClassVar[tuple[str, ...]] = ("workers", "progress", "row_stats")
    #: dtype of the tables (word2vec's float32, glove.c's float64).
    _table_dtype: ClassVar[type] = np.float32
    #: Whether the learning rate follows a schedule measured in corpus words (``train``'s
    #: ``total_words``); GloVe's AdaGrad steps have none.
    _lr_schedule: ClassVar[bool] = True
    #: The class of the learned state (GloVe's adds AdaGrad's sums).
    _state_type: ClassVar[type[TrainedState]] = TrainedState

    # parameters every model of the family has (set by the subclass's __init__)
    min_count: int
    epochs: int
    seed: int
    workers: int | None
    progress: bool
    row_stats: bool

    # -- what a model of the family provides --------------------------------------------

    def _scan(self) -> dict[str, Any]:
        """How a corpus is counted: :func:`~rowbook.data.read_corpus`'s ``ties`` and
        ``max_vocab_size``."""
        return {"ties": "gensim", "max_vocab_size": None}

    def _kept(self, vocab: CountedVocab, encoded: EncodedCorpus | None):
        """The vocabulary (and corpus) after the model's own cut; ``encoded`` may be None."""
        return vocab, encoded

    @abstractmethod
    def _new_tables(self, vocab: CountedVocab) -> dict[str, np.ndarray]:
        """Fresh tables for ``vocab``."""

    @abstractmethod
    def _grow_tables(self, state: TrainedState, old_V: int) -> None:
        """Grow ``state``'s tables (and training state) to its grown vocabulary, old rows kept."""

    @abstractmethod
    def _table_shapes(self, V: int) -> dict[str, tuple[int, ...]]:
        """The shape of every table for ``V`` words (what a saved model must hold)."""

    @contextmanager
    def _training_data(
        self, state: TrainedState, encoded: EncodedCorpus, spill_dir: str | os.PathLike | None
    ) -> Iterator[Any]:
        """What the jobs read, made from ``encoded``: the id stream itself, here."""
        yield encoded

    @abstractmethod
    def _epoch_jobs(self, state: TrainedState, data: Any) -> EpochJobs:
        """One epoch of training on ``data`` as jobs for the model's kernel."""

    @abstractmethod
    def _make_vectors(self, state: TrainedState) -> Vectors:
        """The query view of the learned tables (what :attr:`vectors` returns)."""

    def _stats_table(self, state: TrainedState) -> np.ndarray:
        """The table whose rows the telemetry follows (``row_stats=True``): ``W_in``. Its
        shape and dtype are those of the table named by ``_stats_shape_of``."""
        return state.tables["W_in"]

    #: The table whose shape and dtype the telemetry's rows take.
    _stats_shape_of: ClassVar[str] = "W_in"

    def _stats_layout(self, state: TrainedState) -> tuple[int, int, Any]:
        table = state.tables[self._stats_shape_of]
        return table.shape[0], table.shape[1], table.dtype

    def _new_extra(self, V: int) -> dict[str, Any]:
        """Training state beyond the common keys for a fresh model (GloVe's AdaGrad sums)."""
        return {}

    def _extra_state(self, fitted: TrainedState) -> dict[str, Any]:
        """That state as saved values."""
        return {}

    def _extra_from_state(self, saved: dict[str, Any], V: int) -> dict[str, Any]:
        """That state from saved values, checked against ``V`` words."""
        return {}

    # -- fitting -------------------------------------------------------------------------

    def fit(
        self,
        corpus: Corpus,
        *,
        tokenizer: Any = None,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        resume: str | os.PathLike | None = None,
        spill_dir: str | os.PathLike | bool | None = None,
        vocab: Mapping[str, int] | None = None,
    ) -> WordVectorModel:
        """Learn the vocabulary and the vectors of ``corpus`` in ``epochs`` epochs; returns ``self``.

        Parameters
        ----------
        corpus : iterable of token lists, or a path
            Sentences as lists of tokens, or text files with one sentence per line (a
            path, a folder, a list of paths, ``"-"``; see :mod:`rowbook.corpus_files`).
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
        spill_dir : path, False or None
            Where the corpus's id stream (4 bytes per token) is kept: a folder puts it in a
            temporary file there, read back job by job, so memory stays at the vocabulary
            and the tables however long the corpus (:mod:`rowbook.data.id_stream`);
            ``False`` keeps it in RAM; ``None`` (default) decides from the corpus's size:
            files whose ids would take more than 1/256 of the available memory spill to
            the system's temporary folder, and a :class:`~rowbook.data.spill.SpillNotice`
            says so once (:mod:`rowbook.data.spill`). The vectors are the same either way;
            the temporary files are removed when ``fit`` returns, fails or is interrupted.
        vocab : mapping of str to int, optional
            Word counts of ``corpus`` made elsewhere, in first-sighting order (from
            :func:`rowbook.distributed.word_counts`, say): the vocabulary is chosen from
            them by the model's rule and ``corpus`` is only read once, to encode it. With
            the corpus's own counts, the model is the one ``fit(corpus)`` learns.
        """
        source = corpus_source(corpus, tokenizer=tokenizer)
        spill = resolve_spill_dir(source, spill_dir)
        counted, encoded = self._read_vocab(source, spill, vocab)
        with closing(encoded):  # a spilled id stream is removed however this ends
            saved = self._resume_state(resume)
            state = self._new_state(counted)
            if saved is not None:
                state = self._resumed(saved, counted, resume)
            self._train(state, encoded, callback, checkpoint, spill, keep_on_error=False)
        return self

    def build_vocab(self, corpus: Corpus, *, update: bool = False, tokenizer: Any = None):
        """Read the vocabulary of ``corpus``; returns ``self`` (gensim's ``build_vocab``).

        ``update=False`` starts a new model: the vocabulary of ``corpus`` and fresh tables,
        forgetting anything learned. ``update=True`` adds to a fitted (or loaded) model the
        words of ``corpus`` seen at least ``min_count`` times there, after the old ones;
        old words add their counts in ``corpus`` to theirs. Old rows are unchanged (their
        training state too); new rows start as a fresh model of the grown vocabulary has
        them. Follow with :meth:`train`.
        """
        source = corpus_source(corpus, tokenizer=tokenizer)
        spill = resolve_spill_dir(source)
        if not update:
            counted, encoded = self._read_vocab(source, spill)
            encoded.close()
            return self._adopt(self._new_state(counted, by="build_vocab"))
        state = self._require_fitted("build_vocab(..., update=True)")
        seen, encoded = read_source(
            source,
            min_count=1,
            spill_dir=spill,
            workers=self._readers(),
            **self._scan(),
        )
        encoded.close()
        self._grow(state, seen)
        return self

    def build_vocab_from_freq(self, word_freq: Mapping[str, int], *, update: bool = False):
        """The vocabulary from word counts made elsewhere; returns ``self`` (gensim's name).

        ``word_freq`` maps each word to its corpus count, in first-sighting order (as a
        ``Counter`` filled in corpus order keeps them; :func:`rowbook.distributed.word_counts`
        gives exactly that for a corpus counted in shards on Dask); ``min_count`` and the
        order are then those :meth:`build_vocab` would give. ``update`` as in
        :meth:`build_vocab`. Follow with :meth:`train`.
        """
        if not update:
            return self._adopt(self._new_state(self.choose_vocab(word_freq), by="build_vocab"))
        state = self._require_fitted("build_vocab_from_freq(..., update=True)")
        self._grow(state, vocab_from_counts(word_freq, min_count=1, ties=self._scan()["ties"]))
        return self

    def choose_vocab(self, word_freq: Mapping[str, int]) -> CountedVocab:
        """The vocabulary ``fit`` and :meth:`build_vocab_from_freq` choose from word counts
        made elsewhere (in first-sighting order), without making tables: ``min_count``, the
        model's order of equal counts (gensim's, or glove.c's alphabetical) and cut (GloVe's
        ``max_vocab``). An empty result is refused as ``fit`` refuses it.

        Examples
        --------
        >>> from rowbook.models import GloVe
        >>> GloVe(min_count=2, max_vocab=2).choose_vocab({"b": 3, "c": 2, "a": 2, "d": 1}).keys
        ('b', 'a')
        """
        ties = self._scan()["ties"]
        vocab, _ = self._kept(
            vocab_from_counts(word_freq, min_count=self.min_count, ties=ties), None
        )
        check_vocab(vocab, self.min_count)
        return vocab

    def train(
        self,
        corpus: Corpus,
        *,
        epochs: int,
        total_words: int | None = None,
        tokenizer: Any = None,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        spill_dir: str | os.PathLike | bool | None = None,
    ):
        """Train ``epochs`` more epochs on ``corpus`` with the current vocabulary; returns ``self``.

        Words of ``corpus`` outside the vocabulary are skipped (add them first with
        :meth:`build_vocab` ``(corpus, update=True)``). Where the learning rate decays
        (word2vec, fastText) it runs from ``lr`` to ``min_lr`` over the ``epochs`` of this
        call, measured in ``total_words`` corpus words per epoch (default: the words of
        ``corpus``), as gensim's ``train`` does; GloVe's AdaGrad steps carry on from their
        sums. The :class:`Progress` records (added to :attr:`history_`) count this call's
        epochs, ``1 .. epochs``. ``callback``, ``checkpoint`` and ``spill_dir`` are as in
        :meth:`fit`; a checkpoint written here holds the model after each epoch: load it
        and ``train`` the epochs still to do to finish an interrupted call.
        """
        state = self._require_fitted("train(...)")
        check_int("epochs", epochs, 1)
        check_int("total_words", total_words, 1, allow_none=True)
        if total_words is not None and not self._lr_schedule:
            raise ParameterError(
                "total_words",
                total_words,
                f"None for {type(self).__name__}",
                fix="its steps have no learning-rate schedule to measure in corpus words",
            )
        source = corpus_source(corpus, tokenizer=tokenizer)
        spill = resolve_spill_dir(source, spill_dir)
        encoded = encode_source(source, state.vocab.keys, spill_dir=spill, workers=self._readers())
        with closing(encoded):
            if encoded.total_words == 0:
                raise EmptyInputError(
                    "the corpus is empty: no tokens were read; pass token lists or a non-empty "
                    "text file"
                )
            state.schedule.start("train", epochs, total_words)
            self._train(state, encoded, callback, checkpoint, spill, keep_on_error=True)
        return self

    def _read_vocab(
        self,
        source: CorpusSource,
        spill_dir: Any = None,
        counts: Mapping[str, int] | None = None,
    ) -> tuple[CountedVocab, EncodedCorpus]:
        """The vocabulary of ``source`` (from its own ``counts`` when given) and its ids, in
        RAM or in a file in ``spill_dir`` (already resolved: ``None`` is RAM), read by as many
        processes as ``workers`` trains on."""
        scan, readers = self._scan(), self._readers()
        if counts is not None:
            if scan["max_vocab_size"] is not None:
                raise ParameterError(
                    "max_vocab_size",
                    scan["max_vocab_size"],
                    "None when fit is given vocab=",
                    fix="it prunes while a corpus is counted, and these counts are made; "
                    "min_count still applies",
                )
            counted = self.choose_vocab(counts)
            return counted, encode_source(
                source, counted.keys, spill_dir=spill_dir, workers=readers
            )
        counted, encoded = read_source(
            source,
            min_count=self.min_count,
            spill_dir=spill_dir,
            workers=readers,
            **scan,
        )
        counted, encoded = self._kept(counted, encoded)
        check_vocab(counted, self.min_count)
        return counted, encoded

    def _readers(self) -> int:
        """Processes that read a file corpus: as many as the threads that train."""
        return resolve_workers(self.workers)

    def _grow(self, state: TrainedState, seen: CountedVocab) -> None:
        """Add the words of ``seen`` to ``state``'s vocabulary and grow its tables."""
        old_V = len(state.vocab)
        state.vocab = grow_vocab(state.vocab, seen, self.min_count)
        self._grow_tables(state, old_V)
        if state.row_stats is not None:
            rows = self._stats_layout(state)[0]
            state.row_stats = telemetry.grown(state.row_stats, old_V, rows)
        state.vectors = None

    def _new_state(
        self, vocab: CountedVocab, *, by: str = "fit", tables: dict[str, np.ndarray] | None = None
    ) -> TrainedState:
        """A model of ``vocab`` with fresh (or the given) tables and nothing trained, its
        schedule a ``fit`` of ``epochs`` epochs (``by="fit"``) or empty."""
        tables = self._new_tables(vocab) if tables is None else tables
        schedule = Schedule(by, self.epochs if by == "fit" else 0)
        return self._state_type(vocab, tables, schedule, **self._new_extra(len(vocab)))

    def _resumed(self, saved: dict[str, Any], vocab: CountedVocab, path: Any) -> TrainedState:
        """The state saved at ``path``, checked to continue ``fit`` on ``vocab``: made by
        ``fit`` with these epochs, on a corpus with the same vocabulary and counts."""
        with fields_of(path, f"saved {type(self).__name__}"):
            state = self._fitted_from_state(saved)
        check_resumed(state, vocab, self.epochs, path, type(self).__name__)
        return state

    # -- the epochs ----------------------------------------------------------------------

    def _train(
        self,
        state: TrainedState,
        encoded: EncodedCorpus,
        callback: Callable | None,
        checkpoint: Any,
        spill_dir: Any,
        *,
        keep_on_error: bool,
    ) -> None:
        with self._training_data(state, encoded, spill_dir) as data:
            self._run(state, data, callback, checkpoint, keep_on_error=keep_on_error)

    def _run(
        self,
        state: TrainedState,
        data: Any,
        callback: Callable | None,
        checkpoint: Any,
        *,
        keep_on_error: bool,
    ) -> None:
        """Make ``state`` the learned state (so checkpoints save it), then train its schedule.

        If training stops early the model keeps ``state`` when ``keep_on_error`` (more
        training of a fitted model, updated in place), else gets back what it had: a
        ``fit`` that did not finish leaves no learned state.
        """
        state.vectors = None
        with self._learning(state, keep_on_error=keep_on_error):
            self._train_epochs(state, data, callback, checkpoint)

    def _train_epochs(
        self, state: TrainedState, data: Any, callback: Callable | None, checkpoint: Any
    ) -> None:
        """The epochs still to do in the schedule (:func:`~rowbook.models.word_vectors.jobs.run_schedule`)."""
        jobs = self._epoch_jobs(state, data)
        if self.row_stats and state.row_stats is None:  # start recording here
            state.row_stats = telemetry.new_telemetry(*self._stats_layout(state))
        run_schedule(
            self,
            state,
            jobs,
            callback=callback,
            checkpoint=checkpoint,
            telemetry=telemetry.job_stats(state.row_stats, len(jobs.sizes))
            if self.row_stats
            else None,
        )

    # -- saved state ---------------------------------------------------------------------

    def _get_state(self) -> dict[str, Any]:
        fitted = self._require_fitted("save()")
        saved = {**saved_state(fitted), **self._extra_state(fitted)}
        if fitted.row_stats is not None:  # only when recorded: files stay as they were
            saved["row_stats"] = telemetry.telemetry_state(fitted.row_stats)
        return saved

    def _set_state(self, state: dict[str, Any]) -> None:
        self._adopt(self._fitted_from_state(state))

    def _fitted_from_state(self, saved: dict[str, Any]) -> TrainedState:
        common = fitted_state(saved, self._table_dtype, self._table_shapes)
        fitted = self._state_type(**common, **self._extra_from_state(saved, len(common["vocab"])))
        fitted.row_stats = telemetry.telemetry_from_state(
            saved.get("row_stats"), *self._stats_layout(fitted)
        )
        return fitted

    # -- learned state -------------------------------------------------------------------

    @property
    def row_stats_(self) -> RowStats:
        """Per-row telemetry of the word table, recorded with ``row_stats=True``
        (:mod:`~rowbook.models.word_vectors.telemetry`): updates, summed gradient norm, last
        job and distance travelled of every row, named by the vocabulary (and fastText's
        buckets), with the words' counts; draw it with :func:`rowbook.viz.plot_row_stats`."""
        fitted = self._require_fitted(".row_stats_")
        if fitted.row_stats is None:
            name = type(self).__name__
            if "row_stats" not in inspect.signature(type(self)).parameters:
                raise ValueError(f"{name} records no per-row telemetry (no row_stats parameter)")
            raise ValueError(
                f"this {name} was trained without telemetry; fit it with {name}(..., "
                "row_stats=True) to record which rows learned"
            )
        vocab = fitted.vocab
        table = self._stats_table(fitted)
        return telemetry.row_stats(fitted.row_stats, table, vocab.keys, vocab.counts)
