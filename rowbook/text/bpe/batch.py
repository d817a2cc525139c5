"""Encoding many texts at once, in one process and on every core.

(Over 400 lines: one thread, threads and processes share the batching and the joining of a
long text's pieces, which belong together; the probe that chooses between them is
:mod:`rowbook.text.bpe.cutoff`.)

:meth:`ByteLevelBPE.encode_batch <rowbook.text.bpe.model.ByteLevelBPE.encode_batch>` hands the
texts to the model's :class:`~rowbook.text.bpe.encoder.Encoder`, which every function here
takes. With GPT-2's settings (its pattern, no unsplit tokens, no prefix space, no dropout:
:attr:`Encoder.plain <rowbook.text.bpe.encoder.Encoder.plain>`) one compiled pass over the
UTF-8 bytes of a batch of texts cuts them into words and looks each word up in the word
cache (:mod:`rowbook.text.bpe.presplit`, :mod:`rowbook.text.bpe.word_cache`), the words the
cache lacks are encoded in one call of the merge kernel, and the ids of all the texts are
gathered into one ``int32`` array: no Python object per word. Each text's list of ids is
made from its part of that array (:data:`TEXT_LIST_IDS`). Other settings cut the words in
Python and look them up in the same cache
(:meth:`Encoder.word_ids <rowbook.text.bpe.encoder.Encoder.word_ids>`). An
:class:`~rowbook.text.bpe.result.Encoding` holds the ids; its tokens and offsets are
computed when first read. The cyclic garbage collector is paused meanwhile: the lists made
hold no cycles, and the collections their number sets off walked every live object; they
then go straight to the oldest generation (:func:`gc_paused`).

With ``workers > 1`` the texts are cut into batches (about eight per process, four per
thread), and a probe of their first characters, encoded here, counts their work and says
whether the rest pays on other workers (:mod:`rowbook.text.bpe.cutoff`; for threads its
words are first looked up in the cache, and a warm cache, whose words leave the work below
the cut-off, has every text encoded in one call, no probe apart): from
:data:`~rowbook.text.bpe.cutoff.THREAD_WORK` the rest is shared by this thread and
``workers - 1`` others (GPT-2's compiled pre-split, :func:`rowbook.fork_pool.map_in_threads`;
batches of at least :data:`THREAD_BATCH_CHARS`), from
:data:`~rowbook.text.bpe.cutoff.POOL_WORK` by this process and ``workers - 1`` forked ones
(the other settings; batches of at least :data:`BATCH_CHARS`;
:func:`rowbook.fork_pool.map_in_order`, the pool that counts words for training). On threads
a text longer than two batches is cut into pieces of about a batch
(:func:`rowbook.text.bpe.presplit.cut_text`: only where GPT-2's pattern ends a word whatever
follows, so the pieces' words are the text's) and the ids of its pieces are joined again:
one document of tens of kilobytes, or a few, are shared by the threads as many lines are.
Results are joined in batch order, so they do not depend on ``workers``. The calling thread
turns each batch's ids into lists and :class:`Encoding` objects as soon as the batch is
ready (Python, holding the GIL, while the other threads run compiled code), and encodes a
batch itself, with the model's own cache, only when the next is not ready. Another thread
or process starts from the word cache as it is when it starts (a thread copies it, a
process inherits it) and keeps the words it encodes for its next batches. A process hands
back with each batch's ids the words it encoded for it, as four arrays (their bytes, their
ids, and where each ends), which this process adds to its cache as the batches arrive
(:meth:`Encoder.learn <rowbook.text.bpe.encoder.Encoder.learn>`); a thread adds them to the
model's cache itself after each batch when that cache is not busy, else after a later
one, and the calling thread adds those still left at the end (its time is the scarce
one: the lists and Encodings are all its own). So the next call finds every word of this
one, whoever encoded it. A thread's copy takes the ids of the words
new to it from the model's cache when that cache is not busy (words the caller or another
thread encoded since the copy was made), and merges only the others
(:meth:`Encoder.copy <rowbook.text.bpe.encoder.Encoder.copy>`).

Why threads for the compiled pass, and processes for the rest: the compiled pass, about
three quarters of the time, releases the GIL, so threads run it side by side with no fork,
no pipe and no copy of the texts; what holds the GIL is this thread's share, the list of ids
and the :class:`Encoding` of each text. Each other thread has a cache of its own, since the
one cache changes with every new word (under a lock). The caller builds the lists first and
encodes a batch itself only when none is ready, and hands the GIL over within 0.1 ms
(:func:`rowbook.fork_pool.quick_handoff`): on many short lines the GIL's share is about half
one thread's time, and a thread back from its kernel would otherwise wait for it. Where the
words are cut by a regex in Python, which holds the GIL, processes are what runs that in
parallel. The measurements behind each choice (CPU time per thread, one thread against two,
threads against processes) are in the manual's benchmarks page, "BPE encoding, compiled"
and "Beside tiktoken"; on a machine busy with other work ``workers=1`` is the better choice
for the processes.

BPE-dropout draws random numbers word by word, so with ``dropout`` set every batch is
encoded in the calling process, in order, and the draws are those of a serial run.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from rowbook.fork_pool import map_in_order, map_in_threads
from rowbook.text.batches import batch_bounds, length_ends
from rowbook.text.bpe import cutoff
from rowbook.text.bpe.encoder import Encoder, Segments
from rowbook.text.bpe.presplit import BATCH_CHARS as SCAN_CHARS
from rowbook.text.bpe.presplit import cut_text
from rowbook.text.bpe.result import Encoding, build_encodings
from rowbook.text.bpe.word_cache import Learned
from rowbook.text.utf8 import check_utf8

__all__ = [
    "BATCHES_PER_PROCESS",
    "BATCHES_PER_THREAD",
    "BATCH_CHARS",
    "REGEX_BATCH_CHARS",
    "TEXT_LIST_IDS",
    "THREAD_BATCH_CHARS",
    "BatchIds",
    "encode_batch",
    "encode_texts",
    "gc_paused",
    "join_segments",
]

BATCH_CHARS = 1 << 17  # the smallest batch sent to a worker process
#: Characters cut into words by the regex and encoded at a time in one process (settings
#: other than GPT-2's): the words' lists stay in the CPU's caches. ``encode_batch`` of 1M
#: characters of NewsArticles on one worker, a prefix space: 91.7 ms of CPU cold, 83.5 warm
#: in one call; 74.8 / 65.7 in batches of 32K (16K the same, 128K 79.0 / 71.1). On the
#: tweets, Han text and long agglutinative-like words 6-18% less the same way, 16K-64K alike.
REGEX_BATCH_CHARS = 1 << 15
BATCHES_PER_PROCESS = 8  # fewer leave a process idle at the end; 16 or 32 measured no better
#: Batches a thread, fewer than a process's: each batch costs the calling thread a hand-off
#: and the other thread its Python between kernels, and more at once merge more words twice
#: when cold. Two threads forced, medians of 15 in turn (2026-11-29): NewsArticles lines at
#: 262K characters cold 10.9 -> 9.2 ms (one thread 8.5), 1M cold 26.0 -> 23.9, 1M warm 16.3 ->
#: 15.1; the tweets at 262K cold 12.7 -> 11.2; at 4M characters and on 8 MB of 64K documents
#: the same within 2% (2 a thread: 4M warm 7% slower). Up to 128K characters the batches are
#: THREAD_BATCH_CHARS either way.
BATCHES_PER_THREAD = 4
THREAD_BATCH_CHARS = 1 << 14  # the smallest piece a thread encodes: longer texts are cut
TEXT_LIST_IDS = 256  # ids a text on average from which each text's list is made alone


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


_paused_lock = threading.RLock()
_paused = 0  # gc_paused contexts open in this process, on all threads
_was_enabled = False  # whether the collector was on when the first of them opened


def _new_paused_lock() -> None:
    global _paused_lock
    _paused_lock = threading.RLock()  # a thread of the parent may have held it at the fork


os.register_at_fork(after_in_child=_new_paused_lock)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (the lists and tuples made here hold no cycles).

    Building an encoding's lists trips collections that walk every live object: on 20,000
    lines of news text they took as long as the encoding itself. On the way out the
    objects made meanwhile go straight to the oldest generation (``gc.freeze`` then
    ``gc.unfreeze``: two list splices, done only when nothing else is frozen), as they
    would after surviving two collections: otherwise their number sets off a young
    collection at once that visits every id of every list (23 ms for 30,000 lists of 35
    ids). Objects of the caller's that were young then wait for a full collection instead.

    The pause is the process's, counted under a lock: the first context to open (on any
    thread, or nested in one) turns the collector off, and the last to close moves the
    objects and turns it on again if it was on; so a thread that leaves ``encode_batch``
    turns nothing on (or freezes nothing) under another still inside.
    """
    global _paused, _was_enabled
    with _paused_lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _paused_lock:
            _paused -= 1
            if _paused == 0 and _was_enabled:
                if gc.get_freeze_count() == 0:  # a user's frozen objects stay frozen
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()


