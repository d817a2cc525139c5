"""Which of fastText's choices is worth what: FastText skip-gram variants on one corpus, scored.

Rows, each trained in its own process over ``--seeds`` seeds (from ``--first-seed``, 1),
scores the mean (WordSim353 with the standard error of its mean over the seeds):

* ``fasttext``: the ``fasttext`` package, 2 threads, its ``seed`` the row's seed (what
  ``bench_fasttext.py`` compares; its runs differ by their seed and by their two threads);
* ``rowbook``: :class:`rowbook.models.FastText` at its defaults, 2 workers;
* ``loop``: :func:`~rowbook.models.word_vectors.fasttext_loop.train_like_fasttext`, fastText's
  loop step for step on one thread (its tables are ``fasttext``'s with ``thread=1``);
* ``loop-<change>``: that loop with one of rowbook's choices in place of fastText's:
  ``init2`` / ``init10`` (the initial table fastText draws with 2 / 10 threads),
  ``exact-sigmoid``, ``skip-target`` (a negative equal to the target skipped, not drawn
  again), ``skip-same-draws`` (drawn again, as fastText does, but the new negative left out
  of the step: a skip with fastText's draws, so it compares with ``loop`` seed by seed), ``lr10000`` (the learning rate updated every 10,000 tokens, a rowbook job),
  ``no-eos`` (``</s>`` ends a line but is never trained nor drawn as a negative: rowbook's
  lines), ``rowbook-init`` (rowbook's initial table: every row in use drawn), ``vocab-sample`` (subsampling frequencies over the vocabulary's tokens),
  ``vocab-epochs`` (``epoch`` passes over the file: fastText trains ``epoch * ntokens``
  tokens of the vocabulary, ``ntokens`` counting the tokens ``min_count`` cuts too);
* ``rowbook-<change>``: rowbook with one of fastText's choices: ``init1`` / ``init2`` (the
  initial table fastText draws with 1 / 2 threads), ``zero-ngrams`` (every n-gram row
  starting at zero, the word rows drawn), ``epochs6`` (6 epochs, not 5), ``classic``
  (fastText's steps, a pair at a time: ``kernel="classic"``), ``eos`` (a ``</s>`` word at
  the end of every line), ``lr100`` (the learning rate updated every 100 tokens: jobs of
  ``batch_words=100``), ``all-sample`` (subsampling's ``f`` over every token of the file,
  the words ``min_count`` cuts and one ``</s>`` a line included, as fastText's ``ntokens``),
  ``eos-all-sample`` (the two together),
  ``redraw`` / ``skip`` (a negative equal to its target drawn again, ``redraw=True``, as
  fastText does / skipped, ``redraw=False``, gensim's way); ``rowbook-cbow``,
  ``rowbook-cbow-redraw`` and ``rowbook-cbow-skip``: the same for CBOW.

``--redraws`` counts, in the loop (seed ``--first-seed``), the negative draws equal to their
target, per target word.

Settings are ``bench_fasttext.py``'s (d=100, window 5, negative 5, sample 1e-3, min_count 5,
n-grams 3-6, 2M buckets, 5 epochs). Scores by gensim's ``KeyedVectors`` over the
vocabulary's vectors (``</s>`` left out). ``--corpus tweets`` trains on the health tweets
(one tweet a line) instead of NewsArticles (one article a line), ``tweets-shuffled`` on the
same tweets in a fixed random order (the file has the 16 agencies' tweets one agency after
another; fastText's second thread starts reading half-way through it). Run
``python benchmarks/bench_fasttext_loop.py --rows rowbook loop loop-init2``; ``--jobs 2``
runs two trainings at once (seed by seed, so a run cut short has as many seeds of every
row), ``--out runs.jsonl`` keeps each run as it ends and ``--summary runs.jsonl`` prints
their table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
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
    "rowbook-classic",
    "rowbook-eos",
    "rowbook-lr100",
    "rowbook-all-sample",
    "rowbook-eos-all-sample",
    "rowbook-redraw",
    "rowbook-skip",
    "rowbook-cbow",
    "rowbook-cbow-redraw",
    "rowbook-cbow-skip",
    "loop-skip-same-draws",
)


def _rowbook_model(seed: int, workers: int, params: dict, **options):
    from rowbook.models import FastText

    settings = {ROWBOOK_NAMES[k]: v for k, v in params.items() if k != "thread"}
    options = {"architecture": "skipgram", **options}
    return FastText(seed=seed, workers=workers, **settings, **options)


def _eos_file(corpus: Path) -> Path:
    """``corpus`` with fastText's ``</s>`` word at the end of every line (made once)."""
    path = corpus.with_name(corpus.stem + "_eos.txt")
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        with open(corpus, encoding="utf-8") as src, open(tmp, "w", encoding="utf-8") as dst:
            dst.writelines(line.rstrip("\n") + " </s>\n" for line in src)
        tmp.replace(path)
    return path


