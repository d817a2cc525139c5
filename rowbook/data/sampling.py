"""The three random choices of word2vec: which words to keep, which negatives, how wide a window.

All three follow the original ``word2vec.c`` and gensim 4, so that a model trained here
sees the same distributions as one trained there:

* **Subsampling** (Mikolov et al. 2013b, as implemented in word2vec.c): a word of count
  ``c`` in a corpus of ``N`` retained words, with ``t = sample * N``, is kept with
  probability ``min(1, (sqrt(c / t) + 1) * t / c)``. The kernels compare a 32-bit
  threshold ``floor(p * (2**32 - 1))`` with a 32-bit random draw, as gensim does.
* **Negative sampling**: negatives are drawn from ``count ** ns_exponent`` (0.75 in the
  paper) through a cumulative table of integers in ``[0, 2**31 - 1]``; a uniform integer
  below the last entry is located by binary search (``bisect_left``).
* **Window shrinking**: each centre word gets a random ``b`` in ``[0, window)`` and uses
  the effective window ``window - b``, which weights near context words more.

The random integers come from word2vec.c's 48-bit linear congruential generator
(``state * 25214903917 + 11 mod 2**48``, Java's ``Random``), whose upper bits
``state >> 16`` are the draw. :func:`job_seed` derives an independent starting state for
every (seed, epoch, job), which is what makes one-worker training bit-reproducible and
resumable mid-run.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = [
    "LCG_MASK",
    "LCG_MULTIPLIER",
    "draw_negative",
    "draw_negative_for",
    "job_seed",
    "keep_probabilities",
    "lcg_next",
    "mix64",
    "negative_guide",
    "negative_table",
    "sample_thresholds",
    "window_bounds",
]

LCG_MULTIPLIER = 25214903917
LCG_MASK = (1 << 48) - 1
NEGATIVE_TABLE_DOMAIN = 2**31 - 1


def keep_probabilities(counts: np.ndarray, sample: float) -> np.ndarray:
    """Probability that each occurrence of a word survives subsampling (gensim 4's rule).

    ``sample < 1`` is a fraction of the retained corpus, ``t = sample * sum(counts)``;
    ``sample >= 1`` means "downsample words more frequent than ``sample``", with gensim's
    ``t = int(sample * (3 + sqrt(5)) / 2)``; ``sample == 0`` keeps everything.

    Examples
    --------
    >>> keep_probabilities(np.array([100, 10, 1]), 0.01).round(4)
    array([0.1165, 0.4442, 1.    ])
    """
    counts = np.asarray(counts, dtype=np.float64)
    total = counts.sum()
    if not sample:
        threshold = total
    elif sample < 1.0:
        threshold = sample * total
    else:
        threshold = float(int(sample * (3 + np.sqrt(5)) / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = (np.sqrt(counts / threshold) + 1) * (threshold / counts)
    return np.minimum(np.nan_to_num(p, nan=1.0, posinf=1.0), 1.0)


def sample_thresholds(counts: np.ndarray, sample: float) -> np.ndarray:
    """``uint32(p * (2**32 - 1))``: a word is dropped when a 32-bit draw exceeds it.

    Examples
    --------
    >>> sample_thresholds(np.array([100, 1]), 0.01).tolist()
    [475018040, 4294967295]
    """
    return (keep_probabilities(counts, sample) * (2**32 - 1)).astype(np.uint32)


def negative_table(
    counts: np.ndarray, ns_exponent: float = 0.75, domain: int = NEGATIVE_TABLE_DOMAIN
) -> np.ndarray:
    """gensim's ``cum_table``: running sums of ``count ** ns_exponent`` scaled to ``domain``.

    Word ``i`` owns the integers ``[table[i-1], table[i])``, so it is drawn with
    probability ``count_i ** e / sum(count ** e)``. Rounding is Python's (half to even),
    applied to the float64 running sum, as gensim's ``make_cum_table``.

    Examples
    --------
    >>> negative_table(np.array([16, 1]), 0.75, domain=9).tolist()
    [8, 9]
    """
    weights = np.asarray(counts, dtype=np.float64) ** float(ns_exponent)
    cumulative = np.cumsum(weights)
    if len(cumulative) == 0:
        return np.zeros(0, dtype=np.uint32)
    return np.round(cumulative / cumulative[-1] * domain).astype(np.uint32)


@numba.njit(nogil=True, cache=True)
def lcg_next(state: np.uint64) -> np.uint64:  # pragma: no cover - compiled
    """One step of word2vec.c's generator; the draw before the step is ``state >> 16``."""
    return (state * np.uint64(LCG_MULTIPLIER) + np.uint64(11)) & np.uint64(LCG_MASK)


GUIDE_SHIFT = 15


def negative_guide(table: np.ndarray, shift: int = GUIDE_SHIFT) -> np.ndarray:
    """Where ``bisect_left`` lands for the first draw of each block of ``2**shift`` draws.

    A draw ``x`` lies in block ``b = x >> shift``, so its answer is in
    ``[guide[b], guide[b + 1]]``: the binary search of :func:`draw_negative` starts from
    that range (one or two entries for most blocks) instead of the whole table, and gives
    the same index. The guide of a 2**31-1 domain is 65,537 int32 (256 KiB).

    Examples
    --------
    >>> negative_guide(np.array([40000, 70000, 70001], dtype=np.uint32)).tolist()
    [0, 0, 1, 3]
    """
    n_blocks = (int(table[-1]) >> shift) + 1 if len(table) else 1
    starts = np.arange(n_blocks + 1, dtype=np.int64) << shift
    return np.searchsorted(table, starts, side="left").astype(np.int32)


@numba.njit(nogil=True, cache=True)
def draw_negative(
    table: np.ndarray, guide: np.ndarray, state: np.uint64
) -> np.int64:  # pragma: no cover
    """Word index for the draw ``x = (state >> 16) % table[-1]``: ``bisect_left(table, x)``.

    The search runs over ``[guide[b], guide[b + 1]]`` for ``b = x >> 15`` (see
    :func:`negative_guide`); the modulo is two subtractions for gensim's 2**31-1 domain.
    """
    n = table.shape[0]
    last = np.uint64(table[n - 1])
    x = state >> np.uint64(16)
    if last > np.uint64(1 << 30):
        while x >= last:  # x < 2**32 <= 4 * last: at most 3 rounds
            x -= last
    else:
        x = x % last
    b = x >> np.uint64(GUIDE_SHIFT)
    lo, hi = np.int64(guide[b]), min(np.int64(guide[b + 1]) + 1, n)
    while hi > lo:
        mid = (lo + hi) >> 1
        if np.uint64(table[mid]) >= x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(nogil=True, cache=True, inline="always")
def draw_negative_for(table, guide, state, target, redraw):  # pragma: no cover - compiled
    """A negative for ``target`` and the generator state after it: :func:`draw_negative`
    at ``state``, and with ``redraw`` drawn again while it is ``target`` (fastText's
    ``getNegative``; without it the caller skips such a draw, as word2vec.c and gensim do).
    A table of one word is never drawn again: it has no other word to give."""
    negative = draw_negative(table, guide, state)
    state = lcg_next(state)
    while redraw and negative == target and table.shape[0] > 1:
        negative = draw_negative(table, guide, state)
        state = lcg_next(state)
    return negative, state


@numba.njit(nogil=True, cache=True, inline="always")
def window_bounds(i: int, start: int, end: int, window: int, b: int) -> tuple[int, int]:
    """Positions ``[lo, hi)`` around ``i`` seen with shrink ``b``, clipped to ``[start, end)``.

    The effective half-width is ``window - b`` (word2vec.c's ``b = rand % window``), so
    ``b = 0`` is the full window and ``b = window - 1`` only the adjacent words. Compiled,
    so the training kernels and their plain-Python references share this one definition.

    Examples
    --------
    >>> window_bounds(5, 0, 20, window=5, b=0), window_bounds(5, 0, 20, window=5, b=4)
    ((0, 11), (4, 7))
    >>> window_bounds(1, 0, 3, window=5, b=2)
    (0, 3)
    """
    return max(i - window + b, start), min(i + window + 1 - b, end)


def mix64(z: np.ndarray | int) -> np.ndarray:
    """SplitMix64's output function (Steele, Lea and Flood 2014), elementwise on uint64.

    A bijection of 64-bit integers that spreads every input bit over the output: distinct
    inputs give distinct outputs. Arithmetic wraps modulo 2**64. Returns a new array.
    SplitMix64 seeded with 0 returns ``mix64(k * 0x9E3779B97F4A7C15)`` as its ``k``-th
    number; its published first two are ``0xe220a8397b1dcdaf`` and ``0x6e789e6aa1b965f4``:

    Examples
    --------
    >>> [hex(int(z)) for z in mix64(np.array([1, 2], np.uint64) * np.uint64(0x9E3779B97F4A7C15))]
    ['0xe220a8397b1dcdaf', '0x6e789e6aa1b965f4']
    """
    z = np.array(z, dtype=np.uint64)  # a copy, mixed in place
    z ^= z >> np.uint64(30)
    z *= np.uint64(0xBF58476D1CE4E5B9)
    z ^= z >> np.uint64(27)
    z *= np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    return z


def job_seed(seed: int, epoch: int, job: int) -> int:
    """A 48-bit generator state for one job, mixed from ``(seed, epoch, job)`` by SplitMix64.

    Every job starts from its own state, so results do not depend on which thread ran it
    or on whether training was resumed from a checkpoint.

    Examples
    --------
    >>> job_seed(1, 0, 0) == job_seed(1, 0, 0) != job_seed(1, 0, 1)
    True
    """
    z = (seed * 0x9E3779B97F4A7C15 + epoch * 0xBF58476D1CE4E5B9 + job * 0x94D049BB133111EB) % 2**64
    return int(mix64(z)) & LCG_MASK
