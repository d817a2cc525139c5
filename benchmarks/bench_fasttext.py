"""FastText on NewsArticles: rowbook against Facebook's fastText (the ``fasttext`` package), one run.

Both train skip-gram and CBOW with the issue's settings (d=100, window 5, negative 5,
sample 1e-3, min_count 5, n-grams 3-6, 2M buckets, 5 epochs, 2 threads, each tool's
default learning rate, 0.05 for both) on the same text file (NewsArticles lowercased to
``[a-z0-9']+`` tokens, one document per line). Every training runs in a child process,
which reports its fit time (vocabulary included), its peak resident memory right after
training (``ru_maxrss``; the tables dominate: 2M x 100 float32 rows = 800 MB) and the
memory it had before training (imports), then the scores:

* questions-words, WordSim353, SimLex-999 by gensim's ``KeyedVectors`` evaluation over the
  vocabulary's vectors (the same scoring for both tools);
* all 19,544 analogy questions: a word outside the vocabulary takes the vector its n-grams
  build (each tool's own ``get_word_vector`` / ``vector_for``); answers are searched among
  the vocabulary (3CosAdd on unit vectors, the question words excluded), so a question
  whose answer is not in the vocabulary counts as wrong.

Speed is corpus tokens x epochs / fit time: the median over ``--seeds`` runs; scores are
their mean. Run ``python benchmarks/bench_fasttext.py`` (``--quick``: 300 documents, one
epoch, one seed, 100k buckets).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_word2vec import _test_data, gensim_scores
from benchmarks.corpora import cache_dir, newsarticles_tokens
from benchmarks.timing import machine, print_targets

PARAMS = {
    "dim": 100,
    "ws": 5,
    "neg": 5,
    "t": 1e-3,
    "minCount": 5,
    "minn": 3,
    "maxn": 6,
    "bucket": 2_000_000,
    "epoch": 5,
    "thread": 2,
}
ROWBOOK_NAMES = {
    "dim": "vector_size",
    "ws": "window",
    "neg": "negative",
    "t": "sample",
    "minCount": "min_count",
    "minn": "minn",
    "maxn": "maxn",
    "bucket": "bucket",
    "epoch": "epochs",
    "thread": "workers",
}


def _corpus_file(sentences: list[list[str]], name: str) -> Path:
    path = cache_dir() / name
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
        tmp.replace(path)
    return path


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def all_questions(words: list[str], table: np.ndarray, vector_for, path: Path) -> float:
    """Accuracy over every question of ``path``; unseen question words use ``vector_for``."""
    index = {w: i for i, w in enumerate(words)}
    unit = table / np.maximum(np.linalg.norm(table, axis=1, keepdims=True), 1e-12)  # (V, d)
    questions = [
        line.lower().split() for line in path.read_text().splitlines() if not line.startswith(":")
    ]
    cache: dict[str, np.ndarray] = {}

    def vec(w: str) -> np.ndarray:
        if w in index:
            return unit[index[w]]
        if w not in cache:
            v = np.asarray(vector_for(w), dtype=np.float32)
            cache[w] = v / max(float(np.linalg.norm(v)), 1e-12)
        return cache[w]

    correct = 0
    for start in range(0, len(questions), 1000):
        block = questions[start : start + 1000]
        query = np.stack([vec(b) - vec(a) + vec(c) for a, b, c, _ in block])  # (Q, d)
        scores = query @ unit.T  # (Q, V)
        for row, (a, b, c, d) in zip(scores, block, strict=True):
            for w in (a, b, c):
                if w in index:
                    row[index[w]] = -np.inf
            correct += d in index and int(np.argmax(row)) == index[d]
    return correct / len(questions)


def child(tool: str, architecture: str, seed: int, corpus: str, params: dict) -> dict:
    """Train once in this (child) process; return time, memory and scores."""
    if tool == "fasttext":
        import fasttext

        before = _rss_mb()
        start = time.perf_counter()
        model = fasttext.train_unsupervised(
            corpus, model=architecture, verbose=0, **params
        )  # no seed option; 2 threads vary anyway
        seconds, peak = time.perf_counter() - start, _rss_mb()
        words = [w for w in model.words if w != "</s>"]
        table = np.stack([model.get_word_vector(w) for w in words])  # (V, d)
        vector_for = model.get_word_vector
    else:
        from rowbook.models import FastText

        settings = {ROWBOOK_NAMES[k]: v for k, v in params.items()}
        model = FastText(architecture=architecture, seed=seed, **settings)
        before = _rss_mb()
        start = time.perf_counter()
        model.fit(corpus)
        seconds, peak = time.perf_counter() - start, _rss_mb()
        words, table, vector_for = (
            list(model.vectors.index_to_key),
            model.vectors.vectors,
            model.vectors.vector_for,
        )
    scores = gensim_scores(words, table)
    scores["all_questions"] = all_questions(words, table, vector_for, _test_data()["analogy"])
    return {"seconds": seconds, "peak_mb": peak, "before_mb": before, **scores}


def _run_child(tool: str, architecture: str, seed: int, corpus: Path, params: dict) -> dict:
    argv = [
        sys.executable,
        __file__,
        "--child",
        tool,
        architecture,
        str(seed),
        str(corpus),
        json.dumps(params),
    ]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"{tool} {architecture} seed {seed} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _mean_runs(tool: str, architecture: str, seeds: int, corpus: Path, params: dict) -> dict:
    runs = [_run_child(tool, architecture, seed, corpus, params) for seed in range(1, seeds + 1)]
    mean = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
    mean["seconds"] = statistics.median(r["seconds"] for r in runs)
    mean["peak_mb"] = max(r["peak_mb"] for r in runs)
    return mean


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 documents, 1 epoch, one seed")
    parser.add_argument("--seeds", type=int, default=2, help="trainings per row")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        tool, arch, seed, corpus, params = args.child
        print(json.dumps(child(tool, arch, int(seed), corpus, json.loads(params))))
        return 0
    sentences, params = newsarticles_tokens(), dict(PARAMS)
    name = "newsarticles_tokens.txt"
    if args.quick:
        sentences, name, args.seeds = sentences[:300], "newsarticles_tokens_300.txt", 1
        params.update(epoch=1, bucket=100_000)
    corpus = _corpus_file(sentences, name)
    n_tokens = sum(map(len, sentences))
    print(f"\n## FastText on NewsArticles\n\n{machine()}\n")
    print(
        f"{len(sentences)} documents, {n_tokens} tokens; {params}; {args.seeds} seed(s) per row; "
        "each training in its own process\n"
    )
    print(
        "| model | words/s | fit s | speed vs fastText | peak MB (before fit) | analogy | WS353 | SimLex "
        "| all questions |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    targets = []
    for arch in ("skipgram", "cbow"):
        f = _mean_runs("fasttext", arch, args.seeds, corpus, params)
        r = _mean_runs("rowbook", arch, args.seeds, corpus, params)
        words = n_tokens * params["epoch"]
        for tool, m in (("fastText", f), ("rowbook", r)):
            print(
                f"| {tool} {arch} | {words / m['seconds'] / 1e3:,.0f}k | {m['seconds']:.1f} | "
                f"{f['seconds'] / m['seconds']:.2f} | {m['peak_mb']:,.0f} ({m['before_mb']:,.0f}) | "
                f"{m['analogy']:.3f} | {m['ws353']:.3f} | {m['simlex']:.3f} | {m['all_questions']:.3f} |"
            )
        if arch == "skipgram":
            targets.append(
                ("skipgram: rowbook speed / fastText speed", f["seconds"] / r["seconds"], 2.0)
            )
            targets += [
                (f"skipgram: {k} rowbook - fastText", r[k] - f[k], -tol)
                for k, tol in (("analogy", 0.01), ("ws353", 0.02), ("simlex", 0.02))
            ]
            targets.append(
                (
                    "skipgram: fastText peak MB / rowbook peak MB x 1.2",
                    1.2 * f["peak_mb"] / r["peak_mb"],
                    1.0,
                )
            )
    print(
        "\nwords/s = corpus tokens x epochs / fit time (median); scores (mean over seeds) by gensim's "
        "KeyedVectors; all questions: unseen words from their n-grams."
    )
    met = print_targets(targets)
    print(f"\nall targets met: {'yes' if met else 'no'}")
    return 0 if met or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
