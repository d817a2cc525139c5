"""The GGUF container read from a file that may be hostile: header, metadata, tensor infos.

A GGUF file (llama.cpp's, Ollama's, LM Studio's) is, all little-endian:

* ``b"GGUF"``, a ``uint32`` version (2 or 3), ``uint64`` tensor count, ``uint64`` key count;
* each metadata pair: a string key (``uint64`` length + UTF-8 bytes), a ``uint32`` value
  type (:data:`rowbook.gguf.types.VALUE_TYPES`) and the value; an array is an element type, a ``uint64`` count
  and the elements;
* each tensor info: a string name, a ``uint32`` number of dimensions (at most 4), that many
  ``uint64`` sizes (ggml's order: the row length first), a ``uint32`` ggml type
  (:data:`rowbook.gguf.types.GGML_TYPES`) and a ``uint64`` offset into the data;
* padding to ``general.alignment`` (32 by default), then the data.

Every count, length and offset is held to what the file could hold before anything is
allocated from it: a string no longer than the bytes left, an array of ``n`` elements only
if ``n`` times the smallest element fits, a tensor's bytes inside the data and clear of the
others. Every problem is a ``ValueError`` naming the file, the field and its byte offset.
The fields are read by :class:`rowbook.gguf.cursor.Cursor`. Tensors are memory-mapped,
never read whole; :mod:`rowbook.gguf.quants` dequantises them.
"""

from __future__ import annotations

import itertools
import math
import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rowbook.gguf.cursor import Cursor
from rowbook.gguf.types import ARRAY, GGML_TYPES, MAGIC, MAX_DIMS, VALUE_TYPES

__all__ = ["GGUFFile", "TensorInfo", "read_gguf"]

_DEFAULT_ALIGNMENT = 32


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a GGUF file, as its info says.

    ``shape`` is NumPy's order (ggml's reversed: ``(rows, row_length)`` for a matrix);
    ``offset`` is the absolute byte offset of its data in the file, ``n_bytes`` its size.
    """

    name: str
    shape: tuple[int, ...]
    ggml_type: int
    offset: int
    n_bytes: int

    @property
    def type_name(self) -> str:
        """ggml's name of the type (``"Q4_K"``)."""
        return GGML_TYPES[self.ggml_type][0]

    @property
    def n_elements(self) -> int:
        return math.prod(self.shape)


@dataclass(frozen=True, eq=False)
class GGUFFile:
    """A GGUF file opened: its metadata read, its tensors mapped.

    Attributes
    ----------
    path : Path
    version : int
    metadata : dict
        key -> value: ``int``, ``float``, ``bool``, ``str``, a list of strings (or of
        arrays), or a NumPy array for an array of numbers.
    value_types : dict
        key -> GGUF type name (``"uint32"``, ``"array[string]"``, ...).
    tensors : dict
        name -> :class:`TensorInfo`, in the file's order.
    alignment : int
    data_offset : int
        Where the data starts (the tensors' offsets are counted from here in the file).
    """

    path: Path
    version: int
    metadata: dict[str, Any]
    value_types: dict[str, str]
    tensors: dict[str, TensorInfo]
    alignment: int
    data_offset: int
    _data: Any

    def raw(self, name: str) -> np.ndarray:
        """The stored bytes of tensor ``name``, mapped: ``(n_bytes,)`` uint8."""
        info = self.info(name)
        return np.frombuffer(self._data, np.uint8, count=info.n_bytes, offset=info.offset)

    def info(self, name: str) -> TensorInfo:
        if name not in self.tensors:
            raise KeyError(f"{self.path} has no tensor {name!r}; it has {len(self.tensors)}")
        return self.tensors[name]

    def tensor(self, name: str) -> np.ndarray:
        """Tensor ``name`` dequantised to a new float32 array of its shape."""
        from rowbook.gguf.quants import dequantize

        info = self.info(name)
        return dequantize(self.raw(name), info.ggml_type, info.shape, name=name)

    def rows(self, name: str, start: int, stop: int) -> np.ndarray:
        """Rows ``start:stop`` of a matrix, dequantised alone (a row is whole blocks):
        ``(stop - start, row_length)`` float32."""
        from rowbook.gguf.quants import dequantize

        info = self.info(name)
        n_rows = info.n_elements // info.shape[-1] if info.shape else 1
        if not 0 <= start <= stop <= n_rows:
            raise ValueError(f"rows {start}:{stop} of {name!r} are outside its {n_rows} rows")
        row_bytes = info.n_bytes // max(n_rows, 1)
        raw = self.raw(name)[start * row_bytes : stop * row_bytes]
        return dequantize(raw, info.ggml_type, (stop - start, info.shape[-1]), name=name)

    @property
    def vectors(self) -> Any:
        """The token table, keyed by the file's tokens (:func:`rowbook.gguf.gguf_vectors`)."""
        from rowbook.gguf.table import gguf_vectors

        return gguf_vectors(self)

    @property
    def tokenizer(self) -> Any:
        """The tokenizer the metadata describes (:func:`rowbook.gguf.gguf_tokenizer`)."""
        from rowbook.gguf.tokenizer import gguf_tokenizer

        return gguf_tokenizer(self)

    def get(self, key: str, default: Any = None) -> Any:
        """Metadata ``key``, or ``default``."""
        return self.metadata.get(key, default)

    def __repr__(self) -> str:
        return (
            f"GGUFFile({str(self.path)!r}, version={self.version}, "
            f"keys={len(self.metadata)}, tensors={len(self.tensors)})"
        )


