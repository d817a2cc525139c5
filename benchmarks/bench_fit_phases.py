"""Where a whole word2vec fit from a file spends its time: reading, tables, the kernel, waiting.

``bench_anchors.py`` times whole runs (``Word2Vec(...).fit(path)``); this one cuts such a run
into its parts, with 1 and 2 workers and each kernel, on the same file and settings
(NewsArticles one document a line, d = 100, window 5, negative 5, sample 1e-3, min_count 5,
5 epochs, word2vec.c's learning rate for the architecture):

- **read**: the first pass (counting, the vocabulary, the id stream; ``workers`` processes);
- **epochs**: the wall time of the epochs, and inside it every job's kernel call, in wall
  and in CPU seconds of its thread; what the workers spend outside their kernel calls
  (taking a job, slicing its ids, the epoch's start and end, waiting for the GIL or a core)
  is ``workers x epochs wall - kernel wall``;
- **prep**: within the kernel, what every job does before its first example, timed alone
  on the same jobs: the subsampling and window draws (``kept_words``), the windows
  (``context_windows``) and CBOW's minibatch order (``batch_order``);
- the rest of the fit (the initial tables, the Python between the parts).

Each part is timed in wall seconds and, where the column says CPU, in CPU seconds of this
process and its reaped children (the forked readers): on a busy machine the CPU seconds
hold still where the wall seconds do not.

Each row is the median of ``--repeat`` fits (the configurations take turns), with the load
average printed before and after. ``python benchmarks/bench_fit_phases.py --architecture
cbow`` (``--quick``: 300 documents, 1 epoch, 1 repetition).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_anchors import SETTINGS, corpus_file, load
from benchmarks.corpora import newsarticles_tokens
from benchmarks.timing import machine
from rowbook.data.sampling import sample_thresholds
from rowbook.models.word_vectors.word2vec import DEFAULT_LR, Word2Vec
from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import CBOW_BATCH, batch_order
from rowbook.models.word_vectors.word2vec_batched_kernels import context_windows
from rowbook.models.word_vectors.word2vec_kernels import kept_words

PARTS = (
    "whole",
    "whole CPU",
    "read",
    "read CPU",
    "epochs",
    "epochs CPU",
    "kernel wall",
    "kernel CPU",
    "outside",
    "prep",
    "rest",
)


def cpu_seconds() -> float:
    """CPU seconds of this process and of its reaped children (the forked readers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


@contextmanager
def stopwatch(times: dict, name: str):
    """Add the wall and CPU seconds of the block to ``times[name]`` and ``times[name CPU]``."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        yield
    finally:
        times[name] += time.perf_counter() - wall
        if f"{name} CPU" in times:
            times[f"{name} CPU"] += cpu_seconds() - cpu


class _Timed(Word2Vec):
    """Word2Vec with a stopwatch on its parts (the training itself unchanged)."""

    def reset(self) -> None:
        self.times = dict.fromkeys(PARTS, 0.0)
        self.jobs: list[tuple[np.ndarray, np.ndarray, int]] = []
        self.lock = threading.Lock()

    def _read_vocab(self, *args, **kwargs):
        with stopwatch(self.times, "read"):
            return super()._read_vocab(*args, **kwargs)

    def _train_epochs(self, *args, **kwargs):
        with stopwatch(self.times, "epochs"):
            return super()._train_epochs(*args, **kwargs)

    def _job_step(self, vocab, tables, encoded, bounds):
        step = super()._job_step(vocab, tables, encoded, bounds)
        self.vocab_counts = vocab.counts
        self.encoded, self.bounds = encoded, bounds

        def timed(j, lr, seed, stats):
            wall, cpu = time.perf_counter(), time.thread_time()
            loss = step(j, lr, seed, stats)
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            with self.lock:
                self.times["kernel wall"] += wall
                self.times["kernel CPU"] += cpu
                self.jobs.append((j, seed))
            return loss

        return timed

    def prep_seconds(self) -> float:
        """CPU seconds of every job's draws and windows, run again alone (one thread)."""
        thresholds = sample_thresholds(self.vocab_counts, self.sample)
        w, start = self.window, time.thread_time()
        for j, seed in self.jobs:
            ids, starts = self.encoded.sentences(self.bounds[j], self.bounds[j + 1])
            n = len(starts) - 1
            sampling = (thresholds, self.sample > 0, w, True)
            _, ends, shrinks, _ = kept_words((ids, starts, 0, n), sampling, np.uint64(seed))
            centres, _, _ = context_windows(ends, shrinks, w)
            if self.architecture == "cbow" and self.kernel != "classic":
                batch_order(centres.shape[0], CBOW_BATCH)
        return time.thread_time() - start


def fit_parts(path: Path, arch: str, kernel: str, workers: int, epochs: int, seed: int) -> dict:
    model = _Timed(
        architecture=arch,
        kernel=kernel,
        workers=workers,
        epochs=epochs,
        seed=seed,
        lr=DEFAULT_LR[arch],
        **SETTINGS,
    )
    model.reset()
    t = model.times
    with stopwatch(t, "whole"):
        model.fit(path)
    t["outside"] = workers * t["epochs"] - t["kernel wall"]
    t["rest"] = t["whole"] - t["read"] - t["epochs"]
    t["prep"] = model.prep_seconds()
    del model.encoded
    return t


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--architecture", choices=("skipgram", "cbow"), default="cbow")
    parser.add_argument("--kernels", default="classic,batched", help="comma-separated")
    parser.add_argument("--workers", default="1,2", help="comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="300 documents, 1 epoch, 1 run")
    args = parser.parse_args(argv)
    sentences, epochs, name = newsarticles_tokens(), 5, "newsarticles_tokens"
    if args.quick:
        sentences, epochs, args.repeat, name = sentences[:300], 1, 1, "newsarticles_tokens_300"
    path = corpus_file(sentences, name)
    arch = args.architecture
    configs = [
        (kernel, int(w)) for w in args.workers.split(",") for kernel in args.kernels.split(",")
    ]
    for kernel, _ in configs:  # compile (or load the cache) before timing
        fit_parts(corpus_file(sentences[:50], "newsarticles_tokens_50"), arch, kernel, 1, 1, 1)
    before = load()
    runs: dict[tuple[str, int], list[dict]] = {c: [] for c in configs}
    for seed in range(1, args.repeat + 1):
        for kernel, workers in configs:
            runs[kernel, workers].append(fit_parts(path, arch, kernel, workers, epochs, seed))
    n_words = sum(map(len, sentences)) * epochs
    print(f"\n## Where a {arch} fit spends its time ({path.name}, {epochs} epochs)\n")
    print(f"{machine()}\nload average {before} before, {load()} after; seconds, medians\n")
    print("| kernel | workers | " + " | ".join(PARTS) + " | words/s |")
    print("|---|---:|" + "---:|" * (len(PARTS) + 1))
    for (kernel, workers), rs in runs.items():
        median = {p: statistics.median(r[p] for r in rs) for p in PARTS}
        cells = " | ".join(f"{median[p]:.2f}" for p in PARTS)
        print(f"| {kernel} | {workers} | {cells} | {n_words / median['whole'] / 1e6:.2f}M |")
    print(
        "\noutside = workers x epochs - kernel wall (the workers' time out of their kernel "
        "calls); prep = the kernel's draws and windows alone, CPU s of one thread"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
