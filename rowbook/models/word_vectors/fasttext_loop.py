"""fastText's own training loop, step for step, on one thread: the oracle of :class:`FastText`.

:func:`train_like_fasttext` trains a :class:`~rowbook.models.word_vectors.fasttext.FastText`'s
tables the way ``fasttext.train_unsupervised(..., thread=1)`` does, operation by operation
in float32, so that both give the same tables to float tolerance (the tests compare them).
What it follows, read from fastText's ``src/`` (``fasttext.cc``, ``model.cc``, ``loss.cc``,
``dictionary.cc``, ``densematrix.cc``):

* the corpus is read as fastText reads it: tokens split on its seven separators and ``</s>``
  at the end of every line, a word of the vocabulary like any other (counted by
  :func:`rowbook.data.labelled.choose_labelled_vocab`, the same reading);
  a line ends at ``</s>`` or after 1,025 tokens (``MAX_LINE_SIZE``), and reading wraps
  round to the start of the file until ``epoch * ntokens`` tokens are trained, ``ntokens``
  counting every token of the file (cut words too);
* one ``std::minstd_rand`` seeded ``seed`` (:mod:`rowbook.data.minstd`) draws, in order:
  per token of a line, a uniform float64 in ``[0, 1)`` (the word is discarded when its
  float32 exceeds ``sqrt(t / f) + t / f``, ``f = count / ntokens``); per word of the line,
  its window ``uniform(1, ws)``; per example, ``neg`` negatives from fastText's table of
  10M entries over ``count ** 0.5``, a negative equal to the target drawn again;
* the learning rate ``lr * (1 - progress)`` is computed before each line; ``progress`` counts
  tokens in steps of more than ``lrUpdateRate`` (100): the tokens of the lines read since
  the last step, added once they pass it;
* an example is ``Model::update``: ``h`` the mean of the input rows (the centre word's bag
  in skip-gram, every context word's bag in CBOW), the scores through the 512-entry sigmoid
  table clipped at +-8 (:data:`~rowbook.models.fasttext_classifier.kernels.SIGMOID_TABLE`),
  each output row stepped after its contribution to h's step is taken, and h's step added
  whole to every input row (no ``1/n``: unsupervised models do not normalise it);
* the input table starts as ``DenseMatrix::uniform(1 / dim, thread, seed)`` leaves it
  (:func:`fasttext_initial_input`): with ``thread`` threads only the first ``thread / 10``
  of it is drawn, uniform(-1/dim, 1/dim) from ``minstd_rand(block + seed)`` per tenth;
  the rest is memory fastText never writes, which a table this size gets from the kernel
  as fresh zero pages, and is zero here.

The corpus's own reading differs in one corner: a file whose last line has no line break
gets no ``</s>`` after it in fastText and does here. The loss fastText reports (through its
log table) is not computed: it changes no table.
"""

from __future__ import annotations

import os
from typing import Any

import numba
import numpy as np

from rowbook.checks import ParameterError
from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.labelled import EOS, choose_labelled_vocab, read_labelled
from rowbook.data.minstd import minstd_seed, uniform_canonical, uniform_int, uniform_real
from rowbook.models.fasttext_classifier.kernels import SIGMOID_TABLE, table_sigmoid
from rowbook.text.char_ngrams import subword_table

__all__ = [
    "MAX_LINE_SIZE",
    "NEGATIVE_TABLE_SIZE",
    "discard_probabilities",
    "fasttext_initial_input",
    "fasttext_negatives",
    "train_like_fasttext",
]

#: fastText's ``Dictionary::MAX_LINE_SIZE``: a line is cut after this many tokens (plus one).
MAX_LINE_SIZE = 1024
#: fastText's ``NegativeSamplingLoss::NEGATIVE_TABLE_SIZE``.
NEGATIVE_TABLE_SIZE = 10_000_000


# -- what training starts from: the input table, the negatives, the discard table ------------


@numba.njit(nogil=True, cache=True)
def _uniform_blocks(flat, a, seed, threads):  # pragma: no cover - compiled
    """``DenseMatrix::uniform``: tenth ``block`` of ``flat`` from ``minstd_rand(block + seed)``."""
    size = flat.shape[0]
    block_size = size // 10
    for block in range(max(threads, 1)):
        state = minstd_seed(block + seed)
        for i in range(block_size * block, min(size, block_size * (block + 1))):
            value, state = uniform_real(state, -a, a)
            flat[i] = np.float32(value)


