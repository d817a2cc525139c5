"""Byte-fallback BPE: the character-level BPE of Llama 2 and Mistral ``tokenizer.json`` files.

A ``tokenizers`` ``BPE`` model that is not byte-level spells each word with its characters
(SentencePiece's ``"▁"`` for a space, put there by a ``Metaspace`` pre-tokenizer or by a
``Prepend`` + ``Replace`` normalizer), then merges adjacent symbols by the rank of the pair
in its merge list, lowest first (leftmost on ties), the same rule and the same compiled heap
as :class:`~rowbook.text.ByteLevelBPE` (:func:`rowbook.text.bpe.merge_kernels.encode_symbols`).
A character outside the vocabulary becomes the ``<0xXX>`` pieces of its UTF-8 bytes with
``byte_fallback``, else ``unk_token`` (one for a run of them with ``fuse_unk``; dropped when
there is no ``unk_token``), as ``tokenizers``' ``BPE.merge_word`` does, including its
order: an unknown token waiting to be fused is written after byte pieces that follow it.
With ``ignore_merges`` a word that is a token is that token. Offsets are ``tokenizers``'
(tested on any text), except where it drops characters or writes byte pieces ahead of a
waiting unknown run: its offsets there count bytes; rowbook's give the characters.

:class:`ByteFallbackBPE` is a :class:`~rowbook.text.subword_pipeline.SubwordTokenizer`: the
normalizer, pre-tokenizer, template (``<s> $A``) and decoder (``Replace``, ``ByteFallback``,
``Fuse``, ``Strip``) are those of :mod:`rowbook.text.components` and
:mod:`rowbook.text.postprocess`; its files are in :mod:`rowbook.text.bpe.fallback_files`.

Examples
--------
>>> from rowbook.text.components import NormalizerSequence, Prepend, Replace
>>> vocab = ["<unk>", "<0xC3>", "<0xA9>", "▁", "a", "b", "ab", "▁ab"]
>>> bpe = ByteFallbackBPE(unk_token="<unk>").set_model(vocab, [("a", "b"), ("▁", "ab")])
>>> bpe.normalizer = NormalizerSequence((Prepend("▁"), Replace(" ", "▁")))
>>> encoding = bpe.encode("ab é")
>>> encoding.tokens, encoding.ids
(['▁ab', '▁', '<0xC3>', '<0xA9>'], [7, 3, 1, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rowbook.checks import InputTypeError
from rowbook.text.bpe.fallback_files import FILES
from rowbook.text.bpe.merge_kernels import encode_symbols, pair_key, pair_table
from rowbook.text.hf_files import TokenizerJsonFiles
from rowbook.text.subword_pipeline import SubwordTokenizer

__all__ = ["ByteFallbackBPE", "byte_piece"]


def byte_piece(b: int) -> str:
    """The vocabulary piece of byte ``b``, as ``tokenizers`` spells it (``format!("<{:#04X}>")``).

    Examples
    --------
    >>> byte_piece(0x0A), byte_piece(233)
    ('<0x0A>', '<0xE9>')
    """
    return f"<0x{b:02X}>"


class ByteFallbackBPE(SubwordTokenizer, TokenizerJsonFiles):
    """A character-level BPE with byte fallback, read from a ``tokenizer.json`` (see the module).

    Parameters
    ----------
    unk_token : str, optional
        The token of a character that is neither in the vocabulary nor spelled in bytes.
    byte_fallback : bool, default True
        Spell an unknown character with the ``<0xXX>`` pieces of its bytes (when all are in
        the vocabulary).
    fuse_unk : bool, default True
        One ``unk_token`` for a run of unknown characters.
    ignore_merges : bool, default False
        A word that is a token is that token, whatever the merges.
    """

    def __init__(
        self,
        *,
        unk_token: str | None = None,
        byte_fallback: bool = True,
        fuse_unk: bool = True,
        ignore_merges: bool = False,
    ) -> None:
        for name, flag in (
            ("byte_fallback", byte_fallback),
            ("fuse_unk", fuse_unk),
            ("ignore_merges", ignore_merges),
        ):
            if not isinstance(flag, bool):
                raise InputTypeError(f"{name} must be a bool, got {flag!r}")
        if unk_token is not None and (not isinstance(unk_token, str) or not unk_token):
            raise InputTypeError(f"unk_token must be a non-empty str or None, got {unk_token!r}")
        self.unk_token, self.byte_fallback = unk_token, byte_fallback
        self.fuse_unk, self.ignore_merges = fuse_unk, ignore_merges
        self._merges: list[tuple[str, str]] = []

    def set_model(
        self,
        id_to_token: Sequence[str],
        merges: Sequence[tuple[str, str]],
        added: Sequence[tuple[str, bool]] = (),
        model_size: int | None = None,
    ) -> ByteFallbackBPE:
        """Install a vocabulary (tokens in id order), merges in rank order and the added
        tokens ``(token, special)``; ``model_size``: how many tokens the model's own
        vocabulary has (the rest were added). Returns ``self``."""
        self._merges = [(str(a), str(b)) for a, b in merges]
        self._model_size = len(id_to_token) if model_size is None else model_size
        self._install(id_to_token, added)
        return self

    def _on_install(self) -> None:
        vocab = self._vocab
        if self.unk_token is not None and self.unk_token not in vocab:
            raise ValueError(f"unk_token {self.unk_token!r} is not in the vocabulary")
        table: dict[int, tuple[int, int]] = {}
        for rank, (left, right) in enumerate(self._merges):
            if left not in vocab or right not in vocab or left + right not in vocab:
                missing = next(t for t in (left, right, left + right) if t not in vocab)
                raise ValueError(f"merge {rank} {(left, right)!r}: {missing!r} is not a token")
            table.setdefault(pair_key(vocab[left], vocab[right]), (rank, vocab[left + right]))
        keys = np.array(sorted(table), dtype=np.int64)  # (M,) the first of a pair given twice
        ranks = np.array([table[k][0] for k in keys.tolist()], dtype=np.int64)
        new_ids = np.array([table[k][1] for k in keys.tolist()], dtype=np.int64)
        self._pairs = pair_table(keys, ranks, new_ids)
        self._byte_ids = [vocab.get(byte_piece(b)) for b in range(256)]

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merges in rank order."""
        self._check_fitted()
        return list(self._merges)

    # ------------------------------------------------------------------ the model
    def _initial(self, word: str) -> tuple[list[int], list[tuple[int, int]]]:
        """The symbols of ``word`` before any merge, with the characters each spans."""
        vocab, byte_ids = self._vocab, self._byte_ids
        unk_id = vocab[self.unk_token] if self.unk_token is not None else None
        ids: list[int] = []
        spans: list[tuple[int, int]] = []
        unk: tuple[int, int] | None = None  # the unknown run waiting: (start, end)
        for i, c in enumerate(word):
            if c in vocab:
                if unk is not None:
                    ids.append(unk_id)
                    spans.append(unk)
                    unk = None
                ids.append(vocab[c])
                spans.append((i, i + 1))
                continue
            pieces = [byte_ids[b] for b in c.encode("utf-8")] if self.byte_fallback else [None]
            if None not in pieces:  # tokenizers writes them before a waiting unknown run
                ids += pieces
                spans += [(i, i + 1)] * len(pieces)
            elif unk_id is not None:
                if unk is not None and not self.fuse_unk:
                    ids.append(unk_id)
                    spans.append(unk)
                    unk = None
                unk = (unk[0] if unk is not None else i, i + 1)
        if unk is not None:
            ids.append(unk_id)
            spans.append(unk)
        return ids, spans

    def _merge(self, words: list[str]) -> tuple[list[list[int]], list[list[tuple[int, int]]]]:
        """Each word's ids, and the characters each id spans, in one kernel call."""
        initial = [self._initial(w) for w in words]
        lengths = np.fromiter((len(ids) for ids, _ in initial), dtype=np.int64, count=len(words))
        init = np.fromiter(
            (i for ids, _ in initial for i in ids), dtype=np.int64, count=int(lengths.sum())
        )  # (N,)
        ids, first, ends = encode_symbols(init, np.cumsum(lengths), self._pairs)
        ids, first, bounds = ids.tolist(), first.tolist(), [0, *ends.tolist()]
        out_ids, out_spans = [], []
        for w, (_, spans) in enumerate(initial):
            a, b = bounds[w], bounds[w + 1]
            starts = first[a:b]
            stops = [*starts[1:], len(spans)]
            out_ids.append(ids[a:b])
            out_spans.append(
                [(spans[s][0], spans[e - 1][1]) for s, e in zip(starts, stops, strict=True)]
            )
        return out_ids, out_spans

    def _whole(self, word: str) -> int | None:
        return self._vocab.get(word) if self.ignore_merges else None

    def _encode_words(self, words: list[str]) -> list[tuple[int, ...]]:
        rest = [w for w in words if self._whole(w) is None]
        merged = dict(zip(rest, self._merge(rest)[0], strict=True)) if rest else {}
        return [
            (self._whole(w),) if self._whole(w) is not None else tuple(merged[w]) for w in words
        ]

    def _segment_word(self, word: str) -> list[tuple[int, str, int, int]]:
        if self._whole(word) is not None:
            return [(self._vocab[word], word, 0, len(word))]
        ids, spans = self._merge([word])
        return [(i, self._id_to_token[i], a, b) for i, (a, b) in zip(ids[0], spans[0], strict=True)]

    # ------------------------------------------------------------------ files
    _files = FILES  # where its files are read and written (TokenizerJsonFiles)

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters."""
        return {
            "unk_token": self.unk_token,
            "byte_fallback": self.byte_fallback,
            "fuse_unk": self.fuse_unk,
            "ignore_merges": self.ignore_merges,
        }

    def __repr__(self) -> str:
        size = f"{len(self)} tokens" if self._fitted else "not fitted"
        return f"ByteFallbackBPE({size})"
