"""SentencePiece's BPE model (``model_type: BPE``): merges chosen by the score of the merged piece.

A character-level BPE as ``bpe_model.cc`` encodes it: the normalized sentence (``"▁"`` for
spaces, no pre-tokenizer) starts as one symbol per character (a user-defined symbol is one
symbol and never merges); then, repeatedly, of all adjacent pairs whose concatenation is a
piece of the vocabulary, the one whose piece has the highest score is merged (ties: the
leftmost). A trained model scores pieces by the order in which they were learned, so this
replays the merges in order; there is no merge list, only pieces and scores. A symbol that
is not a piece at the end is unknown: runs of them become one ``unk`` id, or ``<0xXX>``
byte pieces with byte fallback. ``UNUSED`` pieces take part in merges and are then split
back into the two symbols that made them.

The kernel (:func:`~rowbook.text.sentencepiece.bpe_merges.encode_sentences`) keeps each sentence's symbols as a linked list and the
candidate merges in a heap ordered by (score, position), a stale entry being skipped when
popped, as the C++ does; :func:`encode_reference` is that loop in Python, resegmentation of
unused pieces included, and the tests hold the kernel to it and both to ``sentencepiece``.

This is the "classic" BPE of the four tokenizers: :class:`SentencePieceBPE` answers
``encode`` / ``decode`` / ``token_to_id`` / ``save`` like the others. rowbook trains BPE
byte-level (:class:`~rowbook.text.ByteLevelBPE`); a ``SentencePieceBPE`` comes from a
``.model`` file (:func:`rowbook.text.sentencepiece.load_model`).
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from rowbook.text.components import Metaspace
from rowbook.text.sentencepiece import files
from rowbook.text.sentencepiece.bpe_merges import encode_sentences, pair_table
from rowbook.text.sentencepiece.normalizer import SPACE, SentencePieceNormalizer
from rowbook.text.subword_pipeline import SubwordTokenizer
from rowbook.text.trie import codepoints

__all__ = ["SentencePieceBPE", "encode_reference"]


def encode_reference(
    symbols: Sequence[str],
    frozen: Sequence[bool],
    pieces: dict[str, int],
    scores: Sequence[float],
    unused: set[int],
) -> list[str]:
    """``bpe_model.cc``'s loop in Python: the pieces of one sentence given as initial symbols."""
    sym = list(symbols)
    nxt = [*range(1, len(sym)), -1]
    prv = list(range(-1, len(sym) - 1))
    heap: list[tuple[float, int, int, int]] = []
    rev: dict[str, tuple[str, str]] = {}

    def push(left: int, right: int) -> None:
        if left < 0 or right < 0 or frozen[left] or frozen[right]:
            return
        piece = sym[left] + sym[right]
        if piece in pieces:
            heapq.heappush(heap, (-scores[pieces[piece]], left, right, len(piece)))
            if pieces[piece] in unused:
                rev[piece] = (sym[left], sym[right])

    for i in range(1, len(sym)):
        push(i - 1, i)
    while heap:
        _, left, right, size = heapq.heappop(heap)
        if not sym[left] or not sym[right] or len(sym[left]) + len(sym[right]) != size:
            continue
        sym[left], sym[right] = sym[left] + sym[right], ""
        nxt[left] = nxt[right]
        if nxt[right] >= 0:
            prv[nxt[right]] = left
        push(prv[left], left)
        push(left, nxt[left])

    def resegment(piece: str) -> list[str]:
        if pieces.get(piece) in unused and piece in rev:
            return resegment(rev[piece][0]) + resegment(rev[piece][1])
        return [piece]

    out, i = [], 0 if sym else -1
    while i >= 0:
        out += resegment(sym[i])
        i = nxt[i]
    return out


