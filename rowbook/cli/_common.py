"""What every command shares: the parser, one-line errors, input lines, tables and JSON.

Conventions of the ``rowbook`` command line:

* a bad input is reported as one line, ``rowbook <command>: error: <what and how to fix>``,
  with exit status 2 (argparse's usage errors included);
* a path of ``-`` reads standard input (corpora and texts);
* query commands print aligned tables, or JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

__all__ = [
    "PROGRESS_BYTES",
    "STDIN",
    "HelpFormatter",
    "Parser",
    "add_command",
    "check_input_file",
    "check_output_path",
    "check_words",
    "format_table",
    "print_json",
    "read_lines",
    "source_name",
]

STDIN = "-"
#: Files smaller than this are read without a progress bar (it would only flash).
PROGRESS_BYTES = 16 * 2**20


class HelpFormatter(argparse.HelpFormatter):
    """Wraps descriptions to the terminal; keeps the ``examples:`` epilog line by line."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line (status 2) pointing at ``--help``."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def add_command(commands: Any, name: str, *, help: str, description: str, examples: Sequence[str],
                run: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:  # fmt: skip
    """Add a sub-command with an examples epilog; ``run(args)`` is called with its arguments."""
    epilog = "examples:\n" + "\n".join(f"  {line}" for line in examples)
    parser = commands.add_parser(name, help=help, description=description, epilog=epilog,
                                 formatter_class=HelpFormatter)  # fmt: skip
    parser.set_defaults(run=run, prog=parser.prog)
    return parser


def check_input_file(path: str | Path, what: str) -> Path:
    """``path`` as a Path, or ``FileNotFoundError`` naming ``what`` it should have been."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} file {path} does not exist")
    if not path.is_file():
        raise FileNotFoundError(f"{what} {path} is not a file")
    return path


def check_output_path(path: str | Path) -> Path:
    """``path`` as a Path, or ``FileNotFoundError`` if its folder does not exist (checked
    before long work, so that it does not fail at the end)."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {path}: folder {folder} does not exist")
    if path.is_dir():
        raise IsADirectoryError(f"cannot write {path}: it is a folder; give a file name")
    return path


def read_lines(source: str, what: str, *, progress: bool = False) -> Iterator[str]:
    """Lines of a UTF-8 file, or of standard input for ``-``, without their line ends.

    A file is read lazily with :func:`rowbook.text.iter_lines` (invalid UTF-8 is reported
    with its byte offset and line); ``progress`` shows a bar in bytes read for files over
    :data:`PROGRESS_BYTES`.
    """
    if source == STDIN:
        return (line.rstrip("\r\n") for line in sys.stdin)
    from rowbook.text import iter_lines

    path = check_input_file(source, what)
    return iter_lines(path, show_progress=progress and path.stat().st_size > PROGRESS_BYTES)


def source_name(source: str, what: str = "corpus") -> str:
    """How to name an input in a message: ``corpus x.txt``, or ``standard input``."""
    return "standard input" if source == STDIN else f"{what} {source}"


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
            print(f"'{word}' is not in the vocabulary; its vector is built from {n_grams} n-grams",
                  file=sys.stderr)  # fmt: skip
            continue
        close = difflib.get_close_matches(word, list(vectors.index_to_key), n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise KeyError(f"word {word!r} is not in {source} ({len(vectors)} words){hint}")


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