def _slices(encoder: Encoder, ids: np.ndarray, ends: np.ndarray) -> list[list[int]]:
    """The ids of each text, given all of them ``(N,)`` and where each text's end ``(B,)``.

    Texts of :data:`TEXT_LIST_IDS` ids or more on average get each their list straight
    from their ids; shorter ones are slices of one list of all the ids, as a call per
    text costs more than a copy of its few ids (3M random ids in texts of 15,000: 8 ms a
    million against 19 for the slices, which take every id a second time; in texts of 30:
    44 against 23).
    """
    bounds = itertools.pairwise([0, *ends.tolist()])
    if len(ids) >= TEXT_LIST_IDS * len(ends):
        return [encoder.id_list(ids[a:b]) for a, b in bounds]
    flat = encoder.id_list(ids)
    return [flat[a:b] for a, b in bounds]


def encode_texts(
    encoder: Encoder, texts: Sequence[str], ends: np.ndarray | None = None
) -> BatchIds:
    """Ids of each text, in this process: each distinct word looked up or encoded once, in
    batches of :data:`~rowbook.text.bpe.presplit.BATCH_CHARS` characters with GPT-2's
    settings (the compiled pass's buffers stay small), of :data:`REGEX_BATCH_CHARS` with
    the others (``ends``: the texts' :func:`~rowbook.text.batches.length_ends`, if known)."""
    if len(texts) < 2:
        return _encode_part(encoder, texts)
    size = SCAN_CHARS if encoder.plain else REGEX_BATCH_CHARS
    bounds = batch_bounds(length_ends(texts) if ends is None else ends, size)
    ids_of: list[list[int]] = []
    prefixed: dict[int, list[int]] = {}
    for a, b in itertools.pairwise(bounds):
        part, part_prefixed = _encode_part(encoder, texts[a:b])
        ids_of += part
        prefixed.update({a + i: at for i, at in part_prefixed.items()})
    return ids_of, prefixed


