"""Vector files: word2vec text and binary, GloVe text (rowbook's ``.npz``: :mod:`.npz`).

The word2vec formats are those of the original C tool, as gensim reads and writes them:

* **text**: a header line ``"<n_rows> <vector_size>"``, then one row per line,
  ``key v1 v2 ... vd``, fields separated by single spaces. GloVe files are the same
  rows without the header.
* **binary**: the same header line, then per row the UTF-8 key, one space, and
  ``vector_size`` little-endian float32 values (4 bytes each). word2vec.c writes a
  newline after each vector, gensim does not; a newline in front of a key is skipped.

A key may hold any character except the space and the newline, which delimit the
fields (:func:`check_word2vec_key`). Values are written as the shortest decimal that
reads back as the same float32, so text files round-trip exactly.

rowbook's ``.npz`` is :func:`rowbook.io.save_state`'s format. The vocabulary file of
counts and the safetensors format are in :mod:`rowbook.vectors.sidefiles`.

Text and binary files may be gzip, bzip2 or xz compressed (recognised by content, see
:func:`rowbook.corpus_files.open_binary`). Reading is strict: a row of the wrong length, a non-numeric value, a header that
disagrees with the rows, a truncated binary file, each raise a ``ValueError`` naming
the file and the line (text) or byte offset (binary). Duplicate keys keep their first
row, as in gensim, with a warning.

Reading is bounded: a header's claim is compared with the file's size before the table
is allocated (a row needs at least 2 bytes per value in text, 4 in binary), so a small
file cannot make the reader allocate more than it could hold. ``inf`` and ``nan`` (or a
value too large for float32) are refused with their line or row: they would make every
query score ``nan``.
"""

from __future__ import annotations

import io
import os
import stat
import warnings
from collections.abc import Callable, Sequence
from typing import Any, BinaryIO

import numpy as np

from rowbook.checks import ParameterHint
from rowbook.corpus_files import open_binary
from rowbook.io import atomic_write

__all__ = [
    "check_word2vec_key",
    "nonfinite_message",
    "read_word2vec",
    "write_word2vec",
]

_ROWS_PER_BLOCK = 4096  # text rows parsed per np.array call
_CHUNK_BYTES = 1 << 20  # binary read size
_MAX_KEY_BYTES = 1 << 16  # a longer "key" means the file is not word2vec binary
_FIRST_ROWS = 1 << 14  # rows allocated first when the file size cannot bound the header's claim


def _plain_file(f: Any) -> bool:
    """Whether ``f`` reads a regular file as it is on disk (not decompressed, not a pipe)."""
    return isinstance(f, io.BufferedReader) and stat.S_ISREG(os.fstat(f.fileno()).st_mode)


PathLike = str | os.PathLike[str]


def check_word2vec_key(key: str, index: int) -> None:
    """Raise if ``key`` cannot be stored in a word2vec file.

    Examples
    --------
    >>> check_word2vec_key("naïve_κλειδί-\\t", 0)
    >>> check_word2vec_key("new york", 7)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: key 'new york' (index 7) contains a space or newline, ...
    """
    if " " in key or "\n" in key:
        raise ValueError(
            f"key {key!r} (index {index}) contains a space or newline, which the word2vec "
            "format uses as field separators; rename the key (e.g. 'new_york') or save "
            "with Vectors.save(), whose .npz format stores any key"
        )


def write_word2vec(
    path: PathLike, keys: Sequence[str], vectors: np.ndarray, *, binary: bool, write_header: bool
) -> None:
    """Atomically write rows in word2vec text or binary format (byte-identical to gensim)."""
    for i, key in enumerate(keys):
        check_word2vec_key(key, i)
    if binary and not write_header:
        raise ValueError(
            "write_header=False is only for text files (GloVe); binary needs the header"
        )
    rows = np.ascontiguousarray(vectors, dtype="<f4")  # (V, d)
    with atomic_write(path) as f:
        if write_header:
            f.write(f"{rows.shape[0]} {rows.shape[1]}\n".encode())
        lines = []
        for key, row in zip(keys, rows, strict=True):
            if binary:
                lines.append(key.encode() + b" " + row.tobytes())
            else:  # str(np.float32) is the shortest decimal that reads back as the same float32
                lines.append(f"{key} {' '.join(map(str, row))}\n".encode())
            if len(lines) >= _ROWS_PER_BLOCK:
                f.write(b"".join(lines))
                lines.clear()
        f.write(b"".join(lines))


