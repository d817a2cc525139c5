"""A borrowed array view (no reference count) is the array itself: its data, shape and strides."""

from __future__ import annotations

import numba
import numpy as np

from rowbook.models.word_vectors.array_views import borrowed


@numba.njit
def _write_through(a, row, col, value):
    view = borrowed(a)
    view[row, col] = value
    return view.shape, view.strides, view.sum()


def test_a_borrowed_view_reads_and_writes_the_array():
    table = np.arange(12, dtype=np.float32).reshape(3, 4)
    for a in (table, table[:, ::2]):  # contiguous, and strided
        shape, strides, total = _write_through(a, 1, 1, -5.0)
        assert shape == a.shape and strides == a.strides
        assert a[1, 1] == -5.0 and total == a.sum()
    assert table[1, 1] == -5.0 and table[1, 2] == -5.0  # the strided view's (1, 1)
