"""Counting on Dask: the passes over a corpus that only count, run per shard and summed.

Three counts feed the trainers, and each is a sum over the corpus, so each shard (a file,
or any corpus source) can be counted where it lives and the results added:

* word counts -> :meth:`rowbook.Vocab.fit_counts`, :meth:`rowbook.Word2Vec.build_vocab_from_freq`;
* pre-tokenized word counts -> :meth:`rowbook.ByteLevelBPE.fit_word_counts`, and the words
  of a WordPiece or Unigram tokenizer -> their ``fit(..., word_counts=counts)``;
* co-occurrence counts over a chosen vocabulary -> :meth:`rowbook.GloVe.fit_cooccurrence`.

The counts are exact integers (co-occurrences as whole numbers of ``1 / lcm(1..window)``,
see :mod:`rowbook.data.cooccurrence_runs`), and ``Counter`` sums keep first-sighting order
shard by shard, so the results equal single-machine counting exactly: the same vocabulary,
the same ties, the same matrix bit for bit. Sums are a binary tree of Dask tasks, so the
adding is spread over the workers too.

A worker that dies while it counts (killed, out of memory) does not shorten a count: Dask
runs its task again on another worker (``distributed.scheduler.allowed-failures`` times,
3 by default), and a task that keeps killing workers stops the whole count with
:class:`WorkerLost`, naming the shard. A count is returned whole or not at all.

``client`` is a ``dask.distributed.Client``, the address of a scheduler
(``"tcp://10.0.0.5:8786"``: the same code on a cluster; ``"local"`` starts a
``LocalCluster`` of worker processes on this machine, see :func:`connect`), or ``None`` for
Dask's configured local scheduler (threads by default; ``dask.config.set(scheduler="processes")``
for several cores, since counting in Python holds the GIL). File shards are opened by the
workers, so their paths must name the same files there (a shared file system). What stays on one machine, and why: the SGD training itself. Its updates
are many tiny reads and writes into one shared table (Hogwild threads on shared memory);
across machines every step would wait on the network, so the trainers run where the
tables are, on as many cores as that machine has. Needs ``pip install 'rowbook[dask]'``.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from rowbook.data.cooccurrence import count_cooccurrences
from rowbook.data.cooccurrence_runs import denominator
from rowbook.data.corpus import Corpus, encode_corpus, iter_sentences

__all__ = [
    "WorkerLost",
    "bpe_word_counts",
    "connect",
    "cooccurrence_counts",
    "subword_word_counts",
    "word_counts",
]

Shards = Sequence[Corpus]
Errors = Literal["strict", "replace"]


class WorkerLost(OSError):
    """A Dask task killed every worker that ran it (``KilledWorker``): the count stopped."""


def _dask() -> Any:
    try:
        import dask
    except ImportError:
        raise ImportError("counting on Dask needs dask: pip install 'rowbook[dask]'") from None
    return dask


def _tree_sum(parts: list[Any], add: Callable[[Any, Any], Any]) -> Any:
    """Delayed pairwise sums, left to right at every level (order-keeping for Counters)."""
    dask = _dask()
    while len(parts) > 1:
        pairs = [dask.delayed(add)(a, b) for a, b in zip(parts[0::2], parts[1::2], strict=False)]
        parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def connect(address: str, *, timeout: float | None = None) -> Any:
    """A ``dask.distributed.Client`` of the scheduler at ``address`` (``"tcp://host:8786"``),
    or, for ``"local"``, of a new ``LocalCluster`` of worker processes on this machine (one
    per core; the cluster closes with the client). Use it in a ``with`` block.

    ``timeout`` (seconds) bounds the wait for the scheduler (default: Dask's
    ``distributed.comm.timeouts.connect``); past it ``OSError``, as for a refused
    connection. A malformed address raises ``ValueError``.
    """
    _dask()
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(
            "counting on a Dask cluster needs dask.distributed: pip install 'rowbook[dask]'"
        ) from None
    wait = {} if timeout is None else {"timeout": timeout}
    if address == "local":
        return Client(processes=True, dashboard_address=None, **wait)
    return Client(address, **wait)


def _compute(task: Any, client: Any, shards: Sequence[Any] = ()) -> Any:
    """The value of ``task``; a shard's task that killed its workers is :class:`WorkerLost`."""
    dask = _dask()
    if client is None:
        return dask.compute(task)[0]
    try:
        if isinstance(client, str):
            with connect(client) as connected:
                return connected.compute(task, sync=True)
        return client.compute(task, sync=True)
    except Exception as err:
        if type(err).__name__ != "KilledWorker":
            raise
        raise WorkerLost(_lost(err, shards)) from None


