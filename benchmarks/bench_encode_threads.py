"""Where a second thread's time goes in ``ByteLevelBPE.encode_batch``: one worker against two.

For each text (NewsArticles lines, the health tweets, Han text without spaces, long
agglutinative-like words: :mod:`defaults_text`, each with its own 8,000-entry BPE) and size,
cold cache and warm, ``workers=1`` and ``workers=2`` forced onto threads (the work cut-off
set to 0) run in turn, medians of ``--repeat``. Beside the wall times, each thread's time
from ``/proc/thread-self/schedstat``: on a CPU, waiting for one (the machine's load), and
asleep (the GIL, a lock, a result not ready): the calling thread's own work (what holds
the GIL) apart from the batches it encoded, split into the lists of ids, the ``Encoding``
objects, the words learned from the other thread, and the rest (the previous call's
results freed, the collection when the collector resumes, the hand-off), and the other
thread's batches. "bound" is what two idle cores allow with that work: one thread's
CPU over max(caller's own, half of all) (the caller's own work is serial, the batches are
shared).

    python benchmarks/bench_encode_threads.py                  # 1M and 4M characters
    python benchmarks/bench_encode_threads.py --sizes 4000000 --texts NewsArticles
    python benchmarks/bench_encode_threads.py --documents --repeat 5  # bench_tiktoken's documents
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import defaults_text
from bench_defaults import _tweets_text, generated_text
from timing import machine

from rowbook.text import ByteLevelBPE
from rowbook.text.bpe import batch, cutoff
from rowbook.text.bpe.encoder import Encoder


def _clock() -> np.ndarray:
    """(wall, on a CPU, waiting for a CPU) of this thread, seconds. The time on a CPU is
    ``time.thread_time``: schedstat's own count of it is brought up to date only at the
    scheduler's ticks, so calls of a millisecond or two read 0 there."""
    with open("/proc/thread-self/schedstat") as f:
        _, wait, _ = f.read().split()
    return np.array([time.perf_counter(), time.thread_time(), int(wait) / 1e9])


class _Spent:
    """Each thread's time in the jobs ``batch`` runs, summed by role."""

    def __init__(self) -> None:
        self.by_role: dict[str, np.ndarray] = {}
        self.lock = threading.Lock()

    def wrap(self, role: str, job, caller_only: bool = False):
        def timed(*args, **kwargs):
            if caller_only and threading.current_thread() is not threading.main_thread():
                return job(*args, **kwargs)
            start = _clock()
            try:
                return job(*args, **kwargs)
            finally:
                with self.lock:
                    self.by_role[role] = self.by_role.get(role, 0) + _clock() - start

        return timed


def measure(bpe: ByteLevelBPE, texts: list[str], cold: bool, repeat: int) -> dict[str, np.ndarray]:
    """{role: median (wall, CPU, waiting, asleep) ms} for one worker ("one") and two
    ("caller", "caller's batches", "other thread", and of the caller's own work its
    "lists" of ids, its "Encodings" and the words it "learn"s from the other thread)."""
    spent = _Spent()
    saved = batch._thread_job, batch._here_job, cutoff.THREAD_WORK
    saved_own = batch._slices, batch.build_encodings, Encoder.learn
    batch._thread_job = spent.wrap("other thread", saved[0])
    batch._here_job = spent.wrap("caller's batches", saved[1])
    batch._slices = spent.wrap("lists", saved_own[0])
    batch.build_encodings = spent.wrap("Encodings", saved_own[1])
    Encoder.learn = spent.wrap("learn", saved_own[2], caller_only=True)  # threads learn too
    cutoff.THREAD_WORK = 0
    rows: dict[str, list[np.ndarray]] = {}
    try:
        for r in range(repeat + 1):
            for workers in (1, 2):
                if cold:
                    bpe._encoder.cache.clear()
                spent.by_role.clear()
                start = _clock()
                bpe.encode_batch(texts, workers=workers)
                roles = {"one" if workers == 1 else "caller": _clock() - start}
                roles.update(spent.by_role if workers == 2 else {})
                for role, (wall, cpu, wait) in roles.items():
                    if r:
                        rows.setdefault(role, []).append(
                            1e3 * np.array([wall, cpu, wait, wall - cpu - wait])
                        )
    finally:
        batch._thread_job, batch._here_job, cutoff.THREAD_WORK = saved
        batch._slices, batch.build_encodings, Encoder.learn = saved_own
    return {role: np.median(values, axis=0) for role, values in rows.items()}


def _print_row(name: str, chars: int, mode: str, m: dict[str, np.ndarray]) -> None:
    """One row of the table from :func:`measure`'s medians."""
    zero = np.zeros(4)
    one, caller = m["one"], m["caller"]
    here, other = m.get("caller's batches", zero), m.get("other thread", zero)
    own = caller[1] - here[1]
    parts = [m.get(part, zero)[1] for part in ("lists", "Encodings", "learn")]
    both = caller[1] + other[1]
    bound = one[1] / max(own, both / 2, 1e-3)
    print(
        f"| {name} | {chars:,} | {mode} | {one[0]:.1f} / {caller[0]:.1f} "
        f"({one[0] / caller[0]:.2f}x) | {one[1]:.1f} | {own:.1f}, {here[1]:.1f}, "
        f"{caller[3]:.1f} | {', '.join(f'{p:.1f}' for p in parts)}, {own - sum(parts):.1f} | "
        f"{other[1]:.1f}, {other[3]:.1f} | {both / max(one[1], 1e-3):.2f} | {bound:.2f}x |",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_048_576, 4_194_304])
    parser.add_argument("--texts", nargs="+", default=None, help="which texts (all by default)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument(
        "--documents",
        action="store_true",
        help="NewsArticles documents of 64 KB with a 32,000-token BPE (bench_tiktoken's) instead",
    )
    args = parser.parse_args(argv)
    print(machine(), f"load average at the start: {os.getloadavg()[0]:.1f}")
    kinds = {} if args.documents else defaults_text.text_kinds(generated_text, _tweets_text)
    print(
        "\n| text | characters | cache | wall one / two, ms (ratio) | CPU one | caller: own CPU, "
        "batches CPU, asleep | caller's own: lists, Encodings, learn, rest | other thread: CPU, "
        "asleep | CPU two / one | bound |"
        "\n|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    if args.documents:
        from bench_tiktoken import DOCUMENT_CHARS, VOCAB_SIZE, documents
        from corpora import newsarticles_texts

        texts = newsarticles_texts()
        bpe = ByteLevelBPE().fit(texts, VOCAB_SIZE)
        docs = documents(texts, DOCUMENT_CHARS)
        for mode in ("cold", "warm"):
            bpe.encode_batch(docs, workers=1)
            m = measure(bpe, docs, mode == "cold", args.repeat)
            _print_row("NewsArticles documents of 64 KB", sum(map(len, docs)), mode, m)
    for name, lines in kinds.items():
        if args.texts and name not in args.texts:
            continue
        train = defaults_text._first_chars(lines, defaults_text.TRAIN_CHARS)
        rest = lines[len(train) :]
        bpe = ByteLevelBPE().fit(train, 8_000)
        for size in args.sizes:
            texts = defaults_text._first_chars(rest, size)
            chars = sum(map(len, texts))
            for mode in ("cold", "warm"):
                bpe.encode_batch(texts, workers=1)
                _print_row(name, chars, mode, measure(bpe, texts, mode == "cold", args.repeat))
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
