"""Renamed public names, kept for one release with a warning that names the new one.

Two kinds of rename, one wording (:func:`renamed_message`), one release that ends them
(:data:`REMOVED_IN`):

* a keyword argument: :func:`renamed_kwargs` decorates the function, which is written with
  the new names only (its signature, its docstring and ``inspect.signature`` show those);
  a call with an old name warns and is passed on under the new one, a call with both is a
  ``TypeError``;
* an attribute: :func:`renamed_attribute` in the class body reads, writes and deletes the
  new attribute under the old name, warning each time.

The warnings are ``DeprecationWarning``: they are meant for the code that calls rowbook
(Python shows them by default in ``__main__``, in tests and with ``-W default``). The
command line says its own renamed flags on standard error (:mod:`rowbook.cli._common`).

Examples
--------
>>> import warnings
>>> class Table:
...     @renamed_kwargs(size="max_rows")
...     def __init__(self, *, max_rows=None):
...         self.max_rows = max_rows
...     size = renamed_attribute("max_rows")
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     table = Table(size=3)
...     table.size
3
>>> [str(w.message) for w in caught]  # doctest: +NORMALIZE_WHITESPACE
['Table(size=...) is renamed max_rows; the old name works until rowbook 0.3',
 'Table.size is renamed max_rows; the old name works until rowbook 0.3']
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["REMOVED_IN", "renamed_attribute", "renamed_kwargs", "renamed_message"]

#: The release that drops the old names (they are kept for one release).
REMOVED_IN = "0.3"

_F = TypeVar("_F", bound=Callable[..., Any])


def renamed_message(old: str, new: str) -> str:
    """What a warning about a renamed name says.

    >>> renamed_message("--max-size", "--max-vocab")
    '--max-size is renamed --max-vocab; the old name works until rowbook 0.3'
    """
    return f"{old} is renamed {new}; the old name works until rowbook {REMOVED_IN}"


def _call_name(function: Callable[..., Any]) -> str:
    """``Vocab`` for ``Vocab.__init__``, else the qualified name (``ByteLevelBPE.fit``)."""
    name = function.__qualname__
    return name.removesuffix(".__init__")


def renamed_kwargs(**renames: str) -> Callable[[_F], _F]:
    """A decorator: the keyword arguments ``old=new`` are accepted under their old names.

    Parameters
    ----------
    **renames : str
        Old keyword name -> new keyword name (the one the function is written with).

    Examples
    --------
    >>> @renamed_kwargs(min_frequency="min_count")
    ... def fit(*, min_count=2):
    ...     return min_count
    >>> fit(min_count=1, min_frequency=1)
    Traceback (most recent call last):
    ...
    TypeError: fit() got min_frequency and its new name min_count; give min_count only
    """

    def decorate(function: _F) -> _F:
        where = _call_name(function)

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, new in renames.items():
                if old not in kwargs:
                    continue
                if new in kwargs:
                    raise TypeError(f"{where}() got {old} and its new name {new}; give {new} only")
                warnings.warn(
                    renamed_message(f"{where}({old}=...)", new), DeprecationWarning, stacklevel=2
                )
                kwargs[new] = kwargs.pop(old)
            return function(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


class _RenamedAttribute:
    """The descriptor :func:`renamed_attribute` returns; it learns its old name from the class."""

    def __init__(self, new: str) -> None:
        self.new = new
        self.__doc__ = f"Renamed :attr:`{new}` (the old name works until rowbook {REMOVED_IN})."

    def __set_name__(self, owner: type, name: str) -> None:
        self.where = f"{owner.__name__}.{name}"

    def _warn(self) -> None:
        warnings.warn(renamed_message(self.where, self.new), DeprecationWarning, stacklevel=3)

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:  # the class itself (help, documentation tools): no warning
            return self
        self._warn()
        return getattr(obj, self.new)

    def __set__(self, obj: Any, value: Any) -> None:
        self._warn()
        setattr(obj, self.new, value)

    def __delete__(self, obj: Any) -> None:
        self._warn()
        delattr(obj, self.new)


def renamed_attribute(new: str) -> Any:
    """A class attribute that stands for the attribute ``new`` under the name it is bound to.

    ``max_size = renamed_attribute("max_vocab")`` in a class body: reading, setting or
    deleting ``obj.max_size`` acts on ``obj.max_vocab`` and warns.
    """
    return _RenamedAttribute(new)
