"""The options of ``rowbook train word2vec|glove|fasttext|nplm`` (see :mod:`rowbook.cli.train`).

The model options come from one table, :data:`OPTIONS` (parameter -> flag, metavar, help),
read against each model's signature: a parameter becomes an option of a command when the
model's ``__init__`` has it, with its type (choices for a ``Literal``, a switch for a
``bool``) and the default shown in ``--help`` read from the signature, so neither can
drift. An option left out is not passed, and the library's default applies. Option
abbreviations are off: ``--to`` is not ``--tokenizer``.
"""

from __future__ import annotations

import argparse
import inspect
import types
import typing
from collections.abc import Collection
from typing import Any, Literal

from rowbook.cli._common import HelpFormatter, add_command, add_scheduler, add_unicode_errors
from rowbook.cli.train import run_nplm, run_word_vectors

__all__ = ["MODEL_HELP", "NONE_MEANS", "OPTIONS", "model_options", "register"]

#: Model parameter -> (flag, metavar, help) for every model option of the train commands.
OPTIONS: dict[str, tuple[str, str | None, str]] = {
    "architecture": (
        "--architecture",
        None,
        "skip-gram (an example per word pair) or CBOW (the window's mean predicts its centre)",
    ),
    "level": ("--level", None, "tokens"),
    "vector_size": ("--vector-size", "D", "dimensions"),
    "dim": ("--dim", "D", "embedding size"),
    "context": ("--context", "N", "previous tokens seen"),
    "hidden": ("--hidden", "H", "tanh layer size"),
    "tied": ("--tied", None, "reuse C as the output layer"),
    "window": ("--window", "N", "context words each side"),
    "min_count": ("--min-count", "N", "ignore words seen fewer than N times"),
    "max_vocab_size": ("--max-vocab-size", "N", "cap on distinct words held while reading"),
    "max_vocab": ("--max-vocab", "N", "keep only the N most frequent words"),
    "negative": ("--negative", "K", "negative samples per example, 0 for none (with --hs)"),
    "hierarchical_softmax": (
        "--hs",
        None,
        "train a hierarchical softmax too (with --negative 0: instead)",
    ),
    "sample": ("--sample", "T", "subsampling threshold, 0 = off"),
    "minn": ("--minn", "N", "shortest character n-gram"),
    "maxn": ("--maxn", "N", "longest character n-gram, 0 = none"),
    "bucket": ("--bucket", "N", "hash buckets for the n-grams"),
    "x_max": ("--x-max", "X", "co-occurrence count where the weighting reaches 1"),
    "memory": (
        "--memory",
        "GB",
        "budget for counting and shuffling co-occurrences; past it, counts and the shuffled records go to temporary files (in --spill-dir)",
    ),
    "alpha": ("--alpha", "A", "exponent of the weighting (x / x_max) ** alpha"),
    "epochs": ("--epochs", "N", "passes over the corpus"),
    "lr": ("--lr", "LR", "initial learning rate"),
    "min_lr": ("--min-lr", "LR", "final learning rate"),
    "batch_size": ("--batch-size", "N", "examples per step"),
    "optimizer": ("--optimizer", None, "how the tables are stepped"),
    "val_fraction": (
        "--val-fraction",
        "F",
        "share of the lines held out to report held-out perplexity, 0 for none",
    ),
    "workers": ("--workers", "N", "threads; 1 is reproducible"),
    "seed": ("--seed", "N", "random seed"),
}

#: Help that differs for one model: (model, parameter) -> help.
MODEL_HELP = {
    ("GloVe", "lr"): "AdaGrad step size",
    ("GloVe", "epochs"): "passes over the co-occurrence records",
}

#: The one-line help of each model's command (``rowbook train --help`` lists them).
_HELP = {
    "word2vec": "skip-gram / CBOW word vectors (Mikolov et al. 2013)",
    "glove": "GloVe word vectors from co-occurrence counts (Pennington et al. 2014)",
    "fasttext": "subword word vectors: words as bags of character n-grams (Bojanowski et al. 2017)",
    "nplm": "a neural language model over characters or words (Bengio et al. 2003)",
}

