"""The first pass of subword training: words (or sentences) and their counts, on every core.

WordPiece and Unigram train on the words of the corpus after normalizing and
pre-tokenizing, each with its count, as ``tokenizers``' trainers ``feed`` them. Counting is
regex and dictionary work per text, Python that holds the GIL, so it scales with processes:
:func:`count_words` cuts the texts into batches that this process and forked ones count
(:func:`rowbook.text.bpe.count.map_in_order`, the pool byte-level BPE counts with) and adds
the results in batch order, so the counts and their order (first sighting) are those of a
serial count whatever ``workers`` is.

``split`` is the tokenizer's ``str -> list[str]`` (normalize, then pre-tokenize); it is
inherited by the forked workers, never pickled.

Examples
--------
>>> count_words(["the cat", "the hat"], str.split)
Counter({'the': 2, 'cat': 1, 'hat': 1})
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable, Iterable

from tqdm.auto import tqdm

from rowbook.checks import check_int
from rowbook.text.bpe.count import BATCH_CHARS, map_in_order, text_batches

__all__ = ["count_words"]


def _count_batch(split: Callable[[str], list[str]], texts: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for text in texts:
        if not isinstance(text, str):
            raise TypeError(f"texts must be str, got {type(text).__name__}")
        counts.update(split(text))
    return counts


def count_words(texts: Iterable[str], split: Callable[[str], list[str]], *, workers: int | None = 1,
                show_progress: bool = False) -> Counter[str]:  # fmt: skip
    """The words ``split`` finds in ``texts``, with their counts, in first-sighting order.

    ``workers`` processes count batches of texts (``None``: one per CPU).
    """
    workers = check_int("workers", workers, 1, allow_none=True) or os.cpu_count() or 1
    texts = tqdm(texts, desc="count words", unit="text", disable=not show_progress)
    counts: Counter[str] = Counter()
    job = functools.partial(_count_batch, split)
    for part in map_in_order(job, text_batches(texts, BATCH_CHARS), workers):
        counts.update(part)  # in batch order: first sightings kept
    return counts
