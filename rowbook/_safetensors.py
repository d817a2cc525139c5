"""Reading a safetensors file that may be hostile: the header checked whole before any tensor
is mapped, and tensors memory-mapped, not read (a checkpoint may be larger than RAM).

A safetensors file is an 8-byte little-endian header length ``N``, a JSON header of ``N``
bytes (``name -> {"dtype", "shape", "data_offsets": [start, end]}``, and an optional
``"__metadata__"`` of strings), then the data. Before anything is mapped:

* ``N`` is at most :data:`MAX_HEADER_BYTES` (the ``safetensors`` library's own limit) and
  fits in the file; the header is a JSON object (depth-limited by :func:`rowbook.io.parse_json`)
  with at most :data:`MAX_TENSORS` entries;
* every dtype is one rowbook reads, every shape a list of integers ``>= 0``, and every
  tensor's ``end - start`` equals its shape's size times its dtype's width;
* the byte ranges lie inside the data and do not overlap.

So a tensor can only claim bytes the file has. ``BF16`` (which NumPy has no dtype for) is
mapped as ``uint16`` and widened to float32 by :func:`as_float32`. Every problem is a
``ValueError`` naming the file and the tensor.
"""

from __future__ import annotations

import itertools
import math
import os
import struct
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DTYPES", "MAX_HEADER_BYTES", "MAX_TENSORS", "as_float32", "map_safetensors"]

#: Largest header accepted (the ``safetensors`` library refuses larger ones too).
MAX_HEADER_BYTES = 100 * 2**20
#: Most tensors one file may list.
MAX_TENSORS = 1 << 20
#: safetensors dtype -> NumPy dtype of the mapped array (BF16: its raw bits).
DTYPES = {
    "F64": np.float64,
    "F32": np.float32,
    "F16": np.float16,
    "BF16": np.uint16,
    "I64": np.int64,
    "I32": np.int32,
    "I16": np.int16,
    "I8": np.int8,
    "U8": np.uint8,
    "BOOL": np.bool_,
}


def _header(path: Path) -> tuple[dict[str, Any], int]:
    from rowbook._json_limits import parse_json

    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError(
                f"{path} is not a safetensors file: {size} bytes, shorter than "
                "its 8-byte header length"
            )
        (n,) = struct.unpack("<Q", head)
        if n > MAX_HEADER_BYTES or 8 + n > size:
            raise ValueError(
                f"{path}: the safetensors header claims {n:,} bytes, but the file has "
                f"{size - 8:,} after the length (and rowbook reads at most "
                f"{MAX_HEADER_BYTES:,}): not a safetensors file, or truncated"
            )
        raw = f.read(n)
    try:
        header = parse_json(raw.decode("utf-8"), f"the header of {path}")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: the safetensors header is not UTF-8 JSON") from None
    if not isinstance(header, dict):
        raise ValueError(
            f"{path}: the safetensors header must be a JSON object, got {type(header).__name__}"
        )
    if len(header) > MAX_TENSORS + 1:
        raise ValueError(
            f"{path}: the header lists {len(header):,} tensors; rowbook reads at "
            f"most {MAX_TENSORS:,}"
        )
    return header, 8 + n


def _entry(
    path: Path, name: str, info: Any, data_bytes: int
) -> tuple[str, tuple[int, ...], int, int]:
    where = f"{path}: tensor {name!r}"
    if not isinstance(info, dict):
        raise ValueError(f"{where} must be described by an object, got {type(info).__name__}")
    dtype, shape, offsets = info.get("dtype"), info.get("shape"), info.get("data_offsets")
    if dtype not in DTYPES:
        raise ValueError(f"{where} has dtype {dtype!r}; rowbook reads {', '.join(DTYPES)}")
    ints = (isinstance(v, int) and not isinstance(v, bool) for v in (shape or []) + (offsets or []))
    if not (
        isinstance(shape, list) and isinstance(offsets, list) and len(offsets) == 2 and all(ints)
    ):
        raise ValueError(
            f"{where} needs a shape (a list of integers) and data_offsets [start, "
            f"end], got {shape!r} and {offsets!r}"
        )
    start, end = offsets
    if min(shape, default=0) < 0 or not 0 <= start <= end <= data_bytes:
        raise ValueError(
            f"{where} claims shape {shape} at bytes [{start}, {end}), but the "
            f"data has {data_bytes:,} bytes"
        )
    width = np.dtype(DTYPES[dtype]).itemsize
    if math.prod(shape) * width != end - start:
        raise ValueError(
            f"{where} has shape {shape} of {dtype} ({math.prod(shape) * width:,} "
            f"bytes) but spans {end - start:,} bytes"
        )
    return dtype, tuple(shape), start, end


def map_safetensors(
    path: str | os.PathLike[str], mode: str = "r"
) -> tuple[dict[str, np.ndarray], dict[str, str], dict[str, str]]:
    """``(name -> mapped array, name -> safetensors dtype, metadata)`` of a safetensors file,
    after the checks above; ``mode`` is NumPy's: ``"r"`` read-only, ``"c"`` copy-on-write."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no safetensors file at {path}")
    header, data_start = _header(path)
    data_bytes = path.stat().st_size - data_start
    metadata = header.pop("__metadata__", None) or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise ValueError(f"{path}: __metadata__ must map names to strings")
    entries = {name: _entry(path, name, info, data_bytes) for name, info in header.items()}
    spans = sorted((e[2], e[3], name) for name, e in entries.items() if e[3] > e[2])
    for (_, end, first), (start, _, second) in itertools.pairwise(spans):
        if start < end:
            raise ValueError(f"{path}: tensors {first!r} and {second!r} overlap in the data")
    arrays, dtypes = {}, {}
    data = np.memmap(path, dtype=np.uint8, mode=mode, offset=data_start) if data_bytes else None
    for name, (dtype, shape, start, end) in entries.items():
        raw = data[start:end] if data is not None else np.zeros(0, np.uint8)
        arrays[name] = raw.view(DTYPES[dtype]).reshape(shape)
        dtypes[name] = dtype
    return arrays, dtypes, metadata


def as_float32(array: np.ndarray, dtype: str) -> np.ndarray:
    """A mapped tensor as a new float32 array (``BF16``: its 16 bits are float32's top half).

    >>> as_float32(np.array([0x3F80, 0xC000], dtype=np.uint16), "BF16")
    array([ 1., -2.], dtype=float32)
    """
    if dtype == "BF16":
        return (array.astype(np.uint32) << 16).view(np.float32)
    if not dtype.startswith(("F", "BF")):
        raise ValueError(f"expected a floating tensor, got {dtype}")
    return np.array(array, dtype=np.float32)