def fasttext_initial_input(n_rows: int, dim: int, seed: int, threads: int = 1) -> np.ndarray:
    """``(n_rows, dim)`` float32: the input table as fastText's ``DenseMatrix::uniform``
    leaves it when training on ``threads`` threads (``seed``: fastText's ``-seed``).

    Tenth ``b`` of the flat table (``b < threads``) is drawn uniform(-1/dim, 1/dim) from
    ``minstd_rand(b + seed)``; the rest stays zero (fastText never writes it: on one thread
    nine tenths of the table, word rows included once the vocabulary is a tenth of the
    rows, start wherever its allocator left them; a fresh table this size is zero pages).

    Examples
    --------
    >>> W = fasttext_initial_input(20, 4, seed=0)
    >>> bool(W[:2].all()), bool(W[2:].any()), bool((abs(W) <= 0.25).all())
    (True, False, True)
    """
    W = np.zeros((n_rows, dim), dtype=np.float32)  # (n_rows, dim)
    a = float(np.float32(1.0 / dim))
    _uniform_blocks(W.reshape(-1), a, seed, threads)
    return W


def fasttext_negatives(counts: np.ndarray, exponent: float = 0.5) -> np.ndarray:
    """fastText's negatives table: word ``i`` repeated ``ceil(c_i * 1e7 / z)`` times in float32,
    ``c_i = count_i ** exponent`` (fastText: 0.5), ``z`` their float32 sum.

    Examples
    --------
    >>> table = fasttext_negatives(np.array([9, 1]))
    >>> len(table), int((table == 0).sum())
    (10000000, 7500000)
    """
    c = np.power(np.asarray(counts, dtype=np.float64), exponent).astype(np.float32)  # (V,)
    z = np.float32(0.0)
    for value in c:  # float32 sum of float64 terms, in order, as fastText's loop adds them
        z = np.float32(np.float64(z) + np.float64(value))
    share = c * np.float32(NEGATIVE_TABLE_SIZE) / z  # (V,) float32, j < share for j = 0, 1, ...
    repeats = np.ceil(share.astype(np.float64)).astype(np.int64)
    return np.repeat(np.arange(len(c), dtype=np.int32), repeats)


def discard_probabilities(counts: np.ndarray, ntokens: int, t: float) -> np.ndarray:
    """``(V,)`` float32 ``sqrt(t / f) + t / f`` with ``f = count / ntokens`` in float32: a word
    whose uniform draw (as float32) exceeds it is discarded (``Dictionary::initTableDiscard``).

    Examples
    --------
    >>> discard_probabilities(np.array([1000, 1]), 10_000, 1e-3).astype(float).round(4).tolist()
    [0.11, 13.1623]
    """
    f = np.asarray(counts, dtype=np.float32) / np.float32(ntokens)  # (V,)
    ratio = t / f.astype(np.float64)
    return (np.sqrt(ratio) + ratio).astype(np.float32)


# -- the loop ------------------------------------------------------------------------------------


@numba.njit(nogil=True, cache=True, inline="always")
def _binary_logistic(W_out, target, label, hidden, grad, lr, sigmoid, exact):  # pragma: no cover
    """``BinaryLogisticLoss::binaryLogistic``: score ``W_out[target] . h`` through the table,
    ``grad += alpha W_out[target]``, then ``W_out[target] += alpha h``."""
    row = W_out[target]
    f = np.float32(0.0)
    for j in range(hidden.shape[0]):
        f += row[j] * hidden[j]
    if exact:
        score = np.float32(1.0 / (1.0 + np.exp(-np.float64(f))))
    else:
        score = table_sigmoid(f, sigmoid)
    alpha = lr * (label - score)
    for j in range(hidden.shape[0]):
        grad[j] += alpha * row[j]
    for j in range(hidden.shape[0]):
        row[j] += alpha * hidden[j]


