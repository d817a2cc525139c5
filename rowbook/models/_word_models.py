"""What the word-vector models (Word2Vec, GloVe, FastText) share beyond threads and progress.

A word-vector model's learned state is a dict: ``vocab`` (a
:class:`~rowbook.data.corpus.CountedVocab`), its ``tables``, the ``history`` of
:class:`~rowbook.models._fitting.Progress` records, and the ``schedule`` of the training
call in progress or last finished::

    {"by": "fit" | "train" | "build_vocab", "epochs": E, "done": k, "trained": n, ...}

``done`` of ``epochs`` epochs of that call are trained, ``trained`` epochs in the model's
whole life (what seeds each epoch's random draws). A checkpoint is the model saved after
every epoch, so ``fit(..., resume=path)`` picks the schedule up where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

import numpy as np

from rowbook.checks import ParameterError
from rowbook.data.corpus import CountedVocab
from rowbook.models._fitting import Progress, ProgressReporter

if TYPE_CHECKING:
    from rowbook.models.base import Model

__all__ = [
    "check_tables",
    "check_vocab",
    "grow_vocab",
    "history_from_state",
    "history_state",
    "resume_state",
    "run_epochs",
    "run_training",
    "schedule_from_state",
    "vocab_from_state",
    "vocab_state",
]


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
        raise ValueError(
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


def resume_state(model: Model, path: Any, vocab: CountedVocab, run_only: tuple[str, ...]) -> dict:
    """The learned state saved at ``path``, checked to continue ``model.fit`` on ``vocab``.

    The file must hold a model of the same class with the same parameters (except the
    ``run_only`` ones, such as ``workers``), made by ``fit`` on a corpus with the same
    vocabulary and counts.
    """
    saved = type(model).load(path)
    mine, theirs = model.get_params(), saved.get_params()
    diff = {k: (theirs[k], v) for k, v in mine.items() if k not in run_only and theirs[k] != v}
    if diff:
        raise ValueError(
            f"{path} was made with other parameters (in the file, now): {diff}; resume with "
            "the parameters it was made with"
        )
    state = saved._require_fitted("resume")
    same = state["vocab"].keys == vocab.keys and np.array_equal(state["vocab"].counts, vocab.counts)
    if not same:
        raise ValueError(
            f"{path} was made on a different corpus (its vocabulary differs); resume with the "
            "corpus it was trained on"
        )
    schedule = state["schedule"]
    if schedule["by"] != "fit" or schedule["epochs"] != model.epochs:
        raise ValueError(
            f"{path} was saved by {schedule['by']}(epochs={schedule['epochs']}), not by "
            f"fit(epochs={model.epochs}); load it with {type(model).__name__}.load(path) and "
            "call train(...) to keep training it"
        )
    return state


def run_training(
    model: Model, state: dict[str, Any], train: Callable[[], None], *, keep_on_error: bool
) -> None:
    """Make ``state`` the learned state of ``model`` (so checkpoints save it), then ``train()``.

    If training stops early the model keeps ``state`` when ``keep_on_error`` (more training
    of a fitted model, updated in place), else gets back what it had: a ``fit`` that did not
    finish leaves no learned state.
    """
    previous, model._fitted = model._fitted, state
    state["vectors"] = None
    try:
        train()
    except BaseException:
        if not keep_on_error:
            model._fitted = previous
        raise


def run_epochs(
    schedule: dict[str, int],
    history: list[Progress],
    reporter: ProgressReporter,
    run_epoch: Callable[[int, int], None],
    save: Callable[[], None] | None,
    *,
    loss_known: bool = True,
) -> None:
    """The epochs still to do in ``schedule`` (``done`` of ``epochs``), one after the other.

    ``run_epoch(epoch, trained)`` trains epoch ``epoch`` of this schedule, the
    ``trained``-th of the model's life (what seeds its random draws), reporting its jobs
    to ``reporter``. After each epoch its :class:`Progress` joins ``history``, the
    schedule advances, ``save()`` writes the checkpoint, and then the callback runs.
    """
    try:
        while schedule["done"] < schedule["epochs"]:
            reporter.start_epoch()
            run_epoch(schedule["done"], schedule["trained"])
            progress = reporter.end_epoch(schedule["done"], loss_known=loss_known)
            history.append(progress)
            schedule["done"] += 1
            schedule["trained"] += 1
            if save is not None:
                save()
            reporter.notify(progress)
    finally:
        reporter.close()


def vocab_state(vocab: CountedVocab) -> dict[str, Any]:
    """A :class:`~rowbook.data.corpus.CountedVocab` as saved-state values (arrays and JSON)."""
    return {
        "keys": list(vocab.keys),
        "counts": vocab.counts,
        "total_words": vocab.total_words,
        "corpus_count": vocab.corpus_count,
    }


def vocab_from_state(state: dict[str, Any]) -> CountedVocab:
    """The vocabulary :func:`vocab_state` saved."""
    counts = np.asarray(state["counts"], dtype=np.int64)
    if len(counts) != len(state["keys"]):
        raise ValueError(f"saved vocabulary has {len(state['keys'])} keys but {len(counts)} counts")
    return CountedVocab(
        tuple(state["keys"]), counts, int(state["total_words"]), int(state["corpus_count"])
    )


def history_state(history: list[Progress]) -> list[dict[str, Any]]:
    return [asdict(p) for p in history]


def history_from_state(state: list[dict[str, Any]]) -> list[Progress]:
    return [Progress(**p) for p in state]


def schedule_from_state(schedule: Any, *, total_words: bool = False) -> dict[str, Any]:
    """The training schedule a saved model holds, checked: its counters drive the epoch loop,
    so a damaged file must not make it run backwards or for ever. ``total_words``: the
    schedule must also hold ``total_words`` (Word2Vec's learning-rate schedule reads it).

    >>> schedule_from_state({"by": "fit", "epochs": 5, "done": -9, "trained": 0})
    Traceback (most recent call last):
    ...
    ValueError: saved schedule must be {"by": "fit" | "train" | "build_vocab", "epochs", "done", "trained": integers >= 0 with done <= epochs, "total_words": an integer or null}, got {'by': 'fit', 'epochs': 5, 'done': -9, 'trained': 0}; the file is damaged
    """
    counts = ("epochs", "done", "trained")

    def count(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool) and x >= 0

    ok = isinstance(schedule, dict) and schedule.get("by") in ("fit", "train", "build_vocab")
    ok = (
        ok
        and all(count(schedule.get(k)) for k in counts)
        and schedule["done"] <= schedule["epochs"]
    )
    ok = ok and (not total_words or "total_words" in schedule)
    ok = ok and (schedule.get("total_words") is None or count(schedule["total_words"]))
    if not ok:
        raise ValueError(
            'saved schedule must be {"by": "fit" | "train" | "build_vocab", "epochs", "done", '
            '"trained": integers >= 0 with done <= epochs, "total_words": an integer or null}, '
            f"got {str(schedule)[:200]}; the file is damaged"
        )
    return dict(schedule)


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
