"""Vector files beside the word2vec ones: the vocabulary file of counts, and safetensors.

* a **vocabulary file** holds one ``key count`` line per key, beside a word2vec file
  (word2vec.c's ``-save-vocab``, gensim's ``fvocab=``);
* the **safetensors** form of a table (``Vectors.save("v.safetensors")``) holds tensors
  ``vectors`` (V, d), ``counts`` (V,) if any, and the keys as their UTF-8 bytes
  ``key_bytes`` cut by ``key_offsets`` (V + 1,): key i is ``key_bytes[off[i]:off[i+1]]``.
  ``safetensors.torch.load_file(path)["vectors"]`` is the table for
  ``torch.nn.Embedding.from_pretrained``.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Sequence

import numpy as np

from rowbook.io import atomic_write, load_safetensors, save_safetensors
from rowbook.vectors.formats import check_word2vec_key
from rowbook.vectors.word2vec_reader import nonfinite_message

__all__ = [
    "is_safetensors",
    "read_safetensors",
    "read_vocab_counts",
    "write_safetensors",
    "write_vocab_counts",
]

PathLike = str | os.PathLike[str]


def write_vocab_counts(path: PathLike, keys: Sequence[str], counts: np.ndarray) -> None:
    """Atomically write one ``key count`` line per key, in index order (gensim's ``fvocab``)."""
    for i, key in enumerate(keys):
        check_word2vec_key(key, i)
    with atomic_write(path) as f:
        f.write("".join(f"{k} {int(c)}\n" for k, c in zip(keys, counts, strict=True)).encode())


def read_vocab_counts(
    path: PathLike, keys: Sequence[str], *, unicode_errors: str = "strict"
) -> np.ndarray:
    """Counts of ``keys`` from a ``key count`` per line file, (V,) int64.

    Lines for other keys are ignored; a key without a line gets 0, with a warning (gensim
    stores ``None``). A line that is not a key and a non-negative integer raises
    ``ValueError`` naming the line.
    """
    found: dict[str, int] = {}
    with open(path, "rb") as f:
        for line_no, raw in enumerate(f, start=1):
            fields = raw.decode("utf8", unicode_errors).split()
            if not fields:
                continue
            if len(fields) != 2 or not fields[1].isdigit():
                raise ValueError(
                    f"{path}, line {line_no}: expected 'key count' (a key and a non-negative "
                    f"integer), got {raw[:60].decode('utf8', 'replace').rstrip()!r}"
                )
            found.setdefault(fields[0], int(fields[1]))
    missing = [key for key in keys if key not in found]
    if missing:
        warnings.warn(
            f"{path}: {len(missing)} keys have no count, e.g. {missing[0]!r}; they get 0",
            UserWarning,
            stacklevel=3,
        )
    return np.array([found.get(key, 0) for key in keys], dtype=np.int64)


def is_safetensors(path: PathLike) -> bool:
    """Whether the file at ``path`` starts as a safetensors file does: an 8-byte header length
    that fits in the file, then the header's ``{``."""
    with open(path, "rb") as f:
        start = f.read(9)
        size = os.fstat(f.fileno()).st_size
    if len(start) < 9:
        return False
    length = int.from_bytes(start[:8], "little")
    return start[8:9] == b"{" and 2 <= length <= size - 8


def write_safetensors(
    path: PathLike, keys: Sequence[str], vectors: np.ndarray, counts: np.ndarray | None
) -> None:
    """Atomically write keys, vectors and counts as safetensors (see the module docstring)."""
    encoded = [key.encode("utf8") for key in keys]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)  # (V + 1,)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    tensors = {
        "vectors": vectors,
        "key_bytes": np.frombuffer(b"".join(encoded), dtype=np.uint8),
        "key_offsets": offsets,
    }
    if counts is not None:
        tensors["counts"] = counts
    save_safetensors(path, tensors, {"format": "rowbook", "kind": "vectors", "version": "1"})


def read_safetensors(
    path: PathLike, *, mmap: bool = False, allow_nonfinite: bool = False
) -> tuple[list[str], np.ndarray, np.ndarray | None]:
    """Read a file written by :func:`write_safetensors`; checks what it holds (``inf`` and
    ``nan`` refused with their row unless ``allow_nonfinite``, as in the other formats). With
    ``mmap`` the table is mapped from the file read-only instead of read (and not scanned)."""
    tensors, meta = load_safetensors(path, mmap_mode="r" if mmap else None)
    if meta.get("kind") != "vectors" or not {"vectors", "key_bytes", "key_offsets"} <= set(tensors):
        raise ValueError(
            f"{path}: not a rowbook vectors safetensors file (it needs 'vectors', 'key_bytes' "
            f"and 'key_offsets' and kind 'vectors'; found {sorted(tensors)}, kind {meta.get('kind')!r})"
        )
    vectors, raw, offsets = (
        tensors["vectors"],
        tensors["key_bytes"].tobytes(),
        tensors["key_offsets"],
    )
    if (
        vectors.ndim != 2
        or offsets.shape != (len(vectors) + 1,)
        or offsets[0] != 0
        or (np.diff(offsets) < 0).any()
        or offsets[-1] != len(raw)
    ):
        raise ValueError(f"{path}: 'key_offsets' does not cut 'key_bytes' into {len(vectors)} keys")
    keys = [raw[a:b].decode("utf8") for a, b in itertools.pairwise(offsets)]
    if vectors.dtype.kind != "f" or vectors.shape[1] < 1:
        raise ValueError(
            f"{path}: 'vectors' must be a (V, d >= 1) float table, got {vectors.dtype}"
        )
    finite = None if allow_nonfinite or mmap else np.isfinite(vectors)  # mapped: not scanned
    if finite is not None and not finite.all():
        row, col = (int(i[0]) for i in np.nonzero(~finite))
        raise ValueError(
            f"{path}: 'vectors' row {row + 1} ({keys[row]!r}): "
            + nonfinite_message(col, vectors[row, col])
        )
    counts = tensors.get("counts")
    if counts is not None and counts.shape != (len(keys),):
        raise ValueError(f"{path}: 'counts' must be a ({len(keys)},) array")
    return keys, vectors, counts
