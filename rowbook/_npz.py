"""Reading an ``.npz`` archive that may be hostile: every member checked before NumPy allocates.

An ``.npz`` is a zip of ``.npy`` members. Before a member is read, its ``.npy`` header
(shape and dtype) is compared with the member's uncompressed size in the zip directory,
and that size with what the archive can hold:

* a *stored* member (how rowbook writes them) must lie inside the file, so its size is
  bounded by the file's;
* *deflated* members (``np.savez_compressed``, or a file re-zipped by hand) may expand
  to ``max_inflated_bytes`` in all
  (:data:`MAX_INFLATED_BYTES`, 1 GiB, by default); ``max_inflated_bytes=None`` lifts the
  cap for a file you trust. zipfile inflates deflate with a bound on its output, so a
  member cannot expand past the size the directory claims; it decompresses bzip2 and lzma
  a chunk at a time without one (4 kB of bzip2 can become gigabytes), so those methods,
  which NumPy never writes, are refused.

Only plain dtypes are read (booleans, numbers, strings): object arrays (pickles),
structured and void dtypes are refused. Every problem is a ``ValueError`` naming the file
and the member.
"""

from __future__ import annotations

import math
import tokenize
import zipfile
from pathlib import Path

import numpy as np
from numpy.lib import format as npy

__all__ = ["MAX_INFLATED_BYTES", "read_member", "read_members"]

#: Default cap on the total uncompressed size of an archive's compressed members (bytes).
MAX_INFLATED_BYTES = 1 << 30
_KINDS = "biufcUS"  # bool, signed, unsigned, float, complex, str, bytes
_HEADER_READERS = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}
_PIECE = 1 << 24  # bytes copied per read: no second full-size buffer
_COMPRESSED = (zipfile.ZIP_DEFLATED,)


def read_members(path: Path, max_inflated_bytes: int | None) -> dict[str, np.ndarray]:
    """Every member of the archive at ``path`` as an array, by name without ``.npy``."""
    size = path.stat().st_size
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        _check_directory(path, infos, size, max_inflated_bytes)
        return {info.filename[:-4]: read_member(path, archive, info) for info in infos}


def _check_directory(
    path: Path, infos: list[zipfile.ZipInfo], size: int, max_inflated_bytes: int | None
) -> None:
    """The zip directory's claims, checked against the file size and the cap."""
    names, inflated = set(), 0
    for info in infos:
        where = f"{path}: member {info.filename!r}"
        if not info.filename.endswith(".npy") or info.filename in names:
            raise ValueError(f"{where} is not a .npy array, or is listed twice; not an .npz file")
        names.add(info.filename)
        if info.flag_bits & 0x1:
            raise ValueError(f"{where} is encrypted; rowbook reads unencrypted archives only")
        if info.header_offset + info.compress_size > size:
            raise ValueError(
                f"{where} claims {info.compress_size} bytes past the end of the "
                f"{size}-byte file; the file is truncated or damaged"
            )
        if info.compress_type == zipfile.ZIP_STORED:
            if info.file_size != info.compress_size:
                raise ValueError(
                    f"{where} is stored (not compressed) yet claims {info.file_size} "
                    f"bytes in {info.compress_size}; the zip directory is damaged"
                )
        elif info.compress_type in _COMPRESSED:
            inflated += info.file_size
        else:
            raise ValueError(
                f"{where} uses zip compression method {info.compress_type}, which "
                "rowbook does not read (stored and deflate only)"
            )
    if max_inflated_bytes is not None and inflated > max_inflated_bytes:
        raise ValueError(
            f"{path}: its compressed members would expand to {inflated} bytes, more than the "
            f"cap max_inflated_bytes={max_inflated_bytes}; if you trust the file, load it with "
            "max_inflated_bytes=None (or a larger cap)"
        )


def read_member(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """One member of an open archive as an array, its header checked before allocating."""
    where = f"{path}: member {info.filename!r}"
    with archive.open(info) as f:
        version = npy.read_magic(f)
        if version not in _HEADER_READERS:
            raise ValueError(f"{where} has .npy format version {version}; rowbook reads 1.0, 2.0")
        try:  # numpy re-tokenizes headers it cannot parse: TokenError, SyntaxError
            shape, fortran_order, dtype = _HEADER_READERS[version](f)
        except (ValueError, TypeError, SyntaxError, tokenize.TokenError) as err:
            raise ValueError(f"{where} has a damaged .npy header ({err})") from None
        kind_ok = dtype.kind in _KINDS and dtype.fields is None and dtype.itemsize > 0
        if dtype.hasobject or not kind_ok:
            raise ValueError(
                f"{where} has dtype {dtype}; rowbook reads only booleans, numbers "
                "and strings (never objects, which would need pickle)"
            )
        n_bytes = math.prod(shape) * dtype.itemsize
        held = info.file_size - f.tell()
        if n_bytes != held:
            raise ValueError(
                f"{where}: its .npy header claims shape {shape} of {dtype} "
                f"({n_bytes} bytes), but the member holds {held} bytes"
            )
        data = bytearray(n_bytes)
        view = memoryview(data)
        for start in range(0, n_bytes, _PIECE):
            piece = f.read(min(_PIECE, n_bytes - start))
            if len(piece) != min(_PIECE, n_bytes - start):
                raise ValueError(f"{where} ends early; the file is truncated")
            view[start : start + len(piece)] = piece
        if f.read(1):  # also makes zipfile reach the end, where it checks the CRC
            raise ValueError(f"{where} holds more bytes than its size says; the zip is damaged")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran_order else "C")
