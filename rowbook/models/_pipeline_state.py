"""A :class:`~rowbook.text.TextPipeline` as JSON data, for the models' saved files.

Until ``TextPipeline.save`` / ``load`` exist, the text models store their pipeline with
these two functions: normalizer settings, tokenizer (word, character, or byte-level BPE
with its merges) and vocabulary (its settings, and its tokens and counts once fitted).
They are the one place to swap for ``TextPipeline``'s own JSON when it lands.

>>> from rowbook.text import Normalizer, Vocab, WordTokenizer
>>> pipe = TextPipeline(Normalizer(case="lower"), WordTokenizer(), Vocab()).fit(["The cat"])
>>> again = pipeline_from_json(pipeline_to_json(pipe))
>>> again.encode("the CAT sat").tolist(), again.normalizer == pipe.normalizer
([2, 3, 1], True)
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from rowbook.text import ByteLevelBPE, CharTokenizer, Normalizer, TextPipeline, Vocab, WordTokenizer

__all__ = [
    "normalizer_from_json",
    "normalizer_to_json",
    "pipeline_from_json",
    "pipeline_to_json",
    "same_json",
]

_VOCAB_SETTINGS = ("min_count", "max_size", "pad_token", "unk_token", "bos_token", "eos_token")


def normalizer_to_json(normalizer: Any) -> dict[str, Any] | None:
    """A :class:`~rowbook.text.Normalizer`'s settings (``None`` for none)."""
    if normalizer is None:
        return None
    if not isinstance(normalizer, Normalizer):
        raise TypeError(
            f"cannot save a normalizer of type {type(normalizer).__name__}: only a "
            "rowbook.text.Normalizer (or None) can be written to a model file"
        )
    return normalizer.to_dict()


def normalizer_from_json(data: dict[str, Any] | None) -> Normalizer | None:
    return None if data is None else Normalizer(**data)


def _tokenizer_to_json(tokenizer: Any) -> dict[str, Any] | None:
    if tokenizer is None:
        return None
    if isinstance(tokenizer, WordTokenizer | CharTokenizer):
        kind = "word" if isinstance(tokenizer, WordTokenizer) else "char"
        return {"type": kind, **tokenizer.to_dict()}
    if not tokenizer._fitted:
        params = tokenizer.get_params()
        return {"type": "bpe", "params": params, "file": None}
    with tempfile.TemporaryDirectory() as folder:  # the BPE's own JSON file, held as text
        path = Path(folder) / "bpe.json"
        tokenizer.save(path)
        return {"type": "bpe", "params": tokenizer.get_params(), "file": path.read_text("utf-8")}


def _tokenizer_from_json(data: dict[str, Any] | None) -> Any:
    if data is None:
        return None
    kind = data["type"]
    settings = {k: v for k, v in data.items() if k != "type"}
    if kind == "word":
        return WordTokenizer(**settings)
    if kind == "char":
        return CharTokenizer(**settings)
    if data["file"] is None:
        return ByteLevelBPE(**data["params"])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bpe.json"
        path.write_text(data["file"], "utf-8")
        bpe = ByteLevelBPE.load(path)
    bpe.cache_size = data["params"]["cache_size"]
    return bpe


def _vocab_to_json(vocab: Vocab | None) -> dict[str, Any] | None:
    if vocab is None:
        return None
    if vocab._itos is not None:
        return {"fitted": vocab.to_dict()}
    settings = {k: getattr(vocab, k) for k in _VOCAB_SETTINGS}
    return {"settings": settings | {"extra_specials": list(vocab.extra_specials)}}


def _vocab_from_json(data: dict[str, Any] | None) -> Vocab | None:
    if data is None:
        return None
    if "fitted" in data:
        return Vocab.from_dict(data["fitted"], "the vocabulary in the model file")
    return Vocab(**data["settings"])


def pipeline_to_json(pipeline: TextPipeline) -> dict[str, Any]:
    """JSON data of ``pipeline``, fitted or not (a fitted one keeps its fitted parts)."""
    fitted = pipeline._fitted
    tokenizer = pipeline.tokenizer_ if fitted else pipeline.tokenizer
    vocab = pipeline.vocab_ if fitted else pipeline.vocab
    return {
        "normalizer": normalizer_to_json(pipeline.normalizer),
        "tokenizer": _tokenizer_to_json(tokenizer),
        "vocab": _vocab_to_json(vocab),
        "fitted": fitted,
    }


def pipeline_from_json(data: dict[str, Any]) -> TextPipeline:
    """The pipeline :func:`pipeline_to_json` described, fitted again if it was."""
    pipeline = TextPipeline(
        normalizer_from_json(data["normalizer"]),
        _tokenizer_from_json(data["tokenizer"]),
        _vocab_from_json(data["vocab"]),
    )
    if data["fitted"]:
        pipeline.fit([])  # every part is fitted already: this only marks the pipeline fitted
    return pipeline


def same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal as they would be written (tuples as lists)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
