"""What a fitted byte-level BPE encodes with: the pre-split, the merge tables, the word cache.

A :class:`~rowbook.text.ByteLevelBPE` holds one :class:`Encoder`, made with its settings
(``pattern``, ``add_prefix_space``, ``cache_size``, ``dropout``, ``seed``) and given the
learned tables each time the model changes (:meth:`Encoder.set_model`): the id of every
byte symbol, the merge table the kernels of :mod:`rowbook.text.bpe.merge_kernels` read, the ids
of the tokens that are never split. It owns the state that encoding changes: the cache of
encoded words (a compiled :class:`~rowbook.text.bpe.word_cache.WordCache`, emptied when
full) and the random numbers of BPE-dropout. :mod:`rowbook.text.bpe.batch` encodes texts
with it, in this process or forked ones, and reads nothing else of the model.

Every path goes through the one cache. Texts that are their words (:attr:`Encoder.plain`)
are cut by GPT-2's compiled pre-split straight into the cache (:meth:`Encoder.plain_ids`);
words cut in Python (unsplit tokens, a prefix space, another pattern) are looked up by
:meth:`Encoder.word_ids`. Either way the words new to the cache are encoded in one call of
the merge kernel and the ids of all the words come back in one array. The cache changes
under a lock, so one model may encode from several threads (the kernels release the GIL,
and a cache changed by two at once would give wrong ids).
"""

from __future__ import annotations

import copy
import itertools
import threading
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from rowbook.text.aligned import Aligned
from rowbook.text.batches import length_ends
from rowbook.text.bpe.bytelevel import to_byte_level
from rowbook.text.bpe.merge_kernels import encode_word_bytes, encode_word_dropout, pair_table
from rowbook.text.bpe.options import special_regex
from rowbook.text.bpe.pretokenize import PreTokenizer
from rowbook.text.bpe.word_cache import Learned, WordCache, interleave
from rowbook.text.utf8 import check_utf8

__all__ = ["Encoder", "Segments"]

Segments = list[tuple[int | None, bool, list[str]]]
"""A text cut for encoding: ``(unsplit token id, False, [])`` for a special or added token,
``(None, prefixed, words)`` for the pre-split words of the text between them."""


