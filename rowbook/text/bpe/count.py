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
same merges (tested against the serial count and against ``tokenizers``). Within a
``memory`` budget each batch's counts come as UTF-8 bytes
(:meth:`~rowbook.text.bpe.pretokenize.PreTokenizer.count_word_bytes`: no ``str`` per word)
and are added, compiled, by :func:`rowbook.text.word_counts.sum_counts`, which spills them
to disk past a quarter of it: the same counts in the same order, held compactly
(:class:`~rowbook.text.word_counts.CountedWords`).
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Iterable, Sequence

from rowbook.fork_pool import map_in_order
from rowbook.text.batches import text_batches
from rowbook.text.bpe.pretokenize import PreTokenizer
from rowbook.text.word_count_runs import WordBytes
from rowbook.text.word_counts import BATCH_CHARS, CountedWords, sum_counts

__all__ = ["BATCH_CHARS", "count_words_parallel"]


def _count_batch(pretokenizer: PreTokenizer, specials: list[str], texts: list[str]) -> Counter[str]:
    return pretokenizer.count_words(texts, specials)


def _count_batch_bytes(
    pretokenizer: PreTokenizer, specials: list[str], texts: list[str]
) -> WordBytes:
    return pretokenizer.count_word_bytes(texts, specials)


def count_words_parallel(
    pretokenizer: PreTokenizer,
    texts: Iterable[str],
    specials: Sequence[str],
    workers: int,
    memory: int | None = None,
    spill_dir: str | os.PathLike | None = None,
) -> Counter[str] | CountedWords:
    """The serial ``pretokenizer.count_words(texts, specials)``, counted by ``workers`` processes
    (within ``memory`` bytes, spilled to ``spill_dir``: :func:`~rowbook.text.word_counts.sum_counts`).

    ``pretokenizer`` is inherited by the forked workers with the job, never pickled.
    """
    job = _count_batch if memory is None else _count_batch_bytes  # a budget sums bytes
    count = functools.partial(job, pretokenizer, list(specials))
    batches = map_in_order(count, text_batches(texts, BATCH_CHARS), workers)
    return sum_counts(batches, memory, spill_dir)
