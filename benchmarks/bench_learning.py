"""How word2vec's rows learn, on NewsArticles: what the telemetry costs, and whether frequent
words converge faster.

1. **Telemetry's cost.** The skip-gram kernels alone, the default ``"batched"`` and the
   ``"classic"`` one (d=100, window 5, negative 5, sample 1e-3, min_count 5): one epoch,
   job by job as training cuts it (10,000 words), from the tables one epoch has trained,
   with ``row_stats``' record off and on (a fresh one: the rows' starts are copied too);
   then the whole one-epoch fit (one worker) off and on. Every measurement interleaves
   off and on in each repetition so that a change of load reaches both alike, in CPU time
   (one thread, so a busy machine slows the wall clock, not the work); medians and the
   fastest of the repetitions. The target: telemetry costs at most 5% of a skip-gram step,
   each kernel's.
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
    python benchmarks/bench_learning.py --cost      # telemetry's cost only (about 5 minutes)
    python benchmarks/bench_learning.py --quick     # 300 documents: a smoke test
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
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


def kernel_cost(sentences: list[list[str]], repeat: int) -> dict[str, tuple[float, ...]]:
    """Per skip-gram kernel, (median off, median on, fastest off, fastest on) CPU seconds of
    one epoch of the kernel alone, job by job, its record ``stats`` off and on."""
    from rowbook.data.corpus import encode_corpus
    from rowbook.data.sampling import negative_guide, negative_table, sample_thresholds
    from rowbook.models.word_vectors.telemetry import new_telemetry
    from rowbook.models.word_vectors.word2vec_batched_kernels import (
        SHARED_WINDOWS,
        train_job_batched,
    )
    from rowbook.models.word_vectors.word2vec_kernels import train_job
    from rowbook.models.word_vectors.word2vec_training import initial_tables, job_plan

    model = Word2Vec(**SETTINGS)
    vocab = model.choose_vocab(Counter(word for s in sentences for word in s))
    encoded = encode_corpus(sentences, vocab.keys)
    ids, starts = encoded.sentences(0, len(encoded.raw_lengths))
    bounds, _ = job_plan(encoded, model.batch_words)
    table = negative_table(vocab.counts)
    d, window, lr = SETTINGS["vector_size"], SETTINGS["window"], 0.0125
    sampling = (sample_thresholds(vocab.counts, SETTINGS["sample"]), True, window, True)
    kernels = {
        "batched": lambda *head, lr, seed, stats: train_job_batched(
            *head, SHARED_WINDOWS, lr, seed, False, stats
        ),
        "classic": lambda *head, lr, seed, stats: train_job(
            *head, True, True, lr, seed, False, stats
        ),
    }

    def epoch(kernel: str, on: bool, tables: dict, lr: float = lr) -> dict:
        W_in, W_out = tables["W_in"].copy(), tables["W_out"].copy()
        out = (W_out, table, negative_guide(table), SETTINGS["negative"])
        telemetry = new_telemetry(len(vocab), d, np.float32)
        for j in range(len(bounds) - 1):
            stats = (telemetry["counters"], telemetry["start"], np.int64(j + 1)) if on else None
            head = (W_in, (ids, starts, bounds[j], bounds[j + 1]), sampling, out, None)
            kernels[kernel](*head, lr=lr, seed=2 + j, stats=stats)
        return {"W_in": W_in, "W_out": W_out}

    first = initial_tables(len(vocab), d, 1, hierarchical_softmax=False)
    trained = epoch("batched", False, first, lr=2 * lr)  # the tables as training has them
    fns = {
        (k, on): lambda k=k, on=on: epoch(k, on, trained) for k in kernels for on in (False, True)
    }
    times = interleaved_times_ms(fns, repeat=repeat, warmup=1, clock=time.process_time)
    result = {}
    for k in kernels:
        off, on = times[k, False] / 1e3, times[k, True] / 1e3
        result[k] = (np.median(off), np.median(on), off.min(), on.min())
    return result


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
    parser.add_argument("--cost", action="store_true", help="telemetry's cost only")
    parser.add_argument("--repeat", type=int, default=7, help="repetitions of each timing")
    parser.add_argument(
        "--pictures", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "assets"
    )
    args = parser.parse_args(argv)
    sentences = newsarticles_tokens()
    epochs, per_band, repeat = 5, 300, args.repeat
    if args.quick:
        sentences, epochs, per_band, repeat = sentences[:300], 2, 30, 1
    n_tokens = sum(map(len, sentences))
    print(f"\n## How word2vec's rows learn (NewsArticles)\n\n{machine()}\n")
    print(f"{len(sentences)} documents, {n_tokens:,} tokens; skip-gram {SETTINGS}\n")

    print(f"load average before: {_load()}\n")
    costs = kernel_cost(sentences, repeat)
    costs["whole fit (batched)"] = telemetry_cost(sentences, repeat)
    print("| one epoch, CPU s | off median | on median | cost | off fastest | on fastest | cost |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, (off, on, fast_off, fast_on) in costs.items():
        print(
            f"| {name} | {off:.2f} | {on:.2f} | {100 * (on / off - 1):+.1f}% | "
            f"{fast_off:.2f} | {fast_on:.2f} | {100 * (fast_on / fast_off - 1):+.1f}% |"
        )
    print(f"\nload average after: {_load()}\n")
    targets = [
        (f"1.05 / ({name}: row_stats on / off)", 1.05 / min(on / off, fast_on / fast_off), 1.0)
        for name, (off, on, fast_off, fast_on) in costs.items()
        if name in ("batched", "classic")
    ]
    if args.cost:
        met = print_targets(targets)
        return 0 if met or args.quick else 1

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
    met = print_targets(targets)
    return 0 if met or args.quick else 1


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


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