def _lost(err: Exception, shards: Sequence[Any]) -> str:
    """What a ``KilledWorker`` says, with the shard its task counted (:func:`_per_shard`)."""
    key = str(getattr(err, "task", None) or (err.args[0] if err.args else ""))
    number = key.rsplit("-", 1)[-1]
    where = ""
    if key.startswith("rowbook-") and number.isdigit() and int(number) < len(shards):
        where = f" while counting shard {shards[int(number)]}"
    return (
        f"a Dask worker died{where} each time the task ran (KilledWorker: {key}); the count "
        "was stopped, not shortened. Check the workers' memory and logs, then run it again"
    )


def _per_shard(what: str, function: Callable[..., Any], shards: list[Any], *args: Any) -> list:
    """One delayed task per shard, named ``rowbook-<what>-<hash of its inputs>-<shard number>``
    (unique to its inputs, as Dask's own names are)."""
    dask = _dask()
    from dask.base import tokenize

    return [
        dask.delayed(function)(
            shard, *args, dask_key_name=f"rowbook-{what}-{tokenize(shard, *args)}-{i}"
        )
        for i, shard in enumerate(shards)
    ]


def _check_shards(shards: Any) -> list[Any]:
    if (
        isinstance(shards, str | bytes | os.PathLike)
        or not isinstance(shards, Sequence)
        or not shards
    ):
        raise ValueError(
            f"shards must be a non-empty list of corpus sources (paths, or lists of token lists), "
            f"got {type(shards).__name__}; pass [path] for a single file"
        )
    return list(shards)


def _count_words(shard: Corpus, tokenizer: Any, errors: Errors) -> Counter[str]:
    counts: Counter[str] = Counter()
    for sentence in iter_sentences(shard, tokenizer, errors=errors):
        counts.update(sentence)
    return counts


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, Counter):
        a.update(b)  # keeps a's order, then b's new keys: first-sighting order overall
        return a
    return a + b


def word_counts(
    shards: Shards, *, tokenizer: Any = None, errors: Errors = "strict", client: Any = None
) -> Counter[str]:
    """Token counts of every shard, summed, in first-sighting order across the shards in order.

    ``tokenizer`` splits the lines of file shards, as in :func:`rowbook.data.read_corpus`;
    ``errors`` is how they are decoded (:func:`rowbook.data.iter_sentences`).

    Examples
    --------
    >>> import dask
    >>> with dask.config.set(scheduler="synchronous"):
    ...     word_counts([[["a", "b"]], [["b", "c"]]])
    Counter({'b': 2, 'a': 1, 'c': 1})
    """
    shards = _check_shards(shards)
    parts = _per_shard("words", _count_words, shards, tokenizer, errors)
    return _compute(_tree_sum(parts, _add), client, shards)


def _count_bpe_words(
    shard: Any,
    pattern: str,
    special_tokens: tuple[str, ...],
    normalizer: Callable[[str], str] | None,
    errors: Errors,
) -> Counter[str]:
    from rowbook.corpus_files import iter_lines
    from rowbook.text.bpe import ByteLevelBPE

    texts = iter_lines(shard, errors=errors) if isinstance(shard, str | os.PathLike) else shard
    texts = map(normalizer, texts) if normalizer is not None else texts
    return ByteLevelBPE(pattern=pattern).count_words(texts, special_tokens=special_tokens)


