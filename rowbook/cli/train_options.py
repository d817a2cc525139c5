"""The options of ``rowbook train word2vec|glove|fasttext|nplm`` (see :mod:`rowbook.cli.train`).

Defaults shown in ``--help`` are read from the models (their settings dataclasses, or
``NPLM``'s signature), so they cannot drift; an option left out is not passed, and the
library's default applies.
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from rowbook.cli._common import HelpFormatter, add_command
from rowbook.cli.train import run_nplm, run_word_vectors

__all__ = ["register"]


def _common_options(p: argparse.ArgumentParser, defaults: Any, *, tokenizers: bool = True) -> None:
    """Options every trainer has; ``defaults`` has the model's ``min_count``, ``epochs``, ``seed``."""
    p.add_argument(
        "corpus", metavar="CORPUS", help="UTF-8 text file, one sentence per line, or '-'"
    )
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="where to write the table")
    if tokenizers:
        p.add_argument("--tokenizer", choices=("whitespace", "word"), default="whitespace",
                       help="how lines are split into words (default: %(default)s)")  # fmt: skip
    p.add_argument("--lower", action="store_true", help="lower-case the text first")
    p.add_argument(
        "--min-count",
        type=int,
        metavar="N",
        help=f"ignore words seen fewer than N times (default: {defaults.min_count})",
    )
    p.add_argument(
        "--epochs",
        type=int,
        metavar="N",
        help=f"passes over the corpus (default: {defaults.epochs})",
    )
    p.add_argument("--seed", type=int, metavar="N", help=f"random seed (default: {defaults.seed})")
    p.add_argument(
        "--checkpoint", metavar="FILE", help="save the training state here after every epoch"
    )
    p.add_argument("--resume", action="store_true", help="continue from --checkpoint FILE")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary")  # fmt: skip


def _word2vec_parser(models: Any) -> None:
    from rowbook.models import Word2Vec

    S = argparse.Namespace(
        **{k: v.default for k, v in inspect.signature(Word2Vec).parameters.items()}
    )

    p = add_command(
        models, "word2vec", run=run_word_vectors,
        help="skip-gram / CBOW word vectors (Mikolov et al. 2013)",
        description="Train word2vec on CORPUS and write the word vectors to OUT: .npz (rowbook), "
        ".txt or .vec (word2vec text), .bin (word2vec binary).",
        examples=["rowbook train word2vec corpus.txt -o vectors.txt",
                  "rowbook train word2vec corpus.txt -o vectors.bin --architecture cbow "
                  "--vector-size 200 --window 8 --epochs 10",
                  "rowbook train word2vec big.txt -o v.npz --checkpoint w2v.ckpt.npz  "
                  "# Ctrl-C, then the same command with --resume",
                  "rowbook tokenize --lower - < raw.txt | rowbook train word2vec - -o v.txt --min-count 2"],
    )  # fmt: skip
    _common_options(p, S)
    p.add_argument(
        "--architecture", choices=("skipgram", "cbow"), help=f"(default: {S.architecture})"
    )
    p.add_argument(
        "--vector-size", type=int, metavar="D", help=f"dimensions (default: {S.vector_size})"
    )
    p.add_argument(
        "--window", type=int, metavar="N", help=f"context words each side (default: {S.window})"
    )
    p.add_argument(
        "--negative", type=int, metavar="K", help=f"negative samples (default: {S.negative})"
    )
    p.add_argument("--hs", dest="hierarchical_softmax", action="store_const", const=True,
                   help="train a hierarchical softmax too (with --negative 0: instead)")  # fmt: skip
    p.add_argument(
        "--sample",
        type=float,
        metavar="T",
        help=f"subsampling threshold, 0 = off (default: {S.sample})",
    )
    p.add_argument(
        "--lr",
        type=float,
        metavar="LR",
        help="initial learning rate (default: 0.025 for skipgram, 0.05 for cbow)",
    )
    p.add_argument(
        "--min-lr",
        type=float,
        metavar="LR",
        help=f"final learning rate (default: {S.min_lr})",
    )
    p.add_argument(
        "--max-vocab-size", type=int, metavar="N", help="cap on distinct words while reading"
    )
    p.add_argument(
        "--workers", type=int, metavar="N", help="threads (default: one per CPU; 1 is reproducible)"
    )
    p.set_defaults(model="word2vec")


def _fasttext_parser(models: Any) -> None:
    from rowbook.models import FastText

    S = argparse.Namespace(
        **{k: v.default for k, v in inspect.signature(FastText).parameters.items()}
    )

    p = add_command(
        models, "fasttext", run=run_word_vectors,
        help="subword word vectors: words as bags of character n-grams (Bojanowski et al. 2017)",
        description="Train fastText on CORPUS and write OUT: .bin is Facebook fastText's model file "
        "(the fasttext package loads it; the query commands answer for unseen words from it); "
        ".npz, .txt or .vec hold the vocabulary's vectors only.",
        examples=["rowbook train fasttext corpus.txt -o model.bin",
                  "rowbook train fasttext corpus.txt -o model.bin --minn 2 --maxn 5 --bucket 200000",
                  "rowbook neighbors model.bin whalebone  # a word the corpus never had"],
    )  # fmt: skip
    _common_options(p, S)
    p.add_argument(
        "--architecture", choices=("skipgram", "cbow"), help=f"(default: {S.architecture})"
    )
    p.add_argument(
        "--vector-size", type=int, metavar="D", help=f"dimensions (default: {S.vector_size})"
    )
    p.add_argument(
        "--window", type=int, metavar="N", help=f"context words each side (default: {S.window})"
    )
    p.add_argument(
        "--negative", type=int, metavar="K", help=f"negative samples (default: {S.negative})"
    )
    p.add_argument(
        "--sample",
        type=float,
        metavar="T",
        help=f"subsampling threshold, 0 = off (default: {S.sample})",
    )
    p.add_argument(
        "--lr", type=float, metavar="LR", help=f"initial learning rate (default: {S.lr})"
    )
    p.add_argument(
        "--min-lr", type=float, metavar="LR", help=f"final learning rate (default: {S.min_lr})"
    )
    p.add_argument(
        "--minn", type=int, metavar="N", help=f"shortest character n-gram (default: {S.minn})"
    )
    p.add_argument(
        "--maxn",
        type=int,
        metavar="N",
        help=f"longest character n-gram, 0 = none (default: {S.maxn})",
    )
    p.add_argument(
        "--bucket",
        type=int,
        metavar="N",
        help=f"hash buckets for the n-grams (default: {S.bucket})",
    )
    p.add_argument(
        "--workers", type=int, metavar="N", help="threads (default: one per CPU; 1 is reproducible)"
    )
    p.set_defaults(model="fasttext")


