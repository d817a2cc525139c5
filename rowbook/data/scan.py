"""The first pass over a corpus: intern every token, count, keep the provisional id stream.

:func:`scan_sentences` is the pass itself, on one core: every token gets a provisional id,
its rank of first sighting (:class:`Interner`), appended to one ``array("i")`` (or
spilled to a sink block by block); counts come from a ``bincount`` of those ids. As in
gensim 4, ``max_vocab_size`` prunes the live vocabulary *during* the pass (see
:mod:`rowbook.data.corpus`). Files split by the default tokenizer (whitespace) take
:func:`scan_text` instead, the same pass over the reader's bytes in compiled code
(:mod:`rowbook.data.scan_kernels`; ten times faster, no pruning), which
:func:`scan_sentences` is the reference of.

:func:`scan_parts` is the same pass on ``workers`` processes. A file corpus is cut into
:class:`~rowbook.corpus_files.Part` s (byte ranges of about a quarter of a worker's
share, at most :data:`~rowbook.corpus_files.PART_BYTES`; compressed files whole); each
process runs :func:`scan_sentences` on a part's lines, with provisional ids of its own,
and the parts come back in order (:func:`rowbook.fork_pool.map_in_order`). The parent
interns each part's keys, in the part's order of first sighting, into one
:class:`Interner`: a key first seen in part ``k`` was seen after every key of parts
``< k``, and within part ``k`` in the part's order, so the parent's ids *are* the serial
ranks of first sighting. Each part's ids are then mapped to those (one gather) and
appended, or written to the spill file, in part order, and its counts added: the keys,
ids, counts and sentence lengths, and so the vocabulary, its order of ties and every
spilled file, are the serial pass's, byte for byte (tested for 1, 2 and 3 workers).

What is not split: the pruning of ``max_vocab_size``, which forgets words by the counts
reached at each sentence in corpus order (a forgotten word starts again from zero, with a
later first sighting), so every count depends on all the text before it. With
``max_vocab_size`` set the pass stays serial (:func:`parallel_parts` returns no parts).
Standard input and token lists are read serially too; a corpus that is one compressed file
is one part, and reads on one core (said once, as a :class:`OneCoreNotice`).

Memory is what the serial pass takes: the parent holds the id stream (4 bytes a token)
or writes it to the spill file as the parts arrive; a worker holds one part's ids, or,
when the corpus spills, writes them to a file of its own beside the spill file, which the
parent copies in and removes.
"""

from __future__ import annotations

import functools
import itertools
import os
import warnings
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from rowbook._progress import ProgressBar
from rowbook.corpus_files import PART_BYTES, Part, iter_part_batches
from rowbook.corpus_source import CorpusSource
from rowbook.data import id_stream
from rowbook.data.scan_kernels import WordScanner
from rowbook.fork_pool import can_fork, map_in_order
from rowbook.intern_table import InternTable

__all__ = [
    "MIN_PART_BYTES",
    "Discard",
    "Interner",
    "OneCoreNotice",
    "Scanned",
    "line_sentences",
    "parallel_parts",
    "scan_parts",
    "scan_sentences",
    "scan_text",
]

#: Parts are at least this big: smaller ones cost more in merging than they save.
MIN_PART_BYTES = 1 << 20
_PARTS_PER_WORKER = 4  # enough to even out parts of different speeds
_TAIL_CUTS = 4  # the last parts are cut in this many (see _finer_tail)


class OneCoreNotice(UserWarning):
    """A corpus asked to be read on several processes reads on one (a single compressed file)."""


class Scanned(NamedTuple):
    """What a pass found: ``keys`` (provisional id -> word), the ``(N,)`` provisional ids
    (``None`` when they went to a sink), the ``(S,)`` sentence lengths, the ids still live
    at the end (not pruned) and the counts by provisional id."""

    keys: list[str]
    ids: array | None
    lengths: np.ndarray
    live: np.ndarray
    counts: np.ndarray


class Interner(dict):
    """``interner[key]`` is the key's id, assigning the next id to a new key.

    >>> interner = Interner()
    >>> [interner[k] for k in ["b", "a", "b"]], interner.keys_in_order
    ([0, 1, 0], ['b', 'a'])
    """

    def __missing__(self, key: str) -> int:
        index = self[key] = len(self.keys_in_order)
        self.keys_in_order.append(key)
        return index

    def __init__(self) -> None:
        super().__init__()
        self.keys_in_order: list[str] = []


