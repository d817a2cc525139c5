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

Each architecture runs rowbook with each kernel (``FastText(kernel="classic")``, fastText's
steps, and ``"batched"``: in skip-gram a window as one minibatch, in CBOW 8 windows far apart
against shared negatives). Speed is corpus tokens x epochs / fit time: the median over
``--seeds`` runs; scores are their mean. Run ``python benchmarks/bench_fasttext.py``
(``--architectures cbow``: CBOW only; ``--quick``: 300 documents, one epoch, one seed, 100k
buckets; ``--quality``: only rowbook's two kernels, 3 seeds, on NewsArticles and on the
health tweets, the measurement behind ``FastText``'s default kernel; ``--kernels``: the
kernels alone, one thread, and CBOW's GFLOP/s: ``(1 + negative) 6 d`` a window for its
targets and ``2 d`` a row of its context words' bags, the mean and the scatter of the step;
``--redraw-cost``: the default kernels alone with a negative equal to its target skipped and
drawn again, interleaved, medians of 5).
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

from benchmarks.bench_anchors import FLOP_PER_CYCLE, clock_ghz
from benchmarks.bench_word2vec import _test_data, gensim_scores
from benchmarks.corpora import cache_dir, healthtweets_tokens, newsarticles_tokens
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
    """Train once in this (child) process; return time, memory and scores.

    ``tool``: ``fasttext``, or ``rowbook`` followed by its kernel (``rowbook-batched``)."""
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
        kernel = tool.partition("-")[2] or FastText().kernel
        model = FastText(architecture=architecture, seed=seed, kernel=kernel, **settings)
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
    return _mean(
        [_run_child(tool, architecture, seed, corpus, params) for seed in range(1, seeds + 1)]
    )


def _mean(runs: list[dict]) -> dict:
    """Scores: the mean over the runs; seconds: the median; peak memory: the largest."""
    mean = {k: float(np.mean([r[k] for r in runs])) for k in runs[0]}
    mean["seconds"] = statistics.median(r["seconds"] for r in runs)
    mean["peak_mb"] = max(r["peak_mb"] for r in runs)
    return mean


def kernel_quality(seeds: int, params: dict, arch: str) -> list[tuple[str, float, float]]:
    """The classic and batched kernels of ``arch`` (2 workers) on NewsArticles and the health
    tweets: mean scores and fit time over ``seeds``; returns the targets (batched - classic)."""
    targets = []
    for name, sentences, file in (
        ("NewsArticles", newsarticles_tokens(), "newsarticles_tokens.txt"),
        ("health tweets", healthtweets_tokens(), "healthtweets_tokens.txt"),
    ):
        corpus = _corpus_file(sentences, file)
        print(
            f"\n### {arch}'s kernels on {name} ({sum(map(len, sentences)):,} tokens, "
            f"{seeds} seeds, load {_load()})\n"
        )
        print("| kernel | fit s (median) | analogy | WS353 | SimLex | all questions |")
        print("|---|---:|---:|---:|---:|---:|")
        scores = {}
        for kernel in ("classic", "batched"):
            m = _mean_runs(f"rowbook-{kernel}", arch, seeds, corpus, params)
            scores[kernel] = m
            print(
                f"| {kernel} | {m['seconds']:.1f} | {m['analogy']:.3f} | {m['ws353']:.3f} | "
                f"{m['simlex']:.3f} | {m['all_questions']:.3f} |"
            )
        targets += [
            (
                f"{arch}, {name}: {k} batched - classic",
                scores["batched"][k] - scores["classic"][k],
                -0.01,
            )
            for k in ("analogy", "ws353", "simlex")
        ]
    print(f"\nload after: {_load()}")
    return targets


def _epoch_timer(sentences: list[list[str]], arch: str):
    """``epoch(batched, redraw)``: CPU seconds of one epoch of ``arch``'s classic or batched
    kernel alone (one thread, after a first epoch from the initial tables), at the
    benchmark's settings; and the model those settings make."""
    from rowbook.data.corpus import read_corpus
    from rowbook.data.sampling import negative_guide, negative_table, sample_thresholds
    from rowbook.models import FastText
    from rowbook.models.word_vectors.fasttext import initial_input
    from rowbook.models.word_vectors.fasttext_batched_kernels import train_job_batched
    from rowbook.models.word_vectors.fasttext_kernels import train_job
    from rowbook.models.word_vectors.word2vec_batched_cbow_kernels import (
        CBOW_BATCH,
        train_job_batched_cbow,
    )
    from rowbook.text.char_ngrams import subword_table

    model = FastText(**{ROWBOOK_NAMES[k]: v for k, v in PARAMS.items()})
    vocab, encoded = read_corpus(sentences, min_count=model.min_count)
    bag_starts, bag_ids = subword_table(
        vocab.keys, minn=model.minn, maxn=model.maxn, bucket=model.n_buckets
    )
    table = negative_table(vocab.counts, model.ns_exponent)
    thresholds = sample_thresholds(vocab.counts, model.sample)
    ids, starts = encoded.sentences(0, len(encoded.raw_lengths))
    W_in0, n = initial_input(1, vocab.keys, model), len(starts) - 1
    skipgram = arch == "skipgram"

    def epoch(batched: bool, redraw: bool) -> float:
        W_in, W_out = W_in0.copy(), np.zeros((len(vocab), model.vector_size), np.float32)
        out = (W_out, table, negative_guide(table), model.negative)
        corpus = ((ids, starts, 0, n), (thresholds, True, model.window, True))
        bags = (bag_starts, bag_ids)
        if batched and not skipgram:
            cbow = (W_in, *corpus, out, None, True, CBOW_BATCH)
            run = lambda lr, seed: train_job_batched_cbow(  # noqa: E731
                *cbow, lr, seed, False, None, bags
            )
        else:
            head = (W_in, bags, *corpus, out)
            run = (
                (lambda lr, seed: train_job_batched(*head, lr, seed, None, redraw))
                if batched
                else (lambda lr, seed: train_job(*head, skipgram, lr, seed, None, redraw))
            )
        run(model.lr, 1)  # a first epoch: the tables as training has them
        start = time.process_time()
        run(model.lr * 0.5, 2)
        return time.process_time() - start

    return epoch, model, (ids, starts, thresholds, np.diff(bag_starts))


