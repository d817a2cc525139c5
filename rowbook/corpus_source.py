"""What a corpus is, decided once where it arrives, and how to read it.

A trainer is given a corpus in one of several forms: a path, ``"-"`` (standard input), a
folder, a list of those, or token lists in memory (a list, or any iterable, a one-shot
generator included). :func:`corpus_source` looks at what was given, once, at the door
(a model's ``fit`` / ``build_vocab`` / ``train``, :func:`rowbook.data.read_corpus`, each
command of the command line) and returns a :class:`CorpusSource` that says it: the files
to read, in reading order (folders expanded, every file checked), or the token lists;
with how to read them (the tokenizer that splits a line, what to do with bad bytes,
whether to draw a bar). Everything below -- the spill decision
(:mod:`rowbook.data.spill`), the first pass on every core (:mod:`rowbook.data.scan`), the
sentence reader (:func:`rowbook.data.iter_sentences`) -- takes the source and never asks
again what the input is.

The files themselves are read by :mod:`rowbook.corpus_files`, the one corpus reader
(compression, decoding, long lines in bounded pieces, byte ranges for several processes).

Examples
--------
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
>>> _ = open(path, "w").write("the cat\\nsat\\n")
>>> source = corpus_source(path)
>>> source.is_files, [p.name for p in source.files], list(source.lines())
(True, ['corpus.txt'], ['the cat', 'sat'])
>>> corpus_source([["the", "cat"]]).is_files
False
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rowbook.checks import InputTypeError
from rowbook.corpus_files import (
    CHUNK_BYTES,
    STDIN,
    Part,
    file_parts,
    is_compressed,
    is_file_source,
    read_batches,
    source_files,
)

__all__ = ["COMPRESSION", "CorpusSource", "corpus_source", "tokenize_with"]

#: A gzip, bzip2 or xz file is counted as this many times its size in text
#: (:meth:`CorpusSource.text_bytes`).
COMPRESSION = 4


def tokenize_with(tokenizer: Any) -> Callable[[str], list[str]]:
    """The ``str -> list[str]`` a ``tokenizer`` argument stands for: ``str.split`` for None,
    its ``tokenize`` method, or the callable itself.

    >>> tokenize_with(None)("a b"), tokenize_with(lambda s: list(s))("ab")
    (['a', 'b'], ['a', 'b'])
    """
    if tokenizer is None:
        return str.split
    if hasattr(tokenizer, "tokenize"):
        return tokenizer.tokenize
    if callable(tokenizer):
        return tokenizer
    raise InputTypeError(
        f"tokenizer must be None, a callable str -> list[str] or have a tokenize method, "
        f"got {type(tokenizer).__name__}"
    )


@dataclass(frozen=True)
class CorpusSource:
    """A corpus as :func:`corpus_source` decided it: files or token lists, and how to read them.

    Attributes
    ----------
    files : tuple of Path or "-"
        The files to read, in reading order (``"-"``: standard input); empty for token lists.
    sentences : iterable of token lists or None
        The token lists given in memory (``None``: the corpus is ``files``).
    tokenizer : any
        What splits a line of a file (``None``: whitespace), as given: a callable or an
        object with ``tokenize``. Token lists are not split again.
    errors : {"strict", "replace"}
        Invalid UTF-8 in a file: an error naming file, offset and line, or U+FFFD.
    show_progress : bool
        Draw a bar in bytes while the files are read.
    """

    files: tuple[Path | str, ...] = ()
    sentences: Iterable[Sequence[str]] | None = None
    tokenizer: Any = None
    errors: Literal["strict", "replace"] = "strict"
    show_progress: bool = False
    tokenize: Callable[[str], list[str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "tokenize", tokenize_with(self.tokenizer))
        if self.errors not in ("strict", "replace"):
            raise ValueError(f"errors must be 'strict' or 'replace', got {self.errors!r}")

    @property
    def is_files(self) -> bool:
        """Whether the corpus is files read line by line (else token lists)."""
        return self.sentences is None

    @property
    def reads_stdin(self) -> bool:
        """Whether standard input is one of the files (it can be read only once)."""
        return STDIN in self.files

    @property
    def splits_on_whitespace(self) -> bool:
        """Whether the corpus is files split by the default tokenizer (``str.split``): the
        first pass then cuts their bytes in compiled code (:mod:`rowbook.data.scan_kernels`)."""
        return self.is_files and self.tokenizer is None

    def batches(
        self, chunk_bytes: int = CHUNK_BYTES, *, as_bytes: bool = False
    ) -> Iterator[tuple[list[str] | bytes, bool]]:
        """The files' lines in batches, long lines in pieces
        (:func:`rowbook.corpus_files.read_batches`; ``as_bytes``: as UTF-8 bytes)."""
        return read_batches(self.files, self.errors, self.show_progress, chunk_bytes, as_bytes)

    def pieces(self, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[str, bool]]:
        """``(text, ends_line)`` for every line of the files, long ones in pieces."""
        for texts, ends_line in self.batches(chunk_bytes):
            for text in texts:
                yield text, ends_line

    def lines(self) -> Iterator[str]:
        """The files' lines without their line ends (a long line as several pieces)."""
        for texts, _ in self.batches():
            yield from texts

    def parts(self, part_bytes: int) -> list[Part]:
        """The files cut into :class:`~rowbook.corpus_files.Part` s for several processes."""
        return file_parts(self.files, part_bytes)

    def file_bytes(self) -> int | None:
        """Bytes on disk of the files, or ``None`` (token lists, standard input)."""
        if not self.is_files or self.reads_stdin:
            return None
        return sum(Path(f).stat().st_size for f in self.files)

    def text_bytes(self) -> int | None:
        """Bytes of text the files hold, a compressed file counted :data:`COMPRESSION` times
        its size, or ``None`` when that is unknown before reading: token lists, a pipe on
        standard input (a regular file redirected to it is sized)."""
        if not self.is_files:
            return None
        total = 0
        for file in self.files:
            if file == STDIN:
                size = _stdin_size()
                if size is None:
                    return None
                total += size
            else:
                size = Path(file).stat().st_size
                total += size * (COMPRESSION if is_compressed(file) else 1)
        return total