def _encode_part(encoder: Encoder, texts: Sequence[str]) -> BatchIds:
    """:func:`encode_texts` of one batch."""
    if encoder.plain:  # no unsplit tokens, no prefix space, no dropout
        return _slices(encoder, *encoder.plain_ids(texts)), {}
    segments = [encoder.segments(text) for text in texts]
    if encoder.dropout:
        encode = encoder.encode_dropout
    else:
        ids, ends = encoder.word_ids([w for text in segments for _, _, ws in text for w in ws])
        flat, bounds, at = encoder.id_list(ids), [0, *ends.tolist()], 0

        def encode(words: list[str]) -> list[int]:
            nonlocal at
            at += len(words)
            return flat[bounds[at - len(words)] : bounds[at]]

    ids_of, prefixed = [], {}
    for i, text in enumerate(segments):
        ids, prefixed_at = join_segments(text, encode)
        ids_of.append(ids)
        if prefixed_at:
            prefixed[i] = prefixed_at
    return ids_of, prefixed


Packed = tuple[np.ndarray, np.ndarray, dict[int, list[int]], Learned]
"""A worker's batch: all ids ``(N,)`` as ``int32``, ids per text ``(B,)``, prefixed positions,
and the words the worker encoded for it, as arrays (what it adds to the parent's cache)."""


def _encode_job(encoder: Encoder, texts: list[str]) -> Packed:
    """A worker's batch, packed for the pipe (no list per text for a plain encoder)."""
    encoder.after_fork()
    before, emptied = len(encoder.cache), encoder.emptied
    with gc_paused():
        if encoder.plain:
            packed, ends = encoder.plain_ids(texts)  # (N,), (B,)
            lengths, prefixed = np.diff(ends, prepend=0), {}
        else:
            ids_of, prefixed = encode_texts(encoder, texts)
            lengths = np.fromiter(map(len, ids_of), dtype=np.int64, count=len(ids_of))  # (B,)
            packed = np.fromiter(
                itertools.chain.from_iterable(ids_of), dtype=np.int32, count=int(lengths.sum())
            )  # (N,)
        start = before if encoder.emptied == emptied else 0  # words added since the job began
    return packed, lengths, prefixed, encoder.cache.since(start)


