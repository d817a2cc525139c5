"""The tokenizer inside a GGUF file, as the rowbook tokenizer of the same kind.

A GGUF file carries its tokenizer as metadata (``tokenizer.ggml.*``): the tokens in id
order, their types (SentencePiece's numbering: 1 normal, 2 unknown, 3 control, 4
user-defined, 5 unused, 6 byte), and per model:

* ``model = "gpt2"``: a byte-level BPE. ``merges`` (``"left right"`` in rank order) and
  the pre-tokenizer named by ``pre``, whose pattern is not in the file but compiled into
  llama.cpp (``llama-vocab.cpp``); :data:`PRE_PATTERNS` holds the ones rowbook knows: GPT-2's,
  Llama-3's (which also skips the merges of a word that is a token whole,
  ``ignore_merges``) and Qwen-2's (digits one by one). It becomes a
  :class:`~rowbook.text.ByteLevelBPE`; control tokens are its special tokens (cut out of
  text, never split), user-defined ones its added tokens.
* ``model = "llama"``: SentencePiece's BPE with ``scores`` (the merge priority), byte
  fallback through the ``<0xXX>`` pieces, the text's spaces as ``"▁"`` and one in front
  (``add_space_prefix``, default true), no other normalisation. It becomes a
  :class:`~rowbook.text.SentencePieceBPE`, built from a ``.model`` written from these
  fields, so every check of a ``.model`` file applies.

:class:`GGUFTokenizer` adds what llama.cpp adds around the ids: ``bos_token_id`` in front
when ``add_bos_token``, ``eos_token_id`` at the end when ``add_eos_token``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from rowbook.gguf.format import GGUFFile, read_gguf
from rowbook.text.bpe.bytelevel import GPT2_PATTERN

__all__ = ["LLAMA3_PATTERN", "PRE_PATTERNS", "QWEN2_PATTERN", "GGUFTokenizer", "gguf_tokenizer"]

#: Llama-3's pre-tokenizer (its ``tokenizer.json``): at most three digits a word.
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: Qwen-2's: Llama-3's with one digit a word.
QWEN2_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: ``tokenizer.ggml.pre`` -> (pattern, ignore_merges), as llama.cpp's ``llama-vocab.cpp``
#: maps the names its converter writes.
PRE_PATTERNS = {
    "gpt-2": (GPT2_PATTERN, False),
    "gpt2": (GPT2_PATTERN, False),
    "llama-bpe": (LLAMA3_PATTERN, True),
    "llama3": (LLAMA3_PATTERN, True),
    "llama-v3": (LLAMA3_PATTERN, True),
    "qwen2": (QWEN2_PATTERN, False),
    "deepseek-r1-qwen": (QWEN2_PATTERN, False),
}
_BOS_BY_DEFAULT = ("llama-bpe", "llama3", "llama-v3")  # llama.cpp's default for Llama-3
_CONTROL, _USER_DEFINED, _BYTE = 3, 4, 6
_KEY = "tokenizer.ggml."


@dataclass(frozen=True)
class GGUFTokenizer:
    """A GGUF file's tokenizer: ``tokenizer`` (the rowbook tokenizer of its kind) and the
    ids llama.cpp puts around a text.

    Examples
    --------
    ``GGUFTokenizer(bpe, "gpt2", "llama-bpe", bos_id=0, eos_id=1, add_bos=True,
    add_eos=False).encode("hi")`` is ``[0, *bpe.encode("hi").ids]``.
    """

    tokenizer: Any
    model: str
    pre: str | None
    bos_id: int | None
    eos_id: int | None
    add_bos: bool
    add_eos: bool

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``, with the begin / end ids the file asks for."""
        ids = list(self.tokenizer.encode(text).ids)
        front = [self.bos_id] if self.add_bos and self.bos_id is not None else []
        back = [self.eos_id] if self.add_eos and self.eos_id is not None else []
        return front + ids + back

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return self.tokenizer.decode(ids, skip_special_tokens=skip_special_tokens)

    def __len__(self) -> int:
        return len(self.tokenizer)

    def __repr__(self) -> str:
        pre = f", pre={self.pre!r}" if self.pre else ""
        return f"GGUFTokenizer({self.model!r}{pre}, {len(self)} tokens)"


def _strings(file: GGUFFile, key: str, required: bool = True) -> list[str] | None:
    value = file.get(_KEY + key)
    if value is None and not required:
        return None
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ValueError(f"{file.path}: metadata {_KEY + key!r} must be a list of strings")
    return value


