"""A corpus's id stream: remapped in place in RAM, or on disk, written once and read back job by job.

:class:`EncodedCorpus` is the stream the trainers read: the ids of the in-vocabulary words,
sentence by sentence, in RAM or in an :class:`IdFile`.

:func:`rowbook.data.read_corpus` appends each token's provisional id (its order of first
sighting) to one growing ``array("i")`` while it scans. Once the vocabulary is chosen,
:func:`remap_in_place` maps those ids to the final ones block by block, moving the
in-vocabulary ids down over the dropped ones in the same buffer, which then shrinks to
fit: in RAM a corpus costs 4 bytes per token at the peak of reading too (the buffer's
growth margin of 1/16 and one block of :data:`REMAP_TOKENS` besides), never a second copy
of the stream.

For corpora larger than that budget,
:func:`rowbook.data.read_corpus` with ``spill_dir=`` writes the provisional ids to a
temporary file in blocks of :data:`BLOCK_TOKENS` while it scans, then remaps them block by
block into the final id file; the trainers read each job's ids with ``pread`` (a job is
~10,000 words, 40 KB) rather than mapping the file, so the process's resident memory stays
at the vocabulary, the tables and a few blocks, however long the corpus. The operating
system's page cache still keeps recently read parts of the file, which is what makes the
second and later epochs cheap; that memory is the kernel's and is reclaimed under pressure.

The files live in a :class:`~rowbook.data.spill_folder.SpillFolder` inside ``spill_dir``
(put it on a disk with room for 4 bytes per token, twice while encoding), removed when the
corpus is closed (:meth:`EncodedCorpus.close`, which the trainers call when they finish,
fail or are interrupted) or garbage-collected; a run killed outright leaves it to the next
run's sweep. A full disk is a :class:`~rowbook.data.spill_folder.SpillSpaceError` naming
the folder and the room needed.
"""

from __future__ import annotations

import os
import weakref
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rowbook.data.spill_folder import SpillFolder

__all__ = [
    "BLOCK_TOKENS",
    "REMAP_TOKENS",
    "EncodedCorpus",
    "IdFile",
    "RawIdSink",
    "remap_blocks",
    "remap_in_place",
    "remap_to_file",
]

BLOCK_TOKENS = 1 << 20  # 4 MB of int32 ids per block written while scanning
REMAP_TOKENS = 1 << 18  # ids remapped at once: about 2.5 MB of temporaries
_ITEM = 4  # bytes per int32 id


def remap_blocks(
    blocks: Iterable[tuple[int, np.ndarray]],
    remap: np.ndarray,
    lengths: np.ndarray,
    write: Callable[[np.ndarray], object],
) -> np.ndarray:
    """Map each ``(start, provisional ids)`` block through ``remap``, hand the ids that are
    not ``-1`` (out of the vocabulary) to ``write`` in order, and return how many ids each
    sentence kept (sentence ``s`` has ``lengths[s]`` provisional ids).

    Examples
    --------
    >>> kept = []
    >>> remap_blocks([(0, np.array([0, 1, 2])), (3, np.array([1, 0]))], np.array([5, -1, 6]),
    ...              np.array([2, 0, 3]), kept.append).tolist()
    [1, 0, 2]
    >>> np.concatenate(kept).tolist()
    [5, 6, 5]
    """
    raw_starts = np.concatenate([[0], np.cumsum(lengths)])  # (S + 1,)
    dropped = np.zeros(len(lengths), dtype=np.int64)  # (S,)
    for start, raw in blocks:
        mapped = remap[raw]  # (b,)
        keep = mapped >= 0
        write(mapped[keep])
        gone = np.flatnonzero(~keep) + start  # where the dropped ids were, in the whole stream
        if len(gone):
            sentence = np.searchsorted(raw_starts, gone, side="right") - 1  # nondecreasing
            dropped[sentence[0] : sentence[-1] + 1] += np.bincount(sentence - sentence[0])
    return lengths - dropped


