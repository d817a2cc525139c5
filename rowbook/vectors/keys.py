"""What every keyed table checks of its keys, counts and storage type, and its read-only views.

One place for the float table (:mod:`rowbook.vectors.table`), its edits
(:mod:`rowbook.vectors.edit`) and the quantised table (:mod:`rowbook.vectors.quantize.table`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rowbook.checks import InputTypeError

__all__ = ["DTYPES", "check_counts", "check_dtype", "index_keys", "read_only"]

DTYPES = (np.dtype(np.float32), np.dtype(np.float16))


def read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of ``array`` (the array itself stays as writeable as it was)."""
    view = array.view()
    view.flags.writeable = False
    return view


def index_keys(keys: tuple[str, ...]) -> dict[str, int]:
    """key -> row of unique ``str`` keys; the first repeat or non-str key is named.

    >>> index_keys(("a", "b"))
    {'a': 0, 'b': 1}
    """
    key_to_index = {key: i for i, key in enumerate(keys)}  # the fast path: str keys, no repeat
    if len(key_to_index) == len(keys) and all(type(key) is str for key in keys):
        return key_to_index
    key_to_index = {}
    for i, key in enumerate(keys):  # find what is wrong, to say where
        if not isinstance(key, str):
            raise InputTypeError(f"keys must be str, got {type(key).__name__} {key!r} at index {i}")
        first = key_to_index.setdefault(key, i)
        if first != i:
            raise ValueError(
                f"duplicate key {key!r} at indices {first} and {i}; keys must be unique"
            )
    return key_to_index


def check_counts(counts: np.ndarray | Sequence[int], n_keys: int) -> np.ndarray:
    """``counts`` as a read-only (n_keys,) int64 array of non-negative integers."""
    array = np.asarray(counts)
    if array.shape != (n_keys,) or not np.issubdtype(array.dtype, np.integer) or (array < 0).any():
        raise ValueError(
            f"counts must be {n_keys} non-negative integers (one per key), got "
            f"{array.dtype} array of shape {array.shape}"
        )
    return read_only(array.astype(np.int64))


def check_dtype(dtype: Any, name: str = "dtype") -> np.dtype:
    """A table's storage type: float32 or float16."""
    try:
        checked = np.dtype(dtype)
    except TypeError:
        checked = None
    if checked not in DTYPES:
        raise ValueError(f"{name} must be numpy.float32 or numpy.float16, got {dtype!r}")
    return checked
