"""Files of a :class:`~rowbook.text.Unigram`: ``tokenizer.json`` and rowbook's JSON.

The ``tokenizer.json`` model is ``{"type": "Unigram", "unk_id": 0 | null, "vocab": [[piece,
score], ...], "byte_fallback": false}``, around it the parts of
:mod:`rowbook.text.hf_files` (a ``Metaspace`` pre-tokenizer and decoder for a model trained
by ``tokenizers``; a ``Precompiled`` normalizer, ``ByteFallback`` decoders and a template
for one converted from SentencePiece). Every piece needs a string and a finite score; a
piece given twice is refused (``tokenizers`` would map both ids to the later one).
rowbook's own file (``save`` / ``load``) is ``{"format": "rowbook.Unigram", "version": 1,
"tokenizer": {...}, "alpha": ..., "nbest_size": ..., "seed": ...}``.
"""

from __future__ import annotations

import math
import os
from typing import Any

from rowbook.io import read_json
from rowbook.text import hf_files

__all__ = [
    "from_dict",
    "from_document",
    "from_tokenizer_json",
    "load",
    "save",
    "to_dict",
    "to_tokenizer_json",
]


def _model(uni: Any) -> dict[str, Any]:
    return {
        "type": "Unigram",
        "unk_id": uni._unk_id,
        "vocab": [[p, s] for p, s in uni.pieces],
        "byte_fallback": uni.byte_fallback,
    }


def to_tokenizer_json(uni: Any, path: str | os.PathLike) -> None:
    """Write ``uni`` as a Hugging Face ``tokenizer.json``."""
    hf_files.write(path, hf_files.document(uni, _model(uni)))


def _pieces(model: dict, where: str) -> list[tuple[str, float]]:
    vocab = model.get("vocab")
    if not isinstance(vocab, list):
        raise ValueError(f"{where}: model.vocab must be a list of [piece, score] pairs")
    pieces = []
    for i, entry in enumerate(vocab):
        ok = isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
        if not ok or isinstance(entry[1], bool) or not isinstance(entry[1], int | float):
            raise ValueError(
                f"{where}: model.vocab[{i}] must be [piece, score], got {str(entry)[:80]}"
            )
        if not math.isfinite(entry[1]):
            raise ValueError(
                f"{where}: model.vocab[{i}] ({entry[0]!r}) has the score {entry[1]}; "
                "scores must be finite numbers"
            )
        pieces.append((entry[0], float(entry[1])))
    return pieces


def from_document(cls: Any, d: Any, where: str, **params: Any) -> Any:
    """A :class:`Unigram` from a ``tokenizer.json`` document (already parsed)."""
    d, model = hf_files.check_document(d, "Unigram", where)
    pieces = _pieces(model, where)
    unk_id = model.get("unk_id")
    if unk_id is not None and (isinstance(unk_id, bool) or not isinstance(unk_id, int)):
        raise ValueError(f"{where}: model.unk_id must be an integer or null, got {unk_id!r}")
    byte_fallback = model.get("byte_fallback", False)
    if not isinstance(byte_fallback, bool):
        raise ValueError(
            f"{where}: model.byte_fallback must be true or false, got {byte_fallback!r}"
        )
    added = hf_files.added_tokens(d, where, normalized_ok=d.get("normalizer") is None)
    tokens = hf_files.merge_vocab([p for p, _ in pieces], added, where)
    normalizer, pre, template, decoder = hf_files.pipeline_parts(
        d, {t: i for i, t in enumerate(tokens)}, where
    )
    try:
        uni = cls(normalizer=normalizer, pre_tokenizer=pre, byte_fallback=byte_fallback, **params)
        extra = [(t, 0.0) for t in tokens[len(pieces) :]]
        uni._set_model(
            pieces + extra, unk_id, [(t, s) for t, _, s in added], model_size=len(pieces)
        )
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from None
    uni.template, uni.decoder = template, decoder
    return uni


def from_tokenizer_json(cls: Any, path: str | os.PathLike) -> Any:
    """Read a Hugging Face ``tokenizer.json`` with a ``Unigram`` model."""
    return from_document(cls, read_json(path, "tokenizer.json"), f"tokenizer.json file {path}")


def to_dict(uni: Any) -> dict[str, Any]:
    """rowbook's versioned document (also embedded in a TextPipeline file)."""
    doc = hf_files.document(uni, _model(uni))
    return hf_files.envelope(
        "Unigram", doc, alpha=uni.alpha, nbest_size=uni.nbest_size, seed=uni.seed
    )


def save(uni: Any, path: str | os.PathLike) -> None:
    """Write rowbook's versioned file."""
    hf_files.write(path, to_dict(uni))


def load(cls: Any, path: str | os.PathLike) -> Any:
    """Read a file written by :func:`save`."""
    return from_dict(cls, read_json(path, "Unigram"), f"Unigram file {path}")


def from_dict(cls: Any, d: Any, where: str) -> Any:
    """A :class:`Unigram` from :func:`to_dict`'s document."""
    d = hf_files.from_envelope(d, "Unigram", where)
    params = {k: d.get(k) for k in ("alpha", "nbest_size", "seed")}
    try:
        return from_document(cls, d.get("tokenizer"), where, **params)
    except (TypeError, ValueError) as err:
        message = str(err)
        raise ValueError(message if message.startswith(where) else f"{where}: {message}") from None
