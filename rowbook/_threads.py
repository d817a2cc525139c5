"""How many cores this process may use, how many threads a parallel numba kernel wakes
(one, when its work is small), and threads that start on cores of their own.

:func:`usable_cores` is the one count of cores in rowbook, and :func:`resolve_workers` turns
every ``workers=None`` (threads or processes) into it: the cores this process may run on,
which ``taskset`` or a container's cpuset can make fewer than the machine's
(``os.cpu_count()``). Counted from the machine, two workers held to one core took turns on it.

:func:`serial_below` runs the same compiled kernel on the calling thread alone when it
has fewer than :data:`SERIAL_BELOW` elements to do, so the numbers are the same (each
element, or each row, is computed by one thread in one order either way) and no second
thread is woken that may have to wait for a core. Shared by the fused kernels of
:mod:`rowbook.nn` (the cross entropy) and :mod:`rowbook.optim` (Adam), which import nothing
else of each other.

:func:`side_by_side` runs a compiled job (one that releases the GIL) on several ranges at
once, the first on the calling thread, and makes sure that each new thread starts on
another core than the caller's. Left to itself, Linux put the new thread on the calling
thread's core in 17-63 of 80 calls (or woke the caller on the new thread's), and the idle
core took neither over before the caller's range was done: the two ranges ran one after
the other, two threads no faster than one up to about 4 ms of work (the scheduler's tick
at 250 Hz). Kept apart, two threads predicted the classifier's 500-label lines 1.55x /
1.63x / 1.76x faster than one at 0.8 / 1.7 / 3.3 ms of work; left to the scheduler
0.96-1.76x, by where the threads happened to land in a run (medians of 80 in turn, the
project's 2-core machine idle, 2026-11-29).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Callable, Iterator, Sequence

from rowbook.checks import check_int

__all__ = ["SERIAL_BELOW", "resolve_workers", "serial_below", "side_by_side", "usable_cores"]

#: Elements of work below which :func:`serial_below` keeps a kernel on one thread. One step
#: of the NPLM's output layer (512 x 10,483 logits; Adam on its 670,912 weights) took
#: 3.4 + 1.0 + 0.15 ms on one thread, and 8 ms for each kernel on two while one other
#: process kept the second core busy: every parallel region waited for it (2026-11-27, the
#: project's 2-core machine). On an idle machine the second thread would save at most half
#: of those few milliseconds.
SERIAL_BELOW = 1 << 23


def usable_cores() -> int:
    """The cores this process may run on: its affinity (``taskset``, a container's cpuset)
    where the system says, else every core of the machine (at least 1).

    The calling thread's affinity, which is the process's but inside :func:`side_by_side`'s
    threads (each held to one core). Python 3.13's ``os.process_cpu_count`` counts the same.

    >>> 1 <= usable_cores() <= (os.cpu_count() or 1)
    True
    """
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # no affinity on this platform
        return os.cpu_count() or 1


def resolve_workers(workers: int | None) -> int:
    """``workers`` (an integer >= 1), or one per core this process may use for None
    (:func:`usable_cores`).

    >>> resolve_workers(3)
    3
    """
    return check_int("workers", workers, 1, allow_none=True) or usable_cores()


@contextlib.contextmanager
def serial_below(size: int, threshold: int | None = None) -> Iterator[None]:
    """A context in which numba's parallel kernels use one thread if ``size < threshold``
    (:data:`SERIAL_BELOW` when None, read at each call).

    >>> import numba
    >>> with serial_below(10):
    ...     numba.get_num_threads()
    1
    """
    import numba

    before = numba.get_num_threads()
    if size >= (SERIAL_BELOW if threshold is None else threshold) or before == 1:
        yield
        return
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(before)


def side_by_side(job: Callable[..., None], tasks: Sequence[tuple]) -> None:
    """``job(*task)`` for every task at once: the first on the calling thread, each other on a
    new thread started on another core; returns when all are done, raising the first error.

    For a job that runs compiled code without the GIL. Across the start only (where Linux
    can pin threads), the caller holds to its core and each new thread moves to another one
    (they take turns when there are more tasks than cores), so neither waits behind the
    other while a core idles. The caller is free again once the others have begun; they
    stay where they are, ending with their task: let go as well once in their compiled job,
    they ran slower beside a busy process (2.6 ms of work on two threads with one process
    spinning: 0.65x one thread held, 0.47x let go; idle 1.45x / 1.44x).
    A thread started inside a job inherits that core alone: so a job must not be the first
    to start a pool of threads (numba's ``parallel=True`` layer, say), whose threads would
    all share one core for good. The classifier's prediction and first draws, its users,
    run plain compiled loops.

    Examples
    --------
    >>> done = []
    >>> side_by_side(lambda a, b: done.append(a + b), [(1, 2), (3, 4)])
    >>> sorted(done)
    [3, 7]
    """
    tasks = list(tasks)
    if len(tasks) <= 1:
        for task in tasks:
            job(*task)
        return
    cores, here = _cores()
    errors: list[BaseException] = []
    begun = [threading.Lock() for _ in tasks[1:]]

    def run(i: int, task: tuple) -> None:
        away = sorted(cores - {here})
        if away:  # off the caller's core for good: a thread that ends with its task
            _hold(cores, {away[i % len(away)]})
        begun[i].release()
        try:
            job(*task)
        except BaseException as error:  # raised again by the caller
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i, t)) for i, t in enumerate(tasks[1:])]
    _hold(cores, {here} if here is not None else None)
    try:
        for lock, thread in zip(begun, threads, strict=True):
            lock.acquire()
            thread.start()
        for lock in begun:
            lock.acquire()  # each new thread has left this core
    finally:
        _hold(cores, cores)
    try:
        job(*tasks[0])
    finally:
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]


def _cores() -> tuple[set[int], int | None]:
    """The cores this thread may run on and the one it runs on (an empty set and None where
    the system does not say: no pinning there)."""
    if not hasattr(os, "sched_getaffinity"):
        return set(), None
    try:
        return os.sched_getaffinity(0), _sched_getcpu()
    except (OSError, AttributeError):
        return set(), None


def _hold(cores: set[int], to: set[int] | None) -> None:
    """Pin the calling thread to ``to`` (nothing where ``cores`` is empty, or where the
    system refuses: a core taken away meanwhile)."""
    if cores and to:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, to)


_libc = None


def _sched_getcpu() -> int | None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    cpu = _libc.sched_getcpu()
    return cpu if cpu >= 0 else None
