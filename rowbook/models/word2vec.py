"""word2vec (Mikolov et al. 2013): skip-gram and CBOW, negative sampling and hierarchical softmax.

The learned tables have the layout of a ``rowbook.nn.Embedding`` weight
(``Embedding.from_pretrained(model.W_in)`` works): ``W_in`` ``(V, d)``, the word vectors
returned as :attr:`Word2Vec.vectors`, initialised uniform(-1/d, 1/d) exactly as gensim 4
does; ``W_out`` ``(V, d)``, the negative-sampling output vectors, and ``W_nodes``
``(V - 1, d)``, the inner nodes of the hierarchical-softmax tree, both initialised to
zeros. Each step looks up a few rows and adds a gradient into the same rows; see
:mod:`rowbook.models._w2v_kernels` for the update and its NumPy reference.

Semantics follow gensim 4 and word2vec.c: vocabulary by descending count after
``min_count`` (and ``max_vocab_size``) pruning, frequent-word subsampling
(:func:`rowbook.data.keep_probabilities`), negatives from the unigram^0.75 table
(:func:`rowbook.data.negative_table`), the Huffman tree of hierarchical softmax
(:func:`rowbook.data.huffman_tree`), windows shrunk by a random ``b`` in
``[0, window)``, and a learning rate decaying linearly from ``alpha`` to ``min_alpha``
over ``epochs`` passes of the corpus, updated every job of ~10,000 words.

Differences from gensim worth knowing: the sigmoid is exact instead of a 1000-entry
table that skips pairs scoring beyond +-6; sentences longer than 10,000 in-vocabulary
words are cut into pieces (gensim drops the rest of the sentence); with both objectives
on, their steps are computed from the same hidden vector and added (gensim applies
them one after the other); the random draws come from a generator per job, so one
worker and one seed give bit-identical tables, also across a checkpoint resume.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from rowbook.checks import check_choice, check_int, check_number
from rowbook.data.corpus import Corpus, CountedVocab, EncodedCorpus, job_boundaries, read_corpus
from rowbook.data.huffman import huffman_tree
from rowbook.data.sampling import job_seed, negative_guide, negative_table, sample_thresholds
from rowbook.io import fields_of, load_state, save_state
from rowbook.models._fitting import (
    Progress,
    ProgressReporter,
    resolve_workers,
    run_jobs,
)
from rowbook.models._w2v_kernels import train_job
from rowbook.models.base import Model, NotFittedError
from rowbook.vectors import Vectors

__all__ = ["NotFittedError", "Progress", "Word2Vec", "Word2VecSettings"]

_CHECKPOINT_KIND = "word2vec-checkpoint"


@dataclass(frozen=True)
class Word2VecSettings:
    """The parameters of :class:`Word2Vec`, validated on construction (see there)."""

    architecture: Literal["skipgram", "cbow"] = "skipgram"
    vector_size: int = 100
    window: int = 5
    min_count: int = 5
    max_vocab_size: int | None = None
    sample: float = 1e-3
    negative: int = 5
    hierarchical_softmax: bool = False
    ns_exponent: float = 0.75
    cbow_mean: bool = True
    alpha: float = 0.025
    min_alpha: float = 1e-4
    epochs: int = 5
    shrink_windows: bool = True
    workers: int | None = None
    seed: int = 1
    batch_words: int = 10_000
    compute_loss: bool = False
    progress: bool = False

    def __post_init__(self) -> None:
        check_choice("architecture", self.architecture, ("skipgram", "cbow"))
        for name, minimum in (("vector_size", 1), ("window", 1), ("min_count", 0),
                              ("negative", 0), ("epochs", 1), ("seed", 0), ("batch_words", 1)):  # fmt: skip
            check_int(name, getattr(self, name), minimum)
        if self.negative == 0 and not self.hierarchical_softmax:
            raise ValueError(
                "negative=0 turns negative sampling off, which needs hierarchical_softmax=True; "
                "use negative >= 1 or set hierarchical_softmax=True"
            )
        check_int("max_vocab_size", self.max_vocab_size, 1, allow_none=True)
        check_int("workers", self.workers, 1, allow_none=True)
        check_number("sample", self.sample, 0.0)
        check_number("ns_exponent", self.ns_exponent, -10.0, 10.0)
        check_number("alpha", self.alpha, 0.0, low_open=True)
        check_number("min_alpha", self.min_alpha, 0.0, self.alpha)


class Word2Vec(Model):
    """Train word vectors by skip-gram or CBOW (negative sampling, hierarchical softmax).

    Parameters
    ----------
    architecture : {"skipgram", "cbow"}
        Skip-gram predicts each centre word from every word of its window; CBOW predicts
        it from the mean (``cbow_mean=True``) or sum of the window's vectors.
    vector_size, window : int
        Dimension ``d`` of the vectors; maximum distance between centre and context.
    min_count, max_vocab_size : int
        Ignore words seen fewer than ``min_count`` times; cap the distinct words held
        during the corpus scan (gensim's pruning), ``None`` for no cap.
    sample : float
        Subsampling threshold (0 disables it), see :func:`rowbook.data.keep_probabilities`.
    negative, ns_exponent : int, float
        Negatives per example (0: no negative sampling) and the exponent of the unigram
        distribution they come from.
    hierarchical_softmax : bool
        Also (or, with ``negative=0``, only) train a hierarchical softmax over the Huffman
        tree of the vocabulary (:func:`rowbook.data.huffman_tree`); both objectives then
        share each example's hidden vector and their steps add up.
    alpha, min_alpha : float
        Learning rate at the start and at the end of training (linear decay).
    epochs, shrink_windows : int, bool
        Passes over the corpus; draw a random effective window per centre word.
    workers : int or None
        Training threads (``None``: one per CPU). One worker makes results reproducible.
    seed : int
        Seed of the initial vectors and of every random draw.
    batch_words : int
        Corpus words per job (the unit of threading and of learning-rate updates).
    compute_loss, progress : bool
        Track the negative-sampling loss (a little slower); show a tqdm progress bar.

    Examples
    --------
    >>> corpus = [["the", "cat", "sat"], ["the", "dog", "sat"]] * 50
    >>> model = Word2Vec(vector_size=8, min_count=1, epochs=2, workers=1).fit(corpus)
    >>> model.vectors.vectors.shape
    (4, 8)
    """

    def __init__(self, **params: Any) -> None:
        self.settings = Word2VecSettings(**params)
        self._fitted: dict[str, Any] | None = None

    def get_params(self) -> dict[str, Any]:
        """The settings as a dict (scikit-learn's accessor)."""
        return asdict(self.settings)

    def __repr__(self) -> str:
        changed = {k: v for k, v in asdict(self.settings).items() if v != getattr(Word2VecSettings, k)}
        return f"Word2Vec({', '.join(f'{k}={v!r}' for k, v in changed.items())})"

    def fit(
        self,
        corpus: Corpus,
        *,
        tokenizer: Any = None,
        callback: Callable[[Progress], None] | None = None,
        checkpoint: str | os.PathLike | None = None,
        resume: str | os.PathLike | None = None,
    ) -> Word2Vec:
        """Learn the vocabulary and the vectors of ``corpus``; returns ``self``.

        Parameters
        ----------
        corpus : iterable of token lists, or a path
            Sentences as lists of tokens, or a text file with one sentence per line.
        tokenizer : callable or object with ``tokenize``, optional
            Splits each line of a file corpus (default: on whitespace).
        callback : callable, optional
            Called with a :class:`Progress` after every epoch; raising stops training.
        checkpoint : path, optional
            Write the training state there (atomically, ``.npz``) after every epoch.
        resume : path, optional
            A checkpoint of a run with the same settings on the same corpus: training
            continues after its last epoch and ends where the uninterrupted run would.
        """
        s = self.settings
        vocab, encoded = read_corpus(corpus, min_count=s.min_count, max_vocab_size=s.max_vocab_size,
                                     tokenizer=tokenizer)  # fmt: skip
        _check_vocab(vocab, s.min_count)
        if resume is None:
            tables, start, history = _initial_tables(len(vocab), s), 0, []
        else:
            tables, start, history = _load_checkpoint(resume, s, vocab)
        _train(s, vocab, encoded, tables, start, history, callback, checkpoint)
        vectors = Vectors(vocab.keys, tables["W_in"], vocab.counts)
        self._fitted = {"vocab": vocab, **tables, "history": history, "vectors": vectors}
        return self

    # -- learned state ------------------------------------------------------------------

    @property
    def vectors(self) -> Vectors:
        """The trained word vectors (a copy of ``W_in``) as a :class:`rowbook.Vectors`."""
        return self._learned("vectors", "vectors")

    @property
    def W_in(self) -> np.ndarray:
        """``(V, d)`` float32 input embedding table (the word vectors)."""
        return self._learned("W_in", "W_in")

    @property
    def W_out(self) -> np.ndarray:
        """``(V, d)`` float32 output embedding table (gensim's ``syn1neg``)."""
        return self._learned("W_out", "W_out")

    @property
    def W_nodes(self) -> np.ndarray:
        """``(V - 1, d)`` inner-node vectors of hierarchical softmax (gensim's ``syn1``);
        empty unless ``hierarchical_softmax=True``."""
        return self._learned("W_nodes", "W_nodes")

    @property
    def index_to_key(self) -> tuple[str, ...]:
        return self._learned("vocab", "index_to_key").keys

    @property
    def counts(self) -> np.ndarray:
        """``(V,)`` corpus counts of the vocabulary words."""
        return self._learned("vocab", "counts").counts

    @property
    def history(self) -> list[Progress]:
        """One :class:`Progress` per epoch trained by the last ``fit``."""
        return self._learned("history", "history")


def _check_vocab(vocab: CountedVocab, min_count: int) -> None:
    if vocab.total_words == 0:
        raise ValueError(
            f"the corpus is empty: {vocab.corpus_count} sentences and no tokens were read; "
            "pass token lists or a non-empty text file"
        )
    if len(vocab) == 0:
        raise ValueError(
            f"no word occurs at least min_count={min_count} times in the corpus "
            f"({vocab.total_words} tokens); lower min_count or use a larger corpus"
        )


def _initial_tables(V: int, s: Word2VecSettings) -> dict[str, np.ndarray]:
    """``W_in`` uniform(-1/d, 1/d) exactly as gensim 4's ``prep_vectors``; the others zero."""
    W_in = np.random.default_rng(s.seed).random((V, s.vector_size), dtype=np.float32)  # (V, d)
    W_in *= np.float32(2.0)
    W_in -= np.float32(1.0)
    W_in /= np.float32(s.vector_size)
    W_out = np.zeros((V, s.vector_size), dtype=np.float32)  # (V, d)
    n_nodes = max(V - 1, 1) if s.hierarchical_softmax else 0
    W_nodes = np.zeros((n_nodes, s.vector_size), dtype=np.float32)  # (V - 1, d)
    return {"W_in": W_in, "W_out": W_out, "W_nodes": W_nodes}


def _train(s: Word2VecSettings, vocab: CountedVocab, encoded: EncodedCorpus,
           tables: dict[str, np.ndarray], start: int, history: list[Progress],
           callback: Callable | None, checkpoint: str | os.PathLike | None) -> None:  # fmt: skip
    """Epochs ``start .. epochs - 1``: jobs on worker threads, checkpoint, callback."""
    W_in = tables["W_in"]
    thresholds = sample_thresholds(vocab.counts, s.sample)
    table = negative_table(vocab.counts, s.ns_exponent)
    out = (tables["W_out"], table, negative_guide(table), s.negative)
    tree = (tables["W_nodes"], *huffman_tree(vocab.counts)) if s.hierarchical_softmax else None
    bounds = job_boundaries(encoded.raw_lengths, s.batch_words)
    words_before = np.concatenate([[0], np.cumsum(encoded.raw_lengths)])[bounds]  # (J + 1,)
    job_words = np.diff(words_before)
    total = max(encoded.total_words, 1)
    reporter = ProgressReporter(s.epochs, encoded.total_words, show=s.progress, callback=callback,
                                start_epoch=start, show_loss=s.compute_loss)  # fmt: skip
    try:
        for epoch in range(start, s.epochs):
            done = (epoch + words_before[:-1] / total) / s.epochs
            alphas = np.maximum(s.min_alpha, s.alpha - (s.alpha - s.min_alpha) * done)

            def job(j: int, epoch: int = epoch, alphas: np.ndarray = alphas) -> tuple[int, float]:
                return train_job(W_in, encoded.ids, encoded.starts, bounds[j], bounds[j + 1],
                                 thresholds, s.sample > 0, out, tree, s.window, s.shrink_windows,
                                 s.architecture == "skipgram", s.cbow_mean, alphas[j],
                                 job_seed(s.seed, epoch, j), s.compute_loss)  # fmt: skip

            reporter.start_epoch()
            run_jobs(len(bounds) - 1, resolve_workers(s.workers), job,
                     lambda j, r, a=alphas: reporter.job_done(int(job_words[j]), r[1], a[j]))  # fmt: skip
            progress = reporter.end_epoch(epoch, loss_known=s.compute_loss)
            history.append(progress)
            if checkpoint is not None:
                _save_checkpoint(checkpoint, s, vocab, tables, history)
            reporter.notify(progress)
    finally:
        reporter.close()


_RUN_ONLY = ("workers", "progress", "compute_loss")  # settings a resumed run may change


def _save_checkpoint(path, s: Word2VecSettings, vocab: CountedVocab, tables, history) -> None:
    state = {
        "settings": asdict(s),
        "keys": list(vocab.keys),
        "counts": vocab.counts,
        "tables": tables,
        "history": [asdict(p) for p in history],
    }
    save_state(path, state, kind=_CHECKPOINT_KIND)


def _check_table_shapes(path, tables: dict[str, np.ndarray], V: int, s: Word2VecSettings) -> None:
    """The kernels index these tables without bounds checks: a checkpoint's must be exact."""
    n_nodes = max(V - 1, 1) if s.hierarchical_softmax else 0
    expected = {"W_in": (V, s.vector_size), "W_out": (V, s.vector_size), "W_nodes": (n_nodes, s.vector_size)}
    found = {k: v.shape for k, v in tables.items()}
    if found != expected:
        raise ValueError(f"checkpoint {path}: field 'tables' must hold the shapes {expected}, got {found}")


def _load_checkpoint(path, s: Word2VecSettings, vocab: CountedVocab):
    state = load_state(path, kind=_CHECKPOINT_KIND)
    with fields_of(path, "checkpoint"):
        theirs = {k: v for k, v in state["settings"].items() if k not in _RUN_ONLY}
        ours = {k: v for k, v in asdict(s).items() if k not in _RUN_ONLY}
        if theirs != ours:
            diff = {k: (theirs.get(k), v) for k, v in ours.items() if theirs.get(k) != v}
            raise ValueError(f"checkpoint {path} was made with other settings (checkpoint, now): {diff}")
        same = tuple(state["keys"]) == vocab.keys and np.array_equal(state["counts"], vocab.counts)
        if not same:
            raise ValueError(
                f"checkpoint {path} was made on a different corpus (its vocabulary differs); "
                "resume with the corpus it was trained on"
            )
        tables = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in state["tables"].items()}
        _check_table_shapes(path, tables, len(vocab), s)
        history = [Progress(**p) for p in state["history"]]
        return tables, len(history), history
