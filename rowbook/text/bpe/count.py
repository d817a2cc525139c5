"""The first pass of BPE training on every core: count the pre-tokenized words.

Counting is the regex pre-split of every text and a ``Counter`` update, Python work that
holds the GIL, so it scales with processes, not threads. The texts are cut into batches of
about :data:`BATCH_CHARS` characters; a pool of worker processes counts the batches and
the parent adds the counts *in batch order*. ``Counter.update`` keeps a key where it first
appeared, so the result is the serial count, same counts and same order, and training on
it gives the same merges (tested against the serial count and against ``tokenizers``).

The pool forks the calling process (the ``fork`` start method, so workers need no import of
the caller's ``__main__``, which a notebook or ``python -`` does not have; a worker runs
only the regex and a ``Counter``, never a lock another thread of the parent may hold). It
starts only when the texts fill more than one batch, so a small corpus is counted in the
calling process; where ``fork`` does not exist (Windows) counting stays in one process.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

__all__ = ["BATCH_CHARS", "count_words_parallel"]

BATCH_CHARS = 1 << 21  # 2M characters of text per task: large enough to amortise the IPC


def _batches(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    batch, chars = [], 0
    for text in texts:
        batch.append(text)
        chars += len(text) if isinstance(text, str) else 0
        if chars >= size:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch


def _count_batch(task: tuple[dict[str, Any], list[str], list[str]]) -> Counter[str]:
    from rowbook.text.bpe.model import ByteLevelBPE

    settings, specials, texts = task
    return ByteLevelBPE(**settings).count_words(texts, special_tokens=specials, workers=1)


def count_words_parallel(settings: dict[str, Any], texts: Iterable[str], specials: Sequence[str],
                         workers: int) -> Counter[str]:  # fmt: skip
    """The serial :meth:`ByteLevelBPE.count_words` result, counted by ``workers`` processes.

    ``settings`` are the tokenizer's pre-tokenizing parameters (``pattern``,
    ``add_prefix_space``), rebuilt in each worker.
    """
    batches = _batches(texts, BATCH_CHARS)
    head = list(itertools.islice(batches, 2))
    tasks = ((settings, list(specials), batch) for batch in itertools.chain(head, batches))
    counts: Counter[str] = Counter()
    if len(head) < 2 or workers == 1 or "fork" not in multiprocessing.get_all_start_methods():
        for task in tasks:
            counts.update(_count_batch(task))
        return counts
    context = multiprocessing.get_context("fork")
    with context.Pool(min(workers, os.cpu_count() or 1)) as pool:
        for part in pool.imap(_count_batch, tasks):  # in batch order: first sightings kept
            counts.update(part)
    return counts
