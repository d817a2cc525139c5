"""Facebook fastText's model files: the ``.bin`` read and written, ``.vec`` text as word2vec text.

A ``.bin`` is, in fastText's own order (``FastText::saveModel`` in ``src/fasttext.cc``,
``Args::save``, ``Dictionary::save``, ``DenseMatrix::save``), all little-endian:

=====================  =====================================================================
header                 int32 magic 793712314, int32 version (12; 11 is read too)
args                   int32 dim, ws, epoch, minCount, neg, wordNgrams, loss, model, bucket,
                       minn, maxn, lrUpdateRate; float64 t (56 bytes)
dictionary             int32 size, nwords, nlabels; int64 ntokens, pruneidx_size; then
                       ``size`` entries (NUL-terminated UTF-8 word, int64 count, int8 type
                       0 word / 1 label), then ``pruneidx_size`` int32 pairs (bucket, row):
                       the buckets a quantised model kept (-1: not pruned)
quant flag             1 byte; 1 means a quantised (``.ftz``) input matrix: fastText's
                       ``QuantMatrix`` (:class:`~rowbook.vectors.quantize.PQMatrix`)
input matrix           int64 rows (nwords + bucket), int64 cols (dim), rows * cols float32
qout flag              1 byte
output matrix          int64 rows, int64 cols, rows * cols float32
=====================  =====================================================================

Every size the file claims is checked against the bytes the file still holds before any
array is allocated, so a damaged or hostile file is a ``ValueError`` naming the file and
the field, never a huge allocation. The two matrices are read straight into their final
float32 arrays (``readinto``): loading takes the file's matrices and nothing more.
"""

from __future__ import annotations

import mmap
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, BinaryIO

import numpy as np

from rowbook.io import atomic_write
from rowbook.vectors.quantize.pqmatrix import PQMatrix

__all__ = [
    "FASTTEXT_MAGIC",
    "FASTTEXT_VERSION",
    "FastTextArgs",
    "FastTextFile",
    "read_fasttext_bin",
    "write_fasttext_bin",
]

FASTTEXT_MAGIC = 793712314
FASTTEXT_VERSION = 12
MODEL_NAMES = {1: "cbow", 2: "skipgram", 3: "supervised"}
LOSS_NAMES = {1: "hs", 2: "ns", 3: "softmax", 4: "ova"}
_ARGS = struct.Struct("<12id")
_DICT_HEAD = struct.Struct("<3i2q")
_MATRIX_HEAD = struct.Struct("<2q")
_ENTRY_MIN_BYTES = 10  # an empty word's NUL, int64 count, int8 type
_PIECE = 1 << 24  # bytes of a matrix read per call

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class FastTextArgs:
    """The ``Args`` a ``.bin`` stores (fastText's names; ``model`` and ``loss`` as codes)."""

    dim: int = 100
    ws: int = 5
    epoch: int = 5
    minCount: int = 5  # fastText's field names
    neg: int = 5
    wordNgrams: int = 1
    loss: int = 2  # ns
    model: int = 2  # skipgram
    bucket: int = 2_000_000
    minn: int = 3
    maxn: int = 6
    lrUpdateRate: int = 100
    t: float = 1e-4

    @classmethod
    def of_model(cls, model: Any, /, **fields: Any) -> FastTextArgs:
        """The ``Args`` of a rowbook model with n-grams (``FastText``, ``FastTextClassifier``):
        its ``vector_size``, ``epochs``, ``min_count``, ``negative``, ``n_buckets``, ``minn``
        and ``maxn`` under fastText's names, and the ``fields`` only that model has (``model``
        among them: fastText's code of the architecture)."""
        named = {field: getattr(model, name) for field, name in _MODEL_FIELDS.items()}
        return cls(**named, **fields)


#: fastText's name of each ``Args`` field a rowbook model with n-grams states -> its parameter.
_MODEL_FIELDS = {
    "dim": "vector_size",
    "epoch": "epochs",
    "minCount": "min_count",
    "neg": "negative",
    "bucket": "n_buckets",
    "minn": "minn",
    "maxn": "maxn",
}


@dataclass(frozen=True, eq=False)
class FastTextFile:
    """The content of an unquantised fastText ``.bin``.

    ``words``, ``counts`` and ``types`` are the dictionary entries in id order (words
    first, then labels); ``input`` is ``(nwords + bucket, dim)``, ``output`` ``(n, dim)``.
    """

    args: FastTextArgs
    words: tuple[str, ...]
    counts: np.ndarray  # (size,) int64
    input: np.ndarray  # (nwords + bucket, dim) float32
    output: np.ndarray  # (nwords or nlabels, dim) float32
    ntokens: int = 0
    types: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))  # (size,)
    pruneidx: np.ndarray | None = None  # (n, 2) int32 (bucket, kept row); None: not pruned

    @property
    def nwords(self) -> int:
        """Number of word entries (labels, if any, come after them)."""
        return int(np.count_nonzero(self.types == 0)) if len(self.types) else len(self.words)


