"""fastText (Bojanowski et al. 2017): word2vec whose input vectors are mean bags of n-gram rows.

``W_in`` ``(nwords + bucket, d)`` holds one row per vocabulary word and one per hash bucket
of character n-grams; a word is the bag ``[id(w)] + [nwords + fnv1a(g) % bucket for g in
ngrams("<w>")]`` (:mod:`rowbook.text.subwords`) and its vector is the mean of the bag's
rows, an ``EmbeddingBag(mode="mean")`` lookup. Training is word2vec's skip-gram or CBOW
with negative sampling, every input row replaced by such a bag; each row of a bag takes
h's whole step, as in fastText (derivation in :mod:`rowbook.models._ft_kernels`). The
learned vectors (:attr:`FastText.vectors`, a :class:`rowbook.vectors.SubwordVectors`) give
a vector for any word, seen or not.

Files: ``save(path)`` / ``FastText.load(path)`` is rowbook's model file (it resumes
training); ``save_fasttext(path)`` / ``FastText.load_fasttext(path)`` is Facebook fastText's
``.bin``, which the ``fasttext`` package loads and which gives it the same word vectors.

Semantics follow fastText (``src/fasttext.cc``, ``model.cc``, ``loss.cc``, ``dictionary.cc``)
with word2vec's machinery, which differs in these ways, each a deliberate choice:
the corpus, vocabulary and sentence handling are :func:`rowbook.data.read_corpus`'s (no
``</s>`` token per line; frequency ``f`` of subsampling is over the vocabulary's tokens,
``keep = sqrt(t / f) + t / f`` as in fastText); the learning rate decays linearly from
``lr`` to ``min_lr`` per job of ``batch_words`` words (fastText: to 0, every 100 tokens);
negatives come from gensim's cumulative table of ``count ** ns_exponent`` (fastText's
exponent 0.5 by default) and a negative equal to the target is skipped (fastText draws
again); the sigmoid is exact (fastText: a 512-entry table clipped at +-8); and the random
draws are word2vec's generator per job, so one worker and a seed give bit-identical
tables, across a checkpoint resume too, and ``maxn=0`` is exactly :class:`Word2Vec`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, Literal

import numpy as np

from rowbook.checks import check_choice, check_int, check_number
from rowbook.data.corpus import Corpus, CountedVocab, EncodedCorpus, job_boundaries, read_corpus
from rowbook.data.sampling import job_seed, negative_guide, negative_table, sample_thresholds
from rowbook.models._fitting import Progress, ProgressReporter, resolve_workers, run_jobs
from rowbook.models._ft_kernels import train_job
from rowbook.models.base import Model, read_model_file
from rowbook.models.word2vec import _check_vocab
from rowbook.text.subwords import subword_table
from rowbook.vectors.fasttext_format import (
    FastTextArgs,
    FastTextFile,
    read_fasttext_bin,
    write_fasttext_bin,
)
from rowbook.vectors.subword import SubwordVectors

__all__ = ["FastText"]

_RUN_ONLY = ("workers", "progress")  # parameters a resumed run may change
_MODEL_CODES = {"cbow": 1, "skipgram": 2}


class FastText(Model):
    """Train subword word vectors by skip-gram or CBOW with negative sampling (fastText).

    Parameters
    ----------
    architecture : {"skipgram", "cbow"}
        Skip-gram: a word's bag predicts each word of its window; CBOW: the mean of the
        rows of every context word's bag predicts the centre word.
    vector_size, window : int
        Dimension ``d``; maximum distance between centre and context (shrunk at random).
    min_count : int
        Ignore words seen fewer times.
    minn, maxn : int
        Lengths of the character n-grams of ``"<word>"``; ``maxn=0`` turns them off (then
        this is word2vec, and no bucket rows are allocated).
    bucket : int
        Hash buckets for the n-grams: ``W_in`` has ``nwords + bucket`` rows.
    negative, ns_exponent : int, float
        Negatives per example, drawn from ``count ** ns_exponent`` (fastText: 0.5).
    sample : float
        Subsampling threshold ``t`` (0 disables it).
    lr, min_lr : float
        Learning rate at the start and at the end of training (linear decay).
    epochs : int
        Passes over the corpus.
    workers : int or None
        Training threads (``None``: one per CPU). One worker makes results reproducible.
    seed : int
        Seed of the initial vectors and of every random draw.
    batch_words : int
        Corpus words per job (the unit of threading and of learning-rate updates).
    progress : bool
        Show a tqdm progress bar.

    Examples
    --------
    >>> corpus = [["walk", "walked", "talk", "talked"]] * 50
    >>> ft = FastText(vector_size=8, min_count=1, bucket=100, epochs=1, workers=1).fit(corpus)
    >>> "walking" in ft.vectors, ft.vectors.vector_for("walking").shape
    (False, (8,))
    """

    _state_version = 1

    def __init__(self, *, architecture: Literal["skipgram", "cbow"] = "skipgram", vector_size: int = 100,
                 window: int = 5, min_count: int = 5, minn: int = 3, maxn: int = 6, bucket: int = 2_000_000,
                 negative: int = 5, ns_exponent: float = 0.5, sample: float = 1e-4, lr: float = 0.05,
                 min_lr: float = 0.0, epochs: int = 5, workers: int | None = None, seed: int = 1,
                 batch_words: int = 10_000, progress: bool = False) -> None:  # fmt: skip
        self.architecture = check_choice(
            "architecture", architecture, ("skipgram", "cbow"), owner="FastText"
        )
        for name, value, minimum in (("vector_size", vector_size, 1), ("window", window, 1),
                                     ("min_count", min_count, 0), ("minn", minn, 1), ("maxn", maxn, 0),
                                     ("bucket", bucket, 1), ("negative", negative, 1), ("epochs", epochs, 1),
                                     ("seed", seed, 0), ("batch_words", batch_words, 1)):  # fmt: skip
            check_int(name, value, minimum, owner="FastText")
        if 0 < maxn < minn:
            check_int("maxn", maxn, minn, owner="FastText")
        check_int("workers", workers, 1, allow_none=True, owner="FastText")
        check_number("ns_exponent", ns_exponent, -10.0, 10.0, owner="FastText")
        check_number("sample", sample, 0.0, owner="FastText")
        check_number("lr", lr, 0.0, low_open=True, owner="FastText")
        check_number("min_lr", min_lr, 0.0, lr, owner="FastText")
        self.vector_size, self.window, self.min_count = vector_size, window, min_count
        self.minn, self.maxn, self.bucket = minn, maxn, bucket
        self.negative, self.ns_exponent, self.sample = negative, ns_exponent, sample
        self.lr, self.min_lr, self.epochs = lr, min_lr, epochs
        self.workers, self.seed, self.batch_words, self.progress = (
            workers,
            seed,
            batch_words,
            progress,
        )

    @property
    def n_buckets(self) -> int:
        """Bucket rows actually in ``W_in``: ``bucket``, or 0 when ``maxn=0`` (no n-grams)."""
        return self.bucket if self.maxn > 0 else 0

    def fit(self, corpus: Corpus, *, tokenizer: Any = None, callback: Callable[[Progress], None] | None = None,
            checkpoint: str | os.PathLike | None = None, resume: str | os.PathLike | None = None) -> FastText:  # fmt: skip
        """Learn the vocabulary, its bags and the tables from ``corpus``; returns ``self``.

        Parameters
        ----------
        corpus : iterable of token lists, or a path
            Sentences as lists of tokens, or a text file with one sentence per line.
        tokenizer : callable or object with ``tokenize``, optional
            Splits each line of a file corpus (default: on whitespace).
        callback : callable, optional
            Called with a :class:`~rowbook.models._fitting.Progress` after every epoch.
        checkpoint : path, optional
            Save the model there (as :meth:`save`, atomically) after every epoch.
        resume : path, optional
            A checkpoint or saved FastText of the same parameters on the same corpus:
            training continues after its last epoch and ends where the uninterrupted run would.
        """
        vocab, encoded = read_corpus(corpus, min_count=self.min_count, tokenizer=tokenizer)
        _check_vocab(vocab, self.min_count)
        if resume is None:
            tables, history = self._initial_tables(len(vocab)), []
        else:
            tables, history = self._resumed(resume, vocab)
        state = {"vocab": vocab, **tables, "history": history}
        self._train(state, encoded, callback, checkpoint)
        self._fitted = state  # learned state is set only by a completed fit
        return self

    def _initial_tables(self, V: int) -> dict[str, np.ndarray]:
        """``W_in`` uniform(-1/d, 1/d) (fastText's init; its first V rows are Word2Vec's), ``W_out`` zero."""
        d = self.vector_size
        W_in = np.random.default_rng(self.seed).random((V + self.n_buckets, d), dtype=np.float32)
        W_in *= np.float32(2.0)
        W_in -= np.float32(1.0)
        W_in /= np.float32(d)  # (V + bucket, d)
        return {"W_in": W_in, "W_out": np.zeros((V, d), dtype=np.float32)}  # W_out (V, d)

    def _train(self, state: dict[str, Any], encoded: EncodedCorpus, callback: Callable | None,
               checkpoint: str | os.PathLike | None) -> None:  # fmt: skip
        """Epochs ``len(history) .. epochs - 1``: jobs on worker threads, checkpoint, callback."""
        vocab, W_in, W_out, history = (
            state["vocab"],
            state["W_in"],
            state["W_out"],
            state["history"],
        )
        bag_starts, bag_ids = subword_table(
            vocab.keys, minn=self.minn, maxn=self.maxn, bucket=self.n_buckets
        )
        thresholds = sample_thresholds(vocab.counts, self.sample)
        table = negative_table(vocab.counts, self.ns_exponent)
        out = (W_out, table, negative_guide(table), self.negative)
        bounds = job_boundaries(encoded.raw_lengths, self.batch_words)
        words_before = np.concatenate([[0], np.cumsum(encoded.raw_lengths)])[bounds]  # (J + 1,)
        job_words, total = np.diff(words_before), max(encoded.total_words, 1)
        reporter = ProgressReporter(self.epochs, encoded.total_words, show=self.progress, callback=callback,
                                    start_epoch=len(history), show_loss=False)  # fmt: skip
        try:
            for epoch in range(len(history), self.epochs):
                done = (epoch + words_before[:-1] / total) / self.epochs
                lrs = np.maximum(self.min_lr, self.lr - (self.lr - self.min_lr) * done)

                def job(j: int, epoch: int = epoch, lrs: np.ndarray = lrs) -> tuple[int, float]:
                    return train_job(W_in, bag_starts, bag_ids, encoded.ids, encoded.starts, bounds[j],
                                     bounds[j + 1], thresholds, self.sample > 0, out, self.window,
                                     self.architecture == "skipgram", lrs[j], job_seed(self.seed, epoch, j)), 0.0  # fmt: skip

                reporter.start_epoch()
                run_jobs(len(bounds) - 1, resolve_workers(self.workers), job,
                         lambda j, r, a=lrs: reporter.job_done(int(job_words[j]), r[1], a[j]))  # fmt: skip
                history.append(reporter.end_epoch(epoch, loss_known=False))
                if checkpoint is not None:
                    self._save_checkpoint(checkpoint, state)
                reporter.notify(history[-1])
        finally:
            reporter.close()

    def _save_checkpoint(self, path: str | os.PathLike, state: dict[str, Any]) -> None:
        """``save(path)`` of the state so far (a checkpoint is a saved model file)."""
        previous, self._fitted = self._fitted, state
        try:
            self.save(path)
        finally:
            self._fitted = previous

    def _resumed(
        self, path: str | os.PathLike, vocab: CountedVocab
    ) -> tuple[dict[str, np.ndarray], list[Progress]]:
        document = read_model_file(path)
        if document["class"] != type(self).__name__:
            raise ValueError(f"resume={path} holds a {document['class']} model, not a FastText")
        theirs = {k: v for k, v in document["params"].items() if k not in _RUN_ONLY}
        ours = {k: v for k, v in self.get_params().items() if k not in _RUN_ONLY}
        if theirs != ours:
            diff = {k: (theirs.get(k), v) for k, v in ours.items() if theirs.get(k) != v}
            raise ValueError(f"resume={path} was made with other parameters (file, now): {diff}")
        state = document["state"]
        if tuple(state["keys"]) != vocab.keys or not np.array_equal(state["counts"], vocab.counts):
            raise ValueError(f"resume={path} was made on a different corpus (its vocabulary differs); "
                             "resume with the corpus it was trained on")  # fmt: skip
        tables = {k: np.ascontiguousarray(state[k], dtype=np.float32) for k in ("W_in", "W_out")}
        return tables, [Progress(**p) for p in state["history"]]

    # -- learned state ------------------------------------------------------------------

    @property
    def vectors(self) -> SubwordVectors:
        """The word vectors (mean bags over ``W_in``, shared, read-only), a vector for any word."""
        state = self._require_fitted(".vectors")
        if "vectors" not in state:
            vocab = state["vocab"]
            state["vectors"] = SubwordVectors(vocab.keys, state["W_in"], minn=self.minn, maxn=self.maxn,
                                              bucket=self.n_buckets, counts=vocab.counts)  # fmt: skip
        return state["vectors"]

    @property
    def W_in(self) -> np.ndarray:
        """``(nwords + bucket, d)`` float32 input table: word rows, then n-gram buckets."""
        return self._learned("W_in")

    @property
    def W_out(self) -> np.ndarray:
        """``(nwords, d)`` float32 output table of negative sampling."""
        return self._learned("W_out")

    @property
    def history(self) -> list[Progress]:
        """One :class:`~rowbook.models._fitting.Progress` per epoch trained."""
        return self._learned("history")

    def subwords(self, word: str) -> list[tuple[str, int]]:
        """``(piece, row)`` for each member of the bag of ``word`` (see :meth:`SubwordVectors.subwords`)."""
        return self.vectors.subwords(word)

    def _get_state(self) -> dict[str, Any]:
        vocab = self._fitted["vocab"]
        return {"keys": list(vocab.keys), "counts": vocab.counts, "total_words": vocab.total_words,
                "corpus_count": vocab.corpus_count, "W_in": self._fitted["W_in"], "W_out": self._fitted["W_out"],
                "history": [asdict(p) for p in self._fitted["history"]]}  # fmt: skip

    def _set_state(self, state: dict[str, Any]) -> None:
        vocab = CountedVocab(tuple(state["keys"]), np.asarray(state["counts"], dtype=np.int64),
                             int(state["total_words"]), int(state["corpus_count"]))  # fmt: skip
        tables = {k: np.ascontiguousarray(state[k], dtype=np.float32) for k in ("W_in", "W_out")}
        self._fitted = {
            "vocab": vocab,
            **tables,
            "history": [Progress(**p) for p in state["history"]],
        }

    # -- Facebook fastText files ----------------------------------------------------------

    def save_fasttext(self, path: str | os.PathLike) -> None:
        """Write a fastText ``.bin`` (version 12) that ``fasttext.load_model`` reads, atomically."""
        state = self._require_fitted("save_fasttext()")
        vocab = state["vocab"]
        args = FastTextArgs(dim=self.vector_size, ws=self.window, epoch=self.epochs, minCount=self.min_count,
                            neg=self.negative, loss=2, model=_MODEL_CODES[self.architecture],
                            bucket=self.n_buckets, minn=self.minn, maxn=self.maxn, t=self.sample)  # fmt: skip
        write_fasttext_bin(path, FastTextFile(args, vocab.keys, vocab.counts, state["W_in"], state["W_out"],
                                              ntokens=vocab.total_words))  # fmt: skip

    @classmethod
    def load_fasttext(cls, path: str | os.PathLike) -> FastText:
        """A fitted FastText from a Facebook fastText ``.bin`` (unsupervised, unquantised)."""
        file = read_fasttext_bin(path)
        a = file.args
        if a.model not in (1, 2) or a.loss != 2:
            raise ValueError(f"{path}: a {'supervised' if a.model == 3 else 'non negative-sampling'} fastText "
                             "model; FastText.load_fasttext reads skip-gram/CBOW with negative sampling "
                             "(SubwordVectors.load_fasttext reads the vectors of any .bin)")  # fmt: skip
        model = cls(architecture="cbow" if a.model == 1 else "skipgram", vector_size=a.dim, window=a.ws,
                    min_count=a.minCount, minn=max(a.minn, 1), maxn=a.maxn, bucket=max(a.bucket, 1),
                    negative=a.neg, sample=a.t, epochs=a.epoch)  # fmt: skip
        vocab = CountedVocab(file.words, file.counts, file.ntokens, 0)
        W_in = file.input[
            : len(file.words) + model.n_buckets
        ]  # maxn=0: fastText keeps unused buckets
        model._fitted = {"vocab": vocab, "W_in": W_in, "W_out": file.output, "history": []}
        return model
