"""JSON read with a depth limit: :func:`parse_json` refuses nesting deeper than
:data:`MAX_JSON_DEPTH` before ``json`` recurses into it, and names the text in every error.
Below :mod:`rowbook.io` (which re-exports both) so that the file readers under it, such as
:mod:`rowbook._safetensors`, use the same rule."""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

__all__ = ["MAX_JSON_DEPTH", "parse_json"]

#: Deepest JSON nesting rowbook reads; its own files nest a few levels.
MAX_JSON_DEPTH = 100


# A JSON string, or an unterminated one up to the end: every quote starts a match that
# succeeds, so the scan is linear however the quotes and backslashes are arranged.
_STRING = re.compile(r'(?s)"(?:[^"\\]++|\\.)*+\\?(?:"|\Z)')
_NOT_BRACKET = re.compile(r"[^\[\]{}]++")


def parse_json(text: str, where: str) -> Any:
    """``json.loads(text)``, refusing nesting deeper than :data:`MAX_JSON_DEPTH`.

    Examples
    --------
    >>> parse_json("[[1], {}]", "example")
    [[1], {}]
    >>> parse_json("[" * 200_000, "example")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: example nests arrays/objects ... rowbook reads at most 100
    """
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return _loads(text, where)  # too few brackets to nest deeper: no need to scan them
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    steps = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    opens = (steps == ord("[")) | (steps == ord("{"))
    depth = int(np.cumsum(np.where(opens, 1, -1)).max()) if steps.size else 0
    if depth > MAX_JSON_DEPTH:
        raise ValueError(
            f"{where} nests arrays/objects {depth} levels deep; "
            f"rowbook reads at most {MAX_JSON_DEPTH}"
        )
    return _loads(text, where)


def _loads(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{where} is not valid JSON: {err.msg} at line {err.lineno}, column "
            f"{err.colno} (character offset {err.pos})"
        ) from None
    except RecursionError:
        raise ValueError(f"{where} nests arrays/objects too deeply") from None
