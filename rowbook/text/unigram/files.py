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
from typing import Any

from rowbook.text import hf_files

__all__ = ["FILES", "from_document"]


def _model(uni: Any) -> dict[str, Any]:
    return {
        "type": "Unigram",
        "unk_id": uni._unk_id,
        "vocab": [[p, s] for p, s in uni.pieces],
        "byte_fallback": uni.byte_fallback,
    }


def _pieces(model: dict, where: str) -> list[tuple[str, float]]:
    vocab = hf_files.model_field(model, "vocab", list, where, "a list of [piece, score] pairs")
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


#: ``tokenizer.json`` and rowbook's file, which keeps the sampling settings beside it.
FILES = hf_files.TokenizerFiles(
    "Unigram", _model, from_document, settings=("alpha", "nbest_size", "seed")
)
