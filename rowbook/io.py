"""Safe files: atomic writes and pickle-free ``.npz`` archives of nested state.

One file over 400 lines on purpose: it is the one safe-file layer (atomic writes,
pickle-free archives, JSON, mapped safetensors), kept whole so nothing writes files another
way.

Everything rowbook saves goes through :func:`atomic_write`: the bytes go to a
temporary file in the target's folder, are flushed to disk, and then replace the
target in one ``os.replace``. A crash leaves either the old file or the new one,
never half of either.

:func:`save_state` / :func:`load_state` store a nested structure of dicts, lists,
scalars, strings and NumPy arrays (a model's ``state_dict``, an optimizer's state, a
trainer's progress) as one ``.npz``: arrays as members, the rest as a JSON document
that refers to them. Reading never unpickles and checks every array's header against the
archive before allocating (see :mod:`rowbook._npz` and ``docs/safety.md``).

:func:`write_json` / :func:`read_json` are the one way rowbook writes and reads a JSON file
(vocabularies, BPE models, text pipelines): written through :func:`atomic_write`, read with
a size cap, a depth limit (:data:`MAX_JSON_DEPTH`) and errors that name the file, line and
column; gzip/bzip2/xz files are read too. Corpora and other text inputs are read by
:mod:`rowbook.corpus_files`, whose :func:`~rowbook.corpus_files.check_regular_file` refuses
what is not a regular file (a FIFO would block).

:func:`save_safetensors` / :func:`load_safetensors` read and write flat ``name -> array``
dicts in Hugging Face's safetensors format (no pickle, memory-mappable), the format
``torch``, ``transformers`` and ``safetensors.torch.load_file`` read: a rowbook
``Module.state_dict()`` saved this way loads into the equivalent torch module.
:func:`map_safetensors` memory-maps the tensors of a checkpoint that may be larger than RAM
(or hostile), after checking its header whole (:mod:`rowbook._safetensors`).
"""

from __future__ import annotations

import contextlib
import json
import lzma
import os
import re
import secrets
import struct
import time
import tokenize
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from rowbook._json_limits import MAX_JSON_DEPTH, parse_json
from rowbook._locks import abandoned, lock
from rowbook._npz import MAX_INFLATED_BYTES, MmapMode, peek_text, read_members, write_members
from rowbook._safetensors import map_safetensors
from rowbook.checks import InputTypeError
from rowbook.corpus_files import check_regular_file, open_binary

__all__ = [
    "FORMAT_VERSION",
    "MAX_INFLATED_BYTES",
    "MAX_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "STALE_TMP_SECONDS",
    "atomic_write",
    "fields_of",
    "kind_of",
    "load_safetensors",
    "load_state",
    "map_safetensors",
    "parse_json",
    "read_json",
    "read_text",
    "save_safetensors",
    "save_state",
    "write_json",
]

FORMAT_VERSION = 1
#: Where locks cannot tell whether a temporary file of :func:`atomic_write` is still being
#: written, one older than this is taken as a killed save's and removed when the same target
#: is written again (a locked one never is; an unlocked one always is).
STALE_TMP_SECONDS = 24 * 3600
_META = "__rowbook_meta__"
_KIND = re.compile(r'\{"format": "rowbook", "version": \d+, "kind": "([^"\\]*)"')
_ARRAY_TAG = "__array__"
_NOT_AN_ARCHIVE = (
    OSError,
    EOFError,
    ValueError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    OverflowError,
)


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str], mode: str = "wb", **kwargs: Any
) -> Iterator[IO[Any]]:
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
    _remove_stale_temporaries(path, folder)
    new, fd = _new_temporary(path, folder)
    tmp = new.with_suffix(".tmp")
    held, file = -1, None
    try:
        held = os.dup(fd)  # the lock lives until this closes, after the rename
        lock(held)  # held while the file is written: a later save's sweep never takes it
        os.rename(new, tmp)  # named .tmp only once locked (a .new is swept only when old)
        with os.fdopen(fd, mode, **kwargs) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        if file is None:
            with contextlib.suppress(OSError):
                os.close(fd)
        for name in (new, tmp):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name)
        raise
    finally:
        if held >= 0:
            os.close(held)


