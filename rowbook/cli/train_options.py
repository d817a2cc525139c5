"""The parsers of ``rowbook train word2vec|glove|fasttext|nplm`` (run by :mod:`rowbook.cli.train`)
and ``train classifier`` (:mod:`rowbook.cli.classify`).

Each command has the options of reading and of the run (CORPUS, ``-o``, checkpoints,
``--init``, ``--scheduler``) and its model's options, from the one table of
:mod:`rowbook.cli.options` read against the model's signature. Option abbreviations are
off: ``--to`` is not ``--tokenizer``.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Collection
from typing import Any

from rowbook.cli._common import (
    HelpFormatter,
    add_command,
    add_corpus,
    add_lower,
    add_sample_options,
    add_scheduler,
    add_training_run,
    add_unicode_errors,
)
from rowbook.cli.classify import add_train_classifier
from rowbook.cli.corpus import add_spill_options
from rowbook.cli.options import add_model_options, add_option
from rowbook.cli.train import run_nplm, run_word_vectors

__all__ = ["register"]

#: The one-line help of each model's command (``rowbook train --help`` lists them).
_HELP = {
    "word2vec": "skip-gram / CBOW word vectors (Mikolov et al. 2013)",
    "glove": "GloVe word vectors from co-occurrence counts (Pennington et al. 2014)",
    "fasttext": "subword word vectors: words as bags of character n-grams (Bojanowski et al. 2017)",
    "nplm": "a neural language model over characters or words (Bengio et al. 2003)",
    "classifier": "fastText's text classifier: labelled lines, mean of word and n-gram rows",
}


def _run_options(p: argparse.ArgumentParser, *, word_vectors: bool) -> None:
    """CORPUS, -o OUT, reading, checkpoints, and (word vectors) continuing a saved model."""
    add_corpus(p)
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the table")
    add_unicode_errors(p)
    if word_vectors:
        add_option(
            p,
            "--tokenizer",
            "word: runs of letters and digits (inner apostrophes kept), punctuation "
            "dropped; whitespace: split on spaces only, tokens as written",
            default="word",
            choices=("word", "whitespace"),
        )
        p.add_argument(
            "--keep-case",
            dest="lower",
            action="store_false",
            help="keep upper case (default: lower-case the text first)",
        )
        p.add_argument(
            "--init",
            metavar="MODEL",
            help="continue from a saved model (--save-model): "
            "add the corpus's new words, then train --epochs more",
        )
        p.add_argument(
            "--save-model",
            metavar="FILE",
            help="also save the whole model to FILE (.npz), to query, load or continue with --init",
        )
        add_scheduler(
            p,
            "Only the counting runs there: the training epochs stay on this "
            "machine (their updates hit shared tables every few microseconds).",
        )
        add_spill_options(
            p,
            "keep the corpus's word ids in a temporary file in DIR (4 bytes a word) instead "
            "of memory (default: there when the files' ids would take more than 1/256 of the "
            "available memory, in the system's temporary folder); for GloVe with --memory, "
            "also its counting runs and shuffled records",
        )
    else:
        add_lower(p)
    add_training_run(p, "save the model here after every epoch (a saved model, as --save-model)")


#: The word-vector commands, in the order ``rowbook train --help`` lists them: the model's class
#: (its name in :mod:`rowbook.models`, which imports only the module of the one asked for),
#: the description and the examples.
_WORD_VECTORS = {
    "word2vec": (
        "Word2Vec",
        "Train word2vec on CORPUS and write the word vectors to OUT: .npz (rowbook), "
        ".txt or .vec (word2vec text), .bin (word2vec binary). Lines are lower-cased and split into "
        "words, punctuation dropped, unless --keep-case / --tokenizer whitespace say otherwise.",
        [
            "rowbook train word2vec corpus.txt -o vectors.txt",
            "rowbook train word2vec corpus.txt -o vectors.bin --architecture cbow "
            "--vector-size 200 --window 8 --epochs 10",
            "rowbook train word2vec big.txt -o v.npz --checkpoint w2v.model.npz  "
            "# Ctrl-C, then the same command with --resume",
            "rowbook train word2vec corpus.txt -o v.txt --save-model w2v.model.npz",
            "rowbook train word2vec more.txt -o v2.txt --init w2v.model.npz --epochs 3",
            "rowbook train word2vec tokens.txt -o v.txt --tokenizer whitespace --keep-case",
        ],
    ),
    "glove": (
        "GloVe",
        "Count co-occurrences in CORPUS, fit GloVe, and write W + W~ to OUT: .npz, "
        ".txt or .vec (word2vec text), .bin (word2vec binary). Lines are lower-cased and split into "
        "words, punctuation dropped, unless --keep-case / --tokenizer whitespace say otherwise.",
        [
            "rowbook train glove corpus.txt -o glove.txt --vector-size 50 --epochs 25",
            "rowbook train glove corpus.txt -o glove.npz --window 10 --x-max 50 --workers 1 --seed 3",
            "rowbook train glove corpus.txt -o g.txt --save-model glove.model.npz",
            "rowbook train glove corpus.txt -o g2.txt --init glove.model.npz --epochs 10",
        ],
    ),
    "fasttext": (
        "FastText",
        "Train fastText on CORPUS and write OUT: .bin is Facebook fastText's model file "
        "(the fasttext package loads it; the query commands answer for unseen words from it); "
        ".npz, .txt or .vec hold the vocabulary's vectors only. Lines are lower-cased and split "
        "into words, punctuation dropped, unless --keep-case / --tokenizer whitespace say otherwise.",
        [
            "rowbook train fasttext corpus.txt -o model.bin",
            "rowbook train fasttext corpus.txt -o model.bin --minn 2 --maxn 5 --bucket 200000",
            "rowbook neighbors model.bin whalebone  # a word the corpus never had",
            "rowbook train fasttext corpus.txt -o model.bin --save-model ft.model.npz",
        ],
    ),
}


def _word_vectors_parser(models: Any, name: str) -> None:
    """``rowbook train NAME`` of a word-vector model (:data:`_WORD_VECTORS`)."""
    import rowbook.models

    class_name, description, examples = _WORD_VECTORS[name]
    p = add_command(
        models,
        name,
        run=run_word_vectors,
        help=_HELP[name],
        description=description,
        examples=examples,
    )
    p.allow_abbrev = False
    _run_options(p, word_vectors=True)
    add_model_options(p, getattr(rowbook.models, class_name))
    p.set_defaults(model=name)


def _nplm_parser(models: Any) -> None:
    from rowbook.models import NPLM

    p = add_command(
        models,
        "nplm",
        run=run_nplm,
        help=_HELP["nplm"],
        description="Train the NPLM to predict each token from the CONTEXT tokens before it (each "
        "non-blank line of CORPUS is one text), write its input table C to OUT (.npz; .txt or "
        ".bin for --level word), and print a sample.",
        examples=[
            "rowbook train nplm lines.txt -o lm.npz --context 5 --epochs 20",
            "rowbook train nplm lines.txt -o lm.txt --level word --dim 32 --sample-length 30",
            "rowbook train nplm lines.txt -o lm.npz --checkpoint lm.ckpt.npz --resume",
        ],
    )
    p.allow_abbrev = False
    _run_options(p, word_vectors=False)
    add_model_options(p, NPLM)
    add_sample_options(p, length=200)


def register(commands: Any, only: Collection[str] | None = None) -> Any:
    """``rowbook train MODEL``; with ``only``, the models not in it are named (with their
    help) but get no options: reading those imports the model's class, and the modules of
    all four (GloVe's SciPy, the NPLM's autograd stack) cost a command using none of them
    about a second."""
    train = commands.add_parser(
        "train",
        help="train word2vec, GloVe, fastText, a text classifier or a neural language model",
        description="Train a model on CORPUS and write its embedding table to OUT.",
        epilog="examples:\n  rowbook train word2vec corpus.txt -o vectors.txt\n"
        "  rowbook train glove corpus.txt -o glove.npz\n"
        "  rowbook train fasttext corpus.txt -o model.bin\n  rowbook train nplm lines.txt -o lm.npz\n"
        "  rowbook train classifier train.txt -o model.bin\n"
        "  rowbook train word2vec --help",
        formatter_class=HelpFormatter,
    )
    train.allow_abbrev = False
    models = train.add_subparsers(dest="model", required=True, metavar="MODEL")
    builders = {
        **{name: functools.partial(_word_vectors_parser, name=name) for name in _WORD_VECTORS},
        "nplm": _nplm_parser,
        "classifier": lambda models: add_train_classifier(models, _HELP["classifier"]),
    }
    for name, build in builders.items():
        if only is None or name in only:
            build(models)
        else:
            models.add_parser(name, help=_HELP[name])
    return models  # more models register into it (rowbook.cli.lm)