def kernel_seconds(sentences: list[list[str]], name: str, arch: str, repeat: int = 3) -> None:
    """CPU seconds of one epoch of each kernel of ``arch`` alone (one thread, after a first
    epoch), at the benchmark's settings (the model's ``redraw``); prints a table row (for
    CBOW with the GFLOP/s of :func:`cbow_epoch_flop`)."""
    epoch, model, (ids, starts, thresholds, bag_sizes) = _epoch_timer(sentences, arch)
    skipgram = arch == "skipgram"
    times = {"classic": [], "batched": []}
    for _ in range(repeat):
        times["classic"].append(epoch(False, model.redraw))
        times["batched"].append(epoch(True, model.redraw))
    c, b = (statistics.median(times[k]) for k in ("classic", "batched"))
    words = sum(map(len, sentences))
    row = f"| {name} | {c:.2f} | {words / c / 1e3:,.0f}k |"
    if not skipgram:
        flop = cbow_epoch_flop(ids, starts, thresholds, bag_sizes, model)
        row = f"{row} {flop / c / 1e9:.1f} |"
    row = f"{row} {b:.2f} | {words / b / 1e3:,.0f}k |"
    if not skipgram:
        row = f"{row} {flop / b / 1e9:.1f} |"
    print(f"{row} {c / b:.2f}x |")


def redraw_seconds(sentences: list[list[str]], name: str, arch: str, repeat: int = 5) -> None:
    """CPU seconds of one epoch of ``arch``'s default kernel alone with a negative equal to
    its target skipped and drawn again, interleaved; prints a table row of the medians."""
    from rowbook.data.sampling import keep_probabilities

    epoch, model, (ids, *_) = _epoch_timer(sentences, arch)
    batched = model._kernel == "batched" if arch == "skipgram" else False
    times = {False: [], True: []}
    for _ in range(repeat):
        for redraw in (False, True):
            times[redraw].append(epoch(batched, redraw))
    skip, again = (statistics.median(times[k]) for k in (False, True))
    # a target is a kept token; a draw is it with its share of count ** ns_exponent
    counts = np.bincount(ids).astype(np.float64)  # (V,)
    kept = counts * keep_probabilities(counts, model.sample)
    q = counts**model.ns_exponent / np.sum(counts**model.ns_exponent)
    share = float(kept @ q / kept.sum())
    print(f"| {name} | {arch} | {share:.4%} | {skip:.3f} | {again:.3f} | {again / skip:.3f} |")


