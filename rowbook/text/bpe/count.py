"""BPE's Python work on every core: batches of texts on a fork pool, results in order.

Counting the pre-tokenized words (the first pass of training) and encoding texts
(:meth:`ByteLevelBPE.encode_batch <rowbook.text.bpe.model.ByteLevelBPE.encode_batch>`) are
a regex pre-split and dictionary work per text, Python that holds the GIL, so they scale
with processes, not threads. The texts are cut into batches of about ``size`` characters
(:func:`text_batches`); the calling process and ``workers - 1`` forked ones run a job on
each batch, taking the next batch when free (:func:`map_in_order`), and the results come
back *in batch order*.

For counting, the parent adds the counts in that order. ``Counter.update`` keeps a key
where it first appeared, so the result is the serial count, same counts and same order,
and training on it gives the same merges (tested against the serial count and against
``tokenizers``).

The pool forks the calling process (the ``fork`` start method): the job, a bound method
or a closure over a fitted model, is inherited by the workers and never pickled, and the
workers need no import of the caller's ``__main__``, which a notebook or ``python -``
does not have. Only the batches of texts and the results cross between processes. A
worker runs only the regex, dictionaries and numba kernels, never a lock another thread of
the parent may hold. The pool starts only when there is more than one batch, so a small
job runs in the calling process; where ``fork`` does not exist (Windows) every job runs in
one process.
"""

from __future__ import annotations

import collections
import functools
import itertools
import multiprocessing
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from multiprocessing.pool import AsyncResult
from typing import Any, TypeVar

from rowbook.text.bpe.pretokenize import PreTokenizer

__all__ = ["BATCH_CHARS", "count_words_parallel", "map_in_order", "text_batches"]

BATCH_CHARS = 1 << 21  # 2M characters of text per counting task: large enough to amortise the IPC

_Task, _Result = TypeVar("_Task"), TypeVar("_Result")
_job: Callable[[Any], Any] | None = None  # the job of a worker process, set when it starts


def text_batches(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    """Consecutive batches of ``texts``, each closed once it holds ``size`` characters.

    Examples
    --------
    >>> list(text_batches(["ab", "c", "def", "g"], 3))
    [['ab', 'c'], ['def'], ['g']]
    """
    batch, chars = [], 0
    for text in texts:
        batch.append(text)
        chars += len(text) if isinstance(text, str) else 0
        if chars >= size:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


def _install(job: Callable[[Any], Any]) -> None:
    global _job
    _job = job


def _run(task: Any) -> Any:
    return _job(task)


def map_in_order(
    job: Callable[[_Task], _Result],
    tasks: Iterable[_Task],
    workers: int,
    *,
    here: Callable[[_Task], _Result] | None = None,
) -> Iterator[_Result]:
    """``job(task)`` for each task, in task order, on ``workers`` processes: this one and
    ``workers - 1`` forked ones.

    Tasks are read one at a time. Each goes to the pool while it has fewer than two tasks
    per process to do, else this process runs it, so all processes stay busy to the last
    task whatever their speed, and the caller's work on the results (between two ``next``)
    is shared out too. Everything runs here when there are fewer than two tasks,
    ``workers`` is 1, this process is daemonic (may not have children) or the platform
    cannot fork. ``job`` is inherited by the workers, never pickled; tasks and results
    are. ``here``, if given, replaces ``job`` for the tasks run in this process (a result
    that need not be packed for a pipe, say).

    Examples
    --------
    >>> list(map_in_order(len, [["a"], ["b", "c"]], workers=1))
    [1, 2]
    """
    tasks = iter(tasks)
    head = list(itertools.islice(tasks, 2))
    tasks = itertools.chain(head, tasks)
    processes = min(workers, os.cpu_count() or 1) - 1
    here = here or job
    if multiprocessing.current_process().daemon:  # a daemonic process (a data loader's) cannot fork
        processes = 0
    if len(head) < 2 or processes < 1 or "fork" not in multiprocessing.get_all_start_methods():
        yield from map(here, tasks)
        return
    context = multiprocessing.get_context("fork")
    with context.Pool(processes, initializer=_install, initargs=(job,)) as pool:
        slots: collections.deque = collections.deque()  # AsyncResult, or (result,) made here
        for task in tasks:
            busy = sum(isinstance(s, AsyncResult) and not s.ready() for s in slots)
            slots.append(pool.apply_async(_run, (task,)) if busy < 2 * processes else (here(task),))
            while slots and (not isinstance(slots[0], AsyncResult) or slots[0].ready()):
                yield _value(slots.popleft())
        while slots:
            yield _value(slots.popleft())


def _value(slot: AsyncResult | tuple) -> Any:
    return slot.get() if isinstance(slot, AsyncResult) else slot[0]


def _count_batch(pretokenizer: PreTokenizer, specials: list[str], texts: list[str]) -> Counter[str]:
    return pretokenizer.count_words(texts, specials)


def count_words_parallel(
    pretokenizer: PreTokenizer, texts: Iterable[str], specials: Sequence[str], workers: int
) -> Counter[str]:
    """The serial ``pretokenizer.count_words(texts, specials)``, counted by ``workers`` processes.

    ``pretokenizer`` is inherited by the forked workers with the job, never pickled.
    """
    specials = list(specials)
    counts: Counter[str] = Counter()
    count = functools.partial(_count_batch, pretokenizer, specials)
    for part in map_in_order(count, text_batches(texts, BATCH_CHARS), workers):
        counts.update(part)  # in batch order: first sightings kept
    return counts
