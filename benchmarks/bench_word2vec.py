"""word2vec and GloVe on NewsArticles: rowbook against gensim 4, speed and quality, one run.

Both word2vec implementations train with the same parameters (those of the issue:
min_count 5, vector_size 100, window 5, negative 5, sample 1e-3, 5 epochs, 2 workers)
and gensim's learning rate, 0.025, passed to rowbook explicitly (``lr=0.025``), on the
same token lists (``[a-z0-9']+``, lowercased, one document per sentence), and
both models' vectors are scored by gensim's own ``KeyedVectors`` evaluation (so the
scoring is identical) on gensim's bundled questions-words, WordSim353 and SimLex-999
files; rowbook's :class:`~rowbook.vectors.Vectors` evaluation is printed beside it.
Speed is corpus tokens x epochs / wall time of the whole ``fit`` (vocabulary included).
Where rowbook's default differs from gensim's (CBOW: ``lr=None`` is word2vec.c's 0.05), a
row "rowbook <arch>, default lr" shows rowbook at its own defaults beside gensim at its own.

Each tool trains once per seed (``--seeds``, default 5): speed is the median over the
runs and each score the mean, because single runs of a 2M-token corpus scatter by about
0.02 on WordSim353. Run ``python benchmarks/bench_word2vec.py`` (``--quick`` for a smoke
run on 300 documents and one seed).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.corpora import newsarticles_tokens
from benchmarks.timing import machine, print_targets
from rowbook.models.word_vectors.glove import GloVe
from rowbook.models.word_vectors.word2vec import DEFAULT_LR, Word2Vec

PARAMS = {
    "vector_size": 100,
    "window": 5,
    "min_count": 5,
    "sample": 1e-3,
    "negative": 5,
    "epochs": 5,
    "workers": 2,
}
GENSIM_LR = 0.025  # gensim's alpha for both architectures, its default
GLOVE_PARAMS = {
    "vector_size": 100,
    "window": 10,
    "min_count": 5,
    "x_max": 10.0,
    "epochs": 25,
    "workers": 2,
}


def _test_data() -> dict[str, Path]:
    import gensim

    root = Path(gensim.__file__).parent / "test" / "test_data"
    return {
        "analogy": root / "questions-words.txt",
        "ws353": root / "wordsim353.tsv",
        "simlex": root / "simlex999.txt",
    }


def gensim_scores(keys, table) -> dict[str, float]:
    """Scores of a (keys, vectors) table by gensim's KeyedVectors evaluation."""
    from gensim.models import KeyedVectors

    kv = KeyedVectors(vector_size=table.shape[1])
    kv.add_vectors(list(keys), np.asarray(table, dtype=np.float32))
    data = _test_data()
    return {
        "analogy": kv.evaluate_word_analogies(data["analogy"])[0],
        "ws353": kv.evaluate_word_pairs(data["ws353"])[1][0],
        "simlex": kv.evaluate_word_pairs(data["simlex"])[1][0],
    }


def rowbook_scores(vectors) -> dict[str, float]:
    """The same scores by rowbook's Vectors evaluation."""
    data = _test_data()
    return {
        "analogy": vectors.evaluate_analogies(data["analogy"])[0],
        "ws353": vectors.evaluate_word_pairs(data["ws353"])[1][0],
        "simlex": vectors.evaluate_word_pairs(data["simlex"])[1][0],
    }


def train_gensim(sentences, architecture: str, params: dict, seed: int):
    """(fit seconds, gensim scores, None) of one gensim training."""
    from gensim.models import Word2Vec as GensimWord2Vec

    sg = int(architecture == "skipgram")
    start = time.perf_counter()
    model = GensimWord2Vec(sentences, sg=sg, seed=seed, **params)
    seconds = time.perf_counter() - start
    return seconds, gensim_scores(model.wv.index_to_key, model.wv.vectors), None


def train_rowbook(
    sentences, architecture: str, params: dict, seed: int, lr: float | None = GENSIM_LR
):
    """(fit seconds, gensim scores, rowbook scores) of one rowbook training at ``lr``
    (gensim's by default; ``None``: rowbook's default for the architecture)."""
    start = time.perf_counter()
    model = Word2Vec(architecture=architecture, seed=seed, lr=lr, **params).fit(sentences)
    seconds = time.perf_counter() - start
    return seconds, gensim_scores(model.index_to_key_, model.W_in_), rowbook_scores(model.vectors)