def _new_temporary(path: Path, folder: Path) -> tuple[Path, int]:
    """A new file ``.NAME.XXXXXXXX.new`` beside ``path`` (mode 0666 less the umask) and its
    descriptor. The name is chosen before the file is made, so a Ctrl-C that lands while it
    is made (even between ``os.open`` returning and its result being kept) removes it; it
    becomes ``.tmp`` once :func:`atomic_write` holds its lock."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        tmp = folder / f".{path.name}.{secrets.token_hex(4)}.new"
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


def _remove_stale_temporaries(path: Path, folder: Path) -> None:
    """Delete this target's own temporaries (``.NAME.XXXXXXXX.tmp``) that no save holds: what
    a killed save leaves behind (a live save keeps its file locked, :mod:`rowbook._locks`).
    Where locks cannot tell, and for a ``.new`` file (a save killed before it named its
    file), only those older than :data:`STALE_TMP_SECONDS`."""
    own = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.(tmp|new)")
    now = time.time()
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            found = own.fullmatch(entry.name)
            if found and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    _remove_if_stale(entry.path, found[1] == "tmp", now)


def _remove_if_stale(name: str, named: bool, now: float) -> None:
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    try:
        dead = abandoned(fd) if named else None
        old = now - os.fstat(fd).st_mtime > STALE_TMP_SECONDS
        if dead or (dead is None and old):
            os.unlink(name)
    finally:
        os.close(fd)


def _split(obj: Any, arrays: dict[str, np.ndarray], where: str) -> Any:
    """Replace arrays in a nested structure by references; collect them in ``arrays``."""
    if isinstance(obj, np.ndarray):
        key = f"a{len(arrays)}"
        arrays[key] = obj
        return {_ARRAY_TAG: key}
    if isinstance(obj, dict):
        bad = [k for k in obj if not isinstance(k, str)]
        if bad:
            raise InputTypeError(
                f"save_state: keys must be strings, got {bad[0]!r} at {where or 'top level'}"
            )
        return {k: _split(v, arrays, f"{where}/{k}") for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_split(v, arrays, f"{where}/{i}") for i, v in enumerate(obj)]
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    raise InputTypeError(
        f"save_state: cannot store a {type(obj).__name__} at {where or 'top level'}"
    )


def _join(obj: Any, arrays: dict[str, np.ndarray], file: Path, where: str) -> Any:
    """Put the arrays back where the tree refers to them; a reference to none is an error."""
    if isinstance(obj, dict):
        if set(obj) == {_ARRAY_TAG}:
            key = obj[_ARRAY_TAG]
            if not isinstance(key, str) or key not in arrays:
                raise ValueError(
                    f"{file}: metadata field 'tree' refers at {where or '/'} to "
                    f"array {key!r}, which the archive does not hold"
                )
            return arrays[key]
        return {k: _join(v, arrays, file, f"{where}/{k}") for k, v in obj.items()}
    if isinstance(obj, list):
        if all(type(v) is str for v in obj):  # a list of keys, say: nothing to put back
            return obj
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
    with atomic_write(path) as f:  # straight into the file: no second copy of the arrays in RAM
        write_members(f, {**arrays, _META: np.array(meta)})  # stored, aligned: mappable


def load_state(
    path: str | os.PathLike[str],
    *,
    kind: str,
    max_inflated_bytes: int | None = MAX_INFLATED_BYTES,
    mmap_mode: MmapMode = None,
) -> Any:
    """Read a file written by :func:`save_state`; errors name the file and the problem.

    Every array's header is checked against the archive before it is allocated; compressed
    members (which rowbook never writes) may expand to ``max_inflated_bytes`` in all
    (``None``: no cap, for a file you trust). ``mmap_mode`` (``"r"`` read-only, ``"c"``
    copy-on-write) maps large arrays from the file instead of reading them
    (see :mod:`rowbook._npz`).
    """
    path = check_regular_file(path, f"{kind} file")
    try:
        arrays = read_members(path, max_inflated_bytes, mmap_mode)
    except _NOT_AN_ARCHIVE as err:
        if isinstance(err, ValueError) and str(err).startswith(str(path)):
            raise
        raise ValueError(_unreadable_archive(path, err)) from None
    meta = _metadata(path, arrays.pop(_META, None), kind)
    return _join(meta["tree"], arrays, path, "")


def _unreadable_archive(path: Path, err: BaseException) -> str:
    """What is wrong with a file the zip reader refused, saying only what was checked: not a
    zip at all (its first bytes), a zip cut short (no directory at its end), or damaged.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "model.npz"
    >>> _ = path.write_bytes(b"word2vec? 3 5")
    >>> _unreadable_archive(path, ValueError())  # doctest: +ELLIPSIS
    "...model.npz is not an .npz archive: it starts with b'word', not a zip file's 'PK'; ..."
    """
    with open(path, "rb") as f:
        start = f.read(4)
    if not start.startswith(b"PK"):
        return (
            f"{path} is not an .npz archive: it starts with {start!r}, not a zip file's "
            "'PK'; rowbook.load(path) recognises every file rowbook reads"
        )
    size = path.stat().st_size
    if isinstance(err, zipfile.BadZipFile) and "not a zip file" in str(err):
        return (
            f"{path} starts as a zip archive but has no zip directory at its end ({size} "
            "bytes): it was cut short, or is damaged"
        )
    return f"{path} is a damaged .npz archive ({type(err).__name__}: {err})"


def kind_of(path: str | os.PathLike[str]) -> str | None:
    """The ``kind`` a file written by :func:`save_state` declares, read from the start of its
    metadata (which :func:`save_state` writes before the contents); None when it is not such
    a file. A hint for choosing a reader: :func:`load_state` checks the whole file."""
    path = check_regular_file(path, "rowbook file")
    try:
        head = peek_text(path, _META, 4096)
    except (*_NOT_AN_ARCHIVE, SyntaxError, tokenize.TokenError):
        return None
    found = _KIND.match(head or "")
    return found.group(1) if found else None


def _metadata(path: Path, raw: np.ndarray | None, kind: str | None) -> dict[str, Any]:
    """The archive's JSON document, each field checked (``kind`` None: any kind)."""
    if raw is None:
        raise ValueError(f"{path} is not a rowbook file: it has no {_META} member")
    if raw.shape != () or raw.dtype.kind != "U":
        raise ValueError(
            f"{path}: member {_META!r} must be one string, got {raw.dtype} {raw.shape}"
        )
    meta = parse_json(str(raw), f"{path}: metadata")
    if not isinstance(meta, dict) or meta.get("format") != "rowbook":
        raise ValueError(
            f"{path} is not a rowbook file: its metadata is not an object with format 'rowbook'"
        )
    if kind is not None and meta.get("kind") != kind:
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

    Examples
    --------
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
        raise ValueError(
            f"{what} {path} is damaged or was not written by this rowbook "
            f"({type(err).__name__}: {str(err)[:200]})"
        ) from None


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Atomically write ``obj`` as UTF-8 JSON (non-ASCII kept as is, one space indent)."""
    with atomic_write(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False, indent=1)
        f.write("\n")


#: Largest JSON file :func:`read_json` reads by default (decompressed), in bytes.
MAX_JSON_BYTES = 1 << 30


def read_json(
    path: str | os.PathLike[str], what: str = "JSON", *, max_bytes: int = MAX_JSON_BYTES
) -> Any:
    """Parse a JSON file; every failure is a ``ValueError`` naming ``what`` file it is, except a
    missing file (``FileNotFoundError``).

    A FIFO or device is refused, the file may be gzip/bzip2/xz compressed, files larger than
    ``max_bytes`` and nesting deeper than :data:`MAX_JSON_DEPTH` are refused before parsing.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "deep.json"
    >>> _ = path.write_text("[" * 200_000 + "]" * 200_000)
    >>> read_json(path, "Vocab")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Vocab file .../deep.json nests arrays/objects 200000 levels deep; rowbook reads at most 100
    """
    return parse_json(read_text(path, what, max_bytes=max_bytes), f"{what} file {path}")


def read_text(
    path: str | os.PathLike[str],
    what: str,
    *,
    max_bytes: int,
    too_large: str = "pass a larger max_bytes if you trust it",
) -> str:
    """A UTF-8 text file (gzip/bzip2/xz too; no FIFO or device) of at most ``max_bytes``
    bytes as a ``str``; a larger file or bad UTF-8 is a ``ValueError`` naming ``what`` file
    it is (``too_large``: what to do about the size), read no further than the limit."""
    with open_binary(path, f"{what} file") as f:
        raw = _read_at_most(f, max_bytes + 1)
    if len(raw) > max_bytes:
        raise ValueError(f"{what} file {path} is larger than {max_bytes:,} bytes; {too_large}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{what} file {path} is not valid UTF-8 at byte offset {err.start}"
        ) from None


def _read_at_most(f: IO[bytes], limit: int, block: int = 1 << 24) -> bytes:
    """Up to ``limit`` bytes of ``f``, read a block at a time: ``f.read(limit)`` sets aside
    ``limit`` bytes before reading one, a gigabyte for a file of a hundred bytes."""
    blocks, size = [], 0
    while size < limit and (data := f.read(min(block, limit - size))):
        blocks.append(data)
        size += len(data)
    return b"".join(blocks)


def save_safetensors(
    path: str | os.PathLike[str],
    tensors: Mapping[str, Any],
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Atomically write ``name -> array`` as a safetensors file (string ``metadata`` in its header).

    Arrays are stored C-contiguous with their dtype; torch tensors are not needed (a
    ``Tensor`` or ``Parameter`` is stored as its array).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "state.safetensors"
    >>> save_safetensors(target, {"weight": np.eye(2, dtype=np.float32)}, {"kind": "demo"})
    >>> tensors, meta = load_safetensors(target)
    >>> tensors["weight"], meta["kind"]
    (array([[1., 0.],
           [0., 1.]], dtype=float32), 'demo')
    """
    from safetensors.numpy import save

    arrays = {}
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise InputTypeError(f"save_safetensors: names must be str, got {name!r}")
        arrays[name] = np.ascontiguousarray(getattr(value, "data", value))
        if arrays[name].dtype.kind not in "fiub":
            raise InputTypeError(
                f"save_safetensors: {name!r} has dtype {arrays[name].dtype}; safetensors "
                "stores numbers and booleans only"
            )
    bad = [
        k for k, v in (metadata or {}).items() if not (isinstance(k, str) and isinstance(v, str))
    ]
    if bad:
        raise InputTypeError(f"save_safetensors: metadata must map str to str, got {bad[0]!r}")
    data = save(arrays, metadata=dict(metadata) if metadata else None)
    with atomic_write(path) as f:
        f.write(data)


