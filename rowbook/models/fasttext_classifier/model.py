"""fastText's supervised mode (Joulin et al. 2017, "Bag of Tricks"): a text is the mean of its rows.

A line ``__label__a __label__b some text`` is the rows of ``W_in`` ``(nwords + bucket, d)``
of its words, of their character n-grams (``maxn > 0``) and of its hashed word n-grams
(``word_ngrams > 1``), averaged (an ``EmbeddingBag(mode="mean")``), then one linear layer
``W_out`` ``(nlabels, d)`` scores the labels, under a softmax, negative sampling,
hierarchical softmax or one-vs-all (several labels a text). The reading and hashing are
fastText's (:mod:`rowbook.data.labelled`, :mod:`rowbook.data.labelled_ids`), the updates
and predictions too (:mod:`~rowbook.models.fasttext_classifier.kernels`, where the
derivation is written out, and :mod:`~.prediction_kernels`): a ``.bin`` or ``.ftz`` the ``fasttext`` package wrote predicts
the same labels with the same probabilities here, and the files written here there.

**What it shares with the word-vector family, and how.** Like word2vec it counts a
vocabulary in one pass (words by count, with ``min_count``), trains tables in epochs of jobs
of about ``batch_words`` tokens on Hogwild threads with a learning rate decaying linearly
over the tokens from ``lr`` to ``min_lr``, seeds each job (one worker and a seed train the
same tables every time, across a checkpoint resume too) and saves the vocabulary, tables,
history and schedule. It is not of that family, though: its lines carry labels, its output
table is over labels, its vocabulary never grows, and it predicts. So it is a
:class:`~rowbook.models.base.Model` of its own that *uses* the family's parts -- the epoch
loop (:func:`~rowbook.models.word_vectors.jobs.run_schedule`), the saved state's checks
(:mod:`~rowbook.models.word_vectors.state`) -- and adds its reading
(:mod:`rowbook.data.labelled`), training (:mod:`.training`), learned state (:mod:`.state`),
prediction (:mod:`.prediction`), quantisation (:mod:`.quantize`) and fastText's files
(:mod:`.files`). This file is the contract: parameters, ``fit``, ``train`` and resume, the
saved state's hooks. The methods that answer (``predict``, ``test``, ``confusion``, ...),
those of fastText's files (``save_fasttext``, ``load_fasttext``, ``quantize``) and the
learned attributes (``labels_``, ``W_in_``, ...) are mixins beside the modules they call:
:class:`~.prediction.ClassifierAnswers`, :class:`~.files.FastTextFiles`,
:class:`~.state.ClassifierViews`.

Differences from fastText, each deliberate: the learning rate is updated every line
(fastText: every 100 tokens, from a counter shared by its threads) and each job knows where
it stands in the schedule, so several workers see the schedule one worker sees; ties in
the vocabulary's counts keep the order of first sighting; bucket rows no training line
uses start at zero (fastText fills ``thread / 10`` of its table at random and leaves the
rest as it finds it); with one label, ``ns`` draws no negatives (fastText loops for ever).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal

from rowbook._threads import resolve_workers
from rowbook.checks import InputTypeError, ParameterError, check_choice, check_int, check_number
from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.labelled import LabelledLines, LabelVocab, fasttext_split, read_labelled
from rowbook.data.labelled_ids import EncodedLines, LineEncoder
from rowbook.models.base import Model
from rowbook.models.fasttext_classifier import training
from rowbook.models.fasttext_classifier.files import FastTextFiles, pretrained_rows
from rowbook.models.fasttext_classifier.kernels import LOSS_CODES
from rowbook.models.fasttext_classifier.prediction import (
    ClassifierAnswers,
    Confusion,
    TestResult,
    texts_and_labels,
)
from rowbook.models.fasttext_classifier.state import (
    ClassifierState,
    ClassifierViews,
    classifier_from_saved,
    new_state,
    require_dense,
    saved_classifier,
)
from rowbook.models.word_vectors.jobs import run_schedule
from rowbook.models.word_vectors.state import Progress, Schedule, check_resumed
from rowbook.vectors import Vectors

__all__ = ["Confusion", "FastTextClassifier", "TestResult"]

LossName = Literal["softmax", "ns", "hs", "ova"]


class FastTextClassifier(ClassifierAnswers, FastTextFiles, ClassifierViews, Model):
    """A fastText supervised text classifier: mean of word (and n-gram) rows, one linear layer.

    Parameters
    ----------
    vector_size : int
        ``d``, the size of the rows (fastText's ``-dim``).
    lr, min_lr : float
        Learning rate at the start and at the end of each training call (linear decay over
        the tokens; fastText's ``-lr``, decaying to 0).
    epochs : int
        Passes over the training lines (``-epoch``).
    word_ngrams : int
        Word n-grams up to this length join each line, hashed into ``bucket`` rows
        (``-wordNgrams``; 2 is what the paper uses).
    minn, maxn : int
        Character n-grams of every word (``maxn=0``: none, fastText's supervised default).
    bucket : int
        Hash buckets shared by word and char n-grams; used only when there are n-grams.
    loss : {"softmax", "ns", "hs", "ova"}
        Softmax over the labels; negative sampling; hierarchical softmax over a Huffman tree
        of the labels; one-vs-all (independent sigmoids: several labels per text).
    negative : int
        Negatives per line with ``ns``.
    min_count, min_count_label : int
        Words and labels seen fewer times are dropped.
    label_prefix : str
        A token starting with it is a label (``-label``).
    pretrained_vectors : path or Vectors, optional
        Word vectors to start the word rows from (``-pretrainedVectors``): a ``.vec`` /
        word2vec text file, any file :meth:`rowbook.Vectors.load` reads, or a
        :class:`rowbook.Vectors`; aligned by word, their size must be ``vector_size``.
    workers : int or None
        Training threads (``None``: one per core the process may use). One worker makes
        training reproducible.
    seed : int
        Seed of the initial rows and of every draw.
    batch_words : int
        Tokens per job (the unit of threading).
    progress : bool
        Show a progress bar.

    Examples
    --------
    >>> texts = ["good film", "great plot", "bad film", "awful plot"] * 20
    >>> labels = ["pos", "pos", "neg", "neg"] * 20
    >>> model = FastTextClassifier(vector_size=8, epochs=20, workers=1).fit(texts, labels)
    >>> model.predict("a good plot")[0], model.labels_
    (('__label__pos',), ('__label__pos', '__label__neg'))
    >>> model.test(texts, labels)
    TestResult(n=80, precision=1.0, recall=1.0)
    """

    _run_only: ClassVar[tuple[str, ...]] = ("workers", "progress")

    def __init__(
        self,
        *,
        vector_size: int = 100,
        lr: float = 0.1,
        min_lr: float = 0.0,
        epochs: int = 5,
        word_ngrams: int = 1,
        minn: int = 0,
        maxn: int = 0,
        bucket: int = 2_000_000,
        loss: LossName = "softmax",
        negative: int = 5,
        min_count: int = 1,
        min_count_label: int = 1,
        label_prefix: str = "__label__",
        pretrained_vectors: str | os.PathLike[str] | Vectors | None = None,
        workers: int | None = None,
        seed: int = 0,
        batch_words: int = 10_000,
        progress: bool = False,
    ) -> None:
        self.vector_size, self.lr, self.min_lr, self.epochs = vector_size, lr, min_lr, epochs
        self.word_ngrams, self.minn, self.maxn, self.bucket = word_ngrams, minn, maxn, bucket
        self.loss, self.negative = loss, negative
        self.min_count, self.min_count_label = min_count, min_count_label
        self.label_prefix, self.pretrained_vectors = label_prefix, pretrained_vectors
        self.workers, self.seed = workers, seed
        self.batch_words, self.progress = batch_words, progress
        self._check_params()

    def _check_params(self) -> None:
        owner = type(self).__name__
        check_choice("loss", self.loss, tuple(LOSS_CODES), owner=owner)
        self._check_ints(
            owner,
            vector_size=1,
            epochs=1,
            word_ngrams=1,
            minn=0,
            maxn=0,
            bucket=1,
            negative=1,
            min_count=1,
            min_count_label=1,
            seed=0,
            batch_words=1,
        )
        check_int("workers", self.workers, 1, allow_none=True, owner=owner)
        check_number("lr", self.lr, 0.0, low_open=True, owner=owner)
        check_number("min_lr", self.min_lr, 0.0, self.lr, owner=owner)
        if 0 < self.maxn < self.minn:
            check_int("maxn", self.maxn, self.minn, owner=owner)
        prefix = self.label_prefix
        if not isinstance(prefix, str) or not prefix or fasttext_split(prefix) != [prefix]:
            raise ParameterError(
                "label_prefix", prefix, "a non-empty str without spaces", owner=owner
            )
        pretrained = self.pretrained_vectors
        if pretrained is not None and not isinstance(pretrained, str | os.PathLike | Vectors):
            raise ParameterError(
                "pretrained_vectors",
                type(pretrained).__name__,
                "None, a path or a rowbook.Vectors",
                owner=owner,
            )

    def _params_to_json(self) -> dict[str, Any]:
        """A path is saved as a str; a :class:`Vectors` given in memory as ``None``."""
        pretrained = self.pretrained_vectors
        saved = os.fspath(pretrained) if isinstance(pretrained, str | os.PathLike) else None
        return self.get_params() | {"pretrained_vectors": saved}

    @property
    def n_buckets(self) -> int:
        """Bucket rows in ``W_in``: ``bucket`` when there are word or char n-grams, else 0."""
        return self.bucket if self.word_ngrams > 1 or self.maxn > 0 else 0

    # -- reading -------------------------------------------------------------------------

    def _lines(self, data: Any, labels: Any, errors: str) -> LabelledLines:
        if isinstance(data, LabelledLines):  # read already (autotune's trials)
            return data
        data, labels = texts_and_labels(data, labels)
        return read_labelled(data, labels, label_prefix=self.label_prefix, errors=errors)

    def _encoder(self, state: ClassifierState) -> LineEncoder:
        """The model's dictionary (made once per fitted state, then kept)."""
        if state.encoder is None:
            state.encoder = LineEncoder(
                state.vocab.keys,
                state.labels.keys,
                label_prefix=self.label_prefix,
                word_ngrams=self.word_ngrams,
                minn=self.minn,
                maxn=self.maxn,
                bucket=self.n_buckets,
                prune=state.prune,
            )
        return state.encoder

    def _vocabulary(self, lines: LabelledLines) -> tuple[CountedVocab, LabelVocab]:
        return training.choose_vocabulary(
            lines, self.label_prefix, self.min_count, self.min_count_label
        )

    # -- fitting -------------------------------------------------------------------------

    def fit(
        self,
        data: Any,
        labels: Sequence[Any] | None = None,
        *,
        validation: Any = None,
        autotune_seconds: float | None = 300.0,
        autotune_trials: int | None = None,
        autotune_metric: str = "f1",
        autotune_predictions: int = 1,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        resume: str | os.PathLike | None = None,
        errors: Literal["strict", "replace"] = "strict",
    ) -> FastTextClassifier:
        """Learn the vocabulary, the labels and the tables from labelled lines; returns ``self``.

        Parameters
        ----------
        data : path, "-", folder, list of paths, or list of str
            A fastText training file (``__label__a [__label__b ...] text`` a line;
            compressed, several files or a folder, see :mod:`rowbook.corpus_files`), or
            texts, one line each, with ``labels``.
        labels : sequence, optional
            With texts: each text's label (a str) or labels (a list of str); a label
            without ``label_prefix`` gets it.
        validation : path or (texts, labels), optional
            Labelled lines to search the parameters on first (fastText's autotune,
            :mod:`~rowbook.models.fasttext_classifier.autotune`): the best found are set on the
            model (see :attr:`autotune_`), which is then trained with them.
        autotune_seconds, autotune_trials : optional
            The search's budget: seconds (fastText's ``-autotune-duration``, 300), or a
            number of trials (then the search is reproducible with a seed; seconds then
            only cap it when given too).
        autotune_metric : str
            ``"f1"``, ``"f1:LABEL"``, ``"precisionAtRecall:R[:LABEL]"`` or
            ``"recallAtPrecision:P[:LABEL]"`` (R, P in percent).
        autotune_predictions : int
            Labels predicted a line while scoring (``-autotune-predictions``).
        callback, checkpoint, resume
            As :meth:`WordVectorModel.fit <rowbook.models.word_vectors.base.WordVectorModel.fit>`:
            per-epoch callback, checkpoint file, resume from one.
        errors : {"strict", "replace"}
            Invalid UTF-8 in files.
        """
        lines = self._lines(data, labels, errors)
        record = None
        if validation is not None:
            if resume is not None:
                raise InputTypeError(
                    "resume continues a fit with set parameters; autotune searches them"
                )
            from rowbook.models.fasttext_classifier.autotune import autotune

            self._vocabulary(lines)  # a bad training file fails before the search
            seconds = autotune_seconds if autotune_trials is None else None
            record = autotune(
                self,
                lines,
                self._lines(validation, None, errors),
                seconds=seconds,
                trials=autotune_trials,
                metric=autotune_metric,
                predictions=autotune_predictions,
            )
        words, label_vocab = self._vocabulary(lines)
        saved = self._resume_state(resume)
        if saved is None:
            state = new_state(words, label_vocab, self.vector_size, Schedule("fit", self.epochs))
        else:
            state = self._fitted_from_state(saved)
            check_resumed(state, words, self.epochs, resume, type(self).__name__)
            if state.labels.keys != label_vocab.keys:
                raise ValueError(
                    f"{resume} was made on other labels; resume with the data it was trained on"
                )
        encoded = self._encoder(state).encode(lines)
        del lines  # the tokens' ids (4 bytes a token) are not trained on: 3 MB of the tweets' peak
        state.autotune = record if record is not None else state.autotune
        if saved is None:
            self._initial_rows(state, encoded)
        self._train(state, encoded, callback, checkpoint, keep_on_error=False)
        return self

    def train(
        self,
        data: Any,
        labels: Sequence[Any] | None = None,
        *,
        epochs: int,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        errors: Literal["strict", "replace"] = "strict",
    ) -> FastTextClassifier:
        """Train ``epochs`` more epochs on labelled lines with the current words and labels
        (others are unknown words, or skipped labels); the learning rate runs from ``lr``
        to ``min_lr`` over this call. Returns ``self``."""
        state = self._require_fitted("train(...)")
        require_dense(state, "train(...)")
        check_int("epochs", epochs, 1)
        encoded = self._encoder(state).encode(self._lines(data, labels, errors))
        state.schedule.start("train", epochs, None)
        self._train(state, encoded, callback, checkpoint, keep_on_error=True)
        return self

    def _initial_rows(self, state: ClassifierState, encoded: EncodedLines) -> None:
        """``W_in``'s first rows (:func:`~.training.initial_input_rows`), pretrained rows over
        the words' when ``pretrained_vectors`` is given."""
        W_in = training.initial_input_rows(
            len(state.vocab),
            self.n_buckets,
            self.vector_size,
            encoded.input_ids,
            self.seed,
            workers=resolve_workers(self.workers),
        )
        if self.pretrained_vectors is not None:
            pretrained_rows(W_in, state.vocab.keys, self.pretrained_vectors, self.progress)
        state.tables["W_in"] = W_in

    def _train(
        self,
        state: ClassifierState,
        encoded: EncodedLines,
        callback: Callable[[Progress], None] | None,
        checkpoint: str | os.PathLike | None,
        *,
        keep_on_error: bool,
    ) -> None:
        """The epochs still to do in ``state``'s schedule, on the family's epoch loop."""
        require_dense(state, "training")
        state.vectors = None
        jobs = training.epoch_jobs(self, state, encoded)
        with self._learning(state, keep_on_error=keep_on_error):
            run_schedule(self, state, jobs, callback=callback, checkpoint=checkpoint)

    # -- saved state ---------------------------------------------------------------------

    def _get_state(self) -> dict[str, Any]:
        return saved_classifier(self._require_fitted("save()"))

    def _set_state(self, state: dict[str, Any]) -> None:
        self._adopt(self._fitted_from_state(state))

    def _fitted_from_state(self, state: dict[str, Any]) -> ClassifierState:
        return classifier_from_saved(self, state)