class SentencePieceBPE(SubwordTokenizer):
    """A SentencePiece BPE model: pieces with scores, encoded as ``sentencepiece`` does.

    Made by :func:`rowbook.text.sentencepiece.load_model` from a ``.model`` file; see the
    module docstring.
    """

    def __init__(self, *, normalizer: Any = None, cache_size: int = 0) -> None:
        self.normalizer, self.pre_tokenizer, self.cache_size = normalizer, None, cache_size

    def _set_model(
        self,
        pieces: Sequence[tuple[str, float]],
        kinds: Sequence[int],
        unk_id: int,
        byte_fallback: bool,
    ) -> None:
        from rowbook.text.sentencepiece.pieces import merge_tables

        self._scores = np.array([s for _, s in pieces], dtype=np.float32).astype(np.float64)
        self._kinds = np.asarray(kinds, np.int8)
        self._unk_id, self.byte_fallback = unk_id, byte_fallback
        self._model_size = len(pieces)
        self._install([p for p, _ in pieces], [])
        self._char_ids, keys, new_ids = merge_tables([p for p, _ in pieces], self._kinds)
        self._pair_keys, self._new_ids = pair_table(keys, new_ids)
        self._unused = set(np.flatnonzero(self._kinds == 2).tolist())

    def _initial(self, sentence: str) -> tuple[list[int], list[bool], list[str]]:
        """Initial symbols of a normalized sentence: characters, user-defined symbols frozen."""
        symbols = (
            self.normalizer.symbols(sentence) if self.normalizer is not None else list(sentence)
        )
        ids = [self._vocab[s] if len(s) > 1 else self._char_ids.get(s, -2) for s in symbols]
        frozen = [len(s) > 1 for s in symbols]
        return ids, frozen, symbols

    def _paths(self, sentences: list[str]) -> list[list[tuple[int, str]]]:
        """``(id or -1, text)`` of each symbol left in each sentence."""
        if self._unused:
            pieces = {t: i for i, t in enumerate(self._id_to_token) if self._kinds[i] in (0, 1, 2)}
            return [
                [
                    (pieces.get(p, -1), p)
                    for p in encode_reference(
                        self._initial(s)[2],
                        self._initial(s)[1],
                        pieces,
                        self._scores.tolist(),
                        self._unused,
                    )
                ]
                for s in sentences
            ]
        init, frozen, texts, starts = [], [], [], [0]
        for s in sentences:
            ids, flags, symbols = self._initial(s)
            init += ids
            frozen += flags
            texts.append(symbols)
            starts.append(len(init))
        sym, pos, bounds = encode_sentences(
            np.array(init, np.int64),
            np.array(frozen, np.bool_),
            np.array(starts, np.int64),
            (self._pair_keys, self._new_ids, self._scores),
        )
        out = []
        for k, symbols in enumerate(texts):
            ids, firsts = (
                sym[bounds[k] : bounds[k + 1]].tolist(),
                pos[bounds[k] : bounds[k + 1]].tolist(),
            )
            ends = [*firsts[1:], len(symbols)] if firsts else []
            out.append(
                [
                    (i if 0 <= i < self._model_size else -1, "".join(symbols[a:b]))
                    for i, a, b in zip(ids, firsts, ends, strict=True)
                ]
            )
        return out

    def _resolve(self, path: list[tuple[int, str]]) -> list[tuple[int, str, int, int]]:
        from rowbook.text.sentencepiece.pieces import unknown_tokens

        out, start, k = [], 0, 0
        while k < len(path):
            i, text = path[k]
            if i >= 0 or (len(text) == 1 and text in self._vocab):
                i = i if i >= 0 else self._vocab[text]
                out.append((i, self._id_to_token[i], start, start + len(text)))
                start, k = start + len(text), k + 1
                continue
            j = k
            while j + 1 < len(path) and path[j + 1][0] < 0 and path[j + 1][1] not in self._vocab:
                j += 1
            run = "".join(t for _, t in path[k : j + 1])
            out += unknown_tokens(run, start, self._unk_id, self._byte_ids())
            start, k = start + len(run), j + 1
        return out

    def _byte_ids(self) -> list[int] | None:
        from rowbook.text.unigram.model import BYTE_PIECES

        return [self._vocab[b] for b in BYTE_PIECES] if self.byte_fallback else None

    def _batch_job(self) -> Any:
        """The compiled job of whole texts (:mod:`rowbook.text.sentencepiece.batch`), for
        the normalizer and pre-tokenizer of the file; ``None`` with ``UNUSED`` pieces or
        other parts."""
        from rowbook.text.sentencepiece.batch import bpe_job

        by_word = self.pre_tokenizer == Metaspace(SPACE, "never")
        if (
            self._unused
            or not isinstance(self.normalizer, SentencePieceNormalizer)
            or (self.pre_tokenizer is not None and not by_word)
        ):
            return None
        made_for, pre, job = self._job
        if made_for is not self.normalizer or pre != self.pre_tokenizer:
            job = bpe_job(self, by_word)
            self._job = (self.normalizer, self.pre_tokenizer, job)
        return job

    def _on_install(self) -> None:
        self._job = (None, None, None)

    def _kernel_ids(self, words: list[str]) -> tuple[np.ndarray, np.ndarray] | None:
        """The symbols left in each word after merging, ``(symbols, bounds)``, by the kernel and
        with the characters mapped in NumPy; ``None`` when the words need the Python path
        (user-defined symbols, unused pieces)."""
        if self._unused or (self.normalizer is not None and self.normalizer._symbols is not None):
            return None
        if not hasattr(self, "_char_table"):
            chars = sorted(self._char_ids)
            self._char_table = (
                np.array([ord(c) for c in chars], dtype=np.int64),
                np.array([self._char_ids[c] for c in chars], dtype=np.int64),
            )
        codes, ids = self._char_table
        data = codepoints("".join(words)).astype(np.int64)  # (C,)
        at = np.minimum(np.searchsorted(codes, data), max(codes.size - 1, 0))
        init = np.where(codes.size and (codes[at] == data), ids[at] if ids.size else -2, -2)  # (C,)
        starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, words), dtype=np.int64, count=len(words)), out=starts[1:])
        sym, _, bounds = encode_sentences(
            init,
            np.zeros(init.size, np.bool_),
            starts,
            (self._pair_keys, self._new_ids, self._scores),
        )
        return sym, bounds

    def _encode_words(self, words: list[str]) -> list[tuple[int, ...]]:
        fast = self._kernel_ids(words)
        if fast is None:
            return [tuple(t[0] for t in self._resolve(path)) for path in self._paths(words)]
        sym, bounds = fast
        sym, bounds = sym.tolist(), bounds.tolist()
        size, out = self._model_size, []
        for w, word in enumerate(words):
            ids = sym[bounds[w] : bounds[w + 1]]
            if min(ids, default=0) >= 0 and max(ids, default=0) < size:
                out.append(tuple(ids))
            else:  # unknown characters: fused or spelled in bytes, the Python way
                out.append(tuple(t[0] for t in self._resolve(self._paths([word])[0])))
        return out

    def _segment_word(self, word: str) -> list[tuple[int, str, int, int]]:
        return self._resolve(self._paths([word])[0])

    def save(self, path: str | os.PathLike) -> None:
        """Write the ``.model`` file back (the fields not read by rowbook as they were)."""
        files.save_model(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> SentencePieceBPE:
        """Read a SentencePiece ``.model`` file of the BPE type."""
        parts = files.read_file(path)
        if parts.kind != "bpe":
            raise ValueError(
                f"SentencePiece model {path} is a Unigram, not a BPE model; read it with "
                "rowbook.load_tokenizer"
            )
        return cls.from_parts(parts)

    @classmethod
    def from_parts(cls, parts: files.ModelParts) -> SentencePieceBPE:
        """The BPE of a ``.model`` file's parts (:func:`~rowbook.text.sentencepiece.files.read_parts`)."""
        tok = cls(normalizer=parts.normalizer)
        tok._set_model(parts.pieces, parts.kinds, parts.unk_id, parts.byte_fallback)
        if parts.word_by_word:  # no piece spans a word boundary: word by word, with a cache
            tok.pre_tokenizer, tok.cache_size = Metaspace(SPACE, "never"), 100_000
        tok.decoder = parts.decoder
        tok._model_file = parts.file
        return tok

    def __repr__(self) -> str:
        return (
            f"SentencePieceBPE({len(self)} pieces)"
            if self._fitted
            else "SentencePieceBPE(not fitted)"
        )
