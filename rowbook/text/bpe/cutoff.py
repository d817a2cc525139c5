"""Whether ``encode_batch`` pays on other workers: a probe of the first characters counts the
work, carried to the rest, against a cut-off (:mod:`rowbook.text.bpe.batch` runs it).

Where even the most work the texts could take (every byte looked up and merged, every
character a word) stays below the cut-off, nothing is probed (:func:`never_pays`).
Otherwise the first :data:`PROBE_CHARS` characters are encoded on the calling thread in two
halves, and the word cache counts their work (:func:`counters`): bytes looked up, bytes
merged and words looked up (:attr:`WordCache.read <rowbook.text.bpe.word_cache.WordCache.read>`,
:attr:`~rowbook.text.bpe.word_cache.WordCache.merged`,
:attr:`~rowbook.text.bpe.word_cache.WordCache.looked_up`). Carried to the characters left
(the merges as new words grow, from how many fewer the second half merged: Heaps' law,
:func:`rest_work`), with a weight for each text left, that work says whether the others
pay: a cost model of one worker's CPU time, not a count of characters, since a character
of Han text without spaces costs five to six of English cold (three bytes, and long words
each new), a warm cache costs a third of a cold one, and many short texts cost more than
one long one (a list and an ``Encoding`` each). Each way of sharing the work counts what it
shares (:data:`Weights`):

* threads (GPT-2's settings, the compiled pre-split: :data:`THREADS`) share the scan and
  the merges; the lists of ids and the ``Encoding`` s are the calling thread's either way.
  Their work is in bytes looked up, :data:`MERGE_WORK` a byte merged (less than its
  CPU, since both threads merge the words new to both), from :data:`THREAD_WORK`. Since
  that is at least a byte a character, from as many characters after the probe as the
  cut-off there is no probe: every batch goes to the threads at once. Before threads encode
  a probe, the words of its first half are only looked up (:func:`known_below`): when
  every word the cache lacks, counted as merged each time it comes, still leaves the work
  below the cut-off (a warm cache), no probe is encoded apart and the texts are encoded in
  one call.
* processes (the other settings, words cut by a regex in Python: :data:`PROCESSES`) share
  the regex, the lookups and the lists; each merges the words new to it and hands them
  back, so merges are not counted. Their work is in words looked up, :data:`TEXT_WORK` a
  text, from :data:`POOL_WORK`.

The constants are fitted by timing one worker's CPU and one worker against two
(``benchmarks/fit_encode_cutoff.py``; ``--processes`` for the processes'), and checked on
texts they were not fitted on (``benchmarks/bench_defaults.py --only text``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from rowbook.text.batches import length_ends
from rowbook.text.bpe.encoder import Encoder
from rowbook.text.bpe.word_cache import WordCache

__all__ = [
    "MERGE_WORK",
    "POOL_WORK",
    "PROBE_CHARS",
    "PROCESSES",
    "TEXT_WORK",
    "THREADS",
    "THREAD_WORK",
    "Weights",
    "counters",
    "estimates",
    "known_below",
    "never_pays",
    "probe_pays",
    "rest_work",
]

# threads: work in bytes looked up (7.3 ns of one worker's CPU): benchmarks/fit_encode_cutoff.py
#: A byte merged in the threads' count. It costs one worker about 12 bytes looked up (84 ns),
#: but two threads each merge the words new to them, the common ones twice, so it saves
#: less: weighed at 12 (from 440,000) the rule sent English lines of 262K characters cold to
#: two threads, which lost 0.70-0.89x. The weight and the cut-off are chosen together on the
#: wall time of one thread against two, on four texts at 32K-4M characters cold and warm
#: (fit_encode_cutoff.py, 36 runs: the least loss, weights 1-5 alike, 3 leaving the widest
#: gap around its cut-off): at 3 and 650,000 one run goes the wrong way by more than 5%
#: (Han text at 32K cold, where two paid 1.09x), at 12 and 440,000 four. Checked on the 36
#: thread rows of two bench_defaults.py runs (the median of the two), from the probe's
#: counts as the rule takes them: none wrong by more than 5%, against two (NewsArticles and
#: the tweets at 262K cold, 0.79x and 0.89x). Up to 575,000 two threads lost on every run
#: but one (long words at 262K cold, 1.03x), from 706,000 they paid but on one (Han text at
#: 262K warm, 0.97x; 1.20x in the other).
MERGE_WORK = 3
THREAD_WORK = 650_000  # from which a second thread pays

# processes: work in words looked up (0.34 us of one worker's CPU on the regex path, warm),
# fitted on seven texts of other shapes and checked on four more:
# benchmarks/fit_encode_cutoff.py --processes
TEXT_WORK = 10  # a text: its segments, its list and its Encoding (3.4 us)
#: The work (words looked up, :data:`TEXT_WORK` a text) from which forked processes pay:
#: about 128 ms of one worker's CPU, against the pool's fork, the texts and ids through
#: pipes and the parent's share of the lists. Counted in bytes (bytes looked up + 1.5 x ids
#: + 170 x texts, from 4.7M) the rule kept one worker on the health tweets at 1M characters,
#: where two processes paid 1.06-1.14x, while long agglutinative-like words at 2M, of more
#: bytes, lost 0.83-0.89x with two: a tweet's short words cost more a byte. Over 44 runs of
#: eleven texts at 1M and 2M characters (NewsArticles lines, in pairs and in paragraphs, the
#: tweets and their paragraphs, Han text, long words in lines of 20 and of 4, random letters
#: in lines of 20 and of 5, one CJK character a token), words and texts sent 41 the faster
#: way or within 3% of it, bytes 29; fitted on seven, the four others 14 of 16 (bytes 8).
#: Two more fits gave 6.8 words a text and 344K (a busier host: one worker up to 1.8x
#: slower on the same runs), 12 and 432K: the same choices but for Han text at 1M (two
#: paid 1.31x) and the tweets at 1M (two paid 0.93x in that run, 1.08-1.20x in four others).
POOL_WORK = 380_000

#: What encode_batch encodes first alone to count the work of the rest, in two halves (the
#: second not apart when the first shows the rest below the cut-off). Before the halves:
#: 16,384 characters for threads, the first batch (128K and more) for processes; the rule
#: took 0.72-0.76 of two threads' time on 65K characters of Han text, cold (a quarter of it
#: encoded alone), and 0.88 of two processes' at 1M. 4,096 and 2,048 made the same choices
#: on the four texts of bench_defaults.py and on two more (one CJK character a token, the
#: generated mail's words); 2,048 costs half as much alone: the rule within 5% of the
#: better of one and two threads on 33 and 34 of 36 rows, 4,096 on 32 and 32 (idle).
PROBE_CHARS = 1 << 11


class Weights(NamedTuple):
    """What a byte looked up, a byte merged, a word looked up and a text weigh in the work a
    probe counts (:func:`rest_work`), in the cut-off's unit."""

    byte: float
    merged: float
    word: float
    text: float


