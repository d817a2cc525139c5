"""Read text inputs: files, standard input, folders, lists of them; compressed or not.

One file over 400 lines on purpose: it is the one corpus reader (files, folders, standard
input, compression, the parts that processes read in parallel), kept whole so there stays
one.

The one reader of corpora for the library and the command line (the corpus-reading
half of :mod:`rowbook.io`, kept in its own file for size). A **source** is

* a path to a regular file;
* ``"-"``: standard input;
* a folder: every regular file under it, recursively, in **sorted path order**: paths
  relative to the folder compared component by component, as ``sorted()`` orders
  ``pathlib.Path`` objects (so ``a/b.txt`` < ``a.txt`` < ``b.txt``, by code point); hidden
  files and folders (names starting with ``.``) are skipped;
* a list or tuple of these, read one after the other in the order given.

Files compressed with gzip, bzip2 or xz are decompressed on the fly. They are
recognised by their first bytes (magic numbers), not by their suffix, so a renamed file
still reads (:func:`open_binary`, also used for vector files).

Lines are split at ``\\n``; a ``\\r\\n`` ending is dropped whole. The text is UTF-8: an
invalid byte raises ``ValueError`` naming the file, the byte offset (in the decompressed
text) and the line, unless ``errors="replace"`` substitutes U+FFFD. FIFOs, devices and
other non-regular files are refused (they may block forever or never end); use ``"-"``
to read a pipe.

**Memory is bounded per line.** A line is read in pieces of at most ``chunk_bytes``
bytes (1 MiB by default). A longer line is cut just before a run of whitespace, so
whitespace splitting and the word tokenizer find the same tokens as in the whole line,
and GPT-2's byte-level pre-tokenizer the same words (a token of whitespace only may be
cut in two); a run of more than ``chunk_bytes`` bytes without any
ASCII whitespace is cut at the nearest character boundary. :func:`iter_pieces` says
which piece ends its line; :func:`iter_lines` yields the pieces as consecutive items.
Sentence readers (:func:`rowbook.data.iter_sentences`) join the pieces of one line and
cut it every ``max_sentence_length`` tokens, as gensim's ``LineSentence`` does.

**Parts, for reading on every core.** :func:`source_parts` cuts a source into
:class:`Part` s that processes can read side by side (:mod:`rowbook.data.scan`): an
uncompressed file into byte ranges of about ``part_bytes``, a compressed file whole (its
stream cannot be entered in the middle). A range holds the lines that *start* in it: it
begins at the first line break after its offset (at byte 0 for the first) and its last
line runs past its end to that line's break, so every line is read once, by one range,
and its pieces are those a whole-file read gives (:func:`iter_part_batches`). Standard
input is never cut.

Examples
--------
>>> import os, tempfile, gzip
>>> folder = tempfile.mkdtemp()
>>> with gzip.open(os.path.join(folder, "b.txt.gz"), "wt") as f:
...     _ = f.write("the cat\\r\\nsat\\n")
>>> _ = open(os.path.join(folder, "a.txt"), "w").write("on the mat")
>>> list(iter_lines(folder))
['on the mat', 'the cat', 'sat']
>>> list(iter_pieces(os.path.join(folder, "a.txt"), chunk_bytes=8))
[('on the', False), (' mat', True)]
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import itertools
import lzma
import os
import stat
import sys
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np

from rowbook.checks import InputTypeError, ParameterHint

__all__ = [
    "CHUNK_BYTES",
    "PART_BYTES",
    "STDIN",
    "Part",
    "Source",
    "check_regular_file",
    "file_parts",
    "is_compressed",
    "is_file_source",
    "iter_batches",
    "iter_lines",
    "iter_part_batches",
    "iter_pieces",
    "open_binary",
    "read_batches",
    "read_texts",
    "source_files",
    "source_parts",
]

STDIN = "-"
#: Longest piece of a line read at once, in bytes.
CHUNK_BYTES = 1 << 20
#: Bytes of an uncompressed file in one :class:`Part` (:func:`source_parts`).
PART_BYTES = 1 << 24

Source = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]
Buffer = bytes | bytearray | memoryview  # a block of a file, or a view of the reading buffer

_MAGIC = (
    (b"\x1f\x8b", "gzip", lambda f: gzip.GzipFile(fileobj=f, mode="rb")),
    (b"BZh", "bzip2", bz2.BZ2File),
    (b"\xfd7zXZ\x00", "xz", lzma.LZMAFile),
)
_CORRUPT = (OSError, EOFError, lzma.LZMAError, zlib.error)  # what broken compressed data raises
_SPACE = b" \t\n\r\x0b\x0c"


def check_regular_file(path: str | os.PathLike[str], what: str = "file") -> Path:
    """``path`` as a Path if it is a regular file; else an error naming it and what it is."""
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} {path} does not exist") from None
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"{what} {path} is a folder, not a file")
    if not stat.S_ISREG(mode):
        kind = "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "not a regular file"
        raise ValueError(
            f"{what} {path} is {kind}; rowbook reads regular files only (to read "
            "a pipe, give '-' and redirect it to standard input)"
        )
    return path


@contextlib.contextmanager
def open_binary(path: str | os.PathLike[str], what: str = "file") -> Iterator[IO[bytes]]:
    """Open a regular file (or ``"-"``, standard input) for reading bytes, decompressed.

    gzip, bzip2 and xz are recognised by their magic bytes; corrupt or truncated
    compressed data raises ``ValueError`` naming the file.
    """
    with _open(path, what) as (stream, _):
        yield stream


@contextlib.contextmanager
def _open(path: str | os.PathLike[str], what: str) -> Iterator[tuple[IO[bytes], IO[bytes] | None]]:
    """``(decompressed stream, underlying file or None for standard input)``."""
    if os.fspath(path) == STDIN:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream put in place of stdin (tests, notebooks)
            stream = io.BytesIO(sys.stdin.read().encode("utf-8"))
        stream = stream if hasattr(stream, "peek") else io.BufferedReader(stream)
        name, raw = "standard input", None
    else:
        path = check_regular_file(path, what)
        name, raw = f"{what} {path}", open(path, "rb")
        stream = raw
    with contextlib.ExitStack() as stack:
        if raw is not None:
            stack.enter_context(raw)
        head = stream.peek(6)[:6]
        kind = next((k for magic, k, _ in _MAGIC if head.startswith(magic)), None)
        if kind is not None:
            opener = next(o for _, k, o in _MAGIC if k == kind)
            stream = opener(stream)
        try:
            yield stream, raw
        except _CORRUPT as err:
            if kind is None or not _is_corrupt_data(err):
                raise
            raise ValueError(f"{name} is corrupt or truncated {kind} data ({err})") from None


def _is_corrupt_data(err: BaseException) -> bool:
    """Whether a decompressor raised ``err`` (bz2 says "Invalid data stream": an OSError
    without errno), not the file system or the code reading the stream."""
    if isinstance(err, EOFError | lzma.LZMAError | zlib.error | gzip.BadGzipFile):
        return True
    return type(err) is OSError and err.errno is None


def source_files(source: Source) -> list[Path | str]:
    """The files a source names, in reading order (``"-"`` stays ``"-"``).

    Examples
    --------
    >>> source_files("-")
    ['-']
    """
    items = [source] if isinstance(source, str | os.PathLike) else source
    if isinstance(items, bytes) or not isinstance(items, Sequence) or not items:
        raise InputTypeError(
            f"a corpus source is a path, '-', a folder or a non-empty list of "
            f"those, got {_shown(source)}"
        )
    files: list[Path | str] = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise InputTypeError(f"a corpus source is a path, '-' or a folder, got {_shown(item)}")
        if os.fspath(item) == STDIN:
            files.append(STDIN)
        elif Path(item).is_dir():
            files += _folder_files(Path(item))
        else:
            files.append(check_regular_file(item, "corpus file"))
    if files.count(STDIN) > 1:
        raise ValueError("'-' (standard input) can be read only once; give it once")
    return files


def is_compressed(path: str | os.PathLike[str]) -> bool:
    """Whether the regular file ``path`` starts with the magic bytes of gzip, bzip2 or xz."""
    with open(path, "rb") as f:
        head = f.read(6)
    return any(head.startswith(magic) for magic, _, _ in _MAGIC)


@dataclass(frozen=True)
class Part:
    """What one process reads of a source: a whole file (``span`` None; standard input is
    ``"-"``) or the lines of a file that start in the byte range ``span = (start, stop)``."""

    file: Path | str
    span: tuple[int, int] | None = None


def source_parts(source: Source, part_bytes: int = PART_BYTES) -> list[Part]:
    """The :class:`Part` s of a source, in reading order: each uncompressed file cut into
    ranges of about ``part_bytes`` (at least one), compressed files and ``"-"`` whole.

    Reading the parts one after the other with :func:`iter_part_batches` gives the pieces
    :func:`iter_batches` gives.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    >>> _ = open(path, "w").write("the cat\\nsat on\\nthe mat\\n")
    >>> [p.span for p in source_parts(path, part_bytes=8)]
    [(0, 7), (7, 15), (15, 23)]
    >>> [list(iter_part_batches(p)) for p in source_parts(path, part_bytes=8)]
    [[(['the cat'], True)], [(['sat on'], True)], [(['the mat'], True)]]
    """
    return file_parts(source_files(source), part_bytes)


def file_parts(files: Sequence[Path | str], part_bytes: int = PART_BYTES) -> list[Part]:
    """:func:`source_parts` of files already listed (:func:`source_files`)."""
    parts = []
    for file in files:
        if file == STDIN or is_compressed(file):
            parts.append(Part(file))
            continue
        size = file.stat().st_size
        n = max(1, -(-size // part_bytes))
        bounds = [size * k // n for k in range(n + 1)]
        parts += [Part(file, (a, b)) for a, b in itertools.pairwise(bounds)]
    return parts


def iter_part_batches(
    part: Part,
    *,
    errors: Literal["strict", "replace"] = "strict",
    chunk_bytes: int = CHUNK_BYTES,
    as_bytes: bool = False,
) -> Iterator[tuple[list[str] | Buffer, bool]]:
    """:func:`iter_batches` of one :class:`Part`: its lines (long ones in pieces, cut where
    a whole-file read cuts them). An invalid byte names the file, its byte offset and
    its line, as for a whole file. ``as_bytes``: each batch as :func:`read_batches` gives it."""
    _check_reading(errors, chunk_bytes)
    yield from _file_batches(part.file, errors, chunk_bytes, _NoBar(), part.span, as_bytes)


def _check_reading(errors: str, chunk_bytes: int) -> None:
    """Refuse a bad ``errors`` or ``chunk_bytes`` before anything is read."""
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
    if not isinstance(chunk_bytes, int) or chunk_bytes < 8:
        raise ValueError(f"chunk_bytes must be an int >= 8, got {chunk_bytes!r}")


class _LineRange:
    """The bytes of the lines of an uncompressed file that start in ``[start, stop)``, read
    with ``readinto1`` as a stream: from the byte after the first line break at or after
    ``start - 1`` (byte 0 when ``start`` is 0) to the line break that ends the last line
    starting before ``stop`` (or the end of the file)."""

    def __init__(self, raw: IO[bytes], start: int, stop: int) -> None:
        self._raw, self._stop = raw, stop
        self.first = self._first_line(start, stop)
        raw.seek(self.first)
        self._pos, self._done, self._last = self.first, self.first >= stop, b"\n"

    def _first_line(self, start: int, stop: int) -> int:
        """Where the first line starting in ``[start, stop)`` starts (``stop``: none does)."""
        if start == 0:
            return 0
        self._raw.seek(start - 1)
        pos = start - 1
        while pos < stop - 1:
            block = self._raw.read(min(CHUNK_BYTES, stop - 1 - pos))
            if not block:
                break
            found = block.find(b"\n")
            if found >= 0:
                return pos + found + 1
            pos += len(block)
        return stop

    def readinto1(self, view: memoryview) -> int:
        """Read the range's next bytes into ``view``; how many (0 at its end)."""
        if self._done:
            return 0
        within = self._pos < self._stop
        if not within and self._last == b"\n":  # the last line ended at the range's end
            self._done = True
            return 0
        n = self._raw.readinto1(view[: min(len(view), self._stop - self._pos)] if within else view)
        if not n:
            self._done = True
            return 0
        if not within:  # the last line, up to its line break
            found = bytes(view[:n]).find(b"\n")
            if found >= 0:
                n, self._done = found + 1, True
        self._pos, self._last = self._pos + n, bytes(view[n - 1 : n])
        return n


