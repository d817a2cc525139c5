"""fastText (Bojanowski et al. 2017): word2vec whose input vectors are mean bags of n-gram rows.

``W_in`` ``(nwords + bucket, d)`` holds one row per vocabulary word and one per hash bucket
of character n-grams; a word is the bag ``[id(w)] + [nwords + fnv1a(g) % bucket for g in
ngrams("<w>")]`` (:mod:`rowbook.text.char_ngrams`) and its vector is the mean of the bag's
rows, an ``EmbeddingBag(mode="mean")`` lookup. Training is word2vec's skip-gram or CBOW
with negative sampling, every input row replaced by such a bag, in fastText's orientation
(skip-gram: the centre word's bag predicts each word of its window); each row of a bag
takes h's whole step, as in fastText (derivation in
:mod:`~rowbook.models.word_vectors.fasttext_kernels`). Skip-gram steps each (centre,
context) pair as fastText does (``kernel="classic"``) or a centre's window as one minibatch,
the bag read once against every pair's targets (``kernel="batched"``,
:mod:`~rowbook.models.word_vectors.fasttext_batched_kernels`); CBOW each window as fastText
does, or 8 windows as one minibatch sharing their negatives (word2vec's minibatched CBOW
over the bags). The
learned vectors (:attr:`FastText.vectors`, a :class:`rowbook.vectors.SubwordVectors`) give
a vector for any word, seen or not.

Files: ``save(path)`` / ``FastText.load(path)`` is rowbook's model file (it resumes
training); ``save_fasttext(path)`` / ``FastText.load_fasttext(path)`` is Facebook fastText's
``.bin``, which the ``fasttext`` package loads and which gives it the same word vectors.

Semantics follow fastText (``src/fasttext.cc``, ``model.cc``, ``loss.cc``, ``dictionary.cc``)
on the word-vector family's machinery -- ``FastText`` is a :class:`Word2Vec` whose input rows
are bags, so ``fit``, ``build_vocab(update=True)``, ``train``, checkpoints and ``resume`` are
the family's -- which differs from fastText in these ways, each a deliberate choice:
the corpus, vocabulary and sentence handling are :func:`rowbook.data.read_corpus`'s (no
``</s>`` token per line; frequency ``f`` of subsampling is over the vocabulary's tokens,
``keep = sqrt(t / f) + t / f`` as in fastText); the learning rate decays linearly from
``lr`` to ``min_lr`` per job of ``batch_words`` words (fastText: to 0, every 100 tokens);
negatives come from gensim's cumulative table of ``count ** ns_exponent`` (fastText's
exponent 0.5 by default), and a negative equal to its target is skipped, as gensim and
word2vec do (``redraw=True`` draws it again, as fastText does); skip-gram reads a centre's
bag once for its whole window by default (``kernel="batched"``; ``"classic"`` steps pair by pair as fastText does, and CBOW does by
default); the sigmoid is
exact (fastText: a 512-entry table clipped at +-8); and the random
draws are word2vec's generator per job, so one worker and a seed give bit-identical
tables, across a checkpoint resume too. With ``maxn=0``, CBOW is exactly :class:`Word2Vec`'s
CBOW; skip-gram is word2vec's with the pairs turned round (word2vec.c's context row predicts
the centre word).
"""

from __future__ import annotations

import os
from typing import Any, ClassVar, Literal

import numpy as np

from rowbook.checks import check_choice, check_int, check_number
from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.id_stream import EncodedCorpus
from rowbook.data.sampling import negative_guide, negative_table, sample_thresholds
from rowbook.models.word_vectors.job_args import FastTextJob
from rowbook.models.word_vectors.state import TrainedState, subword_vectors, table_view
from rowbook.models.word_vectors.word2vec import Word2Vec
from rowbook.models.word_vectors.word2vec_training import grow_tables, initial_rows_where
from rowbook.text.char_ngrams import subword_table
from rowbook.vectors.fasttext_format import (
    FastTextArgs,
    FastTextFile,
    read_fasttext_bin,
    write_fasttext_bin,
)
from rowbook.vectors.subword import SubwordVectors

__all__ = ["DEFAULT_KERNEL", "FastText", "initial_input"]

_MODEL_CODES = {"cbow": 1, "skipgram": 2}

