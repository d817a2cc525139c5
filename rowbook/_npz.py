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

**Mapping.** :func:`read_members` with ``mmap_mode`` (``"r"`` read-only, ``"c"``
copy-on-write, as ``np.load``) maps each stored member of 64 KiB or more instead of reading
it: the array's pages come from the file when they are first touched, and processes that
map the same file share them. The header checks above run first; the member's CRC is not
checked (that would read every byte). A member whose data is not aligned to its dtype
(files written before rowbook aligned them) is read instead, because unaligned arrays
make NumPy's BLAS calls several times slower. :func:`write_members` writes what
:func:`read_members` maps well: stored members whose data starts on a 64-byte boundary
(a padding field in the zip header, as Android's ``zipalign`` does; any zip or ``np.load``
reads the file).
"""

from __future__ import annotations

import io
import math
import struct
import tokenize
import zipfile
from pathlib import Path
from typing import BinaryIO, Literal

import numpy as np
from numpy.lib import format as npy

__all__ = ["MAX_INFLATED_BYTES", "peek_text", "read_members", "write_members"]

#: Default cap on the total uncompressed size of an archive's compressed members (bytes).
MAX_INFLATED_BYTES = 1 << 30
_KINDS = "biufcUS"  # bool, signed, unsigned, float, complex, str, bytes
_HEADER_READERS = {(1, 0): npy.read_array_header_1_0, (2, 0): npy.read_array_header_2_0}
_PIECE = 1 << 24  # bytes copied per read: no second full-size buffer
_COMPRESSED = (zipfile.ZIP_DEFLATED,)
_ALIGN = 64  # where member data starts in files rowbook writes (npy's own header alignment)
_MAP_AT_LEAST = 1 << 16  # smaller members are read: a mapping costs a file descriptor each
_PADDING_FIELD = 0xD935  # the zip extra field id zipalign uses for padding; readers skip it
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # a zip local file header, before its name

MmapMode = Literal["r", "c"] | None


def read_members(
    path: Path,
    max_inflated_bytes: int | None,
    mmap_mode: MmapMode = None,
    only: set[str] | None = None,
) -> dict[str, np.ndarray]:
    """Every member of the archive at ``path`` (or those named in ``only``) as an array, by
    name without ``.npy``; with ``mmap_mode``, large stored members are mapped (see the module
    docstring)."""
    if mmap_mode not in (None, "r", "c"):
        raise ValueError(f"mmap_mode must be None, 'r' or 'c', got {mmap_mode!r}")
    size = path.stat().st_size
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        _check_directory(path, infos, size, max_inflated_bytes)
        return {
            info.filename[:-4]: _read_member(path, archive, info, mmap_mode)
            for info in infos
            if only is None or info.filename[:-4] in only
        }


def peek_text(path: Path, name: str, chars: int) -> str | None:
    """The first ``chars`` characters of the one-string member ``name`` (a ``<U`` scalar), read
    without reading the rest; None if the archive has no such member."""
    with zipfile.ZipFile(path) as archive:
        try:
            info = archive.getinfo(name + ".npy")
        except KeyError:
            return None
        with archive.open(info) as f:
            version = npy.read_magic(f)
            if version not in _HEADER_READERS:
                return None
            shape, _, dtype = _HEADER_READERS[version](f)
            if shape != () or dtype.kind != "U" or dtype.byteorder == ">":
                return None
            data = f.read(4 * min(chars, dtype.itemsize // 4))
    return data.decode("utf-32-le", errors="replace").rstrip("\0")


def write_members(f: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to the seekable file ``f`` as an ``.npz`` of stored, aligned members."""
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            array = np.asarray(value)
            header = _npy_header(array)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type, info.file_size = zipfile.ZIP_STORED, len(header) + array.nbytes
            zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT  # zipfile's own rule
            before_padding = f.tell() + 30 + len(info.filename.encode()) + (20 if zip64 else 0) + 4
            pad = -before_padding % _ALIGN
            info.extra = struct.pack("<2H", _PADDING_FIELD, pad) + bytes(pad)
            with archive.open(info, "w", force_zip64=zip64) as member:
                member.write(header)
                _write_data(member, array)


def _npy_header(array: np.ndarray) -> bytes:
    """The ``.npy`` header of ``array`` written C-ordered (padded to 64 bytes, as numpy pads it)."""
    buffer = io.BytesIO()
    npy.write_array_header_1_0(
        buffer,
        {"descr": npy.dtype_to_descr(array.dtype), "fortran_order": False, "shape": array.shape},
    )
    return buffer.getvalue()


def _write_data(member: BinaryIO, array: np.ndarray) -> None:
    """The array's bytes in C order, a piece at a time (no second full-size copy)."""
    if array.ndim == 0 or array.size == 0:
        member.write(array.tobytes())
        return
    rows = max(1, _PIECE // max(array[0].nbytes, 1))
    for start in range(0, len(array), rows):
        piece = np.ascontiguousarray(array[start : start + rows])
        member.write(memoryview(piece).cast("B"))


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


def _read_member(
    path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo, mmap_mode: MmapMode
) -> np.ndarray:
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
        if mmap_mode and n_bytes >= _MAP_AT_LEAST and info.compress_type == zipfile.ZIP_STORED:
            offset = _data_offset(archive, info) + f.tell()
            if offset % dtype.alignment == 0:
                order = "F" if fortran_order else "C"
                return np.memmap(path, dtype, mmap_mode, offset, shape, order)
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


def _data_offset(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> int:
    """Where the member's bytes start in the file: after its local header, name and extra."""
    archive.fp.seek(info.header_offset)
    fields = _LOCAL_HEADER.unpack(archive.fp.read(_LOCAL_HEADER.size))
    if fields[0] != b"PK\x03\x04":
        raise ValueError(f"member {info.filename!r} has no local zip header; the zip is damaged")
    return info.header_offset + _LOCAL_HEADER.size + fields[-2] + fields[-1]
