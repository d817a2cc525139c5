"""SentencePiece ``.model`` files in and out, as the parts a tokenizer is built of.

:func:`read_parts` reads the protobuf (:mod:`rowbook.text.sentencepiece.proto`), checks what
``ModelInterface::InitializePieces`` checks (one ``UNKNOWN`` piece, no piece twice, byte
pieces only with ``byte_fallback`` and then all 256 of them) and gives the
:class:`ModelParts`: the normalizer of ``normalizer_spec`` (the precompiled rules,
``nmt_nfkc`` or any other, or none for ``identity``; the whitespace flags; the
user-defined symbols kept whole), the pieces of ``trainer_spec.model_type`` (``UNIGRAM`` or
``BPE``; ``WORD`` and ``CHAR`` models are refused) and SentencePiece's decoder. The
tokenizers are built of them above this module, by
:func:`rowbook.text.sentencepiece.load_model` (a :class:`~rowbook.text.Unigram` or a
:class:`~rowbook.text.SentencePieceBPE`, no pre-tokenizer: the model sees whole sentences)
and by ``SentencePieceBPE.load``. ``<s>``, ``</s>`` and other control pieces are not
matched in text, as in ``sentencepiece``; ``encode`` adds none.

:func:`save_model` writes a model read from a file back, the fields rowbook does not read
as they were (the same bytes); a :class:`~rowbook.text.Unigram` trained by rowbook is
written with the identity normalizer (the whitespace kept as it is, a ``"▁"`` in front), so
``sentencepiece`` segments its text the way the ``Metaspace`` pre-tokenizer does
(:func:`unigram_to_model`).
"""

from __future__ import annotations

import base64
import os
from dataclasses import dataclass
from typing import Any

from rowbook.corpus_files import check_regular_file
from rowbook.io import atomic_write
from rowbook.text.components import Metaspace
from rowbook.text.sentencepiece.charsmap import CharsMap, read_charsmap
from rowbook.text.sentencepiece.normalizer import (
    SPACE,
    SentencePieceDecoder,
    SentencePieceNormalizer,
)
from rowbook.text.sentencepiece.pieces import KIND_OF_TYPE
from rowbook.text.sentencepiece.proto import MAX_MODEL_BYTES, ModelFile, read_model, write_model

__all__ = [
    "ModelParts",
    "model_bytes",
    "parts_of_dict",
    "read_file",
    "read_parts",
    "save_model",
    "to_dict",
    "unigram_to_model",
]


def _check_pieces(model: ModelFile, where: str) -> int:
    """The unknown piece's id, after ``InitializePieces``'s checks."""
    seen: dict[str, int] = {}
    unk = [i for i, (_, _, kind) in enumerate(model.pieces) if kind == 2]
    for i, (piece, _, kind) in enumerate(model.pieces):
        if piece in seen:
            raise ValueError(
                f"{where}: piece {piece!r} is given twice (ids {seen[piece]} and {i}); "
                "every piece needs one id"
            )
        seen[piece] = i
        if kind == 6 and not model.trainer["byte_fallback"]:
            raise ValueError(
                f"{where}: byte piece {piece!r} is found although byte_fallback is false"
            )
    if len(unk) != 1:
        raise ValueError(
            f"{where}: {len(unk)} pieces have the UNKNOWN type; a model needs exactly one"
        )
    if model.trainer["byte_fallback"]:
        bytes_found = {p for p, _, kind in model.pieces if kind == 6}
        missing = [f"<0x{b:02X}>" for b in range(256) if f"<0x{b:02X}>" not in bytes_found]
        if missing:
            raise ValueError(
                f"{where}: byte_fallback is true but {len(missing)} byte pieces are "
                f"missing, e.g. {missing[0]}; all 256 are needed"
            )
    return unk[0]


@dataclass(frozen=True)
class ModelParts:
    """What a ``.model`` file holds, read and checked, before a tokenizer is built of it:
    ``kind`` (``"unigram"`` or ``"bpe"``), the ``normalizer`` and ``decoder`` of its specs,
    its ``pieces`` as ``(piece, score)`` with their ``kinds``, the unknown piece's id,
    ``byte_fallback``, ``word_by_word`` (no piece spans a word boundary, so a BPE may encode
    word by word with a cache and give the same ids) and the parsed ``file``, written back
    as it was by :func:`save_model`."""

    kind: str
    normalizer: SentencePieceNormalizer
    decoder: SentencePieceDecoder
    pieces: list[tuple[str, float]]
    kinds: list[str]
    unk_id: int
    byte_fallback: bool
    word_by_word: bool
    file: ModelFile


