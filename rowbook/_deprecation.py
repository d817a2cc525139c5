"""Renamed public names, kept for one release with a warning that names the new one.

Two kinds of rename, one wording (:func:`renamed_message`):

* an attribute: ``old = renamed_attribute("old", "new", since="0.2")`` in the class body
  reads, sets and deletes ``new`` under the name ``old``, warning each time;
* a keyword argument: :func:`renamed_kwargs` decorates the function, which is written with
  the new names only (its signature, its docstring and ``inspect.signature`` show those);
  a call with an old name warns and is passed on under the new one, a call with both is a
  ``TypeError``.

The warnings are ``DeprecationWarning``: they are meant for the code that calls rowbook
(Python shows them by default in ``__main__``, in tests and with ``-W default``). The
command line says its own renamed options on standard error
(:func:`rowbook.cli._common.add_renamed`).

Examples
--------
>>> import warnings
>>> class Table:
...     @renamed_kwargs(size="max_rows", since="0.2")
...     def __init__(self, *, max_rows=None):
...         self.max_rows = max_rows
...     size = renamed_attribute("size", "max_rows", since="0.2")
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     table = Table(size=3)
...     table.size
3
>>> for w in caught:
...     print(w.message)
Table(size=...) is deprecated since rowbook 0.2 and will be removed in the next release; use Table(max_rows=...)
Table.size is deprecated since rowbook 0.2 and will be removed in the next release; use Table.max_rows
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["renamed_attribute", "renamed_kwargs", "renamed_message"]

_F = TypeVar("_F", bound=Callable[..., Any])


def renamed_message(old: str, new: str, since: str) -> str:
    """What a warning about a name renamed in rowbook ``since`` says.

    >>> renamed_message("--max-size", "--max-vocab", "0.2")
    '--max-size is deprecated since rowbook 0.2 and will be removed in the next release; use --max-vocab'
    """
    return (
        f"{old} is deprecated since rowbook {since} and will be removed in the next release; "
        f"use {new}"
    )


def renamed_attribute(old: str, new: str, *, since: str) -> property:
    """A property ``old`` that reads, sets and deletes the attribute ``new``, each time with a
    ``DeprecationWarning`` naming the class of the object (a subclass's name, where it is one)."""

    def warn(obj: Any) -> None:
        owner = type(obj).__name__
        message = renamed_message(f"{owner}.{old}", f"{owner}.{new}", since)
        warnings.warn(message, DeprecationWarning, stacklevel=3)

    def getter(self: Any) -> Any:
        warn(self)
        return getattr(self, new)

    def setter(self: Any, value: Any) -> None:
        warn(self)
        setattr(self, new, value)

    def deleter(self: Any) -> None:
        warn(self)
        delattr(self, new)

    doc = f"Deprecated alias of ``{new}`` (since rowbook {since})."
    return property(getter, setter, deleter, doc=doc)


def renamed_kwargs(*, since: str, **renames: str) -> Callable[[_F], _F]:
    """A decorator: the keyword arguments ``old="new"`` are accepted under their old names.

    Parameters
    ----------
    since : str
        The release that renamed them.
    **renames : str
        Old keyword name -> new keyword name (the one the function is written with).

    Examples
    --------
    >>> @renamed_kwargs(min_frequency="min_count", since="0.2")
    ... def fit(*, min_count=2):
    ...     return min_count
    >>> fit(min_count=1, min_frequency=1)
    Traceback (most recent call last):
    ...
    TypeError: fit() got min_frequency and its new name min_count; give min_count only
    """

    def decorate(function: _F) -> _F:
        where = function.__qualname__.removesuffix(".__init__")  # Vocab, ByteLevelBPE.fit

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"{where}() got {old} and its new name {new}; give {new} only")
                message = renamed_message(f"{where}({old}=...)", f"{where}({new}=...)", since)
                warnings.warn(message, DeprecationWarning, stacklevel=2)
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
