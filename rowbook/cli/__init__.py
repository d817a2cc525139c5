"""The ``rowbook`` command line: a thin layer over the public functions.

One module per group of commands, each with a ``register(commands)`` that adds its
parsers; :func:`main` parses, runs, and turns user errors (:data:`USER_ERRORS`) into one
line on standard error with exit status 2 (``ROWBOOK_DEBUG=1`` shows the traceback anyway);
any other exception is a bug in rowbook: its traceback is printed with a request to report
it, exit status 1.
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
``inspect``    ``inspect`` (what a file is; a GGUF model described whole)
=============  ====================================================================

Shared by several: ``_common`` (the parser, one-line errors, input lines, tables),
``fitting`` (how every ``train`` command makes its model, fits it and stops on Ctrl-C),
``options`` (how every option that takes a value is added, its default said once; the
model options, read from the models' signatures; a parameter's flag), ``corpus`` (how the
word-vector commands read CORPUS), ``_cluster`` (``--scheduler``), ``_vectorio`` (vector files).
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import warnings
from collections.abc import Collection, Sequence

from rowbook.checks import InputIndexError, InputTypeError, UnknownKeyError
from rowbook.cli import (
    classify,
    compare,
    cooccur,
    files,
    inspect,
    lm,
    misc,
    ngram,
    query,
    tables,
    text,
    train_options,
    vocab,
)
from rowbook.cli._common import HelpFormatter, Parser
from rowbook.cli.options import flag_for

__all__ = ["BUG_REPORT", "USER_ERRORS", "build_parser", "main"]


def _user_errors() -> tuple[type[BaseException], ...]:
    from rowbook.training import TrainingDiverged

    return (
        ValueError,
        OSError,
        ImportError,
        TrainingDiverged,
        InputTypeError,
        UnknownKeyError,
        InputIndexError,
    )


#: Exceptions that mean "bad input": reported in one line, exit status 2. A plain
#: ``TypeError``, ``KeyError`` or ``IndexError`` is not among them: rowbook raises the
#: subclasses in :mod:`rowbook.checks` on purpose, so the plain ones are bugs, shown with
#: their traceback and a request to report them.
USER_ERRORS = _user_errors()

#: Printed under the traceback of an error that is not the user's.
BUG_REPORT = (
    "this is a bug in rowbook {version}, not in your input: please report it with the "
    "command you ran and the traceback above"
)


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
    inspect.register(commands)
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
    except Exception:
        from rowbook import __version__

        traceback.print_exc()
        print(f"{prog}: {BUG_REPORT.format(version=__version__)}", file=sys.stderr)
        return 1