def _numbers(file: GGUFFile, key: str, n: int, default: float) -> np.ndarray:
    value = file.get(_KEY + key)
    if value is None:
        return np.full(n, default)
    if not isinstance(value, np.ndarray) or value.shape != (n,):
        raise ValueError(
            f"{file.path}: metadata {_KEY + key!r} must be an array of {n} numbers, one a token"
        )
    return value


def _token_id(file: GGUFFile, key: str, n: int) -> int | None:
    value = file.get(_KEY + key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < n:
        raise ValueError(f"{file.path}: metadata {_KEY + key!r} = {value!r} is not a token id")
    return value


def _flag(file: GGUFFile, key: str, default: bool) -> bool:
    value = file.get(_KEY + key, default)
    if not isinstance(value, bool):
        raise ValueError(f"{file.path}: metadata {_KEY + key!r} must be true or false")
    return value


def _byte_level(file: GGUFFile, tokens: list[str], types: np.ndarray) -> Any:
    from rowbook.text import ByteLevelBPE

    pre = file.get(_KEY + "pre", "gpt-2")
    if pre not in PRE_PATTERNS:
        raise ValueError(
            f"{file.path}: tokenizer.ggml.pre {pre!r} names a pre-tokenizer rowbook does not "
            f"know; it knows {', '.join(PRE_PATTERNS)}"
        )
    pattern, ignore_merges = PRE_PATTERNS[pre]
    merges = []
    for rank, merge in enumerate(_strings(file, "merges") or []):
        left, space, right = merge.partition(" ")
        if not space or not left or not right or " " in right:
            raise ValueError(f"{file.path}: merge {rank} {merge!r} is not 'left right'")
        merges.append((left, right))
    vocab = {token: i for i, token in enumerate(tokens)}
    specials = [t for t, k in zip(tokens, types, strict=True) if k == _CONTROL]
    added = [(t, False) for t, k in zip(tokens, types, strict=True) if k == _USER_DEFINED]
    bpe = ByteLevelBPE(pattern=pattern)
    try:
        bpe._set_model(vocab, merges, specials, None, ignore_merges, added)
    except ValueError as err:
        raise ValueError(f"{file.path}: the gpt2 tokenizer: {err}") from None
    return bpe, pre


def _sentencepiece(file: GGUFFile, tokens: list[str], types: np.ndarray) -> Any:
    from rowbook.text.sentencepiece.files import read_parts
    from rowbook.text.sentencepiece.loading import model_from_parts
    from rowbook.text.sentencepiece.proto import write_model

    scores = _numbers(file, "scores", len(tokens), 0.0).astype(np.float32)
    pieces = [(t, float(s), int(k)) for t, s, k in zip(tokens, scores, types, strict=True)]
    trainer = {"model_type": 2, "byte_fallback": bool((types == _BYTE).any())}
    normalizer = {
        "name": "identity",
        "add_dummy_prefix": _flag(file, "add_space_prefix", True),
        "remove_extra_whitespaces": False,
        "escape_whitespaces": True,
    }
    data = write_model(pieces, trainer, normalizer)
    return model_from_parts(read_parts(data, f"{file.path}: the llama tokenizer"))


def gguf_tokenizer(source: str | os.PathLike[str] | GGUFFile) -> GGUFTokenizer:
    """The tokenizer a GGUF file describes (``tokenizer.ggml.model`` ``"gpt2"`` or ``"llama"``)."""
    file = source if isinstance(source, GGUFFile) else read_gguf(source)
    model = file.get(_KEY + "model")
    if model not in ("gpt2", "llama"):
        raise ValueError(
            f"{file.path}: tokenizer.ggml.model {model!r} is not one rowbook reads "
            "('gpt2': byte-level BPE, 'llama': SentencePiece BPE)"
        )
    tokens = _strings(file, "tokens")
    seen: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if seen.setdefault(token, i) != i:
            raise ValueError(f"{file.path}: token {token!r} has two ids, {seen[token]} and {i}")
    types = _numbers(file, "token_type", len(tokens), 1).astype(np.int64)
    if not np.isin(types, np.arange(1, 7)).all():
        raise ValueError(f"{file.path}: metadata 'tokenizer.ggml.token_type' holds a type not 1-6")
    pre = None
    if model == "gpt2":
        tokenizer, pre = _byte_level(file, tokens, types)
    else:
        tokenizer = _sentencepiece(file, tokens, types)
    return GGUFTokenizer(
        tokenizer,
        model,
        pre,
        bos_id=_token_id(file, "bos_token_id", len(tokens)),
        eos_id=_token_id(file, "eos_token_id", len(tokens)),
        add_bos=_flag(file, "add_bos_token", model == "llama" or pre in _BOS_BY_DEFAULT),
        add_eos=_flag(file, "add_eos_token", False),
    )
