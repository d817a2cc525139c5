r"""How many dimensions: word2vec and the neural language model trained at several d.

Both learn from the same sentences of :func:`~rowbook.data.synthetic.planted_corpus`
(people with three binary attributes, countries and their capitals) and are scored on
sentences they did not see, and on the analogies planted in the corpus
(:func:`~rowbook.data.synthetic.planted_analogies`, answered by 3CosAdd over the table):

* word2vec (skip-gram, negative sampling): the loss is skip-gram's,
  ``-log sigma(u_c . v_o) - sum_k log sigma(-u_c . v_k)`` per (centre, context) pair of a
  window, with ``k`` negatives drawn once from the unigram^0.75 law (:func:`sgns_loss`),
  on the training sentences and on the held-out ones;
* NPLM (words, a context of 2): the mean cross entropy of the next word, on both.

Too few dimensions and both losses stay high (underfitting: the rows cannot hold the
distinctions); many more than the data supports and the training loss keeps falling while
the held-out loss stops following it or rises (overfitting).

Examples
--------
>>> rows = dimension_sweep([2, 8], sentences=200, held_out=50, epochs=2, models=("word2vec",))
>>> [(r.model, r.dim) for r in rows]
[('word2vec', 2), ('word2vec', 8)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from rowbook.checks import check_choice, check_int
from rowbook.data.synthetic import planted_analogies, planted_corpus
from rowbook.vectors import Vectors

__all__ = ["DimensionRow", "analogy_score", "dimension_sweep", "dimension_table", "sgns_loss"]

SweptModel = Literal["word2vec", "nplm"]


@dataclass(frozen=True)
class DimensionRow:
    """One model at one d: mean loss on the training and held-out sentences (nats), and the
    share of the planted analogies its table answers."""

    model: str
    dim: int
    train_loss: float
    held_out_loss: float
    analogy: float


def sgns_loss(
    W_in: np.ndarray,
    W_out: np.ndarray,
    centres: np.ndarray,
    contexts: np.ndarray,
    negatives: np.ndarray,
) -> float:
    """Mean skip-gram negative-sampling loss of ``(centre, context)`` pairs ``(N,)`` with
    ``negatives`` ``(N, k)``: ``-log sigma(u . v_o) - sum_k log sigma(-u . v_k)``.

    >>> W = np.zeros((3, 2))
    >>> round(sgns_loss(W, W, np.array([0]), np.array([1]), np.array([[2, 2]])), 4)  # 3 log 2
    2.0794
    """
    u = W_in[centres]  # (N, d)
    positive = np.einsum("nd,nd->n", u, W_out[contexts])  # (N,)
    negative = np.einsum("nd,nkd->nk", u, W_out[negatives])  # (N, k)
    return float(np.mean(np.logaddexp(0, -positive) + np.logaddexp(0, negative).sum(axis=1)))


def analogy_score(table: Vectors) -> float:
    """Share of the planted analogies ``a : b :: c : ?`` that ``table`` answers with ``d``
    (3CosAdd, the three inputs left out); a question with a word the table lacks counts as
    missed."""
    questions = planted_analogies()
    hits = sum(
        all(w in table for w in (a, b, c)) and table.analogy(a, b, c) == d
        for a, b, c, d in questions
    )
    return hits / len(questions)


def _pairs(
    sentences: list[list[str]], index: dict[str, int], window: int
) -> tuple[np.ndarray, np.ndarray]:
    """Every (centre, context) pair within ``window`` of each other, ids of ``index``."""
    centres, contexts = [], []
    for sentence in sentences:
        ids = [index[w] for w in sentence if w in index]
        for i, centre in enumerate(ids):
            for j in range(max(0, i - window), min(len(ids), i + window + 1)):
                if j != i:
                    centres.append(centre)
                    contexts.append(ids[j])
    return np.array(centres, dtype=np.int64), np.array(contexts, dtype=np.int64)


def _word2vec_row(dim: int, train: list, held: list, epochs: int, seed: int) -> DimensionRow:
    from rowbook.models import Word2Vec

    window, k = 5, 5
    model = Word2Vec(
        vector_size=dim,
        window=window,
        negative=k,
        min_count=1,
        sample=0.0,
        epochs=epochs,
        seed=seed,
        workers=1,
        kernel="classic",  # the run the recorded sweep shows
    ).fit(train)
    table = model.vectors
    index = dict(table.key_to_index)
    counts = np.asarray(table.counts, dtype=np.float64) ** 0.75
    rng = np.random.default_rng(seed)
    losses = []
    for sentences in (train, held):
        centres, contexts = _pairs(sentences, index, window)
        negatives = rng.choice(len(counts), size=(len(centres), k), p=counts / counts.sum())
        losses.append(sgns_loss(model.W_in_, model.W_out_, centres, contexts, negatives))
    return DimensionRow("word2vec", dim, losses[0], losses[1], analogy_score(table))


def _nplm_row(dim: int, train: list, held: list, epochs: int, seed: int) -> DimensionRow:
    from rowbook.models import NPLM

    train_texts, held_texts = [" ".join(s) for s in train], [" ".join(s) for s in held]
    model = NPLM(
        level="word", context=2, dim=dim, hidden=64, epochs=epochs, seed=seed, val_fraction=0
    ).fit(train_texts)
    train_loss, held_loss = (float(np.log(model.perplexity(t))) for t in (train_texts, held_texts))
    return DimensionRow("nplm", dim, train_loss, held_loss, analogy_score(model.vectors))


def dimension_sweep(
    dims: Sequence[int],
    *,
    sentences: int = 600,
    held_out: int = 300,
    epochs: int = 10,
    models: Sequence[SweptModel] = ("word2vec", "nplm"),
    seed: int = 0,
) -> list[DimensionRow]:
    """Train each of ``models`` at each d of ``dims`` on ``sentences`` planted sentences and
    score it on ``held_out`` others; one :class:`DimensionRow` per (model, d), by model."""
    for name, value in (("sentences", sentences), ("held_out", held_out), ("epochs", epochs)):
        check_int(name, value, 1, owner="dimension_sweep")
    for d in dims:
        check_int("dims", d, 1, owner="dimension_sweep")
    for name in models:
        check_choice("models", name, ("word2vec", "nplm"), owner="dimension_sweep")
    corpus = planted_corpus(sentences + held_out, seed=seed)
    train, held = corpus[:sentences], corpus[sentences:]
    make = {"word2vec": _word2vec_row, "nplm": _nplm_row}
    return [make[name](d, train, held, epochs, seed) for name in models for d in dims]


def dimension_table(rows: Sequence[DimensionRow]) -> str:
    """The rows as a Markdown table.

    >>> print(dimension_table([DimensionRow("nplm", 8, 2.5, 2.75, 0.125)]))
    | model | d | training loss | held-out loss | gap | analogies |
    |---|---:|---:|---:|---:|---:|
    | nplm | 8 | 2.500 | 2.750 | 0.250 | 12.5% |
    """
    lines = [
        "| model | d | training loss | held-out loss | gap | analogies |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        gap = r.held_out_loss - r.train_loss
        lines.append(
            f"| {r.model} | {r.dim} | {r.train_loss:.3f} | {r.held_out_loss:.3f} | "
            f"{gap:.3f} | {r.analogy:.1%} |"
        )
    return "\n".join(lines)