def _loop(row: str, seed: int, corpus: str, params: dict):
    from rowbook.models.word_vectors import fasttext_loop as loop

    change = row.removeprefix("loop").removeprefix("-")
    options = {
        "": {},
        "init2": {"init_threads": 2},
        "init10": {"init_threads": 10},
        "exact-sigmoid": {"exact_sigmoid": True},
        "skip-target": {"resample": False},
        "skip-same-draws": {"use_redrawn": False},
        "lr10000": {"lr_update_rate": 10_000},
    }
    if change == "no-eos":  # lines still end at </s>, which is never trained nor drawn
        read, discard, negatives = loop._stream, loop.discard_probabilities, loop.fasttext_negatives
        found: dict = {}

        def _stream(source, vocab, min_count):
            ids, vocab = read(source, vocab, min_count)
            found["eos"] = vocab.keys.index("</s>")
            return ids, vocab

        def never_eos(counts, ntokens, t):
            p = discard(counts, ntokens, t)
            p[found["eos"]] = -1.0  # every draw exceeds it: discarded
            return p

        def no_eos_negatives(counts, exponent=0.5):
            table = negatives(counts, exponent)
            return table[table != found["eos"]]

        loop._stream = _stream
        loop.discard_probabilities = never_eos
        loop.fasttext_negatives = no_eos_negatives
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
    options: dict = {}
    if change.startswith("cbow"):
        options["architecture"] = "cbow"
        change = change.removeprefix("cbow").removeprefix("-")
    if change in ("skip", "redraw"):
        options["redraw"] = change == "redraw"
    elif change == "classic":
        options["kernel"] = "classic"
    elif change == "lr100":
        options["batch_words"] = 100
    elif change in ("all-sample", "eos-all-sample"):  # f over every token, a </s> a line too
        from rowbook.data.sampling import sample_thresholds

        with open(corpus, encoding="utf-8") as f:
            n_all = sum(len(line.split()) + 1 for line in f)

        def thresholds(counts, sample):
            rest = n_all - counts.sum()  # the cut words' tokens and the </s>'s, as one count
            return sample_thresholds(np.append(counts, rest), sample)[:-1]

        fasttext.sample_thresholds = thresholds
    elif change.startswith("init"):
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
    if change in ("eos", "eos-all-sample"):  # after all-sample counted the file's own tokens
        corpus = str(_eos_file(Path(corpus)))
    return _rowbook_model(seed, params["thread"], params, **options).fit(corpus)


def _fasttext(corpus: str, seed: int, params: dict):
    """``fasttext.train_unsupervised`` with fastText's ``-seed``, which the Python wrapper
    takes for supervised training only (the same steps as the wrapper, ``seed`` let in)."""
    from fasttext import FastText as wrapper

    given = {"input": corpus, "model": "skipgram", "verbose": 0, "seed": seed, **params}
    args, manual = wrapper.read_args((), given, list(given), wrapper.unsupervised_default)
    settings = wrapper._build_args(args, manual)
    model = wrapper._FastText(args=settings)
    wrapper.fasttext.train(model.f, settings)
    model.set_args(model.f.getArgs())
    return model


