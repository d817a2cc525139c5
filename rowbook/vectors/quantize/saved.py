"""A quantised matrix from the state a file holds: its ``"method"`` field picks the form
(:class:`~rowbook.vectors.quantize.int8.Int8Matrix` or
:class:`~rowbook.vectors.quantize.pqmatrix.PQMatrix`), whose ``from_state`` checks the rest.
Apart from :mod:`~rowbook.vectors.quantize.matrix`, so that the interface does not import
the forms that implement it."""

from __future__ import annotations

from typing import Any

from rowbook.vectors.quantize.int8 import Int8Matrix
from rowbook.vectors.quantize.matrix import QuantizedMatrix
from rowbook.vectors.quantize.pqmatrix import PQMatrix

__all__ = ["matrix_from_state"]


def matrix_from_state(state: Any, where: str, n_rows: int | None = None) -> QuantizedMatrix:
    """The matrix a file's ``state`` describes (``"method"``: ``"int8"`` or ``"pq"``), checked;
    ``where`` names the field in errors, ``n_rows`` the rows it must have when known."""
    method = state.get("method") if isinstance(state, dict) else None
    if method == "int8":
        return Int8Matrix.from_state(state, where, n_rows)
    if method == "pq":
        return PQMatrix.from_state(state, where, n_rows)
    raise ValueError(f"{where}: 'method' must be 'int8' or 'pq', got {method!r}")