def _unpack(encoder: Encoder, result: Packed | BatchIds) -> BatchIds:
    """The :data:`BatchIds` of a worker's packed result, its words added to this process's
    cache (a batch encoded here is left as is)."""
    if len(result) == 2:
        return result
    flat, lengths, prefixed, learned = result
    encoder.learn(learned)
    return _slices(encoder, flat, np.cumsum(lengths)), prefixed


def _thread_job(
    local: threading.local, encoder: Encoder, pending: list[Learned], texts: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """A thread's batch: all ids ``(N,)`` and where each text's end ``(B,)``. The thread
    encodes with a copy of ``encoder`` made when it starts, and adds the words it encoded
    to ``encoder``'s cache itself when that is not busy (the calling thread's time is the
    scarce one), else leaves them in ``pending`` for the next time (the calling thread adds
    those left at the end)."""
    if not hasattr(local, "encoder"):
        local.encoder = encoder.copy()
    own = local.encoder
    before, emptied = len(own.cache), own.emptied
    ids, ends = own.plain_ids(texts)
    start = before if own.emptied == emptied else 0
    if len(own.cache) > start:  # words new to the copy (none, warm: no call then)
        pending.append(own.cache.since(start))
    if pending:
        _learn_pending(encoder, pending, wait=False)
    return ids, ends


def _learn_pending(encoder: Encoder, pending: list[Learned], wait: bool) -> None:
    """Add the words of ``pending`` to ``encoder``'s cache, emptying it (with ``wait=False``
    only if the cache is not busy)."""
    while pending:
        learned = pending.pop()
        if not encoder.learn(learned, wait=wait):
            pending.append(learned)
            return


def _here_job(encoder: Encoder, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """A batch the calling thread encodes: with ``encoder`` itself."""
    return encoder.plain_ids(texts)


def _joined(pieces: list[list[int]]) -> list[int]:
    """The ids of a text's pieces in one list (the first extended in place: no copy of it)."""
    ids = pieces[0]
    for piece in pieces[1:]:
        ids += piece
    return ids


def _pieces(
    texts: list[str], ends: np.ndarray, size: int
) -> tuple[list[str], np.ndarray, list[int] | None]:
    """The texts (which end at ``ends``, :func:`~rowbook.text.batches.length_ends`) cut where
    GPT-2's pattern ends a word, pieces of about ``size`` characters
    (:func:`~rowbook.text.bpe.presplit.cut_text`), where the pieces end, and how many pieces
    each text gave (``None``: none was cut, the pieces are the texts)."""
    longest = max(int(ends[0]), int((ends[1:] - ends[:-1]).max(initial=0)))  # B >= 1
    if longest <= 2 * size:
        return texts, ends, None
    pieces, counts = [], []
    for text in texts:
        cut = cut_text(text, size) if len(text) > 2 * size else [text]
        pieces += cut
        counts.append(len(cut))
    return pieces, length_ends(pieces), counts


def _after_probe(parts: list[int], bounds: list[int]) -> list[int]:
    """Batch ``bounds`` with the probe's parts (where each ends) as batches of their own."""
    return [0, *parts, *(b for b in bounds if b > max(parts, default=0))]


def _in_threads(
    encoder: Encoder, texts: list[str], ends: np.ndarray, size: int, workers: int
) -> Iterator[tuple[list[str], BatchIds]]:
    """The texts in order with their ids, the batches after the first on ``workers``
    threads when their work reaches :data:`~rowbook.text.bpe.cutoff.THREAD_WORK` (a :attr:`~Encoder.plain` encoder
    with the compiled pre-split): cut into pieces of about ``size`` characters, a long text
    in several, the pieces' ids joined again; the words each thread encoded are added to
    ``encoder``'s cache as its batches arrive (``ends``: the texts'
    :func:`~rowbook.text.batches.length_ends`)."""
    pieces, ends, counts = _pieces(texts, ends, size)
    pending: list[Learned] = []  # words the threads encoded, not yet in encoder's cache
    job = functools.partial(_thread_job, threading.local(), encoder, pending)
    here = functools.partial(_here_job, encoder)
    # the probe: the texts up to the first that reaches PROBE_CHARS, within the first batch
    # (size is at least that); small, as no thread runs meanwhile
    probe = min(int(np.searchsorted(ends, cutoff.PROBE_CHARS)) + 1, len(pieces))
    done, joined = 0, []  # texts handed on; ids of the pieces of the next text so far
    try:
        if cutoff.never_pays(
            pieces, ends, probe, cutoff.THREAD_WORK, cutoff.THREADS
        ) or cutoff.known_below(encoder, pieces, ends, probe, cutoff.THREAD_WORK):
            probed, parts, pays = [], [], False  # few bytes or a warm cache: one call here
        else:
            probed, parts, pays = cutoff.probe_pays(
                encoder, pieces, ends, probe, here, cutoff.THREAD_WORK, cutoff.THREADS
            )
        if pays:
            bounds = _after_probe(parts, batch_bounds(ends, size))
            batches = [pieces[a:b] for a, b in itertools.pairwise(bounds)]
            encoder.compile()  # before the threads, not in each
            rest = map_in_threads(job, batches[len(probed) :], workers, here=here)
        else:  # the rest in one call, as with one worker: no cost a batch
            bounds = _after_probe(parts, [len(pieces)])
            batches = [pieces[a:b] for a, b in itertools.pairwise(bounds)]
            rest = map(here, batches[len(probed) :])
        for batch, (ids, id_ends) in zip(batches, itertools.chain(probed, rest), strict=True):
            slices = _slices(encoder, ids, id_ends)
            if counts is None:  # no text was cut: a piece is a text
                yield batch, (slices, {})
                continue
            ids_of = []
            for piece in slices:
                joined.append(piece)
                if len(joined) == counts[done + len(ids_of)]:
                    ids_of.append(joined[0] if len(joined) == 1 else _joined(joined))
                    joined = []
            yield texts[done : done + len(ids_of)], (ids_of, {})
            done += len(ids_of)
        _learn_pending(encoder, pending, wait=True)
    except ValueError:  # a lone surrogate, named at its offset in its text, not in its piece
        for text in texts:
            check_utf8(text)
        raise


def _in_processes(
    encoder: Encoder, texts: list[str], ends: np.ndarray, size: int, workers: int
) -> Iterator[tuple[list[str], BatchIds]]:
    """The texts (which end at ``ends``) in batches of about ``size`` characters with their
    ids, the batches after the first on ``workers`` processes when their work reaches
    :data:`~rowbook.text.bpe.cutoff.POOL_WORK`."""
    bounds = batch_bounds(ends, size)
    here = functools.partial(encode_texts, encoder)
    probe = min(int(np.searchsorted(ends, cutoff.PROBE_CHARS)) + 1, bounds[1])  # in the first
    if cutoff.never_pays(texts, ends, probe, cutoff.POOL_WORK, cutoff.PROCESSES):
        probed, parts, pays = [], [], False  # few words: every batch here
    else:
        probed, parts, pays = cutoff.probe_pays(
            encoder, texts, ends, probe, here, cutoff.POOL_WORK, cutoff.PROCESSES
        )
    bounds = _after_probe(parts, bounds)
    batches = [texts[a:b] for a, b in itertools.pairwise(bounds)]
    if pays:
        encoder.compile()  # before the fork, not in each
        job = functools.partial(_encode_job, encoder)
        rest = map(
            functools.partial(_unpack, encoder),
            map_in_order(job, batches[len(probed) :], workers, here=here),
        )
    else:
        rest = map(here, batches[len(probed) :])
    return zip(batches, itertools.chain(probed, rest), strict=True)  # built as they arrive


def encode_batch(encoder: Encoder, texts: list[str], workers: int) -> list[Encoding]:
    """The :class:`Encoding` of each text, on up to ``workers`` threads or processes (same
    result)."""
    ends = length_ends(texts)  # (B,)
    chars = int(ends[-1]) if len(ends) else 0
    threads = encoder.plain and encoder.pretokenizer.compiled
    smallest = THREAD_BATCH_CHARS if threads else BATCH_CHARS
    with gc_paused():
        if workers == 1 or encoder.dropout or chars < 2 * smallest:
            parts = [(texts, encode_texts(encoder, texts, ends))]
        else:
            batches = BATCHES_PER_THREAD if threads else BATCHES_PER_PROCESS
            size = max(smallest, chars // (batches * workers))
            way = _in_threads if threads else _in_processes
            parts = way(encoder, texts, ends, size, workers)
        encodings = []
        for batch, (ids_of, prefixed) in parts:
            encodings += build_encodings(
                batch, ids_of, prefixed, encoder.id_to_token, encoder.id_len, encoder.align
            )
        return encodings