THREADS = Weights(1, MERGE_WORK, 0, 0)
"""The threads' count, in bytes looked up: the scan and the merges they share (the lists and
``Encoding`` s are the calling thread's whatever the others do)."""

PROCESSES = Weights(0, 0, 1, TEXT_WORK)
"""The processes' count, in words looked up: the regex, lookups and lists they share (each
merges the words new to it)."""


def counters(cache: WordCache) -> tuple[int, int, int]:
    """The cache's work counters: bytes looked up, bytes merged, words looked up."""
    return cache.read, cache.merged, cache.looked_up


def rest_work(
    counts: list[tuple[int, int, int]],
    chars: list[int],
    total: int,
    texts_left: int,
    weights: Weights,
) -> float:
    """The work of a text's characters after a probe's, in the cut-off's unit, from the
    cache's :func:`counters` before, between and after the probe's two halves (``counts``),
    the characters at the end of each half (``chars``), the text's (``total``) and the texts
    left after the probe.

    ``weights``: what a byte looked up, a byte merged, a word looked up and a text weigh
    (:data:`Weights`). Bytes and words looked up go as the characters. The bytes merged are
    those of words not seen before, which grow as a power of the text read (Heaps' law),
    ``n ** beta``, ``beta`` from the halves: 1 where the second merged as much as the first
    (Han text without spaces, each clause one word), about 0.8 on English-like lines, whose
    words come again; counts with nothing between the halves (the first half's merges 0)
    take ``beta = 1``, the characters. Cold, from a probe of 2,048 characters of
    NewsArticles, the rest's work came out 1.13x the true work at 65K characters and 1.54x
    at 1M this way, 1.83x and 3.47x taken as the characters; on the tweets and long
    agglutinative-like words 0.88-1.53x against 1.43-2.89x, on Han text 0.99x and 1.01-1.02x
    (``fit_encode_cutoff.py --probe``).
    """
    (read0, merged0, words0), (_, merged1, _), (read2, merged2, words2) = counts
    linear = (total - chars[1]) / max(chars[1], 1)
    looked_up = weights.byte * (read2 - read0) + weights.word * (words2 - words0)
    work = looked_up * linear + weights.text * texts_left
    first, both = merged1 - merged0, merged2 - merged0
    if both == 0 or weights.merged == 0:
        return work
    beta = 1.0
    if 0 < first < both and chars[0] < chars[1]:
        beta = min(1.0, math.log(both / first) / math.log(chars[1] / chars[0]))
    return work + weights.merged * both * ((total / chars[1]) ** beta - 1)