def child(row: str, seed: int, corpus: str, params: dict) -> dict:
    """Train one row in this (child) process; its fit seconds and scores."""
    start = time.perf_counter()
    if row == "fasttext":
        model = _fasttext(corpus, seed, params)
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


def count_redraws(corpus: str, seed: int, params: dict, resample: bool, top: int = 12) -> str:
    """The loop's negative draws equal to their target (drawn again, or skipped without
    ``resample``), counted per target word: the totals and the ``top`` words by count."""
    from rowbook.models.word_vectors import fasttext_loop as loop

    model = _rowbook_model(seed, 1, params)
    vocab = loop._stream(corpus, None, model.min_count)[1]
    tally = np.zeros((len(vocab), 2), dtype=np.int64)
    loop.train_like_fasttext(model, corpus, vocab=vocab, resample=resample, tally=tally)
    examples, equal = tally[:, 0], tally[:, 1]
    table = loop.fasttext_negatives(vocab.counts)
    q = np.bincount(table, minlength=len(vocab)) / len(table)  # (V,) a draw's chance of w
    neg = model.negative
    lines = [
        f"seed {seed}, {'drawn again' if resample else 'skipped'}: {int(examples.sum()):,} "
        f"examples, {int(equal.sum()):,} draws equal to their target "
        f"({equal.sum() / (neg * examples.sum()):.4%} of {neg} a example; expected from the "
        f"table {float((examples * q).sum() / examples.sum()):.4%})",
        "",
        "| target | count | examples | draws equal | of its draws | share of all | q(w) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for w in np.argsort(-equal)[:top]:
        lines.append(
            f"| {vocab.keys[w]} | {int(vocab.counts[w]):,} | {int(examples[w]):,} | "
            f"{int(equal[w]):,} | {equal[w] / max(neg * examples[w], 1):.3%} | "
            f"{equal[w] / max(equal.sum(), 1):.1%} | {q[w]:.3%} |"
        )
    return "\n".join(lines)


def _paired(mine: list[dict], base: list[dict]) -> str:
    """WS353 of ``mine`` less ``base``'s of the same seed: mean ± standard error, seeds."""
    by_seed = {r["seed"]: r["ws353"] for r in base}
    diffs = [r["ws353"] - by_seed[r["seed"]] for r in mine if r["seed"] in by_seed]
    if not diffs:
        return ""
    se = np.std(diffs, ddof=1) / np.sqrt(len(diffs)) if len(diffs) > 1 else float("nan")
    return f"{np.mean(diffs):+.3f} ± {se:.3f} ({len(diffs)})"


def _table(runs: list[dict], rows: list[str]) -> str:
    """Markdown: per row the seeds run, the mean scores, WS353's standard error of the mean,
    and WS353 less its base row's (``loop`` for ``loop-*``, ``rowbook`` for ``rowbook-*``)
    seed by seed: a change that leaves the draws as they were (the sigmoid, the learning
    rate's steps, the initial table) is measured far more closely so than by the means."""
    out = [
        "| row | seeds | fit s (median) | analogy | WS353 (± s.e.) | SimLex | WS353 less the "
        "base's, same seed (± s.e., seeds) | WS353 per seed |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        mine = sorted((r for r in runs if r["row"] == row), key=lambda r: r["seed"])
        if not mine:
            continue
        base = "rowbook-cbow" if row.startswith("rowbook-cbow-") else row.split("-")[0]
        paired = _paired(mine, [r for r in runs if r["row"] == base]) if base != row else ""
        mean = {k: float(np.mean([r[k] for r in mine])) for k in ("analogy", "ws353", "simlex")}
        ws = [r["ws353"] for r in mine]
        se = float(np.std(ws, ddof=1) / np.sqrt(len(ws))) if len(ws) > 1 else float("nan")
        seconds = float(np.median([r["seconds"] for r in mine]))
        out.append(
            f"| {row} | {len(mine)} | {seconds:.0f} | {mean['analogy']:.3f} | "
            f"{mean['ws353']:.3f} ± {se:.3f} | {mean['simlex']:.3f} | {paired} | "
            + " ".join(f"{w:.3f}" for w in ws)
            + " |"
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", nargs="+", choices=ROWS, default=["fasttext", "rowbook", "loop"])
    parser.add_argument("--seeds", type=int, default=3, help="seeds for every row")
    parser.add_argument("--first-seed", type=int, default=1, help="the seeds from this one")
    parser.add_argument("--corpus", choices=("news", "tweets", "tweets-shuffled"), default="news")
    parser.add_argument("--jobs", type=int, default=1, help="trainings run at once")
    parser.add_argument("--out", type=Path, help="append each run here (JSON lines) as it ends")
    parser.add_argument("--summary", type=Path, help="only print the table of an --out file")
    parser.add_argument(
        "--redraws",
        action="store_true",
        help="count the loop's draws equal to their target (seed --first-seed), no table",
    )
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        row, seed, corpus, params = args.child
        print(json.dumps(child(row, int(seed), corpus, json.loads(params))))
        return 0
    if args.summary:
        runs = [json.loads(line) for line in args.summary.read_text().splitlines() if line]
        print(_table(runs, [r for r in ROWS if any(run["row"] == r for run in runs)]))
        return 0
    if args.corpus == "news":
        corpus = _corpus_file(newsarticles_tokens(), "newsarticles_tokens.txt")
    elif args.corpus == "tweets":
        corpus = _corpus_file(healthtweets_tokens(), "healthtweets_tokens.txt")
    else:  # the same lines in a fixed random order: the file holds one agency after another
        tweets = healthtweets_tokens()
        order = np.random.default_rng(0).permutation(len(tweets))
        corpus = _corpus_file([tweets[i] for i in order], "healthtweets_tokens_shuffled.txt")
    if any(row.startswith("rowbook-eos") for row in args.rows):
        _eos_file(corpus)
    params = dict(PARAMS)
    if args.redraws:
        for resample in (True, False):
            print(count_redraws(str(corpus), args.first_seed, params, resample) + "\n")
        return 0
    print(f"\n## FastText skip-gram variants on {corpus.name}\n\n{machine()}\n\n{params}\n")
    # seed by seed, so that a run cut short has as many seeds of every row
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    todo = [(row, seed) for seed in seeds for row in args.rows]
    running: list[tuple] = []
    runs: list[dict] = []
    loads = []
    while todo or running:
        while todo and len(running) < args.jobs:
            row, seed = todo.pop(0)
            argv_ = [sys.executable, __file__, "--child", row, str(seed), str(corpus)]
            err = tempfile.TemporaryFile("w+")  # a file, not a pipe: nothing waits on it
            process = subprocess.Popen(
                [*argv_, json.dumps(params)], stdout=subprocess.PIPE, stderr=err, text=True
            )
            running.append((row, seed, process, err))
        while all(process.poll() is None for _, _, process, _ in running):
            time.sleep(1.0)
        done = next(k for k, entry in enumerate(running) if entry[2].poll() is not None)
        row, seed, process, err = running.pop(done)
        stdout = process.communicate()[0]
        if process.returncode:
            err.seek(0)
            raise RuntimeError(f"{row} seed {seed} failed:\n{err.read()[-2000:]}")
        err.close()
        with open("/proc/loadavg") as f:
            loads.append(float(f.read().split()[0]))
        run = {"row": row, "seed": seed, **json.loads(stdout.strip().splitlines()[-1])}
        runs.append(run)
        print(json.dumps({**run, "load": loads[-1]}), flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(run) + "\n")
    print()
    print(_table(runs, args.rows))
    print(f"\nload average (1 min) at the end of each run: {min(loads):.1f} to {max(loads):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
