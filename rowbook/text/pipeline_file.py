"""TextPipeline files: how text is normalized, tokenized and numbered, in one JSON document.

:meth:`TextPipeline.save <rowbook.text.TextPipeline.save>` writes one versioned,
human-readable JSON document (through :func:`rowbook.io.write_json`, atomically), and the
models that keep a pipeline (the classifiers, the NPLM) embed the same document in their
saved file, fitted or not::

    {"format": "rowbook", "kind": "text_pipeline", "version": 2, "fitted": true | false,
     "normalizer": null | {"unicode_form": "NFC", "case": "lower", "strip_accents": false,
                           "strip_punctuation": false, "collapse_whitespace": false,
                           "strip": false},
     "tokenizer": {"type": "word", "pattern": "<regex>" | null}       # null: split on whitespace
                | {"type": "char", "graphemes": false}
                | {"type": "byte_level_bpe", "model": {<a rowbook.ByteLevelBPE file>},
                   "cache_size": 100000}                               # fitted
                | {"type": "byte_level_bpe", "settings": {<ByteLevelBPE parameters>}}
                | {"type": "wordpiece", "model": {<a rowbook.WordPiece file>}}
                | {"type": "unigram", "model": {<a rowbook.Unigram file>}}
                | {"type": "byte_fallback_bpe", "model": {<a rowbook.ByteFallbackBPE file>}}
                | {"type": "sentencepiece", "model": {"format": "rowbook.SentencePiece",
                                                      "version": 1, "model": "<base64 .model>"}}
                | null,                                                # unfitted: the default
     "vocab": null | {<a rowbook.Vocab file>}                 # null: the subword model's own ids
            | {"settings": {<Vocab parameters>}}}                      # unfitted

A fitted document holds what encoding needs (the BPE's merges, the vocabulary's tokens);
an unfitted one holds the settings that ``fit`` will start from (a null tokenizer or
vocabulary there means the pipeline's default). Version 1 (rowbook 0.1's
``TextPipeline.save``) is the fitted form without the ``fitted`` field and reads as such.
A WordPiece, Unigram or SentencePiece model is kept fitted only (its normalizer and
pre-tokenizer are stored with its vocabulary, as in a ``tokenizer.json``).

Loading checks every field (types, allowed values, no unknown or missing keys) and
says which file and which field is wrong; the embedded BPE and vocabulary are checked by
their own loaders. A document of another kind or a newer version is refused with a
message saying so.
"""

from __future__ import annotations

from typing import Any

from rowbook.text.bpe import fallback_files
from rowbook.text.bpe import files as bpe_files
from rowbook.text.bpe.fallback import ByteFallbackBPE
from rowbook.text.bpe.model import ByteLevelBPE
from rowbook.text.normalize import Normalizer
from rowbook.text.subword_pipeline import SubwordTokenizer
from rowbook.text.tokenize import CharTokenizer, WordTokenizer
from rowbook.text.unigram import Unigram
from rowbook.text.vocab import Vocab
from rowbook.text.wordpiece import WordPiece

__all__ = ["FORMAT", "KIND", "VERSION", "Parts", "from_dict", "normalizer_from_dict", "to_dict"]

FORMAT, KIND, VERSION = "rowbook", "text_pipeline", 2
_FIELDS = ("format", "kind", "version", "fitted", "normalizer", "tokenizer", "vocab")
_BPE_FITTED, _BPE_SETTINGS = {"type", "model", "cache_size"}, {"type", "settings"}
_TOKENIZER_FIELDS = {
    "word": [{"type", "pattern", "ascii_quotes"}, {"type", "pattern"}],  # the last: older files
    "char": [{"type", "graphemes"}],
    "byte_level_bpe": [_BPE_FITTED, _BPE_SETTINGS, {"type", "model"}],  # the last: version 1
    "wordpiece": [{"type", "model"}],
    "unigram": [{"type", "model"}],
    "byte_fallback_bpe": [{"type", "model"}],
    "sentencepiece": [{"type", "model"}],
}
_SUBWORD = (ByteLevelBPE, SubwordTokenizer)  # number their own tokens

#: ``(normalizer, tokenizer, vocab, fitted)``: a pipeline's parts as a document holds them.
Parts = tuple[Normalizer | None, Any, Vocab | None, bool]