def _shown(obj: object) -> str:
    return f"{type(obj).__name__} {obj!r}"[:80]


def _folder_files(folder: Path) -> list[Path]:
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [Path(root, n) for n in names if not n.startswith(".")]
    files = sorted((p for p in found if p.is_file()), key=lambda p: p.relative_to(folder).parts)
    if not files:
        raise ValueError(f"corpus folder {folder} holds no files (hidden files are skipped)")
    return files


def iter_pieces(
    source: Source,
    *,
    errors: Literal["strict", "replace"] = "strict",
    show_progress: bool = False,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[tuple[str, bool]]:
    """Yield ``(text, ends_line)``: the lines of every file, long ones in pieces.

    Parameters
    ----------
    source : path, "-", folder, or a list of those
        See the module docstring for the order in which files are read.
    errors : {"strict", "replace"}, default "strict"
        Invalid UTF-8: ``ValueError`` with file, byte offset and line, or U+FFFD.
    show_progress : bool, default False
        A progress bar in (compressed) bytes read.
    chunk_bytes : int, default :data:`CHUNK_BYTES`
        Longest piece read at once; a longer line comes in several pieces, all but the
        last with ``ends_line=False``.
    """
    for texts, ends_line in iter_batches(
        source, errors=errors, show_progress=show_progress, chunk_bytes=chunk_bytes
    ):
        for text in texts:
            yield text, ends_line


def iter_batches(
    source: Source,
    *,
    errors: Literal["strict", "replace"] = "strict",
    show_progress: bool = False,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[tuple[list[str], bool]]:
    """:func:`iter_pieces` in batches, for speed: ``(texts, ends_line)``, every text of a
    batch a whole line (``True``) or a single piece of a long line (``False``)."""
    _check_reading(errors, chunk_bytes)
    yield from read_batches(source_files(source), errors, show_progress, chunk_bytes)


def read_batches(
    files: Sequence[Path | str],
    errors: Literal["strict", "replace"] = "strict",
    show_progress: bool = False,
    chunk_bytes: int = CHUNK_BYTES,
    as_bytes: bool = False,
) -> Iterator[tuple[list[str] | Buffer, bool]]:
    """:func:`iter_batches` of files already listed (:func:`source_files`).

    ``as_bytes=True`` gives each batch as the UTF-8 bytes of its texts instead of a list of
    them: a batch of whole lines as one buffer, every line (the last one of a file too)
    ending with ``\\n`` and ``\\r\\n`` kept, a piece of a long line as its bytes. They are
    checked as the text is (``errors``), and with ``errors="replace"`` are the replaced
    text's: what a compiled scanner reads without decoding every line
    (:mod:`rowbook.data.scan_kernels`). A batch may be a view of the reading buffer, valid
    until the next batch is asked for: copy it (``bytes(batch)``) to keep it.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    >>> _ = open(path, "wb").write(b"the cat\\r\\nsat")
    >>> [(bytes(batch), whole) for batch, whole in read_batches([path], as_bytes=True)]
    [(b'the cat\\r\\n', True), (b'sat\\n', True)]
    """
    _check_reading(errors, chunk_bytes)
    with _reading_bar(files, show_progress) as bar:
        for file in files:
            yield from _file_batches(file, errors, chunk_bytes, bar, None, as_bytes)


class _NoBar:
    def update(self, n: int) -> None:
        pass


def _reading_bar(files: list[Path | str], show: bool) -> contextlib.AbstractContextManager[Any]:
    """A tqdm bar in (compressed) bytes read, or a stand-in that imports no tqdm (which
    brings asyncio along: 40 ms and a few MB for a bar nobody sees)."""
    if not show:
        return contextlib.nullcontext(_NoBar())
    from tqdm.auto import tqdm

    total = None if STDIN in files else sum(f.stat().st_size for f in files if isinstance(f, Path))
    return tqdm(total=total, unit="B", unit_scale=True, desc="reading")


def iter_lines(
    source: Source,
    *,
    errors: Literal["strict", "replace"] = "strict",
    show_progress: bool = False,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[str]:
    """Yield the lines of a source without their line ends; a long line as several pieces.

    The arguments are those of :func:`iter_pieces`.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    >>> _ = open(path, "wb").write(b"caf\\xc3\\xa9\\nbad \\xff byte\\r\\n")
    >>> list(iter_lines(path, errors="replace"))
    ['café', 'bad \\ufffd byte']
    >>> list(iter_lines(path))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    rowbook.checks.ParameterHint: ...corpus.txt: invalid UTF-8 at byte offset 10 (line 2)...
    """
    for texts, _ in iter_batches(
        source, errors=errors, show_progress=show_progress, chunk_bytes=chunk_bytes
    ):
        yield from texts


def _file_batches(
    file: Path | str,
    errors: str,
    chunk: int,
    bar: Any,
    span: tuple[int, int] | None = None,
    as_bytes: bool = False,
) -> Iterator[tuple[list[str] | bytes, bool]]:
    """Blocks of at most ``chunk`` bytes, the unfinished line before included; a block's
    complete lines are decoded at once, and an unfinished line ``chunk`` long is cut.
    ``span``: only the lines that start in that byte range (:class:`Part`); ``as_bytes``:
    the checked bytes instead of the texts (:func:`read_batches`)."""
    lines, piece = (_utf8, _utf8) if as_bytes else (_lines, _piece)
    name = "standard input" if file == STDIN else str(file)
    with _open(file, "corpus file") as (f, raw):
        where = _Where(name, 0)  # of window[0]
        if span is not None:
            f = _LineRange(raw, *span)
            where = _Where(name, f.first, 0, lambda: _lines_before(file, f.first))
        # One buffer for the whole file, read into and cut in place: a fresh block of a
        # megabyte or so a batch, of sizes that differ by the unfinished line, left glibc's
        # heap fragmented behind the few arrays that live on, and a long pass's peak grew.
        window, filled, open_line, seen = bytearray(chunk), 0, False, where.offset
        view = memoryview(window)
        while n := f.readinto1(view[filled:]):  # readinto1: a pipe's lines come when written
            position = raw.tell() if raw is not None else seen + n
            bar.update(position - seen)
            filled, seen = filled + n, position
            end = window.rfind(b"\n", 0, filled) + 1
            if end:
                yield lines(view[:end], errors, where), True
                where, filled, open_line = (
                    where.after(window, end),
                    _shift(window, end, filled),
                    False,
                )
            if filled == chunk:  # a long line: a piece now, the rest later
                cut = _cut(bytes(window))
                yield piece(view[:cut], errors, where), False
                where, filled, open_line = (
                    where.after(window, cut),
                    _shift(window, cut, filled),
                    True,
                )
        if filled or open_line:  # the last line has no line end (given one as bytes)
            last = bytes(window[:filled])
            yield (
                (_utf8(last, errors, where) + b"\n" if as_bytes else _piece(last, errors, where)),
                True,
            )


def _shift(window: bytearray, start: int, filled: int) -> int:
    """Move ``window[start:filled]`` to the front; how many bytes it now holds."""
    rest = filled - start
    window[:rest] = window[start:filled]
    return rest


@dataclass(frozen=True)
class _Where:
    """Where a block starts, for error messages: its file's name, its byte offset and the
    line breaks before it since ``first_line()``, the number of the line where reading
    began (counted only when an error needs it: a range does not know it)."""

    name: str
    offset: int
    breaks: int = 0
    first_line: Callable[[], int] = lambda: 1

    def after(self, data: bytes, n: int) -> _Where:
        """Where ``data[n:]`` starts, ``data`` starting here."""
        breaks = self.breaks + data.count(b"\n", 0, n)
        return _Where(self.name, self.offset + n, breaks, self.first_line)

    def line_at(self, data: Buffer, k: int) -> int:
        """The line of byte ``k`` of ``data``, ``data`` starting here."""
        return self.first_line() + self.breaks + bytes(data[:k]).count(b"\n")


def _lines_before(file: Path | str, offset: int) -> int:
    """The number of the line that starts at byte ``offset`` of ``file`` (an error's line)."""
    breaks = 0
    with open(file, "rb") as f:
        while offset > 0 and (block := f.read(min(offset, CHUNK_BYTES))):
            breaks, offset = breaks + block.count(b"\n"), offset - len(block)
    return breaks + 1


def _piece(data: Buffer, errors: str, where: _Where) -> list[str]:
    """``data``, a piece of a line (or a last line without its end), decoded: one text."""
    return [_decode(data, errors, where)]


def _utf8(data: Buffer, errors: str, where: _Where) -> Buffer:
    """``data`` checked as :func:`_decode` checks it: itself when it is UTF-8 (ASCII is
    checked without decoding or copying), else the replaced text's bytes (``errors="replace"``)."""
    if np.frombuffer(data, dtype=np.uint8).max(initial=0) < 0x80:
        return data
    text = _decode(data, errors, where)
    return data if errors == "strict" else text.encode("utf-8")


def _lines(data: Buffer, errors: str, where: _Where) -> list[str]:
    """The lines of ``data`` (which ends with ``\\n``), ``\\n`` and ``\\r\\n`` dropped."""
    text = _decode(data, errors, where)
    lines = text.split("\n")
    lines.pop()  # after the last line end
    if "\r" in text:
        lines = [text[:-1] if text.endswith("\r") else text for text in lines]
    return lines


def _cut(data: bytes) -> int:
    """Where to end a piece of a long line: before its last run of whitespace; if the run
    starts the piece, before the run's last character; else before the last character.

    Cut so, GPT-2's pre-tokenizer (``" ?\\w+"``, ``"\\s+(?!\\S)"``) finds the same pieces.

    Examples
    --------
    >>> _cut(b"the cat  sat"), _cut(b"   cat"), _cut(b"    "), _cut("naïve".encode())
    (7, 2, 3, 5)
    """
    last = max(data.rfind(c) for c in (b" ", b"\t", b"\r", b"\x0b", b"\x0c"))
    while last > 0 and data[last - 1] in _SPACE:
        last -= 1
    if last > 0:
        return last
    run = len(data) - len(data.lstrip(_SPACE))  # 0 when there is no whitespace at all
    if run > 1:
        return run - 1
    starts = [k for k in range(len(data) - 1, max(len(data) - 5, 0), -1) if data[k] & 0xC0 != 0x80]
    return starts[0] if starts else len(data)


def _decode(raw: Buffer, errors: str, where: _Where) -> str:
    """``raw`` as UTF-8; an error names the file, byte offset and line (``raw`` starts
    ``where``)."""
    try:
        return str(raw, "utf-8", errors)
    except UnicodeDecodeError as err:
        line = where.line_at(raw, err.start)
        place = f"byte offset {where.offset + err.start} (line {line})"
        raise ParameterHint(
            "errors",
            "replace",
            f"{where.name}: invalid UTF-8 at {place}: {err.reason}",
            effect="to substitute U+FFFD",
        ) from None


def read_texts(
    corpus: Any, name: str = "texts", *, errors: Literal["strict", "replace"] = "strict"
) -> list[str]:
    """The non-blank texts of a list of ``str``, or the non-blank lines of a source given as
    a ``pathlib.Path`` (or a list of them): what the language models train on.

    Examples
    --------
    >>> read_texts(["the cat", "  ", "sat"])
    ['the cat', 'sat']
    """
    if isinstance(corpus, str):
        raise InputTypeError(
            f"{name} must be a list of texts or a path (pathlib.Path), got one str; "
            f"wrap it: [{name}]"
        )
    is_path = isinstance(corpus, os.PathLike) or (
        isinstance(corpus, list | tuple)
        and bool(corpus)
        and all(isinstance(c, os.PathLike) for c in corpus)
    )
    texts = list(iter_lines(corpus, errors=errors)) if is_path else list(corpus)
    if not all(isinstance(t, str) for t in texts):
        raise InputTypeError(
            f"{name} must hold str, got {sorted({type(t).__name__ for t in texts})}"
        )
    texts = [t for t in texts if t.strip()]
    if not texts:
        raise ValueError(f"{name} holds no text (every line is blank)")
    return texts


def is_file_source(corpus: Any) -> bool:
    """A path, or a non-empty list/tuple of paths: ``pathlib.Path`` items, or ``str`` items
    that all name existing files or folders (or ``"-"``); a list of token lists is not."""
    if isinstance(corpus, str | os.PathLike):
        return True
    if not isinstance(corpus, list | tuple) or not corpus:
        return False
    if all(isinstance(item, os.PathLike) for item in corpus):
        return True
    return all(
        isinstance(item, os.PathLike)
        or (isinstance(item, str) and (item == "-" or os.path.exists(item)))
        for item in corpus
    )