@numba.njit(nogil=True, cache=True, inline="always")
def _update(
    W_in, W_out, rows, n_rows, target, negatives, neg, lr, state, work, flags
):  # pragma: no cover
    """``Model::update``: the mean of ``W_in[rows[:n_rows]]`` predicts ``target`` against
    ``neg`` negatives; h's whole step goes to every row. Returns the generator state."""
    if n_rows == 0:
        return state
    hidden, grad, sigmoid, tally = work
    exact, resample, use_redrawn = flags
    tally[target, 0] += 1
    hidden[:] = 0.0
    for k in range(n_rows):
        row = W_in[rows[k]]
        for j in range(hidden.shape[0]):
            hidden[j] += row[j]
    scale = np.float32(1.0 / n_rows)
    for j in range(hidden.shape[0]):
        hidden[j] *= scale
    grad[:] = 0.0
    _binary_logistic(W_out, target, np.float32(1.0), hidden, grad, lr, sigmoid, exact)
    last = negatives.shape[0] - 1
    for _ in range(neg):
        redrawn = False
        while True:
            i, state = uniform_int(state, 0, last)
            negative = negatives[i]
            if negative != target or not resample:
                break
            tally[target, 1] += 1
            redrawn = True
        if negative == target and not resample:
            tally[target, 1] += 1
        if negative != target and (use_redrawn or not redrawn):
            _binary_logistic(W_out, negative, np.float32(0.0), hidden, grad, lr, sigmoid, exact)
    for k in range(n_rows):
        row = W_in[rows[k]]
        for j in range(hidden.shape[0]):
            row[j] += grad[j]
    return state


@numba.njit(nogil=True, cache=True)
def _train(
    W_in,
    W_out,
    bag_starts,
    bag_ids,
    stream,
    eos,
    pdiscard,
    negatives,
    settings,
    state,
    flags,
    tally,
):  # pragma: no cover - compiled
    """``FastText::trainThread`` on one thread over the token ``stream`` (vocabulary ids in
    file order, -1 for a label token: counted, never trained). Returns the tokens trained;
    ``tally[w]`` counts the examples of target ``w`` and its draws that were ``w``."""
    lr0, budget, ws, neg, skipgram, lr_update_rate = settings
    d = W_in.shape[1]
    work = (np.empty(d, np.float32), np.empty(d, np.float32), SIGMOID_TABLE, tally)  # h, its step
    line = np.empty(MAX_LINE_SIZE + 1, np.int32)
    widest = np.max(np.diff(bag_starts))
    bow = np.empty(2 * ws * widest, np.int32)  # CBOW: the rows of every context bag
    n, p, token_count, local = stream.shape[0], 0, np.int64(0), np.int64(0)
    while token_count < budget:
        progress = np.float32(token_count) / np.float32(budget)
        lr = np.float32(lr0 * (1.0 - np.float64(progress)))
        if p == n:
            p = 0
        size, read = 0, 0
        while p < n:  # Dictionary::getLine
            w = stream[p]
            p += 1
            read += 1
            if w >= 0:
                u, state = uniform_canonical(state)
                if not np.float32(u) > pdiscard[w]:
                    line[size] = w
                    size += 1
            if read > MAX_LINE_SIZE or w == eos:
                break
        local += read
        for w in range(size):
            boundary, state = uniform_int(state, 1, ws)
            if skipgram:  # the centre's bag predicts each word of its window
                start, end = bag_starts[line[w]], bag_starts[line[w] + 1]
                for c in range(-boundary, boundary + 1):
                    if c != 0 and 0 <= w + c < size:
                        rows = bag_ids[start:end]
                        state = _update(
                            W_in,
                            W_out,
                            rows,
                            end - start,
                            line[w + c],
                            negatives,
                            neg,
                            lr,
                            state,
                            work,
                            flags,
                        )
            else:  # the rows of every context word's bag together predict the centre
                n_bow = 0
                for c in range(-boundary, boundary + 1):
                    if c != 0 and 0 <= w + c < size:
                        for k in range(bag_starts[line[w + c]], bag_starts[line[w + c] + 1]):
                            bow[n_bow] = bag_ids[k]
                            n_bow += 1
                state = _update(
                    W_in, W_out, bow, n_bow, line[w], negatives, neg, lr, state, work, flags
                )
        if local > lr_update_rate:
            token_count += local
            local = 0
    return token_count


