"""What every command shares: the parser, one-line errors, input lines, tables and JSON.

Conventions of the ``rowbook`` command line:

* a bad input is reported as one line, ``rowbook <command>: error: <what and how to fix>``,
  with exit status 2 (argparse's usage errors included);
* a path of ``-`` reads standard input (corpora and texts); a corpus may be several
  files and folders, plain or gzip/bzip2/xz compressed (:mod:`rowbook.corpus_files`);
* query commands print aligned tables, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from rowbook.checks import ParameterError, UnknownKeyError
from rowbook.cli.options import add_option
from rowbook.corpus_files import STDIN, check_regular_file
from rowbook.corpus_source import CorpusSource, corpus_source

__all__ = [
    "PROGRESS_BYTES",
    "STDIN",
    "HelpFormatter",
    "Parser",
    "add_command",
    "add_corpus",
    "add_json",
    "add_lower",
    "add_positionals",
    "add_sample_options",
    "add_scheduler",
    "add_seed",
    "add_training_run",
    "add_unicode_errors",
    "add_vectors_reading",
    "check_input_file",
    "check_output_path",
    "check_words",
    "cli_error",
    "format_table",
    "given_corpus",
    "print_json",
    "read_lines",
    "source_name",
]

#: Files smaller than this are read without a progress bar (it would only flash).
PROGRESS_BYTES = 16 * 2**20


class HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions to the terminal; keeps the ``examples:`` epilog line by line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line (status 2) pointing at ``--help``.

    Options are never abbreviated (``--to`` is not ``--tokenizer``), and an unknown option
    is reported by the (sub)command that got it, with the closest option it has.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(
            2, f"{self.prog}: error: {message}{_close_choice(message)} (see '{self.prog} --help')\n"
        )

    def parse_args(
        self,
        args: Sequence[str] | None = None,  # type: ignore[override]
        namespace: argparse.Namespace | None = None,
    ) -> argparse.Namespace:
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            command = getattr(namespace, "parser", self)  # the sub-command that was chosen
            command.error(f"unrecognized arguments: {' '.join(extras)}{_closest(command, extras)}")
        return namespace


def _closest(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """``"; did you mean --vector-size?"`` for the first unknown option close to a known one."""
    known = [o for o in parser._option_string_actions if o.startswith("--")]
    for extra in extras:
        if extra.startswith("-"):
            close = difflib.get_close_matches(extra.split("=")[0], known, n=1, cutoff=0.5)
            if close:
                return f"; did you mean {close[0]}?"
    return ""


def _close_choice(message: str) -> str:
    """``"; did you mean 'train'?"`` after argparse's ``invalid choice: 'trian' (choose from ...)``.

    >>> _close_choice("argument COMMAND: invalid choice: 'trian' (choose from 'demo', 'train')")
    "; did you mean 'train'?"
    """
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)$", message)
    if not found:
        return ""
    choices = re.findall(r"'([^']*)'", found[2])
    close = difflib.get_close_matches(found[1], choices, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def cli_error(err: ParameterError, flags: dict[str, str]) -> ValueError:
    """``err`` said with the flag of its parameter (``flags``: this command's parameter -> flag);
    a parameter the command does not list (``errors``, say) is left to :func:`rowbook.cli.main`,
    which names it by :func:`flag_for`.

    >>> str(cli_error(ParameterError("vector_size", 0, "an integer >= 1"), {"vector_size": "--vector-size"}))
    '--vector-size must be an integer >= 1, got 0'
    """
    return ValueError(err.message_for(flags[err.name])) if err.name in flags else err


def add_command(
    commands: Any,
    name: str,
    *,
    help: str,
    description: str,
    examples: Sequence[str],
    run: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """Add a sub-command with an examples epilog; ``run(args)`` is called with its arguments."""
    epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
    parser = commands.add_parser(
        name, help=help, description=description, epilog=epilog, formatter_class=HelpFormatter
    )
    parser.set_defaults(run=run, prog=parser.prog, parser=parser)
    return parser


def add_corpus(parser: argparse.ArgumentParser, line: str = "one sentence per line") -> None:
    """The ``CORPUS`` argument of a command that reads text; ``line`` says what a line is."""
    parser.add_argument(
        "corpus",
        metavar="CORPUS",
        nargs="+",
        help="UTF-8 text files (gzip/bzip2/xz too), folders of them (read in sorted path "
        f"order), or '-' for standard input; {line}",
    )


def add_positionals(parser: argparse.ArgumentParser, *metavars: str, **helps: str) -> None:
    """Plain positional arguments, each named by its metavar (``"WORD1"``: ``args.word1``):
    ``metavars`` without a help, then ``helps`` with theirs (``A="the first vectors file"``)."""
    for metavar, help in [*((m, None) for m in metavars), *helps.items()]:
        parser.add_argument(metavar.lower(), metavar=metavar, help=help)


def add_json(parser: argparse.ArgumentParser, what: str = "print JSON") -> None:
    """The ``--json`` switch of a command that prints text; ``what`` says what it prints."""
    parser.add_argument("--json", action="store_true", help=what)


def add_lower(parser: argparse.ArgumentParser) -> None:
    """The ``--lower`` switch of a command that reads text with its own tokenizer."""
    parser.add_argument("--lower", action="store_true", help="lower-case the text first")


def add_seed(parser: argparse.ArgumentParser, what: str = "", default: int = 0) -> None:
    """The ``--seed N`` of a command that draws at random; ``what`` says what the seed
    seeds (``"t-SNE seed"``), shown before the default."""
    add_option(parser, "--seed", what, default=default)


def add_training_run(
    parser: argparse.ArgumentParser, checkpoint: str = "save the model here after every epoch"
) -> None:
    """``--checkpoint FILE``, ``--resume`` and ``--quiet`` of a command that trains a model."""
    add_option(parser, "--checkpoint", checkpoint, metavar="FILE")
    parser.add_argument("--resume", action="store_true", help="continue from --checkpoint FILE")
    parser.add_argument("--quiet", action="store_true", help="no progress bar, no summary")


def add_sample_options(parser: argparse.ArgumentParser, length: int) -> None:
    """``--sample-length``, ``--temperature`` and ``--prompt`` of a command that trains a
    language model and prints a sample of ``length`` tokens after training."""
    add_option(
        parser,
        "--sample-length",
        "tokens to sample after training, 0 for none",
        default=length,
        metavar="N",
    )
    add_option(parser, "--temperature", "sampling temperature", default=0.8)
    add_option(parser, "--prompt", "text the sample starts with", default="", shown=None)


def add_unicode_errors(parser: argparse.ArgumentParser) -> None:
    """The ``--unicode-errors`` option of a command that reads text files."""
    add_option(
        parser,
        "--unicode-errors",
        "what to do with bytes that are not UTF-8: stop with an error, or read them as U+FFFD",
        default="strict",
        choices=("strict", "replace"),
    )


def add_vectors_reading(parser: argparse.ArgumentParser) -> None:
    """``--unicode-errors``, ``--mmap`` / ``--no-mmap`` and ``--cache-dir`` of a command that
    reads a vectors file."""
    add_unicode_errors(parser)
    parser.add_argument(
        "--mmap",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="map the table from the file instead of reading it (default: when the "
        "file is 256 MiB or more); word2vec, GloVe and fastText files are converted "
        "once into a mapped cache beside them",
    )
    add_option(
        parser,
        "--cache-dir",
        "keep mapped caches in DIR instead of beside the vectors file",
        metavar="DIR",
    )


def add_scheduler(parser: argparse.ArgumentParser, stays_here: str) -> None:
    """The ``--scheduler ADDRESS`` option of a command that counts a corpus
    (:mod:`rowbook.cli._cluster`); ``stays_here`` says what still runs on this machine."""
    add_option(
        parser,
        "--scheduler",
        "count CORPUS on the Dask scheduler at ADDRESS (tcp://HOST:8786), one "
        "task per file, the counts summed: the same result as counting here. "
        "'local' starts worker processes on this machine. The workers must read "
        f"the files at the same paths. {stays_here} Needs pip install "
        "'rowbook[dask]'",
        metavar="ADDRESS",
    )


def check_input_file(path: str | Path, what: str) -> Path:
    """``path`` as a Path if it is a regular file, else an error naming ``what`` it should
    have been (missing, a folder, a FIFO: :func:`rowbook.corpus_files.check_regular_file`)."""
    return check_regular_file(path, f"{what} file")


def check_output_path(path: str | Path) -> Path:
    """``path`` as a Path, or an ``OSError`` if it cannot be written: its folder does not
    exist or is not writable, or it is a folder. Checked before long work, so that the
    work does not fail at the end; writability by creating (and removing) a file there,
    as the atomic save will."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {path}: folder {folder} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"cannot write {path}: it is a folder; give a file name")
    try:
        with tempfile.TemporaryFile(dir=folder, prefix=f".{path.name}.", suffix=".probe"):
            pass
    except OSError as err:
        raise PermissionError(
            f"cannot write {path}: folder {folder} is not writable "
            f"({err.strerror or err}); choose another output path"
        ) from None
    return path


def given_corpus(
    sources: str | Sequence[str],
    *,
    tokenizer: Any = None,
    errors: str = "strict",
    progress: bool = False,
) -> CorpusSource:
    """The corpus a command was given, decided once (:func:`rowbook.corpus_source.corpus_source`:
    files, folders, standard input, compressed; the files listed and checked here), read with
    ``tokenizer`` and ``--unicode-errors``; with ``progress``, a bar while it is read when it
    is files (not standard input) of more than :data:`PROGRESS_BYTES` in all."""
    named = [sources] if isinstance(sources, str) else sources
    paths = [name if name == STDIN else Path(name) for name in named]  # never token lists
    source = corpus_source(paths, tokenizer=tokenizer, errors=errors)
    size = source.file_bytes() if progress else None
    return replace(source, show_progress=size is not None and size > PROGRESS_BYTES)


def read_lines(
    sources: str | Sequence[str], *, progress: bool = False, errors: str = "strict"
) -> Iterator[str]:
    """Lines of files, folders or standard input (``-``), read by the one corpus reader,
    :mod:`rowbook.corpus_files` (compressed files, bad bytes with their offset or U+FFFD
    with ``errors="replace"``, long lines in pieces); ``progress`` as in
    :func:`given_corpus`."""
    return given_corpus(sources, errors=errors, progress=progress).lines()


def source_name(sources: str | Sequence[str], what: str = "corpus") -> str:
    """How to name an input in a message: ``corpus x.txt``, ``standard input``, or
    ``corpus a.txt b/`` for several."""
    if isinstance(sources, str):
        sources = [sources]
    if list(sources) == [STDIN]:
        return "standard input"
    return f"{what} {' '.join(s if s != STDIN else '- (standard input)' for s in sources)}"


def check_words(vectors: Any, words: Sequence[str], source: str) -> None:
    """``KeyError`` naming the first word missing from ``vectors``, with close spellings.

    Vectors that build a vector for any word from its n-grams (a fastText ``.bin``) take
    unseen words too, with a note on stderr saying so.
    """
    for word in words:
        if word in vectors:
            continue
        n_grams = len(vectors.subword_ids(word)) if hasattr(vectors, "subword_ids") else 0
        if n_grams:
            print(
                f"'{word}' is not in the vocabulary; its vector is built from {n_grams} n-grams",
                file=sys.stderr,
            )
            continue
        close = difflib.get_close_matches(word, list(vectors.index_to_key), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise UnknownKeyError(f"word {word!r} is not in {source} ({len(vectors)} words){hint}")


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], align: str = "") -> str:
    """Rows as aligned text columns; ``align`` has one ``l`` or ``r`` per column (default ``l``).

    >>> print(format_table(["word", "cosine"], [["queen", "0.85"], ["princess", "0.57"]], "lr"))
    word      cosine
    queen       0.85
    princess    0.57
    """
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[j]) for row in cells) for j in range(len(headers))]
    align = align.ljust(len(headers), "l")
    lines = []
    for row in cells:
        parts = [
            c.rjust(w) if a == "r" else c.ljust(w)
            for c, w, a in zip(row, widths, align, strict=True)
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def print_json(obj: Any) -> None:
    """``obj`` as indented JSON on standard output (non-ASCII kept as is)."""
    print(json.dumps(obj, ensure_ascii=False, indent=2))
