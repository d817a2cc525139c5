"""Trainers on a busy machine: 1 and 2 workers, idle and beside a CPU-bound competitor, against gensim.

Servers are shared, so a trainer's speed-up from a second worker must survive another
process wanting the same cores. Each trainer runs on NewsArticles with its vocabulary (or
co-occurrence matrix) built first and only the training epochs timed:

- word2vec skip-gram (d=100, window 5, negative 5, sample 1e-3, min_count 5), rowbook and
  gensim on the same token lists;
- FastText skip-gram (the same, n-grams 3-6, 2M buckets), rowbook and gensim's FastText,
  on the first ``--fasttext-docs`` documents;
- GloVe (d=100, window 10, x_max 10), rowbook alone (gensim has none) on the counted
  matrix, its epochs timed (the records' shuffle before them is serial).

"Busy" runs ``--competitors`` processes spinning a Python loop. Where Linux's autogroup is on
(``/proc/sys/kernel/sched_autogroup_enabled``), CPU time is shared between sessions first:
a competitor in a session of its own (``--session own``, the default: another user's job)
leaves a whole trainer one core of two however many threads it runs, and a competitor in
the trainer's session (``--session same``) leaves each of three runnable threads two thirds
of a core (at most 1.33 cores for a 2-worker trainer).

Reported per run: speed (corpus tokens or co-occurrence records x epochs / train seconds)
and the CPU share (this process's user + system CPU seconds / wall seconds: 2.0 is two
full cores). Runs alternate between the tools and repeat ``--repeat`` times; medians are
printed. The targets compare ratios measured in the same invocation:

- busy: rowbook's 2-worker / 1-worker speed-up is at least gensim's, for each trainer
  gensim has;
- idle: rowbook's 2-worker / 1-worker speed-up is at least 1.8, for each trainer.

    python benchmarks/bench_contention.py            # 2 epochs, 3 repeats
    python benchmarks/bench_contention.py --quick    # 300 documents, 1 repeat
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpora import newsarticles_tokens
from benchmarks.timing import machine, print_targets
from rowbook import FastText, GloVe, Word2Vec
from rowbook.data import cooccurrence_matrix, read_corpus

PARAMS = {"vector_size": 100, "window": 5, "min_count": 5, "sample": 1e-3, "negative": 5}
FASTTEXT = {"min_n": 3, "max_n": 6, "bucket": 2_000_000}
GLOVE = {"vector_size": 100, "window": 10, "min_count": 5, "x_max": 10.0}
#: A CPU-bound competitor that stops when the benchmark does (even killed), checking every
#: million iterations that its parent is still there.
SPIN = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    for _ in range(10**6): pass"


def autogroup() -> str:
    """Whether Linux shares CPU time between sessions first (``sched_autogroup``)."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return "on" if f.read().strip() == "1" else "off"
    except OSError:
        return "unknown"


@contextlib.contextmanager
def competitors(n: int, own_session: bool) -> Iterator[None]:
    """``n`` processes each spinning one core for the duration of the block, in a session
    of their own (another user's job on a shared server) or in this one."""
    procs = [
        subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=own_session)
        for _ in range(n)
    ]
    try:
        time.sleep(0.5)  # let them reach the loop
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


def timed(train: Callable[[], object]) -> tuple[float, float]:
    """(seconds, CPU share) of ``train()``: its wall time, or the seconds it returns (GloVe's
    epochs, without the shuffle of the records before them)."""
    wall, cpu = time.perf_counter(), time.process_time()
    seconds = train()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return (seconds if isinstance(seconds, float) else wall), cpu / wall


def rowbook_word2vec(sentences, workers: int, epochs: int, seed: int) -> Callable[[], object]:
    model = Word2Vec(workers=workers, epochs=epochs, seed=seed, lr=0.025, **PARAMS)
    model.build_vocab(sentences)
    return lambda: model.train(sentences, epochs=epochs)


def gensim_word2vec(sentences, workers: int, epochs: int, seed: int) -> Callable[[], object]:
    from gensim.models import Word2Vec as GensimWord2Vec

    model = GensimWord2Vec(sg=1, workers=workers, epochs=epochs, seed=seed, **PARAMS)
    model.build_vocab(sentences)
    return lambda: model.train(sentences, total_examples=model.corpus_count, epochs=epochs)


def rowbook_fasttext(sentences, workers: int, epochs: int, seed: int) -> Callable[[], object]:
    model = FastText(
        workers=workers,
        epochs=epochs,
        seed=seed,
        lr=0.025,
        minn=3,
        maxn=6,
        bucket=FASTTEXT["bucket"],
        **PARAMS,
    )
    model.build_vocab(sentences)
    return lambda: model.train(sentences, epochs=epochs)


def gensim_fasttext(sentences, workers: int, epochs: int, seed: int) -> Callable[[], object]:
    from gensim.models import FastText as GensimFastText

    model = GensimFastText(sg=1, workers=workers, epochs=epochs, seed=seed, **FASTTEXT, **PARAMS)
    model.build_vocab(sentences)
    return lambda: model.train(sentences, total_examples=model.corpus_count, epochs=epochs)


