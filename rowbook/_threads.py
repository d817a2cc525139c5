"""How many threads a parallel numba kernel wakes: one, when its work is small.

:func:`serial_below` runs the same compiled kernel on the calling thread alone when it
has fewer than :data:`SERIAL_BELOW` elements to do, so the numbers are the same (each
element, or each row, is computed by one thread in one order either way) and no second
thread is woken that may have to wait for a core. Shared by the fused kernels of
:mod:`rowbook.nn` (the cross entropy) and :mod:`rowbook.optim` (Adam), which import nothing
else of each other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

__all__ = ["SERIAL_BELOW", "serial_below"]

#: Elements of work below which :func:`serial_below` keeps a kernel on one thread. One step
#: of the NPLM's output layer (512 x 10,483 logits; Adam on its 670,912 weights) took
#: 3.4 + 1.0 + 0.15 ms on one thread, and 8 ms for each kernel on two while one other
#: process kept the second core busy: every parallel region waited for it (2026-11-27, the
#: project's 2-core machine). On an idle machine the second thread would save at most half
#: of those few milliseconds.
SERIAL_BELOW = 1 << 23


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
