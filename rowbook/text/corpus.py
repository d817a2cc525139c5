"""Read a UTF-8 corpus file line by line, without loading it whole.

Invalid UTF-8 is an error by default, naming the byte offset and line, so a corrupt or
mis-encoded corpus is noticed; ``errors="replace"`` substitutes U+FFFD instead.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "corpus.txt")
>>> _ = open(path, "wb").write(b"caf\\xc3\\xa9\\nbad \\xff byte\\r\\n")
>>> list(iter_lines(path, errors="replace"))
['café', 'bad � byte']
>>> list(iter_lines(path))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
rowbook.checks.ParameterHint: ...: invalid UTF-8 at byte offset 10 (line 2)...
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from tqdm.auto import tqdm

from rowbook.checks import ParameterHint

__all__ = ["iter_lines"]


def iter_lines(path: str | os.PathLike, *, errors: Literal["strict", "replace"] = "strict",
               show_progress: bool = False) -> Iterator[str]:  # fmt: skip
    """Yield the lines of a UTF-8 text file without their line terminator (``\\n``/``\\r\\n``).

    Parameters
    ----------
    path : str or os.PathLike
        The corpus file.
    errors : {"strict", "replace"}, default "strict"
        ``"strict"`` raises ``ValueError`` at the first invalid byte, with its offset in
        the file and its line number; ``"replace"`` decodes it as U+FFFD.
    show_progress : bool, default False
        Show a progress bar in bytes read.
    """
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"corpus file {path} does not exist or is not a file")
    offset = 0
    with open(path, "rb") as f, tqdm(total=path.stat().st_size, unit="B", unit_scale=True,
                                     desc=path.name, disable=not show_progress) as bar:  # fmt: skip
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8", errors=errors)
            except UnicodeDecodeError as err:
                where = f"byte offset {offset + err.start} (line {lineno})"
                raise ParameterHint("errors", "replace", f"{path}: invalid UTF-8 at {where}: "
                                    f"{err.reason}", effect="to substitute U+FFFD") from None  # fmt: skip
            offset += len(raw)
            bar.update(len(raw))
            yield line.rstrip("\r\n") if line.endswith("\n") else line
