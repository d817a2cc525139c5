"""TextPipeline files: how text was normalized, tokenized and numbered, in one JSON file.

:meth:`TextPipeline.save <rowbook.text.TextPipeline.save>` writes one versioned,
human-readable JSON document (through :func:`rowbook.io.write_json`, atomically)::

    {"format": "rowbook", "kind": "text_pipeline", "version": 1,
     "normalizer": null | {"unicode_form": "NFC", "case": "lower", "strip_accents": false,
                           "strip_punctuation": false, "collapse_whitespace": false,
                           "strip": false},
     "tokenizer": {"type": "word", "pattern": "<regex>" | null}       # null: split on whitespace
                | {"type": "char", "graphemes": false}
                | {"type": "byte_level_bpe", "model": {<a rowbook.ByteLevelBPE file>}}
                | {"type": "wordpiece", "model": {<a rowbook.WordPiece file>}}
                | {"type": "unigram", "model": {<a rowbook.Unigram file>}}
                | {"type": "sentencepiece", "model": {"format": "rowbook.SentencePiece",
                                                      "version": 1, "model": "<base64 .model>"}},
     "vocab": null | {<a rowbook.Vocab file>}}                        # null: the subword model's own ids

Loading checks every field (types, allowed values, no unknown or missing keys) and
says which file and which field is wrong; the embedded BPE and vocabulary are checked by
their own loaders. A file of another kind or a newer version is refused with a message
saying so.
"""

from __future__ import annotations

from typing import Any

from rowbook.text.bpe import files as bpe_files
from rowbook.text.bpe.model import ByteLevelBPE
from rowbook.text.normalize import Normalizer
from rowbook.text.subword import SubwordTokenizer
from rowbook.text.tokenize import CharTokenizer, WordTokenizer
from rowbook.text.unigram import Unigram
from rowbook.text.vocab import Vocab
from rowbook.text.wordpiece import WordPiece

__all__ = ["FORMAT", "KIND", "VERSION", "from_dict", "to_dict"]

FORMAT, KIND, VERSION = "rowbook", "text_pipeline", 1
_FIELDS = ("format", "kind", "version", "normalizer", "tokenizer", "vocab")
_TOKENIZER_FIELDS = {"word": {"pattern"}, "char": {"graphemes"}, "byte_level_bpe": {"model"},
                     "wordpiece": {"model"}, "unigram": {"model"}, "sentencepiece": {"model"}}  # fmt: skip
_SUBWORD = (ByteLevelBPE, SubwordTokenizer)


def to_dict(normalizer: Any, tokenizer: Any, vocab: Vocab | None) -> dict[str, Any]:
    """The JSON document of a fitted pipeline's parts."""
    if normalizer is not None and not isinstance(normalizer, Normalizer):
        raise ValueError(f"only a Normalizer can be saved in a pipeline file, not the "
                         f"{type(normalizer).__name__} {normalizer!r}; use Normalizer(...)")  # fmt: skip
    if isinstance(tokenizer, ByteLevelBPE):
        tok = {"type": "byte_level_bpe", "model": bpe_files.to_dict(tokenizer)}
    elif isinstance(tokenizer, SubwordTokenizer):
        tok = _subword_to_dict(tokenizer)
    elif isinstance(tokenizer, CharTokenizer):
        tok = {"type": "char", **tokenizer.to_dict()}
    else:
        tok = {"type": "word", **tokenizer.to_dict()}
    return {"format": FORMAT, "kind": KIND, "version": VERSION,
            "normalizer": None if normalizer is None else normalizer.to_dict(),
            "tokenizer": tok, "vocab": None if vocab is None else vocab.to_dict()}  # fmt: skip


