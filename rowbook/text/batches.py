"""Texts in batches of about a given number of characters: the unit of work shared out to
workers (BPE's counting and encoding, subword encoding, word counts) and of the compiled
scans (:mod:`rowbook.text.bpe.presplit`)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

__all__ = ["batch_bounds", "length_ends", "list_batches", "text_batches"]


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


def length_ends(items: Sequence[Sequence]) -> np.ndarray:
    """Where each item ends, the items laid one after another ``(B,)``: for texts, their ends
    in characters; for lists of words, in words.

    Examples
    --------
    >>> length_ends(["ab", "c", "def"]).tolist()
    [2, 3, 6]
    """
    return np.cumsum(np.fromiter(map(len, items), dtype=np.int64, count=len(items)))


def batch_bounds(ends: np.ndarray, size: int) -> list[int]:
    """Where the batches of :func:`list_batches` start and end, given where each text ends
    (:func:`length_ends`): batch ``k`` is texts ``bounds[k]:bounds[k + 1]``.

    Examples
    --------
    >>> batch_bounds(length_ends(["ab", "c", "def", "g"]), 3)
    [0, 2, 3, 4]
    """
    marks = np.arange(size, int(ends[-1]) if len(ends) else 0, size)  # (K,)
    cuts = np.unique(np.searchsorted(ends, marks) + 1).tolist()
    return [0, *(c for c in cuts if c < len(ends)), len(ends)]


def list_batches(texts: Sequence[str], size: int) -> list[Sequence[str]]:
    """:func:`text_batches` of texts already in a list, with no loop over them in Python:
    each batch closed at the first text that reaches a multiple of ``size`` characters in
    all (on 28,000 lines the loop took about as long as building their encodings' lists).

    Examples
    --------
    >>> list_batches(["ab", "c", "def", "g"], 3)
    [['ab', 'c'], ['def'], ['g']]
    """
    bounds = batch_bounds(length_ends(texts), size)
    return [texts[a:b] for a, b in itertools.pairwise(bounds) if b > a]
