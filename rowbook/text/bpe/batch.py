"""Encoding many texts at once, in one process and on every core.

:meth:`ByteLevelBPE.encode_batch <rowbook.text.bpe.model.ByteLevelBPE.encode_batch>` pre-splits
every text, looks each distinct word up once in the word cache, encodes the words it has
not seen in one call of the numba kernel (:func:`~rowbook.text.bpe.encode.encode_words`)
and joins the cached ids of each text's words. The pre-split, the tables and the cache are
the model's :class:`~rowbook.text.bpe.encoder.Encoder`, which every function here takes.
An :class:`~rowbook.text.bpe.encoding.Encoding` holds the ids; its tokens and offsets are
computed when first read. The cyclic garbage collector is paused meanwhile: the lists made
hold no cycles, and the collections their number sets off walked every live object, as
long again as the encoding itself.

With ``workers > 1`` and more than :data:`POOL_CHARS` characters, the texts are cut into
batches (about eight per worker, at least :data:`BATCH_CHARS` characters each) that this
process and ``workers - 1`` forked ones share as each becomes free
(:func:`~rowbook.text.bpe.count.map_in_order`, the pool that counts words for training).
Results are joined in batch order, so they do not depend on ``workers``. A forked worker
inherits the model and the word cache as they are at the fork and keeps the words it
encodes for its next batches, but not beyond the call: this process's cache learns only
the words of the batches it encoded itself. A worker sends back the ids of a batch as one
``int32`` array.

Why processes and not threads: in one process on 20,000 lines of news text, the numba
kernel is under a tenth of the time, while the regex pre-split (about half), the dictionary
lookups and the lists of ids are Python that holds the GIL. Threads running the kernel
without the GIL (``nogil``) would leave nine tenths on one core; the ``regex`` package can
release the GIL during a match (``concurrent=True``), but the lookups that follow cannot.
Processes run all of it in parallel. The price, measured on those lines on 2 cores: forking,
the pipes, the joining and the copy-on-write faults after the fork cost about a sixth more
CPU time than one process, and two busy processes each run 15-25% slower than one alone
(shared caches). On 20,000 lines (0.25 s of work) that leaves 1.1-1.2x on an idle 2-core
machine (BPE training's word counting, with batches of 2M characters, gains 1.4x), and on a
machine busy with other work ``workers=1`` is the better choice.

BPE-dropout draws random numbers word by word, so with ``dropout`` set every batch is
encoded in the calling process, in order, and the draws are those of a serial run.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from rowbook.text.bpe.count import map_in_order, text_batches
from rowbook.text.bpe.encode import encode_words
from rowbook.text.bpe.encoder import Encoder, Segments
from rowbook.text.bpe.encoding import Encoding, build_encodings

__all__ = [
    "BATCHES_PER_WORKER",
    "BATCH_CHARS",
    "POOL_CHARS",
    "BatchIds",
    "encode_batch",
    "encode_texts",
    "gc_paused",
    "join_segments",
]

POOL_CHARS = 1 << 20  # texts of fewer characters are encoded in this process: forking costs more
BATCH_CHARS = 1 << 17  # the smallest batch sent to a worker
BATCHES_PER_WORKER = 8  # fewer leave a process idle at the end; 16 or 32 measured no better


def join_segments(
    segments: Segments, encode: Callable[[list[str]], Iterable[int]]
) -> tuple[list[int], list[int]]:
    """Ids of a text's segments, and the positions of tokens that start with an inserted space.

    Examples
    --------
    >>> table = {"a": (7,), " b": (8, 9)}
    >>> encode = lambda words: itertools.chain.from_iterable(map(table.__getitem__, words))
    >>> join_segments([(None, False, ["a"]), (0, False, []), (None, True, [" b"])], encode)
    ([7, 0, 8, 9], [2])
    """
    ids: list[int] = []
    prefixed_at: list[int] = []
    for token_id, prefixed, words in segments:
        if token_id is not None:
            ids.append(token_id)
            continue
        if prefixed:
            prefixed_at.append(len(ids))
        ids += encode(words)
    return ids, prefixed_at


BatchIds = tuple[list[list[int]], dict[int, list[int]]]
"""Ids of each text, and the positions of tokens with an inserted prefix space, by text index
(only texts that have some)."""


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (the lists and tuples made here hold no cycles).

    Building an encoding's lists trips collections that walk every live object: on 20,000
    lines of news text they took as long as the encoding itself.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def encode_texts(encoder: Encoder, texts: Sequence[str]) -> BatchIds:
    """Ids of each text, in this process: each distinct word looked up or encoded once."""
    chain = itertools.chain.from_iterable
    if encoder.plain:  # no unsplit tokens, no prefix space, no dropout
        words_of = encoder.pretokenizer.words_of(texts)
        try:  # the common case once the cache is warm: every word is known
            get = encoder.cache.__getitem__
            return [list(chain(map(get, words))) for words in words_of], {}
        except KeyError:
            get = encoder.word_table(list(chain(words_of))).__getitem__
            return [list(chain(map(get, words))) for words in words_of], {}
    segments = [encoder.segments(text) for text in texts]
    if encoder.dropout:
        encode = encoder.encode_dropout
    else:
        get = encoder.word_table(
            [w for text in segments for _, _, words in text for w in words]
        ).__getitem__

        def encode(words: list[str]) -> Iterable[int]:
            return chain(map(get, words))

    ids_of, prefixed = [], {}
    for i, text in enumerate(segments):
        ids, prefixed_at = join_segments(text, encode)
        ids_of.append(ids)
        if prefixed_at:
            prefixed[i] = prefixed_at
    return ids_of, prefixed


def _encode_job(
    encoder: Encoder, texts: list[str]
) -> tuple[np.ndarray, np.ndarray, dict[int, list[int]]]:
    """A worker's batch: all ids ``(N,)`` as ``int32``, ids per text ``(B,)``, prefixed positions."""
    with gc_paused():
        ids_of, prefixed = encode_texts(encoder, texts)
        lengths = np.fromiter(map(len, ids_of), dtype=np.int64, count=len(ids_of))  # (B,)
        flat = np.fromiter(
            itertools.chain.from_iterable(ids_of), dtype=np.int32, count=int(lengths.sum())
        )  # (N,)
    return flat, lengths, prefixed


