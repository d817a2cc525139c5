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
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Progress",
    "ProgressReporter",
    "resolve_workers",
    "run_jobs",
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


def run_jobs(n_jobs: int, workers: int, job: Callable[[int], Any], report: Callable[[int, Any], None]) -> None:
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
        self.words, self.loss, self.alpha, self.t0 = 0, 0.0, math.nan, time.perf_counter()

    def job_done(self, words: int, loss: float, alpha: float) -> None:
        self.words += words
        self.loss += loss
        self.alpha = alpha
        if self.bar is not None:
            self.bar.update(words)
            shown = {"loss": f"{self.loss:.4g}"} if self.show_loss else {}
            self.bar.set_postfix(shown | {"lr": f"{alpha:.5f}"}, refresh=False)

    def end_epoch(self, epoch: int, *, loss_known: bool = True) -> Progress:
        seconds = time.perf_counter() - self.t0
        progress = Progress(epoch + 1, self.epochs, self.words, self.total_words,
                            self.words / max(seconds, 1e-12), self.loss if loss_known else math.nan,
                            self.alpha, seconds)  # fmt: skip
        return progress

    def notify(self, progress: Progress) -> None:
        """Hand ``progress`` to the callback (after the epoch's checkpoint is on disk)."""
        if self.callback is not None:
            self.callback(progress)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