#: What a default of None means, where the signature cannot say it.
NONE_MEANS = {
    ("GloVe", "memory"): "no budget, count in RAM",
    ("Word2Vec", "lr"): "0.025 for skipgram, 0.05 for cbow",
    ("NPLM", "lr"): "0.01 for adam and sparse_adam, 0.1 for sgd",
    ("Word2Vec", "max_vocab_size"): "no cap",
    ("GloVe", "max_vocab"): "no cap",
    ("Word2Vec", "workers"): "one per CPU",
    ("GloVe", "workers"): "one per CPU",
    ("FastText", "workers"): "one per CPU",
}


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls.__init__)
    except Exception:  # an annotation that does not resolve: fall back to the defaults' types
        return {}


def _base_type(hint: Any, default: Any) -> Any:
    """``int`` for ``int | None``, the ``Literal`` itself, or the default's type."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [h for h in typing.get_args(hint) if h is not type(None)]
        hint = rest[0] if len(rest) == 1 else None
    if hint is None or hint is Any:
        return type(default) if default is not None else str
    return hint


def model_options(cls: type) -> dict[str, tuple[str, dict[str, Any]]]:
    """Parameter -> (flag, ``add_argument`` keywords) of the :data:`OPTIONS` ``cls`` takes.

    >>> from rowbook.models import GloVe
    >>> flag, kwargs = model_options(GloVe)["x_max"]
    >>> flag, kwargs["type"], kwargs["help"]
    ('--x-max', <class 'float'>, 'co-occurrence count where the weighting reaches 1 (default: 100.0)')
    """
    hints, found = _hints(cls), {}
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name not in OPTIONS:
            continue
        flag, metavar, text = OPTIONS[name]
        text = MODEL_HELP.get((cls.__name__, name), text)
        default = param.default
        shown = NONE_MEANS.get((cls.__name__, name), default)
        kwargs: dict[str, Any] = {
            "dest": name,
            "default": None,
            "help": f"{text} (default: {shown})",
        }
        kind = _base_type(hints.get(name), default)
        if typing.get_origin(kind) is Literal:
            kwargs["choices"] = typing.get_args(kind)
        elif kind is bool:  # a switch that turns the default over
            kwargs.update(action="store_const", const=not default, help=text)
        else:
            kwargs.update(type=kind, metavar=metavar)
        found[name] = (flag, kwargs)
    return found


def _add_model_options(p: argparse.ArgumentParser, cls: type) -> None:
    """The model's options, and ``flags`` (parameter -> flag) for error messages."""
    options = model_options(cls)
    group = p.add_argument_group(f"{cls.__name__} parameters")
    for flag, kwargs in options.values():
        group.add_argument(flag, **kwargs)
    p.set_defaults(flags={name: flag for name, (flag, _) in options.items()}, model_class=cls)