def _unpack(result: tuple[np.ndarray, np.ndarray, dict[int, list[int]]] | BatchIds) -> BatchIds:
    """The :data:`BatchIds` of a worker's packed result (a batch encoded here is left as is)."""
    if len(result) == 2:
        return result
    flat, lengths, prefixed = result
    ids, ends = flat.tolist(), np.cumsum(lengths).tolist()
    return [ids[end - n : end] for end, n in zip(ends, lengths.tolist(), strict=True)], prefixed


def encode_batch(encoder: Encoder, texts: list[str], workers: int) -> list[Encoding]:
    """The :class:`Encoding` of each text, on up to ``workers`` processes (same result)."""
    chars = sum(map(len, texts))
    with gc_paused():
        if workers == 1 or encoder.dropout or chars < POOL_CHARS:
            parts = [(texts, encode_texts(encoder, texts))]
        else:
            encode_words([], encoder.byte_ids, encoder.merge_table)  # compiled before the fork
            batches = list(
                text_batches(texts, max(BATCH_CHARS, chars // (BATCHES_PER_WORKER * workers)))
            )
            job = functools.partial(_encode_job, encoder)
            here = functools.partial(encode_texts, encoder)
            results = map_in_order(job, batches, workers, here=here)
            parts = zip(batches, map(_unpack, results), strict=True)  # built as they arrive
        encodings = []
        for batch, (ids_of, prefixed) in parts:
            encodings += build_encodings(
                batch, ids_of, prefixed, encoder.id_to_token, encoder.id_len
            )
        return encodings
