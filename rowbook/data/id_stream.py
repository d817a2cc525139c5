"""A corpus's id stream on disk: written once while reading, read back job by job.

In RAM a corpus costs 4 bytes per token as int32 ids (and, at the peak of reading, the
provisional ids and their remapped copy besides). For corpora larger than that budget,
:func:`rowbook.data.read_corpus` with ``spill_dir=`` writes the provisional ids to a
temporary file in blocks of :data:`BLOCK_TOKENS` while it scans, then remaps them block by
block into the final id file; the trainers read each job's ids with ``pread`` (a job is
~10,000 words, 40 KB) rather than mapping the file, so the process's resident memory stays
at the vocabulary, the tables and a few blocks, however long the corpus. The operating
system's page cache still keeps recently read parts of the file, which is what makes the
second and later epochs cheap; that memory is the kernel's and is reclaimed under pressure.

The files live in a temporary folder inside ``spill_dir`` (put it on a disk with room for
4 bytes per token, twice while encoding) and are removed when the corpus object is
garbage-collected or :meth:`IdFile.close` is called.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from pathlib import Path

import numpy as np

__all__ = ["BLOCK_TOKENS", "IdFile", "RawIdSink", "new_spill_folder"]

BLOCK_TOKENS = 1 << 20  # 4 MB of int32 ids per block (about 30 MB in flight while encoding)
_ITEM = 4  # bytes per int32 id


def new_spill_folder(spill_dir: str | os.PathLike[str]) -> Path:
    """A new temporary folder for id files inside ``spill_dir`` (which must be a folder)."""
    folder = Path(spill_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"spill_dir {folder} is not a folder; create it or pass None")
    return Path(tempfile.mkdtemp(prefix="rowbook-ids-", dir=folder))


class RawIdSink:
    """Where :func:`read_corpus` spills provisional ids while scanning: an append-only file."""

    def __init__(self, spill_dir: str | os.PathLike[str]) -> None:
        self.folder = new_spill_folder(spill_dir)
        self._cleanup = weakref.finalize(self, _remove_folder, self.folder)
        self.raw_path = self.folder / "raw.i32"
        self._file = open(self.raw_path, "wb")
        self.tokens = 0

    def write(self, ids: array) -> None:
        self._file.write(ids.tobytes())
        self.tokens += len(ids)

    def finish(self) -> None:
        self._file.close()

    def blocks(self, tokens: int | None = None):
        """The provisional ids again, ``tokens`` (default :data:`BLOCK_TOKENS`) at a time, as
        ``(start, int32 array)`` pairs."""
        tokens = tokens or BLOCK_TOKENS
        with open(self.raw_path, "rb") as f:
            start = 0
            while block := f.read(tokens * _ITEM):
                ids = np.frombuffer(block, dtype=np.int32)
                yield start, ids
                start += len(ids)

    def detach(self) -> weakref.finalize:
        """Hand the folder's removal over to whoever keeps the final id file."""
        self._cleanup.detach()
        return weakref.finalize(self, lambda: None)


class IdFile:
    """The final ``(N,)`` int32 id stream of a corpus in a file; ``read(a, b)`` is ``ids[a:b]``.

    ``ids`` maps the file (for code that wants an array, such as co-occurrence counting);
    the trainers use :meth:`read`, which does not keep pages mapped.
    """

    def __init__(self, folder: Path, path: Path, n_tokens: int) -> None:
        self.folder, self.path, self.n_tokens = folder, path, n_tokens
        self._fd = os.open(path, os.O_RDONLY)
        self._cleanup = weakref.finalize(self, _close_and_remove, self._fd, folder)

    def read(self, start: int, stop: int) -> np.ndarray:
        n = max(0, stop - start)
        data = os.pread(self._fd, n * _ITEM, start * _ITEM)
        if len(data) != n * _ITEM:
            raise OSError(f"{self.path} was cut short: ids {start}..{stop} are not all there")
        return np.frombuffer(data, dtype=np.int32)

    def blocks(self, tokens: int | None = None):
        """The ids ``tokens`` (default :data:`BLOCK_TOKENS`) at a time, as ``(start, int32
        array)`` pairs (as :meth:`RawIdSink.blocks`)."""
        tokens = tokens or BLOCK_TOKENS
        for start in range(0, self.n_tokens, tokens):
            yield start, self.read(start, min(start + tokens, self.n_tokens))

    @property
    def ids(self) -> np.ndarray:
        if self.n_tokens == 0:
            return np.zeros(0, np.int32)
        return np.memmap(self.path, dtype=np.int32, mode="r", shape=(self.n_tokens,))

    def close(self) -> None:
        """Close and remove the file now (it is removed at garbage collection otherwise)."""
        self._cleanup()


def _remove_folder(folder: Path) -> None:
    for child in folder.iterdir():
        child.unlink(missing_ok=True)
    folder.rmdir()


def _close_and_remove(fd: int, folder: Path) -> None:
    os.close(fd)
    _remove_folder(folder)
