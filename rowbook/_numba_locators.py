"""numba's cache locators for source files, their stamp widened to the package's
(:mod:`rowbook._numba_cache` says why; this module imports numba, that one does not)."""

from __future__ import annotations

from numba.core import caching

from rowbook._numba_cache import LOCATORS, root_of, stamp_of

__all__ = [
    "RowbookInTreeCacheLocator",
    "RowbookUserProvidedCacheLocator",
    "RowbookUserWideCacheLocator",
    "register",
]


class _PackageStamped:
    """For a file below a watched folder: numba's stamp of the file and the folder's."""

    def get_source_stamp(self):  # numba's interface
        return (super().get_source_stamp(), stamp_of(root_of(self._py_file)))

    @classmethod
    def from_function(cls, py_func, py_file):  # numba's interface
        if root_of(py_file) is None:
            return None  # not ours: the next locator in numba's list
        return super().from_function(py_func, py_file)


def _base(name: str) -> type:
    return getattr(caching, name, None) or getattr(caching, "_" + name)  # "_" before numba 0.62


RowbookUserProvidedCacheLocator = type(
    "RowbookUserProvidedCacheLocator", (_PackageStamped, _base(LOCATORS[0])), {}
)
RowbookInTreeCacheLocator = type(
    "RowbookInTreeCacheLocator", (_PackageStamped, _base(LOCATORS[1])), {}
)
RowbookUserWideCacheLocator = type(
    "RowbookUserWideCacheLocator", (_PackageStamped, _base(LOCATORS[2])), {}
)


def register() -> None:
    """Put the three at the head of numba's list of locators (numba imported before rowbook)."""
    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl
    ours = [RowbookUserProvidedCacheLocator, RowbookInTreeCacheLocator, RowbookUserWideCacheLocator]
    if impl._locator_classes[: len(ours)] != ours:
        impl._locator_classes[:0] = ours
