"""Which of fastText's choices is worth what: FastText skip-gram variants on one corpus, scored.

Rows, each trained in its own process, ``--seeds`` seeds (the ``fasttext`` package has no
seed for unsupervised training: its runs differ by their two threads), scores the mean:

* ``fasttext``: the ``fasttext`` package, 2 threads (what ``bench_fasttext.py`` compares);
* ``rowbook``: :class:`rowbook.models.FastText` at its defaults, 2 workers;
* ``loop``: :func:`~rowbook.models.word_vectors.fasttext_loop.train_like_fasttext`, fastText's
  loop step for step on one thread (its tables are ``fasttext``'s with ``thread=1``);
* ``loop-<change>``: that loop with one of rowbook's choices in place of fastText's:
  ``init2`` / ``init10`` (the initial table fastText draws with 2 / 10 threads),
  ``exact-sigmoid``, ``skip-target`` (a negative equal to the target skipped, not drawn
  again), ``lr10000`` (the learning rate updated every 10,000 tokens, a rowbook job),
  ``no-eos`` (no ``</s>`` tokens), ``rowbook-init`` (rowbook's initial table: every row
  in use drawn), ``vocab-sample`` (subsampling frequencies over the vocabulary's tokens),
  ``vocab-epochs`` (``epoch`` passes over the file: fastText trains ``epoch * ntokens``
  tokens of the vocabulary, ``ntokens`` counting the tokens ``min_count`` cuts too);
* ``rowbook-<change>``: rowbook with one of fastText's choices: ``init1`` / ``init2`` (the
  initial table fastText draws with 1 / 2 threads), ``zero-ngrams`` (every n-gram row
  starting at zero, the word rows drawn), ``epochs6`` (6 epochs, not 5).

Settings are ``bench_fasttext.py``'s (d=100, window 5, negative 5, sample 1e-3, min_count 5,
n-grams 3-6, 2M buckets, 5 epochs). Scores by gensim's ``KeyedVectors`` over the
vocabulary's vectors (``</s>`` left out). ``--corpus tweets`` trains on the health tweets
(one tweet a line) instead of NewsArticles (one article a line). Run
``python benchmarks/bench_fasttext_loop.py --rows rowbook loop loop-init2``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_fasttext import PARAMS, ROWBOOK_NAMES, _corpus_file
from benchmarks.bench_word2vec import gensim_scores
from benchmarks.corpora import healthtweets_tokens, newsarticles_tokens
from benchmarks.timing import machine

ROWS = (
    "fasttext",
    "rowbook",
    "loop",
    "loop-init2",
    "loop-init10",
    "loop-exact-sigmoid",
    "loop-skip-target",
    "loop-lr10000",
    "loop-no-eos",
    "loop-rowbook-init",
    "loop-vocab-sample",
    "rowbook-init1",
    "rowbook-init2",
    "rowbook-zero-ngrams",
    "loop-vocab-epochs",
    "rowbook-epochs6",
)


def _rowbook_model(seed: int, workers: int, params: dict):
    from rowbook.models import FastText

    settings = {ROWBOOK_NAMES[k]: v for k, v in params.items() if k != "thread"}
    return FastText(architecture="skipgram", seed=seed, workers=workers, **settings)


def _loop(row: str, seed: int, corpus: str, params: dict):
    from rowbook.models.word_vectors import fasttext_loop as loop

    change = row.removeprefix("loop").removeprefix("-")
    options = {
        "": {},
        "init2": {"init_threads": 2},
        "init10": {"init_threads": 10},
        "exact-sigmoid": {"exact_sigmoid": True},
        "skip-target": {"resample": False},
        "lr10000": {"lr_update_rate": 10_000},
    }
    if change == "no-eos":
        read = loop._stream

        def _stream(source, vocab, min_count):
            ids, vocab = read(source, vocab, min_count)
            eos = vocab.keys.index("</s>")
            return ids[ids != eos], vocab

        loop._stream = _stream
    elif change == "rowbook-init":
        from rowbook.models.word_vectors.fasttext import initial_input

        def rowbook_init(n_rows, dim, seed, threads=1):
            return initial_input(seed, state["keys"], model)

        state: dict = {}
        read = loop._stream

        def _stream_keys(source, vocab, min_count):
            ids, vocab = read(source, vocab, min_count)
            state["keys"] = vocab.keys
            return ids, vocab

        loop._stream = _stream_keys
        loop.fasttext_initial_input = rowbook_init
    elif change == "vocab-epochs":
        import dataclasses

        read, discard = loop._stream, loop.discard_probabilities
        ntokens: dict = {}

        def _stream_passes(source, vocab, min_count):
            ids, vocab = read(source, vocab, min_count)
            ntokens["all"] = vocab.total_words
            return ids, dataclasses.replace(vocab, total_words=int(vocab.counts.sum()))

        loop._stream = _stream_passes
        loop.discard_probabilities = lambda counts, _, t: discard(counts, ntokens["all"], t)
    elif change == "vocab-sample":
        discard = loop.discard_probabilities
        loop.discard_probabilities = lambda counts, ntokens, t: discard(counts, counts.sum(), t)
    model = _rowbook_model(seed, 1, params)
    return loop.train_like_fasttext(model, corpus, **options.get(change, {}))


def _rowbook(row: str, seed: int, corpus: str, params: dict):
    from rowbook.models.word_vectors import fasttext
    from rowbook.models.word_vectors.fasttext_loop import fasttext_initial_input

    change = row.removeprefix("rowbook").removeprefix("-")
    if change.startswith("init"):
        threads = int(change.removeprefix("init"))

        def init(seed, keys, model):
            return fasttext_initial_input(
                len(keys) + model.n_buckets, model.vector_size, seed, threads
            )

        fasttext.initial_input = init
    elif change == "epochs6":
        params = {**params, "epoch": 6}
    elif change == "zero-ngrams":
        words_only = fasttext.initial_input

        def init(seed, keys, model):
            W = words_only(seed, keys, model)
            W[len(keys) :] = 0.0
            return W

        fasttext.initial_input = init
    return _rowbook_model(seed, params["thread"], params).fit(corpus)


def child(row: str, seed: int, corpus: str, params: dict) -> dict:
    """Train one row in this (child) process; its fit seconds and scores."""
    start = time.perf_counter()
    if row == "fasttext":
        import fasttext

        model = fasttext.train_unsupervised(corpus, model="skipgram", verbose=0, **params)
        seconds = time.perf_counter() - start
        words = [w for w in model.words if w != "</s>"]
        table = np.stack([model.get_word_vector(w) for w in words])  # (V, d)
    else:
        train = _loop if row.startswith("loop") else _rowbook
        model = train(row, seed, corpus, params)
        seconds = time.perf_counter() - start
        keys = model.vectors.index_to_key
        keep = [i for i, w in enumerate(keys) if w != "</s>"]
        words, table = [keys[i] for i in keep], model.vectors.vectors[keep]
    return {"seconds": seconds, **gensim_scores(words, table)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=["fasttext", "rowbook", "loop"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--corpus", choices=("news", "tweets"), default="news")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        row, seed, corpus, params = args.child
        print(json.dumps(child(row, int(seed), corpus, json.loads(params))))
        return 0
    if args.corpus == "news":
        corpus = _corpus_file(newsarticles_tokens(), "newsarticles_tokens.txt")
    else:
        corpus = _corpus_file(healthtweets_tokens(), "healthtweets_tokens.txt")
    params = dict(PARAMS)
    print(f"\n## FastText skip-gram variants on {corpus.name}\n\n{machine()}\n\n{params}\n")
    print("| row | fit s (median) | analogy | WS353 | SimLex | WS353 per seed |")
    print("|---|---:|---:|---:|---:|---|")
    for row in args.rows:
        runs = []
        for seed in range(1, args.seeds + 1):
            argv_ = [sys.executable, __file__, "--child", row, str(seed), str(corpus)]
            done = subprocess.run([*argv_, json.dumps(params)], capture_output=True, text=True)
            if done.returncode:
                raise RuntimeError(f"{row} seed {seed} failed:\n{done.stderr[-2000:]}")
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        mean = {k: float(np.mean([r[k] for r in runs])) for k in ("analogy", "ws353", "simlex")}
        seconds = float(np.median([r["seconds"] for r in runs]))
        per_seed = " ".join(f"{r['ws353']:.3f}" for r in runs)
        print(
            f"| {row} | {seconds:.0f} | {mean['analogy']:.3f} | {mean['ws353']:.3f} | "
            f"{mean['simlex']:.3f} | {per_seed} |",
            flush=True,
        )
    with open("/proc/loadavg") as f:
        print(f"\nload average after: {f.read().split()[:3]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
