"""Tokenize: split a (normalized) string into a list of token strings.

Two tokenizers without learned state live here; the learned subword tokenizer is
:class:`rowbook.text.ByteLevelBPE`. Both are callables ``str -> list[str]``.

* :class:`WordTokenizer` finds the words of a text with a regular expression (the
  ``regex`` package, so ``\\w`` covers every script) or splits on whitespace.
* :class:`CharTokenizer` returns code points, or grapheme clusters (what a reader
  sees as one character: ``"e"`` plus a combining accent, a flag emoji).

Examples
--------
>>> WordTokenizer()("The cat, it's 3.5 m long!")
['The', 'cat', ',', "it's", '3', '.', '5', 'm', 'long', '!']
>>> WordTokenizer(pattern=None)("The cat, it's")
['The', 'cat,', "it's"]
>>> [len(c) for c in CharTokenizer()("e\\u0301!")]
[1, 1, 1]
>>> [len(c) for c in CharTokenizer(graphemes=True)("e\\u0301!")]
[2, 1]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import regex

from rowbook.checks import InputTypeError

__all__ = ["DEFAULT_WORD_PATTERN", "TYPOGRAPHIC_QUOTES", "CharTokenizer", "WordTokenizer"]

#: Runs of word characters (letters, marks, digits, underscore) that may contain inner
#: apostrophes (``it's``, ``rock'n'roll``), or one other non-space character with its
#: combining marks: every punctuation mark and symbol becomes a token of its own.
DEFAULT_WORD_PATTERN = r"\w+(?:['’]\w+)*|[^\w\s]\p{M}*"
#: Typographic apostrophes and quotes, and the ASCII character a regex tokenizer reads each
#: as (``whale’s`` is the word ``whale's``; ``“`` and ``”`` are ``"``).
TYPOGRAPHIC_QUOTES = {
    "\u2019": "'",  # ’ right single quotation mark: the usual typeset apostrophe
    "\u2018": "'",  # ‘ left single quotation mark
    "\u201b": "'",  # ‛ single high-reversed-9 quotation mark
    "\u02bc": "'",  # ʼ modifier letter apostrophe
    "\uff07": "'",  # ＇ fullwidth apostrophe
    "\u201c": '"',  # “ left double quotation mark
    "\u201d": '"',  # ” right double quotation mark
    "\u201e": '"',  # „ double low-9 quotation mark
    "\u201f": '"',  # ‟ double high-reversed-9 quotation mark
    "\uff02": '"',  # ＂ fullwidth quotation mark
}
_TYPOGRAPHIC = regex.compile("[" + "".join(TYPOGRAPHIC_QUOTES) + "]")
_ASCII_QUOTES = str.maketrans(TYPOGRAPHIC_QUOTES)


def _check_text(text: object, owner: str) -> str:
    if not isinstance(text, str):
        raise InputTypeError(f"{owner} expects a str, got {type(text).__name__}")
    return text


class WordTokenizer:
    """Split text into words with a regular expression, or on whitespace.

    Parameters
    ----------
    pattern : str or None, default :data:`DEFAULT_WORD_PATTERN`
        A ``regex``-package pattern whose matches are the tokens (text between matches
        is dropped). ``None`` splits on runs of whitespace like :meth:`str.split`.
    ascii_quotes : bool, default True
        With a pattern, read typographic apostrophes and quotes as their ASCII characters
        first (:data:`TYPOGRAPHIC_QUOTES`): ``whale’s`` and ``whale's`` are one word, ``“``
        and ``”`` are ``"``. Splitting on whitespace (``pattern=None``) keeps the text as
        it is, as :meth:`str.split` does.

    Examples
    --------
    >>> WordTokenizer()("The whale’s “eye”")
    ['The', "whale's", '"', 'eye', '"']
    >>> tok = WordTokenizer(pattern=r"[a-z]+")
    >>> tok("the cat sat on 2 mats")
    ['the', 'cat', 'sat', 'on', 'mats']
    >>> tok.detokenize(['the', 'cat'])
    'the cat'
    """

    def __init__(
        self, *, pattern: str | None = DEFAULT_WORD_PATTERN, ascii_quotes: bool = True
    ) -> None:
        if pattern is not None and not isinstance(pattern, str):
            raise InputTypeError(f"pattern must be a str or None, got {type(pattern).__name__}")
        if not isinstance(ascii_quotes, bool):
            raise InputTypeError(f"ascii_quotes must be True or False, got {ascii_quotes!r}")
        self.ascii_quotes = ascii_quotes
        try:
            self._regex = None if pattern is None else regex.compile(pattern)
        except regex.error as err:
            raise ValueError(
                f"pattern {pattern!r} is not a valid regular expression: {err}"
            ) from None
        self.pattern = pattern

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``, in order."""
        text = _check_text(text, "WordTokenizer")
        if self._regex is None:
            return text.split()
        if self.ascii_quotes and _TYPOGRAPHIC.search(text):
            text = text.translate(_ASCII_QUOTES)
        return self._regex.findall(text)

    __call__ = tokenize

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Join tokens with single spaces (the original spacing is not kept)."""
        return " ".join(tokens)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready parameters (``WordTokenizer(**d)`` rebuilds it)."""
        return {"pattern": self.pattern, "ascii_quotes": self.ascii_quotes}

    def __repr__(self) -> str:
        quotes = "" if self.ascii_quotes else ", ascii_quotes=False"
        return f"WordTokenizer(pattern={self.pattern!r}{quotes})"


class CharTokenizer:
    """Split text into characters: code points, or extended grapheme clusters.

    Parameters
    ----------
    graphemes : bool, default False
        Return user-perceived characters (regex ``\\X``) instead of code points, so a
        base letter keeps its combining marks and an emoji sequence stays whole.

    Examples
    --------
    >>> CharTokenizer()("cat")
    ['c', 'a', 't']
    >>> CharTokenizer().detokenize(['c', 'a', 't'])
    'cat'
    """

    def __init__(self, *, graphemes: bool = False) -> None:
        if not isinstance(graphemes, bool):
            raise InputTypeError(f"graphemes must be a bool, got {graphemes!r}")
        self.graphemes = graphemes

    def tokenize(self, text: str) -> list[str]:
        """The characters of ``text``; joining them gives ``text`` back exactly."""
        text = _check_text(text, "CharTokenizer")
        return regex.findall(r"\X", text) if self.graphemes else list(text)

    __call__ = tokenize

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Concatenate the characters: the exact inverse of :meth:`tokenize`."""
        return "".join(tokens)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready parameters (``CharTokenizer(**d)`` rebuilds it)."""
        return {"graphemes": self.graphemes}

    def __repr__(self) -> str:
        return f"CharTokenizer(graphemes={self.graphemes})"