def line_sentences(
    pieces: Iterable[tuple[str, bool]], tokenize: Callable[[str], list[str]], max_len: int
) -> Iterator[list[str]]:
    """Join the pieces of each line into sentences of at most ``max_len`` tokens.

    >>> list(line_sentences([("a b", False), (" c d e", True), ("", True)], str.split, 2))
    [['a', 'b'], ['c', 'd'], ['e'], []]
    """
    sentence: list[str] = []
    for text, ends_line in pieces:
        sentence += tokenize(text)
        start = 0
        while len(sentence) - start > max_len:
            yield sentence[start : start + max_len]
            start += max_len
        sentence = sentence[start:]
        if ends_line:
            yield sentence
            sentence = []


def _bincount_since(raw_ids: array, start: int, size: int) -> np.ndarray:
    """Counts of the provisional ids appended since ``start`` (the buffer view dies here),
    a block at a time: ``np.bincount`` would copy the whole stream to int64 first."""
    counts = np.zeros(size, dtype=np.int64)
    fresh = np.frombuffer(raw_ids, dtype=np.int32) if len(raw_ids) else np.zeros(0, np.int32)
    for a in range(start, len(fresh), id_stream.REMAP_TOKENS):
        counts += np.bincount(fresh[a : a + id_stream.REMAP_TOKENS], minlength=size)
    return counts


def _with_fresh(counts: np.ndarray, raw_ids: array, start: int, size: int) -> np.ndarray:
    total = _bincount_since(raw_ids, start, size)
    total[: len(counts)] += counts
    return total


def scan_sentences(
    sentences: Iterable[Sequence[str]], max_vocab_size: int | None, sink: Any = None
) -> Scanned:
    """Intern every token; prune like gensim whenever the live vocabulary is too big.

    ``sink`` (with ``write(array)`` and ``finish()``) takes the provisional ids block by
    block instead of RAM.

    >>> scan_sentences([["a", "b", "a"], ["c"]], None).ids.tolist()
    [0, 1, 0, 2]
    """
    interner, raw_ids, lengths = Interner(), array("i"), array("q")
    counts = np.zeros(0, dtype=np.int64)  # by provisional id, for tokens before counted_upto
    counted_upto, min_reduce = 0, 1
    for sentence in sentences:
        raw_ids.extend(map(interner.__getitem__, sentence))
        lengths.append(len(sentence))
        if sink is not None and len(raw_ids) >= id_stream.BLOCK_TOKENS:
            counts = _with_fresh(counts, raw_ids, counted_upto, len(interner.keys_in_order))
            sink.write(raw_ids)
            raw_ids, counted_upto = array("i"), 0
        if max_vocab_size and len(interner) > max_vocab_size:
            counts = _with_fresh(counts, raw_ids, counted_upto, len(interner.keys_in_order))
            counted_upto = len(raw_ids)
            for key in [k for k, i in interner.items() if counts[i] < min_reduce]:
                del interner[key]
            min_reduce += 1
    counts = _with_fresh(counts, raw_ids, counted_upto, len(interner.keys_in_order))
    if sink is not None:
        sink.write(raw_ids)
        sink.finish()
    ids = None if sink is not None else raw_ids  # the one buffer, remapped in place later
    live = np.fromiter(interner.values(), dtype=np.int64, count=len(interner))
    return Scanned(interner.keys_in_order, ids, np.array(lengths, dtype=np.int64), live, counts)


def scan_text(
    batches: Iterable[tuple[bytes, bool]], max_len: int, sink: Any = None, *, decode: bool = True
) -> Scanned:
    """:func:`scan_sentences` of the lines in ``batches`` (UTF-8, as
    :func:`~rowbook.corpus_files.read_batches` gives them with ``as_bytes=True``) split on
    whitespace and cut every ``max_len`` tokens (:func:`line_sentences` with ``str.split``),
    in compiled code (:class:`~rowbook.data.scan_kernels.WordScanner`): the same keys, ids,
    lengths and counts, with no pruning. ``sink`` as in :func:`scan_sentences`;
    ``decode=False`` leaves the keys as their UTF-8 bytes and ends
    (:meth:`~rowbook.intern_table.InternTable.key_bytes`), for :func:`scan_parts` to merge.

    >>> scan_text([(b"a b a\\n", True), (b"c\\n", True)], 10).ids.tolist()
    [0, 1, 0, 2]
    """
    scanner, raw_ids = WordScanner(max_len), array("i")
    for data, _ in batches:
        ids, _ = scanner.scan(data)  # (n,), the scanner's until the next batch
        if sink is None:
            raw_ids.frombytes(memoryview(ids).cast("B"))
        for a in range(0, len(ids) if sink is not None else 0, id_stream.BLOCK_TOKENS):
            sink.write(ids[a : a + id_stream.BLOCK_TOKENS])  # in blocks, as scan_sentences
    if sink is not None:
        sink.finish()
    keys = scanner.keys() if decode else scanner.tokens.key_bytes()
    live = np.arange(len(scanner.tokens), dtype=np.int64)
    ids = None if sink is not None else raw_ids
    return Scanned(keys, ids, scanner.lengths(), live, scanner.counts())


