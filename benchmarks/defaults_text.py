"""The tokenizers' encoding defaults on text they were not chosen on (rows of ``bench_defaults.py``).

``ByteLevelBPE.encode_batch`` (:mod:`rowbook.text.bpe.batch`) encodes a probe on the
calling thread (:data:`~rowbook.text.bpe.cutoff.PROBE_CHARS`, in two halves) and counts its
work (a cost model fitted by ``fit_encode_cutoff.py``: for threads bytes looked up and
:data:`~rowbook.text.bpe.cutoff.MERGE_WORK` for each byte of the words merged, for
processes words looked up and :data:`~rowbook.text.bpe.cutoff.TEXT_WORK` for each text
left); the other batches go to threads when their work, carried to them (the merges as new
words grow, from the halves), reaches
:data:`~rowbook.text.bpe.cutoff.THREAD_WORK` (GPT-2's settings: threads share the compiled
pass), or to forked processes from :data:`~rowbook.text.bpe.cutoff.POOL_WORK` (other
settings). The target: one worker and two forced (the cut-off set to 0), and the default
(``workers=2`` under the rule) no slower than the faster of the two at every size. Measured
on NewsArticles and on three other texts, each with a byte-level BPE of 8,000 entries
trained on its own first 2 MB: the health tweets, Han text without spaces (a line's words
run together, so GPT-2's pattern makes each clause one long word), and long
agglutinative-like words.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import corpora
import numpy as np

from rowbook.text import ByteLevelBPE
from rowbook.text.bpe import batch, cutoff

__all__ = ["cutoff_rows", "paired", "text_kinds"]

TRAIN_CHARS = 2_000_000
THREAD_SIZES = (16_384, 65_536, 262_144, 1_048_576, 4_194_304)
POOL_SIZES = (1_048_576, 2_097_152, 4_194_304)
#: A timing's runs in all, at least (short runs are repeated more). At 0.2 s and seven
#: rounds, the runs of 15-65 ms (Han text at 65K and 262K characters, cold) came out
#: 0.92 of the way the rule chose, paired; 0.96 and 0.98 in 30 rounds.
RUN_SECONDS = 1.0
MAX_RUNS = 400


def text_kinds(generated_text: Callable[..., str], tweets: Callable[[], str]) -> dict[str, list]:
    """Each kind of text as lines, at least ``TRAIN_CHARS`` + 2M characters."""
    return {
        "NewsArticles": corpora.newsarticles_lines(),
        "health tweets": tweets().splitlines(),
        "Han text, no spaces": generated_text("han", 2_000_000).splitlines(),
        "long agglutinative-like words": generated_text("long", 600_000).splitlines(),
    }


def _first_chars(lines: list[str], chars: int) -> list[str]:
    out, n = [], 0
    for line in lines:
        if n >= chars:
            break
        out.append(line)
        n += len(line)
    return out


def _encode(bpe: ByteLevelBPE, texts: list[str], workers: int, cold: bool, rule: bool) -> None:
    """``encode_batch``; ``rule=False``: on the workers asked for, whatever the work."""
    if cold:
        bpe._encoder.cache.clear()
    saved = cutoff.THREAD_WORK, cutoff.POOL_WORK
    if not rule:
        cutoff.THREAD_WORK = cutoff.POOL_WORK = 0
    try:
        bpe.encode_batch(texts, workers=workers)
    finally:
        cutoff.THREAD_WORK, cutoff.POOL_WORK = saved


def _chose_workers(bpe: ByteLevelBPE, texts: list[str], cold: bool) -> bool:
    """Whether the rule sent the batches after the first to other workers."""
    used = []
    saved = batch.map_in_threads, batch.map_in_order

    def spy(pool):
        def run(*args, **kwargs):
            used.append(True)
            return pool(*args, **kwargs)

        return run

    batch.map_in_threads, batch.map_in_order = spy(saved[0]), spy(saved[1])
    try:
        _encode(bpe, texts, 2, cold, rule=True)
    finally:
        batch.map_in_threads, batch.map_in_order = saved
    return bool(used)


def _times(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, tuple]:
    """{name: (median wall ms, median CPU ms of this process, each round's wall ms)}, the
    functions in turn, after one warm-up round. A forked worker's CPU time is not this
    process's: for processes only the wall time says anything. Each round takes the
    functions in a shuffled order, so each follows each other as often: a run just after
    two threads' costs more (NewsArticles, 65K characters, warm: one worker 0.64 ms after
    them, 0.59 ms after one worker; the rule 0.68 / 0.60), and in a fixed order the rule
    always followed them."""
    walls: dict[str, list[float]] = {name: [] for name in fns}
    cpus: dict[str, list[float]] = {name: [] for name in fns}
    names, rng = list(fns), np.random.default_rng(0)
    for r in range(repeat + 1):
        for i in rng.permutation(len(names)):
            name, fn = names[i], fns[names[i]]
            wall, cpu = time.perf_counter(), time.process_time()
            fn()
            if r:
                walls[name].append(1e3 * (time.perf_counter() - wall))
                cpus[name].append(1e3 * (time.process_time() - cpu))
    return {
        name: (float(np.median(walls[name])), float(np.median(cpus[name])), np.array(walls[name]))
        for name in fns
    }


def paired(times: dict[str, tuple], a: str, b: str, q: float = 0.5) -> float:
    """The median (quantile ``q``) over rounds of ``a``'s wall time over ``b``'s in the same
    round (of :func:`_times`): the ratio of two ways paired round by round, so that a change
    of the machine's speed between rounds reaches both. On this virtual machine one thread's time
    on the same 262K characters moved from 7.2 to 11.0 ms within an hour, and medians taken
    apart made the rule 0.86-1.13x the way it had chosen, probe aside, on forked runs."""
    return float(np.quantile(times[a][2] / times[b][2], q))


def _sizes(
    bpe: ByteLevelBPE, lines: list[str], sizes, repeat: int, control: bool = False
) -> Iterator[tuple]:
    """(size, mode, {"one" | "two" | "rule": (wall ms, CPU ms)}, the rule chose two) for each
    size the text holds, cold cache and warm; with ``control`` two workers are also timed a
    second time, as a way of their own ("two again"): the ratio of the same call paired with
    itself is the noise the other ratios carry."""
    available = sum(map(len, lines))
    for size in sizes:
        if size > available:
            continue
        texts = _first_chars(lines, size)
        for mode in ("cold", "warm"):
            cold = mode == "cold"
            bpe.encode_batch(texts, workers=1)  # warm: every word in the model's cache
            fns = {
                "one": lambda t=texts, c=cold: _encode(bpe, t, 1, c, rule=False),
                "two": lambda t=texts, c=cold: _encode(bpe, t, 2, c, rule=False),
                "rule": lambda t=texts, c=cold: _encode(bpe, t, 2, c, rule=True),
            }
            if control:
                fns["two again"] = fns["two"]
            # short runs are repeated until each takes about RUN_SECONDS in all: at 0.5 ms
            # the median of seven moved by 10% from one run of the benchmark to the next
            start = time.perf_counter()
            fns["one"]()
            runs = max(repeat, min(MAX_RUNS, int(RUN_SECONDS / (time.perf_counter() - start))))
            yield size, mode, _times(fns, runs), _chose_workers(bpe, texts, cold)


def cutoff_rows(kinds: dict[str, list], repeat: int, pool: bool) -> Iterator[tuple]:
    """(text, characters a word, setting, size, mode, times, the rule chose two) for every kind:
    GPT-2's settings (threads) and, with ``pool``, a prefix space (processes: each call
    forks, and medians of three such runs moved by 10-15% from one run of the benchmark to
    the next, so they are repeated as often as the threads', and two processes are timed
    twice: the same call paired with itself, on 2M characters in 15 rounds, came out 0.95-1.07
    by its median, 0.83-1.15 by its quartiles, where two threads' came out 0.98-1.01)."""
    for name, lines in kinds.items():
        train = _first_chars(lines, TRAIN_CHARS)
        rest = lines[len(train) :]
        bpe = ByteLevelBPE().fit(train, 8_000)
        sample = rest[:2000]  # characters a word of GPT-2's pattern (its leading space too)
        per_word = sum(map(len, sample)) / sum(len(bpe._pretokenizer.split(t)) for t in sample)
        for row in _sizes(bpe, rest, THREAD_SIZES, repeat):
            yield (name, per_word, "threads", *row)
        if pool:
            spaced = ByteLevelBPE(add_prefix_space=True).fit(train, 8_000)
            for row in _sizes(spaced, rest, POOL_SIZES, repeat, control=True):
                yield (name, per_word, "processes", *row)
