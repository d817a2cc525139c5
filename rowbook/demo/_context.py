"""What every demo section gets: the output folder, the seed, where to print, a table printer."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rowbook.io import atomic_write

__all__ = ["Context", "Echo", "matrix"]

Echo = Callable[..., None]


@dataclass
class Context:
    """One demo run: sections write files through :meth:`file` so the run can list them."""

    out: Path
    seed: int = 0
    echo: Echo = print
    progress: bool = False
    written: list[Path] = field(default_factory=list)

    def file(self, name: str) -> Path:
        """The path of output file ``name``, recorded as written."""
        path = self.out / name
        self.written.append(path)
        return path

    def write_json(self, name: str, obj: Any) -> Path:
        """Write ``obj`` as indented JSON to ``name`` (atomically)."""
        path = self.file(name)
        with atomic_write(path, "w", encoding="utf-8") as f:
            json.dump(obj, f, indent=1, ensure_ascii=False)
        return path


def matrix(
    rows: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], fmt: str = "{:6.2f}"
) -> str:
    """A labelled numeric table, every column as wide as its widest cell.

    >>> print(matrix(np.array([[1.0, -0.5], [0.25, 0.0]]), ["a", "b"], ["x", "y"], "{:.2f}"))
         x      y
    a 1.00  -0.50
    b 0.25   0.00
    """
    cells = [[fmt.format(v) for v in row] for row in np.asarray(rows)]
    width = max(len(label) for label in row_labels)
    cell = max(len(c) for c in [*col_labels, *(c for row in cells for c in row)])
    head = " " * width + " " + " ".join(f"{c:>{cell}}" for c in col_labels)
    lines = [head.rstrip()] + [
        f"{label:<{width}} " + " ".join(f"{c:>{cell}}" for c in row)
        for label, row in zip(row_labels, cells, strict=True)
    ]
    return "\n".join(lines)
