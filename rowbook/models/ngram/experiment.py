"""The count model beside the neural one: the experiment the argument for embeddings needs.

A trigram table memorises the contexts it saw; the NPLM shares what it learns between
words through their rows, so it can give a sensible probability after a context it never
saw. :func:`counts_vs_neural` trains both on the same sentences, with the same tokens and
the same vocabulary (tokens seen fewer than ``min_count`` times become ``<unk>`` in both),
and scores the same held-out predictions (every token and the end of each sentence, from
the ``n - 1`` tokens before it): held-out perplexity side by side, and the share of
held-out n-grams the count model never saw, the cases where it can only back off.

The command ``rowbook count-vs-neural CORPUS`` prints it (:func:`counts_vs_neural_table`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rowbook.models.ngram.model import NGramLM
from rowbook.models.ngram.tables import window_ranks

__all__ = ["CountsVsNeural", "counts_vs_neural", "counts_vs_neural_table", "unseen_share"]


@dataclass(frozen=True)
class CountsVsNeural:
    """What :func:`counts_vs_neural` measured.

    Attributes
    ----------
    n
        the order of the count model (the NPLM sees ``n - 1`` tokens).
    train_sentences, held_sentences, train_tokens, predictions
        the sizes: sentences, training tokens, held-out predictions scored.
    vocabulary
        the vocabulary both models share (``<unk>`` and the boundaries included).
    unseen_ngrams, unseen_contexts, unknown_tokens
        shares of the held-out predictions whose n-gram, whose context, or whose token
        (``<unk>``) the training text did not have.
    perplexity
        held-out perplexity of each model: ``"kneser_ney"``, ``"add_k"`` (add-one) and
        ``"nplm"`` (after its last epoch).
    nplm_epochs
        the NPLM's held-out perplexity after each epoch.
    seconds
        training time of each model.
    """

    n: int
    train_sentences: int
    held_sentences: int
    train_tokens: int
    predictions: int
    vocabulary: int
    unseen_ngrams: float
    unseen_contexts: float
    unknown_tokens: float
    perplexity: dict[str, float]
    nplm_epochs: list[float] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def unseen_share(lm: NGramLM, texts: Sequence[Any]) -> tuple[float, float]:
    """``(n-grams, contexts)``: the shares of the predictions in ``texts`` whose whole
    n-gram (or whose context, the n - 1 tokens before) ``lm`` never counted. Near the
    start of a sentence the n-gram is shorter (``<s> w``): it counts as it is.

    >>> lm = NGramLM(n=2, smoothing="add_k").fit(["a b", "b a"])
    >>> unseen_share(lm, ["a b", "b b"])  # of the 6 predictions, only "b b" was never seen
    (0.16666666666666666, 0.0)
    """
    W = lm.windows(texts)  # (N, n)
    ranks = window_ranks(lm.tables_.keys, lm.tables_.V, W)
    if lm.tables_.counts is not None:  # every id has a unigram entry, seen or not
        unigram_counts = lm.tables_.counts[0][np.maximum(ranks[0], 0)]
        ranks[0] = np.where(unigram_counts > 0, ranks[0], -1)
    order = 1 + (W[:, :-1] >= 0).sum(axis=1)  # (N,) the tokens of each window
    rows = np.arange(len(W))
    gram = np.stack([r[:, -1] for r in ranks], axis=1)[rows, order - 1]
    context = np.stack([r[:, -2] for r in ranks], axis=1)[rows, np.maximum(order - 2, 0)]
    return float(np.mean(gram < 0)), float(np.mean((context < 0) & (order > 1)))


def counts_vs_neural(
    train: Sequence[str],
    held_out: Sequence[str],
    *,
    n: int = 3,
    min_count: int = 2,
    nplm: dict[str, Any] | None = None,
    seed: int = 0,
    threads: int | None = 1,
    discount_fallback: Sequence[float] | None = None,
) -> CountsVsNeural:
    """Train a Kneser-Ney and an add-one count model and an NPLM on ``train`` (one sentence a
    text, word tokens) and score ``held_out`` with each.

    ``nplm`` overrides the NPLM's settings (default: context ``n - 1``, d = 32, 64 tanh
    units, batch 512, 5 epochs of Adam); the count models' discounts are estimated.
    ``discount_fallback`` is the count model's (for text too small to estimate discounts).
    ``threads`` caps BLAS's and the numba kernels' threads meanwhile (None: as they are):
    on a machine busy with other work one thread trains the NPLM several times faster than
    two, whose every parallel step waits for the slower thread.
    """
    with _thread_cap(threads):
        counts = {"n": n, "min_count": min_count, "discount_fallback": discount_fallback}
        return _run(train, held_out, counts, nplm, seed)


@contextlib.contextmanager
def _thread_cap(threads: int | None) -> Iterator[None]:
    if threads is None:
        yield
        return
    import numba
    from threadpoolctl import threadpool_limits

    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        with threadpool_limits(threads, user_api="blas"):
            yield
    finally:
        numba.set_num_threads(before)


def _run(train, held_out, counts, nplm, seed) -> CountsVsNeural:
    from rowbook.models.nplm import NPLM

    seconds, models = {}, {}
    for name, params in (("kneser_ney", {}), ("add_k", {"smoothing": "add_k"})):
        start = time.perf_counter()
        models[name] = NGramLM(**counts, **params).fit(train)
        seconds[name] = time.perf_counter() - start
    settings = {"dim": 32, "hidden": 64, "batch_size": 512, "epochs": 5} | (nplm or {})
    start = time.perf_counter()
    n, min_count = counts["n"], counts["min_count"]
    neural = NPLM(level="word", context=n - 1, min_count=min_count, seed=seed, **settings)
    neural.fit(train, val_texts=held_out)
    seconds["nplm"] = time.perf_counter() - start
    counts = models["kneser_ney"]
    assert neural.vocab_.itos[2:] == counts.vocab_.itos[3:], "one tokenizer, one min_count"
    W = counts.windows(held_out)
    unseen, contexts = unseen_share(counts, held_out)
    perplexity = {name: lm.perplexity(held_out) for name, lm in models.items()}
    perplexity["nplm"] = neural.perplexity(held_out)
    return CountsVsNeural(
        n=n,
        train_sentences=len(train),
        held_sentences=len(held_out),
        train_tokens=int(counts.tables_.counts[0].sum() - 2 * len(train)),
        predictions=len(W),
        vocabulary=len(counts.vocab_),
        unseen_ngrams=unseen,
        unseen_contexts=contexts,
        unknown_tokens=float(np.mean(W[:, -1] == counts.vocab_.unk_id)),
        perplexity=perplexity,
        nplm_epochs=[e["val_perplexity"] for e in neural.history_.epochs],
        seconds=seconds,
    )


def counts_vs_neural_table(result: CountsVsNeural) -> str:
    """The result as lines of text: the sizes, the unseen shares, and perplexity side by side."""
    r = result
    lines = [
        f"training: {r.train_sentences:,} sentences, {r.train_tokens:,} tokens; held out: "
        f"{r.held_sentences:,} sentences, {r.predictions:,} predictions; vocabulary {r.vocabulary:,}",
        f"held-out {r.n}-grams never seen in training: {r.unseen_ngrams:.1%} "
        f"(contexts never seen: {r.unseen_contexts:.1%}; <unk> tokens: {r.unknown_tokens:.1%})",
        "",
        f"{'model':<34} {'held-out perplexity':>20} {'train s':>8}",
    ]
    names = {
        "kneser_ney": f"{r.n}-gram counts, modified Kneser-Ney",
        "add_k": f"{r.n}-gram counts, add-one",
        "nplm": f"NPLM, {r.n - 1} words of context",
    }
    for key, label in names.items():
        lines.append(f"{label:<34} {r.perplexity[key]:>20.1f} {r.seconds[key]:>8.1f}")
    epochs = ", ".join(f"{p:.1f}" for p in r.nplm_epochs)
    lines.append(f"NPLM held-out perplexity after each epoch: {epochs}")
    return "\n".join(lines)