_MAP_AT_LEAST = 1 << 16  # smaller tensors are read (a mapping costs a file descriptor)


def load_safetensors(
    path: str | os.PathLike[str], *, mmap_mode: MmapMode = None
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Read a safetensors file: ``(name -> array, metadata)``; a bad file raises ``ValueError``.

    With ``mmap_mode`` (``"r"`` or ``"c"``) tensors of 64 KiB or more are mapped from the file
    (after ``safetensors`` has checked the header and the offsets) instead of read.
    """
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no safetensors file at {path}")
    try:
        with safe_open(path, framework="np") as f:
            names, metadata = list(f.keys()), dict(f.metadata() or {})
            mapped = _mapped_safetensors(path, mmap_mode) if mmap_mode else {}
            tensors = {
                name: mapped[name] if name in mapped else f.get_tensor(name) for name in names
            }
    except (SafetensorError, OSError, ValueError) as err:
        raise ValueError(f"{path} is not a readable safetensors file ({err})") from None
    return tensors, metadata


def _mapped_safetensors(path: Path, mmap_mode: str) -> dict[str, np.ndarray]:
    """The large, aligned tensors of a safetensors file (already checked by ``safe_open``)
    mapped by :func:`map_safetensors`; ``BF16`` ones are read (they need widening)."""
    arrays, dtypes, _ = map_safetensors(path, mode=mmap_mode)
    return {
        name: array
        for name, array in arrays.items()
        if dtypes[name] != "BF16"
        and array.nbytes >= _MAP_AT_LEAST
        and array.ctypes.data % array.dtype.alignment == 0
    }