def _stream(
    source: Any, vocab: CountedVocab | None, min_count: int
) -> tuple[np.ndarray, CountedVocab]:
    """The corpus as vocabulary ids in file order (labels -1, cut words left out), and the
    vocabulary (``vocab``, or fastText's choice: count >= ``min_count``, by descending count)."""
    lines = read_labelled(source)
    if vocab is None:
        vocab = choose_labelled_vocab(lines, "__label__", min_count=min_count, min_count_label=0)[0]
    index = {key: i for i, key in enumerate(vocab.keys)}
    labels = np.fromiter((k.startswith("__label__") for k in lines.keys), bool, len(lines.keys))
    to_vocab = np.array([index.get(k, -2) for k in lines.keys], dtype=np.int32)  # (K,)
    to_vocab[labels] = -1
    ids = to_vocab[lines.ids]  # (N,)
    return ids[ids != -2], vocab


def train_like_fasttext(
    model: Any,
    source: str | os.PathLike,
    *,
    vocab: CountedVocab | None = None,
    init_threads: int = 1,
    lr_update_rate: int = 100,
    exact_sigmoid: bool = False,
    resample: bool = True,
    use_redrawn: bool = True,
    tally: np.ndarray | None = None,
) -> Any:
    """Fit ``model`` (a :class:`FastText`) with fastText's loop on one thread; returns it.

    ``model``'s parameters are fastText's: ``architecture``, ``vector_size`` (``dim``),
    ``window`` (``ws``), ``min_count``, ``minn``, ``maxn``, ``bucket``, ``negative``
    (``neg``), ``sample`` (``t``), ``lr``, ``epochs`` and ``seed``; ``ns_exponent`` stays
    fastText's 0.5 for its results; ``min_lr`` must be 0 (fastText decays to 0). The
    vocabulary is fastText's (``</s>`` among the words) unless ``vocab`` gives one (the
    words of a fastText ``.bin``, whose order of equal counts ``std::sort`` decides).
    ``init_threads`` is the ``thread`` whose initial table to start from
    (:func:`fasttext_initial_input`), ``lr_update_rate`` fastText's ``-lrUpdateRate``.
    ``exact_sigmoid`` and ``resample=False`` replace
    fastText's table and its drawing again of a negative equal to the target with
    :class:`FastText`'s exact sigmoid and skip: they exist to measure those choices;
    ``use_redrawn=False`` draws again as fastText does but leaves the new negative out of
    its step, as skipping does: the draws of ``resample``, the steps of a skip (so the two
    compare seed by seed, the generator in step).
    ``tally``, a zero ``(V, 2)`` int64 array for the vocabulary's ``V`` words, if given,
    receives per target word its examples (column 0) and its negative draws equal to it
    (column 1: each drawn again, or skipped with ``resample=False``).
    """
    if model.min_lr != 0:
        raise ParameterError(
            "min_lr", model.min_lr, "0", fix="fastText decays the learning rate to 0: min_lr=0"
        )
    ids, vocab = _stream(source, vocab, model.min_count)
    if not len(vocab):
        raise ValueError(f"{source}: no word is seen min_count={model.min_count} times")
    bag_starts, bag_ids = subword_table(
        vocab.keys, minn=model.minn, maxn=model.maxn, bucket=model.n_buckets
    )
    V, d = len(vocab), model.vector_size
    if tally is None:
        tally = np.zeros((V, 2), dtype=np.int64)
    elif tally.shape != (V, 2) or tally.dtype != np.int64:
        raise ParameterError("tally", tally.shape, f"a ({V}, 2) int64 array")
    W_in = fasttext_initial_input(V + model.n_buckets, d, model.seed, init_threads)
    W_out = np.zeros((V, d), dtype=np.float32)  # (V, d)
    settings = (
        float(model.lr),
        np.int64(model.epochs * vocab.total_words),
        model.window,
        model.negative,
        model.architecture == "skipgram",
        lr_update_rate,
    )
    _train(
        W_in,
        W_out,
        bag_starts,
        bag_ids,
        ids,
        vocab.keys.index(EOS) if EOS in vocab.keys else -3,
        discard_probabilities(vocab.counts, vocab.total_words, model.sample),
        fasttext_negatives(vocab.counts, model.ns_exponent),
        settings,
        minstd_seed(model.seed),
        (exact_sigmoid, resample, use_redrawn),
        tally,
    )
    tables = {"W_in": W_in, "W_out": W_out, "W_nodes": np.zeros((0, d), dtype=np.float32)}
    return model._adopt(model._new_state(vocab, by="build_vocab", tables=tables))
