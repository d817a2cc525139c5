"""The first pass of subword training: words and their counts, on every core, within a memory budget.

WordPiece and Unigram train on the words of the corpus after normalizing and
pre-tokenizing, each with its count, as ``tokenizers``' trainers ``feed`` them. Counting is
regex and dictionary work per text, Python that holds the GIL, so it scales with processes:
:func:`count_words` cuts the texts into batches that this process and forked ones count
(:func:`rowbook.fork_pool.map_in_order`, the pool byte-level BPE counts with) and adds
the results in batch order, so the counts and their order (first sighting) are those of a
serial count whatever ``workers`` is. ``split`` is the tokenizer's ``str -> list[str]``
(normalize, then pre-tokenize); it is inherited by the forked workers, never pickled.

Within ``memory`` bytes (a corpus whose distinct words would not fit), counts are spilled
and merged as the co-occurrence counts of GloVe are (:mod:`rowbook.data.cooccurrence_runs`),
but keyed by strings, compiled (:mod:`rowbook.text.word_count_runs`): each batch's counts,
as UTF-8 bytes, are added to an interning table (about ``len(word) + 60`` bytes a word);
when they fill a quarter of the budget they go to one of 16 partition files by a
hash of the word, with the position where each word was first seen; each partition is
then summed alone (one that is still too large is split again by other bits of the hash)
and the partitions are put back in first-sighting order. The result is a
:class:`CountedWords`: the words in one string, their bounds and counts in arrays, about
``len(word) + 16`` bytes a word instead of the ~150 of a ``dict`` entry, which the trainers
read without building Python strings. Counts and order are exactly those of a count in RAM.

Examples
--------
>>> count_words(["the cat", "the hat"], str.split)
Counter({'the': 2, 'cat': 1, 'hat': 1})
>>> counted = count_words(["the cat", "the hat"], str.split, memory=1 << 20)
>>> dict(counted), counted.spilled
({'the': 2, 'cat': 1, 'hat': 1}, 0)
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from rowbook._threads import resolve_workers
from rowbook.checks import InputTypeError, ParameterError, check_int, check_number
from rowbook.fork_pool import map_in_order
from rowbook.text import word_count_runs
from rowbook.text.batches import text_batches
from rowbook.text.utf8 import char_ends
from rowbook.text.word_count_runs import (
    HeldWords,
    WordBytes,
    in_first_order,
    spill,
    sum_partition,
    word_bytes,
)

__all__ = ["BATCH_CHARS", "CountedWords", "as_counted", "budget_bytes", "count_words", "sum_counts"]

BATCH_CHARS = 1 << 21  # 2M characters of text per counting task: large enough to amortise the IPC


class CountedWords(Mapping[str, int]):
    """Words and counts, compact: ``text`` holds the words one after another, word ``i`` being
    ``text[bounds[i]:bounds[i + 1]]`` with count ``counts[i]``, in first-sighting order.

    Examples
    --------
    >>> words = CountedWords("thecat", np.array([0, 3, 6]), np.array([2, 1]))
    >>> list(words.items()), words["cat"]
    ([('the', 2), ('cat', 1)], 1)
    """

    def __init__(self, text: str, bounds: np.ndarray, counts: np.ndarray, spilled: int = 0) -> None:
        self.text, self.bounds, self.counts, self.spilled = text, bounds, counts, spilled
        self._index: dict[str, int] | None = None

    def __len__(self) -> int:
        return self.counts.size

    def __iter__(self) -> Iterator[str]:
        text, bounds = self.text, self.bounds.tolist()
        return (text[bounds[i] : bounds[i + 1]] for i in range(len(self)))

    def __getitem__(self, word: str) -> int:
        if self._index is None:  # built on first lookup only: the trainers never look up
            self._index = {w: i for i, w in enumerate(self)}
        return int(self.counts[self._index[word]])

    def values(self) -> Iterator[int]:  # type: ignore[override]
        return iter(self.counts.tolist())


_UNITS = {"": 2**30, "b": 1, "kb": 2**10, "mb": 2**20, "gb": 2**30, "tb": 2**40}
_UNITS |= {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def budget_bytes(memory: float | str | None) -> int | None:
    """A budget (``memory=`` of the trainers, ``--memory`` of the CLI) in bytes: a number of
    gigabytes, or a size such as ``"1GB"`` or ``"512 MB"`` (binary units: 1 GB is 2**30
    bytes, as ``GiB``).

    Examples
    --------
    >>> budget_bytes(0.5), budget_bytes("1GB"), budget_bytes("512 MiB"), budget_bytes(None)
    (536870912, 1073741824, 536870912, None)
    """
    if memory is None:
        return None
    if isinstance(memory, str):
        number = memory.strip().lower().rstrip("bikmgt ")
        unit = memory.strip().lower()[len(number) :].replace(" ", "")
        try:
            value = float(number)
        except ValueError:
            value = -1.0
        if unit not in _UNITS or not value > 0:
            raise ParameterError(
                "memory", memory, "a number of gigabytes or a size such as '1GB' or '512MB'"
            )
        return check_int("memory", int(value * _UNITS[unit]), 1 << 20)
    check_number("memory", memory, 0.001)
    return int(memory * 2**30)


def as_counted(word_counts: Mapping[str, int]) -> CountedWords:
    """``word_counts`` as a :class:`CountedWords` (itself if it is one), empty words left out.

    Examples
    --------
    >>> counted = as_counted({"ab": 2, "": 5, "c": 1})
    >>> counted.text, counted.bounds.tolist(), counted.counts.tolist()
    ('abc', [0, 2, 3], [2, 1])
    """
    if isinstance(word_counts, CountedWords):
        return word_counts
    for word, count in word_counts.items():
        if (
            not isinstance(word, str)
            or isinstance(count, bool)
            or not isinstance(count, int | np.integer)
            or count < 0
        ):
            raise InputTypeError(f"word_counts must map str to int >= 0, got {word!r}: {count!r}")
    words = [w for w in word_counts if w]
    bounds = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, words), dtype=np.int64, count=len(words)), out=bounds[1:])
    counts = np.fromiter((word_counts[w] for w in words), dtype=np.int64, count=len(words))
    return CountedWords("".join(words), bounds, counts)


def _count_batch(split: Callable[[str], list[str]], texts: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for text in texts:
        if not isinstance(text, str):
            raise InputTypeError(f"texts must be str, got {type(text).__name__}")
        counts.update(split(text))
    return counts


def count_words(
    texts: Iterable[str],
    split: Callable[[str], list[str]],
    *,
    workers: int | None = 1,
    memory: int | None = None,
    spill_dir: str | os.PathLike | None = None,
    show_progress: bool = False,
) -> Counter[str] | CountedWords:
    """The words ``split`` finds in ``texts``, with their counts, in first-sighting order.

    Parameters
    ----------
    workers : int, optional
        Processes counting batches of texts (``None``: one per core the process may use).
    memory : int, optional
        Bytes the counts may hold in RAM; past a quarter of it (the held arrays, grown by
        doubling, hold up to twice that) they are spilled to temporary files in
        ``spill_dir`` and merged (module docstring), and a :class:`CountedWords` is returned.
    """
    workers = resolve_workers(workers)
    texts = tqdm(texts, desc="count words", unit="text", disable=not show_progress)
    batches = map_in_order(
        functools.partial(_count_batch, split), text_batches(texts, BATCH_CHARS), workers
    )
    return sum_counts(batches, memory, spill_dir)


def sum_counts(
    batches: Iterable[Mapping[str, int]],
    memory: int | None = None,
    spill_dir: str | os.PathLike | None = None,
) -> Counter[str] | CountedWords:
    """The counts of ``batches`` added in order (first sightings kept): a ``Counter``, or
    within ``memory`` bytes a :class:`CountedWords`, spilled to ``spill_dir`` and merged
    when they fill a quarter of it (the module docstring). The trainers' counters (this
    module's :func:`count_words`, byte-level BPE's :mod:`rowbook.text.bpe.count`) end here.

    Examples
    --------
    >>> sum_counts([{"a": 1, "b": 2}, {"c": 1, "a": 3}])
    Counter({'a': 4, 'b': 2, 'c': 1})
    """
    if memory is None:
        counts: Counter[str] = Counter()
        for part in batches:
            counts.update(part)  # in batch order: first sightings kept
        return counts
    check_int("memory", memory, 1 << 20)
    with tempfile.TemporaryDirectory(prefix="rowbook-words-", dir=spill_dir) as folder:
        return _budgeted(batches, memory, Path(folder))


def _budgeted(
    batches: Iterable[Mapping[str, int] | WordBytes], memory: int, folder: Path
) -> CountedWords:
    held, spilled = HeldWords(), 0
    files = [folder / f"part{p}" for p in range(word_count_runs.PARTITIONS)]
    for part in batches:
        held.add(part if isinstance(part, WordBytes) else word_bytes(part))
        if held.nbytes > memory // 4:  # the arrays hold up to twice that (HeldWords.nbytes)
            _spill(held, files)
            held.clear()
            spilled += 1
    if not spilled:
        return _counted(WordBytes(*held.arrays()[:3]), 0)
    _spill(held, files)
    del held
    parts = [table for path in files for table in sum_partition(path, memory, 0)]
    return _counted(in_first_order(parts), spilled + 1)  # parts emptied as they are merged


def _spill(held: HeldWords, files: list[Path]) -> None:
    """Append the held counts to the partition files (:func:`~rowbook.text.word_count_runs.spill`)."""
    spill(held, files, 0)


def _counted(words: WordBytes, spilled: int) -> CountedWords:
    """``words`` as a :class:`CountedWords` (their text, bounds in characters)."""
    data, ends, counts = words
    text = data.tobytes().decode("utf-8")
    bounds = np.zeros(ends.size + 1, dtype=np.int64)
    bounds[1:] = ends if len(text) == data.size else char_ends(data, ends)
    return CountedWords(text, bounds, counts, spilled)
