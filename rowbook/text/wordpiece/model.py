"""WordPiece: greedy longest-match-first subwords, BERT's tokenizer (Schuster and Nakajima 2012;
Wu et al. 2016), encoding as ``tokenizers``' ``WordPiece`` model does.

A word (after :class:`~rowbook.text.bert.BertNormalizer` and
:class:`~rowbook.text.bert.BertPreTokenizer`) is cut from the left: take the longest
vocabulary entry the rest of the word starts with, writing ``continuing_subword_prefix``
(``"##"``) in front of every piece but the first, and go on after it. If some position has
no entry, or the word is longer than ``max_input_chars_per_word`` characters, the whole
word is one ``unk_token``. The template adds ``[CLS]`` and ``[SEP]`` around each text.

``tokenizers`` tries every candidate end from the longest down, one dictionary lookup each;
the kernel here walks two tries (:mod:`rowbook.text.trie`), one of all entries for the first
piece and one of the ``"##"`` entries without their prefix for the others, and keeps the last
entry it passed: the same longest match in one pass over the word.
:func:`encode_word_reference` is ``tokenizers``' loop, and the tests hold the kernel to it.

Examples
--------
>>> vocab = ["[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "aff", "##a", "!"]
>>> wp = WordPiece.from_vocab_list(vocab)
>>> wp.encode("Unaffable!").tokens
['[CLS]', 'un', '##aff', '##able', '!', '[SEP]']
>>> wp.encode("unaffable!", add_special_tokens=False).offsets
[(0, 2), (2, 5), (5, 9), (9, 10)]
>>> wp.tokenize("unknowable"), wp.decode(wp.encode("Unaffable!").ids)
(['[UNK]'], 'unaffable!')
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numba
import numpy as np

from rowbook.checks import InputTypeError, check_int
from rowbook.text.bert import BertNormalizer, BertPreTokenizer
from rowbook.text.hf_files import TokenizerJsonFiles
from rowbook.text.postprocess import Template, WordPieceDecoder
from rowbook.text.subword_pipeline import SubwordTokenizer
from rowbook.text.trie import build_trie, codepoints, longest_prefix
from rowbook.text.wordpiece.files import FILES
from rowbook.text.wordpiece.train import fit_wordpiece

__all__ = [
    "BERT_NORMALIZER",
    "BERT_PRE_TOKENIZER",
    "WordPiece",
    "encode_word_reference",
    "encode_words",
]

#: BERT's defaults (uncased): the normalizer and pre-tokenizer a :class:`WordPiece` starts with.
BERT_NORMALIZER = BertNormalizer()
BERT_PRE_TOKENIZER = BertPreTokenizer()


@numba.njit(cache=True, nogil=True)
def _encode_kernel(data, starts, first, rest, unk_id, max_chars):
    """Pieces of each word ``data[starts[w]:starts[w + 1]]``: ids, character lengths, bounds."""
    n_words = starts.size - 1
    ids = np.empty(max(data.size, n_words), np.int64)  # at most one piece per character
    lengths = np.empty(ids.size, np.int64)
    bounds = np.zeros(n_words + 1, np.int64)
    o = 0
    for w in range(n_words):
        s, e = starts[w], starts[w + 1]
        p, k, bad = s, o, e - s > max_chars
        while p < e and not bad:
            length, token = longest_prefix(first if p == s else rest, data, p, e)
            if token < 0:
                bad = True
                break
            ids[k], lengths[k] = token, length
            k += 1
            p += length
        if bad:  # the whole word is unknown
            ids[o], lengths[o] = unk_id, e - s
            k = o + 1
        o = k
        bounds[w + 1] = o
    return ids[:o], lengths[:o], bounds


def encode_words(
    words: Sequence[str], tries: tuple, unk_id: int, max_chars: int
) -> tuple[np.ndarray, ...]:
    """``(ids, lengths, bounds)``: the pieces of word ``w`` are ``ids[bounds[w]:bounds[w + 1]]``,
    each ``lengths[...]`` characters long. ``tries`` are the first-piece and continuation tries."""
    starts = np.zeros(len(words) + 1, dtype=np.int64)  # (W + 1,)
    np.cumsum(np.fromiter(map(len, words), dtype=np.int64, count=len(words)), out=starts[1:])
    return _encode_kernel(codepoints("".join(words)), starts, tries[0], tries[1], unk_id, max_chars)


def encode_word_reference(
    word: str, vocab: Mapping[str, int], unk_token: str, prefix: str = "##", max_chars: int = 100
) -> list[tuple[str, int, int]]:
    """``tokenizers``' ``WordPiece::tokenize``: ``(token, start, end)`` of each piece.

    Examples
    --------
    >>> encode_word_reference("unaffable", {"un": 0, "##aff": 1, "##able": 2}, "[UNK]")
    [('un', 0, 2), ('##aff', 2, 5), ('##able', 5, 9)]
    """
    if len(word) > max_chars:
        return [(unk_token, 0, len(word))]
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else prefix + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if end == start:
            return [(unk_token, 0, len(word))]
        pieces.append((piece, start, end))
        start = end
    return pieces


class WordPiece(SubwordTokenizer, TokenizerJsonFiles):
    """A WordPiece tokenizer (BERT's), learned with :meth:`fit` or read from a file.

    Parameters
    ----------
    unk_token : str, default "[UNK]"
        The token of a word that cannot be split (it must be in the vocabulary).
    continuing_subword_prefix : str, default "##"
        Written in front of every piece that does not start a word.
    max_input_chars_per_word : int, default 100
        Longer words are one ``unk_token``.
    normalizer : BertNormalizer or another normalizer or None, default BertNormalizer()
        Applied to the text first (:mod:`rowbook.text.components` lists the others a
        ``tokenizer.json`` may hold).
    pre_tokenizer : default BertPreTokenizer()
        Cuts the normalized text into words.
    cls_token, sep_token : str or None, default "[CLS]", "[SEP]"
        Put before and after each text by :meth:`encode` when both are in the vocabulary
        (``add_special_tokens=False`` leaves them out).
    cache_size : int, default 100_000
        Words whose ids are kept; the cache is emptied when full.
    """

    def __init__(
        self,
        *,
        unk_token: str = "[UNK]",
        continuing_subword_prefix: str = "##",
        max_input_chars_per_word: int = 100,
        normalizer: Any = BERT_NORMALIZER,
        pre_tokenizer: Any = BERT_PRE_TOKENIZER,
        cls_token: str | None = "[CLS]",
        sep_token: str | None = "[SEP]",
        cache_size: int = 100_000,
    ) -> None:
        for name, value in (
            ("unk_token", unk_token),
            ("continuing_subword_prefix", continuing_subword_prefix),
        ):
            if not isinstance(value, str) or (name == "unk_token" and not value):
                raise InputTypeError(f"{name} must be a non-empty str, got {value!r}")
        for name, value in (("cls_token", cls_token), ("sep_token", sep_token)):
            if value is not None and (not isinstance(value, str) or not value):
                raise InputTypeError(f"{name} must be a non-empty str or None, got {value!r}")
        self.unk_token, self.continuing_subword_prefix = unk_token, continuing_subword_prefix
        self.max_input_chars_per_word = check_int(
            "max_input_chars_per_word", max_input_chars_per_word, 1
        )
        self.normalizer, self.pre_tokenizer = normalizer, pre_tokenizer
        self.cls_token, self.sep_token = cls_token, sep_token
        self.cache_size = check_int("cache_size", cache_size, 0)
        self.decoder = WordPieceDecoder(continuing_subword_prefix)

    # --------------------------------------------------------------- the model
    def _set_model(
        self,
        tokens: Sequence[str],
        added: Sequence[tuple[str, bool]] = (),
        template: Template | bool | None = True,
        model_size: int | None = None,
    ) -> None:
        """Install the vocabulary ``tokens`` (id order), of which the first ``model_size`` (default
        all) are the model's: tokens added after training are matched in the raw text only, as
        in ``tokenizers``. ``template=True`` builds ``[CLS] $A [SEP]`` when both are in it."""
        self._model_size = len(tokens) if model_size is None else model_size
        self._install(tokens, added)
        if template is True:
            edges = (self.cls_token, self.sep_token)
            template = (
                Template((edges[0],), (edges[1],), {t: self._vocab[t] for t in edges})
                if all(t is not None and t in self._vocab for t in edges)
                else None
            )
        self.template = template

    def _on_install(self) -> None:
        prefix, model = self.continuing_subword_prefix, self._id_to_token[: self._model_size]
        rest = [(t[len(prefix) :], i) for i, t in enumerate(model) if t.startswith(prefix)]
        self._tries = (build_trie(model), build_trie([t for t, _ in rest], [i for _, i in rest]))
        unk = self._vocab.get(self.unk_token, -1)
        self._unk_id = unk if unk < self._model_size else -1  # the model's own, as tokenizers

    def _encode_words(self, words: list[str]) -> list[tuple[int, ...]]:
        ids, _, bounds = encode_words(
            words, self._tries, self._unk_id, self.max_input_chars_per_word
        )
        if self._unk_id < 0 and ids.size and (ids < 0).any():
            word = words[int(np.searchsorted(bounds, np.flatnonzero(ids < 0)[0], side="right")) - 1]
            raise ValueError(
                f"the word {word!r} cannot be split and unk_token {self.unk_token!r} is "
                "not in the vocabulary; add it (add_special_tokens) or set unk_token"
            )
        ids, bounds = ids.tolist(), bounds.tolist()
        return [tuple(ids[bounds[w] : bounds[w + 1]]) for w in range(len(words))]

    def _segment_word(self, word: str) -> list[tuple[int, str, int, int]]:
        ids, lengths, _ = encode_words(
            [word], self._tries, self._unk_id, self.max_input_chars_per_word
        )
        pieces, start = [], 0
        for i, n in zip(ids.tolist(), lengths.tolist(), strict=True):
            pieces.append((i, self._id_to_token[i], start, start + n))
            start += n
        return pieces

    # --------------------------------------------------------------- training and files
    fit = fit_wordpiece  # the trainer, its parameters in its own signature (``self`` its first)

    @classmethod
    def from_vocab_list(cls, tokens: Sequence[str], **params: Any) -> WordPiece:
        """A tokenizer of the vocabulary ``tokens`` (id order); ``params`` as the constructor's.
        Tokens in square brackets (``[CLS]``) become special tokens."""
        wp = cls(**params)
        specials = [t for t in tokens if len(t) > 2 and t[0] == "[" and t[-1] == "]"]
        wp._set_model(tokens, [(t, True) for t in specials])
        return wp

    @classmethod
    def from_vocab(cls, path: str | os.PathLike, **params: Any) -> WordPiece:
        """Read BERT's ``vocab.txt`` (one token per line, the line number is the id), as
        ``tokenizers.BertWordPieceTokenizer(path)`` does."""
        from rowbook.text.wordpiece.files import read_vocab_txt

        return cls.from_vocab_list(read_vocab_txt(path), **params)

    def save_vocab(self, path: str | os.PathLike) -> None:
        """Write ``vocab.txt`` (atomic)."""
        from rowbook.text.wordpiece.files import write_vocab_txt

        self._check_fitted()
        write_vocab_txt(self._id_to_token, path)

    _files = FILES  # where its files are read and written (TokenizerJsonFiles)

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters."""
        return {
            "unk_token": self.unk_token,
            "continuing_subword_prefix": self.continuing_subword_prefix,
            "max_input_chars_per_word": self.max_input_chars_per_word,
            "normalizer": self.normalizer,
            "pre_tokenizer": self.pre_tokenizer,
            "cls_token": self.cls_token,
            "sep_token": self.sep_token,
            "cache_size": self.cache_size,
        }

    def __repr__(self) -> str:
        return f"WordPiece({len(self)} tokens)" if self._fitted else "WordPiece(not fitted)"