def bpe_word_counts(
    shards: Sequence[Any],
    *,
    pattern: str | None = None,
    special_tokens: Sequence[str] = (),
    normalizer: Callable[[str], str] | None = None,
    errors: Errors = "strict",
    client: Any = None,
) -> Counter[str]:
    """The pre-tokenized words :meth:`ByteLevelBPE.fit` counts, per shard (text files or lists
    of strings), summed: feed them to :meth:`ByteLevelBPE.fit_word_counts`.

    ``normalizer`` (a :class:`rowbook.text.Normalizer`, say) maps every line or string first;
    ``errors`` is how file lines are decoded (:func:`rowbook.corpus_files.iter_lines`).
    """
    from rowbook.text.bpe import GPT2_PATTERN

    pattern, specials, shards = (
        pattern or GPT2_PATTERN,
        tuple(special_tokens),
        _check_shards(shards),
    )
    parts = _per_shard("bpe-words", _count_bpe_words, shards, pattern, specials, normalizer, errors)
    return _compute(_tree_sum(parts, _add), client, shards)


def _count_subword_words(shard: Any, tokenizer: Any, errors: Errors) -> Counter[str]:
    from rowbook.corpus_files import iter_lines
    from rowbook.text.word_counts import count_words

    texts = iter_lines(shard, errors=errors) if isinstance(shard, str | os.PathLike) else shard
    return count_words(texts, tokenizer._training_words)


def subword_word_counts(
    shards: Sequence[Any], *, tokenizer: Any, errors: Errors = "strict", client: Any = None
) -> Counter[str]:
    """The words a :class:`~rowbook.text.WordPiece` or :class:`~rowbook.text.Unigram` ``fit``
    counts (normalized and pre-tokenized by ``tokenizer``, unfitted is fine), per shard,
    summed in first-sighting order: pass them as ``fit((), vocab_size, word_counts=counts)``.
    """
    shards = _check_shards(shards)
    parts = _per_shard("subword-words", _count_subword_words, shards, tokenizer, errors)
    return _compute(_tree_sum(parts, _add), client, shards)


def _count_pairs(
    shard: Corpus,
    keys: tuple[str, ...],
    window: int,
    symmetric: bool,
    weighted: bool,
    tokenizer: Any,
    errors: Errors,
) -> tuple[sp.csr_matrix, int]:
    encoded = encode_corpus(iter_sentences(shard, tokenizer, errors=errors), keys)
    V = len(keys)
    total = sp.csr_matrix((V, V), dtype=np.int64)
    bands = count_cooccurrences(
        encoded, V, window, symmetric=symmetric, weighted=weighted, numerators=True
    )
    for band in bands:
        total = total + band  # one band unless a memory budget was set
    return total, int(encoded.starts[-1])


def _add_pairs(
    a: tuple[sp.csr_matrix, int], b: tuple[sp.csr_matrix, int]
) -> tuple[sp.csr_matrix, int]:
    return a[0] + b[0], a[1] + b[1]


def cooccurrence_counts(
    shards: Shards,
    keys: Sequence[str],
    window: int,
    *,
    symmetric: bool = True,
    weighted: bool = True,
    tokenizer: Any = None,
    errors: Errors = "strict",
    client: Any = None,
) -> sp.csr_matrix:
    """The ``(V, V)`` co-occurrence matrix of the shards over the vocabulary ``keys``, summed
    exactly (in units of ``1 / L``) and divided once: :meth:`GloVe.fit_cooccurrence` input.
    ``tokenizer`` and ``errors`` read file shards as in :func:`word_counts`.

    Windows do not cross lines, so shards split at line boundaries give the counts of the
    whole corpus.
    """
    keys, shards = tuple(keys), _check_shards(shards)
    parts = _per_shard(
        "pairs", _count_pairs, shards, keys, window, symmetric, weighted, tokenizer, errors
    )
    numerators, tokens = _compute(_tree_sum(parts, _add_pairs), client, shards)
    L = denominator(window, weighted, max_count=2 * tokens + 1)  # the sum may not overflow either
    return sp.csr_matrix(
        (numerators.data / L, numerators.indices, numerators.indptr), shape=numerators.shape
    )
