"""Byte-pair encoding as Sennrich et al. (2016) first wrote it, and a recount-every-merge
reference for the fast trainer.

BPE starts from words spelled as single symbols and repeatedly replaces the most
frequent adjacent pair of symbols, counted over the corpus (each word weighted by its
frequency), by a new symbol. The list of merges, in the order they were learned, is the
model; a new word is segmented by replaying them.

Algorithm 1 of the paper works on characters with an end-of-word symbol ``</w>`` (so
``"est</w>"`` at the end of "newest" differs from ``"est"`` inside "estimate"), recounts
every pair after each merge, and takes the first pair of maximal count in the order the
pairs were first met. :func:`learn_bpe` is that algorithm; on the paper's toy corpus it
gives the paper's merges:

Examples
--------
>>> corpus = {"low": 5, "lower": 2, "newest": 6, "widest": 3}
>>> [step.token for step in learn_bpe(corpus, 10)]
['es', 'est', 'est</w>', 'lo', 'low', 'ne', 'new', 'newest</w>', 'low</w>', 'wi']
>>> segment("lowest", learn_bpe(corpus, 10))
['low', 'est</w>']
>>> print(learn_bpe(corpus, 1)[0])
'e' + 's' -> 'es' (9)

:func:`learn_merges_recount` is the same recount loop on integer symbol ids with the
tie-breaking of :class:`~rowbook.text.ByteLevelBPE` (and of Hugging Face ``tokenizers``):
highest count first, then the smallest pair ``(left id, right id)``. It is the plain
reference that the incremental trainer is tested against, and the "naive" row of the
benchmark.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["MergeStep", "count_pairs", "learn_bpe", "learn_merges_recount", "merge_pair", "segment"]


@dataclass(frozen=True)
class MergeStep:
    """One learned merge: ``left + right -> token``, seen ``count`` times when it was chosen.

    ``count`` is ``None`` for merges loaded from a file that does not record it.
    """

    left: str
    right: str
    count: int | None = None

    @property
    def token(self) -> str:
        """The new symbol, ``left + right``."""
        return self.left + self.right

    def __str__(self) -> str:
        """``'e' + 's' -> 'es' (9)``: one line of a merge trace."""
        count = "" if self.count is None else f" ({self.count})"
        return f"{self.left!r} + {self.right!r} -> {self.token!r}{count}"


def count_pairs(words: Mapping[tuple[Hashable, ...], int]) -> dict[tuple, int]:
    """Frequency of each adjacent symbol pair, in order of first appearance.

    Examples
    --------
    >>> count_pairs({("l", "o", "w"): 5, ("l", "o", "t"): 2})
    {('l', 'o'): 7, ('o', 'w'): 5, ('o', 't'): 2}
    """
    pairs: dict[tuple, int] = {}
    for symbols, freq in words.items():
        for pair in itertools.pairwise(symbols):
            pairs[pair] = pairs.get(pair, 0) + freq
    return pairs


def merge_pair(symbols: tuple, pair: tuple, new: Hashable) -> tuple:
    """Replace each occurrence of ``pair`` in ``symbols``, left to right, by ``new``.

    Examples
    --------
    >>> merge_pair(("a", "a", "a", "b"), ("a", "a"), "aa")
    ('aa', 'a', 'b')
    """
    out, i = [], 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(new)
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return tuple(out)


def learn_bpe(
    word_counts: Mapping[str, int], num_merges: int, *, end_of_word: str = "</w>"
) -> list[MergeStep]:
    """Sennrich et al. (2016), Algorithm 1: character-level BPE with an end-of-word symbol.

    Parameters
    ----------
    word_counts : Mapping[str, int]
        Word -> frequency. Its iteration order decides ties, as in the paper's code.
    num_merges : int
        Number of merges to learn (fewer if no pair is left).
    end_of_word : str, default "</w>"
        Symbol appended to every word; ``""`` appends none.

    Returns
    -------
    list[MergeStep]
        The merges in the order learned, each with the pair's count at that step.
    """
    if not isinstance(num_merges, int) or num_merges < 0:
        raise ValueError(f"num_merges must be an int >= 0, got {num_merges!r}")
    suffix = (end_of_word,) if end_of_word else ()
    words = {tuple(word) + suffix: freq for word, freq in word_counts.items()}
    steps = []
    for _ in range(num_merges):
        pairs = count_pairs(words)
        if not pairs:
            break
        best = max(pairs, key=pairs.__getitem__)  # first maximal pair in first-seen order
        words = {merge_pair(s, best, best[0] + best[1]): f for s, f in words.items()}
        steps.append(MergeStep(best[0], best[1], pairs[best]))
    return steps


def segment(word: str, merges: Sequence[MergeStep], *, end_of_word: str = "</w>") -> list[str]:
    """Split a word by replaying ``merges`` in the order they were learned."""
    symbols = tuple(word) + ((end_of_word,) if end_of_word else ())
    for step in merges:
        symbols = merge_pair(symbols, (step.left, step.right), step.token)
    return list(symbols)


def learn_merges_recount(
    words: Mapping[tuple[int, ...], int],
    tokens: Sequence[bytes | str],
    vocab_size: int,
    *,
    min_count: int = 0,
) -> list[tuple[int, int, int, int]]:
    """Reference BPE trainer on symbol ids: recount every pair after every merge.

    ``tokens[i]`` spells symbol ``i``; a merge whose spelling already exists reuses that
    id. Learning stops when ``vocab_size`` distinct tokens exist, when no pair is left,
    or when the best count is below ``min_count`` (``tokenizers``' ``min_frequency``).

    Returns ``(left, right, new_id, count)`` per merge.

    Examples
    --------
    >>> learn_merges_recount({(0, 1, 2): 3, (1, 2): 1}, ["a", "b", "c"], 5)
    [(1, 2, 3, 4), (0, 3, 4, 3)]
    """
    tokens = list(tokens)
    index = {t: i for i, t in enumerate(tokens)}
    merges = []
    while len(index) < vocab_size:
        pairs = count_pairs(words)
        if not pairs:
            break
        (left, right), count = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if count < max(min_count, 1):
            break
        spelled = tokens[left] + tokens[right]
        new_id = index.setdefault(spelled, len(tokens))
        if new_id == len(tokens):
            tokens.append(spelled)
        merged: dict[tuple[int, ...], int] = {}
        for symbols, freq in words.items():  # two spellings may now coincide: add them
            key = merge_pair(symbols, (left, right), new_id)
            merged[key] = merged.get(key, 0) + freq
        words = merged
        merges.append((left, right, new_id, count))
    return merges
