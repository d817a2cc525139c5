"""Zero arrays whose memory is taken only where they are written.

A large table that training touches row by row (the optimizer state of a sparse
optimizer, FastText's hash buckets that no word uses) should cost memory only for the rows
written. :func:`untouched_zeros` gives an anonymous private memory map: the kernel hands
out a zero page on first write. It also asks the kernel not to back the map with huge
pages (``MADV_NOHUGEPAGE``): NumPy's own large allocations request them, and then writing
one 256-byte row makes 2 MB resident (measured on a 2M x 100 FastText table: 1,167 MB
resident with ``np.zeros`` against 397 MB this way, for 112k scattered rows).

The other way round, :func:`on_huge_pages` moves memory another library allocated (faiss's
graph of an index) onto 2 MB pages, for reads at random places all over it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import mmap
import sys
from typing import Any

import numpy as np

__all__ = ["on_huge_pages", "untouched_zeros"]

_MADV_HUGEPAGE, _MADV_COLLAPSE = 14, 25  # Linux's <asm-generic/mman-common.h>
_PAGE = 4096


def untouched_zeros(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A zero array of ``shape`` whose pages become resident only when written.

    Examples
    --------
    >>> W = untouched_zeros((3, 2), np.float32)
    >>> W[1] = 5.0
    >>> W.tolist()
    [[0.0, 0.0], [5.0, 5.0], [0.0, 0.0]]
    """
    dtype = np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes == 0 or not hasattr(mmap, "MAP_ANONYMOUS"):
        return np.zeros(shape, dtype)
    buffer = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if hasattr(mmap, "MADV_NOHUGEPAGE"):  # Linux; elsewhere the default pages are small
        buffer.madvise(mmap.MADV_NOHUGEPAGE)
    return np.frombuffer(buffer, dtype=dtype).reshape(shape)  # keeps the mapping alive


def on_huge_pages(address: int, nbytes: int, now: bool = True) -> bool:
    """Ask the kernel to back the memory at ``address`` (``nbytes``, whole small pages
    inside it) with 2 MB pages: ``MADV_HUGEPAGE``, then (``now``) ``MADV_COLLAPSE`` (Linux
    6.1 and later) to move what is already there at once; without it the kernel's
    ``khugepaged`` moves it in the background, a few MB a second. A hint, as every
    ``madvise``: the contents stay, and False says it was not taken (another system, an
    older kernel, no free huge pages). Moving at once costs seconds for hundreds of MB on a
    busy machine (7 s for 390 MB at a load of 16), while the kernel finds free 2 MB blocks.

    A search that reads rows at random places all over hundreds of MB misses the TLB on
    nearly every read with 4 kB pages (a 1M-row graph spans 190,000 of them); 2 MB pages
    cover it in 400 entries.

    >>> rows = np.arange(1 << 20, dtype=np.float32)
    >>> on_huge_pages(rows.ctypes.data, rows.nbytes) in (True, False), float(rows[-1])
    (True, 1048575.0)
    """
    if not sys.platform.startswith("linux"):
        return False
    start = -(-address // _PAGE) * _PAGE  # whole pages only: the ends may be others' memory
    end = (address + nbytes) // _PAGE * _PAGE
    if end <= start:
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    if libc.madvise(start, end - start, _MADV_HUGEPAGE) != 0:
        return False
    return not now or libc.madvise(start, end - start, _MADV_COLLAPSE) == 0
