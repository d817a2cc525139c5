"""rowbook's own vectors file: keys, vectors and counts in one pickle-free ``.npz``.

Written with :func:`rowbook.io.save_state` (kind ``"vectors"``); read back with every field
checked: keys unique strings, vectors a finite real ``(V, d)`` table, counts ``V``
non-negative integers or absent.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from rowbook.io import MAX_INFLATED_BYTES, load_state, save_state
from rowbook.vectors.word2vec_reader import nonfinite_message

__all__ = ["check_vectors_state", "read_npz", "write_npz"]

PathLike = str | os.PathLike[str]


def write_npz(
    path: PathLike, keys: Sequence[str], vectors: np.ndarray, counts: np.ndarray | None
) -> None:
    """Atomically write rowbook's native format (see :func:`rowbook.io.save_state`)."""
    state = {"keys": list(keys), "vectors": np.asarray(vectors), "counts": counts}
    save_state(path, state, kind="vectors")


def read_npz(
    path: PathLike,
    *,
    max_inflated_bytes: int | None = MAX_INFLATED_BYTES,
    allow_nonfinite: bool = False,
    mmap: bool = False,
) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    """Read a file written by :func:`write_npz`; checks what it holds (``ValueError`` naming the
    file and the field). ``max_inflated_bytes``: see :func:`rowbook.io.load_state`;
    ``allow_nonfinite``: see :func:`rowbook.vectors.formats.read_word2vec`.

    With ``mmap`` a float32 or float16 table is mapped from the file read-only, not read:
    its values are not scanned, so inf / nan rows are not refused (queries score them as
    zero rows, as with ``allow_nonfinite``).
    """
    state = load_state(
        path, kind="vectors", max_inflated_bytes=max_inflated_bytes, mmap_mode="r" if mmap else None
    )
    return check_vectors_state(state, path, allow_nonfinite=allow_nonfinite or mmap)


def check_vectors_state(
    state: object, path: PathLike, *, allow_nonfinite: bool = False
) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    """The keys, table and counts of a loaded vectors file's state, every field checked."""
    if not isinstance(state, dict):
        raise ValueError(f"{path}: a vectors file holds an object, got {type(state).__name__}")
    keys, vectors, counts = state.get("keys"), state.get("vectors"), state.get("counts")
    if not isinstance(keys, list) or not all(type(k) is str for k in keys):
        raise ValueError(f"{path}: 'keys' must be a list of strings")
    if len(set(keys)) != len(keys):
        raise ValueError(f"{path}: 'keys' must be unique; the file repeats some")
    real = isinstance(vectors, np.ndarray) and vectors.dtype.kind in "iuf"
    if not real or vectors.ndim != 2 or len(vectors) != len(keys) or vectors.shape[1] < 1:
        shape, dtype = (
            getattr(vectors, "shape", None),
            getattr(vectors, "dtype", type(vectors).__name__),
        )
        raise ValueError(
            f"{path}: 'vectors' must be a ({len(keys)}, d >= 1) array of real "
            f"numbers, got shape {shape}, dtype {dtype}"
        )
    with np.errstate(over="ignore"):  # float32 and float16 tables kept as they are (or mapped)
        table = vectors if vectors.dtype == np.float16 else vectors.astype(np.float32, copy=False)
    if not allow_nonfinite:
        finite = np.isfinite(table)
        if not finite.all():
            row, col = (int(i[0]) for i in np.nonzero(~finite))
            raise ValueError(
                f"{path}: 'vectors' row {row + 1} ({keys[row]!r}): "
                + nonfinite_message(col, vectors[row, col])
            )
    if counts is not None and not (
        isinstance(counts, np.ndarray)
        and counts.shape == (len(keys),)
        and counts.dtype.kind in "iu"
        and not (counts < 0).any()
    ):
        raise ValueError(
            f"{path}: 'counts' must be None or {len(keys)} integers >= 0 (one per key)"
        )
    return keys, table, counts