def _runs(train, sentences, architecture: str, params: dict, seeds: int):
    """Median seconds and mean scores over ``seeds`` trainings."""
    runs = [train(sentences, architecture, params, seed) for seed in range(1, seeds + 1)]
    mean = {k: float(np.mean([r[1][k] for r in runs])) for k in runs[0][1]}
    own = (
        None
        if runs[0][2] is None
        else {k: float(np.mean([r[2][k] for r in runs])) for k in runs[0][2]}
    )
    return statistics.median(r[0] for r in runs), mean, own


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 documents, 2 epochs, one seed")
    parser.add_argument("--seeds", type=int, default=5, help="trainings per row")
    parser.add_argument("--no-glove", action="store_true")
    args = parser.parse_args(argv)
    logging.getLogger("gensim").setLevel(logging.ERROR)
    sentences = newsarticles_tokens()
    params, glove_params = dict(PARAMS), dict(GLOVE_PARAMS)
    if args.quick:
        sentences = sentences[:300]
        params["epochs"], glove_params["epochs"], args.seeds = 2, 2, 1
    n_tokens = sum(map(len, sentences))
    print(f"\n## word2vec / GloVe on NewsArticles\n\n{machine()}\n")
    print(
        f"{len(sentences)} documents, {n_tokens} tokens; word2vec {params}; GloVe {glove_params}; "
        f"{args.seeds} seed(s) per word2vec row\n"
    )
    print(
        "| model | words/s | fit s | speed vs gensim | analogy | WS353 | SimLex | "
        "rowbook eval (analogy / WS353 / SimLex) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    targets = []
    for arch in ("skipgram", "cbow"):
        g_sec, g, _ = _runs(train_gensim, sentences, arch, params, args.seeds)
        r_sec, r, own = _runs(train_rowbook, sentences, arch, params, args.seeds)
        words = n_tokens * params["epochs"]
        _row(f"gensim {arch}", words / g_sec, g_sec, 1.0, g, "")
        _row(
            f"rowbook {arch}, lr {GENSIM_LR}",
            words / r_sec,
            r_sec,
            g_sec / r_sec,
            r,
            " / ".join(f"{own[k]:.3f}" for k in ("analogy", "ws353", "simlex")),
        )
        targets.append((f"{arch}: rowbook speed / gensim speed", g_sec / r_sec, 1.0))
        targets += [(f"{arch}: {k} rowbook - gensim", r[k] - g[k], -0.02) for k in g]
        if DEFAULT_LR[arch] != GENSIM_LR:  # rowbook at its defaults, gensim at its own
            own_default = partial(train_rowbook, lr=None)
            d_sec, d, own = _runs(own_default, sentences, arch, params, args.seeds)
            _row(
                f"rowbook {arch}, default lr {DEFAULT_LR[arch]}",
                words / d_sec,
                d_sec,
                g_sec / d_sec,
                d,
                " / ".join(f"{own[k]:.3f}" for k in ("analogy", "ws353", "simlex")),
            )
    if not args.no_glove:
        start = time.perf_counter()
        glove = GloVe(**glove_params).fit(sentences)
        seconds = time.perf_counter() - start
        scores = gensim_scores(glove.index_to_key, glove.vectors.vectors)
        _row(
            "rowbook GloVe",
            n_tokens * glove_params["epochs"] / seconds,
            seconds,
            float("nan"),
            scores,
            f"{glove.n_records_} co-occurrence records",
        )
    print(
        "\nwords/s = corpus tokens x epochs / fit time (median); scores (mean over seeds) by "
        "gensim's KeyedVectors."
    )
    met = print_targets(targets)
    print(f"\nall targets met: {'yes' if met else 'no'}")
    return 0 if met or args.quick else 1


def _row(
    name: str, words_per_sec: float, seconds: float, ratio: float, scores: dict, note: str
) -> None:
    ratio_text = "-" if ratio != ratio else f"{ratio:.2f}"
    print(
        f"| {name} | {words_per_sec / 1e3:,.0f}k | {seconds:.1f} | {ratio_text} | "
        f"{scores['analogy']:.3f} | {scores['ws353']:.3f} | {scores['simlex']:.3f} | {note} |"
    )


if __name__ == "__main__":
    raise SystemExit(main())
