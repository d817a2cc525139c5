"""Text to words before any merge: special tokens cut out, the prefix space, the pattern's split.

Merges never cross a word: :class:`PreTokenizer` cuts a text into the pieces between its
unsplit tokens (special and added tokens, found leftmost-longest), puts a space before a
piece that does not start with one when ``add_prefix_space`` (as ``tokenizers``' ``ByteLevel``
pre-tokenizer does) and splits each piece with the pattern (GPT-2's by default). Text the
pattern skips forms words too, as in ``tokenizers``. Both halves of a byte-level BPE use
it: counting words for training (:meth:`PreTokenizer.count_words`, run on every core by
:mod:`rowbook.text.bpe.count`) and encoding (:mod:`rowbook.text.bpe.encoder`).

Examples
--------
>>> pre = PreTokenizer()
>>> pre.split("Hello world, it's 3.5!")
['Hello', ' world', ',', ' it', "'s", ' 3', '.', '5', '!']
>>> pre.count_words(["the cat<eot>the hat"], ["<eot>"])
Counter({'the': 2, ' cat': 1, ' hat': 1})
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Container, Iterable, Iterator, Sequence
from typing import Any

import regex

from rowbook.checks import InputTypeError
from rowbook.text.bpe import presplit
from rowbook.text.bpe.bytelevel import GPT2_ASCII_PATTERN, GPT2_PATTERN
from rowbook.text.bpe.options import special_regex
from rowbook.text.utf8 import check_utf8
from rowbook.text.word_count_runs import WordBytes, word_bytes

__all__ = ["PreTokenizer", "check_str", "check_texts"]


def check_str(text: object, name: str = "text") -> str:
    """``text`` if it is a ``str``, else a ``TypeError`` naming ``name`` and the type found."""
    if not isinstance(text, str):
        raise InputTypeError(f"{name} must be a str, got {type(text).__name__}")
    return text


def check_texts(texts: object) -> list[str]:
    """``encode_batch``'s ``texts`` as a list: a ``str`` alone or an item that is not one is
    refused (the types read in one pass in C, not a call for each text)."""
    if isinstance(texts, str):
        raise InputTypeError("encode_batch expects a sequence of str; for one text use encode()")
    texts = list(texts)
    if set(map(type, texts)) - {str}:  # a subclass of str passes check_str
        texts = [check_str(t) for t in texts]
    return texts


class PreTokenizer:
    """The pre-split of a byte-level BPE: ``pattern`` (``regex`` syntax) and the prefix space.

    Parameters
    ----------
    pattern : str, default :data:`~rowbook.text.bpe.bytelevel.GPT2_PATTERN`
        The words are its matches; text between matches forms words of its own. GPT-2's
        pattern runs ASCII pieces through an equivalent pattern for ``re``, which is faster.
    add_prefix_space : bool, default False
        Put a space before each piece of text that does not start with one.
    """

    def __init__(self, pattern: str = GPT2_PATTERN, add_prefix_space: bool = False) -> None:
        try:
            self._split = regex.compile(check_str(pattern, "pattern"))
            self._split_ascii = re.compile(GPT2_ASCII_PATTERN) if pattern == GPT2_PATTERN else None
        except regex.error as err:
            raise ValueError(
                f"pattern {pattern!r} is not a valid regular expression: {err}"
            ) from None
        self.pattern, self.add_prefix_space = pattern, bool(add_prefix_space)
        self.normalizer: Any = None  # a tokenizer.json normalizer (NFC), run on each piece

    @property
    def compiled(self) -> bool:
        """Whether the pattern is GPT-2's, which :mod:`rowbook.text.bpe.presplit` cuts compiled."""
        return self._split_ascii is not None

    def split(self, piece: str) -> list[str]:
        """The words of ``piece``, a text without unsplit tokens."""
        fast = self._split_ascii is not None and piece.isascii()  # the same pieces, sooner
        words = (self._split_ascii if fast else self._split).findall(piece)
        if sum(map(len, words)) == len(piece):
            return words
        out, end = [], 0  # text the pattern skips forms pieces too, as in tokenizers
        for m in self._split.finditer(piece):
            out += [piece[end : m.start()], m.group()] if m.start() > end else [m.group()]
            end = m.end()
        return [w for w in (*out, piece[end:]) if w]

    def pieces(
        self, text: str, cutter: regex.Pattern | None, unsplit: Container[str]
    ) -> Iterator[tuple[str, str | None, bool]]:
        """``(piece, token or None, prefixed)``: the ``unsplit`` tokens that ``cutter`` cuts
        out (``token`` is the piece), and the text between them, normalized, with its prefix
        space."""
        parts = cutter.split(text) if cutter is not None else [text]
        for part in parts:
            if part in unsplit:
                yield part, part, False
                continue
            if self.normalizer is not None:
                part = self.normalizer(part)
            if part:
                prefixed = self.add_prefix_space and not part.startswith(" ")
                yield (" " + part if prefixed else part), None, prefixed

    def words_of(self, texts: Sequence[str]) -> list[list[str]]:
        """The words of each text, for a model with no unsplit tokens and no prefix space."""
        for text in itertools.filterfalse(str.isascii, texts):
            check_utf8(text)
        if self._split_ascii is not None:
            # GPT-2's pattern puts every character in a word; ASCII texts go to its twin for re
            ascii_findall, findall = self._split_ascii.findall, self._split.findall
            return [ascii_findall(t) if t.isascii() else findall(t) for t in texts]
        words_of = list(map(self._split.findall, texts))
        if sum(map(len, itertools.chain.from_iterable(words_of))) == sum(map(len, texts)):
            return words_of  # the pattern skipped no character of any text
        return [self.split(text) for text in texts]

    def count_words(self, texts: Iterable[str], specials: Sequence[str] = ()) -> Counter[str]:
        """The words of ``texts`` and their counts, in first-sighting order (``specials`` cut
        out and not counted): the first pass of training. GPT-2's pattern is cut and counted
        compiled (:func:`rowbook.text.bpe.presplit.count_words`), with the same result."""
        pieces = self._unsplit_pieces(texts, specials)
        if self.compiled:
            return presplit.count_words(pieces)
        counts: Counter[str] = Counter()
        for piece in pieces:
            counts.update(self.split(piece))
        return counts

    def count_word_bytes(self, texts: Iterable[str], specials: Sequence[str] = ()) -> WordBytes:
        """:meth:`count_words` as UTF-8 bytes (what a count within ``memory=`` adds up); with
        GPT-2's pattern, no Python object per word."""
        if self.compiled:
            return presplit.count_word_bytes(self._unsplit_pieces(texts, specials))
        return word_bytes(self.count_words(texts, specials))

    def _unsplit_pieces(self, texts: Iterable[str], specials: Sequence[str]) -> Iterator[str]:
        """The pieces of ``texts`` between the ``specials``, which are left out."""
        cutter = special_regex(specials)
        return (
            piece
            for text in texts
            for piece, special, _ in self.pieces(check_str(text), cutter, specials)
            if special is None
        )
