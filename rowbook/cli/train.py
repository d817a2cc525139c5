"""``rowbook train word2vec|glove|fasttext|nplm CORPUS -o OUT``: fit a model, write its table.

Word vectors go to OUT in the format its suffix names (``.npz``, ``.txt``/``.vec``,
``.bin``; for fasttext, ``.bin`` is Facebook fastText's model file, which keeps the n-grams); the language model writes its input table ``C`` the same way and prints a
sample. ``--checkpoint FILE`` saves the training state after every epoch (atomically),
and ``--resume`` continues from it, so an interrupted run (Ctrl-C: exit status 130)
loses at most the epoch in progress. The options are defined in
:mod:`rowbook.cli.train_options`.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rowbook.cli._common import (
    STDIN,
    check_output_path,
    read_lines,
    source_name,
)
from rowbook.cli._vectorio import FORMAT_NAMES, output_format, save_vectors
from rowbook.cli.text import make_tokenizer

__all__ = [
    "FLAGS",
    "FT_OPTIONS",
    "GLOVE_OPTIONS",
    "NPLM_OPTIONS",
    "W2V_OPTIONS",
    "Corpus",
    "cli_error",
    "run_nplm",
    "run_word_vectors",
]


class Corpus:
    """CORPUS as a stream of token lists, read in one pass, counting lines and tokens."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.source, self.lines, self.tokens = args.corpus, 0, 0
        self.tokenizer = make_tokenizer(args.tokenizer, lower=args.lower)
        self.progress = not args.quiet and args.corpus != STDIN

    def __iter__(self) -> Iterator[list[str]]:
        for line in read_lines(self.source, "corpus", progress=self.progress):
            tokens = self.tokenizer.tokenize(line)
            self.lines, self.tokens = self.lines + 1, self.tokens + len(tokens)
            yield tokens


#: Library parameter -> command-line flag, where they differ by more than ``_`` -> ``-``.
FLAGS = {"hierarchical_softmax": "--hs", "min_freq": "--min-count"}


def cli_error(err: ValueError, names: tuple[str, ...]) -> ValueError:
    """``err`` with the library's parameter names spelled as this command's flags.

    >>> str(cli_error(ValueError("vector_size must be >= 1; lower min_count"), ("vector_size", "min_count")))
    '--vector-size must be >= 1; lower --min-count'
    >>> str(cli_error(ValueError("window must be >= 1, the window is..."), ("window",)))
    '--window must be >= 1, the window is...'
    """
    message = str(err)
    for name in (*names, *FLAGS):
        flag = FLAGS.get(name, "--" + name.replace("_", "-"))
        if "_" in name:
            message = re.sub(rf"(?<![-\w]){name}\b", flag, message)
        elif message.startswith(f"{name} "):
            message = flag + message[len(name) :]
    return ValueError(message)


def _check_resume(args: argparse.Namespace) -> str | None:
    """The checkpoint to resume from, or None (a missing one starts afresh, with a note)."""
    if not args.resume:
        return None
    if args.checkpoint is None:
        raise ValueError("--resume needs --checkpoint FILE, the checkpoint to continue from")
    if not Path(args.checkpoint).exists():
        if not args.quiet:
            print(
                f"{args.prog}: no checkpoint {args.checkpoint} yet; starting at epoch 1",
                file=sys.stderr,
            )
        return None
    return args.checkpoint


def _resumed(checkpoint: str | None) -> str:
    return "" if checkpoint is None else f" (continued from {checkpoint})"


def _interrupted(args: argparse.Namespace) -> int:
    if args.checkpoint is not None and Path(args.checkpoint).exists():
        hint = (f"{args.checkpoint} holds the last finished epoch; add --resume to the same "
                "command to continue")  # fmt: skip
    else:
        hint = "nothing was saved (add --checkpoint FILE to make training resumable)"
    print(f"{args.prog}: interrupted; {hint}", file=sys.stderr)
    return 130


def _settings(args: argparse.Namespace, names: tuple[str, ...]) -> dict[str, Any]:
    """The options the user gave (None = the library's default), under the library's names."""
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}


# -- word2vec and GloVe ---------------------------------------------------------------------

W2V_OPTIONS = ("architecture", "vector_size", "window", "min_count", "epochs", "negative",
               "hierarchical_softmax", "sample", "lr", "min_lr", "max_vocab_size", "workers",
               "seed")  # fmt: skip
FT_OPTIONS = ("architecture", "vector_size", "window", "min_count", "epochs", "negative", "sample",
              "lr", "min_lr", "minn", "maxn", "bucket", "workers", "seed")  # fmt: skip