def to_dict(
    normalizer: Any, tokenizer: Any, vocab: Vocab | None, *, fitted: bool = True
) -> dict[str, Any]:
    """The JSON document of a pipeline's parts: fitted ones, or the settings of unfitted ones."""
    if normalizer is not None and not isinstance(normalizer, Normalizer):
        raise ValueError(
            f"only a Normalizer can be saved in a pipeline file, not the "
            f"{type(normalizer).__name__} {normalizer!r}; use Normalizer(...)"
        )
    return {
        "format": FORMAT,
        "kind": KIND,
        "version": VERSION,
        "fitted": fitted,
        "normalizer": None if normalizer is None else normalizer.to_dict(),
        "tokenizer": _tokenizer_to_dict(tokenizer, fitted),
        "vocab": _vocab_to_dict(vocab, fitted),
    }


def _tokenizer_to_dict(tokenizer: Any, fitted: bool) -> dict[str, Any] | None:
    if isinstance(tokenizer, ByteLevelBPE):
        if tokenizer._fitted:  # a fitted BPE is kept whole, even in an unfitted pipeline
            model = bpe_files.to_dict(tokenizer)
            return {"type": "byte_level_bpe", "model": model, "cache_size": tokenizer.cache_size}
        return {"type": "byte_level_bpe", "settings": tokenizer.get_params()}
    if isinstance(tokenizer, SubwordTokenizer):
        return _subword_to_dict(tokenizer)
    if isinstance(tokenizer, CharTokenizer):
        return {"type": "char", **tokenizer.to_dict()}
    if isinstance(tokenizer, WordTokenizer):
        return {"type": "word", **tokenizer.to_dict()}
    if tokenizer is None and not fitted:
        return None
    raise ValueError(
        f"only a WordTokenizer, CharTokenizer or subword tokenizer (ByteLevelBPE, WordPiece, "
        f"Unigram, SentencePieceBPE) can be saved in a pipeline file, not "
        f"{type(tokenizer).__name__}"
    )


def _vocab_to_dict(vocab: Vocab | None, fitted: bool) -> dict[str, Any] | None:
    if vocab is None:
        return None
    if vocab._itos is not None:  # a fitted vocabulary is kept whole
        return vocab.to_dict()
    return {"settings": vocab.get_params()}


def from_dict(d: Any, where: str) -> Parts:
    """``(normalizer, tokenizer, vocab, fitted)`` from :func:`to_dict`'s document (or a
    version 1 file); errors name ``where`` and the field."""
    fitted = _check_header(d, where)
    normalizer = normalizer_from_dict(d["normalizer"], f"{where} field 'normalizer'")
    tokenizer = _tokenizer(d["tokenizer"], fitted, f"{where} field 'tokenizer'")
    vocab = _vocab(d["vocab"], fitted, tokenizer, f"{where} field 'vocab'")
    return normalizer, tokenizer, vocab, fitted


def _check_header(d: Any, where: str) -> bool:
    """The document's ``fitted`` flag, after checking its format, kind, version and keys."""
    if not isinstance(d, dict):
        raise ValueError(
            f"{where} is not a rowbook text pipeline: it holds a JSON "
            f"{type(d).__name__}, not an object"
        )
    if d.get("format") != FORMAT or d.get("kind") != KIND:
        found = d.get("kind") or d.get("format")
        raise ValueError(
            f"{where} is not a rowbook text pipeline (it holds {found!r}; expected "
            f"format {FORMAT!r}, kind {KIND!r})"
        )
    version = d.get("version")
    if version not in (1, VERSION):
        newer = isinstance(version, int) and version > VERSION
        hint = "; it was written by a newer rowbook, upgrade to read it" if newer else ""
        raise ValueError(
            f"{where} field 'version' is {version!r}; this rowbook reads versions 1 and "
            f"{VERSION}{hint}"
        )
    _exact_keys(d, set(_FIELDS) - ({"fitted"} if version == 1 else set()), where)
    fitted = d.get("fitted", True)
    if not isinstance(fitted, bool):
        raise ValueError(f"{where} field 'fitted' must be true or false, got {fitted!r}")
    return fitted


def _exact_keys(d: dict, expected: set[str], where: str) -> None:
    missing, unknown = sorted(expected - set(d)), sorted(set(d) - expected)
    if missing:
        raise ValueError(f"{where} lacks the fields {missing}")
    if unknown:
        raise ValueError(f"{where} has unknown fields {unknown} (expected {sorted(expected)})")


