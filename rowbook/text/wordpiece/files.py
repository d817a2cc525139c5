"""Files of a :class:`~rowbook.text.WordPiece`: ``tokenizer.json``, BERT's ``vocab.txt``, rowbook's JSON.

* ``tokenizer.json`` (``FILES.to_tokenizer_json`` / ``FILES.from_tokenizer_json``): a
  ``WordPiece`` model (``unk_token``, ``continuing_subword_prefix``,
  ``max_input_chars_per_word``, ``vocab``), its normalizer (``BertNormalizer`` or another of
  :mod:`rowbook.text.components`), pre-tokenizer, post-processor (``TemplateProcessing`` or
  ``BertProcessing``, ``[CLS] $A [SEP]``) and ``WordPiece`` decoder;
* ``vocab.txt``: one token per line, the line number being the id (trailing whitespace,
  ``\\r`` included, is not part of a token, as ``tokenizers`` reads it). A token given twice
  is refused: ``tokenizers`` would keep the later line's id and leave the earlier id
  without a token;
* rowbook's own file (``FILES.save`` / ``FILES.load``): ``{"format": "rowbook.WordPiece", "version": 1,
  "tokenizer": {...tokenizer.json...}}``.
"""

from __future__ import annotations

import os
from typing import Any

from rowbook.corpus_files import check_regular_file
from rowbook.io import atomic_write, read_text
from rowbook.text import hf_files

__all__ = ["FILES", "from_document", "read_vocab_txt", "write_vocab_txt"]

MAX_VOCAB_BYTES = 1 << 30  # a vocab.txt larger than this is refused before it is read


def read_vocab_txt(path: str | os.PathLike) -> list[str]:
    """The tokens of a ``vocab.txt`` in id order."""
    path = check_regular_file(path, "vocab.txt")
    text = read_text(
        path, "vocab.txt", max_bytes=MAX_VOCAB_BYTES, too_large="a vocabulary is smaller"
    )
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tokens = [line.rstrip() for line in lines]
    seen: dict[str, int] = {}
    for n, token in enumerate(tokens, start=1):
        if token in seen:
            raise ValueError(
                f"vocab.txt file {path}, line {n}: token {token!r} already is line "
                f"{seen[token]}; every token needs one line"
            )
        seen[token] = n
    return tokens


def write_vocab_txt(tokens: list[str], path: str | os.PathLike) -> None:
    """Write ``tokens`` one per line (atomic)."""
    bad = next((t for t in tokens if "\n" in t or t != t.rstrip()), None)
    if bad is not None:
        raise ValueError(
            f"token {bad!r} cannot be written to vocab.txt (a newline or trailing "
            "whitespace would not read back); use save() or to_tokenizer_json()"
        )
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(t + "\n" for t in tokens))


def _model(wp: Any) -> dict[str, Any]:
    size = wp._model_size
    return {
        "type": "WordPiece",
        "unk_token": wp.unk_token,
        "continuing_subword_prefix": wp.continuing_subword_prefix,
        "max_input_chars_per_word": wp.max_input_chars_per_word,
        "vocab": {t: i for i, t in enumerate(wp._id_to_token[:size])},
    }


def from_document(cls: Any, d: Any, where: str) -> Any:
    """A :class:`WordPiece` from a ``tokenizer.json`` document (already parsed)."""
    d, model = hf_files.check_document(d, "WordPiece", where)
    tokens = hf_files.model_tokens(model, where)
    params = {
        "unk_token": model.get("unk_token", "[UNK]"),
        "continuing_subword_prefix": model.get("continuing_subword_prefix", "##"),
        "max_input_chars_per_word": model.get("max_input_chars_per_word", 100),
    }
    added = hf_files.added_tokens(d, where, normalized_ok=d.get("normalizer") is None)
    all_tokens = hf_files.merge_vocab(tokens, added, where)
    full_vocab = {t: i for i, t in enumerate(all_tokens)}
    normalizer, pre, template, decoder = hf_files.pipeline_parts(d, full_vocab, where)
    try:
        wp = cls(**params, normalizer=normalizer, pre_tokenizer=pre)
        wp._set_model(all_tokens, [(t, s) for t, _, s in added], template, len(tokens))
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from None
    wp.decoder = decoder
    return wp


#: ``tokenizer.json`` and rowbook's file.
FILES = hf_files.TokenizerFiles("WordPiece", _model, from_document)
