"""How the commands that train word vectors read CORPUS: ``--tokenizer``, ``--keep-case``.

``rowbook train word2vec|glove|fasttext`` and ``rowbook cooccur`` read their corpus the same
way, so that counts made by one are the counts the other would make: lines lower-cased and
split into words, punctuation dropped (as gensim's ``simple_preprocess`` reads them), unless
``--keep-case`` or ``--tokenizer whitespace``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from typing import Any

from rowbook.cli._common import show_progress
from rowbook.cli.text import Normalized

__all__ = ["WORD_PATTERN", "Corpus", "train_tokenizer"]

#: ``--tokenizer word`` of the train commands: runs of letters and digits with inner
#: apostrophes; punctuation is dropped (gensim's ``simple_preprocess`` keeps letters only).
WORD_PATTERN = r"\w+(?:['’]\w+)*"


def train_tokenizer(name: str, *, lower: bool) -> Any:
    """The tokenizer of ``--tokenizer word|whitespace``, lower-casing first when ``lower``.

    >>> train_tokenizer("word", lower=True).tokenize("The whale, the Whale's eye.")
    ['the', 'whale', 'the', "whale's", 'eye']
    >>> train_tokenizer("whitespace", lower=False).tokenize("The whale, the Whale's eye.")
    ['The', 'whale,', 'the', "Whale's", 'eye.']
    """
    from rowbook.text import Normalizer, WordTokenizer

    tokenizer = WordTokenizer(pattern=None if name == "whitespace" else WORD_PATTERN)
    return Normalized(Normalizer(case="lower"), tokenizer) if lower else tokenizer


class Corpus:
    """The CORPUS files as sentences, read by :func:`rowbook.data.iter_sentences` (the one
    corpus reader: files, folders, ``-``, compressed), counting the lines and tokens of the
    last pass."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.sources, self.lines, self.tokens = args.corpus, 0, 0
        self.tokenizer = train_tokenizer(args.tokenizer, lower=args.lower)
        self.progress = show_progress(args.corpus, not args.quiet)
        self.errors = args.unicode_errors

    def __iter__(self) -> Iterator[Sequence[str]]:
        from rowbook.data import iter_sentences

        self.lines, self.tokens = 0, 0
        sentences = iter_sentences(
            self.sources, self.tokenizer, errors=self.errors, show_progress=self.progress
        )
        for tokens in sentences:
            self.lines, self.tokens = self.lines + 1, self.tokens + len(tokens)
            yield tokens