def normalizer_from_dict(d: Any, where: str) -> Normalizer | None:
    """The :class:`~rowbook.text.Normalizer` of ``Normalizer.to_dict()``'s document (or
    ``None``), every field checked; errors name ``where``."""
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

    if not tokenizer._fitted:
        name = type(tokenizer).__name__
        raise ValueError(
            f"an unfitted {name} cannot be saved in a pipeline file (its file form is its "
            f"vocabulary); fit the pipeline first, or save a {name} fitted with {name}.fit(...)"
        )
    if getattr(tokenizer, "_model_file", None) is not None:
        return {"type": "sentencepiece", "model": sp_files.to_dict(tokenizer)}
    if isinstance(tokenizer, WordPiece):
        return {"type": "wordpiece", "model": wordpiece_files.FILES.to_dict(tokenizer)}
    if isinstance(tokenizer, ByteFallbackBPE):
        return {"type": "byte_fallback_bpe", "model": fallback_files.FILES.to_dict(tokenizer)}
    return {"type": "unigram", "model": unigram_files.FILES.to_dict(tokenizer)}


def _subword_from_dict(kind: str, d: Any, where: str) -> Any:
    from rowbook.text.sentencepiece import loading as sp_loading
    from rowbook.text.unigram import files as unigram_files
    from rowbook.text.wordpiece import files as wordpiece_files

    if kind == "sentencepiece":
        return sp_loading.from_dict(d, where)
    if kind == "wordpiece":
        return wordpiece_files.FILES.from_dict(WordPiece, d, where)
    if kind == "byte_fallback_bpe":
        return fallback_files.FILES.from_dict(ByteFallbackBPE, d, where)
    return unigram_files.FILES.from_dict(Unigram, d, where)


def _tokenizer(d: Any, fitted: bool, where: str) -> Any:
    if d is None and not fitted:
        return None  # the pipeline's default tokenizer
    if not isinstance(d, dict) or d.get("type") not in _TOKENIZER_FIELDS:
        found = d.get("type") if isinstance(d, dict) else type(d).__name__
        raise ValueError(
            f"{where} must be an object whose 'type' is one of "
            f"{sorted(_TOKENIZER_FIELDS)}, got {found!r}"
        )
    kind, keys = d["type"], set(d)
    if keys not in _TOKENIZER_FIELDS[kind]:
        expected = " or ".join(str(sorted(k)) for k in _TOKENIZER_FIELDS[kind])
        raise ValueError(f"{where} has the fields {sorted(keys)}; expected {expected}")
    if kind in ("wordpiece", "unigram", "sentencepiece", "byte_fallback_bpe"):
        return _subword_from_dict(kind, d["model"], f"{where[:-1]}.model'")
    try:
        if kind == "char":
            return CharTokenizer(graphemes=d["graphemes"])
        if kind == "word":
            return WordTokenizer(pattern=d["pattern"], ascii_quotes=d.get("ascii_quotes", True))
        if "settings" in d:
            if fitted:
                raise ValueError("a fitted pipeline needs the BPE's model, not its settings")
            return ByteLevelBPE(**_object(d["settings"], "settings"))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from None
    bpe = bpe_files.from_dict(ByteLevelBPE, d["model"], f"{where[:-1]}.model'")
    cache_size = d.get("cache_size", bpe.cache_size)
    if not isinstance(cache_size, int) or isinstance(cache_size, bool) or cache_size < 0:
        raise ValueError(f"{where[:-1]}.cache_size' must be an integer >= 0, got {cache_size!r}")
    bpe.cache_size = cache_size
    return bpe


def _vocab(d: Any, fitted: bool, tokenizer: Any, where: str) -> Vocab | None:
    if d is None:
        if fitted and not isinstance(tokenizer, _SUBWORD):
            raise ValueError(
                f"{where} is null, which only a subword tokenizer allows (it numbers its own "
                "tokens)"
            )
        return None
    if isinstance(d, dict) and set(d) == {"settings"}:
        if fitted:
            raise ValueError(
                f"{where}: a fitted pipeline needs the vocabulary's tokens, not its settings"
            )
        try:
            return Vocab(**_object(d["settings"], "settings"))
        except (TypeError, ValueError) as err:
            raise ValueError(f"{where}: {err}") from None
    return Vocab.from_dict(d, where)


def _object(d: Any, name: str) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise ValueError(f"'{name}' must be an object, got {type(d).__name__}")
    return d
