"""Reading GGUF fields from a file that may be hostile: each one checked to lie in the file.

:class:`Cursor` walks the metadata and the tensor infos; a count is held to the bytes left
before any list is made of it (an array of ``n`` numbers needs ``n`` times their width, of
``n`` strings at least ``8 n``), and every problem is a ``ValueError`` naming the file, the
field and its byte offset.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np

from rowbook.gguf.types import ARRAY, STRING, VALUE_TYPES, is_utf8

__all__ = ["MAX_DEPTH", "Cursor"]

MAX_DEPTH = 3  # arrays of arrays: llama.cpp's files nest at most one level
_U64 = struct.Struct("<Q")


class Cursor:
    """Reads little-endian fields from ``data`` at ``pos``, each checked to lie in the file."""

    def __init__(self, data: Any, path: Path) -> None:
        self.data, self.path, self.pos = data, path, 0

    def fail(self, field: str, problem: str, at: int | None = None) -> ValueError:
        where = self.pos if at is None else at
        return ValueError(f"{self.path}: {field} at byte {where:,}: {problem}")

    def left(self) -> int:
        return len(self.data) - self.pos

    def scalar(self, fmt: str, field: str) -> Any:
        size = struct.calcsize(fmt)
        if size > self.left():
            raise self.fail(
                field, f"needs {size} bytes, the file ends after {self.left()}: truncated"
            )
        (value,) = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return value

    def string(self, field: str) -> str:
        start = self.pos
        n = self.scalar("<Q", field)
        if n > self.left():
            raise self.fail(
                field, f"a string of {n:,} bytes, but {self.left():,} are left: truncated", start
            )
        raw = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise self.fail(field, f"the string is not UTF-8 ({err.reason})", start) from None

    def value(self, vtype: int, field: str, depth: int = 0) -> Any:
        if vtype not in VALUE_TYPES:
            known = ", ".join(f"{k} ({v[0]})" for k, v in VALUE_TYPES.items())
            raise self.fail(field, f"value type {vtype} is not a GGUF type ({known})")
        if vtype == STRING:
            return self.string(field)
        if vtype == ARRAY:
            return self.array(field, depth)
        return self.scalar(VALUE_TYPES[vtype][1], field)

    def array(self, field: str, depth: int) -> Any:
        start = self.pos
        if depth >= MAX_DEPTH:
            raise self.fail(field, f"arrays nested deeper than {MAX_DEPTH} levels")
        etype = self.scalar("<I", field + " (element type)")
        n = self.scalar("<Q", field + " (element count)")
        fmt = VALUE_TYPES.get(etype, ("", ""))[1]
        smallest = struct.calcsize(fmt) if fmt else 8  # a string or an array: its count
        if etype in VALUE_TYPES and n * smallest > self.left():
            raise self.fail(
                field,
                f"an array of {n:,} {VALUE_TYPES[etype][0]} needs at least {n * smallest:,} "
                f"bytes, but {self.left():,} are left: a lying count, or truncated",
                start,
            )
        if fmt:  # numbers: one read, little-endian
            dtype = np.dtype(fmt)
            values = np.frombuffer(self.data, dtype=dtype, count=n, offset=self.pos).copy()
            self.pos += n * dtype.itemsize
            return values
        if etype == STRING:
            return self.strings(n, field)
        return [self.value(etype, f"{field}[{i}]", depth + 1) for i in range(n)]

    def strings(self, n: int, field: str) -> list[str]:
        """``n`` strings in a row (a vocabulary: 150,000 of them), in one tight loop."""
        data, pos, end = self.data, self.pos, len(self.data)
        length = _U64.unpack_from
        raw = []
        for i in range(n):
            k = length(data, pos)[0] if pos + 8 <= end else -1
            if not 0 <= k <= end - pos - 8:
                self.pos = pos
                problem = "truncated" if k < 0 else f"a string of {k:,} bytes runs past the end"
                raise self.fail(f"{field}[{i}]", problem)
            raw.append(data[pos + 8 : pos + 8 + k])
            pos += 8 + k
        try:
            texts = [b.decode("utf-8") for b in raw]
        except UnicodeDecodeError:
            bad = next(i for i, b in enumerate(raw) if not is_utf8(b))
            raise self.fail(f"{field}[{bad}]", "the string is not UTF-8", self.pos) from None
        self.pos = pos
        return texts
