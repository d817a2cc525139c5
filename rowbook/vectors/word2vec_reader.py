"""The strict, bounded reader of word2vec text and binary files and GloVe text files.

:func:`rowbook.vectors.formats.read_word2vec` opens the file, reads the header (or counts
a GloVe file's rows) and hands the rows to a :class:`Word2VecReader`, which parses them a
block at a time and keeps, for every error, where it is: the line (text) or the byte
offset (binary). What it refuses, and why, is listed in :mod:`rowbook.vectors.formats`:
a header whose claim the file's size cannot hold, a row of the wrong length, a value that
is not a number, a non-finite value, a truncated file, rows beyond the header's count.
Duplicate keys keep their first row, with one warning naming the first duplicate.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import BinaryIO

import numpy as np

from rowbook.checks import ParameterHint

__all__ = ["ROWS_PER_BLOCK", "Word2VecReader", "nonfinite_message"]

ROWS_PER_BLOCK = 4096  # text rows parsed per np.array call (and written per write)
_CHUNK_BYTES = 1 << 20  # binary read size
_MAX_KEY_BYTES = 1 << 16  # a longer "key" means the file is not word2vec binary


class Word2VecReader:
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
            if len(lines) >= ROWS_PER_BLOCK:
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
