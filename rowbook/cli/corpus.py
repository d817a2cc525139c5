"""How the commands that train word vectors read CORPUS: ``--tokenizer``, ``--keep-case``,
and where its word ids go (``--spill-dir``, ``--no-spill``).

``rowbook train word2vec|glove|fasttext`` and ``rowbook cooccur`` read their corpus the same
way, so that counts made by one are the counts the other would make: lines lower-cased and
split into words, punctuation dropped (as gensim's ``simple_preprocess`` reads them), unless
``--keep-case`` or ``--tokenizer whitespace``. What CORPUS is, and how it is read, is decided
once per command (:func:`corpus_of`, a :class:`~rowbook.corpus_source.CorpusSource` the
models take as it is); where its ids are kept too, as the library decides it for files
(:mod:`rowbook.data.spill`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rowbook.cli._common import given_corpus
from rowbook.cli.options import add_option
from rowbook.cli.text import Normalized
from rowbook.corpus_source import CorpusSource

__all__ = [
    "WORD_PATTERN",
    "add_spill_options",
    "corpus_of",
    "corpus_spill_dir",
    "fit_counted_matrix",
    "train_tokenizer",
]

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


def corpus_of(args: argparse.Namespace) -> CorpusSource:
    """CORPUS as the commands that train word vectors read it, decided once at dispatch:
    the files (checked, folders expanded), ``--tokenizer`` / ``--keep-case``,
    ``--unicode-errors``, and a bar unless ``--quiet``. The models and the counting on Dask
    take it as it is (:class:`~rowbook.corpus_source.CorpusSource`)."""
    tokenizer = train_tokenizer(args.tokenizer, lower=args.lower)
    return given_corpus(
        args.corpus, tokenizer=tokenizer, errors=args.unicode_errors, progress=not args.quiet
    )


def add_spill_options(parser: argparse.ArgumentParser, help: str) -> None:
    """``--spill-dir DIR`` (with ``help``) and ``--no-spill``, one or the other."""
    group = parser.add_mutually_exclusive_group()
    add_option(group, "--spill-dir", help, metavar="DIR")
    group.add_argument(
        "--no-spill",
        action="store_true",
        help="keep the corpus's word ids in memory, however large the corpus",
    )


def corpus_spill_dir(args: argparse.Namespace, source: CorpusSource) -> Any:
    """Where the word ids of ``source`` (CORPUS) go: ``--spill-dir DIR``, memory with
    ``--no-spill`` (False), else as :func:`rowbook.data.spill.spill_choice` decides from the
    files' size, saying so on standard error (unless ``--quiet``)."""
    from rowbook.data.spill import spill_choice

    choice = spill_choice(source, False if args.no_spill else args.spill_dir)
    note = choice.said(keep="--no-spill", choose="--spill-dir DIR")
    if note is not None and not args.quiet:
        print(f"{args.prog}: {note}", file=sys.stderr)
    return False if choice.folder is None else choice.folder


def fit_counted_matrix(model: Any, counted: Any, args: argparse.Namespace) -> None:
    """Fit GloVe ``model`` on a counted co-occurrence matrix (a
    :class:`~rowbook.data.cooccurrence_file.CountedCooccurrence`: a file of ``rowbook
    cooccur``, or counts made on ``--scheduler``), with ``--checkpoint``, and ``--spill-dir``
    for its shuffle."""
    model.fit_cooccurrence(
        counted.matrix,
        counted.keys,
        counts=counted.counts,
        checkpoint=args.checkpoint,
        spill_dir=args.spill_dir or None,
    )