def remap_in_place(
    raw_ids: array, remap: np.ndarray, lengths: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, kept per sentence)``: :func:`remap_blocks` over the provisional ids in
    ``raw_ids``, the kept ids written over them from the front; ``raw_ids`` is then cut
    to those and ``ids`` is an int32 view of it (no copy).

    >>> raw = array("i", [0, 1, 2, 1, 0])
    >>> ids, kept = remap_in_place(raw, np.array([5, -1, 6], np.int32), np.array([2, 0, 3]))
    >>> ids.tolist(), kept.tolist(), len(raw)
    ([5, 6, 5], [1, 0, 2], 3)
    """
    n, kept = _compact(raw_ids, remap, lengths)
    try:
        del raw_ids[n:]  # no view of the buffer is left, so it shrinks (realloc) instead of copying
    except BufferError:  # a view outlived its frame (a sampling profiler, Dask's, held the frame)
        return np.frombuffer(raw_ids, dtype=np.int32)[:n].copy(), kept
    return (np.frombuffer(raw_ids, dtype=np.int32) if n else np.zeros(0, np.int32)), kept


def _compact(raw_ids: array, remap: np.ndarray, lengths: np.ndarray) -> tuple[int, np.ndarray]:
    """Remap ``raw_ids`` in place, kept ids first; returns their number and the per-sentence
    counts. Every NumPy view of the buffer dies with this call."""
    buf = np.frombuffer(raw_ids, dtype=np.int32) if len(raw_ids) else np.zeros(0, np.int32)
    n = 0

    def write(ids: np.ndarray) -> None:  # never past the block being read: ids is a copy
        nonlocal n
        buf[n : n + len(ids)] = ids
        n += len(ids)

    blocks = ((a, buf[a : a + REMAP_TOKENS]) for a in range(0, len(buf), REMAP_TOKENS))
    kept = remap_blocks(blocks, remap, lengths, write)
    return n, kept


def remap_to_file(
    blocks: Iterable[tuple[int, np.ndarray]],
    remap: np.ndarray,
    lengths: np.ndarray,
    folder: SpillFolder,
) -> tuple[IdFile, np.ndarray]:
    """``(id file, kept per sentence)``: :func:`remap_blocks` of ids read block by block (from
    a :class:`RawIdSink` or an :class:`IdFile`) written to ``ids.i32`` in ``folder``, which the
    id file then owns (removing it on an error here)."""
    out_path = folder.path / "ids.i32"
    need = 2 * int(lengths.sum()) * _ITEM  # beside the provisional ids, until they go
    try:
        with folder.writing(RawIdSink.WHAT, need), open(out_path, "wb") as out:
            kept = remap_blocks(blocks, remap, lengths, out.write)
        return IdFile(folder, out_path, int(kept.sum())), kept
    except BaseException:
        folder.remove()
        raise


class RawIdSink:
    """Where :func:`read_corpus` spills provisional ids while scanning: an append-only file
    in a new :class:`~rowbook.data.spill_folder.SpillFolder` of ``spill_dir``."""

    WHAT = "the corpus's word ids (4 bytes a token, twice while they are encoded)"

    def __init__(self, spill_dir: str | os.PathLike[str] | None, need: int | None = None) -> None:
        self.folder, self.need = SpillFolder(spill_dir, "ids"), need
        if need is not None:
            try:
                self.folder.check_room(self.WHAT, need, minimum=need // 2)  # an estimate
            except BaseException:
                self.folder.remove()
                raise
        self.raw_path = self.folder.path / "raw.i32"
        self._file = open(self.raw_path, "wb")
        self.tokens = 0

    def write(self, ids: array) -> None:
        with self.folder.writing(self.WHAT, self.need, written=self.tokens * _ITEM):
            self._file.write(
                memoryview(ids).cast("B")
            )  # no copy a block (the heap: see read_batches)
        self.tokens += len(ids)

    def finish(self) -> None:
        with self.folder.writing(self.WHAT, self.need, written=self.tokens * _ITEM):
            self._file.close()

    def close(self) -> None:
        """Remove the folder now (on an error, or once its ids are remapped elsewhere)."""
        self._file.close()
        self.folder.remove()

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


class IdFile:
    """The final ``(N,)`` int32 id stream of a corpus in a file; ``read(a, b)`` is ``ids[a:b]``.

    ``ids`` maps the file (for code that wants an array, such as co-occurrence counting);
    the trainers use :meth:`read`, which does not keep pages mapped. The file's
    :class:`~rowbook.data.spill_folder.SpillFolder` is removed by :meth:`close` or when the
    object is garbage-collected.
    """

    def __init__(self, folder: SpillFolder, path: Path, n_tokens: int) -> None:
        self.spill, self.path, self.n_tokens = folder, path, n_tokens
        self.folder = folder.path
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


def _close_and_remove(fd: int, folder: SpillFolder) -> None:
    os.close(fd)
    folder.remove()


@dataclass(frozen=True, eq=False)
class EncodedCorpus:
    """The corpus as in-vocabulary word ids, sentence by sentence.

    Sentence ``s`` is ``ids[starts[s]:starts[s + 1]]``; ``raw_lengths[s]`` is how many
    tokens it had before out-of-vocabulary words were dropped (what learning-rate decay
    and words-per-second are measured in, as in gensim).
    """

    ids: np.ndarray  # (N,) int32 (a memory map of ``id_file`` when the ids are on disk)
    starts: np.ndarray  # (S + 1,) int64
    raw_lengths: np.ndarray  # (S,) int64
    id_file: IdFile | None = None  # read_corpus(..., spill_dir=...): the ids in a file

    def sentences(self, s0: int, s1: int) -> tuple[np.ndarray, np.ndarray]:
        """The ids of sentences ``s0 .. s1 - 1`` and their starts counted from 0: one job's
        input, read from the file (not mapped) when the ids are on disk.

        Examples
        --------
        >>> from rowbook.data import read_corpus
        >>> _, enc = read_corpus([["a", "b"], ["b"], ["a", "a"]])
        >>> [x.tolist() for x in enc.sentences(1, 3)]
        [[1, 0, 0], [0, 1, 3]]
        """
        a, b = int(self.starts[s0]), int(self.starts[s1])
        ids = self.ids[a:b] if self.id_file is None else self.id_file.read(a, b)
        return ids, self.starts[s0 : s1 + 1] - a

    def close(self) -> None:
        """Remove the spilled id file now, if there is one (in RAM: nothing to do)."""
        if self.id_file is not None:
            self.id_file.close()

    @property
    def n_sentences(self) -> int:
        return len(self.raw_lengths)

    @property
    def total_words(self) -> int:
        return int(self.raw_lengths.sum())
