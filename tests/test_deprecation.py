"""The one helper for renamed names: old spellings work, warn with the new name, and hide nowhere."""

from __future__ import annotations

import inspect
import typing
import warnings
from typing import Literal

import pytest

from rowbook._deprecation import renamed_attribute, renamed_kwargs


class Table:
    """A stand-in for a public class with a renamed keyword and attribute."""

    @renamed_kwargs(size="max_rows", freq="min_count", since="0.2")
    def __init__(self, *, max_rows: int | None = None, min_count: int = 1) -> None:
        self.max_rows, self.min_count = max_rows, min_count

    @renamed_kwargs(size="max_rows", since="0.2")
    def resize(self, rows: int = 0, *, max_rows: int | None = None) -> tuple[int, int | None]:
        return rows, max_rows

    size = renamed_attribute("size", "max_rows", since="0.2")


class SubTable(Table):
    pass


def test_new_names_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = Table(max_rows=3, min_count=2)
        assert table.resize(1, max_rows=4) == (1, 4)
        assert (table.max_rows, table.min_count) == (3, 2)


def test_an_old_keyword_is_passed_on_with_a_warning_naming_the_new_one():
    with pytest.warns(DeprecationWarning) as w:
        table = Table(size=5, freq=2)
    assert (table.max_rows, table.min_count) == (5, 2)
    assert [str(x.message) for x in w] == [
        "Table(size=...) is deprecated since rowbook 0.2 and will be removed in the next "
        "release; use Table(max_rows=...)",
        "Table(freq=...) is deprecated since rowbook 0.2 and will be removed in the next "
        "release; use Table(min_count=...)",
    ]
    assert w[0].filename == __file__  # the warning points at the caller's line
    with pytest.warns(DeprecationWarning, match=r"Table\.resize\(size=\.\.\.\)"):
        assert table.resize(2, size=7) == (2, 7)


def test_old_and_new_keyword_together_is_a_type_error():
    with pytest.raises(TypeError, match="Table\\(\\) got size and its new name max_rows"):
        Table(size=1, max_rows=2)


def test_the_signature_and_type_hints_are_the_new_ones():
    """What reads a signature (the command line's options, get_params) sees the new names."""
    params = inspect.signature(Table.__init__).parameters
    assert list(params) == ["self", "max_rows", "min_count"]
    assert typing.get_type_hints(Table.__init__)["max_rows"] == int | None


def test_type_hints_resolve_in_the_decorated_functions_module():
    @renamed_kwargs(kind="mode", since="0.2")
    def f(*, mode: Literal["a", "b"] = "a") -> str:
        return mode

    assert typing.get_type_hints(f)["mode"] == Literal["a", "b"]


def test_an_old_attribute_reads_writes_and_deletes_the_new_one_with_a_warning():
    table = Table(max_rows=3)
    with pytest.warns(DeprecationWarning, match=r"Table\.size is deprecated.*use Table\.max_rows"):
        assert table.size == 3
    with pytest.warns(DeprecationWarning) as w:
        table.size = 8
    assert w[0].filename == __file__
    assert table.max_rows == 8
    with pytest.warns(DeprecationWarning):
        del table.size
    assert not hasattr(table, "max_rows")


def test_an_old_attribute_is_named_by_the_class_of_the_object():
    with pytest.warns(
        DeprecationWarning, match=r"SubTable\.size is deprecated.*SubTable\.max_rows"
    ):
        assert SubTable(max_rows=2).size == 2


def test_the_class_attribute_is_documented_and_silent():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        descriptor = Table.size
    assert "max_rows" in descriptor.__doc__ and "0.2" in descriptor.__doc__