def read_word2vec(
    path: PathLike,
    *,
    binary: bool = False,
    no_header: bool = False,
    limit: int | None = None,
    encoding: str = "utf8",
    unicode_errors: str = "strict",
    dtype: np.dtype | type = np.float32,
    allow_nonfinite: bool = False,
    allocate: Callable[[tuple[int, int], np.dtype], np.ndarray] = np.empty,
) -> tuple[list[str], np.ndarray]:
    """Read a word2vec text/binary or GloVe file into ``(keys, vectors)``, vectors (V, d).

    ``limit`` reads at most that many rows (duplicates included, as gensim counts them).
    ``dtype`` is the table's type (float32, or float16 as gensim's ``datatype=``): text
    values are rounded to it once, binary float32 values converted, as gensim does.
    ``allow_nonfinite=True`` keeps ``inf`` / ``nan`` values (as gensim does) instead of
    refusing them; queries then treat such rows as zero rows (cosine 0 with everything).
    ``allocate(shape, dtype)`` makes the table the rows are read into (a memory map of a
    file, when converting a table larger than memory).
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be None (read all rows) or an int >= 1, got {limit!r}")
    if binary and no_header:
        raise ValueError(
            "no_header=True is only for text files (GloVe); binary files need the header"
        )
    reader = _Reader(os.fspath(path), encoding, unicode_errors)
    reader.allow_nonfinite, reader.allocate = bool(allow_nonfinite), allocate
    with open_binary(reader.path, "vectors file") as f:  # gzip, bzip2, xz: decompressed
        if no_header:
            n_rows, dim = reader.sniff_text(f)
            f.seek(0)
        else:
            n_rows, dim = reader.header(f.readline())
        n_read = n_rows if limit is None else min(n_rows, limit)
        reader.capacity = n_read
        if _plain_file(f):  # the claim against the bytes that follow the header
            room = os.fstat(f.fileno()).st_size - f.tell()
            reader.check_claim(n_read, dim, room, binary=binary, header=not no_header)
            reader.table = allocate((n_read, dim), np.dtype(dtype))  # (V, d)
        else:  # compressed or piped: no size to check against, so the table grows with the rows read
            reader.table = allocate((min(n_read, _FIRST_ROWS), dim), np.dtype(dtype))  # (V, d)
        if binary:
            reader.binary_rows(f, n_read, dim, check_rest=limit is None)
        else:
            reader.text_rows(f, n_read, dim, first_line=1 if no_header else 2)
            if limit is None:
                reader.check_text_rest(f, n_rows, first_line=n_rows + (1 if no_header else 2))
    return reader.finish()


class _Reader:
    """Parses rows, tracking where it is for error messages; keeps first rows of duplicates."""

    def __init__(self, path: str, encoding: str, unicode_errors: str) -> None:
        self.path, self.encoding, self.errors = path, encoding, unicode_errors
        self.allow_nonfinite = False  # True: keep inf / nan values
        self.allocate: Callable[[tuple[int, int], np.dtype], np.ndarray] = np.empty
        self.keys: list[str] = []
        self.table = np.empty((0, 0), dtype=np.float32)  # (n_rows, d), filled row by row
        self.filled = 0  # rows of `table` holding kept (first-occurrence) rows
        self.capacity = 0  # rows the header claims (the most `table` may grow to)
        self.seen: set[str] = set()
        self.duplicates: list[tuple[str, str]] = []  # (key, where its dropped row is)

    def reserve(self, rows: int) -> None:
        """Room for ``rows`` more rows: the table doubles, up to the claimed row count, so a
        table read from a compressed file never outgrows twice the rows it really has."""
        need = self.filled + rows
        if need > len(self.table):
            grown = self.allocate(
                (min(self.capacity, max(need, 2 * len(self.table))), self.table.shape[1]),
                self.table.dtype,
            )
            grown[: self.filled] = self.table[: self.filled]
            self.table = grown

    def fail(self, where: str, message: str) -> ValueError:
        return ValueError(f"{self.path}, {where}: {message}")

    def decode(self, raw: bytes, where: str) -> str:
        try:
            return raw.decode(self.encoding, self.errors)
        except UnicodeDecodeError as err:
            problem = f"{self.path}, {where}: cannot decode as {self.encoding} ({err.reason})"
            raise ParameterHint(
                "unicode_errors", "replace", problem, effect="to substitute U+FFFD"
            ) from None

    def header(self, line: bytes) -> tuple[int, int]:
        text = self.decode(line, "line 1")
        fields = text.split()
        try:
            n_rows, dim = (int(x) for x in fields)
            if n_rows < 0 or dim < 1:
                raise ValueError
        except ValueError:
            shown = text[:60].rstrip("\n")
            raise self.fail(
                "line 1",
                f"expected the header '<n_rows> <vector_size>', got {shown!r}; "
                "if the file has no header (GloVe), pass no_header=True",
            ) from None
        return n_rows, dim

    def check_claim(self, n_rows: int, dim: int, room: int, *, binary: bool, header: bool) -> None:
        """Refuse a table larger than the ``room`` bytes after the header could hold: a row
        needs at least a separator and 2 bytes a value in text (space, digit), 4 in binary."""
        if n_rows == 0:
            return
        per_value = 4 if binary else 2
        rows, size = ("header rows", "header dim") if header else ("line count", "values on line 1")
        if n_rows == 1 and dim * per_value > room:
            raise self.fail(
                "line 1",
                f"{size} {dim} cannot be true: one row of {dim} values "
                f"needs at least {dim * per_value} bytes, the file holds {room} "
                "after the header; the file is damaged or not a vector file",
            )
        if n_rows * (dim * per_value + 1) > room + 1:
            raise self.fail(
                "line 1",
                f"{rows} {n_rows} cannot be true: {n_rows} rows of {dim} "
                f"values need at least {n_rows * (dim * per_value + 1) - 1} bytes, the "
                f"file holds {room} after the header; fix the count or pass limit=",
            )

    def sniff_text(self, f: BinaryIO) -> tuple[int, int]:
        """Rows and vector size of a header-less file: non-blank lines up to the last one."""
        n_rows, dim, line_no = 0, 0, 0
        for line_no, line in enumerate(f, start=1):
            if line.strip():
                n_rows = line_no
                if dim == 0:
                    dim = len(self.decode(line, f"line {line_no}").rstrip().split(" ")) - 1
                    if dim < 1:
                        raise self.fail(
                            f"line {line_no}", "a key without values; is this a vector file?"
                        )
        if n_rows == 0:
            raise self.fail(f"line {line_no + 1}", "no vectors found: the file is empty")
        return n_rows, dim

    def keep(self, key: str, where: str) -> bool:
        """Record ``key``; False when it is a duplicate whose row must be dropped."""
        if key in self.seen:
            self.duplicates.append((key, where))
            return False
        self.seen.add(key)
        self.keys.append(key)
        return True

    def text_rows(self, f: BinaryIO, n_rows: int, dim: int, first_line: int) -> None:
        tokens: list[str] = []
        lines: list[int] = []  # line number of each kept row in `tokens`
        for line_no in range(first_line, first_line + n_rows):
            raw = f.readline()
            if not raw:
                raise self.fail(
                    f"line {line_no}",
                    f"the file ends after {line_no - first_line} rows but "
                    f"{n_rows} were expected; it is truncated or the header count is wrong",
                )
            if not raw.strip():
                row = line_no - first_line + 1
                raise self.fail(
                    f"line {line_no}", f"empty line where row {row} of {n_rows} belongs"
                )
            parts = self.decode(raw, f"line {line_no}").rstrip().split(" ")
            if len(parts) != dim + 1:
                raise self.fail(
                    f"line {line_no}",
                    f"expected a key and {dim} values separated by single "
                    f"spaces, got {len(parts) - 1} values (row starts {parts[0][:40]!r})",
                )
            if self.keep(parts[0], f"line {line_no}"):
                tokens.extend(parts[1:])
                lines.append(line_no)
            if len(lines) >= _ROWS_PER_BLOCK:
                self.parse_block(tokens, lines, dim)
                tokens, lines = [], []
        self.parse_block(tokens, lines, dim)

    def parse_block(self, tokens: list[str], lines: list[int], dim: int) -> None:
        # via float64 then float32: the rounding gensim's np.float32(str) does
        try:
            values = np.array(tokens, dtype=np.float64)
        except ValueError:
            for i, token in enumerate(tokens):
                try:
                    float(token)
                except ValueError:
                    raise self.fail(
                        f"line {lines[i // dim]}", f"value {i % dim + 1} is {token!r}, not a number"
                    ) from None
            raise
        with np.errstate(over="ignore"):
            block = values.reshape(len(lines), dim).astype(np.float32)  # (rows, d)
        finite = np.isfinite(block)
        if not (self.allow_nonfinite or finite.all()):
            row, col = (int(i[0]) for i in np.nonzero(~finite))
            raise self.fail(f"line {lines[row]}", nonfinite_message(col, tokens[row * dim + col]))
        self.reserve(len(lines))
        self.table[self.filled : self.filled + len(lines)] = block
        self.filled += len(lines)

    def check_text_rest(self, f: BinaryIO, n_rows: int, first_line: int) -> None:
        for line_no, line in enumerate(f, start=first_line):
            if line.strip():
                raise self.fail(
                    f"line {line_no}",
                    f"more rows than the {n_rows} the header declares; "
                    "fix the header count or pass limit= to read only the first rows",
                )

    def binary_rows(self, f: BinaryIO, n_rows: int, dim: int, check_rest: bool) -> None:
        n_bytes = 4 * dim
        chunk, start, offset = b"", 0, f.tell()  # offset: file position of chunk[0]
        labels: list[str] = []  # where each kept row is, for the error about a non-finite value
        for row in range(n_rows):
            space = chunk.find(b" ", start)
            while space < 0 or len(chunk) - space - 1 < n_bytes:
                more = f.read(_CHUNK_BYTES)
                if not more or (space < 0 and len(chunk) - start > _MAX_KEY_BYTES):
                    raise self.truncated(chunk, start, offset, row, n_rows, n_bytes, space)
                chunk, offset, start = chunk[start:] + more, offset + start, 0
                space = chunk.find(b" ")
            where = f"byte offset {offset + start}"
            key = self.decode(chunk[start:space].lstrip(b"\n"), where)
            label = f"row {row + 1} ({where})"
            if self.keep(key, label):
                self.reserve(1)
                self.table[self.filled] = np.frombuffer(chunk, "<f4", dim, offset=space + 1)
                self.filled += 1
                labels.append(label)
            start = space + 1 + n_bytes
        self.check_finite(labels)
        if check_rest and (chunk[start:] + f.read(_CHUNK_BYTES)).strip(b"\n"):
            raise self.fail(
                f"byte offset {offset + start}",
                f"data continues after the {n_rows} rows the "
                "header declares; fix the header count or pass limit= to read only the first rows",
            )

    def check_finite(self, labels: list[str]) -> None:
        """Refuse inf / nan in the rows read (one vectorised pass), naming the first one's row."""
        if self.allow_nonfinite:
            return
        finite = np.isfinite(self.table[: self.filled])  # (rows, d)
        if not finite.all():
            row, col = (int(i[0]) for i in np.nonzero(~finite))
            raise self.fail(labels[row], nonfinite_message(col, self.table[row, col]))

    def truncated(
        self, chunk: bytes, start: int, offset: int, row: int, n_rows: int, n_bytes: int, space: int
    ) -> ValueError:
        where = f"byte offset {offset + start}"
        if space < 0 and len(chunk) - start > _MAX_KEY_BYTES:
            return self.fail(where, f"no space after {_MAX_KEY_BYTES} bytes: not word2vec binary")
        have = 0 if space < 0 else len(chunk) - space - 1
        return self.fail(
            where,
            f"the file ends inside row {row + 1} of {n_rows} ({have} of {n_bytes} vector "
            "bytes present); it is truncated or the header count is wrong",
        )

    def finish(self) -> tuple[list[str], np.ndarray]:
        if self.duplicates:
            key, where = self.duplicates[0]
            warnings.warn(
                f"{self.path}: {len(self.duplicates)} duplicate keys, e.g. {key!r} again at "
                f"{where}; kept the first row of each (as gensim does)",
                UserWarning,
                stacklevel=4,
            )
        return self.keys, self.table[: self.filled]  # (V, d), shorter by the duplicates


def nonfinite_message(col: int, value: object) -> str:
    """What to say about the non-finite value ``value`` in column ``col`` (0-based)."""
    return (
        f"value {col + 1} is {str(value)!r}, not a finite float32; inf and nan are refused "
        "(they make query scores nan): fix or drop that row, or pass allow_nonfinite=True"
    )