def corpus_source(
    corpus: Any,
    *,
    tokenizer: Any = None,
    errors: Literal["strict", "replace"] = "strict",
    show_progress: bool = False,
) -> CorpusSource:
    """The :class:`CorpusSource` of what the user gave: the one place that decides it.

    ``corpus`` is a path (``str`` or ``pathlib.Path``), ``"-"``, a folder, a non-empty list
    or tuple of those (``pathlib.Path`` items, or ``str`` items that all name existing files
    or folders, or ``"-"``), or else an iterable of token lists. A :class:`CorpusSource` is
    returned as it is (then the reading options belong to it, and giving them again is
    refused).

    Examples
    --------
    >>> corpus_source([["a", "b"]], tokenizer=str.split).sentences
    [['a', 'b']]
    >>> corpus_source(b"text")
    Traceback (most recent call last):
    ...
    rowbook.checks.InputTypeError: corpus must be a path or an iterable of token lists, got bytes
    """
    if isinstance(corpus, CorpusSource):
        if tokenizer is not None or errors != "strict" or show_progress:
            raise InputTypeError(
                "a CorpusSource already says how it is read: give the tokenizer, errors and "
                "show_progress to corpus_source(...), not again here"
            )
        return corpus
    if is_file_source(corpus):
        files = tuple(source_files(corpus))
        return CorpusSource(files, tokenizer=tokenizer, errors=errors, show_progress=show_progress)
    if isinstance(corpus, str | bytes) or not isinstance(corpus, Iterable):
        raise InputTypeError(
            f"corpus must be a path or an iterable of token lists, got {type(corpus).__name__}"
        )
    return CorpusSource(
        sentences=corpus, tokenizer=tokenizer, errors=errors, show_progress=show_progress
    )


def _stdin_size() -> int | None:
    """The size of standard input when it is a regular file, else ``None`` (a pipe)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return None
    if not stat.S_ISREG(mode):
        return None
    return os.fstat(sys.stdin.fileno()).st_size
