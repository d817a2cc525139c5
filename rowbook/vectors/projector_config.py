"""The ``ProjectorConfig`` of TensorBoard's projector, in protobuf text format (``.pbtxt``).

The message is defined in ``tensorboard/plugins/projector/projector_config.proto``::

    message ProjectorConfig { string model_checkpoint_path = 1; repeated EmbeddingInfo embeddings = 2;
                              string model_checkpoint_dir = 3; }
    message EmbeddingInfo   { string tensor_name = 1; string metadata_path = 2; string bookmarks_path = 3;
                              repeated uint32 tensor_shape = 4; SpriteMetadata sprite = 5;
                              string tensor_path = 6; }
    message SpriteMetadata  { string image_path = 1; repeated uint32 single_image_dim = 2; }

:func:`read_config` parses the text format as protobuf's ``text_format.Parse`` does for
these fields (``#`` comments, ``:`` optional before a message, ``{}`` or ``<>``, single or
double quotes with C escapes, adjacent strings joined, repeated fields one by one or as
``[a, b]``), without depending on protobuf; an unknown field is an error, as in protobuf.
:func:`config_text` writes one table the way ``text_format.MessageToString`` does (non-ASCII
bytes as octal escapes). The tests hold both to protobuf with TensorBoard's own message.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from rowbook.io import read_text

__all__ = ["MAX_CONFIG_BYTES", "config_text", "read_config"]

MAX_CONFIG_BYTES = 1 << 20

PathLike = str | os.PathLike[str]


def _quote(text: str) -> str:
    """A protobuf text-format string literal, as ``text_format.MessageToString`` writes it."""
    out = []
    for byte in text.encode("utf-8"):
        c = chr(byte)
        if c in "\"'\\":
            out.append("\\" + c)
        elif c in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[c])
        elif 32 <= byte < 127:
            out.append(c)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


_TOKEN = re.compile(
    r"""\s+|\#[^\n]*|(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"|(?P<word>[A-Za-z_][A-Za-z0-9_]*|-?[0-9][0-9A-Za-z_.+-]*)|(?P<punct>[{}:\[\],;<>])"
)
_STRING_ESCAPE = re.compile(r"\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))", re.S)
_SIMPLE = {
    "n": 10,
    "r": 13,
    "t": 9,
    "a": 7,
    "b": 8,
    "f": 12,
    "v": 11,
    "\\": 92,
    "'": 39,
    '"': 34,
    "?": 63,
}
# ProjectorConfig and its messages (projector_config.proto): field -> "str", "int" or a message
_MESSAGES: dict[str, dict[str, Any]] = {
    "ProjectorConfig": {
        "model_checkpoint_path": "str",
        "model_checkpoint_dir": "str",
        "embeddings": "EmbeddingInfo",
    },
    "EmbeddingInfo": {
        "tensor_name": "str",
        "metadata_path": "str",
        "bookmarks_path": "str",
        "tensor_shape": "int",
        "sprite": "SpriteMetadata",
        "tensor_path": "str",
    },
    "SpriteMetadata": {"image_path": "str", "single_image_dim": "int"},
}
_REPEATED = {"embeddings", "tensor_shape", "single_image_dim"}


def _unquote(literal: str, where: str) -> str:
    body = literal[1:-1]

    def one(match: re.Match[str]) -> str:
        octal, hexa, simple = match.groups()
        if octal is not None:
            return chr(int(octal, 8))
        if hexa is not None:
            return chr(int(hexa, 16))
        if simple in _SIMPLE:
            return chr(_SIMPLE[simple])
        raise ValueError(f"{where}: unknown escape \\{simple} in the string {literal[:60]}")

    latin = _STRING_ESCAPE.sub(one, body.encode("utf-8").decode("latin-1"))  # bytes as chars
    return latin.encode("latin-1").decode("utf-8")


def _tokens(text: str, path: Path) -> list[tuple[str, str, int]]:
    tokens, pos = [], 0
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            line = text.count("\n", 0, pos) + 1
            raise ValueError(
                f"{path}, line {line}: cannot read {text[pos : pos + 20]!r} "
                "(not protobuf text format)"
            )
        kind = match.lastgroup
        if kind is not None:
            tokens.append((kind, match.group(kind), text.count("\n", 0, pos) + 1))
        pos = match.end()
    return tokens


