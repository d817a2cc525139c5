"""GloVe (Pennington, Socher and Manning 2014): word vectors from global co-occurrence counts.

The pipeline is the reference implementation's (``vocab_count``, ``cooccur``,
``shuffle``, ``glove``) in one ``fit``:

1. vocabulary: words with ``count >= min_count``, by descending count, ties
   alphabetical (``max_vocab`` keeps only the most frequent);
2. co-occurrences: ``X_ij`` sums ``1 / distance`` over windows of ``window`` words,
   symmetric by default (:func:`rowbook.data.cooccurrence_matrix`);
3. the non-zero records are shuffled once (seeded);
4. ``epochs`` passes of AdaGrad over the records (:mod:`rowbook.models._glove_kernels`),
   split between ``workers`` threads without locks, as glove.c does.

``W``, ``W_tilde`` and the biases start uniform in ``[-0.5, 0.5) / (d + 1)`` (glove.c
divides by the vector size counted with the bias column) and the AdaGrad accumulators at
1. The vectors returned are ``W + W_tilde`` (glove.c's default ``-model 2``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from rowbook.checks import check_int, check_number
from rowbook.data.cooccurrence import cooccurrence_matrix
from rowbook.data.corpus import Corpus, CountedVocab, read_corpus, truncate_vocab
from rowbook.io import fields_of, load_state, save_state
from rowbook.models._fitting import (
    Progress,
    ProgressReporter,
    resolve_workers,
    run_jobs,
)
from rowbook.models._glove_kernels import glove_records
from rowbook.models.base import Model
from rowbook.vectors import Vectors

__all__ = ["GloVe", "GloVeSettings"]

_CHECKPOINT_KIND = "glove-checkpoint"
_JOB_RECORDS = 1 << 16


@dataclass(frozen=True)
class GloVeSettings:
    """The parameters of :class:`GloVe`, validated on construction (see there)."""

    vector_size: int = 50
    window: int = 15
    x_max: float = 100.0
    alpha: float = 0.75
    epochs: int = 25
    lr: float = 0.05
    min_count: int = 5
    max_vocab: int | None = None
    symmetric: bool = True
    distance_weighting: bool = True
    seed: int = 1
    workers: int | None = None
    progress: bool = False

    def __post_init__(self) -> None:
        for name, minimum in (("vector_size", 1), ("window", 1), ("epochs", 1), ("min_count", 1),
                              ("seed", 0)):  # fmt: skip
            check_int(name, getattr(self, name), minimum)
        check_int("max_vocab", self.max_vocab, 1, allow_none=True)
        check_int("workers", self.workers, 1, allow_none=True)
        check_number("x_max", self.x_max, 0.0, low_open=True)
        check_number("alpha", self.alpha, 0.0)
        check_number("lr", self.lr, 0.0, low_open=True)


class GloVe(Model):
    """Train GloVe vectors on a corpus.

    Parameters
    ----------
    vector_size, window : int
        Dimension of the vectors; how many words on each side count as context.
    x_max, alpha : float
        The weighting ``f(x) = min(1, (x / x_max) ** alpha)``.
    epochs, lr : int, float
        AdaGrad passes over the co-occurrence records and the initial step size.
    min_count, max_vocab : int
        Keep words seen at least ``min_count`` times, at most the ``max_vocab`` most frequent.
    symmetric, distance_weighting : bool
        Count right contexts too; weight a pair by ``1 / distance`` (else by 1).
    seed, workers, progress
        Seed of the initial values and the shuffle; threads (``None``: one per CPU; one
        worker is reproducible); show a tqdm bar.

    Examples
    --------
    >>> corpus = [["ice", "is", "cold"], ["steam", "is", "hot"]] * 20
    >>> model = GloVe(vector_size=4, min_count=1, epochs=3, workers=1).fit(corpus)
    >>> model.vectors.vectors.shape
    (5, 4)
    """

    def __init__(self, **params: Any) -> None:
        self.settings = GloVeSettings(**params)
        self._fitted: dict[str, Any] | None = None

    def get_params(self) -> dict[str, Any]:
        return asdict(self.settings)

    def fit(
        self,
        corpus: Corpus,
        *,
        tokenizer: Any = None,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        resume: str | os.PathLike | None = None,
    ) -> GloVe:
        """Count co-occurrences in ``corpus`` and fit the vectors; returns ``self``.

        The arguments are those of :meth:`rowbook.models.word2vec.Word2Vec.fit`; progress
        ``words`` here counts co-occurrence records.
        """
        s = self.settings
        vocab, encoded = read_corpus(corpus, min_count=s.min_count, tokenizer=tokenizer,
                                     ties="alphabetical")  # fmt: skip
        if s.max_vocab is not None and len(vocab) > s.max_vocab:
            vocab, encoded = truncate_vocab(vocab, encoded, s.max_vocab)
        _check_vocab(vocab, s.min_count)
        X = cooccurrence_matrix(encoded, len(vocab), s.window, symmetric=s.symmetric,
                                weighted=s.distance_weighting).tocoo()  # fmt: skip
        order = np.random.default_rng(s.seed).permutation(X.nnz)  # shuffle.c, once
        records = (X.row[order].astype(np.int32), X.col[order].astype(np.int32), X.data[order])
        if resume is not None:
            params, grads, history = _load_checkpoint(resume, s, vocab)
        else:
            params, history = _initial_state(len(vocab), s), []
            grads = tuple(np.ones_like(p) for p in params)  # AdaGrad sums start at 1
        _train(s, vocab, records, params, grads, history, callback, checkpoint)
        vectors = Vectors(vocab.keys, (params[0] + params[1]).astype(np.float32), vocab.counts)
        self._fitted = {"vocab": vocab, "params": params, "history": history, "nnz": X.nnz,
                        "vectors": vectors}  # fmt: skip
        return self

    @property
    def vectors(self) -> Vectors:
        """``W + W_tilde`` as a :class:`rowbook.Vectors` (glove.c's ``-model 2`` output)."""
        return self._learned("vectors", "vectors")

    @property
    def W(self) -> np.ndarray:
        """``(V, d)`` float64 word vectors ``w_i``."""
        return self._learned("params", "W")[0]

    @property
    def W_tilde(self) -> np.ndarray:
        """``(V, d)`` float64 context vectors ``w~_j``."""
        return self._learned("params", "W_tilde")[1]

    @property
    def biases(self) -> tuple[np.ndarray, np.ndarray]:
        """``(b, b_tilde)``, each ``(V,)``."""
        return self._learned("params", "biases")[2], self._learned("params", "biases")[3]

    @property
    def index_to_key(self) -> tuple[str, ...]:
        return self._learned("vocab", "index_to_key").keys

    @property
    def n_records(self) -> int:
        """Number of non-zero co-occurrence records trained on."""
        return self._learned("nnz", "n_records")

    @property
    def history(self) -> list[Progress]:
        """One :class:`Progress` per epoch; ``loss`` is the mean ``J_ij`` per record."""
        return self._learned("history", "history")


def _check_vocab(vocab: CountedVocab, min_count: int) -> None:
    from rowbook.models.word2vec import _check_vocab as check

    check(vocab, min_count)


def _initial_state(V: int, s: GloVeSettings) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(s.seed)
    scale = 1.0 / (s.vector_size + 1)
    W = (rng.random((V, s.vector_size)) - 0.5) * scale  # (V, d)
    W_tilde = (rng.random((V, s.vector_size)) - 0.5) * scale  # (V, d)
    b, b_tilde = (rng.random(V) - 0.5) * scale, (rng.random(V) - 0.5) * scale  # (V,)
    return W, W_tilde, b, b_tilde


def _train(s: GloVeSettings, vocab, records, params, grads, history, callback, checkpoint) -> None:
    rows, cols, vals = records
    nnz = len(vals)
    bounds = np.append(np.arange(0, nnz, _JOB_RECORDS), nnz)  # (J + 1,)
    reporter = ProgressReporter(s.epochs, nnz, show=s.progress, callback=callback, start_epoch=len(history),
                                unit="record")
    try:
        for _epoch in range(len(history), s.epochs):

            def job(j: int) -> float:
                return glove_records(params, grads, rows, cols, vals, bounds[j], bounds[j + 1],
                                     s.x_max, s.alpha, s.lr)  # fmt: skip

            reporter.start_epoch()
            run_jobs(len(bounds) - 1, resolve_workers(s.workers), job,
                     lambda j, cost: reporter.job_done(int(bounds[j + 1] - bounds[j]), cost, s.lr))  # fmt: skip
            reporter.loss /= max(nnz, 1)
            progress = reporter.end_epoch(_epoch)
            history.append(progress)
            if checkpoint is not None:
                state = {"settings": asdict(s), "keys": list(vocab.keys), "counts": vocab.counts,
                         "params": list(params), "grads": list(grads),
                         "history": [asdict(p) for p in history]}  # fmt: skip
                save_state(checkpoint, state, kind=_CHECKPOINT_KIND)
            reporter.notify(progress)
    finally:
        reporter.close()


def _load_checkpoint(path, s: GloVeSettings, vocab: CountedVocab):
    state = load_state(path, kind=_CHECKPOINT_KIND)
    with fields_of(path, "checkpoint"):
        skip = ("workers", "progress")
        theirs = {k: v for k, v in state["settings"].items() if k not in skip}
        ours = {k: v for k, v in asdict(s).items() if k not in skip}
        if theirs != ours:
            diff = {k: (theirs.get(k), v) for k, v in ours.items() if theirs.get(k) != v}
            raise ValueError(f"checkpoint {path} was made with other settings (checkpoint, now): {diff}")
        if tuple(state["keys"]) != vocab.keys or not np.array_equal(state["counts"], vocab.counts):
            raise ValueError(f"checkpoint {path} was made on a different corpus (its vocabulary differs)")
        params = tuple(np.ascontiguousarray(p, dtype=np.float64) for p in state["params"])
        grads = tuple(np.ascontiguousarray(g, dtype=np.float64) for g in state["grads"])
        shapes = [(len(vocab), s.vector_size)] * 2 + [(len(vocab),)] * 2  # W, W_tilde, b, b_tilde
        if [a.shape for a in params] != shapes or [a.shape for a in grads] != shapes:
            raise ValueError(f"checkpoint {path}: fields 'params' and 'grads' must hold arrays of "
                             f"shapes {shapes}")  # fmt: skip
        return params, grads, [Progress(**p) for p in state["history"]]
