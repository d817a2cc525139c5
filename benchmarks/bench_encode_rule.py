"""What the rule of ``encode_batch`` costs when it ends in one worker.

``ByteLevelBPE.encode_batch(texts, workers=2)`` with GPT-2's settings counts the work of its
first characters (the probe, :mod:`rowbook.text.bpe.cutoff`: encoded here in two halves,
with a warm cache only looked up, and not at all where even every byte merged stays below
the cut-off) and decides from it whether the rest goes to threads. When it decides on one
worker, the call should cost what ``workers=1`` costs. This compares the two by the
process's CPU time (which holds under load, unlike wall time), medians of many runs in turn
(each first every other time: the second of two runs is about 1% slower), on the text
kinds and sizes of ``bench_defaults.py --only text`` (:mod:`defaults_text`) where the rule
chooses one worker, cold cache and warm. Target: rule / one <= 1.02.

    python benchmarks/bench_encode_rule.py
    python benchmarks/bench_encode_rule.py --repeat 100 --sizes 65536
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import defaults_text
from bench_defaults import _tweets_text, generated_text

from rowbook.text import ByteLevelBPE


def _cpu_ms(bpe: ByteLevelBPE, texts: list[str], workers: int, cold: bool) -> float:
    if cold:
        bpe._encoder.cache.clear()
    start = time.process_time()
    bpe.encode_batch(texts, workers=workers)
    return 1e3 * (time.process_time() - start)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300, help="runs of each, interleaved")
    parser.add_argument("--sizes", type=int, nargs="+", default=[65_536, 262_144])
    args = parser.parse_args()
    print(f"load average at the start: {os.getloadavg()[0]:.1f}")
    print(
        "\nCPU ms of the process, medians of "
        f"{args.repeat} interleaved runs; rows where the rule chose one worker\n"
        "\n| text | characters | cache | one, CPU ms | rule, CPU ms | rule / one |"
        "\n|---|---:|---|---:|---:|---:|"
    )
    worst = 0.0
    for name, lines in defaults_text.text_kinds(generated_text, _tweets_text).items():
        train = defaults_text._first_chars(lines, defaults_text.TRAIN_CHARS)
        rest = lines[len(train) :]
        bpe = ByteLevelBPE().fit(train, 8_000)
        for size in args.sizes:
            texts = defaults_text._first_chars(rest, size)
            for mode in ("cold", "warm"):
                cold = mode == "cold"
                bpe.encode_batch(texts, workers=1)  # warm: every word in the model's cache
                if defaults_text._chose_workers(bpe, texts, cold):
                    continue
                one, rule = [], []
                for r in range(args.repeat):  # in turn, each first every other time
                    for workers in (1, 2) if r % 2 else (2, 1):
                        (one if workers == 1 else rule).append(_cpu_ms(bpe, texts, workers, cold))
                ratio = float(np.median(rule) / np.median(one))
                worst = max(worst, ratio)
                print(
                    f"| {name} | {size:,} | {mode} | {np.median(one):.3f} | "
                    f"{np.median(rule):.3f} | {ratio:.3f} |",
                    flush=True,
                )
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}; worst rule / one {worst:.3f}")
    return 0 if worst <= 1.02 else 1


if __name__ == "__main__":
    raise SystemExit(main())
