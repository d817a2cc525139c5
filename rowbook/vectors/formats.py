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
counts and the safetensors format are in :mod:`rowbook.vectors.sidefiles`. The rows are
parsed by :mod:`rowbook.vectors.word2vec_reader`.

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
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rowbook.corpus_files import open_binary
from rowbook.io import atomic_write
from rowbook.vectors.word2vec_reader import ROWS_PER_BLOCK, Word2VecReader

__all__ = ["check_word2vec_key", "read_word2vec", "write_word2vec"]

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
            if len(lines) >= ROWS_PER_BLOCK:
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
    reader = Word2VecReader(os.fspath(path), encoding, unicode_errors)
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
