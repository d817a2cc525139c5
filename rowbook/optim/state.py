"""Where optimizer state lives: lazily zeroed pages, or arrays the caller places.

A sparse optimizer (SparseAdam, RowWiseAdagrad) keeps state the size of its table but
touches only the rows that were looked up. :func:`lazy_zeros` gives such state as an
anonymous memory map: the kernel hands out zero pages on first write, so only the pages
of touched rows become resident. It also asks the kernel not to back the map with huge
pages (``MADV_NOHUGEPAGE``): NumPy's own allocations request them, and then one touched
256-byte row makes 2 MB resident, so "lazy" moments of a 50M-row table become fully
resident after a few dozen steps.

A caller who wants the state elsewhere (on disk, for a table larger than RAM) passes
``state_factory=`` to the optimizer: any ``(name, shape, dtype) -> array`` callable, such
as :func:`memmap_factory`. The arrays must start at zero (or at the optimizer's initial
value, which it writes itself).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from rowbook._memory import untouched_zeros

__all__ = ["StateFactory", "lazy_zeros", "memmap_factory"]

#: ``factory(name, shape, dtype) -> array`` allocates one state array of an optimizer.
StateFactory = Callable[[str, tuple[int, ...], np.dtype], np.ndarray]


def lazy_zeros(name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A zero array whose pages become resident only when written (no huge pages): the
    default :data:`StateFactory` of the sparse optimizers (:func:`rowbook._memory.untouched_zeros`).

    Examples
    --------
    >>> moments = lazy_zeros("exp_avg", (1000, 4), np.float32)
    >>> moments[7] += 1.0
    >>> float(moments.sum()), moments.shape, moments.dtype
    (4.0, (1000, 4), dtype('float32'))
    """
    return untouched_zeros(shape, dtype)


def memmap_factory(folder: str | os.PathLike[str]) -> StateFactory:
    """A ``state_factory`` that keeps each state array in ``folder/NAME-N.npy`` on disk.

    The files are ordinary ``.npy`` files (``np.load(..., mmap_mode="r")`` reads them).
    Use it with a table that is itself a ``np.memmap`` to train tables larger than RAM:
    each step then reads and writes only the touched rows' pages.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"state folder {folder} does not exist; create it first")
    count = 0

    def factory(name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        nonlocal count
        count += 1
        path = folder / f"{name}-{count}.npy"
        return np.lib.format.open_memmap(path, mode="w+", dtype=np.dtype(dtype), shape=shape)

    return factory
