"""A SentencePiece ``.model`` file as the tokenizer it holds: a Unigram or a SentencePieceBPE.

:mod:`~rowbook.text.sentencepiece.files` reads and checks the file into its parts; here the
model type picks the tokenizer built of them: ``UNIGRAM`` a :class:`~rowbook.text.Unigram`
in SentencePiece's mode, ``BPE`` a :class:`~rowbook.text.SentencePieceBPE`. Both keep the
parsed file, so ``save_model`` writes back what was read.
"""

from __future__ import annotations

import os
from typing import Any

from rowbook.text.sentencepiece import files
from rowbook.text.sentencepiece.bpe import SentencePieceBPE

__all__ = ["from_dict", "load_model", "model_from_parts"]


def model_from_parts(parts: files.ModelParts) -> Any:
    """The tokenizer of a ``.model`` file's :class:`~rowbook.text.sentencepiece.files.ModelParts`."""
    # imported here: rowbook.text.unigram reads SentencePiece's piece kinds from this package
    from rowbook.text.unigram import Unigram
    from rowbook.text.unigram.lattice import SENTENCEPIECE

    if parts.kind == "bpe":
        return SentencePieceBPE.from_parts(parts)
    tok = Unigram(
        normalizer=parts.normalizer,
        pre_tokenizer=None,
        byte_fallback=parts.byte_fallback,
        cache_size=0,
    )
    tok.mode, tok._word_by_word = SENTENCEPIECE, parts.word_by_word
    tok._set_model(parts.pieces, parts.unk_id, kinds=parts.kinds)
    tok.decoder = parts.decoder
    tok._model_file = parts.file
    return tok


def load_model(path: str | os.PathLike) -> Any:
    """Read a SentencePiece ``.model`` file: a :class:`~rowbook.text.Unigram` or a
    :class:`~rowbook.text.SentencePieceBPE`."""
    return model_from_parts(files.read_file(path))


def from_dict(d: Any, where: str) -> Any:
    """The tokenizer of a pipeline file's SentencePiece document
    (:func:`~rowbook.text.sentencepiece.files.to_dict`)."""
    return model_from_parts(files.parts_of_dict(d, where))