def _glove_parser(models: Any) -> None:
    from rowbook.models import GloVe

    S = argparse.Namespace(**{k: v.default for k, v in inspect.signature(GloVe).parameters.items()})

    p = add_command(
        models, "glove", run=run_word_vectors,
        help="GloVe word vectors from co-occurrence counts (Pennington et al. 2014)",
        description="Count co-occurrences in CORPUS, fit GloVe, and write W + W~ to OUT: .npz, "
        ".txt or .vec (word2vec text), .bin (word2vec binary).",
        examples=["rowbook train glove corpus.txt -o glove.txt --vector-size 50 --epochs 25",
                  "rowbook train glove corpus.txt -o glove.npz --window 10 --x-max 50 --workers 1 --seed 3"],
    )  # fmt: skip
    _common_options(p, S)
    p.add_argument(
        "--vector-size", type=int, metavar="D", help=f"dimensions (default: {S.vector_size})"
    )
    p.add_argument(
        "--window", type=int, metavar="N", help=f"context words each side (default: {S.window})"
    )
    p.add_argument("--x-max", type=float, help=f"weighting cutoff (default: {S.x_max})")
    p.add_argument("--alpha", type=float, help=f"weighting exponent (default: {S.alpha})")
    p.add_argument("--lr", type=float, help=f"AdaGrad step size (default: {S.lr})")
    p.add_argument("--max-vocab", type=int, metavar="N", help="keep only the N most frequent words")
    p.add_argument(
        "--workers", type=int, metavar="N", help="threads (default: one per CPU; 1 is reproducible)"
    )
    p.set_defaults(model="glove")


def _nplm_parser(models: Any) -> None:
    p = add_command(
        models, "nplm", run=run_nplm,
        help="a neural language model over characters or words (Bengio et al. 2003)",
        description="Train the NPLM to predict each token from the CONTEXT tokens before it (each "
        "non-blank line of CORPUS is one text), write its input table C to OUT (.npz; .txt or "
        ".bin for --level word), and print a sample.",
        examples=["rowbook train nplm lines.txt -o lm.npz --context 5 --epochs 20",
                  "rowbook train nplm lines.txt -o lm.txt --level word --dim 32 --sample-length 30",
                  "rowbook train nplm lines.txt -o lm.npz --checkpoint lm.ckpt.npz --resume"],
    )  # fmt: skip
    from rowbook.models import NPLM

    S = argparse.Namespace(**{k: v.default for k, v in inspect.signature(NPLM).parameters.items()})
    S.min_count = S.min_freq
    _common_options(p, S, tokenizers=False)
    p.add_argument(
        "--level", choices=("char", "word"), default=S.level, help="tokens (default: %(default)s)"
    )
    p.add_argument(
        "--context", type=int, metavar="N", help=f"previous tokens seen (default: {S.context})"
    )
    p.add_argument("--dim", type=int, metavar="D", help=f"embedding size (default: {S.dim})")
    p.add_argument("--hidden", type=int, metavar="H", help=f"tanh layer size (default: {S.hidden})")
    p.add_argument("--tied", action="store_const", const=True, help="reuse C as the output layer")
    p.add_argument("--lr", type=float, help="learning rate (default: 0.01 for adam, 0.1 for sgd)")
    p.add_argument("--batch-size", type=int, metavar="N", help=f"(default: {S.batch_size})")
    p.add_argument("--optimizer", choices=("adam", "sgd", "sparse_adam"), help=f"(default: {S.optimizer})")  # fmt: skip
    p.add_argument("--sample-length", type=int, default=200, metavar="N",
                   help="tokens to sample after training, 0 for none (default: %(default)s)")  # fmt: skip
    p.add_argument(
        "--temperature", type=float, default=0.8, help="sampling temperature (default: %(default)s)"
    )
    p.add_argument("--prompt", default="", help="text the sample starts with")


def register(commands: Any) -> None:
    train = commands.add_parser(
        "train", help="train word2vec, GloVe, fastText or a neural language model on a corpus",
        description="Train a model on CORPUS and write its embedding table to OUT.",
        epilog="examples:\n  rowbook train word2vec corpus.txt -o vectors.txt\n"
        "  rowbook train glove corpus.txt -o glove.npz\n  rowbook train fasttext corpus.txt -o model.bin\n  rowbook train nplm lines.txt -o lm.npz\n"
        "  rowbook train word2vec --help",
        formatter_class=HelpFormatter,
    )  # fmt: skip
    models = train.add_subparsers(dest="model", required=True, metavar="MODEL")
    _word2vec_parser(models)
    _glove_parser(models)
    _fasttext_parser(models)
    _nplm_parser(models)
