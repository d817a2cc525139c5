"""Names a package re-exports, imported on first use (PEP 562), so importing it stays cheap.

``import rowbook`` would otherwise load everything the package can do: numba and LLVM,
SciPy's statistics, the autograd and layer stacks. A command or a script pays only for the
modules behind the names it touches; ``tests/test_imports.py`` holds every entry point to
that. A package lists ``{name: module}`` and assigns the two functions this returns to its
``__getattr__`` and ``__dir__``; a static ``if TYPE_CHECKING:`` block beside it keeps the
names visible to type checkers and editors.

Examples
--------
>>> getattr_, dir_ = lazy_exports("rowbook", {"Vocab": "rowbook.text.vocab"}, {})
>>> getattr_("Vocab").__name__
'Vocab'
>>> getattr_("Vocabulary")
Traceback (most recent call last):
...
AttributeError: module 'rowbook' has no attribute 'Vocabulary'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``names[name]`` is the module
    defining ``name`` (or, for a sub-package, the sub-package itself). A name is imported
    the first time it is asked for and then kept in ``namespace`` (the package's
    ``globals()``), so later lookups cost nothing."""

    def __getattr__(name: str) -> Any:
        module_name = names.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(module_name)
        value = module if module_name == f"{package}.{name}" else getattr(module, name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
