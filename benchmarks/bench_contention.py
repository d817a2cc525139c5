"""Trainers on a busy machine: 1 and 2 workers, idle and beside a CPU-bound competitor, against gensim.

Servers are shared, so a trainer's speed-up from a second worker must survive another
process wanting the same cores. Each configuration trains word2vec skip-gram (d=100,
window 5, negative 5, sample 1e-3, min_count 5) on NewsArticles for ``--epochs`` epochs,
rowbook and gensim on the same token lists, with the vocabulary built first and only
``train`` timed. "Busy" runs ``--competitors`` processes spinning a Python loop (one per
core by default would leave no fair share to measure; one competitor on a 2-core machine
leaves each of three runnable threads two thirds of a core).

Reported per run: words per second (corpus tokens x epochs / train seconds) and the CPU
share (this process's user + system CPU seconds / wall seconds: 2.0 is two full cores).
Runs alternate between the tools and repeat ``--repeat`` times; medians are printed. The
targets compare ratios measured in the same invocation:

- busy: rowbook's 2-worker / 1-worker speed-up is at least gensim's;
- idle: rowbook's 2-worker / 1-worker speed-up is at least 1.8.

    python benchmarks/bench_contention.py            # 2 epochs, 3 repeats
    python benchmarks/bench_contention.py --quick    # 300 documents, 1 repeat
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpora import newsarticles_tokens
from benchmarks.timing import machine, print_targets
from rowbook.models.word2vec import Word2Vec

PARAMS = {"vector_size": 100, "window": 5, "min_count": 5, "sample": 1e-3, "negative": 5}
SPIN = "while True: pass"


@contextlib.contextmanager
def competitors(n: int) -> Iterator[None]:
    """``n`` processes each spinning one core for the duration of the block."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(n)]
    try:
        time.sleep(0.5)  # let them reach the loop
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def timed(train: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU share) of ``train()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    train()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu / wall


def rowbook_run(sentences, workers: int, epochs: int, seed: int) -> Callable[[], object]:
    model = Word2Vec(workers=workers, epochs=epochs, seed=seed, lr=0.025, **PARAMS)
    model.build_vocab(sentences)
    return lambda: model.train(sentences, epochs=epochs)


def gensim_run(sentences, workers: int, epochs: int, seed: int) -> Callable[[], object]:
    from gensim.models import Word2Vec as GensimWord2Vec

    model = GensimWord2Vec(sg=1, workers=workers, epochs=epochs, seed=seed, **PARAMS)
    model.build_vocab(sentences)
    return lambda: model.train(sentences, total_examples=model.corpus_count, epochs=epochs)


def measure(
    sentences, epochs: int, repeat: int, busy: int
) -> dict[tuple[str, int], tuple[float, float]]:
    """Median (words/s, CPU share) per (tool, workers), under ``busy`` competitors."""
    tokens = sum(map(len, sentences)) * epochs
    runs: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with competitors(busy) if busy else contextlib.nullcontext():
        for r in range(repeat):
            for workers in (1, 2):
                for tool, make in (("rowbook", rowbook_run), ("gensim", gensim_run)):
                    wall, share = timed(make(sentences, workers, epochs, seed=r + 1))
                    runs.setdefault((tool, workers), []).append((tokens / wall, share))
    return {k: (statistics.median(s for s, _ in v), statistics.median(c for _, c in v))
            for k, v in runs.items()}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 documents, one repeat")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--competitors", type=int, default=1, help="spinning processes when busy")
    args = parser.parse_args(argv)
    sentences = newsarticles_tokens()
    if args.quick:
        sentences, args.repeat = sentences[:300], 1
    rowbook_run(sentences[:50], 2, 1, 1)()  # compile (or load) the kernels before timing
    print(f"\n### Trainers under contention\n\n{machine()}; word2vec skip-gram, "
          f"{sum(map(len, sentences)):,} tokens x {args.epochs} epochs, train only, "
          f"medians of {args.repeat}\n")  # fmt: skip
    print(
        "| machine | tool | words/s, 1 worker | words/s, 2 workers | 2 / 1 | CPU share, 2 workers |"
    )
    print("|---|---|---:|---:|---:|---:|")
    ratio = {}
    for label, busy in (("idle", 0), (f"busy ({args.competitors} spinning)", args.competitors)):
        result = measure(sentences, args.epochs, args.repeat, busy)
        for tool in ("rowbook", "gensim"):
            one, two = result[(tool, 1)], result[(tool, 2)]
            ratio[(label.split()[0], tool)] = two[0] / one[0]
            print(f"| {label} | {tool} | {one[0]:,.0f} | {two[0]:,.0f} | {two[0] / one[0]:.2f} | "
                  f"{two[1]:.0%} |")  # fmt: skip
    return 0 if print_targets([
        ("busy: rowbook 2/1 speed-up vs gensim's", ratio[("busy", "rowbook")], ratio[("busy", "gensim")]),
        ("idle: rowbook 2/1 speed-up", ratio[("idle", "rowbook")], 1.8),
    ]) else 1  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
