"""Fit the classifier's prediction cost model on three sets and check it on two others (issue 37).

:func:`rowbook.models.fasttext_classifier.prediction.prediction_work` counts the work of
predicting lines in floats of an input row added to a line's mean: ``OUTPUT_WORK`` a float
of an output row scored, ``LINE_WORK`` a line. A second thread starts from ``THREAD_WORK``.
This script measures what those constants stand for:

* one thread's CPU time (``time.thread_time``: what the machine's load changes least) over
  prefixes of each set's test lines, beside the counts of the same lines (``d`` x input
  rows, ``d`` x output rows scored, lines); a least-squares fit with a fixed part on the
  three sets of ``bench_defaults.py --only classifier`` (the health tweets, 16 labels;
  generated mail, 2 labels and 200 tokens a line; generated topics, 500 labels) gives the
  nanoseconds of each, so the units; the two check sets (generated topics with
  ``loss="hs"``; the tweets with ``loss="ova"`` and ``d = 50``) are predicted from that fit
  (predicted / measured);
* the extra CPU of two threads (the process's CPU time, both threads, less one thread's):
  its fixed part ``O0`` and its share ``r`` of one thread's work ``C``, fitted on the three
  sets. Two threads pay, on two idle cores, when ``C > O0 + r C`` (the two halves' wall
  ``(C + O0 + r C) / 2`` below ``C``), so the cut-off is ``O0 / (1 - r)``;
* the wall time of one thread and of two at each prefix (medians of interleaved runs): a
  second thread's start, 0.05-0.1 ms in which the caller waits and which no CPU clock
  counts, shows only there, so the ratio one / two crosses 1 above ``O0 / (1 - r)`` (about
  0.35 ms of work against 0.15 on 2026-11-29); ``THREAD_WORK`` is about twice the crossing.

With ``--anatomy``, first where a second thread's time goes at the lines holding 25,000 and
100,000 rows read: the ways before (two new threads, lines cut in equal counts, the calling
thread waiting; the calling thread and one new thread, cut by work) against the way now
(:func:`rowbook._threads.side_by_side`: the same, the new thread started on another core);
in how many runs the new thread began on the caller's core (``/proc/thread-self/stat``), a
new thread's start (``start()`` called to its first line of Python), the compiled
function's dispatch of an empty range there, each range's CPU, and the CPU other processes
used meanwhile (``/proc/stat``: the rows with more than about 0.05 cores are noise).

    python benchmarks/fit_predict_cutoff.py              # fit on three sets, check on two
    python benchmarks/fit_predict_cutoff.py --anatomy --repeat 41
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import defaults_classifier
from timing import machine

from rowbook import FastTextClassifier
from rowbook._threads import side_by_side
from rowbook.models.fasttext_classifier import prediction
from rowbook.models.fasttext_classifier import prediction_kernels as kernels
from rowbook.text.batches import batch_bounds

READS = (25_000, 50_000, 100_000, 200_000, 400_000)  # prefixes by rows read, the old count


def data_sets(quick: bool) -> dict[str, tuple[dict, tuple]]:
    """Name -> (the classifier's options, (train texts, labels, test texts)): the three sets
    fitted on, then the two checks (:func:`defaults_classifier.check_sets`)."""
    sets = defaults_classifier.labelled_sets(quick)
    cases = {name: ({}, split) for name, split in sets.items()}
    cases |= defaults_classifier.check_sets(sets)
    return {name: (options, split[:3]) for name, (options, split) in cases.items()}


def _fitted(options: dict, split: tuple) -> tuple:
    train, train_y, test = split
    model = FastTextClassifier(workers=1, **options).fit(train, train_y)
    return model, model._require_fitted("predict"), test


def _output_rows(model, state) -> int:
    return prediction.output_rows(model.loss, len(state.labels), 1)  # the best label


def _counts(model, state, encoded) -> np.ndarray:
    """(d x input rows, d x output rows scored, lines with rows) of ``encoded``."""
    rows = np.diff(encoded.input_starts)
    lines = int(np.count_nonzero(rows))
    d = model.vector_size
    return np.array([d * rows.sum(), d * lines * _output_rows(model, state), lines], float)


def prefixes(model, state, test: list[str]) -> list[tuple[int, object]]:
    """(rows read, encoded lines) for the first lines holding each of :data:`READS`."""
    _, encoded = model._encode_texts(test)
    reads = np.cumsum(np.diff(encoded.input_starts) + _output_rows(model, state))
    out = []
    for target in READS:
        if reads[-1] >= target:
            lines = int(np.searchsorted(reads, target)) + 1
            out.append((target, model._encode_texts(test[:lines])[1]))
    return out


def _call(model, state, encoded, threads: int) -> tuple[float, float, float]:
    """(wall, this thread's CPU, the process's CPU) seconds of one ``predictions`` call on
    ``threads`` threads, whatever the cut-off."""
    model.workers = threads
    saved, prediction.THREAD_WORK = prediction.THREAD_WORK, 1e-9 if threads > 1 else 1e30
    try:
        wall, cpu, process = time.perf_counter(), time.thread_time(), time.process_time()
        prediction.predictions(model, state, encoded, 1, 0.0)
        return (
            time.perf_counter() - wall,
            time.thread_time() - cpu,
            time.process_time() - process,
        )
    finally:
        prediction.THREAD_WORK = saved


def measure(sets: dict, repeat: int) -> list[dict]:
    """A row per (set, prefix): counts, one thread's wall and CPU, two threads' wall and
    process CPU (medians of ``repeat`` interleaved runs) and the load average."""
    rows = []
    for name, (options, split) in sets.items():
        model, state, test = _fitted(options, split)
        for reads, encoded in prefixes(model, state, test):
            for threads in (1, 2):  # compiled, caches warm
                _call(model, state, encoded, threads)
            one, two = [], []
            for _ in range(repeat):
                one.append(_call(model, state, encoded, 1))
                two.append(_call(model, state, encoded, 2))
            med = [
                [1e3 * statistics.median(t[i] for t in runs) for i in range(3)]
                for runs in (one, two)
            ]
            rows.append(
                {
                    "set": name,
                    "reads": reads,
                    "counts": _counts(model, state, encoded),
                    "one wall": med[0][0],
                    "one cpu": med[0][1],
                    "two wall": med[1][0],
                    "two cpu": med[1][2],
                    "load": os.getloadavg()[0],
                }
            )
            print(
                f"  {name}, {reads:,} rows read: one {med[0][0]:.2f} ms ({med[0][1]:.2f} CPU), "
                f"two {med[1][0]:.2f} ms ({med[1][2]:.2f} CPU), load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
                flush=True,
            )
    return rows


def fit(rows: list[dict]) -> dict[str, float]:
    """The cost model's ns a unit, its constants and the two-thread cut-off, from the rows of
    the three sets fitted on."""
    fitted = [r for r in rows if not r["set"].startswith("check")]
    X = np.array([[1.0, *r["counts"]] for r in fitted])  # (n, 4): fixed, d in, d out, lines
    y = np.array([r["one cpu"] * 1e6 for r in fitted])  # ns
    weights = np.linalg.lstsq(X / y[:, None], np.ones(len(y)), rcond=None)[0]  # relative error
    fixed, per_in, per_out, per_line = weights
    extra = np.array([r["two cpu"] - r["one cpu"] for r in fitted])  # ms
    C = np.array([r["one cpu"] for r in fitted])
    r_share, O0 = np.polyfit(C, extra, 1)
    cutoff_ms = O0 / (1 - r_share)
    return {
        "fixed ns": fixed,
        "ns a unit": per_in,
        "OUTPUT_WORK": per_out / per_in,
        "LINE_WORK": per_line / per_in,
        "O0 ms": O0,
        "r": r_share,
        "cut-off ms": cutoff_ms,
        "cut-off units": cutoff_ms * 1e6 / per_in,
    }


def _work(r: dict, model: dict) -> float:
    d_in, d_out, lines = r["counts"]
    return d_in + model["OUTPUT_WORK"] * d_out + model["LINE_WORK"] * lines


def print_fit(rows: list[dict], model: dict) -> None:
    print(
        f"\none thread's CPU = {model['fixed ns'] / 1e3:.1f} us + {model['ns a unit']:.3f} ns x "
        f"(d x input rows + {model['OUTPUT_WORK']:.3f} x d x output rows + "
        f"{model['LINE_WORK']:.0f} x lines); two threads' extra CPU = {model['O0 ms']:.3f} ms "
        f"+ {model['r']:.1%} of one thread's: from {model['cut-off ms']:.2f} ms, "
        f"{model['cut-off units']:,.0f} units, a second thread pays on two idle cores\n"
    )
    print(
        "| data | rows read | work (units) | one thread CPU, ms | predicted / measured | "
        "two threads' extra CPU, ms | wall one / two, ms | one / two | load |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    for r in rows:
        work = _work(r, model)
        predicted = (model["fixed ns"] + model["ns a unit"] * work) / 1e6
        print(
            f"| {r['set']} | {r['reads']:,} | {work:,.0f} | {r['one cpu']:.3f} | "
            f"{predicted / r['one cpu']:.2f} | {r['two cpu'] - r['one cpu']:.3f} | "
            f"{r['one wall']:.2f} / {r['two wall']:.2f} | {r['one wall'] / r['two wall']:.2f} | "
            f"{r['load']:.1f} |"
        )
    by_set: dict[str, list[float]] = {}
    for r in rows:
        by_set.setdefault(r["set"], []).append(
            (model["fixed ns"] + model["ns a unit"] * _work(r, model)) / 1e6 / r["one cpu"]
        )
    print("\npredicted / measured one-thread CPU, each set's range:")
    for name, ratios in by_set.items():
        print(f"  {name}: {min(ratios):.2f} - {max(ratios):.2f}")


def anatomy(sets: dict, repeat: int) -> None:
    """Where a second thread's time goes, the ways before and now (see the module's doc)."""
    print(
        "\nat the lines holding 25,000 / 100,000 rows read, medians of runs in turn: wall of one "
        "thread; of two ways before (two new threads, the lines cut in equal counts; the "
        "caller and one new thread, cut by work) and now (the same, the new thread started "
        "on another core: `side_by_side`); in how many runs the new thread began on the "
        "caller's core; a new thread's start (`start()` to its first line) and its dispatch of "
        "an empty range; the CPU of the two ranges now against one thread's; the CPU other "
        "processes used meanwhile (cores)\n"
    )
    print(
        "| data | rows read | one, ms | two new | caller + one | now | one / now | on the "
        "caller's core, before / now | start, us | dispatch, us | CPU of the ranges / one, ms "
        "| others' CPU |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    for name, (options, split) in sets.items():
        model, state, test = _fitted(options, split)
        for reads, encoded in prefixes(model, state, test):
            if reads in (25_000, 100_000):
                _anatomy_row(name, reads, model, state, encoded, repeat)


def _anatomy_row(name: str, reads: int, model, state, encoded, repeat: int) -> None:
    args = _kernel_args(model, state, encoded)
    L = len(encoded.input_starts) - 1
    ends = prediction.work_ends(model, encoded.input_starts, len(state.labels), 1)
    work = batch_bounds(ends, ends[-1] / 2)
    ways = {
        "one": lambda: _ranges(args, [0, L], "caller"),
        "two new": lambda: _ranges(args, [0, L // 2, L], "new"),
        "caller + one": lambda: _ranges(args, work, "caller"),
        "now": lambda: _ranges(args, work, "now"),
    }
    times: dict[str, list] = {way: [] for way in ways}
    starts = []
    busy = _busy()
    for i in range(repeat + 1):
        for way, call in ways.items():
            sample = call()
            if i:
                times[way].append(sample)
        if i:
            starts.append(_empty_thread(args))
    others = _busy() - busy
    med = statistics.median
    wall = {way: 1e3 * med(t[0] for t in v) for way, v in times.items()}
    same = [sum(t[1] for t in times[way]) for way in ("caller + one", "now")]
    cpu = [1e3 * med(t[2][i] for t in times["now"]) for i in range(2)]
    print(
        f"| {name} | {reads:,} | {wall['one']:.2f} | {wall['two new']:.2f} | "
        f"{wall['caller + one']:.2f} | {wall['now']:.2f} | {wall['one'] / wall['now']:.2f} | "
        f"{same[0]} / {same[1]} of {repeat} | {1e6 * med(s[0] for s in starts):.0f} | "
        f"{1e6 * med(s[1] for s in starts):.0f} | {cpu[0]:.2f} + {cpu[1]:.2f} / "
        f"{1e3 * med(t[2][0] for t in times['one']):.2f} | {others:.2f} |",
        flush=True,
    )


def _busy() -> float:
    """Core-seconds the machine spent busy so far, less this process's CPU time."""
    with open("/proc/stat") as f:
        ticks = [int(v) for v in f.readline().split()[1:]]
    busy = (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
    return busy - time.process_time()


def _kernel_args(model, state, encoded) -> tuple:
    """The arguments of ``_predict_range`` but the range, as ``predictions`` builds them."""
    from rowbook.data.huffman import fasttext_tree
    from rowbook.models.fasttext_classifier.kernels import LOSS_CODES
    from rowbook.models.fasttext_classifier.state import kernel_rows

    L = len(encoded.input_starts) - 1
    children = (np.zeros(0, np.int64), np.zeros(0, np.int64))
    if model.loss == "hs":
        children = fasttext_tree(state.labels.counts)[:2]
    tables = (state.tables["W_in"], kernel_rows(state, "input"), state.tables["W_out"], None)
    options = (LOSS_CODES[model.loss], 1, np.float32(0.0), *children)
    outputs = (np.full((L, 1), -1, np.int32), np.zeros((L, 1), np.float32), np.zeros(L, np.int64))
    return tables, options, encoded.input_starts, encoded.input_ids, outputs


def _ranges(args: tuple, bounds: list[int], way: str) -> tuple:
    """(wall seconds, whether the new thread began on the caller's core, each range's CPU
    seconds) of the ranges of ``bounds``: ``way`` "new", each on a new thread; "caller", the
    first on the calling thread; "now", :func:`rowbook._threads.side_by_side`."""
    tables, options, starts, ids, outputs = args
    ranges = list(itertools.pairwise(bounds))
    cpu, core = [0.0] * len(ranges), [-1] * len(ranges)

    def run(i: int, l0: int, l1: int) -> None:
        core[i], before = _core(), time.thread_time()
        kernels._predict_range(tables, options, starts, ids, l0, l1, *outputs)
        cpu[i] = time.thread_time() - before

    start = time.perf_counter()
    tasks = [(i, *r) for i, r in enumerate(ranges)]
    if way == "now":
        side_by_side(run, tasks)
    else:
        threads = [threading.Thread(target=run, args=t) for t in tasks[way == "caller" :]]
        for t in threads:
            t.start()
        if way == "caller":
            run(*tasks[0])
        for t in threads:
            t.join()
    return time.perf_counter() - start, len(ranges) > 1 and core[0] == core[1], cpu


def _core() -> int:
    """The core the calling thread runs on (``/proc/thread-self/stat``'s ``processor``)."""
    with open("/proc/thread-self/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


def _empty_thread(args: tuple) -> tuple[float, float]:
    """(seconds from ``start()`` to a new thread's first line, seconds of its dispatch of an
    empty range)."""
    tables, options, starts, ids, outputs = args
    seen = [0.0, 0.0]

    def run(t0: float) -> None:
        seen[0] = time.perf_counter() - t0
        t = time.perf_counter()
        kernels._predict_range(tables, options, starts, ids, 0, 0, *outputs)
        seen[1] = time.perf_counter() - t

    thread = threading.Thread(target=run, args=(time.perf_counter(),))
    thread.start()
    thread.join()
    return seen[0], seen[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smaller sets, fewer repeats")
    parser.add_argument("--anatomy", action="store_true", help="first, where the time goes")
    parser.add_argument("--repeat", type=int, default=None, help="runs a median (default 25)")
    args = parser.parse_args(argv)
    repeat = args.repeat or (7 if args.quick else 25)
    print(machine(), f"load average at the start: {os.getloadavg()[0]:.1f}")
    sets = data_sets(args.quick)
    FastTextClassifier(epochs=1).fit(["a b", "c d"], ["x", "y"]).predict(["a b"])  # compile
    if args.anatomy:
        anatomy(sets, repeat)
    rows = measure(sets, repeat)
    model = fit(rows)
    print_fit(rows, model)
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
