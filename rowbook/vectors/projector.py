r"""TensorBoard's Embedding Projector files: a table written for it, and its folders read back.

A projector folder is what TensorBoard's projector plugin
(``tensorboard/plugins/projector``) reads from a log folder, or from any of its sub-folders,
each shown as a run:

* ``projector_config.pbtxt``: a ``ProjectorConfig`` message in protobuf text format, one
  ``embeddings { ... }`` block per table with its ``tensor_name``, ``tensor_path``,
  ``metadata_path`` and ``tensor_shape`` (paths relative to the folder, and inside it);
* ``tensors.tsv``: one row per line, the values separated by tabs; the plugin reads each
  field with ``float()`` (a file that is not UTF-8 text is read as raw float32 of
  ``tensor_shape`` instead, and so is it here);
* ``metadata.tsv``: one label per line, in row order; with more than one column, the first
  line holds the column names. The projector takes a first line holding a tab for that
  header, skips blank lines, and reads an empty field as a missing value.

So a key holding a tab or a newline would shift every row after it. :func:`escape` writes
keys and values with backslash escapes, ``\\`` ``\t`` ``\n`` ``\r``, and a value made only
of white space (a line the projector would skip, such as the key ``" "`` of a character
vocabulary) as ``\uXXXX`` codes; :func:`unescape` reads them back. An empty key cannot be
written at all (its line would be blank), and is refused.

:func:`write_projector` writes one table per folder (save several tables to sibling folders
of one log folder: TensorBoard offers each as a run); :func:`read_projector` reads a folder
written by it or by TensorBoard's own ``projector.visualize_embeddings``.
:meth:`Vectors.save_projector <rowbook.vectors.table.KeyedTable.save_projector>` and
:meth:`Vectors.load_projector <rowbook.vectors.table.KeyedTable.load_projector>` call these.

Reading is bounded: the configuration may be at most 1 MB, a text tensor file yields at most
one float32 per two bytes, and a binary one must hold exactly ``tensor_shape`` floats.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from rowbook.checks import UnknownKeyError
from rowbook.io import atomic_write
from rowbook.vectors.projector_config import config_text, read_config

__all__ = [
    "CONFIG_NAME",
    "METADATA_NAME",
    "TENSORS_NAME",
    "ProjectorTable",
    "escape",
    "read_config",
    "read_projector",
    "unescape",
    "write_projector",
]

CONFIG_NAME = "projector_config.pbtxt"  # tensorboard.plugins.projector.metadata.PROJECTOR_FILENAME
TENSORS_NAME = "tensors.tsv"
METADATA_NAME = "metadata.tsv"

PathLike = str | os.PathLike[str]
# What JavaScript's String.prototype.trim() removes (the projector's test for a blank line)
# and Python's str.isspace() adds (\x1c-\x1f, \x85): a value of these alone is written as codes.
_BLANK = re.compile(r"[\s\ufeff\u180e]*")
_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {"\\": "\\", "t": "\t", "n": "\n", "r": "\r"}


@dataclass(frozen=True, eq=False)
class ProjectorTable:
    """One table of a projector folder: its name, rows and metadata columns.

    Attributes
    ----------
    name : str
        The ``tensor_name`` (TensorBoard's menu entry).
    vectors : (n, d) float32
    metadata : dict of str to list
        Column name to its ``n`` values (strings, or None where a value is missing); a file
        of one column has the single column ``"label"``; empty without a metadata file.
    """

    name: str
    vectors: np.ndarray
    metadata: dict[str, list[str | None]] = field(default_factory=dict)


# -- escaping ----------------------------------------------------------------------------


def escape(value: str) -> str:
    r"""``value`` as one TSV field the projector reads back as one field of the same row.

    >>> escape("new\tyork"), escape("a\\b"), escape(" "), escape("two words")
    ('new\\tyork', 'a\\\\b', '\\u0020', 'two words')
    """
    if _BLANK.fullmatch(value):
        if not value:
            raise ValueError(
                "an empty value cannot be written to a projector file: the "
                "projector skips blank lines, which would shift every row after it"
            )
        return "".join(f"\\u{ord(c):04x}" for c in value)
    return "".join(_ESCAPES.get(c, c) for c in value)


def unescape(field: str) -> str:
    r"""The value :func:`escape` wrote as ``field``; text without escapes is returned as is.

    >>> unescape("new\\tyork"), unescape("\\u0020"), unescape("C:\\\\x")
    ('new\tyork', ' ', 'C:\\x')
    """
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        c = field[i]
        if c != "\\" or i + 1 == len(field):
            out.append(c)
            i += 1
        elif field[i + 1] == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", field[i + 2 : i + 6]):
            out.append(chr(int(field[i + 2 : i + 6], 16)))
            i += 6
        else:
            out.append(_UNESCAPES.get(field[i + 1], "\\" + field[i + 1]))
            i += 2
    return "".join(out)


# -- writing -----------------------------------------------------------------------------


def _columns(
    keys: Sequence[str], metadata: Mapping[str, Sequence[Any]] | None, key_column: str
) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {key_column: list(keys)}
    for name, values in (metadata or {}).items():
        if not isinstance(name, str) or name in columns:
            raise ValueError(f"metadata column {name!r} must be a str other than {list(columns)}")
        if isinstance(values, str) or len(values) != len(keys):
            got = "a str" if isinstance(values, str) else f"{len(values)} values"
            raise ValueError(
                f"metadata column {name!r} must hold one value per row ({len(keys)}), got {got}"
            )
        columns[name] = list(values)
    return columns


def _field(value: Any) -> str:
    """A metadata value as a field: None (missing) as an empty field, anything else escaped."""
    if value is None:
        return ""
    return escape(value if isinstance(value, str) else str(value))


def write_projector(
    folder: PathLike,
    keys: Sequence[str],
    vectors: np.ndarray,
    metadata: Mapping[str, Sequence[Any]] | None = None,
    *,
    name: str = "embedding",
    key_column: str = "label",
) -> Path:
    """Write ``tensors.tsv``, ``metadata.tsv`` and ``projector_config.pbtxt`` into ``folder``.

    Parameters
    ----------
    folder
        Created if missing (its parent must exist). Files of an earlier table there are
        replaced, each atomically.
    keys, vectors
        The ``n`` labels and the (n, d) rows (written as float32, shortest decimals).
    metadata
        More columns for the projector's "Label by" and "Color by" menus: column name to
        ``n`` values (None for a missing one). With metadata the file gets a header line.
    name
        The ``tensor_name`` TensorBoard shows.
    key_column
        The header of the keys' column when there is metadata.

    Returns
    -------
    Path
        The ``projector_config.pbtxt`` written.
    """
    folder = Path(folder)
    rows = np.asarray(vectors, dtype=np.float32)  # (n, d)
    if rows.ndim != 2 or rows.shape[0] != len(keys) or rows.shape[1] < 1:
        raise ValueError(
            f"vectors must be (n, d) with n = {len(keys)} keys and d >= 1, got shape {rows.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(rows).all(axis=1))
    if bad.size:
        raise ValueError(
            f"row {bad[0]} ({keys[bad[0]]!r}) has a NaN or infinite value: the "
            "projector would read it as a label, not a number"
        )
    for i, key in enumerate(keys):
        if not isinstance(key, str) or not key:
            raise ValueError(
                f"key {i} is {key!r}; the projector's metadata needs a non-empty str "
                "per row (it skips blank lines)"
            )
    columns = _columns(keys, metadata, key_column)
    folder.mkdir(exist_ok=True)
    with atomic_write(folder / TENSORS_NAME, "w", encoding="utf-8", newline="\n") as f:
        for start in range(0, len(rows), 4096):  # str(np.float32): the shortest exact decimal
            f.write("".join("\t".join(map(str, row)) + "\n" for row in rows[start : start + 4096]))
    with atomic_write(folder / METADATA_NAME, "w", encoding="utf-8", newline="\n") as f:
        if len(columns) > 1:
            f.write("\t".join(escape(c) for c in columns) + "\n")
        lines = (
            "\t".join(_field(v) for v in row) + "\n" for row in zip(*columns.values(), strict=True)
        )
        f.writelines(lines)
    config = folder / CONFIG_NAME
    with atomic_write(config, "w", encoding="utf-8", newline="\n") as f:
        f.write(
            config_text(name, rows.shape, tensor_path=TENSORS_NAME, metadata_path=METADATA_NAME)
        )
    return config


# -- reading -----------------------------------------------------------------------------


def _inside(folder: Path, relative: str, what: str) -> Path:
    """``relative`` resolved against ``folder``; refused if it leads outside (as TensorBoard)."""
    base = folder.resolve()
    target = (base / Path(relative).expanduser()).resolve()
    if os.path.commonpath([base, target]) != str(base):
        raise ValueError(
            f"{what} {relative!r} in {folder / CONFIG_NAME} leads outside {folder}; "
            "a projector folder must hold its own files"
        )
    return target


def _read_tensors(path: Path, shape: Sequence[int]) -> np.ndarray:
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # TensorBoard's fallback: raw float32 of tensor_shape
        if len(shape) != 2 or shape[0] * shape[1] * 4 != len(raw):
            raise ValueError(
                f"{path} is not text, so it must be raw float32 of tensor_shape; "
                f"tensor_shape is {list(shape)} and the file has {len(raw):,} bytes"
            ) from None
        return np.frombuffer(raw, dtype="<f4").reshape(shape).astype(np.float32)
    lines = [line for line in text.split("\n") if line]
    if not lines:
        raise ValueError(f"{path} holds no rows")
    width = lines[0].count("\t") + 1
    for number, line in enumerate(lines, start=1):
        if line.count("\t") + 1 != width:
            raise ValueError(
                f"{path}, row {number}: {line.count(chr(9)) + 1} values, the first row has {width}"
            )
    fields = "\t".join(lines).split("\t")
    try:
        values = np.array(fields, dtype=np.float64)  # float() of each field, as TensorBoard
    except ValueError:
        bad = next(i for i, f in enumerate(fields) if not _is_float(f))
        raise ValueError(
            f"{path}, row {bad // width + 1}: value {bad % width + 1} is "
            f"{fields[bad][:40]!r}, not a number"
        ) from None
    with np.errstate(over="ignore"):
        table = values.reshape(len(lines), width).astype(np.float32)  # (n, d)
    if not np.isfinite(table).all():
        row = int(np.flatnonzero(~np.isfinite(table).all(axis=1))[0])
        raise ValueError(
            f"{path}, row {row + 1}: a NaN or infinite value (or one too large for float32)"
        )
    if len(shape) == 2 and tuple(shape) != table.shape:
        raise ValueError(
            f"{path} holds {table.shape[0]} x {table.shape[1]} values, but "
            f"tensor_shape says {list(shape)}"
        )
    return table


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_metadata(path: Path, rows: int) -> dict[str, list[str | None]]:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not UTF-8 text: {err}") from None
    lines = [line for line in text.split("\n") if line.strip()]  # the projector skips blank lines
    names = ["label"]
    if lines and "\t" in lines[0]:
        names, lines = [unescape(n) for n in lines[0].split("\t")], lines[1:]
    if len(lines) != rows:
        raise ValueError(f"{path} has {len(lines)} rows of metadata for {rows} rows of vectors")
    columns: dict[str, list[str | None]] = {name: [] for name in names}
    if len(columns) != len(names):
        raise ValueError(f"{path}: the header names a column twice: {names}")
    for line in lines:
        values = line.split("\t")
        for j, name in enumerate(names):
            value = values[j] if j < len(values) else ""
            columns[name].append(unescape(value) if value else None)
    return columns


def read_projector(folder: PathLike, *, tensor: str | None = None) -> ProjectorTable:
    """Read one table of a projector folder (``projector_config.pbtxt`` and its files).

    ``tensor`` names the table when the configuration lists several; tables kept in a
    TensorFlow checkpoint rather than a TSV file are not read (rowbook does not read
    checkpoints).
    """
    folder = Path(folder)
    config_path = folder / CONFIG_NAME
    if not config_path.is_file():
        raise FileNotFoundError(f"{folder} has no {CONFIG_NAME}; it is not a projector folder")
    embeddings = read_config(config_path)["embeddings"]
    for item in embeddings:  # TensorBoard names an unnamed tensor file after the file
        if item.get("tensor_path") and not item.get("tensor_name"):
            item["tensor_name"] = os.path.basename(item["tensor_path"])
    names = [e.get("tensor_name", "") for e in embeddings]
    if tensor is None and len(embeddings) != 1:
        raise ValueError(
            f"{config_path} lists {len(embeddings)} tables {names}; choose one with tensor=NAME"
        )
    chosen = (
        embeddings[0]
        if tensor is None
        else next((e for e in embeddings if e.get("tensor_name") == tensor), None)
    )
    if chosen is None:
        raise UnknownKeyError(f"{config_path} has no table {tensor!r}; it lists {names}")
    if not chosen.get("tensor_path"):
        raise ValueError(
            f"table {chosen.get('tensor_name')!r} of {config_path} has no tensor_path: "
            "it lives in a TensorFlow checkpoint, which rowbook does not read"
        )
    table = _read_tensors(
        _inside(folder, chosen["tensor_path"], "tensor_path"), chosen.get("tensor_shape", [])
    )
    metadata = {}
    if chosen.get("metadata_path"):
        metadata = _read_metadata(
            _inside(folder, chosen["metadata_path"], "metadata_path"), len(table)
        )
    return ProjectorTable(chosen.get("tensor_name", ""), table, metadata)
