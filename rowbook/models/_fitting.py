"""What the word-vector trainers share: progress and Hogwild threads.

Training is split into *jobs* (about 10,000 corpus words each, as in gensim). Worker
threads take jobs in order from a shared counter and run a numba kernel on each with the
GIL released, all writing into the same tables without locks (Hogwild: Recht et al.
2011, the scheme of word2vec.c, gensim and glove.c). Results flow back to the calling
thread, which alone updates the progress bar and calls the user's callback, so a callback
that raises stops training cleanly after the jobs in flight.
"""

from __future__ import annotations

import itertools
import math
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from rowbook.data.corpus import CountedVocab
    from rowbook.models.base import Model

__all__ = [
    "Progress",
    "ProgressReporter",
    "check_vocab",
    "history_from_state",
    "history_state",
    "resolve_workers",
    "resume_state",
    "run_epochs",
    "run_jobs",
    "run_training",
    "vocab_from_state",
    "vocab_state",
]


@dataclass(frozen=True)
class Progress:
    """A snapshot passed to ``fit(..., callback=...)`` after every epoch (and its checkpoint).

    ``words`` counts corpus tokens (out-of-vocabulary ones included) processed in this
    epoch, ``words_per_sec`` is measured over the epoch, ``loss`` is the summed training
    loss of the epoch (``nan`` when the trainer does not compute it), ``learning_rate``
    the last one used.
    """

    epoch: int
    epochs: int
    words: int
    total_words: int
    words_per_sec: float
    loss: float
    learning_rate: float
    seconds: float


def resolve_workers(workers: int | None) -> int:
    """``workers`` itself, or the number of CPUs for ``None``."""
    return max(1, os.cpu_count() or 1) if workers is None else workers


def run_jobs(
    n_jobs: int, workers: int, job: Callable[[int], Any], report: Callable[[int, Any], None]
) -> None:
    """Run ``job(j)`` for every ``j < n_jobs`` on ``workers`` threads; ``report(j, result)``
    is called in this thread as results arrive (in job order when ``workers == 1``).
    """
    if workers == 1:
        for j in range(n_jobs):
            report(j, job(j))
        return
    results: queue.Queue = queue.Queue()
    counter, stop = itertools.count(), threading.Event()

    def worker() -> None:
        try:
            while not stop.is_set():
                j = next(counter)  # atomic under the GIL
                if j >= n_jobs:
                    break
                results.put((j, job(j), None))
        except BaseException as err:  # handed to the calling thread
            results.put((None, None, err))
        finally:
            results.put(None)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    try:
        finished = 0
        while finished < workers:
            item = results.get()
            if item is None:
                finished += 1
            elif item[2] is not None:
                raise item[2]
            else:
                report(item[0], item[1])
    finally:
        stop.set()
        for t in threads:
            t.join()


class ProgressReporter:
    """A tqdm bar over ``epochs * total_words`` units (when ``show``) and the epoch callback.

    ``unit`` names what is counted (``"word"`` for word2vec, ``"record"`` for GloVe's
    co-occurrence records); ``show_loss=False`` keeps a loss that is not computed off the bar.
    """

    def __init__(self, epochs: int, total_words: int, *, show: bool, callback: Callable | None,
                 start_epoch: int = 0, unit: str = "word", show_loss: bool = True) -> None:  # fmt: skip
        self.epochs, self.total_words, self.callback = epochs, total_words, callback
        self.show_loss = show_loss
        self.bar = None
        if show:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=epochs * total_words, initial=start_epoch * total_words,
                            unit=unit, unit_scale=True, dynamic_ncols=True)  # fmt: skip

    def start_epoch(self) -> None:
        self.words, self.loss, self.lr, self.t0 = 0, 0.0, math.nan, time.perf_counter()

    def job_done(self, words: int, loss: float, lr: float) -> None:
        self.words += words
        self.loss += loss
        self.lr = float(lr)
        if self.bar is not None:
            self.bar.update(words)
            shown = {"loss": f"{self.loss:.4g}"} if self.show_loss else {}
            self.bar.set_postfix(shown | {"lr": f"{lr:.5f}"}, refresh=False)

    def end_epoch(self, epoch: int, *, loss_known: bool = True) -> Progress:
        seconds = time.perf_counter() - self.t0
        progress = Progress(epoch + 1, self.epochs, self.words, self.total_words,
                            self.words / max(seconds, 1e-12), self.loss if loss_known else math.nan,
                            self.lr, seconds)  # fmt: skip
        return progress

    def notify(self, progress: Progress) -> None:
        """Hand ``progress`` to the callback (after the epoch's checkpoint is on disk)."""
        if self.callback is not None:
            self.callback(progress)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def check_vocab(vocab: CountedVocab, min_count: int) -> None:
    """Refuse an empty corpus, or one where no word reaches ``min_count``, saying which."""
    if vocab.total_words == 0:
        raise ValueError(
            f"the corpus is empty: {vocab.corpus_count} sentences and no tokens were read; "
            "pass token lists or a non-empty text file"
        )
    if len(vocab) == 0:
        raise ValueError(
            f"no word occurs at least min_count={min_count} times in the corpus "
            f"({vocab.total_words} tokens); lower min_count or use a larger corpus"
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


def run_training(model: Model, state: dict[str, Any], train: Callable[[], None], *,
                 keep_on_error: bool) -> None:  # fmt: skip
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


def run_epochs(schedule: dict[str, int], history: list[Progress], reporter: ProgressReporter,
               run_epoch: Callable[[int, int], None], save: Callable[[], None] | None, *,
               loss_known: bool = True) -> None:  # fmt: skip
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
    return {"keys": list(vocab.keys), "counts": vocab.counts, "total_words": vocab.total_words,
            "corpus_count": vocab.corpus_count}  # fmt: skip


def vocab_from_state(state: dict[str, Any]) -> CountedVocab:
    """The vocabulary :func:`vocab_state` saved."""
    from rowbook.data.corpus import CountedVocab

    counts = np.asarray(state["counts"], dtype=np.int64)
    if len(counts) != len(state["keys"]):
        raise ValueError(f"saved vocabulary has {len(state['keys'])} keys but {len(counts)} counts")
    return CountedVocab(tuple(state["keys"]), counts, int(state["total_words"]),
                        int(state["corpus_count"]))  # fmt: skip


def history_state(history: list[Progress]) -> list[dict[str, Any]]:
    return [asdict(p) for p in history]


def history_from_state(state: list[dict[str, Any]]) -> list[Progress]:
    return [Progress(**p) for p in state]
