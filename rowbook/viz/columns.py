"""Per-point metadata columns of a picture: checked once, then numbers or categories.

A column is any ``n`` values, one per point (a word's count, its part of speech, the cluster
it belongs to). :func:`metadata_columns` turns each into what the HTML view colours by:

* a column of numbers (ints and floats, ``None`` for a missing one) stays numbers, coloured
  on a continuous scale; a column of positive numbers spanning more than three orders of
  magnitude (corpus counts) is coloured on a log scale;
* anything else is a category column: each distinct value (as a string; ``None`` is
  ``"(missing)"``) gets a code, most frequent first, so the view can colour the top ones
  and put the rest under "other".
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["MISSING", "metadata_columns"]

MISSING = "(missing)"


def _is_number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    kind = getattr(getattr(value, "dtype", None), "kind", "")  # NumPy scalars
    return isinstance(value, int | float) or (kind != "" and kind in "iuf")


def metadata_columns(metadata: Mapping[str, Sequence[Any]] | None, n: int) -> list[dict[str, Any]]:
    """The columns of ``metadata`` (name to ``n`` values) as the view's JSON, in order.

    Examples
    --------
    >>> cols = metadata_columns({"count": [900, 5, 1], "pos": ["noun", "verb", "noun"]}, 3)
    >>> cols[0]
    {'name': 'count', 'kind': 'number', 'values': [900.0, 5.0, 1.0], 'log': False}
    >>> cols[1]
    {'name': 'pos', 'kind': 'category', 'categories': ['noun', 'verb'], 'codes': [0, 1, 0]}
    """
    columns = []
    for name, values in (metadata or {}).items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"metadata column names must be non-empty strings, got {name!r}")
        if isinstance(values, str) or len(values) != n:
            got = "a str" if isinstance(values, str) else f"{len(values)} values"
            raise ValueError(
                f"metadata column {name!r} must hold one value per point ({n}), got {got}"
            )
        present = [v for v in values if v is not None]
        if present and all(_is_number(v) for v in present):
            numbers = [None if v is None else float(v) for v in values]
            if any(v is not None and not math.isfinite(v) for v in numbers):
                raise ValueError(f"metadata column {name!r} holds a NaN or infinite number")
            known = [v for v in numbers if v is not None]
            log = min(known) > 0 and max(known) / min(known) > 1000
            columns.append({"name": name, "kind": "number", "values": numbers, "log": log})
            continue
        labels = [MISSING if v is None else str(v) for v in values]
        order = [value for value, _ in Counter(labels).most_common()]  # ties: first seen first
        code = {value: i for i, value in enumerate(order)}
        columns.append(
            {
                "name": name,
                "kind": "category",
                "categories": order,
                "codes": [code[v] for v in labels],
            }
        )
    return columns
