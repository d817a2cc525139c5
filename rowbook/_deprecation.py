"""Old names kept for one release: they work, and say once per place what replaced them.

>>> class Model:
...     size_ = 3
...     size = renamed_attribute("size", "size_", since="0.2")
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     Model().size
3
>>> str(caught[0].message)
'Model.size is deprecated since rowbook 0.2 and will be removed in the next release; use Model.size_'
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["renamed_attribute"]


def renamed_attribute(old: str, new: str, *, since: str) -> property:
    """A read-only property ``old`` that warns (``DeprecationWarning``) and returns ``new``."""

    def getter(self: Any) -> Any:
        owner = type(self).__name__
        warnings.warn(
            f"{owner}.{old} is deprecated since rowbook {since} and will be removed in the next "
            f"release; use {owner}.{new}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(self, new)

    return property(getter, doc=f"Deprecated alias of ``{new}`` (since rowbook {since}).")