def parallel_parts(
    source: CorpusSource, workers: int, max_vocab_size: int | None = None
) -> list[Part] | None:
    """The parts to read ``source`` on ``workers`` processes, or ``None`` when it reads on
    one: token lists, one worker, ``max_vocab_size`` pruning, standard input, no ``fork``,
    or a single part (a small file; a compressed file, said once)."""
    if workers < 2 or max_vocab_size or not can_fork():
        return None
    size = source.file_bytes()  # None: token lists, or standard input
    if size is None:
        return None
    share = size // (_PARTS_PER_WORKER * workers)
    parts = source.parts(min(PART_BYTES, max(MIN_PART_BYTES, share)))
    if len(parts) == 1 and parts[0].span is None:  # compressed: one stream, one reader
        warnings.warn(
            f"{parts[0].file} is compressed, so it is read on one core, not on "
            f"workers={workers}; to read it on every core, split it into several files or "
            "decompress it",
            OneCoreNotice,
            stacklevel=2,
        )
    return _finer_tail(parts, workers) if len(parts) > 1 else None


def _finer_tail(parts: list[Part], workers: int) -> list[Part]:
    """``parts`` with the last ``2 * workers`` byte ranges each cut in :data:`_TAIL_CUTS`.

    The pool holds up to two parts a process that this one cannot take back
    (:func:`~rowbook.fork_pool.map_in_order`), so when the parts run out this process
    waits for them: with 16 MB parts that was 4 of 15 seconds on 196 MB. Smaller parts at
    the end shorten the wait; the lines read, and so the pass, are the same.

    >>> [p.span for p in _finer_tail([Part("a", (0, 8)), Part("a", (8, 16))], 1)]
    [(0, 2), (2, 4), (4, 6), (6, 8), (8, 10), (10, 12), (12, 14), (14, 16)]
    """
    cut = max(0, len(parts) - 2 * workers)
    finer = parts[:cut]
    for part in parts[cut:]:
        if part.span is None:  # a compressed file: one stream
            finer.append(part)
            continue
        start, stop = part.span
        bounds = [start + (stop - start) * k // _TAIL_CUTS for k in range(_TAIL_CUTS + 1)]
        finer += [Part(part.file, (a, b)) for a, b in itertools.pairwise(bounds) if b > a]
    return finer


class _PartFile:
    """A worker's sink when the corpus spills: its part's provisional ids in a file."""

    def __init__(self, path: Path) -> None:
        self.path, self._file = path, open(path, "wb")

    def write(self, ids: array) -> None:
        self._file.write(ids.tobytes())

    def finish(self) -> None:
        self._file.close()


class Discard:
    """A sink that keeps nothing: counting only (``rowbook vocab``)."""

    def write(self, ids: array) -> None:
        pass

    def finish(self) -> None:
        pass


def _scan_part(
    tokenize: Callable[[str], list[str]] | None,
    max_len: int,
    errors: str,
    folder: Path | None,
    keep_ids: bool,
    task: tuple[int, Part],
) -> tuple[tuple, Path | None]:
    """One part, in a worker (or here): the fields of its own :func:`scan_sentences` (or
    :func:`scan_text`, ``tokenize`` None), ids in RAM, in a file of ``folder`` (the corpus
    spills) or dropped (``keep_ids=False``)."""
    index, part = task
    sink = None
    if not keep_ids:
        sink = Discard()
    elif folder is not None:
        sink = _PartFile(folder / f"part-{index}.i32")
    if tokenize is None:  # the keys as bytes, merged by the parent in compiled code
        batches = iter_part_batches(part, errors=errors, as_bytes=True)
        scanned = scan_text(batches, max_len, sink, decode=False)
        return tuple(scanned), getattr(sink, "path", None)
    pieces = (
        (text, ends_line)
        for texts, ends_line in iter_part_batches(part, errors=errors)
        for text in texts
    )
    scanned = scan_sentences(line_sentences(pieces, tokenize, max_len), None, sink)
    return tuple(scanned), getattr(sink, "path", None)  # a plain tuple pickles by value


def scan_parts(
    parts: list[Part],
    tokenize: Callable[[str], list[str]] | None,
    *,
    max_len: int,
    sink: Any = None,
    workers: int,
    errors: str = "strict",
    keep_ids: bool = True,
    show_progress: bool = False,
) -> Scanned:
    """:func:`scan_sentences` of the lines of ``parts``, read on ``workers`` processes: the
    same keys, ids, lengths and counts (see the module docstring); ``tokenize`` None splits
    on whitespace in compiled code (:func:`scan_text`). ``sink`` takes the ids
    as in :func:`scan_sentences`; ``keep_ids=False`` keeps none (counting only);
    ``show_progress``: a bar in bytes, moved as the parts come back."""
    folder = None if sink is None or not keep_ids else Path(sink.raw_path).parent
    job = functools.partial(_scan_part, tokenize, max_len, errors, folder, keep_ids)
    merged = InternTable() if tokenize is None else Interner()  # the serial ids
    raw_ids, lengths = array("i"), []
    counts = np.zeros(0, dtype=np.int64)
    sizes = [_part_bytes(part) for part in parts]
    bar = ProgressBar(sum(sizes), unit="B", show=show_progress)
    for k, (fields, path) in enumerate(map_in_order(job, enumerate(parts), workers)):
        scanned = Scanned(*fields)
        bar.update(sizes[k])
        to_global = _to_global(merged, scanned.keys)  # (K,) this part's ids -> the serial ones
        grown = np.zeros(len(merged), dtype=np.int64)
        grown[: len(counts)] = counts
        grown[to_global] += scanned.counts  # to_global has no repeats
        counts = grown
        lengths.append(scanned.lengths)
        if not keep_ids:
            continue
        if path is not None:
            _copy_part(path, to_global, sink)
        elif sink is not None:
            sink.write(_global_ids(scanned.ids, to_global))
        else:
            raw_ids.frombytes(memoryview(_global_ids(scanned.ids, to_global)).cast("B"))
    bar.close()
    if sink is not None:
        sink.finish()
    keys = merged.keys() if tokenize is None else merged.keys_in_order
    live = np.arange(len(keys), dtype=np.int64)
    all_lengths = np.concatenate([np.zeros(0, np.int64), *lengths])
    ids = raw_ids if sink is None and keep_ids else None
    return Scanned(keys, ids, all_lengths, live, counts)


def _to_global(merged: Interner | InternTable, keys: list[str] | tuple) -> np.ndarray:
    """The ids in ``merged`` of a part's keys, in the part's order (``(K,)`` int32), new keys
    added: str keys, or a compiled part's key bytes and their ends."""
    if isinstance(merged, InternTable):
        data, ends = keys
        starts = np.concatenate([np.zeros(1, ends.dtype), ends])[:-1]  # (K,)
        return merged.intern(data, starts, ends)
    return np.fromiter(map(merged.__getitem__, keys), dtype=np.int32, count=len(keys))


def _part_bytes(part: Part) -> int:
    """The bytes of a part's file it covers (a compressed file: its compressed size)."""
    return part.span[1] - part.span[0] if part.span else Path(part.file).stat().st_size


def _global_ids(ids: array, to_global: np.ndarray) -> np.ndarray:
    """A part's ids ``(n,)`` as the serial pass numbers them (int32, as a sink takes them)."""
    local = np.frombuffer(ids, dtype=np.int32) if len(ids) else np.zeros(0, np.int32)
    return to_global[local]


def _copy_part(path: Path, to_global: np.ndarray, sink: Any) -> None:
    """A worker's spilled part, its ids mapped to the serial ones, into ``sink``; removed."""
    try:
        with open(path, "rb") as f:
            while block := f.read(id_stream.BLOCK_TOKENS * 4):
                sink.write(to_global[np.frombuffer(block, dtype=np.int32)])
    finally:
        os.unlink(path)