def never_pays(
    texts: Sequence[str], ends: np.ndarray, probe: int, cutoff: int, weights: Weights
) -> bool:
    """Whether the most work ``texts`` (which end at ``ends``) can take, whatever the cache
    holds, stays below ``cutoff``: every byte looked up and merged, every character a word
    (a text's added space one more of each). Then nothing pays on other workers, and no
    probe need be encoded: the choice the probe would make, without its cost.

    A character is at most four UTF-8 bytes and an ASCII text's one, so the bytes are
    bounded by the characters and three more for each character of a text not ASCII (an
    ASCII test is free in CPython; the bytes exactly would encode the texts: 450 us on 65K
    characters of Han text). Those are counted only when the bound can hold with every
    character a byte, and when the first ``probe`` texts, carried to the rest as the
    characters, leave it room (else ``False``: the probe counts). With GPT-2's settings
    English lines of up to 160K characters never pay on threads (1 + :data:`MERGE_WORK` a
    byte, from :data:`THREAD_WORK`)."""
    n, total = len(texts), int(ends[-1])
    per_byte = weights.byte + weights.merged
    most = weights.word * (total + n) + weights.text * n + per_byte * (total + n)
    if most >= cutoff or per_byte == 0:
        return most < cutoff
    room = (cutoff - most) / (3 * per_byte)  # characters not ASCII the bound leaves room for
    head = sum(map(len, itertools.filterfalse(str.isascii, texts[:probe])))
    if head * total > room * max(int(ends[probe - 1]), 1):
        return False
    return sum(map(len, itertools.filterfalse(str.isascii, texts))) < room


