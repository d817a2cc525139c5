"""Pretrained rows as the starting table of a network model: ``Model.from_vectors``.

:meth:`TextClassifier.from_vectors <rowbook.models.TextClassifier.from_vectors>`,
:meth:`LSTMClassifier.from_vectors <rowbook.models.LSTMClassifier.from_vectors>` and
:meth:`NPLM.from_vectors <rowbook.models.NPLM.from_vectors>` make an unfitted model that
remembers a :class:`~rowbook.Vectors` (word2vec's, say). ``fit`` learns the vocabulary as
usual, initialises the network as usual, and then overwrites the rows of the words that
both vocabularies hold with the vectors' rows; the others (words the vectors lack,
``<unk>``, ``<s>``) keep their usual initialisation, and the padding row stays zero.

``freeze_embeddings=True`` keeps the table as it starts (PyTorch's
``nn.Embedding.from_pretrained(freeze=True)``, whose default it is; here the default is to
fine-tune it, since the rows are a start). A saved model holds the trained table, so
loading or resuming it does not need the vectors; a resumed ``fit`` continues from its
file and ignores them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

from rowbook.checks import InputTypeError, ParameterError
from rowbook.vectors import Vectors

__all__ = ["copy_rows", "with_start_vectors"]

M = TypeVar("M")


def copy_rows(
    table: np.ndarray, keys: Sequence[str], vectors: Vectors, skip: Iterable[int] = ()
) -> np.ndarray:
    """Write ``vectors``' row of every key of ``keys`` it holds into ``table`` (V, d), in
    place, except at the ids in ``skip``; the ids written, in order.

    >>> start = Vectors(["cat", "dog"], np.array([[1.0, 2.0], [3.0, 4.0]], np.float32))
    >>> table = np.zeros((4, 2), np.float32)
    >>> copy_rows(table, ["<pad>", "dog", "fish", "cat"], start, skip=[0]).tolist()
    [1, 3]
    >>> table.tolist()
    [[0.0, 0.0], [3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]
    """
    skipped = set(skip)
    ids = [i for i, key in enumerate(keys) if key in vectors and i not in skipped]
    rows = vectors[[keys[i] for i in ids]] if ids else np.empty((0, table.shape[1]))  # (n, d)
    table[ids] = rows.astype(table.dtype)
    return np.asarray(ids, dtype=np.int64)


def with_start_vectors(cls: type[M], vectors: Vectors, params: dict[str, Any]) -> M:
    """``cls(**params)`` (``dim`` taken from ``vectors`` when not given), remembering
    ``vectors`` as the rows its ``fit`` starts from."""
    if not isinstance(vectors, Vectors):
        raise InputTypeError(
            f"{cls.__name__}.from_vectors: vectors must be a rowbook.Vectors, got "
            f"{type(vectors).__name__}; read a file with rowbook.load(path)"
        )
    dim = params.setdefault("dim", vectors.vector_size)
    if dim != vectors.vector_size:
        raise ParameterError(
            "dim",
            dim,
            f"{vectors.vector_size}, the vectors' size",
            owner=cls.__name__,
            fix="leave dim out to take the vectors' size",
        )
    model = cls(**params)
    model._start_vectors = vectors  # type: ignore[attr-defined]
    return model
