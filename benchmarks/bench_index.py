"""``Vectors.build_index()`` with its defaults against the exact scan, at 100k and 1M rows.

Tables of clustered 100-d vectors (one Gaussian cluster per 50 rows, like the clumpy
geometry of word vectors; pure noise would be a worst case no real table has). For each
size: the time ``build_index()`` takes with no arguments (the kind and settings it chose
from the size), then 300 queries by key through the whole per-query path,
``most_similar(key, topn=10)`` (the exact scan) and ``most_similar(key, topn=10,
approximate=True)``, run in turn query by query so that the machine's load reaches both
alike: median latency of each, their ratio, and recall@10 of the approximate answers
against the exact ones. Also shown: the index's own search (``VectorIndex.search``), and a
batch of the 300 keys answered by one ``most_similar(batch=..., approximate=True)``.

    python benchmarks/bench_index.py              # 100,000 and 1,000,000 rows
    python benchmarks/bench_index.py --quick      # 20,000 and 100,000 rows: a smoke test
    python benchmarks/bench_index.py --sizes 1000000

Target (from the issue): at 1M rows, ``build_index()`` defaults answer >= 100x faster than
the exact scan at recall@10 >= 0.95, and build within a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import machine, print_targets

from rowbook.vectors import Vectors
from rowbook.vectors.index import default_settings

QUERIES = 300


def clustered(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` rows around ``n // 50`` Gaussian centres (float32, not normalised)."""
    centres = rng.standard_normal((max(1, n // 50), d), dtype=np.float32)
    table = centres[rng.integers(0, len(centres), n)]
    table += 0.6 * rng.standard_normal((n, d), dtype=np.float32)
    return table


def run(n: int, d: int = 100) -> dict[str, float]:
    rng = np.random.default_rng(0)
    table = Vectors([f"w{i}" for i in range(n)], clustered(n, d, rng), copy=False)
    table.get_normed_vectors()  # the unit rows, cached by the first query either way
    t = time.perf_counter()
    index = table.build_index()
    build = time.perf_counter() - t
    keys = [f"w{i}" for i in rng.choice(n, QUERIES, replace=False)]
    exact_ms, fast_ms, index_ms, hits, truths = [], [], [], 0, []
    unit = table.get_normed_vectors()
    gc.disable()
    try:
        for key in keys:
            t = time.perf_counter()
            truth = table.most_similar(key, topn=10)
            exact_ms.append(time.perf_counter() - t)
            t = time.perf_counter()
            found = table.most_similar(key, topn=10, approximate=True)
            fast_ms.append(time.perf_counter() - t)
            q = unit[table.get_index(key)]
            t = time.perf_counter()
            index.search(q, 11)
            index_ms.append(time.perf_counter() - t)
            hits += len({k for k, _ in truth} & {k for k, _ in found})
            truths.append({k for k, _ in truth})
        t = time.perf_counter()
        table.most_similar(batch=keys, topn=10, approximate=True)
        batch = (time.perf_counter() - t) / len(keys)
    finally:
        gc.enable()
    exact, fast = float(np.median(exact_ms)) * 1e3, float(np.median(fast_ms)) * 1e3
    sweep = _sweep(table, index, keys, truths) if index.kind == "hnsw" else []
    return {
        "sweep": sweep,
        "rows": n,
        "settings": ", ".join(f"{k}={v}" for k, v in default_settings(n).items()),
        "build": build,
        "exact": exact,
        "fast": fast,
        "index": float(np.median(index_ms)) * 1e3,
        "batch": batch * 1e3,
        "speedup": exact / fast,
        "recall": hits / (10 * len(keys)),
    }


def _sweep(table: Vectors, index, keys: list[str], truths: list[set[str]]) -> list[tuple]:
    """The same queries at other ``ef_search`` settings of the built graph: (ef_search,
    median ms of ``most_similar(approximate=True)``, recall@10)."""
    chosen, rows = index.ef_search, []
    for ef in (16, 24, 32, 48, 64, 128):
        index.ef_search = ef
        times, hits = [], 0
        for key, truth in zip(keys, truths, strict=True):
            t = time.perf_counter()
            found = table.most_similar(key, topn=10, approximate=True)
            times.append(time.perf_counter() - t)
            hits += len(truth & {k for k, _ in found})
        rows.append((ef, float(np.median(times)) * 1e3, hits / (10 * len(keys))))
    index.ef_search = chosen
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sizes", type=int, nargs="+")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([20_000, 100_000] if args.quick else [100_000, 1_000_000])
    print(machine())
    print(f"\n100-d float32 rows, one cluster centre per 50 rows; {QUERIES} queries by key\n")
    print(
        "| rows | build_index() chose | build s | exact ms | approximate ms | speed-up "
        "| recall@10 | index search ms | batch ms/query |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    results = []
    for n in sizes:
        r = run(n)
        results.append(r)
        print(
            f"| {n:,} | {r['settings']} | {r['build']:.1f} | {r['exact']:.2f} | "
            f"{r['fast']:.3f} | {r['speedup']:.0f}x | {r['recall']:.3f} | {r['index']:.3f} | "
            f"{r['batch']:.3f} |",
            flush=True,
        )
    for r in results:
        if r["sweep"]:
            print(
                f"\nthe {r['rows']:,}-row graph at other ef_search (exact scan {r['exact']:.2f} ms):"
            )
            print("\n| ef_search | approximate ms | speed-up | recall@10 |\n|---:|---:|---:|---:|")
            for ef, ms, recall in r["sweep"]:
                print(f"| {ef} | {ms:.3f} | {r['exact'] / ms:.0f}x | {recall:.3f} |")
    largest = results[-1]
    speedup = largest["speedup"] if largest["recall"] >= 0.95 else 0.0
    ok = print_targets(
        [
            (
                f"build_index() defaults at {largest['rows']:,} rows: query vs exact scan "
                "(recall@10 >= 0.95)",
                speedup,
                100.0,
            )
        ]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