class _Stream:
    """A binary file read with every claimed size checked against what is left of it."""

    def __init__(self, f: BinaryIO, path: PathLike) -> None:
        self.f, self.path = f, os.fspath(path)
        self.size = os.fstat(f.fileno()).st_size

    @property
    def left(self) -> int:
        return self.size - self.f.tell()

    def fail(self, what: str, message: str) -> ValueError:
        return ValueError(
            f"{self.path}: {what} {message}; the file is damaged or not a fastText .bin"
        )

    def unpack(self, layout: struct.Struct, what: str) -> tuple:
        if self.left < layout.size:
            raise self.fail(what, f"needs {layout.size} bytes but only {self.left} are left")
        return layout.unpack(self.f.read(layout.size))

    def claim(self, what: str, value: int, unit: int, reserve: int = 0) -> int:
        """``value`` items of ``unit`` bytes must fit in the bytes left (minus ``reserve``)."""
        if value < 0 or value * unit > self.left - reserve:
            raise self.fail(
                what,
                f"claims {value} items ({value * unit:,} bytes) but only "
                f"{max(self.left - reserve, 0):,} bytes are left",
            )
        return value


def read_fasttext_bin(
    path: PathLike,
    *,
    allocate: Callable[[tuple[int, int], np.dtype], np.ndarray] = np.empty,
    quantized: bool = False,
) -> FastTextFile:
    """Read a fastText ``.bin`` (see the module docstring for the layout).

    ``allocate(shape, dtype)`` makes the arrays the matrices are read into (a memory map of
    a file, when converting a model larger than memory). ``quantized=True`` also reads a
    quantised classifier (``.ftz``): its matrices come back as
    :class:`~rowbook.vectors.quantize.PQMatrix` and its kept buckets as ``pruneidx``."""
    with open(path, "rb") as f:
        s = _Stream(f, path)
        magic, version = s.unpack(struct.Struct("<2i"), "header")
        if magic != FASTTEXT_MAGIC:
            raise ValueError(
                f"{s.path} is not a fastText .bin model (magic number {magic}, "
                f"expected {FASTTEXT_MAGIC}); for .vec text use Vectors.load_word2vec_format"
            )
        if version > FASTTEXT_VERSION:
            raise ValueError(
                f"{s.path}: fastText file version {version} is newer than the "
                f"{FASTTEXT_VERSION} this rowbook reads"
            )
        args = FastTextArgs(*s.unpack(_ARGS, "args"))
        if version == 11 and args.model == 3:  # fastText: old supervised models had no char n-grams
            args = replace(args, maxn=0)
        words, counts, types, ntokens, pruneidx = _read_dictionary(s)
        if pruneidx is not None and not quantized:
            raise s.fail(
                "dictionary field 'pruneidx_size'",
                f"is {len(pruneidx)}: a pruned dictionary belongs to a quantised classifier "
                "(.ftz); rowbook.FastTextClassifier.load_fasttext reads it",
            )
        read = (args.dim, allocate, quantized)
        input_ = _read_matrix(s, "input matrix", "quant flag", 1 + 16, *read)
        output = _read_matrix(s, "output matrix", "qout flag", 0, *read)
        if s.left:
            raise s.fail("end of file", f"has {s.left} bytes after the output matrix")
    nwords = int(np.count_nonzero(types == 0))
    kept = args.bucket if pruneidx is None else len(pruneidx)
    expected = nwords + kept
    if input_.shape[0] != expected:
        what = "bucket" if pruneidx is None else "kept buckets"
        raise ValueError(
            f"{s.path}: field 'input matrix' has {input_.shape[0]} rows, but "
            f"nwords + {what} = {nwords} + {kept} = {expected}; the file is damaged"
        )
    return FastTextFile(args, tuple(words), counts, input_, output, ntokens, types, pruneidx)


def _read_dictionary(
    s: _Stream,
) -> tuple[list[str], np.ndarray, np.ndarray, int, np.ndarray | None]:
    size, nwords, nlabels, ntokens, prune_size = s.unpack(_DICT_HEAD, "dictionary header")
    s.claim("dictionary field 'size'", size, _ENTRY_MIN_BYTES)
    if nwords < 0 or nlabels < 0 or nwords + nlabels != size:
        raise s.fail("dictionary", f"has nwords={nwords} + nlabels={nlabels} != size={size}")
    start = s.f.tell()
    words, counts, types = [], np.empty(size, dtype=np.int64), np.empty(size, dtype=np.int8)
    with mmap.mmap(s.f.fileno(), 0, access=mmap.ACCESS_READ) as buffer:  # pages, not a copy
        pos = start
        for i in range(size):
            end = buffer.find(b"\0", pos)
            if end < 0 or end + _ENTRY_MIN_BYTES > len(buffer):
                raise s.fail(f"dictionary entry {i}", "runs past the end of the file")
            try:
                words.append(buffer[pos:end].decode("utf-8"))
            except UnicodeDecodeError as err:
                raise s.fail(f"dictionary entry {i}", f"is not UTF-8 ({err})") from None
            counts[i], types[i] = struct.unpack_from("<qb", buffer, end + 1)
            if counts[i] < 0 or types[i] not in (0, 1):
                raise s.fail(
                    f"dictionary entry {i}",
                    f"has count {counts[i]} and type {types[i]}; "
                    "a count is >= 0 and a type 0 (word) or 1 (label)",
                )
            pos = end + _ENTRY_MIN_BYTES
    s.f.seek(pos)
    pruneidx = None
    if prune_size >= 0:
        s.claim("dictionary field 'pruneidx_size'", prune_size, 8)
        pruneidx = np.frombuffer(s.f.read(8 * prune_size), dtype="<i4").reshape(-1, 2)
        pruneidx = pruneidx.astype(np.int32)
    elif prune_size != -1:
        raise s.fail("dictionary field 'pruneidx_size'", f"is {prune_size}, not -1 or a count")
    return words, counts, types, ntokens, pruneidx


