"""Opening big vector files without reading them: mapped tables and the conversion cache.

rowbook's own files map directly (``Vectors.load(path, mmap=True)``): the ``.npz`` members
and the safetensors tensors are stored uncompressed and aligned, so the table is a
read-only memory map of the file. Opening reads the keys and nothing of the table; a query
pages in the rows it reads; processes that map one file share its pages (forked data-loader
workers hold one copy). See :mod:`rowbook._npz`.

The other formats cannot be mapped as they are: word2vec text and GloVe are text, a word2vec
binary interleaves keys and rows, a fastText ``.bin`` holds n-gram rows from which word
vectors are computed. They are **converted once** into a rowbook ``.npz`` cache, then mapped:

* the cache sits beside the source, ``<name>.<digest>.rowbook.npz`` (``digest`` names the
  reading options: format, ``limit``, ``datatype``, ...), or in ``cache_dir`` if given (the
  digest then also covers the source's absolute path);
* it records the source: absolute path, size, modification time (nanoseconds), format and
  options. On opening, a cache whose source has since changed size or time is **rebuilt**;
  a cache that records another source, other options, or cannot be read is **refused**
  (``ValueError`` naming it: delete it, or give another ``cache_dir``);
* building it reads the source into memory-mapped scratch files beside the cache, so the
  conversion needs disk, not memory, for the table; the cache is written atomically, and a
  line on standard error says it is being made.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import sys
import tempfile
import warnings
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from rowbook.checks import InputIndexError
from rowbook.corpus_files import check_regular_file
from rowbook.io import load_state, save_state

__all__ = ["FileRows", "cache_path", "maps_a_file", "open_cached"]

PathLike = str | os.PathLike[str]
Allocate = Callable[[tuple[int, int], np.dtype], np.ndarray]


def maps_a_file(array: np.ndarray) -> bool:
    """Whether ``array`` (or what it views) is a memory map of a file.

    Examples
    --------
    >>> maps_a_file(np.zeros(3))
    False
    """
    base: Any = array
    while base is not None:
        if isinstance(base, np.memmap | mmap.mmap):
            return True
        base = getattr(base, "base", None)
    return False


class FileRows:
    """Rows of a table stored row-major in a file, read with ``os.pread``, not mapped.

    Reading a few rows through a memory map leaves their pages resident in the process;
    reading them with ``pread`` copies just the rows (the pages stay in the kernel's cache,
    shared, not in this process). A quantised table re-ranking against its float table
    reads its candidates this way, so its resident memory does not grow with its queries.
    """

    def __init__(
        self, path: PathLike, offset: int, shape: tuple[int, int], dtype: np.dtype
    ) -> None:
        self.path, self.offset, self.shape, self.dtype = Path(path), offset, shape, np.dtype(dtype)
        self._row_bytes = shape[1] * self.dtype.itemsize
        self._fd = os.open(self.path, os.O_RDONLY)
        self._closer = weakref.finalize(self, os.close, self._fd)

    @classmethod
    def of(cls, array: np.ndarray) -> FileRows | None:
        """A reader of the rows of ``array`` if it is a C-ordered 2-D map of a whole file region."""
        base: Any = array
        while base is not None and not isinstance(base, np.memmap):
            base = getattr(base, "base", None)
        if base is None or array.ndim != 2 or not array.flags.c_contiguous:
            return None
        if array.__array_interface__["data"][0] != base.__array_interface__["data"][0]:
            return None  # a view that starts elsewhere than the mapped region
        return cls(base.filename, base.offset, array.shape, array.dtype)

    def __getitem__(self, index: Any) -> np.ndarray:
        """Rows ``index`` (an int, or ids of any shape): ``(*index.shape, d)``."""
        ids = np.asarray(index, dtype=np.int64)
        flat = ids.reshape(-1)
        if flat.size and (flat.min() < 0 or flat.max() >= self.shape[0]):
            raise InputIndexError(f"row ids must be in 0..{self.shape[0] - 1}")
        out = np.empty((len(flat), self.shape[1]), dtype=self.dtype)  # (n, d)
        for k, row in enumerate(flat.tolist()):
            got = os.preadv(
                self._fd, [memoryview(out[k]).cast("B")], self.offset + row * self._row_bytes
            )
            if got != self._row_bytes:
                raise ValueError(f"{self.path} ends inside row {row}; was it truncated?")
        return out.reshape(*ids.shape, self.shape[1])


def cache_path(
    source: PathLike, fmt: str, options: dict[str, Any], cache_dir: PathLike | None = None
) -> Path:
    """Where the mapped cache of ``source`` read as ``fmt`` with ``options`` lives."""
    source = Path(source).resolve()
    named = {"format": fmt, "options": options}
    if cache_dir is not None:
        named["source"] = str(source)
    digest = hashlib.sha256(json.dumps(named, sort_keys=True).encode()).hexdigest()[:12]
    folder = Path(cache_dir) if cache_dir is not None else source.parent
    return folder / f"{source.name}.{digest}.rowbook.npz"


def open_cached(
    source: PathLike,
    fmt: str,
    options: dict[str, Any],
    build: Callable[[Allocate], dict[str, Any]],
    *,
    kind: str,
    cache_dir: PathLike | None = None,
) -> tuple[dict[str, Any], Path]:
    """The mapped state of ``source``'s cache, built by ``build(allocate)`` if missing or stale.

    ``build`` reads the source into arrays made by ``allocate`` and returns the state to save
    (arrays and JSON values); the cache adds the source record. Returns the state loaded
    with its large arrays mapped read-only, and the cache's path.
    """
    source = check_regular_file(source, "vectors").resolve()
    cache = cache_path(source, fmt, options, cache_dir)
    record = _record(source, fmt, options)
    if cache.is_file():
        state = _open(cache, kind)
        recorded = state.get("source") if isinstance(state, dict) else None
        if not _same_source(recorded, record):
            raise ValueError(
                f"{cache} is a mapped cache of {_describe(recorded)}, not of {source} "
                f"read as {fmt} with {options}; delete it, or pass another cache_dir"
            )
        if (recorded["size"], recorded["mtime_ns"]) == (record["size"], record["mtime_ns"]):
            return state, cache
        warnings.warn(
            f"{source} changed since its mapped cache {cache} was made; rebuilding it",
            UserWarning,
            stacklevel=3,
        )
    if cache_dir is not None:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
    print(f"converting {source} once into the mapped cache {cache}", file=sys.stderr)
    with _scratch(cache.parent) as allocate:
        state = build(allocate)
        try:
            save_state(cache, {**state, "source": record}, kind=kind)
        except PermissionError as err:
            raise PermissionError(
                f"cannot write the mapped cache {cache} ({err.strerror}); "
                "pass cache_dir= a folder you can write to"
            ) from None
    return _open(cache, kind), cache


def _open(cache: Path, kind: str) -> Any:
    try:
        return load_state(cache, kind=kind, mmap_mode="r")
    except ValueError as err:
        raise ValueError(
            f"the mapped cache {cache} cannot be read ({err}); delete it to "
            "rebuild it from its source"
        ) from None


def _record(source: Path, fmt: str, options: dict[str, Any]) -> dict[str, Any]:
    stat = source.stat()
    return {
        "path": str(source),
        "size": stat.st_size,
        "mtime_ns": stat.st_mtime_ns,
        "format": fmt,
        "options": options,
    }


def _same_source(recorded: Any, record: dict[str, Any]) -> bool:
    """The cache was made from this file, read the same way (its size and time may differ)."""
    if not isinstance(recorded, dict):
        return False
    same = all(recorded.get(k) == record[k] for k in ("path", "format", "options"))
    return same and all(isinstance(recorded.get(k), int) for k in ("size", "mtime_ns"))


def _describe(recorded: Any) -> str:
    if not isinstance(recorded, dict):
        return "an unknown source (no source record)"
    return f"{recorded.get('path')} read as {recorded.get('format')} with {recorded.get('options')}"


@contextlib.contextmanager
def _scratch(folder: Path) -> Iterator[Allocate]:
    """An ``allocate(shape, dtype)`` whose arrays map scratch files in ``folder``, removed after."""
    made: list[Path] = []

    def allocate(shape: tuple[int, int], dtype: np.dtype) -> np.ndarray:
        if 0 in shape:
            return np.empty(shape, dtype=dtype)
        fd, name = tempfile.mkstemp(prefix=".rowbook-scratch.", suffix=".tmp", dir=folder)
        os.close(fd)
        made.append(Path(name))
        return np.memmap(name, dtype=dtype, mode="w+", shape=shape)

    try:
        yield allocate
    finally:
        for name in made:
            with contextlib.suppress(OSError):
                name.unlink()
