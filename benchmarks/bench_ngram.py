"""NGramLM against ``nltk.lm``: fit and perplexity of a trigram model on NewsArticles.

The corpus is NewsArticles cut into sentences (:func:`corpora.newsarticles_lines`),
lowercased and split into ``[a-z0-9']+`` tokens; every tenth sentence is held out. Both
libraries get the same token lists. nltk is given what its documentation prescribes
(``padded_everygram_pipeline`` then ``fit``; ``perplexity`` of the held-out trigrams,
padded as NGramLM pads: ``<s> <s>`` before a sentence, one ``</s>`` after it).

* add-one (``Laplace``) and add-k with k = 0.01 (``Lidstone``): held-out perplexity;
* unsmoothed (``MLE``): its held-out perplexity is infinite (unseen trigrams), so the
  perplexity of the first 2,000 training sentences is compared instead.

Each row times ``fit`` and ``perplexity`` together (rowbook: median of 3 runs; nltk: one
run, it takes minutes) and checks the two perplexities are equal to 1e-9. nltk's
``KneserNeyInterpolated`` is left out: it is not the modified Kneser-Ney of KenLM that
NGramLM builds (one discount, 0.1 by default, instead of three estimated per order, and
no special counts for n-grams opening a sentence), so there is nothing equal to compare.

    python benchmarks/bench_ngram.py           # the whole corpus
    python benchmarks/bench_ngram.py --quick   # 5,000 sentences, a smoke test
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
import regex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import newsarticles_lines
from timing import print_targets

from rowbook.models import NGramLM

_TOKEN = regex.compile(r"[a-z0-9']+")


def _trigrams(sentences: list[list[str]], n: int = 3) -> list[tuple[str, ...]]:
    grams = []
    for s in sentences:
        padded = ["<s>"] * (n - 1) + s + ["</s>"]
        grams += [tuple(padded[i - n + 1 : i + 1]) for i in range(n - 1, len(padded))]
    return grams


def _nltk_run(smoothing: str, train: list[list[str]], probe: list[list[str]]) -> float:
    from nltk.lm import MLE, Laplace, Lidstone
    from nltk.lm.preprocessing import padded_everygram_pipeline

    model = {"laplace": lambda: Laplace(3), "lidstone": lambda: Lidstone(0.01, 3)}.get(
        smoothing, lambda: MLE(3)
    )()
    model.fit(*padded_everygram_pipeline(3, train))
    return model.perplexity(_trigrams(probe))


def _ours_run(smoothing: str, train: list[list[str]], probe: list[list[str]]) -> float:
    k = {"laplace": 1.0, "lidstone": 0.01}.get(smoothing, 1.0)
    lm = NGramLM(n=3, smoothing="none" if smoothing == "mle" else "add_k", k=k).fit(train)
    return lm.perplexity(probe)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 sentences: a smoke test")
    args = parser.parse_args(argv)
    lines = newsarticles_lines()[: 5_000 if args.quick else None]
    sentences = [_TOKEN.findall(line.lower()) for line in lines]
    held = sentences[::10]
    train = [s for i, s in enumerate(sentences) if i % 10]
    tokens = sum(map(len, train))
    print(
        f"## Trigram fit + perplexity: {len(train):,} training sentences ({tokens:,} tokens), "
        f"{len(held):,} held out; rowbook median of 3, nltk one run\n"
    )
    print("| smoothing | scored on | rowbook s | nltk s | nltk / rowbook | perplexity | equal |")
    print("|---|---|---:|---:|---:|---:|---|")
    targets = []
    for smoothing in ("laplace", "lidstone", "mle"):
        probe = train[:2_000] if smoothing == "mle" else held
        times = []
        for _ in range(3):
            start = time.perf_counter()
            ours = _ours_run(smoothing, train, probe)
            times.append(time.perf_counter() - start)
        start = time.perf_counter()
        theirs = _nltk_run(smoothing, train, probe)
        nltk_s = time.perf_counter() - start
        ratio = nltk_s / float(np.median(times))
        same = math.isclose(ours, theirs, rel_tol=1e-9)
        where = "2,000 training sentences" if smoothing == "mle" else "held out"
        print(
            f"| {smoothing} | {where} | {np.median(times):.2f} | {nltk_s:.1f} | {ratio:.0f} | "
            f"{ours:.4f} | {'yes' if same else f'NO ({theirs:.4f})'} |"
        )
        targets.append((f"{smoothing}: fit + perplexity at least 20x nltk.lm", ratio, 20.0))
        targets.append(
            (f"{smoothing}: perplexity equal to nltk.lm's (1 if equal)", float(same), 1.0)
        )
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    sys.exit(main())