GLOVE_OPTIONS = ("vector_size", "window", "min_count", "epochs", "x_max", "alpha", "lr",
                 "max_vocab", "workers", "seed")  # fmt: skip


def run_word_vectors(args: argparse.Namespace) -> int:
    from rowbook.models import FastText, GloVe, Word2Vec

    out = check_output_path(args.output)
    fasttext_bin = args.model == "fasttext" and out.suffix.lower() == ".bin"
    fmt = "fasttext" if fasttext_bin else output_format(out)
    cls, names = {"word2vec": (Word2Vec, W2V_OPTIONS), "glove": (GloVe, GLOVE_OPTIONS),
                  "fasttext": (FastText, FT_OPTIONS)}[args.model]  # fmt: skip
    try:
        model = cls(**_settings(args, names), progress=not args.quiet)
    except ValueError as err:
        raise cli_error(err, names) from None
    resume, corpus, start = _check_resume(args), Corpus(args), time.perf_counter()
    try:
        model.fit(corpus, checkpoint=args.checkpoint, resume=resume)
    except KeyboardInterrupt:
        return _interrupted(args)
    except ValueError as err:
        if corpus.tokens == 0:
            raise ValueError(
                f"{source_name(args.corpus)} is empty: {corpus.lines} lines, no words"
            ) from None
        raise cli_error(err, names) from None
    seconds = time.perf_counter() - start
    if fasttext_bin:
        model.save_fasttext(out)
    else:
        save_vectors(model.vectors, out, fmt)
    if not args.quiet:
        vectors, history = model.vectors, model.history
        if args.model in ("word2vec", "fasttext"):
            what = f"{history[-1].total_words:,} corpus words"
        else:
            what = f"{model.n_records:,} co-occurrence records, final cost {history[-1].loss:.4g}"
        print(f"{args.model}: {len(vectors)} words x {vectors.vector_size} dims from {what}, "
              f"{len(history)} epochs{_resumed(resume)} in {seconds:.1f} s -> {out} "
              f"({FORMAT_NAMES[fmt]})")  # fmt: skip
    return 0


# -- the neural language model --------------------------------------------------------------

NPLM_OPTIONS = ("level", "context", "dim", "hidden", "tied", "epochs", "lr", "batch_size",
                "optimizer", "seed")  # fmt: skip


def run_nplm(args: argparse.Namespace) -> int:
    from rowbook.models import NPLM
    from rowbook.text import Normalizer
    from rowbook.vectors import Vectors

    out = check_output_path(args.output)
    fmt = output_format(out)
    if args.level != "word" and fmt != "npz":
        raise ValueError(f"a character table has keys such as ' ' that {FORMAT_NAMES[fmt]} cannot "
                         f"hold; name the output {out.with_suffix('.npz')}")  # fmt: skip
    texts = [line for line in read_lines(args.corpus, "corpus") if line.strip()]
    if not texts:
        raise ValueError(f"{source_name(args.corpus)} is empty: it has no non-blank line")
    lm = NPLM(**_settings(args, NPLM_OPTIONS), min_freq=args.min_count or 1,
              normalizer=Normalizer(case="lower") if args.lower else None,
              checkpoint=args.checkpoint, progress=not args.quiet)  # fmt: skip
    resume = _check_resume(args)
    try:
        lm.fit(texts, resume=resume is not None)
    except KeyboardInterrupt:
        return _interrupted(args)
    except ValueError as err:
        raise cli_error(err, (*NPLM_OPTIONS, "min_freq")) from None
    vocab = lm.vocab_
    counts = [vocab.counts[token] for token in vocab.itos]
    save_vectors(Vectors(vocab.itos, lm.embedding_table(), counts), out, fmt)
    if not args.quiet and lm.history_.epochs:
        last = lm.history_.epochs[-1]
        print(f"nplm: {lm.level} level, {len(vocab)} tokens, context {lm.context}, "
              f"{len(lm.history_.epochs)} epochs: loss {last['loss']:.4f}, perplexity "
              f"{last['perplexity']:.3f} -> {out} ({FORMAT_NAMES[fmt]}, the table C)")  # fmt: skip
    if args.sample_length:
        if not args.quiet:
            print(f"sample (temperature {args.temperature}, seed {lm.seed}):")
        print(
            lm.sample(
                args.sample_length, prompt=args.prompt, temperature=args.temperature, seed=lm.seed
            )
        )
    return 0
