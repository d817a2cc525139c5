"""Safe files: atomic writes and pickle-free ``.npz`` archives of nested state.

Everything rowbook saves goes through :func:`atomic_write`: the bytes go to a
temporary file in the target's folder, are flushed to disk, and then replace the
target in one ``os.replace``. A crash leaves either the old file or the new one,
never half of either.

:func:`save_state` / :func:`load_state` store a nested structure of dicts, lists,
scalars, strings and NumPy arrays (a model's ``state_dict``, an optimizer's state, a
trainer's progress) as one ``.npz``: arrays as members, the rest as a JSON document
that refers to them. It is read with ``allow_pickle=False``.

:func:`save_safetensors` / :func:`load_safetensors` read and write flat ``name -> array``
dicts in Hugging Face's safetensors format (no pickle, memory-mappable), the format
``torch``, ``transformers`` and ``safetensors.torch.load_file`` read: a rowbook
``Module.state_dict()`` saved this way loads into the equivalent torch module.

:func:`write_json` / :func:`read_json` are the JSON files (vocabularies, BPE models, text
pipelines): written through :func:`atomic_write`, read with a size cap and a nesting
guard, every failure naming the file. Corpora and other text inputs are read by
:mod:`rowbook.corpus_files` (plain, gzip, bzip2 or xz; files, folders or standard input).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

__all__ = [
    "FORMAT_VERSION",
    "MAX_JSON_BYTES",
    "atomic_write",
    "load_safetensors",
    "load_state",
    "read_json",
    "save_safetensors",
    "save_state",
    "write_json",
]

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
    """Parse a JSON file; every failure is a ``ValueError`` naming the file (``what`` says
    what it should hold), except a missing file (``FileNotFoundError``).

    Files larger than ``max_bytes`` and nesting too deep for the parser are refused
    rather than exhausting memory or the stack. The file may be gzip/bzip2/xz compressed.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "deep.json"
    >>> _ = path.write_text("[" * 200_000 + "]" * 200_000)
    >>> read_json(path, "Vocab")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Vocab file .../deep.json nests arrays or objects too deeply...
    """
    from rowbook.corpus_files import open_binary

    with open_binary(path, f"{what} file") as f:
        raw = f.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise ValueError(f"{what} file {path} is larger than {max_bytes:,} bytes; pass a larger "
                         "max_bytes if you trust it")  # fmt: skip
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(
            f"{what} file {path} is not valid UTF-8 at byte offset {err.start}"
        ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{what} file {path} is not valid JSON: {err.msg} at line {err.lineno}, "
            f"column {err.colno} (character offset {err.pos})"
        ) from None
    except RecursionError:
        raise ValueError(
            f"{what} file {path} nests arrays or objects too deeply to be a {what} file"
        ) from None


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
            raise TypeError(f"save_safetensors: names must be str, got {name!r}")
        arrays[name] = np.ascontiguousarray(getattr(value, "data", value))
        if arrays[name].dtype.kind not in "fiub":
            raise TypeError(
                f"save_safetensors: {name!r} has dtype {arrays[name].dtype}; safetensors "
                "stores numbers and booleans only"
            )
    bad = [
        k for k, v in (metadata or {}).items() if not (isinstance(k, str) and isinstance(v, str))
    ]
    if bad:
        raise TypeError(f"save_safetensors: metadata must map str to str, got {bad[0]!r}")
    data = save(arrays, metadata=dict(metadata) if metadata else None)
    with atomic_write(path) as f:
        f.write(data)


def load_safetensors(path: str | os.PathLike[str]) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Read a safetensors file: ``(name -> array, metadata)``; a bad file raises ``ValueError``."""
    from safetensors import SafetensorError, safe_open

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no safetensors file at {path}")
    try:
        with safe_open(path, framework="np") as f:
            tensors = {name: f.get_tensor(name) for name in f.keys()}
            metadata = dict(f.metadata() or {})
    except (SafetensorError, OSError, ValueError) as err:
        raise ValueError(f"{path} is not a readable safetensors file ({err})") from None
    return tensors, metadata
