"""Safe files: atomic writes and pickle-free ``.npz`` archives of nested state.

Everything rowbook saves goes through :func:`atomic_write`: the bytes go to a
temporary file in the target's folder, are flushed to disk, and then replace the
target in one ``os.replace``. A crash leaves either the old file or the new one,
never half of either.

:func:`save_state` / :func:`load_state` store a nested structure of dicts, lists,
scalars, strings and NumPy arrays (a model's ``state_dict``, an optimizer's state, a
trainer's progress) as one ``.npz``: arrays as members, the rest as a JSON document
that refers to them. Reading never unpickles and checks every array's header against the
archive before allocating (see :mod:`rowbook._npz` and ``docs/safety.md``).

:func:`read_json` is the one way rowbook reads a JSON file: UTF-8, a depth limit
(:data:`MAX_JSON_DEPTH`), and errors that name the file, line and column.
:func:`check_regular_file` refuses what is not a regular file (a FIFO would block).
"""

from __future__ import annotations

import contextlib
import io
import json
import lzma
import os
import re
import stat
import struct
import tempfile
import time
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

from rowbook._npz import MAX_INFLATED_BYTES, read_members

__all__ = [
    "FORMAT_VERSION",
    "MAX_INFLATED_BYTES",
    "MAX_JSON_DEPTH",
    "STALE_TMP_SECONDS",
    "atomic_write",
    "check_regular_file",
    "fields_of",
    "load_state",
    "parse_json",
    "read_json",
    "save_state",
]

FORMAT_VERSION = 1
#: Deepest JSON nesting rowbook reads; its own files nest a few levels.
MAX_JSON_DEPTH = 100
#: A temporary file of :func:`atomic_write` older than this is left over from a killed save
#: and is removed when the same target is written again.
STALE_TMP_SECONDS = 24 * 3600
_META = "__rowbook_meta__"
_ARRAY_TAG = "__array__"
_NOT_AN_ARCHIVE = (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error, lzma.LZMAError,
                   NotImplementedError, RuntimeError, struct.error, OverflowError)  # fmt: skip


def check_regular_file(path: str | os.PathLike[str], what: str) -> Path:
    """``path`` as a Path if it is a regular file: ``FileNotFoundError`` when it is missing,
    ``ValueError`` when it is a folder, a FIFO or a device (a reader would block or mislead).

    >>> check_regular_file("/dev/null", "vectors")
    Traceback (most recent call last):
    ...
    ValueError: vectors file /dev/null is not a regular file (a folder, FIFO or device)
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise FileNotFoundError(f"{what} file {path} does not exist") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"{what} file {path} is not a regular file (a folder, FIFO or device)")
    return path


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str], mode: str = "wb", **kwargs: Any
) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success it atomically becomes ``path``.

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
    _remove_stale_temporaries(path, folder)
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


def _remove_stale_temporaries(path: Path, folder: Path) -> None:
    """Delete this target's own temporaries (``.NAME.XXXXXXXX.tmp``) older than a day: what a
    killed save leaves behind. Younger ones may belong to a save still running."""
    own = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp")
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            if own.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                if now - entry.stat(follow_symlinks=False).st_mtime > STALE_TMP_SECONDS:
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


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
            raise TypeError(
                f"save_state: keys must be strings, got {bad[0]!r} at {where or 'top level'}"
            )
        return {k: _split(v, arrays, f"{where}/{k}") for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_split(v, arrays, f"{where}/{i}") for i, v in enumerate(obj)]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    raise TypeError(f"save_state: cannot store a {type(obj).__name__} at {where or 'top level'}")


def _join(obj: Any, arrays: dict[str, np.ndarray], file: Path, where: str) -> Any:
    """Put the arrays back where the tree refers to them; a reference to none is an error."""
    if isinstance(obj, dict):
        if set(obj) == {_ARRAY_TAG}:
            key = obj[_ARRAY_TAG]
            if not isinstance(key, str) or key not in arrays:
                raise ValueError(f"{file}: metadata field 'tree' refers at {where or '/'} to "
                                 f"array {key!r}, which the archive does not hold")  # fmt: skip
            return arrays[key]
        return {k: _join(v, arrays, file, f"{where}/{k}") for k, v in obj.items()}
    if isinstance(obj, list):
        return [_join(v, arrays, file, f"{where}/{i}") for i, v in enumerate(obj)]
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


def load_state(
    path: str | os.PathLike[str], *, kind: str, max_inflated_bytes: int | None = MAX_INFLATED_BYTES
) -> Any:
    """Read a file written by :func:`save_state`; errors name the file and the problem.

    Every array's header is checked against the archive before it is allocated; compressed
    members (which rowbook never writes) may expand to ``max_inflated_bytes`` in all
    (``None``: no cap, for a file you trust).
    """
    path = check_regular_file(path, kind)
    try:
        arrays = read_members(path, max_inflated_bytes)
    except _NOT_AN_ARCHIVE as err:
        if isinstance(err, ValueError) and str(err).startswith(str(path)):
            raise
        raise ValueError(
            f"{path} is not a readable .npz archive ({err}); was it truncated?"
        ) from None
    meta = _metadata(path, arrays.pop(_META, None), kind)
    return _join(meta["tree"], arrays, path, "")


def _metadata(path: Path, raw: np.ndarray | None, kind: str) -> dict[str, Any]:
    """The archive's JSON document, each field checked."""
    if raw is None:
        raise ValueError(f"{path} is not a rowbook file: it has no {_META} member")
    if raw.shape != () or raw.dtype.kind != "U":
        raise ValueError(
            f"{path}: member {_META!r} must be one string, got {raw.dtype} {raw.shape}"
        )
    meta = parse_json(str(raw), f"{path}: metadata")
    if not isinstance(meta, dict) or meta.get("format") != "rowbook":
        raise ValueError(f"{path} is not a rowbook file: its metadata is not an object with "
                         "format 'rowbook'")  # fmt: skip
    if meta.get("kind") != kind:
        raise ValueError(f"{path} holds a {meta.get('kind')!r} file, expected {kind!r}")
    if meta.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"{path} has format version {meta.get('version')!r}; this rowbook reads version "
            f"{FORMAT_VERSION}"
        )
    if "tree" not in meta:
        raise ValueError(f"{path}: metadata lacks the field 'tree' (the saved contents)")
    return meta


