"""SentencePiece's ``.model`` file: a ``ModelProto`` protobuf, read and written by a small checked codec.

The file is one protobuf message (``src/sentencepiece_model.proto``); rowbook reads the
fields it needs and keeps the others as their bytes, so a model read and written back is
the same file. A hand-written reader of the wire format (varints, 32/64-bit fixed values,
length-delimited fields: all that proto2 writes) avoids a dependency on the ``protobuf``
runtime and its version pins, and lets every field be checked as it is read:

* a varint longer than 10 bytes, a length past the end of its message, a wire type proto2
  does not write (groups), nesting deeper than the schema or a field of the wrong wire type
  is a ``ValueError`` naming the file, the byte offset and the field;
* strings must be UTF-8; a piece must be non-empty; a score must be a finite float; a piece
  type must be one of the six of the schema;
* a file over :data:`MAX_MODEL_BYTES` or with more than :data:`MAX_PIECES` pieces is refused
  before anything is built from it.

The fields read::

    ModelProto      1 pieces (repeated SentencePiece)   2 trainer_spec   3 normalizer_spec
    SentencePiece   1 piece (string)   2 score (float)   3 type (NORMAL=1 UNKNOWN=2 CONTROL=3
                                                              USER_DEFINED=4 UNUSED=5 BYTE=6)
    TrainerSpec     3 model_type (UNIGRAM=1 BPE=2 WORD=3 CHAR=4)   24 treat_whitespace_as_suffix
                    35 byte_fallback   44 unk_surface
    NormalizerSpec  1 name   2 precompiled_charsmap   3 add_dummy_prefix
                    4 remove_extra_whitespaces   5 escape_whitespaces

Examples
--------
>>> spec = {"model_type": 1, "byte_fallback": False}
>>> data = write_model([("<unk>", 0.0, 2), ("▁a", -1.5, 1)], spec, {"name": "identity"})
>>> model = read_model(data, "example")
>>> model.pieces, model.trainer["model_type"], model.normalizer["add_dummy_prefix"]
([('<unk>', 0.0, 2), ('▁a', -1.5, 1)], 1, True)
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_MODEL_BYTES", "MAX_PIECES", "ModelFile", "read_model", "write_model"]

MAX_MODEL_BYTES = 1 << 30
MAX_PIECES = 10_000_000
PIECE_TYPES = {1: "NORMAL", 2: "UNKNOWN", 3: "CONTROL", 4: "USER_DEFINED", 5: "UNUSED", 6: "BYTE"}
MODEL_TYPES = {1: "UNIGRAM", 2: "BPE", 3: "WORD", 4: "CHAR"}
# field number -> (name, kind) of the scalar fields read; kind: "bool", "int", "str", "bytes"
_TRAINER = {
    3: ("model_type", "int"),
    24: ("treat_whitespace_as_suffix", "bool"),
    35: ("byte_fallback", "bool"),
    44: ("unk_surface", "str"),
}
_NORMALIZER = {
    1: ("name", "str"),
    2: ("precompiled_charsmap", "bytes"),
    3: ("add_dummy_prefix", "bool"),
    4: ("remove_extra_whitespaces", "bool"),
    5: ("escape_whitespaces", "bool"),
}
_TRAINER_DEFAULTS = {
    "model_type": 1,
    "treat_whitespace_as_suffix": False,
    "byte_fallback": False,
    "unk_surface": " \u2047 ",
}
_NORMALIZER_DEFAULTS = {
    "name": "",
    "precompiled_charsmap": b"",
    "add_dummy_prefix": True,
    "remove_extra_whitespaces": True,
    "escape_whitespaces": True,
}
_WIRE = {"bool": 0, "int": 0, "str": 2, "bytes": 2}


@dataclass
class ModelFile:
    """What :func:`read_model` found: ``(piece, score, type)`` triples, the trainer and
    normalizer settings read, and the raw fields kept for writing back."""

    pieces: list[tuple[str, float, int]]
    trainer: dict[str, Any]
    normalizer: dict[str, Any]
    raw: list[tuple[int, int, bytes]] = field(default_factory=list)  # (field, wire type, encoded)


class _Reader:
    def __init__(self, data: bytes, where: str) -> None:
        self.data, self.where = data, where

    def fail(self, at: int, what: str) -> ValueError:
        return ValueError(
            f"{self.where}: malformed protobuf at byte {at}: {what}; is this a "
            "SentencePiece .model file?"
        )

    def varint(self, pos: int, end: int) -> tuple[int, int]:
        value, shift, start = 0, 0, pos
        while True:
            if pos >= end:
                raise self.fail(start, "a varint runs past the end of its message")
            byte = self.data[pos]
            value |= (byte & 0x7F) << shift
            pos += 1
            if byte < 0x80:
                return value, pos
            shift += 7
            if shift >= 70:
                raise self.fail(start, "a varint is longer than 10 bytes")

    def fields(self, start: int, end: int) -> list[tuple[int, int, Any, int, int]]:
        """``(number, wire type, value, field start, field end)`` of the message ``data[start:end]``."""
        out, pos = [], start
        while pos < end:
            begin = pos
            key, pos = self.varint(pos, end)
            number, wire = key >> 3, key & 7
            if number == 0:
                raise self.fail(begin, "field number 0")
            if wire == 0:
                value, pos = self.varint(pos, end)
            elif wire in (1, 5):
                size = 8 if wire == 1 else 4
                if pos + size > end:
                    raise self.fail(begin, f"field {number} runs past the end of its message")
                value, pos = self.data[pos : pos + size], pos + size
            elif wire == 2:
                size, pos = self.varint(pos, end)
                if size > end - pos:
                    raise self.fail(
                        begin, f"field {number} claims {size} bytes, {end - pos} are left"
                    )
                value, pos = (pos, pos + size), pos + size
            else:
                raise self.fail(
                    begin, f"field {number} has wire type {wire}, which proto2 files do not use"
                )
            out.append((number, wire, value, begin, pos))
        return out

    def text(self, span: tuple[int, int], what: str) -> str:
        try:
            return self.data[span[0] : span[1]].decode("utf-8")
        except UnicodeDecodeError:
            raise self.fail(span[0], f"{what} is not UTF-8") from None


def _expect(reader: _Reader, wire: int, expected: int, at: int, name: str) -> None:
    if wire != expected:
        raise reader.fail(at, f"field {name} has wire type {wire}, expected {expected}")


def _piece(reader: _Reader, span: tuple[int, int], index: int) -> tuple[str, float, int]:
    piece, score, kind = None, 0.0, 1
    for number, wire, value, at, _ in reader.fields(*span):
        if number == 1:
            _expect(reader, wire, 2, at, f"pieces[{index}].piece")
            piece = reader.text(value, f"pieces[{index}].piece")
        elif number == 2:
            _expect(reader, wire, 5, at, f"pieces[{index}].score")
            score = struct.unpack("<f", value)[0]
        elif number == 3:
            _expect(reader, wire, 0, at, f"pieces[{index}].type")
            kind = value
    where = f"{reader.where}: pieces[{index}]"
    if not piece:
        raise ValueError(f"{where} has an empty piece; every piece must be a non-empty string")
    if not math.isfinite(score):
        raise ValueError(f"{where} ({piece!r}) has the score {score}; scores must be finite")
    if kind not in PIECE_TYPES:
        raise ValueError(
            f"{where} ({piece!r}) has type {kind}; the types are {sorted(PIECE_TYPES)}"
        )
    return piece, score, kind


def _settings(
    reader: _Reader, span: tuple[int, int], schema: dict, defaults: dict, name: str
) -> dict:
    out = dict(defaults)
    for number, wire, value, at, _ in reader.fields(*span):
        if number not in schema:
            continue
        key, kind = schema[number]
        _expect(reader, wire, _WIRE[kind], at, f"{name}.{key}")
        if kind == "str":
            value = reader.text(value, f"{name}.{key}")
        elif kind == "bytes":
            value = reader.data[value[0] : value[1]]
        elif kind == "bool":
            value = bool(value)
        out[key] = value
    return out


def read_model(data: bytes, where: str) -> ModelFile:
    """The pieces and settings of a serialized ``ModelProto``; errors name ``where``."""
    if len(data) > MAX_MODEL_BYTES:
        raise ValueError(
            f"{where} is {len(data)} bytes, over the {MAX_MODEL_BYTES} a model may take"
        )
    reader = _Reader(bytes(data), where)
    pieces, raw = [], []
    trainer, normalizer = dict(_TRAINER_DEFAULTS), dict(_NORMALIZER_DEFAULTS)
    for number, wire, value, at, end in reader.fields(0, len(data)):
        if number == 1:
            _expect(reader, wire, 2, at, "pieces")
            if len(pieces) >= MAX_PIECES:
                raise ValueError(f"{where} has more than {MAX_PIECES} pieces")
            pieces.append(_piece(reader, value, len(pieces)))
            continue
        if number == 2:
            _expect(reader, wire, 2, at, "trainer_spec")
            trainer = _settings(reader, value, _TRAINER, _TRAINER_DEFAULTS, "trainer_spec")
        elif number == 3:
            _expect(reader, wire, 2, at, "normalizer_spec")
            normalizer = _settings(
                reader, value, _NORMALIZER, _NORMALIZER_DEFAULTS, "normalizer_spec"
            )
        raw.append((number, wire, reader.data[at:end]))
    if not pieces:
        raise ValueError(f"{where} holds no pieces; is this a SentencePiece .model file?")
    return ModelFile(pieces, trainer, normalizer, raw)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes | int) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 0:
        return key + _varint(int(payload))
    if wire == 5:
        return key + payload
    return key + _varint(len(payload)) + payload


def _settings_bytes(values: dict[str, Any], schema: dict) -> bytes:
    out = b""
    for number, (key, kind) in sorted(schema.items()):
        if key not in values:
            continue
        value = values[key]
        payload = (
            value.encode("utf-8") if kind == "str" else value if kind == "bytes" else int(value)
        )
        out += _field(number, _WIRE[kind], payload)
    return out


def write_model(
    pieces: list[tuple[str, float, int]],
    trainer: dict[str, Any],
    normalizer: dict[str, Any],
    raw: list[tuple[int, int, bytes]] | None = None,
) -> bytes:
    """A serialized ``ModelProto``: the pieces, then ``raw`` fields kept from a file read, or
    else the given trainer and normalizer settings."""
    out = bytearray()
    for piece, score, kind in pieces:
        body = _field(1, 2, piece.encode("utf-8")) + _field(2, 5, struct.pack("<f", score))
        out += _field(1, 2, body + (_field(3, 0, kind) if kind != 1 else b""))
    if raw:
        for _, _, encoded in raw:
            out += encoded
        return bytes(out)
    out += _field(2, 2, _settings_bytes(trainer, _TRAINER))
    out += _field(3, 2, _settings_bytes(normalizer, _NORMALIZER))
    return bytes(out)
