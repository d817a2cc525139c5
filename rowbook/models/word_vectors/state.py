"""The word-vector family's learned state, typed, as saved values, and the checks on reading it back.

A fitted model of the family holds one :class:`TrainedState` (GloVe a
:class:`GloVeState`, adding AdaGrad's sums; fastText's classifier its own subclass): the
vocabulary, the tables, the history of epochs, the :class:`Schedule` of the training call
in progress or last finished, the per-row telemetry and the cached query view. What is saved
of it (``vocab``, ``tables``, ``history``, ``schedule``) is plain arrays and JSON values, in
the shape rowbook 0.1 saved; every field read back is checked, because the kernels index the
tables unchecked and the schedule's counters drive the epoch loop. The vocabulary's growth
(``build_vocab(update=True)``) and the refusal of an empty one live here too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal

import numpy as np

from rowbook.checks import EmptyInputError, ParameterError
from rowbook.data.counted_vocab import CountedVocab
from rowbook.vectors import Vectors

__all__ = [
    "GloVeState",
    "LearnedViews",
    "Progress",
    "Schedule",
    "TrainedState",
    "check_resumed",
    "check_tables",
    "check_vocab",
    "fitted_state",
    "grow_vocab",
    "saved_state",
    "schedule_from_state",
    "subword_vectors",
    "table_view",
]

Tables = dict[str, np.ndarray]


@dataclass(frozen=True)
class Progress:
    """A snapshot passed to ``fit(..., callback=...)`` after every epoch (and its checkpoint).

    ``words`` counts corpus tokens (out-of-vocabulary ones included) processed in this
    epoch, ``words_per_sec`` is measured over the epoch, ``loss`` is the summed training
    loss of the epoch (``nan`` when the trainer does not compute it), ``learning_rate``
    the last one used. Its ``repr`` leaves out a loss that was not computed.

    >>> Progress(1, 5, 1000, 1000, 2500.0, float("nan"), 0.025, 0.4)
    Progress(epoch=1/5, words=1,000/1,000, words_per_sec=2,500, learning_rate=0.025, seconds=0.400)
    """

    epoch: int
    epochs: int
    words: int
    total_words: int
    words_per_sec: float
    loss: float
    learning_rate: float
    seconds: float

    def __post_init__(self) -> None:  # plain Python numbers, so the record prints cleanly
        for name in ("epoch", "epochs", "words", "total_words"):
            object.__setattr__(self, name, int(getattr(self, name)))
        for name in ("words_per_sec", "loss", "learning_rate", "seconds"):
            object.__setattr__(self, name, float(getattr(self, name)))

    def __repr__(self) -> str:
        loss = "" if math.isnan(self.loss) else f", loss={self.loss:.6g}"
        return (
            f"Progress(epoch={self.epoch}/{self.epochs}, words={self.words:,}/"
            f"{self.total_words:,}, words_per_sec={self.words_per_sec:,.0f}{loss}, "
            f"learning_rate={self.learning_rate:.6g}, seconds={self.seconds:.3f})"
        )


@dataclass
class Schedule:
    """The training call in progress or last finished: ``done`` of its ``epochs`` epochs are
    trained, ``trained`` epochs in the model's whole life (what seeds each epoch's random
    draws), its learning rate measured in ``total_words`` words an epoch (``None``: the
    corpus's own)."""

    by: Literal["fit", "train", "build_vocab"]
    epochs: int
    done: int = 0
    trained: int = 0
    total_words: int | None = None

    def start(self, by: Literal["fit", "train"], epochs: int, total_words: int | None) -> None:
        """A new call of ``epochs`` epochs; ``trained`` goes on counting."""
        self.by, self.epochs, self.done, self.total_words = by, epochs, 0, total_words


@dataclass
class TrainedState:
    """What a fitted model of the family has learned, and where its training stands.

    ``vocab`` the words with their counts, ``tables`` the model's tables by name (row ``i``
    the word ``vocab.keys[i]``), ``schedule`` and ``history`` (one
    :class:`~rowbook.models.word_vectors.state.Progress` an epoch, over the model's life),
    ``row_stats`` the per-row telemetry (:mod:`~rowbook.models.word_vectors.telemetry`;
    ``None``: not recorded) and ``vectors`` the query view, built when first asked for.
    """

    vocab: CountedVocab
    tables: Tables
    schedule: Schedule
    history: list[Progress] = field(default_factory=list)
    row_stats: Any = None
    vectors: Any = None


@dataclass
class GloVeState(TrainedState):
    """GloVe's state: the family's, with AdaGrad's squared-gradient sums (one array per
    table, starting at 1) and the number of co-occurrence records of the last call."""

    sums: Tables = field(default_factory=dict)
    n_records: int = 0


def check_resumed(
    state: TrainedState, vocab: CountedVocab, epochs: int, path: Any, name: str
) -> None:
    """Refuse to continue ``fit`` on ``vocab`` from the ``state`` saved at ``path`` unless it
    was made by ``fit`` with these ``epochs`` on a corpus with the same vocabulary and counts."""
    theirs = state.vocab
    if theirs.keys != vocab.keys or not np.array_equal(theirs.counts, vocab.counts):
        raise ValueError(
            f"{path} was made on a different corpus (its vocabulary differs); resume with the "
            "corpus it was trained on"
        )
    schedule = state.schedule
    if schedule.by != "fit" or schedule.epochs != epochs:
        raise ValueError(
            f"{path} was saved by {schedule.by}(epochs={schedule.epochs}), not by "
            f"fit(epochs={epochs}); load it with {name}.load(path) and call train(...) to keep "
            "training it"
        )


def saved_state(fitted: TrainedState) -> dict[str, Any]:
    """The common learned state of a fitted model as saved values (rowbook 0.1's shape)."""
    vocab = fitted.vocab
    return {
        "vocab": {
            "keys": list(vocab.keys),
            "counts": vocab.counts,
            "total_words": vocab.total_words,
            "corpus_count": vocab.corpus_count,
        },
        "tables": dict(fitted.tables),
        "history": [asdict(p) for p in fitted.history],
        "schedule": asdict(fitted.schedule),
    }


def fitted_state(
    state: dict[str, Any], dtype: type, shapes: Callable[[int], dict[str, tuple[int, ...]]]
) -> dict[str, Any]:
    """The fields of a :class:`TrainedState` from what :func:`saved_state` saved, checked:
    tables of ``dtype`` with the ``shapes(V)`` of a vocabulary of ``V`` words, a well-formed
    history and schedule."""
    saved = state["vocab"]
    counts = np.asarray(saved["counts"], dtype=np.int64)
    if len(counts) != len(saved["keys"]):
        raise ValueError(f"saved vocabulary has {len(saved['keys'])} keys but {len(counts)} counts")
    vocab = CountedVocab(
        tuple(saved["keys"]), counts, int(saved["total_words"]), int(saved["corpus_count"])
    )
    tables = {
        name: np.asarray(table, dtype=dtype, order="C") for name, table in state["tables"].items()
    }
    check_tables(tables, shapes(len(vocab)))
    return {
        "vocab": vocab,
        "tables": tables,
        "history": [Progress(**p) for p in state["history"]],
        "schedule": schedule_from_state(state["schedule"]),
    }


def check_vocab(vocab: CountedVocab, min_count: int) -> None:
    """Refuse an empty corpus, or one where no word reaches ``min_count`` (a
    :class:`~rowbook.checks.ParameterError` of ``min_count``, so a front end names its flag).

    >>> from rowbook.data.corpus import read_corpus
    >>> check_vocab(read_corpus([["a", "b", "a"]], min_count=3)[0], 3)
    Traceback (most recent call last):
    ...
    rowbook.checks.ParameterError: min_count must be at most the count of the most frequent word, got 3; no word of the 3 tokens read occurs that often: lower it or use a larger corpus
    """
    if vocab.total_words == 0:
        raise EmptyInputError(
            f"the corpus is empty: {vocab.corpus_count} sentences and no tokens were read; "
            "pass token lists or a non-empty text file"
        )
    if len(vocab) == 0:
        raise ParameterError(
            "min_count",
            min_count,
            "at most the count of the most frequent word",
            fix=f"no word of the {vocab.total_words} tokens read occurs that often: "
            "lower it or use a larger corpus",
        )


def grow_vocab(old: CountedVocab, seen: CountedVocab, min_count: int) -> CountedVocab:
    """``old`` with the counts of ``seen`` added, and the words of ``seen`` it lacks that
    occur at least ``min_count`` times there appended (gensim's ``prepare_vocab(update=True)``).

    >>> from rowbook.data.corpus import read_corpus
    >>> old, _ = read_corpus([["a", "b", "a"]])
    >>> seen, _ = read_corpus([["c", "a", "c", "d"]])
    >>> new = grow_vocab(old, seen, min_count=2)
    >>> new.keys, new.counts.tolist(), new.total_words
    (('a', 'b', 'c'), [3, 1, 2], 7)
    """
    index = {key: i for i, key in enumerate(old.keys)}
    counts = old.counts.copy()
    new_keys, new_counts = [], []
    for key, count in zip(seen.keys, seen.counts.tolist(), strict=True):
        if key in index:
            counts[index[key]] += count
        elif count >= min_count:
            new_keys.append(key)
            new_counts.append(count)
    counts = np.concatenate([counts, np.array(new_counts, dtype=np.int64)])  # (V,)
    return CountedVocab(
        old.keys + tuple(new_keys),
        counts,
        old.total_words + seen.total_words,
        old.corpus_count + seen.corpus_count,
    )


def schedule_from_state(schedule: Any) -> Schedule:
    """The training schedule a saved model holds, checked: its counters drive the epoch loop,
    so a damaged file must not make it run backwards or for ever. A schedule saved without
    ``total_words`` (GloVe's, before it had one) has none.

    >>> schedule_from_state({"by": "fit", "epochs": 5, "done": -9, "trained": 0})
    Traceback (most recent call last):
    ...
    ValueError: saved schedule must be {"by": "fit" | "train" | "build_vocab", "epochs", "done", "trained": integers >= 0 with done <= epochs, "total_words": an integer or null}, got {'by': 'fit', 'epochs': 5, 'done': -9, 'trained': 0}; the file is damaged
    """

    def count(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    ok = isinstance(schedule, dict) and schedule.get("by") in ("fit", "train", "build_vocab")
    ok = ok and all(count(schedule.get(k)) for k in ("epochs", "done", "trained"))
    ok = ok and schedule["done"] <= schedule["epochs"]
    ok = ok and (schedule.get("total_words") is None or count(schedule["total_words"]))
    if not ok:
        raise ValueError(
            'saved schedule must be {"by": "fit" | "train" | "build_vocab", "epochs", "done", '
            '"trained": integers >= 0 with done <= epochs, "total_words": an integer or null}, '
            f"got {str(schedule)[:200]}; the file is damaged"
        )
    return Schedule(**{f.name: schedule.get(f.name) for f in fields(Schedule)})


def check_tables(tables: dict[str, np.ndarray], shapes: dict[str, tuple[int, ...]]) -> None:
    """Refuse saved tables of other names or shapes: the kernels index them unchecked.

    >>> check_tables({"W": np.zeros((2, 3))}, {"W": (2, 4)})
    Traceback (most recent call last):
    ...
    ValueError: saved tables must have the shapes {'W': (2, 4)}, got {'W': (2, 3)}; the file is damaged
    """
    found = {name: table.shape for name, table in tables.items()}
    if found != shapes:
        raise ValueError(
            f"saved tables must have the shapes {shapes}, got {found}; the file is damaged"
        )


def table_view(name: str, doc: str) -> property:
    """The read-only property ``<name>_`` of a fitted model: its learned table ``name``
    (``state.tables[name]``), or the one ``NotFittedError`` before ``fit``; ``doc`` says its
    shape and meaning.

    >>> class Model:
    ...     W_in_ = table_view("W_in", "the input rows")
    >>> Model.W_in_.__doc__
    'the input rows'
    """

    def view(model: Any) -> np.ndarray:
        return model._require_fitted(f".{name}_").tables[name]

    view.__doc__ = doc
    return property(view)


def subword_vectors(state: TrainedState, model: Any) -> Any:
    """``state``'s word vectors as a :class:`~rowbook.vectors.subword.SubwordVectors` over its
    ``W_in`` (shared, read-only): each word's vector, seen or not, the mean of its row and
    its n-grams' rows under ``model``'s ``minn``, ``maxn`` and ``n_buckets`` (fastText's
    ``getWordVector``; :class:`~rowbook.models.FastText` and the classifier)."""
    from rowbook.vectors.subword import SubwordVectors  # (nn, scipy.special: not to train)

    vocab = state.vocab
    return SubwordVectors(
        vocab.keys,
        state.tables["W_in"],
        minn=model.minn,
        maxn=model.maxn,
        bucket=model.n_buckets,
        counts=vocab.counts,
    )


class LearnedViews:
    """What a fitted model of the family shows of its :class:`TrainedState`: the words, their
    counts, the history and the word vectors (a mixin of the word-vector models and fastText's
    classifier, beside :class:`~rowbook.models.base.Model`, which gives ``_require_fitted``)."""

    _require_fitted: Callable[[str], Any]
    _make_vectors: Callable[[Any], Any]

    @property
    def vectors(self) -> Vectors:
        """The word vectors as a :class:`rowbook.Vectors` (built once, then cached); a
        fastText model's rows are each word's row averaged with its n-grams' rows, as
        fastText's ``getWordVector``."""
        state = self._require_fitted(".vectors")
        if state.vectors is None:
            state.vectors = self._make_vectors(state)
        return state.vectors

    @property
    def index_to_key_(self) -> tuple[str, ...]:
        """The words in id order (row ``i`` of the word tables is ``index_to_key_[i]``)."""
        return self._require_fitted(".index_to_key_").vocab.keys

    @property
    def counts_(self) -> np.ndarray:
        """``(V,)`` how often each word occurs in the training text (summed over
        ``build_vocab`` updates)."""
        return self._require_fitted(".counts_").vocab.counts

    @property
    def history_(self) -> list[Progress]:
        """One :class:`Progress` per epoch trained, over every ``fit`` / ``train`` call."""
        return self._require_fitted(".history_").history
