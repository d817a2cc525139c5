"""An index file: faiss's bytes, then the calibration the index was built with.

faiss reads an index from the front of its bytes and ignores what follows, so the
:class:`~rowbook.vectors.calibrate.Calibration` of a built index (the setting chosen and the
recall measured) follows them, and the file stays one file that faiss itself can read::

    faiss's serialised index | JSON record | its length (8 bytes, little-endian) | mark

The mark is ``rowbook-calibration-1``; a file without it (saved before calibration, or from
an index built with ``recall=None``) is faiss's bytes alone. An HNSW graph stores its rows
in its search order (:mod:`rowbook.vectors.graph_order`): its bytes are faiss's
``IndexIDMap`` around the graph, the ids the table rows of the stored rows (a graph saved
in table order before is the graph alone, and loads as it did).

Examples
--------
>>> import tempfile, pathlib
>>> from rowbook.vectors.calibrate import Calibration
>>> chosen = Calibration(0.95, 0.97, 300, "nprobe", 12, False, 0.8)
>>> path = pathlib.Path(tempfile.mkdtemp()) / "v.index"
>>> write_index_file(path, np.frombuffer(b"IwFl...", np.uint8), chosen)
>>> blob, again = read_index_file(path)
>>> blob.tobytes(), again == chosen
(b'IwFl...', True)
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import numpy as np

from rowbook.io import atomic_write
from rowbook.vectors.calibrate import Calibration

__all__ = ["MARK", "read_index_file", "write_index_file"]

#: The last bytes of an index file that holds a calibration.
MARK = b"rowbook-calibration-1"
_MAX_RECORD = 1 << 16  # a calibration record is a few hundred bytes


def write_index_file(
    path: str | os.PathLike[str], blob: np.ndarray, calibration: Calibration | None
) -> None:
    """Write faiss's ``blob`` (n,) uint8 and the ``calibration`` (if any) atomically."""
    with atomic_write(path) as f:
        f.write(blob.tobytes())
        if calibration is not None:
            record = json.dumps(calibration.to_dict()).encode()
            f.write(record + struct.pack("<Q", len(record)) + MARK)


def read_index_file(path: str | os.PathLike[str]) -> tuple[np.ndarray, Calibration | None]:
    """faiss's bytes of an index file, and the calibration saved after them (if any)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"index file {path} does not exist; build it with build_index()")
    blob = np.fromfile(path, dtype=np.uint8)  # (n,)
    tail = len(MARK) + 8
    if len(blob) < tail or blob[-len(MARK) :].tobytes() != MARK:
        return blob, None
    (size,) = struct.unpack("<Q", blob[-tail : -len(MARK)].tobytes())
    start = len(blob) - tail - size
    if size > _MAX_RECORD or start < 0:
        raise ValueError(
            f"{path}: the calibration record's length at byte {len(blob) - tail} is {size}, "
            "more than the file holds; rebuild the index with build_index()"
        )
    try:
        record = json.loads(blob[start : len(blob) - tail].tobytes().decode("utf-8"))
    except ValueError as err:
        raise ValueError(
            f"{path}: the calibration record at byte {start} is not JSON ({err}); rebuild "
            "the index with build_index()"
        ) from None
    return blob[:start], Calibration.from_dict(record, f"{path}")