_MATRICES: dict[int, tuple] = {}  # id(sentences) -> (X, keys): counted once per corpus


def _glove_matrix(sentences) -> tuple:
    if id(sentences) not in _MATRICES:
        vocab, encoded = read_corpus(sentences, min_count=GLOVE["min_count"], ties="alphabetical")
        _MATRICES[id(sentences)] = (
            cooccurrence_matrix(encoded, len(vocab), GLOVE["window"]),
            vocab.keys,
        )
    return _MATRICES[id(sentences)]


def rowbook_glove(sentences, workers: int, epochs: int, seed: int) -> Callable[[], object]:
    X, keys = _glove_matrix(sentences)
    model = GloVe(workers=workers, epochs=epochs, seed=seed, **GLOVE)
    return lambda: sum(p.seconds for p in model.fit_cooccurrence(X, keys).history_)


#: trainer -> (rowbook, gensim or None, what the speed counts)
TRAINERS = {
    "word2vec": (rowbook_word2vec, gensim_word2vec, "words"),
    "FastText": (rowbook_fasttext, gensim_fasttext, "words"),
    "GloVe": (rowbook_glove, None, "records"),
}


def units(trainer: str, sentences) -> int:
    """What one epoch of ``trainer`` processes: corpus tokens, or GloVe's records."""
    if trainer == "GloVe":
        return _glove_matrix(sentences)[0].nnz
    return sum(map(len, sentences))


def measure(
    trainer: str, sentences, epochs: int, repeat: int, busy: int, own_session: bool
) -> dict[tuple[str, int], tuple[float, float]]:
    """Median (units/s, CPU share) per (tool, workers) of ``trainer``, under ``busy`` competitors."""
    ours, theirs, _ = TRAINERS[trainer]
    tools = [("rowbook", ours)] + ([("gensim", theirs)] if theirs else [])
    per_epoch = units(trainer, sentences)
    runs: dict[tuple[str, int], list[tuple[float, float]]] = {}
    with competitors(busy, own_session) if busy else contextlib.nullcontext():
        for r in range(repeat):
            for workers in (1, 2):
                for tool, make in tools:
                    wall, share = timed(make(sentences, workers, epochs, seed=r + 1))
                    runs.setdefault((tool, workers), []).append((per_epoch * epochs / wall, share))
    return {
        k: (statistics.median(s for s, _ in v), statistics.median(c for _, c in v))
        for k, v in runs.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 documents, one repeat")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--competitors", type=int, default=1, help="spinning processes when busy")
    parser.add_argument("--fasttext-docs", type=int, default=1000)
    parser.add_argument("--trainers", nargs="+", default=list(TRAINERS), choices=list(TRAINERS))
    parser.add_argument(
        "--session",
        choices=("own", "same"),
        default="own",
        help="the competitors' session: their own (another user's job; with "
        "autogroup, sessions share the CPU first) or this one (threads share it)",
    )
    args = parser.parse_args(argv)
    sentences = newsarticles_tokens()
    if args.quick:
        sentences, args.repeat, args.fasttext_docs = sentences[:300], 1, 100
    print(
        f"\n### Trainers under contention\n\n{machine()}; {sum(map(len, sentences)):,} tokens "
        f"(FastText: the first {args.fasttext_docs:,} documents) x {args.epochs} epochs, "
        f"training only, medians of {args.repeat}; competitors in {args.session} session, "
        f"autogroup {autogroup()}\n"
    )
    print(
        "| trainer | machine | tool | speed, 1 worker | speed, 2 workers | 2 / 1 | CPU share, 2 workers |"
    )
    print("|---|---|---|---:|---:|---:|---:|")
    targets = []
    for trainer in args.trainers:
        corpus = sentences[: args.fasttext_docs] if trainer == "FastText" else sentences
        ours = TRAINERS[trainer][0]
        ours(corpus[:50] if trainer != "GloVe" else corpus, 2, 1, 1)()  # compile or load kernels
        unit = TRAINERS[trainer][2]
        ratio = {}
        for label, busy in (("idle", 0), (f"busy ({args.competitors} spinning)", args.competitors)):
            result = measure(trainer, corpus, args.epochs, args.repeat, busy, args.session == "own")
            for tool in ("rowbook", "gensim"):
                if (tool, 1) not in result:
                    continue
                one, two = result[(tool, 1)], result[(tool, 2)]
                ratio[(label.split()[0], tool)] = two[0] / one[0]
                print(
                    f"| {trainer} | {label} | {tool} | {one[0]:,.0f} {unit}/s | {two[0]:,.0f} | "
                    f"{two[0] / one[0]:.2f} | {two[1]:.0%} |",
                    flush=True,
                )
        if ("busy", "gensim") in ratio:
            targets.append(
                (
                    f"{trainer} busy: rowbook 2/1 speed-up vs gensim's",
                    ratio[("busy", "rowbook")],
                    ratio[("busy", "gensim")],
                )
            )
        targets.append((f"{trainer} idle: rowbook 2/1 speed-up", ratio[("idle", "rowbook")], 1.8))
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    sys.exit(main())
