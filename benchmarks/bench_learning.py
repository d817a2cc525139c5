"""How word2vec's rows learn, on NewsArticles: what the telemetry costs, and whether frequent
words converge faster.

1. **Telemetry's cost.** The same skip-gram fit (d=100, window 5, negative 5, sample 1e-3,
   min_count 5, one worker, one epoch) with ``row_stats`` off and on, interleaved in every
   repetition so that a change of load reaches both alike; CPU time (one worker, so a
   busy machine slows the wall clock, not the work); medians and the fastest of the
   repetitions. The target: telemetry costs at most 5% of training speed.
2. **Do frequent words converge faster?** A 5-epoch fit keeps ``W_in`` after every epoch (a
   callback). For each word of a seeded sample from four frequency bands (ranks 1-1,000,
   1,001-5,000, 5,001-20,000, beyond), its 10 nearest neighbours by cosine are found at
   every epoch, and the share of its final 10 that epoch ``k`` already has is averaged per
   band: the overlap@10 with the final neighbours, by epoch and band. The telemetry of the
   same run gives each band's updates per row and distance travelled.

It writes two pictures (``--pictures DIR``, default ``docs/assets``): the convergence curves
by band (``convergence.png``) and the run's telemetry (``word2vec_row_stats.png``: updates
against frequency rank, distance against updates, the rows never touched).

    python benchmarks/bench_learning.py
    python benchmarks/bench_learning.py --quick     # 300 documents: a smoke test
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import newsarticles_tokens
from timing import interleaved_times_ms, machine, print_targets

from rowbook.models import Word2Vec

SETTINGS = {
    "vector_size": 100,
    "window": 5,
    "negative": 5,
    "sample": 1e-3,
    "min_count": 5,
    "workers": 1,
    "seed": 1,
}
BANDS = ((1, 1_000), (1_001, 5_000), (5_001, 20_000), (20_001, None))


def telemetry_cost(sentences: list[list[str]], repeat: int) -> tuple[float, float, float, float]:
    """(median off, median on, fastest off, fastest on) CPU seconds of a one-epoch fit (one
    worker: CPU time, unlike wall time, does not grow when other work shares the cores)."""
    fns = {
        on: lambda on=on: Word2Vec(**SETTINGS, epochs=1, row_stats=on).fit(sentences)
        for on in (False, True)
    }
    times = interleaved_times_ms(fns, repeat=repeat, warmup=1, clock=time.process_time)
    off, on = times[False] / 1e3, times[True] / 1e3
    return float(np.median(off)), float(np.median(on)), float(off.min()), float(on.min())


def _neighbours(unit: np.ndarray, rows: np.ndarray, k: int = 10) -> np.ndarray:
    """(R, k) the ``k`` nearest rows of each of ``rows`` by cosine, itself left out."""
    scores = unit[rows] @ unit.T  # (R, V)
    scores[np.arange(len(rows)), rows] = -np.inf
    return np.argpartition(-scores, k, axis=1)[:, :k]


def _overlap(found: np.ndarray, final: np.ndarray) -> float:
    """Mean share of each row of ``final`` (R, k) that the same row of ``found`` holds."""
    return float(
        np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(found, final, strict=True)])
    )


def convergence(sentences: list[list[str]], epochs: int, per_band: int, seed: int = 0):
    """Overlap@10 with the final neighbours per epoch and band, and the run's telemetry."""
    snapshots: list[np.ndarray] = []
    model = Word2Vec(**SETTINGS, epochs=epochs, row_stats=True)
    model.fit(sentences, callback=lambda progress: snapshots.append(model.W_in_.copy()))
    V = len(model.index_to_key_)
    rng = np.random.default_rng(seed)
    bands = []
    for lo, hi in BANDS:
        ranks = np.arange(lo - 1, min(hi or V, V))
        if len(ranks):
            bands.append(((lo, hi), rng.choice(ranks, min(per_band, len(ranks)), replace=False)))
    units = [W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-12) for W in snapshots]
    overlap = {}
    for band, rows in bands:
        final = _neighbours(units[-1], rows)
        overlap[band] = [_overlap(_neighbours(u, rows), final) for u in units]
    return overlap, model.row_stats_


def _band_name(band: tuple[int, int | None]) -> str:
    lo, hi = band
    return f"{lo:,}-{hi:,}" if hi else f"{lo:,}+"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 documents: a smoke test")
    parser.add_argument(
        "--pictures", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "assets"
    )
    args = parser.parse_args(argv)
    sentences = newsarticles_tokens()
    epochs, per_band, repeat = 5, 300, 5
    if args.quick:
        sentences, epochs, per_band, repeat = sentences[:300], 2, 30, 1
    n_tokens = sum(map(len, sentences))
    print(f"\n## How word2vec's rows learn (NewsArticles)\n\n{machine()}\n")
    print(f"{len(sentences)} documents, {n_tokens:,} tokens; skip-gram {SETTINGS}\n")

    off, on, fast_off, fast_on = telemetry_cost(sentences, repeat)
    print("| one epoch, CPU time | median s | fastest s |\n|---|---:|---:|")
    print(
        f"| row_stats off | {off:.2f} | {fast_off:.2f} |\n| row_stats on | {on:.2f} | {fast_on:.2f} |"
    )
    print(
        f"\ntelemetry's cost: {100 * (on / off - 1):+.1f}% (median), {100 * (fast_on / fast_off - 1):+.1f}% (fastest)\n"
    )

    overlap, stats = convergence(sentences, epochs, per_band)
    header = " | ".join(f"epoch {k}" for k in range(1, epochs + 1))
    print(f"| frequency band (rank) | updates per row (median) | distance (median) | {header} |")
    print("|---|---:|---:|" + "---:|" * epochs)
    rank = stats.frequency_rank()
    for band, curve in overlap.items():
        lo, hi = band
        rows = (rank >= lo) & (rank <= (hi or len(rank)))
        cells = " | ".join(f"{v:.2f}" for v in curve)
        print(
            f"| {_band_name(band)} | {np.median(stats.updates[rows]):,.0f} | "
            f"{np.median(stats.distance[rows]):.2f} | {cells} |"
        )
    print(
        "\noverlap@10: the share of a word's final 10 nearest neighbours it already has after "
        f"epoch k (mean over {per_band} sampled words per band)."
    )
    print(f"\n{stats.summary()}")
    if not args.quick:
        _pictures(overlap, stats, args.pictures)
    cost = min(fast_on / fast_off, on / off)
    met = print_targets([("1.05 / (row_stats on / off time)", 1.05 / cost, 1.0)])
    return 0 if met or args.quick else 1


def _pictures(overlap, stats, folder: Path) -> None:
    from rowbook.viz import plot_row_stats
    from rowbook.viz.plots import new_figure, save_png

    fig = new_figure(figsize=(6, 4), dpi=110)
    ax = fig.add_subplot()
    for band, curve in overlap.items():
        ax.plot(range(1, len(curve) + 1), curve, marker="o", label=f"ranks {_band_name(band)}")
    ax.set_xlabel("epoch")
    ax.set_ylabel("overlap@10 with the final neighbours")
    ax.set_title("word2vec on NewsArticles: which words settle first")
    ax.legend()
    save_png(fig, folder / "convergence.png")
    plot_row_stats(stats, folder / "word2vec_row_stats.png")
    print(f"\npictures: {folder / 'convergence.png'}, {folder / 'word2vec_row_stats.png'}")


if __name__ == "__main__":
    raise SystemExit(main())
