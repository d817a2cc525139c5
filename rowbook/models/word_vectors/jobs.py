"""How the word-vector family trains: jobs on Hogwild threads, and their progress.

Training is split into *jobs* (about 10,000 corpus words each, as in gensim). Worker
threads take jobs in order from a shared counter and run a numba kernel on each with the
GIL released, all writing into the same tables without locks (Hogwild: Recht et al.
2011, the scheme of word2vec.c, gensim and glove.c). The calling thread collects the
finished jobs' results every tenth of a second, without being woken per job, and alone
updates the progress bar and calls the user's callback, so a callback that raises stops
training cleanly after the jobs in flight.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from rowbook._progress import ProgressBar
from rowbook._threads import resolve_workers
from rowbook.models.word_vectors.state import Progress

__all__ = [
    "EpochJobs",
    "ProgressReporter",
    "run_jobs",
    "run_schedule",
]


@dataclass(frozen=True)
class EpochJobs:
    """One epoch of a word-vector model's training, cut into jobs (what its kernel runs).

    ``run(j, lr, trained, stats)`` trains job ``j`` at learning rate ``lr`` in the
    ``trained``-th epoch of the model's life (what seeds its random draws), recording
    per-row telemetry into ``stats`` unless it is None
    (:mod:`~rowbook.models.word_vectors.telemetry`), and returns its loss;
    ``lrs(epoch)`` is every job's learning rate in epoch ``epoch`` of the schedule;
    ``sizes[j]`` is the units job ``j`` covers (corpus words, or GloVe's co-occurrence
    records), ``total`` their sum per epoch. ``loss_known`` says whether ``run`` computes a
    loss, ``mean_loss`` whether progress shows it per unit (see :class:`ProgressReporter`).
    """

    sizes: np.ndarray  # (J,)
    total: int
    run: Callable[[int, float, int, Any], float]
    lrs: Callable[[int], np.ndarray]
    unit: str = "word"
    loss_known: bool = True
    mean_loss: bool = False


def run_jobs(
    n_jobs: int,
    workers: int,
    job: Callable[[int], Any],
    report: Callable[[int, Any], None],
    *,
    poll_seconds: float = 0.1,
) -> None:
    """Run ``job(j)`` for every ``j < n_jobs`` on ``workers`` threads; ``report(j, result)``
    is called in this thread for every finished job (in job order when ``workers == 1``).

    The workers never wait for this thread: they take the next job number and append
    ``(j, result)`` to a list, and this thread reads the new entries every
    ``poll_seconds``. So it is not woken (and does not take a core from a worker) per job,
    which matters when the machine is busy or the threads are many. A job that raises stops
    the others after their current job and the error is raised here; so does an error in
    ``report`` (or Ctrl-C), once the jobs in flight are done.
    """
    if workers == 1:
        for j in range(n_jobs):
            report(j, job(j))
        return
    done: list[tuple[int, Any]] = []  # appended by the workers (atomic under the GIL)
    errors: list[BaseException] = []
    counter, stop, finished, lock = (
        itertools.count(),
        threading.Event(),
        threading.Event(),
        threading.Lock(),
    )
    alive = [workers]

    def worker() -> None:
        try:
            while not stop.is_set():
                j = next(counter)  # atomic under the GIL
                if j >= n_jobs:
                    break
                done.append((j, job(j)))
        except BaseException as err:  # handed to the calling thread
            errors.append(err)
            stop.set()
        finally:
            with lock:
                alive[0] -= 1
                if alive[0] == 0:
                    finished.set()

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    reported = 0
    try:
        while not finished.wait(poll_seconds):
            reported = _report_new(done, reported, report)
        _report_new(done, reported, report)
        if errors:
            raise errors[0]
    finally:
        stop.set()
        for t in threads:
            t.join()


def _report_new(
    done: list[tuple[int, Any]], reported: int, report: Callable[[int, Any], None]
) -> int:
    """``report`` the entries of ``done`` from ``reported`` on; returns how many are reported."""
    end = len(done)
    for j, result in done[reported:end]:
        report(j, result)
    return end


class ProgressReporter:
    """Progress of a word-vector trainer: a :class:`~rowbook._progress.ProgressBar` over
    ``epochs * total_words`` units (when ``show``), one :class:`Progress` per epoch, and the
    epoch callback.

    ``unit`` names what is counted (``"word"`` for word2vec, ``"record"`` for GloVe's
    co-occurrence records); ``show_loss=False`` keeps a loss that is not computed off the bar
    and out of the epoch lines. With ``mean_loss=True`` the loss shown on the bar, in the
    epoch line and in :attr:`Progress.loss` is one quantity: the summed loss of the epoch so
    far divided by the units done so far (GloVe's mean weighted squared error per record);
    otherwise it is the epoch's summed loss.
    """

    def __init__(
        self,
        epochs: int,
        total_words: int,
        *,
        show: bool,
        callback: Callable | None,
        start_epoch: int = 0,
        unit: str = "word",
        show_loss: bool = True,
        mean_loss: bool = False,
    ) -> None:
        self.epochs, self.total_words, self.callback = epochs, total_words, callback
        self.show_loss, self.mean_loss, self.unit = show_loss, mean_loss, unit
        self.bar = ProgressBar(
            epochs * total_words, unit=unit, initial=start_epoch * total_words, show=show
        )

    def start_epoch(self) -> None:
        self.words, self.loss, self.lr, self.t0 = 0, 0.0, math.nan, time.perf_counter()

    def _shown_loss(self) -> float:
        if not self.show_loss:
            return math.nan
        return self.loss / max(self.words, 1) if self.mean_loss else self.loss

    def job_done(self, words: int, loss: float, lr: float) -> None:
        self.words += words
        self.loss += float(loss)
        self.lr = float(lr)
        self.bar.update(words, {"loss": self._shown_loss(), "lr": self.lr})

    def end_epoch(self, epoch: int, *, loss_known: bool = True) -> Progress:
        seconds = time.perf_counter() - self.t0
        loss = self._shown_loss() if loss_known else math.nan
        progress = Progress(
            epoch + 1,
            self.epochs,
            self.words,
            self.total_words,
            self.words / max(seconds, 1e-12),
            loss,
            self.lr,
            seconds,
        )
        rate = f"{progress.words_per_sec:,.0f} {self.unit}s/s"
        self.bar.epoch_done(
            epoch + 1, self.epochs, {"loss": loss, "lr": self.lr, "speed": rate}, seconds
        )
        return progress

    def notify(self, progress: Progress) -> None:
        """Hand ``progress`` to the callback (after the epoch's checkpoint is on disk)."""
        if self.callback is not None:
            self.callback(progress)

    def close(self) -> None:
        self.bar.close()


def run_schedule(
    model: Any,
    state: Any,
    jobs: EpochJobs,
    *,
    callback: Callable | None,
    checkpoint: str | os.PathLike[str] | None,
    telemetry: tuple[Callable[[int], Any], Callable[[], None]] | None = None,
) -> None:
    """The epochs still to do in the schedule of ``model``'s learned ``state`` (``done``
    of ``epochs``), one after the other: the loop of every model of the family and of the
    fastText classifier.

    Each epoch runs every job of ``jobs`` on the model's ``workers`` threads, the
    ``trained``-th of the model's life seeding their draws (and ``telemetry =
    (stats_for, end_epoch)`` giving job ``j`` its ``stats``); then its :class:`Progress`
    joins ``state.history``, the schedule advances, ``model.save(checkpoint)`` writes the
    checkpoint (with one given), and then ``callback`` runs. ``model.progress`` shows a
    progress bar.
    """
    schedule, history = state.schedule, state.history
    workers = resolve_workers(model.workers)
    stats_for, end_epoch = telemetry if telemetry is not None else (lambda j: None, None)
    reporter = ProgressReporter(
        schedule.epochs,
        jobs.total,
        show=model.progress,
        callback=callback,
        start_epoch=schedule.done,
        unit=jobs.unit,
        show_loss=jobs.loss_known,
        mean_loss=jobs.mean_loss,
    )
    try:
        while schedule.done < schedule.epochs:
            reporter.start_epoch()
            _run_epoch(jobs, reporter, workers, schedule.done, schedule.trained, stats_for)
            if end_epoch is not None:
                end_epoch()
            progress = reporter.end_epoch(schedule.done, loss_known=jobs.loss_known)
            history.append(progress)
            schedule.done += 1
            schedule.trained += 1
            if checkpoint is not None:
                model.save(checkpoint)
            reporter.notify(progress)
    finally:
        reporter.close()


def _run_epoch(
    jobs: EpochJobs,
    reporter: ProgressReporter,
    workers: int,
    epoch: int,
    trained: int,
    stats_for: Callable[[int], Any],
) -> None:
    """Epoch ``epoch`` of the schedule, the ``trained``-th of the model's life."""
    lrs = jobs.lrs(epoch)  # (J,)
    run_jobs(
        len(jobs.sizes),
        workers,
        lambda j: jobs.run(j, lrs[j], trained, stats_for(j)),
        lambda j, loss: reporter.job_done(int(jobs.sizes[j]), loss, lrs[j]),
    )
