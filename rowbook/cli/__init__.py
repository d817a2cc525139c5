"""The ``rowbook`` command line: a thin layer over the public functions.

One module per group of commands, each with a ``register(commands)`` that adds its
parsers; :func:`main` parses, runs, and turns user errors into one line on standard
error with exit status 2 (never a traceback; ``ROWBOOK_DEBUG=1`` shows it anyway).
Ctrl-C exits with status 130.

=============  ====================================================================
module         commands
=============  ====================================================================
``misc``       ``demo``, ``bench``
``text``       ``tokenize``
``vocab``      ``vocab``
``train``      ``train word2vec``, ``train glove``, ``train fasttext``, ``train nplm`` (parsers in ``train_options``)
``lm``         ``train lm``, ``generate``, ``size``, ``vocab-sweep`` (language models)
``ngram``      ``count-vs-neural`` (an n-gram count model beside the NPLM)
``cooccur``    ``cooccur`` (GloVe's counting alone; ``train glove`` trains on its file)
``query``      ``neighbors``, ``analogy``, ``similarity``, ``evaluate``
``compare``    ``compare`` (two vectors files: what moved)
``files``      ``plot``, ``convert``
``tables``     ``quantize``, ``prune``
=============  ====================================================================

Shared by several: ``_common`` (the parser, one-line errors, input lines, tables),
``options`` (the model options, read from the models' signatures), ``corpus`` (how the
word-vector commands read CORPUS), ``_cluster`` (``--scheduler``), ``_vectorio`` (vector files).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Collection, Sequence

from rowbook.cli import (
    classify,
    compare,
    cooccur,
    files,
    lm,
    misc,
    ngram,
    query,
    tables,
    text,
    train_options,
    vocab,
)
from rowbook.cli._common import HelpFormatter, Parser, flag_for

__all__ = ["USER_ERRORS", "build_parser", "main"]


def _user_errors() -> tuple[type[BaseException], ...]:
    from rowbook.training import TrainingDiverged

    return (ValueError, TypeError, KeyError, IndexError, OSError, ImportError, TrainingDiverged)


#: Exceptions that mean "bad input": reported in one line, exit status 2.
USER_ERRORS = _user_errors()


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``rowbook`` parser with every command.

    Given the ``argv`` it is built to parse, the ``train`` models that ``argv`` does not
    name are listed with their help but without their options (which are read from the
    model classes, so importing every model), so a command imports only what it runs.
    """
    from rowbook import __version__

    parser = Parser(
        prog="rowbook",
        description="Embeddings as lookup tables: from raw text to learned, inspectable tables.",
        epilog="examples:\n  rowbook demo\n  rowbook train word2vec corpus.txt -o vectors.txt\n"
        "  rowbook neighbors vectors.txt king\n  rowbook COMMAND --help",
        formatter_class=HelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"rowbook {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    misc.register_demo(commands)
    train_models = None if argv is None else set(argv[1:2]) if argv[:1] == ["train"] else set()
    text.register(commands)
    vocab.register(commands)
    train = train_options.register(commands, only=train_models)
    cooccur.register(commands, options=argv is None or argv[:1] == ["cooccur"])
    query.register(commands)
    compare.register(commands)
    files.register(commands)
    lm.register(commands, train, only=train_models)
    ngram.register(commands)
    classify.register(commands)
    tables.register(commands)
    misc.register_bench(commands)
    return parser


def _describe(err: BaseException, options: Collection[str] = ()) -> str:
    """One line saying what went wrong (a KeyError's message without its quotes); a
    library parameter is named by its flag among the command's ``options``."""
    # a ParameterError, or an error that names the parameter to change (SpillSpaceError)
    named = callable(getattr(err, "message_for", None)) and isinstance(
        getattr(err, "name", None), str
    )
    flag = flag_for(err.name, options) if named else None
    if flag is not None:
        message = err.message_for(flag)
    elif isinstance(err, KeyError) and err.args:
        message = str(err.args[0])
    elif isinstance(err, OSError) and err.strerror and err.filename:
        message = f"{err.filename}: {err.strerror}"
    else:
        message = str(err) or type(err).__name__
    return " ".join(message.split())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rowbook`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(argv).parse_args(argv)
    except SystemExit as stop:  # --help, --version, usage errors
        return stop.code if isinstance(stop.code, int) else 0
    prog = getattr(args, "prog", f"rowbook {args.command}")
    try:
        with warnings.catch_warnings():
            warnings.showwarning = lambda message, *_, **__: print(
                f"{prog}: warning: {' '.join(str(message).split())}", file=sys.stderr
            )
            for note in getattr(args, "renamed", ()):  # an old option spelling: end users are
                warnings.warn(note, FutureWarning, stacklevel=1)  # warned with FutureWarning
            return args.run(args)
    except KeyboardInterrupt:
        print(f"\n{prog}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `rowbook ... | head`: the reader left; say nothing
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except USER_ERRORS as err:
        if os.environ.get("ROWBOOK_DEBUG"):
            raise
        sys.stdout.flush()
        options = getattr(getattr(args, "parser", None), "_option_string_actions", ())
        print(f"{prog}: error: {_describe(err, options)}", file=sys.stderr)
        return 2