class Encoder:
    """The encoding state of a byte-level BPE.

    Parameters
    ----------
    pretokenizer : PreTokenizer
        How text is cut into words.
    cache_size : int
        Words whose ids are kept; the cache is emptied when it is full.
    dropout : float or None
        BPE-dropout's probability of skipping a merge (None or 0: no dropout).
    seed : int or None
        Seed of the dropout's random numbers.
    """

    def __init__(
        self,
        pretokenizer: PreTokenizer,
        *,
        cache_size: int,
        dropout: float | None,
        seed: int | None,
    ) -> None:
        self.pretokenizer = pretokenizer
        self.cache_size, self.dropout = cache_size, dropout
        self.rng = np.random.default_rng(seed)
        self.cache = WordCache()
        self.emptied = 0  # times the cache was emptied because it was full
        self.source: Encoder | None = None  # a thread's copy: the encoder it was copied from
        self.lock = threading.Lock()  # held while the cache changes

    def set_model(
        self,
        vocab: Mapping[str, int],
        tables: Mapping[str, np.ndarray | tuple | list],
        unsplit_ids: Mapping[str, int],
        id_len: np.ndarray,
        ignore_merges: bool,
    ) -> None:
        """Encode with a (new) model: ``tables`` as :func:`rowbook.text.bpe.files.check_model`
        builds them, the ids of the tokens never split, each id's length in bytes ``(V,)``,
        and whether a word that is a token is that token (``ignore_merges``). Empties the cache."""
        self.vocab, self.ignore_merges = vocab, ignore_merges
        self.byte_ids, self.merge_table = tables["byte_ids"], tables["merge_table"]
        self.pairs = pair_table(*self.merge_table)  # what the kernels look merges up in
        self.id_to_token, self.id_len = tables["id_to_token"], id_len
        # the Python int of every id, made once: a list of ids copies references to them
        # (3M ids of NewsArticles: 25-35 ms against 65 ms for ndarray.tolist making each)
        self.id_ints = np.arange(len(id_len)).astype(object)  # (V,)
        self.unsplit_ids = unsplit_ids
        self.cutter = special_regex(list(unsplit_ids))
        self.ranks: dict[tuple[int, int], tuple[int, int]] | None = None  # built for dropout
        with self.lock:
            self.cache.clear()

    @property
    def _tables(self) -> tuple:
        return self.byte_ids, self.pairs

    @property
    def plain(self) -> bool:
        """Whether a text is its words and nothing else: no unsplit tokens to cut out, no
        prefix space, no dropout (:meth:`plain_ids`)."""
        pre = self.pretokenizer
        return (
            self.cutter is None
            and not pre.add_prefix_space
            and pre.normalizer is None
            and not self.dropout
        )

    def segments(self, text: str) -> Segments:
        """``text`` cut for encoding: unsplit tokens, and the words of the text between them."""
        pre = self.pretokenizer
        return [
            (None, prefixed, pre.split(piece))
            if token is None
            else (self.unsplit_ids[token], False, [])
            for piece, token, prefixed in pre.pieces(
                check_utf8(text), self.cutter, self.unsplit_ids
            )
        ]

    @property
    def align(self) -> Callable[[str], Aligned] | None:
        """:meth:`aligned` when a normalizer may change the text (offsets are carried back
        through it), else ``None``."""
        normalizer = self.pretokenizer.normalizer
        return self.aligned if hasattr(normalizer, "aligned") else None

    def aligned(self, text: str) -> Aligned:
        """``text`` as its ids spell it, each character with its span in ``text``: the pieces
        between unsplit tokens normalized, for the offsets of its tokens."""
        normalizer, parts, start = self.pretokenizer.normalizer, [], 0
        for part in self.cutter.split(text) if self.cutter is not None else [text]:
            piece = Aligned.of(part, start)
            parts.append(piece if part in self.unsplit_ids else normalizer.aligned(piece))
            start += len(part)
        return Aligned.of("").join(parts)

    def id_list(self, ids: np.ndarray) -> list[int]:
        """``ids.tolist()``, each id's int taken from :attr:`id_ints` instead of made
        (``take``: 1.1M random ids of 8,000 in 14 ms against 20 for ``id_ints[ids]``)."""
        return self.id_ints.take(ids).tolist()

    def encode_dropout(self, words: list[str]) -> list[int]:
        """Ids of ``words`` with BPE-dropout, drawing from this encoder's random numbers."""
        if self.ranks is None:
            keys, ranks, new_ids = self.merge_table
            self.ranks = {
                (k >> 32, k & 0xFFFFFFFF): (r, n)
                for k, r, n in zip(keys.tolist(), ranks.tolist(), new_ids.tolist(), strict=True)
            }
        ids: list[int] = []
        for word in words:
            if self.ignore_merges and to_byte_level(word) in self.vocab:
                ids.append(self.vocab[to_byte_level(word)])
                continue
            symbols = self.byte_ids[np.frombuffer(word.encode("utf-8"), dtype=np.uint8)].tolist()
            ids += encode_word_dropout(symbols, self.ranks, self.dropout, self.rng)
        return ids

    def compile(self) -> None:
        """Compile (or load from numba's cache) every kernel encoding runs: before a fork,
        so that the workers need not."""
        self.plain_ids([])
        self.word_ids([])
        encode_word_bytes(np.zeros(0, np.uint8), np.zeros(0, np.int64), *self._tables)

    def plain_ids(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """All ids of ``texts`` (a :attr:`plain` encoder) in one ``int32`` array ``(N,)``, and
        where each text's ids end ``(B,)``: GPT-2's pattern is cut by the compiled pre-split."""
        if not self.pretokenizer.compiled:
            words_of = self.pretokenizer.words_of(texts)
            ends = length_ends(words_of)  # (B,) in words
            return self.word_ids(list(itertools.chain.from_iterable(words_of)), ends)
        with self.lock:
            before = len(self.cache)
            words, ends = self.cache.scan(texts)
            return self._gather(before, words, ends)

    def word_ids(
        self, words: Sequence[str], group_ends: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ids of ``words`` in one ``int32`` array ``(N,)``, and where the ids of each
        group of words end ``(G,)``: ``group_ends`` says where each group's words end (by
        default each word is a group)."""
        if group_ends is None:
            group_ends = np.arange(1, len(words) + 1, dtype=np.int64)  # (W,)
        with self.lock:
            before = len(self.cache)
            return self._gather(before, self.cache.intern(words), group_ends)

    def _gather(
        self, before: int, words: np.ndarray, group_ends: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """The ids of ``words`` (cache ids; those from ``before`` on are new: encoded here),
        and where each group ends; the cache is then emptied if it is over ``cache_size``,
        keeping this call's words if they fit."""
        cache = self.cache
        if len(cache) > before:
            data, ends = cache.word_bytes(before)
            cache.merged += len(data)
            cache.set_ids(*self._new_word_ids(data, ends))
        ids, ends = cache.gather(words, group_ends)
        if len(cache) > self.cache_size:
            self.emptied += 1
            cache.keep(words, self.cache_size)
        return ids, ends

    def _new_word_ids(self, data: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`encode_new` of words new to this cache. A thread's copy first takes the
        ids of those its :attr:`source` has learned since the copy was made (encoded by
        another thread) from there, if the source is not busy, and encodes the others."""
        source = self.source
        if source is None or not source.lock.acquire(blocking=False):
            return self.encode_new(data, ends)
        try:
            found = source.cache.lookup(data, ends)  # (K,) the id there, or -1
            known = np.flatnonzero(found >= 0)
            if len(known) == 0:
                return self.encode_new(data, ends)
            copied = source.cache.gather(found[known], np.arange(1, len(known) + 1))
        finally:
            source.lock.release()
        unknown = np.flatnonzero(found < 0)
        if len(unknown) == 0:
            return copied
        lengths = np.diff(ends, prepend=0)  # (K,) bytes of each word
        encoded = self.encode_new(data[np.repeat(found < 0, lengths)], np.cumsum(lengths[unknown]))
        return interleave((unknown, *encoded), (known, *copied))

    def encode_new(self, data: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ids of the words ``data[ends[i - 1]:ends[i]]`` (UTF-8 bytes; the cache is not read)
        in one kernel call: all ids ``(M,)``, and where each word's end ``(W,)``."""
        ids, id_ends = encode_word_bytes(data, ends, *self._tables)
        if not self.ignore_merges:
            return ids, id_ends
        # a word that is a token is that token, merges or not: words merged into one token
        # already are, so only those left in several are looked up
        counts = np.diff(id_ends, prepend=0)  # (W,) ids of each word
        starts, text, whole = ends - np.diff(ends, prepend=0), data.tobytes(), {}
        for w in np.flatnonzero(counts > 1).tolist():
            token = self.vocab.get(to_byte_level(text[starts[w] : ends[w]].decode("utf-8")))
            if token is not None:
                whole[w] = token
        if not whole:
            return ids, id_ends
        words = np.fromiter(whole, dtype=np.int64, count=len(whole))  # (K,) words now one token
        word_of = np.repeat(np.arange(len(counts)), counts)  # (M,) the word of each id
        new_counts = counts.copy()
        new_counts[words] = 1
        new_ends = np.cumsum(new_counts)
        keep = ~np.isin(word_of, words)  # (M,)
        out = np.empty(int(new_ends[-1]), dtype=ids.dtype)
        within = np.arange(len(ids)) - (id_ends - counts)[word_of]  # place in its word
        out[(new_ends - new_counts)[word_of[keep]] + within[keep]] = ids[keep]
        out[(new_ends - new_counts)[words]] = np.fromiter(whole.values(), dtype=np.int64)
        return out, new_ends

    def with_unsplit(self, unsplit_ids: Mapping[str, int]) -> Encoder:
        """This encoder with only ``unsplit_ids`` cut out of the text (tiktoken's
        ``allowed_special``): the same tables, word cache and lock, so words learned by
        either serve both (the words do not depend on which tokens are cut out)."""
        other = copy.copy(self)
        other.lock, other.cache = self.lock, self.cache
        other.unsplit_ids = dict(unsplit_ids)
        other.cutter = special_regex(list(unsplit_ids))
        return other

    def learn(self, words: Learned, *, wait: bool = True) -> bool:
        """Add words encoded elsewhere (a forked worker, a thread's copy) to the cache, if
        they all fit; with ``wait=False`` only if the cache is not busy. Returns whether it
        was not (the words were added, or did not fit)."""
        if not self.lock.acquire(blocking=wait):
            return False
        try:
            if len(self.cache) + len(words[1]) <= self.cache_size:
                self.cache.add(words)
        finally:
            self.lock.release()
        return True

    def copy(self) -> Encoder:
        """An encoder with the same settings and tables and a copy of the word cache as it
        is now: a thread's own, which it changes without waiting for the others. Its
        :attr:`source` is this encoder, whose cache it asks for the ids of words new to it
        before merging them."""
        with self.lock:
            other = copy.copy(self)  # a new lock (__setstate__)
            other.cache = copy.deepcopy(self.cache)
        other.source = self
        return other

    def after_fork(self) -> None:
        """Called in a forked worker, which has one thread: a new lock (a thread of the
        parent may have held the old one at the fork) and an empty cache if that thread
        left it half filled."""
        self.lock = threading.Lock()
        if self.cache.filled != len(self.cache):
            self.cache.clear()

    def __getstate__(self) -> dict:
        state = {name: value for name, value in self.__dict__.items() if name != "lock"}
        return state | {"source": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.lock = threading.Lock()