def read_parts(data: bytes, where: str) -> ModelParts:
    """The :class:`ModelParts` of a serialized ``ModelProto`` (``where`` names it in errors)."""
    model = read_model(data, where)
    unk_id = _check_pieces(model, where)
    kind = model.trainer["model_type"]
    if kind not in (1, 2):
        name = {3: "WORD", 4: "CHAR"}.get(kind, str(kind))
        raise ValueError(
            f"{where} is a SentencePiece {name} model; rowbook reads the UNIGRAM and BPE types"
        )
    spec = model.normalizer
    blob = spec["precompiled_charsmap"]
    charsmap = CharsMap(read_charsmap(blob, where)) if blob else None
    user = tuple(p for p, _, k in model.pieces if k == 4)
    normalizer = SentencePieceNormalizer(
        charsmap,
        add_dummy_prefix=spec["add_dummy_prefix"],
        remove_extra_whitespaces=spec["remove_extra_whitespaces"],
        escape_whitespaces=spec["escape_whitespaces"],
        user_defined=user,
        treat_whitespace_as_suffix=model.trainer["treat_whitespace_as_suffix"],
    )
    types = {p: k for p, _, k in model.pieces if k != 1}
    strip = spec["add_dummy_prefix"] or spec["remove_extra_whitespaces"]
    decoder = SentencePieceDecoder(
        types, model.trainer["unk_surface"], strip, spec["remove_extra_whitespaces"]
    )
    word_by_word = (
        spec["escape_whitespaces"]
        and not model.trainer["treat_whitespace_as_suffix"]
        and not any(SPACE in p[1:] for p, _, k in model.pieces if k in (1, 4, 5))
    )
    return ModelParts(
        kind="unigram" if kind == 1 else "bpe",
        normalizer=normalizer,
        decoder=decoder,
        pieces=[(p, s) for p, s, _ in model.pieces],
        kinds=[KIND_OF_TYPE[k] for _, _, k in model.pieces],
        unk_id=unk_id,
        byte_fallback=bool(model.trainer["byte_fallback"]),
        word_by_word=bool(word_by_word),
        file=model,
    )


def read_file(path: str | os.PathLike) -> ModelParts:
    """The :class:`ModelParts` of a ``.model`` file (at most :data:`MAX_MODEL_BYTES`)."""
    file = check_regular_file(path, "SentencePiece model")
    size = file.stat().st_size
    if size > MAX_MODEL_BYTES:
        raise ValueError(
            f"SentencePiece model {path} is {size} bytes, over the {MAX_MODEL_BYTES} a model may take"
        )
    return read_parts(file.read_bytes(), f"SentencePiece model {path}")


def unigram_to_model(uni: Any) -> ModelFile:
    """The ``.model`` content of a rowbook-trained :class:`~rowbook.text.Unigram`: its pieces
    (the unknown one typed ``UNKNOWN``, added special tokens ``CONTROL``), the identity
    normalizer with whitespace kept, a ``"▁"`` in front."""
    if uni.normalizer is not None or not isinstance(uni.pre_tokenizer, Metaspace):
        raise ValueError(
            "a .model file stores its normalization as a compiled character map that "
            "rowbook does not write, and splits words as Metaspace does: write a Unigram "
            "with normalizer=None and the Metaspace pre-tokenizer, or use to_tokenizer_json"
        )
    pieces = []
    specials = set(uni._special_ids)
    for i, (piece, score) in enumerate(uni.pieces):
        kind = (
            2
            if i == uni.unk_id
            else 3
            if piece in specials
            else 6
            if uni.byte_fallback and _is_byte(piece)
            else 1
        )
        pieces.append((piece, score, kind))
    trainer = {
        "model_type": 1,
        "treat_whitespace_as_suffix": False,
        "byte_fallback": uni.byte_fallback,
    }
    normalizer = {
        "name": "identity",
        "add_dummy_prefix": True,
        "remove_extra_whitespaces": False,
        "escape_whitespaces": True,
    }
    return ModelFile(pieces, trainer, normalizer)


def _is_byte(piece: str) -> bool:
    return len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">")


def model_bytes(tok: Any) -> bytes:
    """The ``.model`` file of ``tok``, serialized."""
    tok._check_fitted()
    model = getattr(tok, "_model_file", None)
    if model is not None:
        pieces = [
            (p, float(s), k)
            for (p, _, k), s in zip(model.pieces, tok._scores.tolist(), strict=True)
        ]
        data = write_model(pieces, model.trainer, model.normalizer, model.raw)
    else:
        if getattr(tok, "mode", None) is None:
            raise ValueError(f"a {type(tok).__name__} cannot be written as a SentencePiece model")
        model = unigram_to_model(tok)
        data = write_model(model.pieces, model.trainer, model.normalizer)
    return data


def save_model(tok: Any, path: str | os.PathLike) -> None:
    """Write ``tok`` as a ``.model`` file (atomic)."""
    data = model_bytes(tok)
    with atomic_write(path) as f:
        f.write(data)


def to_dict(tok: Any) -> dict[str, Any]:
    """A model read from a ``.model`` file as a JSON document (for a TextPipeline file)."""
    return {
        "format": "rowbook.SentencePiece",
        "version": 1,
        "model": base64.b64encode(model_bytes(tok)).decode("ascii"),
    }


def parts_of_dict(d: Any, where: str) -> ModelParts:
    """The :class:`ModelParts` of :func:`to_dict`'s document."""
    if (
        not isinstance(d, dict)
        or d.get("format") != "rowbook.SentencePiece"
        or d.get("version") != 1
    ):
        raise ValueError(
            f"{where} is not a rowbook SentencePiece document (format 'rowbook.SentencePiece', version 1)"
        )
    try:
        data = base64.b64decode(d.get("model"), validate=True)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: field 'model' must be the base64 of a .model file") from None
    return read_parts(data, where)
