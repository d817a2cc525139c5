"""Texts in batches of about a given number of characters: the unit of work shared out to
workers (BPE's counting and encoding, subword encoding, word counts) and of the compiled
scans (:mod:`rowbook.text.bpe.presplit`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

__all__ = ["text_batches"]


def text_batches(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    """Consecutive batches of ``texts``, each closed once it holds ``size`` characters.

    Examples
    --------
    >>> list(text_batches(["ab", "c", "def", "g"], 3))
    [['ab', 'c'], ['def'], ['g']]
    """
    batch, chars = [], 0
    for text in texts:
        batch.append(text)
        chars += len(text) if isinstance(text, str) else 0
        if chars >= size:
            yield batch
            batch, chars = [], 0
    if batch:
        yield batch