@contextlib.contextmanager
def fields_of(path: str | os.PathLike[str], what: str) -> Iterator[None]:
    """Around code that takes apart a loaded file's contents: a ``KeyError``, ``TypeError``,
    ``IndexError``, ``AttributeError`` or ``OverflowError`` that a damaged field causes there
    (or a ``ValueError`` not naming the file) becomes one ``ValueError`` naming ``what`` file.

    >>> with fields_of("ck.npz", "checkpoint"):
    ...     {"epoch": 3}["rng"]
    Traceback (most recent call last):
    ...
    ValueError: checkpoint ck.npz is damaged or was not written by this rowbook (KeyError: 'rng')
    """
    try:
        yield
    except (KeyError, TypeError, IndexError, AttributeError, OverflowError, ValueError) as err:
        if isinstance(err, ValueError) and str(path) in str(err):
            raise
        raise ValueError(f"{what} {path} is damaged or was not written by this rowbook "
                         f"({type(err).__name__}: {str(err)[:200]})") from None  # fmt: skip


def read_json(path: str | os.PathLike[str], *, what: str) -> Any:
    """Parse a UTF-8 JSON file; any problem is a ``ValueError`` naming ``what`` file it is.

    Nesting deeper than :data:`MAX_JSON_DEPTH` is refused before parsing.
    """
    path = check_regular_file(path, what)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{what} file {path} is not valid UTF-8 at byte offset {err.start}"
        ) from None
    return parse_json(text, f"{what} file {path}")


# A JSON string, or an unterminated one up to the end: every quote starts a match that
# succeeds, so the scan is linear however the quotes and backslashes are arranged.
_STRING = re.compile(r'(?s)"(?:[^"\\]++|\\.)*+\\?(?:"|\Z)')
_NOT_BRACKET = re.compile(r"[^\[\]{}]++")


def parse_json(text: str, where: str) -> Any:
    """``json.loads(text)``, refusing nesting deeper than :data:`MAX_JSON_DEPTH`.

    >>> parse_json("[[1], {}]", "example")
    [[1], {}]
    >>> parse_json("[" * 200_000, "example")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: example nests arrays/objects ... rowbook reads at most 100
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    steps = np.frombuffer(brackets.encode("ascii"), dtype=np.uint8)
    opens = (steps == ord("[")) | (steps == ord("{"))
    depth = int(np.cumsum(np.where(opens, 1, -1)).max()) if steps.size else 0
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"{where} nests arrays/objects {depth} levels deep; "
                         f"rowbook reads at most {MAX_JSON_DEPTH}")  # fmt: skip
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where} is not valid JSON: {err.msg} at line {err.lineno}, column "
                         f"{err.colno} (character offset {err.pos})") from None  # fmt: skip
    except RecursionError:
        raise ValueError(f"{where} nests arrays/objects too deeply") from None
