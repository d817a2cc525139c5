"""The one set of argument validators: every public parameter is checked by these.

Each raises ``ValueError`` (``TypeError`` for a value of the wrong kind) with a message
that names the parameter, the value given and what is expected, so a user sees the fix.
``owner`` prefixes the message with the class that took the parameter (``"Adam: ..."``).

Examples
--------
>>> check_int("window", 5, 1)
5
>>> check_int("window", 0, 1)
Traceback (most recent call last):
...
rowbook.checks.ParameterError: window must be an integer >= 1, got 0
>>> check_number("betas[0]", 1.0, 0.0, 1.0, high_open=True, owner="Adam")
Traceback (most recent call last):
...
rowbook.checks.ParameterError: Adam: betas[0] must be a finite number in [0.0, 1.0), got 1.0
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "EmptyInputError",
    "InputIndexError",
    "InputTypeError",
    "NotFittedError",
    "ParameterError",
    "ParameterHint",
    "UnknownKeyError",
    "check_choice",
    "check_finite",
    "check_finite_rows",
    "check_heads",
    "check_int",
    "check_number",
]


class InputTypeError(TypeError):
    """A value of a kind rowbook does not take (a ``str`` where ids go), raised on purpose.

    The command line reports these, and the other errors below, in one line: the user can
    fix them. A plain ``TypeError``, ``KeyError`` or ``IndexError`` from inside rowbook is a
    bug and is shown with its traceback (:func:`rowbook.cli.main`).
    """


class UnknownKeyError(KeyError):
    """A key (a word, a token, a model name) the table or file does not hold."""


class InputIndexError(IndexError):
    """An id or position outside the table the user gave."""


class NotFittedError(ValueError, AttributeError):
    """A learned attribute was read before ``fit`` (scikit-learn's exception of that name)."""


class EmptyInputError(ValueError):
    """The data given holds nothing to learn from (a corpus with no token), raised on purpose:
    a front end names the input it read (``corpus x.txt is empty``)."""


class ParameterError(ValueError):
    """A parameter with a value it cannot take; knows the parameter's name, so a front end can
    say the same thing in its own words (the CLI names its flag: ``err.message_for("--window")``).

    Examples
    --------
    >>> err = ParameterError("window", 0, "an integer >= 1")
    >>> str(err), err.message_for("--window")
    ('window must be an integer >= 1, got 0', '--window must be an integer >= 1, got 0')
    """

    def __init__(
        self,
        name: str,
        value: Any,
        expected: str,
        *,
        owner: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.name, self.value, self.expected, self.owner, self.fix = (
            name,
            value,
            expected,
            owner,
            fix,
        )
        super().__init__(self.message_for(name))

    def __reduce__(self) -> tuple:
        # Raised in a forked worker, the error crosses a pipe: pickled by its fields (the
        # default passes the message to __init__, which takes fields; the pool's result
        # thread then died unpickling it and the caller waited for ever, seen in CI).
        return (_restore_error, (type(self), dict(self.__dict__), self.args))

    def message_for(self, name: str) -> str:
        """The message with the parameter called ``name`` (a flag, say)."""
        prefix = f"{self.owner}: " if self.owner else ""
        fix = f"; {self.fix}" if self.fix else ""
        return f"{prefix}{name} must be {self.expected}, got {self.value!r}{fix}"


class ParameterHint(ParameterError):
    """Input that a parameter's current value cannot handle but another value can (a file
    with bad bytes read with ``errors="strict"``); says the other value in the caller's words.

    Examples
    --------
    >>> err = ParameterHint("errors", "replace", "a.txt: invalid UTF-8 at byte 3",
    ...                     effect="to substitute U+FFFD")
    >>> str(err)
    "a.txt: invalid UTF-8 at byte 3; pass errors='replace' to substitute U+FFFD"
    >>> err.message_for("--unicode-errors")
    'a.txt: invalid UTF-8 at byte 3; add --unicode-errors replace to substitute U+FFFD'
    """

    def __init__(self, name: str, suggested: Any, problem: str, *, effect: str = "") -> None:
        self.name, self.value, self.problem, self.effect = name, suggested, problem, effect
        self.expected, self.owner, self.fix = None, None, None
        ValueError.__init__(self, self.message_for(name))

    def message_for(self, name: str) -> str:
        """The message with the parameter called ``name``; a ``--flag`` gets ``--flag value``."""
        if name.startswith("-"):
            setting = f"add {name} {self.value}"
        else:
            setting = f"pass {name}={self.value!r}"
        return f"{self.problem}; {setting}{' ' + self.effect if self.effect else ''}"


def _restore_error(cls: type, fields: dict[str, Any], args: tuple) -> BaseException:
    """A :class:`ParameterError` (or subclass) from its fields, as ``__reduce__`` gave them."""
    error = cls.__new__(cls)
    error.__dict__.update(fields)
    error.args = args
    return error


def check_int(
    name: str,
    value: Any,
    minimum: int | None = None,
    *,
    allow_none: bool = False,
    owner: str | None = None,
) -> Any:
    """``value`` as an ``int`` if it is an integer ``>= minimum`` (or None when allowed).

    NumPy integers are accepted and converted; ``bool`` is refused (``True`` is not a size).
    """
    if value is None and allow_none:
        return None
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)
    if not ok or (minimum is not None and value < minimum):
        bound = f" >= {minimum}" if minimum is not None else ""
        extra = " or None" if allow_none else ""
        raise ParameterError(name, value, f"an integer{bound}{extra}", owner=owner)
    return int(value)


def check_number(
    name: str,
    value: Any,
    low: float = -math.inf,
    high: float = math.inf,
    *,
    low_open: bool = False,
    high_open: bool = False,
    allow_none: bool = False,
    owner: str | None = None,
) -> Any:
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
        raise ParameterError(
            name, value, f"a finite number in {left}{low}, {high}{right}{extra}", owner=owner
        )
    return float(value)


def check_choice(
    name: str, value: Any, choices: tuple[Any, ...], *, owner: str | None = None
) -> Any:
    """``value`` if it is one of ``choices``.

    Examples
    --------
    >>> check_choice("architecture", "cbow", ("skipgram", "cbow"))
    'cbow'
    """
    if value not in choices:
        raise ParameterError(name, value, f"one of {', '.join(map(repr, choices))}", owner=owner)
    return value


_FINITE_BLOCK = 1 << 15  # rows checked at once: a bounded boolean scratch array


def check_finite_rows(
    name: str, table: np.ndarray, keys: Any = None, *, allow_nonfinite: bool = False
) -> None:
    """Refuse a table holding ``inf`` or ``nan`` (unless ``allow_nonfinite``), naming the
    first such row (and its key) and the escape hatch, as the file loaders do.

    Rows are checked a block at a time, so a large table needs no second table of booleans.

    Examples
    --------
    >>> check_finite_rows("vectors", np.array([[1.0, 2.0], [0.5, np.nan]]), ["a", "b"])
    Traceback (most recent call last):
    ...
    rowbook.checks.ParameterHint: vectors row 1 ('b') holds nan at column 1: inf and nan make every query score nan; pass allow_nonfinite=True to keep it (queries then treat such rows as zero rows)
    """
    problem = None if allow_nonfinite else _first_nonfinite(name, table, keys)
    if problem is not None:
        raise ParameterHint(
            "allow_nonfinite",
            True,
            problem,
            effect="to keep it (queries then treat such rows as zero rows)",
        )


def check_finite(name: str, values: Any) -> None:
    """Refuse a query's vector or matrix holding ``inf`` or ``nan``, in the words of
    :func:`check_finite_rows` (the table doors); a query has no rows to treat as zero, so
    there is no escape hatch. A finite sum is checked first: one pass, no scratch.

    Examples
    --------
    >>> check_finite("positive[0]", np.array([0.5, np.inf]))
    Traceback (most recent call last):
    ...
    ValueError: positive[0] holds inf at column 1: inf and nan make every query score nan; give finite values
    """
    values = np.asarray(values)
    if values.dtype.kind not in "fc" or math.isfinite(abs(values.sum(dtype=np.float64))):
        return
    problem = _first_nonfinite(name, values if values.ndim != 1 else values[None, :], None)
    if problem is not None:
        if values.ndim == 1:
            problem = problem.replace(f"{name} row 0 ", f"{name} ", 1)
        raise ValueError(f"{problem}; give finite values")


def _first_nonfinite(name: str, table: Any, keys: Any) -> str | None:
    """Where the first ``inf`` / ``nan`` of ``table`` is, in words (None: all finite)."""
    table = np.asarray(table)
    if table.dtype.kind not in "fc" or table.size == 0:
        return None
    rows = table.reshape(table.shape[0], -1) if table.ndim else table.reshape(1, 1)
    for start in range(0, len(rows), _FINITE_BLOCK):
        block = rows[start : start + _FINITE_BLOCK]
        finite = np.isfinite(block)
        if not finite.all():
            row, col = (int(i[0]) for i in np.nonzero(~finite))
            key = f" ({keys[start + row]!r})" if keys is not None else ""
            return (
                f"{name} row {start + row}{key} holds {block[row, col]} at column {col}: inf "
                "and nan make every query score nan"
            )
    return None


def check_heads(
    d_model: int, n_heads: int, n_kv_heads: int | None, head_dim: int | None, owner: str
) -> tuple[int, int]:
    """``(n_kv_heads, head_dim)`` after checking that the heads divide as they must.

    >>> check_heads(4096, 32, 8, None, "Llama")
    (8, 128)
    >>> check_heads(100, 3, None, None, "GPT")
    Traceback (most recent call last):
    ...
    rowbook.checks.ParameterError: GPT: d_model must be divisible by n_heads (3) so that each head gets d_model / n_heads features, got 100; change d_model or n_heads (or give head_dim)
    """
    check_int("d_model", d_model, 1, owner=owner)
    check_int("n_heads", n_heads, 1, owner=owner)
    n_kv = n_heads if n_kv_heads is None else check_int("n_kv_heads", n_kv_heads, 1, owner=owner)
    if n_heads % n_kv:
        raise ParameterError(
            "n_kv_heads",
            n_kv_heads,
            f"a divisor of n_heads ({n_heads})",
            owner=owner,
            fix="each key/value head serves n_heads / n_kv_heads "
            "query heads: use 1 (multi-query), n_heads (multi-head) or a divisor",
        )
    if head_dim is None:
        if d_model % n_heads:
            raise ParameterError(
                "d_model",
                d_model,
                f"divisible by n_heads ({n_heads}) so that "
                "each head gets d_model / n_heads features",
                owner=owner,
                fix="change d_model or n_heads (or give head_dim)",
            )
        head_dim = d_model // n_heads
    return n_kv, check_int("head_dim", head_dim, 1, owner=owner)
