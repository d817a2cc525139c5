"""numba's on-disk cache, kept fresh when a kernel's callees change in another module.

numba (``cache=True``) keys a kernel's cached machine code on the source of the one file
that defines it. A kernel that calls a compiled function of another rowbook module has that
function compiled into it, so when only the other module changes -- an upgrade of rowbook
in place, a checkout of another commit -- numba would load the old machine code: the old
behaviour, silently. numba does not list its cache files among the package's, so an
upgrade does not remove them (``__pycache__/*.nbi`` beside an editable checkout,
``~/.cache/numba`` for an installed one).

Here rowbook's kernels are located by numba's own locators with one change
(:func:`register` builds them): the stamp a cache is valid for is the defining file's
stamp *and* :func:`source_stamp` of every module of the package that holds compiled code
(the files that mention ``numba``). A change to any of them makes every rowbook kernel
compile afresh once; a change elsewhere (a plain-Python module) costs nothing. Functions
outside rowbook keep numba's locators as they are.

``import rowbook`` does not import numba (it is heavy), so :func:`keep_fresh` puts the
locators at the head of numba's list right after numba loads its caching module (an import
hook that removes itself), or at once when numba was imported first. The change stays in
this process: nothing is written to the environment. A user who set
``NUMBA_CACHE_LOCATOR_CLASSES`` keeps their choice (numba then ignores its list).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.abc
import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["LOCATORS", "keep_fresh", "register", "root_of", "source_stamp", "stamp_of", "watch"]

ROOT = Path(__file__).resolve().parent
_WATCHED: list[Path] = [ROOT]
#: numba's locators for source files, each extended by :func:`register`.
LOCATORS = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")


def source_stamp(root: str | os.PathLike[str]) -> bytes:
    """SHA-256 of the path and bytes of every ``.py`` file below ``root`` that mentions
    ``numba`` (the modules that can hold compiled code), in sorted order.

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "kernel.py").write_text("import numba\\nVALUE = 1\\n")
    >>> _ = (root / "plain.py").write_text("VALUE = 1\\n")
    >>> before = source_stamp(root)
    >>> _ = (root / "plain.py").write_text("VALUE = 2\\n")
    >>> source_stamp(root) == before
    True
    >>> _ = (root / "kernel.py").write_text("import numba\\nVALUE = 2\\n")
    >>> source_stamp(root) == before
    False
    """
    root = Path(root)
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        data = path.read_bytes()
        if b"numba" in data:
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(data).digest())
    return digest.digest()


@functools.cache
def stamp_of(root: Path) -> bytes:
    """:func:`source_stamp` of ``root``, once a process."""
    return source_stamp(root)


def root_of(py_file: str) -> Path | None:
    """The watched folder ``py_file`` is in (None: numba's locators as they are)."""
    path = Path(py_file).resolve()
    return next((root for root in _WATCHED if path.is_relative_to(root)), None)


def watch(root: str | os.PathLike[str]) -> None:
    """Key numba's cache of the functions below ``root`` on :func:`source_stamp` of
    ``root`` too (rowbook's own folder is watched from the start)."""
    root = Path(root).resolve()
    if root not in _WATCHED:
        _WATCHED.append(root)


class _PackageStamped:
    """For a file below a watched folder: numba's stamp of the file and the folder's."""

    def get_source_stamp(self):  # numba's interface
        return (super().get_source_stamp(), stamp_of(root_of(self._py_file)))

    @classmethod
    def from_function(cls, py_func, py_file):  # numba's interface
        if root_of(py_file) is None:
            return None  # not ours: the next locator in numba's list
        return super().from_function(py_func, py_file)


def register() -> None:
    """Put the package-stamped versions of numba's :data:`LOCATORS` at the head of numba's
    list of locators, once (call it with numba imported: it imports numba's caching)."""
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # "_" before numba 0.62
    if any(issubclass(cls, _PackageStamped) for cls in impl._locator_classes):
        return
    bases = [getattr(caching, name, None) or getattr(caching, "_" + name) for name in LOCATORS]
    impl._locator_classes[:0] = [
        type("Rowbook" + base.__name__.lstrip("_"), (_PackageStamped, base), {}) for base in bases
    ]


class _AfterNumbaCaching(importlib.abc.MetaPathFinder):
    """Registers the locators once ``numba.core.caching`` has run (before any function is
    decorated: numba's dispatcher imports it), then leaves ``sys.meta_path``."""

    _MODULE = "numba.core.caching"

    def find_spec(self, fullname, path, target=None):  # importlib's interface
        if fullname != self._MODULE:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None:  # pragma: no cover - numba is installed
            return spec
        run = spec.loader.exec_module

        def run_then_register(module):
            run(module)
            register()

        spec.loader.exec_module = run_then_register
        return spec


def keep_fresh() -> None:
    """Have numba locate the watched folders' caches with the widened stamp (see above)."""
    if "numba.core.caching" in sys.modules:
        register()  # numba is loaded: no cost
    elif not any(isinstance(finder, _AfterNumbaCaching) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterNumbaCaching())