def _parse_message(
    tokens: list, i: int, kind: str, path: Path, closing: str | None
) -> tuple[dict, int]:
    fields = _MESSAGES[kind]
    out: dict[str, Any] = {name: [] for name in fields if name in _REPEATED}
    while i < len(tokens):
        tok_kind, value, line = tokens[i]
        where = f"{path}, line {line}"
        if closing is not None and value == closing and tok_kind == "punct":
            return out, i + 1
        if tok_kind != "word" or value not in fields:
            raise ValueError(
                f"{where}: unexpected {value!r} in a {kind} (it has the fields {', '.join(fields)})"
            )
        ftype, i = fields[value], i + 1
        if i < len(tokens) and tokens[i][1] == ":":
            i += 1
        if ftype in _MESSAGES:
            if i >= len(tokens) or tokens[i][1] not in ("{", "<"):
                raise ValueError(f"{where}: {value} must be followed by {{ ... }}")
            item, i = _parse_message(
                tokens, i + 1, ftype, path, "}" if tokens[i][1] == "{" else ">"
            )
            values = [item]
        else:
            values, i = _parse_values(tokens, i, ftype, value, where)
        if value in _REPEATED:
            out[value].extend(values)
        elif len(values) == 1:
            out[value] = values[0]
        else:
            raise ValueError(f"{where}: {value} is not a repeated field")
        if i < len(tokens) and tokens[i][1] in (",", ";"):
            i += 1
    if closing is not None:
        raise ValueError(f"{path}: the file ends inside a {kind} (a {closing!r} is missing)")
    return out, i


def _parse_values(tokens: list, i: int, ftype: str, name: str, where: str) -> tuple[list, int]:
    if i < len(tokens) and tokens[i][1] == "[":  # list syntax: tensor_shape: [3, 4]
        values, i = [], i + 1
        while i < len(tokens) and tokens[i][1] != "]":
            if tokens[i][1] != ",":
                values.append(_scalar(tokens[i], ftype, name, where))
            i += 1
        return values, i + 1
    if i >= len(tokens):
        raise ValueError(f"{where}: {name} has no value")
    if ftype == "str":  # adjacent string literals are concatenated, as in protobuf
        parts = []
        while i < len(tokens) and tokens[i][0] == "string":
            parts.append(_scalar(tokens[i], ftype, name, where))
            i += 1
        if not parts:
            raise ValueError(f"{where}: {name} must be a quoted string, got {tokens[i][1]!r}")
        return ["".join(parts)], i
    return [_scalar(tokens[i], ftype, name, where)], i + 1


def _scalar(token: tuple[str, str, int], ftype: str, name: str, where: str) -> Any:
    kind, value, _ = token
    if ftype == "str":
        if kind != "string":
            raise ValueError(f"{where}: {name} must be a quoted string, got {value!r}")
        return _unquote(value, where)
    try:
        number = int(value, 0)
    except ValueError:
        raise ValueError(f"{where}: {name} must be an integer, got {value!r}") from None
    if not 0 <= number < 2**32:
        raise ValueError(f"{where}: {name} must be a uint32, got {number}")
    return number


def read_config(path: PathLike) -> dict[str, Any]:
    """The ``ProjectorConfig`` in a ``projector_config.pbtxt`` as nested dicts (fields named as
    in ``projector_config.proto``; repeated fields as lists)."""
    path = Path(path)
    text = read_text(
        path,
        "projector configuration",
        max_bytes=MAX_CONFIG_BYTES,
        too_large="a projector configuration is at most that (it lists a few file names)",
    )
    config, _ = _parse_message(_tokens(text, path), 0, "ProjectorConfig", path, None)
    return config


def config_text(
    name: str, shape: tuple[int, int], *, tensor_path: str, metadata_path: str | None
) -> str:
    """A ``ProjectorConfig`` of one table, in the order ``text_format.MessageToString`` writes.

    >>> print(config_text("words", (3, 2), tensor_path="tensors.tsv", metadata_path=None), end="")
    embeddings {
      tensor_name: "words"
      tensor_shape: 3
      tensor_shape: 2
      tensor_path: "tensors.tsv"
    }
    """
    lines = ["embeddings {", f"  tensor_name: {_quote(name)}"]
    if metadata_path is not None:
        lines.append(f"  metadata_path: {_quote(metadata_path)}")
    lines += [
        f"  tensor_shape: {shape[0]}",
        f"  tensor_shape: {shape[1]}",
        f"  tensor_path: {_quote(tensor_path)}",
        "}",
        "",
    ]
    return "\n".join(lines)