def cbow_epoch_flop(ids, starts, thresholds, bag_sizes, model) -> int:
    """FLOPs of one CBOW epoch after subsampling and window shrinking (rowbook's draws):
    ``(1 + negative) 6 d`` a window with a context (a dot product and two axpy's a target),
    and ``2 d`` a row of its context words' bags (the mean, and the scatter of the step)."""
    from rowbook.models.word_vectors.word2vec_batched_kernels import context_windows
    from rowbook.models.word_vectors.word2vec_kernels import kept_words

    w = model.window
    sentences = (ids, starts, 0, len(starts) - 1)
    words, ends, shrinks, _ = kept_words(sentences, (thresholds, True, w, True), np.uint64(7))
    centres, lows, highs = context_windows(ends, shrinks, w)
    sizes = bag_sizes[words]  # (N,) rows of each kept word's bag
    before = np.concatenate([[0], np.cumsum(sizes)])  # (N + 1,) rows before each position
    rows = before[highs] - before[lows] - sizes[centres]  # (windows,) context rows a window
    d = model.vector_size
    return len(centres) * (1 + model.negative) * 6 * d + int(rows.sum()) * 2 * d


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 documents, 1 epoch, one seed")
    parser.add_argument("--seeds", type=int, default=3, help="trainings per row")
    parser.add_argument(
        "--quality", action="store_true", help="only rowbook's two kernels of each architecture"
    )
    parser.add_argument("--kernels", action="store_true", help="only the kernels alone, timed")
    parser.add_argument(
        "--redraw-cost",
        action="store_true",
        help="only the default kernels alone, a negative equal to its target skipped / drawn again",
    )
    parser.add_argument(
        "--architectures", default="skipgram,cbow", help="comma-separated (default: %(default)s)"
    )
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        tool, arch, seed, corpus, params = args.child
        print(json.dumps(child(tool, arch, int(seed), corpus, json.loads(params))))
        return 0
    architectures = args.architectures.split(",")
    if args.kernels:
        for arch in architectures:
            print(f"\n## FastText {arch}'s kernels alone: one epoch, one thread (load {_load()})\n")
            flops = "" if arch == "skipgram" else " GFLOP/s |"
            print(
                f"| corpus | classic CPU s | words/s |{flops} batched CPU s | words/s |{flops} "
                "speed-up |"
            )
            print("|---|" + "---:|" * (7 if flops else 5))
            kernel_seconds(newsarticles_tokens(), "NewsArticles", arch)
            kernel_seconds(healthtweets_tokens(), "health tweets", arch)
        print(
            f"\nload after: {_load()}; one core's peak: {FLOP_PER_CYCLE * clock_ghz():.0f} GFLOP/s"
        )
        return 0
    if args.redraw_cost:
        print(f"\n## The default kernels alone, one epoch, one thread (load {_load()})\n")
        print(
            "| corpus | architecture | draws equal to their target (estimated) | skip CPU s "
            "| redraw CPU s | redraw / skip |"
        )
        print("|---|---|---:|---:|---:|---:|")
        for arch in architectures:
            redraw_seconds(newsarticles_tokens(), "NewsArticles", arch)
            redraw_seconds(healthtweets_tokens(), "health tweets", arch)
        print(f"\nload after: {_load()}")
        return 0
    if args.quality:
        print(f"\n## FastText: classic and batched kernels\n\n{machine()}\n\n{PARAMS}")
        targets = []
        for arch in architectures:
            targets += kernel_quality(args.seeds, dict(PARAMS), arch)
        met = print_targets(targets)
        print(f"\nall targets met: {'yes' if met else 'no'}")
        return 0 if met else 1
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
        f"each training in its own process; load {_load()}\n"
    )
    print(
        "| model | words/s | fit s | speed vs fastText | peak MB (before fit) | analogy | WS353 | SimLex "
        "| all questions |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    targets = []
    for arch in architectures:
        tools = ("fasttext", "rowbook-classic", "rowbook-batched")
        runs = {}
        for seed in range(1, args.seeds + 1):  # the tools in turn: a change of load reaches all
            for tool in tools:
                runs.setdefault(tool, []).append(_run_child(tool, arch, seed, corpus, params))
        means = {tool: _mean(rs) for tool, rs in runs.items()}
        f = means["fasttext"]
        words = n_tokens * params["epoch"]
        for tool, m in means.items():
            print(
                f"| {tool} {arch} | {words / m['seconds'] / 1e3:,.0f}k | {m['seconds']:.1f} | "
                f"{f['seconds'] / m['seconds']:.2f} | {m['peak_mb']:,.0f} ({m['before_mb']:,.0f}) | "
                f"{m['analogy']:.3f} | {m['ws353']:.3f} | {m['simlex']:.3f} | {m['all_questions']:.3f} |"
            )
        if arch == "skipgram":
            r, b = means["rowbook-classic"], means["rowbook-batched"]
            targets += [
                (
                    "skipgram: rowbook classic speed / fastText speed",
                    f["seconds"] / r["seconds"],
                    2.0,
                ),
                (
                    "skipgram: rowbook batched speed / fastText speed",
                    f["seconds"] / b["seconds"],
                    4.0,
                ),
            ]
            targets += [
                (f"skipgram: {k} rowbook batched - fastText", b[k] - f[k], -0.02)
                for k in ("analogy", "ws353", "simlex")
            ]
            targets.append(
                (
                    "skipgram: fastText peak MB / rowbook peak MB x 1.2",
                    1.2 * f["peak_mb"] / b["peak_mb"],
                    1.0,
                )
            )
        if arch == "cbow":
            r, b = means["rowbook-classic"], means["rowbook-batched"]
            targets.append(
                ("cbow: rowbook batched speed / classic speed", r["seconds"] / b["seconds"], 1.0)
            )
            targets += [
                (f"cbow: {k} rowbook batched - classic", b[k] - r[k], -0.01)
                for k in ("analogy", "ws353", "simlex")
            ]
    print(
        "\nwords/s = corpus tokens x epochs / fit time (median); scores (mean over seeds) by gensim's "
        f"KeyedVectors; all questions: unseen words from their n-grams. Load after: {_load()}"
    )
    met = print_targets(targets)
    print(f"\nall targets met: {'yes' if met else 'no'}")
    return 0 if met or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