#: The kernel ``FastText(kernel=None)`` steps with, by architecture, chosen by measurement
#: (``docs/cores.md``): CBOW's minibatch lost 0.017 of SimLex on NewsArticles.
DEFAULT_KERNEL = {"skipgram": "batched", "cbow": "classic"}


class FastText(Word2Vec):
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
    redraw : bool
        A negative draw equal to its example's target is skipped (``False``, the default:
        gensim's and word2vec.c's way, that example has one negative fewer) or drawn again
        (``True``, fastText's ``getNegative``). About 0.06% of the draws; measured equal in
        ``docs/benchmarks.md`` (the WordSim353 gap), so the default stays rowbook's earlier
        choice and models saved before the option train on as they did. The batched CBOW
        kernel shares its negatives across 8 windows and drops a draw equal to any of their
        centres either way.
    kernel : {"batched", "classic"} or None
        How the examples step; ``None`` (the default) takes the architecture's measured
        choice, :data:`DEFAULT_KERNEL`: ``"batched"`` for skip-gram, ``"classic"`` for CBOW.
        Skip-gram: ``"batched"`` makes the window of a centre word one minibatch
        (:mod:`~rowbook.models.word_vectors.fasttext_batched_kernels`): the centre's bag read
        once into ``h``, ``h`` against the window's context words and its ``negative`` draws
        a pair in one block, all from the rows as they were before the window, and h's step
        added to the bag once; ``"classic"`` takes one example per (centre, context) pair, as
        fastText's ``FastText::skipgram``: the bag read afresh for each pair and h's step
        added to it each pair. On NewsArticles and the health tweets the two score within
        0.01 of each other and the batched kernel alone runs 1.5-1.7x as fast. CBOW:
        ``"batched"`` is word2vec's minibatched CBOW over the bags
        (:mod:`~rowbook.models.word_vectors.word2vec_batched_cbow_kernels`): 8 windows far
        apart, each one mean over its context words' bag rows, against its own centre and
        all against one shared draw of negatives; ``"classic"`` takes each window with its
        own negatives, as fastText's ``FastText::cbow``. The bags are most of a CBOW step
        and the minibatch leaves them as they are: the kernel alone gains 1.1x, and on
        NewsArticles it lost 0.017 of SimLex (``docs/cores.md``), so CBOW's default stays
        ``"classic"``. One worker and a seed give ``"classic"``'s tables as rowbook gave them
        before the option. Models saved before the option, and CBOW models saved before
        ``"batched"`` covered CBOW, load (and resume) with ``"classic"``.
    lr, min_lr : float
        Learning rate at the start and at the end of each training call (linear decay).
    epochs : int
        Passes over the corpus in ``fit``.
    workers : int or None
        Training threads (``None``: one per core the process may use). One worker makes
        results reproducible.
    seed : int
        Seed of the initial vectors and of every random draw.
    batch_words : int
        Corpus words per job (the unit of threading and of learning-rate updates).
    progress : bool
        Show a tqdm progress bar.
    row_stats : bool
        Record per-row telemetry of ``W_in``, bucket rows included, read as
        :attr:`row_stats_` (:mod:`~rowbook.models.word_vectors.telemetry`).

    Examples
    --------
    >>> corpus = [["walk", "walked", "talk", "talked"]] * 50
    >>> ft = FastText(vector_size=8, min_count=1, bucket=100, epochs=1, workers=1).fit(corpus)
    >>> "walking" in ft.vectors, ft.vectors.vector_for("walking").shape
    (False, (8,))
    >>> [piece for piece, row in ft.subwords("walk")][:4]
    ['walk', '<wa', '<wal', '<walk']
    """

    _run_only: ClassVar[tuple[str, ...]] = ("workers", "progress", "row_stats")
    # word2vec's options fastText does not have, fixed (class constants, not parameters)
    max_vocab_size: ClassVar[None] = None
    hierarchical_softmax: ClassVar[bool] = False
    cbow_mean: ClassVar[bool] = True
    #: 2: ``kernel`` joined the parameters (files before it trained with the classic kernel);
    #: 3: ``kernel="batched"`` minibatches CBOW too (version 2 trained CBOW classic). Both
    #: load with the kernel they trained with: :meth:`Word2Vec._upgrade`.
    _state_version: ClassVar[int] = 3
    _kernels: ClassVar[tuple[str, ...]] = ("batched", "classic")
    shrink_windows: ClassVar[bool] = True
    compute_loss: ClassVar[bool] = False

    def __init__(
        self,
        *,
        architecture: Literal["skipgram", "cbow"] = "skipgram",
        vector_size: int = 100,
        window: int = 5,
        min_count: int = 5,
        minn: int = 3,
        maxn: int = 6,
        bucket: int = 2_000_000,
        negative: int = 5,
        ns_exponent: float = 0.5,
        sample: float = 1e-4,
        redraw: bool = False,
        kernel: Literal["batched", "classic"] | None = None,
        lr: float = 0.05,
        min_lr: float = 0.0,
        epochs: int = 5,
        workers: int | None = None,
        seed: int = 1,
        batch_words: int = 10_000,
        progress: bool = False,
        row_stats: bool = False,
    ) -> None:
        self.architecture, self.vector_size, self.window = architecture, vector_size, window
        self.min_count, self.minn, self.maxn, self.bucket = min_count, minn, maxn, bucket
        self.negative, self.ns_exponent, self.sample = negative, ns_exponent, sample
        self.redraw, self.kernel = redraw, kernel
        self.lr, self.min_lr, self.epochs = lr, min_lr, epochs
        self.workers, self.seed = workers, seed
        self.batch_words, self.progress, self.row_stats = batch_words, progress, row_stats
        self._check_params()

    def _check_params(self) -> None:
        """Word2Vec's checks, and the n-gram options; negative sampling is the only objective."""
        check_int("negative", self.negative, 1)
        check_choice("redraw", self.redraw, (True, False))
        check_number("lr", self.lr, 0.0, low_open=True)  # no architecture default here
        self._check_ints(minn=1, maxn=0, bucket=1)
        if 0 < self.maxn < self.minn:
            check_int("maxn", self.maxn, self.minn)
        super()._check_params()

    @property
    def _start_lr(self) -> float:
        return self.lr

    @property
    def _kernel(self) -> str:
        """``kernel``, or for ``None`` the architecture's default (:data:`DEFAULT_KERNEL`)."""
        return DEFAULT_KERNEL[self.architecture] if self.kernel is None else self.kernel

    @property
    def n_buckets(self) -> int:
        """Bucket rows actually in ``W_in``: ``bucket``, or 0 when ``maxn=0`` (no n-grams)."""
        return self.bucket if self.maxn > 0 else 0

    # -- what differs from word2vec: the tables and the kernel ---------------------------

    def _new_tables(self, vocab: CountedVocab) -> dict[str, np.ndarray]:
        """Word2vec's tables, ``W_in`` with ``nwords + bucket`` rows (:func:`initial_input`)."""
        return {**super()._new_tables(vocab), "W_in": initial_input(self.seed, vocab.keys, self)}

    def _table_shapes(self, V: int) -> dict[str, tuple[int, int]]:
        return {**super()._table_shapes(V), "W_in": (V + self.n_buckets, self.vector_size)}

    def _grow_tables(self, state: TrainedState, old_V: int) -> None:
        """New word rows go between the old word rows and the bucket rows, which are kept;
        buckets that only the new words use start at their initial values."""
        tables, keys = state.tables, state.vocab.keys
        V = len(keys)
        grown = grow_tables({**tables, "W_in": tables["W_in"][:old_V]}, V, self.seed)
        fresh = initial_input(self.seed, keys, self)  # (V + bucket, d)
        kept = np.any(tables["W_in"][old_V:] != 0, axis=1)  # (bucket,) rows in use before
        fresh[V:][kept] = tables["W_in"][old_V:][kept]
        fresh[:V] = grown["W_in"]
        state.tables = {**grown, "W_in": fresh}

    def _job_step(
        self,
        vocab: CountedVocab,
        tables: dict[str, np.ndarray],
        encoded: EncodedCorpus,
        bounds: np.ndarray,
    ):
        """``step(j, lr, seed, stats)`` trains job ``j`` with the bags of the vocabulary (loss not kept)."""
        bag_starts, bag_ids = subword_table(
            vocab.keys, minn=self.minn, maxn=self.maxn, bucket=self.n_buckets
        )
        thresholds = sample_thresholds(vocab.counts, self.sample)
        table = negative_table(vocab.counts, self.ns_exponent)
        out = (tables["W_out"], table, negative_guide(table), self.negative)
        job = FastTextJob(
            tables["W_in"],
            bag_starts,
            bag_ids,
            thresholds,
            use_sample=self.sample > 0,
            out=out,
            window=self.window,
            skipgram=self.architecture == "skipgram",
            batched=self._kernel == "batched",
            redraw=self.redraw,
        )

        def step(j: int, lr: float, seed: int, stats: Any) -> float:
            ids, starts = encoded.sentences(bounds[j], bounds[j + 1])  # read from disk if spilled
            job.run(ids, starts, lr, seed, stats)
            return 0.0

        return step

    def _make_vectors(self, state: TrainedState) -> SubwordVectors:
        """Mean bags over ``W_in`` (shared with the model, read-only): a vector for any word."""
        return subword_vectors(state, self)

    # -- learned state ------------------------------------------------------------------

    W_in_ = table_view(
        "W_in",
        "``(nwords + bucket, d)`` float32 input table: word rows, then n-gram buckets.",
    )

    def subwords(self, word: str) -> list[tuple[str, int]]:
        """``(piece, row)`` for each member of the bag of ``word`` (:meth:`SubwordVectors.subwords`)."""
        return self.vectors.subwords(word)

    # -- Facebook fastText files ----------------------------------------------------------

    def save_fasttext(self, path: str | os.PathLike) -> None:
        """Write a fastText ``.bin`` (version 12) that ``fasttext.load_model`` reads, atomically."""
        state = self._require_fitted("save_fasttext()")
        vocab, tables = state.vocab, state.tables
        args = FastTextArgs.of_model(
            self, ws=self.window, loss=2, model=_MODEL_CODES[self.architecture], t=self.sample
        )
        write_fasttext_bin(
            path,
            FastTextFile(
                args,
                vocab.keys,
                vocab.counts,
                tables["W_in"],
                tables["W_out"],
                ntokens=vocab.total_words,
            ),
        )

    @classmethod
    def load_fasttext(cls, path: str | os.PathLike) -> FastText:
        """A fitted FastText from a Facebook fastText ``.bin`` (skip-gram/CBOW, unquantised).

        The vocabulary, counts and both tables are the file's; ``train`` continues from them.
        """
        file = read_fasttext_bin(path)
        a = file.args
        if a.model not in _MODEL_CODES.values() or a.loss != 2:
            raise ValueError(
                f"{path}: a {'supervised' if a.model == 3 else 'non negative-sampling'} fastText "
                "model; FastText.load_fasttext reads skip-gram/CBOW with negative sampling "
                "(SubwordVectors.load_fasttext reads the vectors of any .bin)"
            )
        model = cls(
            architecture="cbow" if a.model == 1 else "skipgram",
            vector_size=a.dim,
            window=a.ws,
            min_count=a.minCount,
            minn=max(a.minn, 1),
            maxn=a.maxn,
            bucket=max(a.bucket, 1),
            negative=a.neg,
            sample=a.t,
            epochs=a.epoch,
        )
        vocab = CountedVocab(file.words, file.counts, file.ntokens, 0)
        n_rows = len(file.words) + model.n_buckets  # maxn=0: fastText keeps unused buckets
        tables = {
            "W_in": file.input[:n_rows],
            "W_out": file.output,
            "W_nodes": np.zeros((0, a.dim), dtype=np.float32),
        }
        return model._adopt(model._new_state(vocab, by="build_vocab", tables=tables))


def initial_input(seed: int, keys: tuple[str, ...], model: FastText) -> np.ndarray:
    """``W_in`` ``(nwords + bucket, d)``: the rows of ``initial_rows(seed, nwords + bucket, d)``
    (uniform(-1/d, 1/d), the first ``nwords`` exactly Word2Vec's) for the words and for the
    buckets some word's bag uses; the other buckets zero.

    No word of the vocabulary reads an unused bucket, so training never sees the
    difference; the zero rows are never written either, and so cost little memory
    (:func:`rowbook._memory.untouched_zeros`; on NewsArticles, 2M buckets x 100 dims: about
    350 MB of the 800 MB table are ever touched). fastText leaves them uninitialised (``DenseMatrix::uniform`` fills only ``thread / 10`` of the
    table); an unseen word's n-gram that hashes there adds a zero row to its mean.
    """
    V = len(keys)
    used = np.zeros(V + model.n_buckets, dtype=np.bool_)
    used[:V] = True
    if model.n_buckets:
        bag_ids = subword_table(keys, minn=model.minn, maxn=model.maxn, bucket=model.n_buckets)[1]
        used[bag_ids] = True
    return initial_rows_where(seed, used, model.vector_size)
