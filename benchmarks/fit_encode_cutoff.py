"""Fit ``encode_batch``'s cost model on one corpus and check it on the others (issue 37).

:func:`rowbook.text.bpe.cutoff.rest_work` counts the threads' work in units of a byte looked
up, ``MERGE_WORK`` a byte merged (less than its CPU); a token id (gathered, then made into a
list by the calling thread, which holds the GIL) and a text (its list and its ``Encoding``)
are the calling thread's whatever the others do, so the rule does not count them, but one
worker's time holds them. The batches after the first go to threads when that work reaches
``THREAD_WORK``. This script measures what those constants stand for, on GPT-2's settings
(threads), for the texts
of :mod:`defaults_text` (NewsArticles lines, the health tweets, Han text without spaces,
long agglutinative-like words), at sizes from 32K to 4M characters, cold cache and warm:

* the cost of an id and of a text, timed alone on NewsArticles lines (CPU time): an id
  gathered and made into a list, a text's list and its ``Encoding``. Within one corpus the
  bytes, ids and texts grow together, so a fit cannot tell them apart;
* one worker's CPU time (``time.thread_time``: what the machine's load changes least) beside
  the counters of the same run (bytes looked up, bytes merged, ids, texts); with the id and
  text costs fixed, a least-squares fit on NewsArticles (cold and warm part the bytes looked
  up from the bytes merged) gives the nanoseconds of a byte looked up and a byte merged, so
  the units; the others are checked against the NewsArticles fit (predicted / measured);
* the extra CPU of two threads forced (the process's CPU time, both threads, less one
  worker's): its fixed part ``O0`` and its share ``r`` of one worker's work, fitted on
  NewsArticles likewise. Two threads pay, on two idle cores, when the rest's work ``C``
  beats what they add: ``C > O0 + r C``, so the cut-off is ``O0 / (1 - r)`` in units;
* what the rule takes (``MERGE_WORK``, ``THREAD_WORK``): the weight of a byte merged and the
  cut-off chosen together on the wall time of one thread against two, all texts, so that
  bytes looked up + weight x bytes merged parts the runs where two threads pay from those
  where they lose at the least cost (:func:`fit_decision`). Two threads both merge the words
  new to both, so a merged byte saves them less than it costs one.

* with ``--probe``, how the probe's work carries to the rest (no timing): cold, the shared
  work of the characters after a probe (bytes looked up, ``MERGE_WORK`` a byte merged)
  estimated from the probe's two halves (:func:`rowbook.text.bpe.cutoff.rest_work`:
  merges as new words grow, Heaps' law) and as the characters, each over the true work.

* with ``--processes``, the processes' model (a prefix space: words cut by the regex in
  Python), at 1M and 2M characters, cold and warm: one worker's CPU beside the words and
  texts of the run, and one worker against two processes forced (wall, paired round by
  round). A least-squares fit of one worker's warm CPU on the words and texts gives
  ``TEXT_WORK`` in words; the cut-off ``POOL_WORK`` is the work that parts the runs where
  two processes lose from those where they pay at the least cost (the sum, over the runs
  the cut-off sends the wrong way, of how much slower they are). Words, ids and texts grow
  together within one text, so the fit takes texts of other shapes too (NewsArticles in
  paragraphs, long words in short lines, words of random letters: three tokens a word and
  more); it is checked on four texts it was not fitted on.

    python benchmarks/fit_encode_cutoff.py               # fit on NewsArticles, check the others
    python benchmarks/fit_encode_cutoff.py --repeat 7
    python benchmarks/fit_encode_cutoff.py --probe       # the probe's estimate / the truth
    python benchmarks/fit_encode_cutoff.py --processes   # the processes' model
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import defaults_text
from bench_defaults import _tweets_text, generated_text
from timing import machine

from rowbook.text import ByteLevelBPE
from rowbook.text.bpe import batch, cutoff
from rowbook.text.bpe.result import build_encodings

SIZES = (32_768, 65_536, 262_144, 1_048_576, 4_194_304)
FIT_ON = "NewsArticles"
PROCESS_SIZES = (1 << 20, 1 << 21)


def _counters(bpe: ByteLevelBPE, texts: list[str], cold: bool) -> np.ndarray:
    """Bytes looked up, bytes merged, ids and texts of one ``workers=1`` call."""
    cache = bpe._encoder.cache
    if cold:
        cache.clear()
    before = cache.read, cache.merged, cache.gathered
    bpe.encode_batch(texts, workers=1)
    after = cache.read, cache.merged, cache.gathered
    return np.array([*(b - a for a, b in zip(before, after, strict=True)), len(texts)], float)


def _times(bpe: ByteLevelBPE, texts: list[str], cold: bool, repeat: int) -> dict[str, float]:
    """Median ms of one worker (its thread's CPU, wall) and two threads forced (the
    process's CPU, wall), in turn."""
    saved = cutoff.THREAD_WORK
    out: dict[str, list[float]] = {"cpu one": [], "wall one": [], "cpu two": [], "wall two": []}
    try:
        cutoff.THREAD_WORK = 0
        for r in range(repeat + 1):
            for workers in (1, 2):
                if cold:
                    bpe._encoder.cache.clear()
                clock = time.thread_time if workers == 1 else time.process_time
                cpu, wall = clock(), time.perf_counter()
                bpe.encode_batch(texts, workers=workers)
                if r:
                    name = "one" if workers == 1 else "two"
                    out[f"cpu {name}"].append(1e3 * (clock() - cpu))
                    out[f"wall {name}"].append(1e3 * (time.perf_counter() - wall))
    finally:
        cutoff.THREAD_WORK = saved
    return {name: float(np.median(v)) for name, v in out.items()}


def _cpu_ms(fn, repeat: int) -> float:
    """Median CPU ms of this thread for ``fn()``, after one warm-up."""
    times = []
    for r in range(repeat + 1):
        start = time.thread_time()
        fn()
        if r:
            times.append(1e3 * (time.thread_time() - start))
    return float(np.median(times))


def id_text_ns(bpe: ByteLevelBPE, texts: list[str], repeat: int) -> tuple[float, float]:
    """ns of an id (gathered, then a list made of all of them) and of a text (its list cut
    from that one, its ``Encoding``), timed alone on ``texts`` with a warm cache."""
    encoder = bpe._encoder
    encoder.plain_ids(texts)
    words, word_ends = encoder.cache.scan(texts)  # every word known: nothing merged
    ids, ends = encoder.cache.gather(words, word_ends)
    flat = encoder.id_list(ids)
    ids_of = batch._slices(encoder, ids, ends)
    per_id = _cpu_ms(lambda: encoder.cache.gather(words, word_ends), repeat)
    per_id += _cpu_ms(lambda: encoder.id_list(ids), repeat)
    bounds = [0, *ends.tolist()]
    per_text = _cpu_ms(lambda: [flat[a:b] for a, b in itertools.pairwise(bounds)], repeat)
    per_text += _cpu_ms(
        lambda: build_encodings(
            texts, ids_of, {}, encoder.id_to_token, encoder.id_len, encoder.align
        ),
        repeat,
    )
    return 1e6 * per_id / len(ids), 1e6 * per_text / len(texts)


def measure(kinds: dict[str, list[str]], repeat: int) -> list[tuple]:
    """(text, size, mode, counters, times) of every text, size and mode."""
    rows = []
    for name, lines in kinds.items():
        train = defaults_text._first_chars(lines, defaults_text.TRAIN_CHARS)
        rest = lines[len(train) :]
        bpe = ByteLevelBPE().fit(train, 8_000)
        available = sum(map(len, rest))
        for size in SIZES:
            if size > available:
                continue
            texts = defaults_text._first_chars(rest, size)
            for mode in ("cold", "warm"):
                bpe.encode_batch(texts, workers=1)
                counts = _counters(bpe, texts, mode == "cold")
                times = _times(bpe, texts, mode == "cold", repeat)
                rows.append((name, size, mode, counts, times))
                print(
                    f"  {name}, {size:,}, {mode}: counters {counts.astype(int).tolist()}, "
                    + ", ".join(f"{k} {v:.1f}" for k, v in times.items()),
                    flush=True,
                )
    return rows


def fit(rows: list[tuple], id_ns: float, text_ns: float) -> tuple[np.ndarray, float, float]:
    """ns of a byte looked up, a byte merged (least squares, no intercept, on
    :data:`FIT_ON`, the id and text costs given), an id, a text; and the two threads'
    extra CPU ``O0`` (ns) and ``r``."""
    own = [r for r in rows if r[0] == FIT_ON]
    x = np.array([r[3] for r in own])  # (R, 4)
    cpu = np.array([r[4]["cpu one"] for r in own]) * 1e6  # (R,) ns
    left = cpu - x[:, 2] * id_ns - x[:, 3] * text_ns  # the bytes' share
    weights = 1 / cpu  # relative errors: every size counts
    (read_ns, merged_ns), *_ = np.linalg.lstsq(x[:, :2] * weights[:, None], left * weights)
    ns = np.array([read_ns, merged_ns, id_ns, text_ns])
    extra = np.array([r[4]["cpu two"] for r in own]) * 1e6 - cpu
    (r, o0), *_ = np.linalg.lstsq(np.stack([cpu, np.ones_like(cpu)], 1), extra, rcond=None)
    return ns, float(o0), float(r)


def probe_rows(kinds: dict[str, list[str]], probes=(2_048, 4_096, 8_192, 16_384)) -> None:
    """Print, for each text cold at 65K, 262K and 1M characters, the rest's shared work
    estimated from probes of ``probes`` characters in two halves (Heaps' law) and as the
    characters, over the work the rest then does (:func:`cutoff.estimates`)."""
    print("| text | characters | " + " | ".join(f"{p // 1024}K: halves / as chars" for p in probes))
    print("|---|---:|" + "---:|" * len(probes))
    for name, lines in kinds.items():
        train = defaults_text._first_chars(lines, defaults_text.TRAIN_CHARS)
        encoder = ByteLevelBPE().fit(train, 8_000)._encoder
        rest = lines[len(train) :]
        for size in (65_536, 262_144, 1_048_576):
            texts = defaults_text._first_chars(rest, size)
            cells = []
            for probe_chars in probes:
                encoder.cache.clear()
                halves, linear, true = cutoff.estimates(encoder, texts, probe_chars, cutoff.THREADS)
                cells.append(f"{halves / true:.2f} / {linear / true:.2f}")
            print(f"| {name} | {sum(map(len, texts)):,} | " + " | ".join(cells) + " |", flush=True)


def _in_groups(lines: list[str], n: int) -> list[str]:
    """Every ``n`` lines as one text."""
    return [" ".join(lines[i : i + n]) for i in range(0, len(lines), n)]


def process_kinds(kinds: dict[str, list[str]]) -> tuple[dict, dict]:
    """The texts the processes' model is fitted on (``kinds`` and three of other shapes) and
    those it is checked on."""
    news, tweets = kinds["NewsArticles"], kinds["health tweets"]
    fit_on = {
        **kinds,
        "NewsArticles, paragraphs of 20 lines": _in_groups(news, 20),
        "long words, lines of 4": generated_text("long", 600_000, line=4).splitlines(),
        "random letters": generated_text("letters").splitlines(),
    }
    check_on = {
        "health tweets, paragraphs of 10 lines": _in_groups(tweets, 10),
        "NewsArticles, pairs of lines": _in_groups(news, 2),
        "random letters, lines of 5": generated_text("letters", seed=2, line=5).splitlines(),
        "one CJK character a token": generated_text("short", 2_500_000).splitlines(),
    }
    return fit_on, check_on


def measure_processes(kinds: dict[str, list[str]], repeat: int) -> list[tuple]:
    """(text, size, mode, (words, texts, bytes merged), one worker's CPU ms, two processes
    / one paired) for every text, size and mode, a prefix space."""
    rows = []
    for name, lines in kinds.items():
        train = defaults_text._first_chars(lines, defaults_text.TRAIN_CHARS)
        rest = lines[len(train) :]
        bpe = ByteLevelBPE(add_prefix_space=True).fit(train, 8_000)
        cache = bpe._encoder.cache
        for size in PROCESS_SIZES:
            if size > sum(map(len, rest)):
                continue
            texts = defaults_text._first_chars(rest, size)
            for mode in ("cold", "warm"):
                cold = mode == "cold"
                bpe.encode_batch(texts, workers=1)
                if cold:
                    cache.clear()
                words, merged = cache.looked_up, cache.merged
                bpe.encode_batch(texts, workers=1)
                counts = (cache.looked_up - words, len(texts), cache.merged - merged)
                fns = {
                    way: functools.partial(defaults_text._encode, bpe, texts, n, cold, rule=False)
                    for way, n in (("one", 1), ("two", 2))
                }
                t = defaults_text._times(fns, repeat)
                rows.append(
                    (name, size, mode, counts, t["one"][1], defaults_text.paired(t, "one", "two"))
                )
                print(f"  {name}, {size:,}, {mode}: {rows[-1][3:]}", flush=True)
    return rows


def least_loss_cut(work: np.ndarray, speedup: np.ndarray) -> tuple[float, float, float]:
    """The cut-off on ``work`` (two workers from it) that sends the fewest runs the wrong way,
    weighted by how much slower each is there (``speedup``: one worker's time over two's),
    that loss, and the gap around the cut-off (the work of the run just above it over that
    of the run just below): a cut-off half-way between two runs' work."""
    order = np.sort(work)
    cuts = (order[:-1] + order[1:]) / 2

    def loss(cut: float) -> float:
        two = work >= cut
        return float(
            np.sum(np.where(two, np.maximum(1 / speedup - 1, 0), np.maximum(speedup - 1, 0)))
        )

    cut = min(cuts, key=loss)
    return float(cut), loss(cut), float(work[work >= cut].min() / work[work < cut].max())


def fit_processes(rows: list[tuple]) -> tuple[float, float, float]:
    """ns of a word and of a text (least squares on the warm runs whose words all stayed
    in the cache), and the cut-off in words (:func:`least_loss_cut`)."""
    warm = [r for r in rows if r[2] == "warm" and r[3][2] == 0]
    x = np.array([r[3][:2] for r in warm], float)  # (R, 2) words, texts
    cpu = np.array([r[4] for r in warm]) * 1e6  # (R,) ns
    weights = 1 / cpu  # relative errors
    (word_ns, text_ns), *_ = np.linalg.lstsq(x * weights[:, None], cpu * weights, rcond=None)
    work = np.array([r[3][0] + text_ns / word_ns * r[3][1] for r in rows])
    cut, _, _ = least_loss_cut(work, np.array([r[5] for r in rows]))
    return float(word_ns), float(text_ns), cut


def fit_decision(rows: list[tuple]) -> tuple[float, float]:
    """The threads' weight of a byte merged (1 to 16) and their cut-off, chosen together so
    that bytes looked up + weight x bytes merged parts the runs where two threads pay from
    those where they lose, on the wall time of one against two (:func:`least_loss_cut`);
    among weights of the same loss, the one with the widest gap around its cut-off."""
    counts = np.array([r[3] for r in rows])  # (R, 4) bytes, merged, ids, texts
    speedup = np.array([r[4]["wall one"] / r[4]["wall two"] for r in rows])
    fits = [(*least_loss_cut(counts[:, 0] + m * counts[:, 1], speedup), m) for m in range(1, 17)]
    cut, _, _, merge = min(fits, key=lambda f: (round(f[1], 6), -f[2]))
    return float(merge), cut


def print_processes(repeat: int, kinds: dict[str, list[str]]) -> None:
    """Fit the processes' model and print every run against it."""
    fit_on, check_on = process_kinds(kinds)
    fitted = measure_processes(fit_on, repeat)
    checked = measure_processes(check_on, repeat)
    word_ns, text_ns, cut = fit_processes(fitted)
    text_work = text_ns / word_ns
    print(
        f"\nOne worker's CPU, warm: {word_ns:.0f} ns a word, {text_ns:.0f} ns a text: a text "
        f"weighs {text_work:.1f} words (TEXT_WORK now {cutoff.TEXT_WORK}); the cut-off "
        f"{cut:,.0f} words ({cut * word_ns / 1e6:.0f} ms of one worker; POOL_WORK now "
        f"{cutoff.POOL_WORK:,})\n"
    )
    print(
        "| text | fitted on | characters | cache | CPU one, ms | predicted / measured | "
        "work, words | two / one | two pay at this cut-off / at POOL_WORK |"
    )
    print("|---|---|---:|---|---:|---:|---:|---:|---|")
    for fit_row, (name, size, mode, (words, texts, _), cpu, speedup) in itertools.chain(
        ((True, r) for r in fitted), ((False, r) for r in checked)
    ):
        work, now = words + text_work * texts, words + cutoff.TEXT_WORK * texts
        predicted = (words * word_ns + texts * text_ns) / 1e6
        print(
            f"| {name} | {'yes' if fit_row else 'no'} | {size:,} | {mode} | {cpu:.1f} | "
            f"{predicted / cpu:.2f} | {work:,.0f} | {speedup:.2f}x | "
            f"{'yes' if work >= cut else 'no'} / {'yes' if now >= cutoff.POOL_WORK else 'no'} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=5, help="repetitions a timing (median)")
    parser.add_argument("--probe", action="store_true", help="the probe's estimate only")
    parser.add_argument("--processes", action="store_true", help="the processes' model only")
    args = parser.parse_args(argv)
    print(machine(), f"load average at the start: {os.getloadavg()[0]:.1f}", flush=True)
    kinds = defaults_text.text_kinds(generated_text, _tweets_text)
    if args.probe:
        probe_rows(kinds)
        return 0
    if args.processes:
        print_processes(args.repeat, kinds)
        print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
        return 0
    train = defaults_text._first_chars(kinds[FIT_ON], defaults_text.TRAIN_CHARS)
    id_ns, text_ns = id_text_ns(ByteLevelBPE().fit(train, 8_000), train[:20_000], args.repeat)
    print(f"an id {id_ns:.1f} ns, a text {text_ns:.0f} ns", flush=True)
    rows = measure(kinds, args.repeat)
    ns, o0, r = fit(rows, id_ns, text_ns)
    units = ns / ns[0]
    cut = o0 / (1 - r) / ns[0]  # in units
    merge, decision = fit_decision(rows)
    print(
        f"\nOn {FIT_ON}: an id {ns[2]:.1f} ns and a text {ns[3]:.0f} ns (timed alone); "
        f"fitted (one worker's CPU): {ns[0]:.2f} ns a byte looked up, "
        f"{ns[1]:.2f} a byte merged; in units of a "
        f"byte looked up: a byte merged {units[1]:.1f}, an id {units[2]:.1f}, a text "
        f"{units[3]:.0f}. Two threads' extra CPU: {o0 / 1e6:.2f} ms + {r:.2f} x one worker's; "
        f"cut-off O0 / (1 - r) = {cut:,.0f} units. On the wall time of one thread against "
        f"two, all texts: a byte merged weighs {merge:.0f} in the rule's count, from "
        f"{decision:,.0f} (MERGE_WORK now {cutoff.MERGE_WORK}, THREAD_WORK "
        f"{cutoff.THREAD_WORK:,})\n"
    )
    print(
        "| text | characters | cache | CPU one, ms | predicted / measured | two's extra CPU, "
        "ms (predicted) | wall one / two, ms | the rule's work, fitted / now | two pays at "
        "the fitted weight / now |"
    )
    print("|---|---:|---|---:|---:|---:|---:|---:|---|")
    for name, size, mode, counts, t in rows:
        predicted = counts @ ns / 1e6
        work, now = counts[0] + merge * counts[1], counts[0] + cutoff.MERGE_WORK * counts[1]
        pays = f"{'yes' if work >= decision else 'no'} / {'yes' if now >= cutoff.THREAD_WORK else 'no'}"
        extra = t["cpu two"] - t["cpu one"]
        print(
            f"| {name} | {size:,} | {mode} | {t['cpu one']:.1f} | {predicted / t['cpu one']:.2f} "
            f"| {extra:.1f} ({o0 / 1e6 + r * t['cpu one']:.1f}) | {t['wall one']:.1f} / "
            f"{t['wall two']:.1f} | {work:,.0f} / {now:,.0f} | {pays} |"
        )
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
