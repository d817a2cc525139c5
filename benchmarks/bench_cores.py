"""Every core for the whole job: fits from a file, ``rowbook vocab`` and ``encode_batch``.

What a user times is the whole ``fit`` from a text file: the first pass (reading,
counting, the id stream; on ``workers`` processes over byte ranges of the file,
:mod:`rowbook.data.scan`) and the epochs. Measured side by side in one run, the runs of
each table in turn (medians of ``--repeat``):

- **fit**: skip-gram word2vec and FastText, 3 epochs, on NewsArticles (one lower-cased
  document a line) and on it repeated ``--copies`` times: rowbook with 1 and 2 workers,
  gensim with 2 (``LineSentence`` of the same file, its whole ``Word2Vec(...)``);
- **busy**: the 2-worker fit again with jobs of 10x the words (``batch_words``), the
  longer stretches of corpus that ``docs/cores.md`` weighs against choosing each epoch's
  worker count from the CPU the last one received (whose best case is the better of the
  1- and 2-worker rows);
- **vocab**: ``rowbook vocab`` of NewsArticles' raw text repeated to about ``--vocab-mb``
  MB, ``--workers 1`` and ``2``;
- **encode**: ``ByteLevelBPE.encode_batch`` (word cache emptied first) and ``tokenizers``'
  ``encode_batch`` of NewsArticles' documents repeated ``--encode-copies`` times, both on
  every core, same ids checked.

The CPU column is the CPU seconds of this process and its reaped children (the forked
readers) over the wall seconds: 2.0 is both cores. On a shared machine a run gets what the
others leave; the ratios hold only for runs made side by side.

    python benchmarks/bench_cores.py           # the sizes above
    python benchmarks/bench_cores.py --quick   # 300 documents, a smoke test
    python benchmarks/bench_cores.py --only fit --corpus cjk   # the fit on a second kind of text

``--corpus long`` / ``cjk`` fit on a generated corpus of another word-length and vocabulary
profile instead of NewsArticles (:func:`bench_defaults.generated_text`, 1M tokens: long
agglutinative-like words of 200,000 types, or one CJK character a token of 2,000 types), so
that the worker count and ``batch_words`` chosen on NewsArticles are measured on text they
were not chosen on.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_defaults import generated_text
from bench_text import hf_train
from corpora import cache_dir, newsarticles_texts, newsarticles_tokens
from timing import machine, print_targets

from rowbook import FastText, Word2Vec
from rowbook.cli import main as rowbook_main
from rowbook.text import ByteLevelBPE

PARAMS = {"vector_size": 100, "window": 5, "min_count": 5, "sample": 1e-3, "negative": 5}
EPOCHS = 3


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall seconds, CPU share) of ``fn()``, the CPU of reaped children included."""
    before, wall = os.times(), time.perf_counter()
    fn()
    after, wall = os.times(), time.perf_counter() - wall
    cpu = sum(after[:4]) - sum(before[:4])  # user, system, children's user and system
    return wall, cpu / wall