def _half(ends: np.ndarray, probe: int) -> int:
    """The texts of a probe's first half: up to the first that reaches half the characters
    of the probe's ``probe`` texts (which end at ``ends``)."""
    return min(int(np.searchsorted(ends, int(ends[probe - 1]) // 2)) + 1, probe)


def known_below(
    encoder: Encoder, texts: Sequence[str], ends: np.ndarray, probe: int, cutoff: int
) -> bool:
    """Whether the words of the first half of a probe (the first ``probe`` texts, which end
    at ``ends``), looked up in the cache but not encoded, show the threads' work of the
    others below ``cutoff``: every word the cache lacks counted as merged, each time it
    comes, and carried to the rest as the characters (more than :func:`probe_pays` counts,
    whose merges are each word once). Then nothing pays on other threads and no probe need
    be encoded apart: with a warm cache, ``encode_batch`` makes one call, as with one
    worker. An empty cache knows no word: then nothing is looked up.

    A probe encoded apart costs a call, a list of ids and a batch of ``Encoding`` s of its
    own: on 65K characters of warm NewsArticles lines the rule took 1.045-1.080 of one
    worker's CPU, and 1.035-1.039 with this lookup first (15 us; medians of 300, in turn,
    ``benchmarks/bench_encode_rule.py``)."""
    total, half = int(ends[-1]), _half(ends, probe)
    chars = int(ends[half - 1])
    if total - chars >= cutoff or chars == 0 or len(encoder.cache) == 0:
        return False
    with encoder.lock:
        read, unknown = encoder.cache.unknown(texts[:half])
    return (read + THREADS.merged * unknown) * total / chars < cutoff


def probe_pays(
    encoder: Encoder,
    texts: Sequence[str],
    ends: np.ndarray,
    probe: int,
    here: Callable,
    cutoff: int,
    weights: Weights,
) -> tuple[list, list[int], bool]:
    """The first ``probe`` texts (which end at ``ends``) encoded here by ``here`` in two
    halves, their results and where they end, and whether the work of the others
    (:func:`rest_work` with ``weights``) reaches ``cutoff``: then they pay on other workers.

    The first half alone, its merges taken as the characters, gives more work than both
    halves (their merges growing as ``n ** beta``, ``beta <= 1``): when that stays below
    ``cutoff`` (a warm cache) the second half is not encoded apart, and the rest is the
    texts after the first half. A character is at least a byte looked up, so when the
    characters after the probe, ``weights.byte`` each, reach ``cutoff`` the others pay
    whatever it finds: then none is encoded (empty lists), and every batch can go to the
    workers from the start (the threads' count; the processes' counts no bytes)."""
    total = int(ends[-1])
    if weights.byte * (total - int(ends[probe - 1])) >= cutoff:
        return [], [], True
    half = _half(ends, probe)
    before = counters(encoder.cache)
    first = here(texts[:half])
    middle, chars = counters(encoder.cache), int(ends[half - 1])
    upper = rest_work([before, before, middle], [chars, chars], total, len(texts) - half, weights)
    if half == probe or upper < cutoff:
        return [first], [half], upper >= cutoff
    second = here(texts[half:probe])
    counts = [before, middle, counters(encoder.cache)]
    work = rest_work(counts, [chars, int(ends[probe - 1])], total, len(texts) - probe, weights)
    return [first, second], [half, probe], work >= cutoff


def estimates(
    encoder: Encoder, texts: Sequence[str], probe_chars: int, weights: Weights
) -> tuple[float, float, float]:
    """How a probe carries to the rest, on a :attr:`~Encoder.plain` encoder and its cache as
    it is: the work of the texts after the first ``probe_chars`` characters estimated from
    the probe's two halves (:func:`rest_work`), estimated as its characters (merges too),
    and the work the rest then does, in ``weights``' units (texts not counted). For the
    tests and ``benchmarks/fit_encode_cutoff.py --probe``."""
    ends = length_ends(texts)
    probe = int(np.searchsorted(ends, probe_chars)) + 1
    half = _half(ends, probe)
    counts = [counters(encoder.cache)]
    for a, b in [(0, half), (half, probe)]:
        encoder.plain_ids(texts[a:b])
        counts.append(counters(encoder.cache))
    chars, total = [int(ends[half - 1]), int(ends[probe - 1])], int(ends[-1])
    halves = rest_work(counts, chars, total, 0, weights)
    linear = rest_work([counts[0], counts[0], counts[2]], chars, total, 0, weights)
    encoder.plain_ids(texts[probe:])
    done = np.subtract(counters(encoder.cache), counts[-1])  # bytes, merged bytes, words
    true = float(done @ np.array(weights[:3]))
    return halves, linear, true
