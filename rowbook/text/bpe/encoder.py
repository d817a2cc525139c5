"""What a fitted byte-level BPE encodes with: the pre-split, the merge tables, the word cache.

A :class:`~rowbook.text.ByteLevelBPE` holds one :class:`Encoder`, made with its settings
(``pattern``, ``add_prefix_space``, ``cache_size``, ``dropout``, ``seed``) and given the
learned tables each time the model changes (:meth:`Encoder.set_model`): the id of every
byte symbol, the merge table the kernels of :mod:`rowbook.text.bpe.encode` read, the ids
of the tokens that are never split. It owns the state that encoding changes: the cache of
encoded words (emptied when full) and the random numbers of BPE-dropout.
:mod:`rowbook.text.bpe.batch` encodes texts with it, in this process or forked ones, and
reads nothing else of the model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from rowbook.text.bpe.bytelevel import to_byte_level
from rowbook.text.bpe.encode import encode_word_dropout, encode_words
from rowbook.text.bpe.options import special_regex
from rowbook.text.bpe.pretokenize import PreTokenizer, check_utf8

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
        self.cache: dict[str, tuple[int, ...]] = {}

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
        self.id_to_token, self.id_len = tables["id_to_token"], id_len
        self.unsplit_ids = unsplit_ids
        self.cutter = special_regex(list(unsplit_ids))
        self.ranks: dict[tuple[int, int], tuple[int, int]] | None = None  # built for dropout
        self.cache = {}

    @property
    def plain(self) -> bool:
        """Whether a text is its words and nothing else: no unsplit tokens to cut out, no
        prefix space, no dropout (the fast path of :func:`rowbook.text.bpe.batch.encode_texts`)."""
        return self.cutter is None and not self.pretokenizer.add_prefix_space and not self.dropout

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

    def encode_new(self, words: Sequence[str]) -> dict[str, tuple[int, ...]]:
        """Ids of ``words`` (the cache is not read), all in one kernel call."""
        new: dict[str, tuple[int, ...]] = {}
        if self.ignore_merges:  # a word that is a token is that token, merges or not
            vocab = self.vocab
            new.update((w, (vocab[s],)) for w in words if (s := to_byte_level(w)) in vocab)
            words = [w for w in words if w not in new]
        if words:
            encoded = encode_words(
                [w.encode("utf-8") for w in words], self.byte_ids, self.merge_table
            )
            new.update(zip(words, map(tuple, encoded), strict=True))
        return new

    def word_table(self, words: Sequence[str]) -> Mapping[str, tuple[int, ...]]:
        """Ids of each of ``words``: the word cache, filled with the words it lacked.

        When they do not fit in ``cache_size``, the cache is emptied and refilled with this
        call's words if they fit, and the table is a dictionary of its own.
        """
        cache = self.cache
        unique = set(words)
        missing = unique.difference(cache)
        new = self.encode_new(list(missing))
        if len(cache) + len(new) <= self.cache_size:
            cache.update(new)
            return cache
        table = {w: cache[w] for w in unique.difference(missing)}
        table.update(new)
        cache.clear()
        if len(table) <= self.cache_size:
            cache.update(table)
        return table
