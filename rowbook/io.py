"""Safe files: atomic writes and pickle-free ``.npz`` archives of nested state.

Everything rowbook saves goes through :func:`atomic_write`: the bytes go to a
temporary file in the target's folder, are flushed to disk, and then replace the
target in one ``os.replace``. A crash leaves either the old file or the new one,
never half of either.

:func:`save_state` / :func:`load_state` store a nested structure of dicts, lists,
scalars, strings and NumPy arrays (a model's ``state_dict``, an optimizer's state, a
trainer's progress) as one ``.npz``: arrays as members, the rest as a JSON document
that refers to them. It is read with ``allow_pickle=False``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = ["FORMAT_VERSION", "atomic_write", "load_state", "save_state"]

FORMAT_VERSION = 1
_META = "__rowbook_meta__"
_ARRAY_TAG = "__array__"


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], mode: str = "wb", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success it atomically becomes ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "hello.txt"
    >>> with atomic_write(target, "w") as f:
    ...     _ = f.write("hi")
    >>> target.read_text()
    'hi'
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {path}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file the usual mode
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _split(obj: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    """Replace arrays in a nested structure by references; collect them in ``arrays``."""
    if isinstance(obj, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {_ARRAY_TAG: key}
    if isinstance(obj, dict):
        bad = [k for k in obj if not isinstance(k, str)]
        if bad:
            raise TypeError(f"save_state: keys must be strings, got {bad[0]!r} at {where or 'top level'}")
        return {k: _split(v, arrays, f"{where}/{k}") for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_split(v, arrays, f"{where}/{i}") for i, v in enumerate(obj)]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    raise TypeError(f"save_state: cannot store a {type(obj).__name__} at {where or 'top level'}")


def _join(obj: Any, arrays: Any) -> Any:
    if isinstance(obj, dict):
        if set(obj) == {_ARRAY_TAG}:
            return arrays[obj[_ARRAY_TAG]]
        return {k: _join(v, arrays) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_join(v, arrays) for v in obj]
    return obj


def save_state(path: str | os.PathLike[str], state: Any, *, kind: str) -> None:
    """Atomically write ``state`` (nested dicts/lists of arrays and JSON values) to ``path``.

    ``kind`` names what the file holds (``"checkpoint"``, ``"vectors"``, ...); loading
    checks it, so a file of one kind is not mistaken for another.
    """
    arrays: dict[str, np.ndarray] = {}
    tree = _split(state, arrays, "")
    meta = json.dumps({"format": "rowbook", "version": FORMAT_VERSION, "kind": kind, "tree": tree})
    buffer = io.BytesIO()
    np.savez(buffer, **arrays, **{_META: np.array(meta)})
    with atomic_write(path) as f:
        f.write(buffer.getvalue())


def load_state(path: str | os.PathLike[str], *, kind: str) -> Any:
    """Read a file written by :func:`save_state`; errors name the file and the problem."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            names = archive.files
            meta_raw = str(archive[_META]) if _META in names else None
            arrays = {k: archive[k] for k in names if k != _META}
    except FileNotFoundError:
        raise
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as err:
        raise ValueError(f"{path} is not a readable .npz archive ({err}); was it truncated?") from None
    if meta_raw is None:
        raise ValueError(f"{path} is not a rowbook file: it has no {_META} member")
    try:
        meta = json.loads(meta_raw)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: corrupt metadata ({err})") from None
    if meta.get("format") != "rowbook" or meta.get("kind") != kind:
        raise ValueError(f"{path} holds a {meta.get('kind')!r} file, expected {kind!r}")
    if meta.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{path} has format version {meta.get('version')}; this rowbook reads version "
            f"{FORMAT_VERSION}"
        )
    return _join(meta["tree"], arrays)