def side_by_side(runs: dict[str, Callable[[], object]], repeat: int) -> dict[str, tuple]:
    """Median (wall, CPU share) of each run, the runs taken in turn ``repeat`` times."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, fn in runs.items():
            times[name].append(timed(fn))
    return {
        name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
        for name, t in times.items()
    }


def corpus_file(documents: list[list[str]], copies: int, name: str) -> Path:
    path = cache_dir() / name
    if not path.exists():
        text = "".join(" ".join(doc) + "\n" for doc in documents)
        path.write_text(text * copies, encoding="utf-8")
    return path


def fit_runs(trainer: str, path: Path, extra: bool) -> dict[str, Callable[[], object]]:
    from gensim.models import FastText as GensimFastText
    from gensim.models import Word2Vec as GensimWord2Vec
    from gensim.models.word2vec import LineSentence

    def ours(workers: int, **more) -> Callable[[], object]:
        if trainer == "word2vec":
            return lambda: Word2Vec(workers=workers, epochs=EPOCHS, **PARAMS, **more).fit(path)
        return lambda: FastText(
            workers=workers, epochs=EPOCHS, minn=3, maxn=6, bucket=2_000_000, **PARAMS, **more
        ).fit(path)

    def gensim(workers: int) -> Callable[[], object]:
        if trainer == "word2vec":
            return lambda: GensimWord2Vec(
                LineSentence(str(path)), sg=1, workers=workers, epochs=EPOCHS, **PARAMS
            )
        return lambda: GensimFastText(
            LineSentence(str(path)), sg=1, workers=workers, epochs=EPOCHS, **PARAMS
        )

    runs = {"rowbook, 1 worker": ours(1), "rowbook, 2 workers": ours(2)}
    if extra:
        runs["rowbook, 2 workers, jobs of 100k words"] = ours(2, batch_words=100_000)
    runs["gensim, 2 workers"] = gensim(2)
    return runs


def print_rows(title: str, results: dict[str, tuple], unit: float, unit_name: str) -> None:
    print(f"\n### {title}\n")
    print(f"| run | median s | {unit_name} | CPU (2.0: both cores) |")
    print("|---|---:|---:|---:|")
    for name, (wall, cpu) in results.items():
        rate = unit / wall
        print(
            f"| {name} | {wall:.2f} | {rate:,.0f} | {cpu:.2f} |"
            if rate >= 100
            else f"| {name} | {wall:.2f} | {rate:.2f} | {cpu:.2f} |"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="300 documents, one repetition")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (median)")
    parser.add_argument("--copies", type=int, default=4, help="the larger fit corpus: N copies")
    parser.add_argument("--vocab-mb", type=int, default=200, help="size of the vocab corpus")
    parser.add_argument("--encode-copies", type=int, default=16, help="16: about 200 MB")
    parser.add_argument(
        "--only", choices=["fit", "vocab", "encode"], nargs="*", help="some tables only"
    )
    parser.add_argument(
        "--trainers",
        choices=["word2vec", "fasttext"],
        nargs="*",
        default=["word2vec", "fasttext"],
        help="the trainers of the fit tables",
    )
    parser.add_argument(
        "--corpus",
        choices=["news", "long", "cjk"],
        default="news",
        help="the fit tables' corpus: NewsArticles or a generated one (see above)",
    )
    args = parser.parse_args(argv)
    only = set(args.only or ["fit", "vocab", "encode"])
    documents, texts = newsarticles_tokens(), newsarticles_texts()
    name = {"news": "NewsArticles", "long": "generated long words", "cjk": "generated CJK"}
    if args.corpus != "news":
        generated = generated_text("long" if args.corpus == "long" else "short")
        documents = [line.split() for line in generated.splitlines()]
    if args.quick:
        documents, texts, args.repeat, args.copies = documents[:300], texts[:300], 1, 2
        args.vocab_mb, args.encode_copies = 2, 1
    tag = "_300" if args.quick else ""
    print(
        f"{machine()}; 1-min load average at start {os.getloadavg()[0]:.1f}; "
        f"medians of {args.repeat}, runs in turn"
    )
    targets = []
    for copies in sorted({1, args.copies}) if "fit" in only else ():
        stem = "newsarticles" if args.corpus == "news" else f"generated_{args.corpus}"
        path = corpus_file(documents, copies, f"{stem}_tokens{tag}_x{copies}.txt")
        tokens = sum(map(len, documents)) * copies
        for trainer in args.trainers:
            results = side_by_side(fit_runs(trainer, path, extra=copies == 1), args.repeat)
            print_rows(
                f"whole fit: {trainer} skip-gram, {EPOCHS} epochs, {name[args.corpus]} x{copies} "
                f"({tokens:,} tokens)",
                results,
                tokens * EPOCHS,
                "corpus words/s",
            )
            one, two = results["rowbook, 1 worker"][0], results["rowbook, 2 workers"][0]
            gensim = results["gensim, 2 workers"][0]
            targets.append((f"{trainer} x{copies}: 2 workers / 1 worker", one / two, 1.8))
            targets.append(
                (f"{trainer} x{copies}: gensim 2 workers / rowbook 2", gensim / two, 1.5)
            )
    if "vocab" in only:
        raw = "".join(t.rstrip("\n") + "\n" for t in texts)
        copies = max(1, round(args.vocab_mb * 1e6 / len(raw.encode("utf-8"))))
        path = cache_dir() / f"newsarticles_raw{tag}_x{copies}.txt"
        if not path.exists():
            path.write_text(raw * copies, encoding="utf-8")
        with tempfile.TemporaryDirectory() as out:
            runs = {
                f"rowbook vocab --workers {w}": (
                    lambda w=w: rowbook_main(
                        ["vocab", str(path), "--workers", str(w), "--quiet", "-o", f"{out}/v.json"]
                    )
                )
                for w in (1, 2)
            }
            results = side_by_side(runs, args.repeat)
        size = path.stat().st_size
        print_rows(f"rowbook vocab of {size / 1e6:.0f} MB", results, size / 1e6, "MB/s")
        one, two = (results[f"rowbook vocab --workers {w}"][0] for w in (1, 2))
        targets.append((f"rowbook vocab {size / 1e6:.0f} MB: 2 workers / 1 worker", one / two, 1.8))
    if "encode" in only:
        bpe = ByteLevelBPE().fit(texts, 8_000)
        hf = hf_train(texts, 8_000)
        batch = texts * args.encode_copies
        same = [e.ids for e in bpe.encode_batch(texts)] == [e.ids for e in hf.encode_batch(texts)]

        def ours() -> object:
            bpe._encoder.cache.clear()
            return bpe.encode_batch(batch)

        results = side_by_side(
            {
                "rowbook encode_batch": ours,
                "tokenizers encode_batch": lambda: hf.encode_batch(batch),
            },
            args.repeat,
        )
        size = sum(len(t.encode("utf-8")) for t in batch) / 1e6
        print_rows(
            f"encode_batch of {size:.0f} MB ({len(batch):,} documents), every core; same ids: {same}",
            results,
            size,
            "MB/s",
        )
        ratio = results["tokenizers encode_batch"][0] / results["rowbook encode_batch"][0]
        targets.append((f"encode_batch {size:.0f} MB: tokenizers time / rowbook time", ratio, 2.0))
        targets.append(("encode_batch: same ids as tokenizers", float(same), 1.0))
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