def _type_name(value: Any, vtype: int) -> str:
    if vtype != ARRAY:
        return VALUE_TYPES[vtype][0]
    if isinstance(value, np.ndarray):
        return f"array[{value.dtype.name}]"
    inner = "string" if value and isinstance(value[0], str) else "array"
    return f"array[{inner}]"


def _header(cur: Cursor) -> tuple[int, int, int]:
    size = len(cur.data)
    if size < 24 or bytes(cur.data[:4]) != MAGIC:
        raise ValueError(
            f"{cur.path} is not a GGUF file: it does not start with b'GGUF' and a 20-byte "
            f"header ({size:,} bytes)"
        )
    cur.pos = 4
    version = cur.scalar("<I", "version")
    if version & 0xFFFF == 0 and version:
        raise cur.fail("version", "the file is big-endian; rowbook reads little-endian GGUF", 4)
    if version not in (2, 3):
        raise cur.fail("version", f"version {version}; rowbook reads GGUF versions 2 and 3", 4)
    n_tensors = cur.scalar("<Q", "tensor_count")
    n_keys = cur.scalar("<Q", "kv_count")
    # a key takes >= 13 bytes (length, type, one byte); a tensor info >= 24 (length, dims,
    # type, offset): counts the file cannot hold are refused before any list is made
    for field, at, n, least in (("tensor_count", 8, n_tensors, 24), ("kv_count", 16, n_keys, 13)):
        if n * least > cur.left():
            raise cur.fail(
                field,
                f"{n:,} entries need at least {n * least:,} bytes, the file has "
                f"{cur.left():,} left: a lying count, or truncated",
                at,
            )
    return version, n_tensors, n_keys


def _metadata(cur: Cursor, n_keys: int) -> tuple[dict[str, Any], dict[str, str]]:
    metadata: dict[str, Any] = {}
    types: dict[str, str] = {}
    for i in range(n_keys):
        start = cur.pos
        key = cur.string(f"metadata key {i}")
        if key in metadata:
            raise cur.fail(f"metadata key {key!r}", "appears twice", start)
        vtype = cur.scalar("<I", f"metadata {key!r} (value type)")
        metadata[key] = cur.value(vtype, f"metadata {key!r}")
        types[key] = _type_name(metadata[key], vtype)
    return metadata, types