def _read_matrix(
    s: _Stream,
    what: str,
    flag: str,
    reserve: int,
    dim: int,
    allocate: Callable[[tuple[int, int], np.dtype], np.ndarray],
    quantized: bool,
) -> Any:
    if s.left < 1:
        raise s.fail(f"field '{flag}'", "is missing")
    if s.f.read(1) != b"\0":
        if not quantized:
            raise ValueError(
                f"{s.path}: field '{flag}' is set: this is a quantised fastText classifier "
                "(.ftz); rowbook.FastTextClassifier.load_fasttext reads it"
            )
        return _read_quantized(s, what, dim)
    rows, cols = s.unpack(_MATRIX_HEAD, f"field '{what}' shape")
    if cols != dim:
        raise s.fail(f"field '{what}'", f"has {cols} columns but args.dim is {dim}")
    s.claim(f"field '{what}' rows", rows, 4 * max(cols, 1), reserve)
    matrix = allocate((rows, cols), np.dtype(np.float32))  # (rows, dim), filled in place
    view = memoryview(matrix).cast("B")
    for start in range(0, view.nbytes, _PIECE):  # a piece at a time: a mapped matrix pages out
        if s.f.readinto(view[start : start + _PIECE]) != len(view[start : start + _PIECE]):
            raise s.fail(f"field '{what}'", "ends early")
    if np.little_endian is False:  # pragma: no cover - big-endian hosts
        matrix.byteswap(inplace=True)
    return matrix


def _read_quantized(s: _Stream, what: str, dim: int) -> Any:
    """A product-quantised matrix (fastText's ``QuantMatrix``) at the stream's position."""
    start = s.f.tell()
    failure = None
    with mmap.mmap(s.f.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
        try:
            matrix, end = PQMatrix.from_fasttext_bytes(buffer, start, f"{s.path}: field '{what}'")
        except ValueError as err:  # kept as its message: its traceback holds views of the map,
            failure = str(err)  # which would stop the map from closing (BufferError)
    if failure is not None:
        raise ValueError(failure)
    if matrix.dim != dim:
        raise s.fail(f"field '{what}'", f"has {matrix.dim} columns but args.dim is {dim}")
    s.f.seek(end)
    return matrix


def write_fasttext_bin(path: PathLike, model: FastTextFile) -> None:
    """Atomically write ``model`` as a fastText ``.bin`` (version 12) the ``fasttext`` package loads."""
    a, words = model.args, model.words
    types = model.types if len(model.types) else np.zeros(len(words), dtype=np.int8)
    nlabels = int(np.count_nonzero(types))
    with atomic_write(path) as f:
        f.write(struct.pack("<2i", FASTTEXT_MAGIC, FASTTEXT_VERSION))
        f.write(
            _ARGS.pack(
                a.dim,
                a.ws,
                a.epoch,
                a.minCount,
                a.neg,
                a.wordNgrams,
                a.loss,
                a.model,
                a.bucket,
                a.minn,
                a.maxn,
                a.lrUpdateRate,
                a.t,
            )
        )
        prune = model.pruneidx
        prune_size = -1 if prune is None else len(prune)
        f.write(
            _DICT_HEAD.pack(len(words), len(words) - nlabels, nlabels, model.ntokens, prune_size)
        )
        f.write(
            b"".join(
                w.encode("utf-8") + struct.pack("<bqb", 0, int(c), int(t))
                for w, c, t in zip(words, model.counts, types, strict=True)
            )
        )
        if prune is not None:
            f.write(np.ascontiguousarray(prune, dtype="<i4").tobytes())
        for matrix in (model.input, model.output):
            if not isinstance(matrix, np.ndarray):  # a PQMatrix: a quantised (.ftz) table
                f.write(b"\1" + matrix.fasttext_bytes())
                continue
            table = np.ascontiguousarray(matrix, dtype="<f4")
            f.write(b"\0" + _MATRIX_HEAD.pack(*table.shape))
            f.write(memoryview(table).cast("B"))
