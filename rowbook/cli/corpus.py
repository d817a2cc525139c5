"""How the commands that train word vectors read CORPUS: ``--tokenizer``, ``--keep-case``,
and where its word ids go (``--spill-dir``, ``--no-spill``).

``rowbook train word2vec|glove|fasttext`` and ``rowbook cooccur`` read their corpus the same
way, so that counts made by one are the counts the other would make: lines lower-cased and
split into words, punctuation dropped (as gensim's ``simple_preprocess`` reads them), unless
``--keep-case`` or ``--tokenizer whitespace``. Where the corpus's ids are kept is decided once
per command, as the library decides it for files (:mod:`rowbook.data.spill`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from rowbook.cli._common import show_progress
from rowbook.cli.text import Normalized

__all__ = ["WORD_PATTERN", "Corpus", "add_spill_options", "corpus_spill_dir", "train_tokenizer"]

#: ``--tokenizer word`` of the train commands: runs of letters and digits with inner
#: apostrophes (a typographic one read as ``'``: ``whale’s`` is ``whale's``); punctuation is
#: dropped (gensim's ``simple_preprocess`` keeps letters only).
WORD_PATTERN = r"\w+(?:['’]\w+)*"


def train_tokenizer(name: str, *, lower: bool) -> Any:
    """The tokenizer of ``--tokenizer word|whitespace``, lower-casing first when ``lower``.

    >>> train_tokenizer("word", lower=True).tokenize("The whale, the Whale’s eye.")
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


def add_spill_options(parser: argparse.ArgumentParser, help: str) -> None:
    """``--spill-dir DIR`` (with ``help``) and ``--no-spill``, one or the other."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--spill-dir", metavar="DIR", help=help)
    group.add_argument(
        "--no-spill",
        action="store_true",
        help="keep the corpus's word ids in memory, however large the corpus",
    )


def corpus_spill_dir(args: argparse.Namespace) -> Any:
    """Where the word ids of CORPUS go: ``--spill-dir DIR``, memory with ``--no-spill`` (False),
    else as :func:`rowbook.data.spill.choose_spill` decides from the files' size, saying so on
    standard error (unless ``--quiet``)."""
    from rowbook.data.spill import choose_spill

    choice = choose_spill(args.corpus, False if args.no_spill else args.spill_dir)
    note = choice.said(keep="--no-spill", choose="--spill-dir DIR")
    if note is not None and not args.quiet:
        print(f"{args.prog}: {note}", file=sys.stderr)
    return False if choice.folder is None else choice.folder