def _tensor_info(cur: Cursor, i: int) -> tuple[str, tuple[int, ...], int, int, int, int]:
    start = cur.pos
    name = cur.string(f"tensor info {i} (name)")
    field = f"tensor {name!r}"
    n_dims = cur.scalar("<I", f"{field} (n_dims)")
    if not 1 <= n_dims <= MAX_DIMS:
        raise cur.fail(field, f"n_dims = {n_dims}; ggml tensors have 1 to {MAX_DIMS}", start)
    dims = [cur.scalar("<Q", f"{field} (dimension {d})") for d in range(n_dims)]
    ggml_type = cur.scalar("<I", f"{field} (type)")
    offset = cur.scalar("<Q", f"{field} (offset)")
    if ggml_type not in GGML_TYPES:
        known = ", ".join(v[0] for v in GGML_TYPES.values())
        raise cur.fail(field, f"ggml type {ggml_type} is not one rowbook knows ({known})", start)
    type_name, block, type_bytes = GGML_TYPES[ggml_type]
    if dims[0] % block:
        raise cur.fail(
            field,
            f"its rows of {dims[0]} values are not whole {type_name} blocks of {block}",
            start,
        )
    n_bytes = math.prod(dims) // block * type_bytes
    return name, tuple(reversed(dims)), ggml_type, offset, n_bytes, start


def _alignment(cur: Cursor, metadata: dict[str, Any], types: dict[str, str]) -> int:
    alignment = metadata.get("general.alignment", _DEFAULT_ALIGNMENT)
    if "general.alignment" in metadata and types["general.alignment"] != "uint32":
        raise cur.fail("metadata 'general.alignment'", "must be a uint32", 0)
    if alignment <= 0 or alignment & (alignment - 1):
        raise cur.fail("metadata 'general.alignment'", f"{alignment} is not a power of two", 0)
    return alignment


def _tensors(cur: Cursor, infos: list, data_offset: int, alignment: int) -> dict:
    data_bytes = len(cur.data) - data_offset
    tensors: dict[str, TensorInfo] = {}
    for name, shape, ggml_type, offset, n_bytes, at in infos:
        field = f"tensor {name!r}"
        if name in tensors:
            raise cur.fail(field, "appears twice", at)
        if offset % alignment:
            raise cur.fail(field, f"offset {offset:,} is not a multiple of {alignment}", at)
        if offset + n_bytes > data_bytes:
            raise cur.fail(
                field,
                f"shape {shape} of {GGML_TYPES[ggml_type][0]} needs bytes [{offset:,}, "
                f"{offset + n_bytes:,}) of the data, which has {data_bytes:,}: truncated, or "
                "a lying offset or shape",
                at,
            )
        tensors[name] = TensorInfo(name, shape, ggml_type, data_offset + offset, n_bytes)
    spans = sorted((t.offset, t.offset + t.n_bytes, t.name) for t in tensors.values() if t.n_bytes)
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:
            raise cur.fail(f"tensor {second!r}", f"its data overlaps tensor {first!r}'s", start)
    return tensors


def read_gguf(path: str | os.PathLike[str]) -> GGUFFile:
    """Open a GGUF file: header, metadata and tensor infos read and checked, data mapped.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "bad.gguf"
    >>> _ = path.write_bytes(b"GGUF" + (3).to_bytes(4, "little") + (1 << 60).to_bytes(8, "little")
    ...                      + (0).to_bytes(8, "little"))
    >>> read_gguf(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: .../bad.gguf: tensor_count at byte 8: 1,152,921,504,606,846,976 entries need ...
    """
    from rowbook.corpus_files import check_regular_file

    path = Path(path)
    check_regular_file(path, "GGUF file")
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        data: Any = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    cur = Cursor(data, path)
    version, n_tensors, n_keys = _header(cur)
    metadata, types = _metadata(cur, n_keys)
    infos = [_tensor_info(cur, i) for i in range(n_tensors)]
    alignment = _alignment(cur, metadata, types)
    data_offset = -(-cur.pos // alignment) * alignment
    if data_offset > size and n_tensors:
        raise cur.fail("tensor data", "the file ends before its data starts: truncated")
    tensors = _tensors(cur, infos, data_offset, alignment)
    return GGUFFile(path, version, metadata, types, tensors, alignment, data_offset, data)