def from_dict(d: Any, where: str) -> tuple[Normalizer | None, Any, Vocab | None]:
    """``(normalizer, tokenizer, vocab)`` from :func:`to_dict`'s document; errors name ``where``."""
    _check_header(d, where)
    normalizer = _normalizer(d["normalizer"], f"{where} field 'normalizer'")
    tokenizer = _tokenizer(d["tokenizer"], f"{where} field 'tokenizer'")
    if d["vocab"] is None:
        if not isinstance(tokenizer, _SUBWORD):
            raise ValueError(f"{where} field 'vocab' is null, which only a subword tokenizer "
                             "allows (it numbers its own tokens)")  # fmt: skip
        return normalizer, tokenizer, None
    return normalizer, tokenizer, Vocab.from_dict(d["vocab"], f"{where} field 'vocab'")


def _check_header(d: Any, where: str) -> None:
    if not isinstance(d, dict):
        raise ValueError(f"{where} is not a rowbook text pipeline: it holds a JSON "
                         f"{type(d).__name__}, not an object")  # fmt: skip
    if d.get("format") != FORMAT or d.get("kind") != KIND:
        found = d.get("kind") or d.get("format")
        raise ValueError(f"{where} is not a rowbook text pipeline (it holds {found!r}; expected "
                         f"format {FORMAT!r}, kind {KIND!r})")  # fmt: skip
    version = d.get("version")
    if version != VERSION:
        newer = isinstance(version, int) and version > VERSION
        hint = "; it was written by a newer rowbook, upgrade to read it" if newer else ""
        raise ValueError(f"{where} field 'version' is {version!r}; this rowbook reads version "
                         f"{VERSION}{hint}")  # fmt: skip
    _exact_keys(d, set(_FIELDS), where)


def _exact_keys(d: dict, expected: set[str], where: str) -> None:
    missing, unknown = sorted(expected - set(d)), sorted(set(d) - expected)
    if missing:
        raise ValueError(f"{where} lacks the fields {missing}")
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown} (expected {sorted(expected)})")


def _normalizer(d: Any, where: str) -> Normalizer | None:
    if d is None:
        return None
    if not isinstance(d, dict):
        raise ValueError(f"{where} must be null or an object, got {type(d).__name__}")
    _exact_keys(d, set(Normalizer().to_dict()), where)
    try:
        return Normalizer(**d)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from None


def _subword_to_dict(tokenizer: SubwordTokenizer) -> dict[str, Any]:
    from rowbook.text.sentencepiece import files as sp_files
    from rowbook.text.unigram import files as unigram_files
    from rowbook.text.wordpiece import files as wordpiece_files

    if getattr(tokenizer, "_model_file", None) is not None:
        return {"type": "sentencepiece", "model": sp_files.to_dict(tokenizer)}
    if isinstance(tokenizer, WordPiece):
        return {"type": "wordpiece", "model": wordpiece_files.to_dict(tokenizer)}
    return {"type": "unigram", "model": unigram_files.to_dict(tokenizer)}


def _subword_from_dict(kind: str, d: Any, where: str) -> Any:
    from rowbook.text.sentencepiece import files as sp_files
    from rowbook.text.unigram import files as unigram_files
    from rowbook.text.wordpiece import files as wordpiece_files

    if kind == "sentencepiece":
        return sp_files.from_dict(d, where)
    if kind == "wordpiece":
        return wordpiece_files.from_dict(WordPiece, d, where)
    return unigram_files.from_dict(Unigram, d, where)


def _tokenizer(d: Any, where: str) -> Any:
    if not isinstance(d, dict) or d.get("type") not in _TOKENIZER_FIELDS:
        found = d.get("type") if isinstance(d, dict) else type(d).__name__
        raise ValueError(f"{where} must be an object whose 'type' is one of "
                         f"{sorted(_TOKENIZER_FIELDS)}, got {found!r}")  # fmt: skip
    kind = d["type"]
    _exact_keys(d, {"type"} | _TOKENIZER_FIELDS[kind], where)
    if kind == "byte_level_bpe":
        return bpe_files.from_dict(ByteLevelBPE, d["model"], f"{where[:-1]}.model'")
    if kind in ("wordpiece", "unigram", "sentencepiece"):
        return _subword_from_dict(kind, d["model"], f"{where[:-1]}.model'")
    try:
        if kind == "char":
            return CharTokenizer(graphemes=d["graphemes"])
        return WordTokenizer(pattern=d["pattern"])
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from None
