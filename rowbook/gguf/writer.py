"""Writing a GGUF file (version 3).

The layout is the one :mod:`rowbook.gguf.format` reads: header, metadata, tensor infos,
padding to :data:`ALIGNMENT`, then each tensor's bytes padded to it too. The file goes
through :func:`rowbook.io.atomic_write`, one tensor at a time. The quantised blocks come
from :mod:`rowbook.gguf.quantize`.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from typing import Any

import numpy as np

from rowbook.gguf.types import GGML_TYPES, MAGIC
from rowbook.io import atomic_write

__all__ = ["ALIGNMENT", "Metadata", "write_gguf"]

ALIGNMENT = 32
_TYPE_IDS = {name: i for i, (name, _, _) in GGML_TYPES.items()}
_SCALARS = {"uint32": (4, "<I"), "int32": (5, "<i"), "float32": (6, "<f"), "bool": (7, "<?")}
_SCALARS |= {"uint64": (10, "<Q"), "int64": (11, "<q"), "float64": (12, "<d")}
_ARRAYS = {np.dtype("int32"): 5, np.dtype("float32"): 6, np.dtype("uint32"): 4}

#: One metadata entry: ``(key, GGUF type name or "string" / "array", value)``.
Metadata = tuple[str, str, Any]


def _string(text: str) -> bytes:
    raw = text.encode("utf-8")
    return struct.pack("<Q", len(raw)) + raw


def _value(kind: str, value: Any) -> bytes:
    if kind == "string":
        return struct.pack("<I", 8) + _string(value)
    if kind in _SCALARS:
        vtype, fmt = _SCALARS[kind]
        return struct.pack("<I", vtype) + struct.pack(fmt, value)
    if kind == "array" and value and isinstance(value[0], str):
        return struct.pack("<IIQ", 9, 8, len(value)) + b"".join(_string(v) for v in value)
    if kind == "array":
        array = np.asarray(value)
        array = array.astype(np.int32 if array.dtype.kind in "iub" else np.float32)
        return struct.pack("<IIQ", 9, _ARRAYS[array.dtype], len(array)) + array.tobytes()
    raise ValueError(f"metadata type {kind!r} is not one rowbook writes")


def _pad(n: int) -> int:
    return -n % ALIGNMENT


def write_gguf(
    path: str | os.PathLike[str],
    metadata: Iterable[Metadata],
    tensors: Iterable[tuple[str, np.ndarray, str, tuple[int, ...]]],
) -> None:
    """Write a GGUF file: ``metadata`` entries and ``tensors`` as ``(name, stored data,
    ggml type name, shape in NumPy's order)`` (the data: float32 / float16 values, or the
    uint8 blocks of a quantised type)."""
    tensors = list(tensors)
    metadata = [*metadata, ("general.alignment", "uint32", ALIGNMENT)]
    head = bytearray(MAGIC + struct.pack("<IQQ", 3, len(tensors), len(metadata)))
    for key, kind, value in metadata:
        head += _string(key) + _value(kind, value)
    offset = 0
    for name, data, type_name, shape in tensors:
        dims = tuple(reversed(shape))
        head += _string(name) + struct.pack("<I", len(dims))
        head += b"".join(struct.pack("<Q", d) for d in dims)
        head += struct.pack("<IQ", _TYPE_IDS[type_name], offset)
        offset += data.nbytes + _pad(data.nbytes)
    with atomic_write(path) as f:
        f.write(head + b"\0" * _pad(len(head)))
        for _, data, _, _ in tensors:
            f.write(np.ascontiguousarray(data).tobytes())
            f.write(b"\0" * _pad(data.nbytes))
