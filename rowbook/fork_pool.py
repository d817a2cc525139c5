"""Work on every core: jobs on a pool of forked processes (or threads), results in task order.

Reading a corpus (the regex or whitespace split of each line, interning its words) and
encoding text with a byte-level BPE whose pre-split is Python hold the GIL, so they scale
with processes, not threads. :func:`map_in_order` runs a job on each task in the calling
process and ``workers - 1`` forked ones, each taking the next task when free, and hands
the results back *in task order*, so a caller that adds them up in that order gets the
serial result (first sightings included).

The pool forks the calling process (the ``fork`` start method): the job, a bound method
or a closure over a fitted model, is inherited by the workers and never pickled, and the
workers need no import of the caller's ``__main__``, which a notebook or ``python -``
does not have. Only the tasks and the results cross between processes. A worker runs only
the regex, dictionaries and numba kernels, never a lock another thread of the parent may
hold. The pool starts only when there is more than one task, so a small job runs in the
calling process; where ``fork`` does not exist (Windows) every job runs in one process.
Users: :mod:`rowbook.data.scan` (the first pass over a corpus),
:mod:`rowbook.text.bpe.count` (BPE's word counts) and :mod:`rowbook.text.bpe.batch`
(``encode_batch``). A job that is compiled code releasing the GIL runs on threads instead,
with the same contract (:func:`map_in_threads`): ``encode_batch`` with GPT-2's compiled
pre-split.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import itertools
import multiprocessing
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from multiprocessing.pool import AsyncResult
from typing import Any, TypeVar

from rowbook._threads import usable_cores

__all__ = [
    "HANDOFF_SECONDS",
    "TASKS_AHEAD",
    "can_fork",
    "map_in_order",
    "map_in_threads",
    "quick_handoff",
]

TASKS_AHEAD = 3  # tasks given to each other thread ahead of the caller's need
HANDOFF_SECONDS = 5e-5  # how long a thread back from compiled code waits before it asks for the GIL

_Task, _Result = TypeVar("_Task"), TypeVar("_Result")
_job: Callable[[Any], Any] | None = None  # the job of a worker process, set when it starts


def _install(job: Callable[[Any], Any]) -> None:
    global _job
    _job = job


def _run(task: Any) -> Any:
    return _job(task)


def can_fork() -> bool:
    """Whether this process may start forked workers: the platform forks, and this process
    is not daemonic (a data loader's worker may not have children)."""
    if multiprocessing.current_process().daemon:
        return False
    return "fork" in multiprocessing.get_all_start_methods()


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
    processes = min(workers, usable_cores()) - 1
    here = here or job
    if len(head) < 2 or processes < 1 or not can_fork():
        yield from map(here, tasks)
        return
    context = multiprocessing.get_context("fork")
    pool = context.Pool(processes, initializer=_install, initargs=(job,))
    slots: collections.deque = collections.deque()  # AsyncResult, or (result,) made here
    try:
        for task in tasks:
            busy = sum(isinstance(s, AsyncResult) and not s.ready() for s in slots)
            slots.append(pool.apply_async(_run, (task,)) if busy < 2 * processes else (here(task),))
            while slots and (not isinstance(slots[0], AsyncResult) or slots[0].ready()):
                yield _value(slots.popleft())
        while slots:
            yield _value(slots.popleft())
    except (Exception, GeneratorExit):
        _settle(slots)  # a task failed, or the caller stopped early
        raise
    finally:
        pool.terminate()


def _value(slot: AsyncResult | tuple) -> Any:
    return slot.get() if isinstance(slot, AsyncResult) else slot[0]


def _settle(slots: collections.deque, timeout: float = 120.0) -> None:
    """Wait until the tasks still running in the pool have sent their results (dropped).

    ``Pool.terminate`` kills the workers where they stand: one killed while it sends a
    result holds the result queue's lock, and the pool's own shutdown then waits for that
    lock for ever (seen in CI: a worker's error, then a hang in ``terminate``). So before
    terminating after an error, the tasks in flight (at most two a worker) are let finish;
    a worker that died (its result never comes) is waited for ``timeout`` seconds at most.
    On Ctrl-C nothing is waited for: the workers got the signal too.
    """
    for slot in slots:
        if isinstance(slot, AsyncResult):
            slot.wait(timeout)


def map_in_threads(
    job: Callable[[_Task], _Result],
    tasks: Iterable[_Task],
    workers: int,
    *,
    here: Callable[[_Task], _Result] | None = None,
) -> Iterator[_Result]:
    """``job(task)`` for each task, in task order, on the calling thread and ``workers - 1``
    others (at most one per core the process may use, in all): for a job that runs compiled
    code without the GIL, where a thread costs no fork and no pipe.

    The other threads are kept :data:`TASKS_AHEAD` tasks each ahead. The calling thread
    hands on each result as soon as it is ready (its caller's work on the results, which
    holds the GIL, overlaps the threads' compiled work), and runs a task itself
    (``here``, if given, instead of ``job``: with state of its own, say) only when the
    next result is not ready: the last task no thread has started. So no core idles while
    a task waits, and no more threads run than there are cores. Meanwhile the GIL is
    handed over within :data:`HANDOFF_SECONDS` (:func:`quick_handoff`).

    Examples
    --------
    >>> list(map_in_threads(len, [["a"], ["b", "c"], ["d"]], workers=2))
    [1, 2, 1]
    """
    tasks = iter(tasks)
    head = list(itertools.islice(tasks, 2))
    tasks = itertools.chain(head, tasks)
    threads = min(workers, usable_cores()) - 1
    here = here or job
    if len(head) < 2 or threads < 1:
        yield from map(here, tasks)
        return
    pool = concurrent.futures.ThreadPoolExecutor(threads)
    slots: collections.deque = collections.deque()  # (Future, task), or (None, result made here)
    try:
        with quick_handoff():
            for task in tasks:
                slots.append((pool.submit(job, task), task))
                while _busy(slots) >= TASKS_AHEAD * threads:
                    yield from _ready(slots, here)
            while slots:
                yield from _ready(slots, here)
    finally:
        pool.shutdown(cancel_futures=True)  # after an error the running tasks finish first


def _busy(slots: collections.deque) -> int:
    return sum(future is not None and not future.done() for future, _ in slots)


def _ready(slots: collections.deque, here: Callable[[Any], Any]) -> Iterator[Any]:
    """The result at the head of ``slots`` if it is ready; if not, a task run here (the
    last no thread has started) or, when every task has started, the head waited for.

    At most one result a call: the caller's work on it holds the GIL for a while (lists of
    ids), and between two results the loop gives the threads their next tasks. Handing on
    every ready result at once let a thread run dry meanwhile (13 MB of 64 KB documents on
    two threads, medians of 30 in turn: cold 120.0 -> 115.6 ms, warm 91.0 -> 86.6)."""
    if slots[0][0] is None or slots[0][0].done() or not _run_queued(slots, here):
        yield _taken(slots.popleft())


_handoff_lock = threading.Lock()
_handoff = {"users": 0, "saved": 0.005}  # calls inside quick_handoff, the interval before


@contextlib.contextmanager
def quick_handoff() -> Iterator[None]:
    """Hand the GIL to a waiting thread within :data:`HANDOFF_SECONDS` (``sys.setswitchinterval``,
    restored when the last user leaves).

    A thread back from compiled code that released the GIL needs it again for the few
    Python lines between two kernels. While the calling thread runs Python (the lists of
    ids, the ``Encoding`` objects), that thread waited the default 5 ms for each, and so
    did nothing for as long as it worked: on 4M characters of news lines a second thread
    sat asleep 32 ms of its 55 ms of CPU (measured from ``/proc/thread-self/schedstat``).

    The interval is how long a waiting thread lets the holder run before it asks for the
    GIL; the holder then lets go at its next bytecode boundary. A thread's needs between
    kernels are short, so it asks soon, after 50 us: against 100 us, 8 MB of 64 KB
    documents on two threads took 10% less time warm (52.6 against 58.8 ms; 13 MB, 1 us
    against 100 us: 9%). Sooner still (1 us), each hand-off breaks the caller's lists into
    pieces and the two threads pass the GIL to and fro: on 262K characters of NewsArticles
    lines, cold, 8.5 ms against 7.5 at 50 us, the tweets 10.8 against 9.8, for the same
    time on the documents (52.9 ms) and at 1M-4M characters within 3% (medians of 9-15 in
    turn, 2026-11-29).
    """
    with _handoff_lock:
        if _handoff["users"] == 0:
            _handoff["saved"] = sys.getswitchinterval()
            sys.setswitchinterval(min(HANDOFF_SECONDS, _handoff["saved"]))
        _handoff["users"] += 1
    try:
        yield
    finally:
        with _handoff_lock:
            _handoff["users"] -= 1
            if _handoff["users"] == 0:
                sys.setswitchinterval(_handoff["saved"])


def _taken(slot: tuple) -> Any:
    future, value = slot
    return value if future is None else future.result()


def _run_queued(slots: collections.deque, here: Callable[[Any], Any]) -> bool:
    """Run here the last task of ``slots`` that no thread has started (its future
    cancelled); False if every task has started."""
    for i in range(len(slots) - 1, -1, -1):
        future, task = slots[i]
        if future is not None and future.cancel():
            slots[i] = (None, here(task))
            return True
    return False
