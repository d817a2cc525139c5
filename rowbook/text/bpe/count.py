"""BPE's word counts on every core: batches of texts on the fork pool, added in order.

Counting the pre-tokenized words (the first pass of training) cuts the special tokens out
of each text and splits the rest, in Python (a regex) or, for GPT-2's pattern, in a
compiled scan (:func:`rowbook.text.bpe.presplit.count_words`) that still ends in a
``Counter`` of ``str`` per batch; it scales with processes. The texts are cut into
batches of about ``size`` characters (:func:`~rowbook.text.batches.text_batches`); the
calling process and ``workers - 1`` forked ones count a batch each, taking the next when free
(:func:`rowbook.fork_pool.map_in_order`), and the counts come back *in batch order*. The
parent adds them in that order. ``Counter.update`` keeps a key where it first appeared, so
the result is the serial count, same counts and same order, and training on it gives the
same merges (tested against the serial count and against ``tokenizers``).
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence

from rowbook.fork_pool import map_in_order
from rowbook.text.batches import text_batches
from rowbook.text.bpe.pretokenize import PreTokenizer

__all__ = ["BATCH_CHARS", "count_words_parallel"]

BATCH_CHARS = 1 << 21  # 2M characters of text per counting task: large enough to amortise the IPC


def _count_batch(pretokenizer: PreTokenizer, specials: list[str], texts: list[str]) -> Counter[str]:
    return pretokenizer.count_words(texts, specials)


def count_words_parallel(
    pretokenizer: PreTokenizer, texts: Iterable[str], specials: Sequence[str], workers: int
) -> Counter[str]:
    """The serial ``pretokenizer.count_words(texts, specials)``, counted by ``workers`` processes.

    ``pretokenizer`` is inherited by the forked workers with the job, never pickled.
    """
    specials = list(specials)
    counts: Counter[str] = Counter()
    count = functools.partial(_count_batch, pretokenizer, specials)
    for part in map_in_order(count, text_batches(texts, BATCH_CHARS), workers):
        counts.update(part)  # in batch order: first sightings kept
    return counts
