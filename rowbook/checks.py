"""The one set of argument validators: every public parameter is checked by these.

Each raises ``ValueError`` (``TypeError`` for a value of the wrong kind) with a message
that names the parameter, the value given and what is expected, so a user sees the fix.
``owner`` prefixes the message with the class that took the parameter (``"Adam: ..."``).

>>> check_int("window", 5, 1)
5
>>> check_int("window", 0, 1)
Traceback (most recent call last):
...
ValueError: window must be an integer >= 1, got 0
>>> check_number("betas[0]", 1.0, 0.0, 1.0, high_open=True, owner="Adam")
Traceback (most recent call last):
...
ValueError: Adam: betas[0] must be a finite number in [0.0, 1.0), got 1.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["check_choice", "check_int", "check_number"]


def _prefix(owner: str | None) -> str:
    return f"{owner}: " if owner else ""


def check_int(name: str, value: Any, minimum: int | None = None, *, allow_none: bool = False,
              owner: str | None = None) -> Any:  # fmt: skip
    """``value`` as an ``int`` if it is an integer ``>= minimum`` (or None when allowed).

    NumPy integers are accepted and converted; ``bool`` is refused (``True`` is not a size).
    """
    if value is None and allow_none:
        return None
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
    if not ok or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        extra = " or None" if allow_none else ""
        raise ValueError(f"{_prefix(owner)}{name} must be an integer{bound}{extra}, got {value!r}")
    return int(value)


def check_number(name: str, value: Any, low: float = -math.inf, high: float = math.inf, *,
                 low_open: bool = False, high_open: bool = False, allow_none: bool = False,
                 owner: str | None = None) -> Any:  # fmt: skip
    """``value`` as a ``float`` if it is a finite real number in the interval ``low .. high``.

    The interval is closed unless ``low_open`` / ``high_open``; an infinite bound is open.
    """
    if value is None and allow_none:
        return None
    real = isinstance(value, int | float | np.integer | np.floating)
    ok = real and not isinstance(value, bool | np.bool_) and math.isfinite(value)
    ok = ok and (value > low if low_open else value >= low)
    ok = ok and (value < high if high_open else value <= high)
    if not ok:
        left = "(" if low_open or low == -math.inf else "["
        right = ")" if high_open or high == math.inf else "]"
        extra = " or None" if allow_none else ""
        raise ValueError(
            f"{_prefix(owner)}{name} must be a finite number in {left}{low}, {high}{right}{extra}, "
            f"got {value!r}"
        )
    return float(value)


def check_choice(
    name: str, value: Any, choices: tuple[Any, ...], *, owner: str | None = None
) -> Any:
    """``value`` if it is one of ``choices``.

    >>> check_choice("architecture", "cbow", ("skipgram", "cbow"))
    'cbow'
    """
    if value not in choices:
        raise ValueError(
            f"{_prefix(owner)}{name} must be one of {', '.join(map(repr, choices))}; got {value!r}"
        )
    return value