def _run_options(p: argparse.ArgumentParser, *, word_vectors: bool) -> None:
    """CORPUS, -o OUT, reading, checkpoints, and (word vectors) continuing a saved model."""
    p.add_argument(
        "corpus",
        metavar="CORPUS",
        nargs="+",
        help="UTF-8 text files (gzip/bzip2/xz too), folders of them (read in sorted path "
        "order), or '-' for standard input; one sentence per line",
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the table")
    add_unicode_errors(p)
    if word_vectors:
        p.add_argument(
            "--tokenizer",
            choices=("word", "whitespace"),
            default="word",
            help="word: runs of letters and digits (inner apostrophes kept), punctuation "
            "dropped; whitespace: split on spaces only, tokens as written (default: %(default)s)",
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
        p.add_argument(
            "--spill-dir",
            metavar="DIR",
            help="keep the corpus's word ids in a temporary file in DIR (4 bytes a word) "
            "instead of memory, for corpora larger than RAM; for GloVe with --memory, also its "
            "counting runs and shuffled records",
        )
    else:
        p.add_argument("--lower", action="store_true", help="lower-case the text first")
    p.add_argument(
        "--checkpoint",
        metavar="FILE",
        help="save the model here after every epoch (a saved model, as --save-model)",
    )
    p.add_argument("--resume", action="store_true", help="continue from --checkpoint FILE")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary")


def _word_vectors_parser(models: Any, cls: type, name: str, **text: Any) -> argparse.ArgumentParser:
    p = add_command(models, name, run=run_word_vectors, **text)
    p.allow_abbrev = False
    _run_options(p, word_vectors=True)
    _add_model_options(p, cls)
    p.set_defaults(model=name)
    return p


def _word2vec_parser(models: Any) -> None:
    from rowbook.models import Word2Vec

    _word_vectors_parser(
        models,
        Word2Vec,
        "word2vec",
        help=_HELP["word2vec"],
        description="Train word2vec on CORPUS and write the word vectors to OUT: .npz (rowbook), "
        ".txt or .vec (word2vec text), .bin (word2vec binary). Lines are lower-cased and split into "
        "words, punctuation dropped, unless --keep-case / --tokenizer whitespace say otherwise.",
        examples=[
            "rowbook train word2vec corpus.txt -o vectors.txt",
            "rowbook train word2vec corpus.txt -o vectors.bin --architecture cbow "
            "--vector-size 200 --window 8 --epochs 10",
            "rowbook train word2vec big.txt -o v.npz --checkpoint w2v.model.npz  "
            "# Ctrl-C, then the same command with --resume",
            "rowbook train word2vec corpus.txt -o v.txt --save-model w2v.model.npz",
            "rowbook train word2vec more.txt -o v2.txt --init w2v.model.npz --epochs 3",
            "rowbook train word2vec tokens.txt -o v.txt --tokenizer whitespace --keep-case",
        ],
    )


def _fasttext_parser(models: Any) -> None:
    from rowbook.models import FastText

    _word_vectors_parser(
        models,
        FastText,
        "fasttext",
        help=_HELP["fasttext"],
        description="Train fastText on CORPUS and write OUT: .bin is Facebook fastText's model file "
        "(the fasttext package loads it; the query commands answer for unseen words from it); "
        ".npz, .txt or .vec hold the vocabulary's vectors only. Lines are lower-cased and split "
        "into words, punctuation dropped, unless --keep-case / --tokenizer whitespace say otherwise.",
        examples=[
            "rowbook train fasttext corpus.txt -o model.bin",
            "rowbook train fasttext corpus.txt -o model.bin --minn 2 --maxn 5 --bucket 200000",
            "rowbook neighbors model.bin whalebone  # a word the corpus never had",
            "rowbook train fasttext corpus.txt -o model.bin --save-model ft.model.npz",
        ],
    )


def _glove_parser(models: Any) -> None:
    from rowbook.models import GloVe

    _word_vectors_parser(
        models,
        GloVe,
        "glove",
        help=_HELP["glove"],
        description="Count co-occurrences in CORPUS, fit GloVe, and write W + W~ to OUT: .npz, "
        ".txt or .vec (word2vec text), .bin (word2vec binary). Lines are lower-cased and split into "
        "words, punctuation dropped, unless --keep-case / --tokenizer whitespace say otherwise.",
        examples=[
            "rowbook train glove corpus.txt -o glove.txt --vector-size 50 --epochs 25",
            "rowbook train glove corpus.txt -o glove.npz --window 10 --x-max 50 --workers 1 --seed 3",
            "rowbook train glove corpus.txt -o g.txt --save-model glove.model.npz",
            "rowbook train glove corpus.txt -o g2.txt --init glove.model.npz --epochs 10",
        ],
    )


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
    _add_model_options(p, NPLM)
    p.add_argument(
        "--sample-length",
        type=int,
        default=200,
        metavar="N",
        help="tokens to sample after training, 0 for none (default: %(default)s)",
    )
    p.add_argument(
        "--temperature", type=float, default=0.8, help="sampling temperature (default: %(default)s)"
    )
    p.add_argument("--prompt", default="", help="text the sample starts with")


def register(commands: Any, only: Collection[str] | None = None) -> None:
    """``rowbook train MODEL``; with ``only``, the models not in it are named (with their
    help) but get no options: reading those imports the model's class, and the modules of
    all four (GloVe's SciPy, the NPLM's autograd stack) cost a command using none of them
    about a second."""
    train = commands.add_parser(
        "train",
        help="train word2vec, GloVe, fastText or a neural language model on a corpus",
        description="Train a model on CORPUS and write its embedding table to OUT.",
        epilog="examples:\n  rowbook train word2vec corpus.txt -o vectors.txt\n"
        "  rowbook train glove corpus.txt -o glove.npz\n"
        "  rowbook train fasttext corpus.txt -o model.bin\n  rowbook train nplm lines.txt -o lm.npz\n"
        "  rowbook train word2vec --help",
        formatter_class=HelpFormatter,
    )
    train.allow_abbrev = False
    models = train.add_subparsers(dest="model", required=True, metavar="MODEL")
    builders = {
        "word2vec": _word2vec_parser,
        "glove": _glove_parser,
        "fasttext": _fasttext_parser,
        "nplm": _nplm_parser,
    }
    for name, build in builders.items():
        if only is None or name in only:
            build(models)
        else:
            models.add_parser(name, help=_HELP[name])
