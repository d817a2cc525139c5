"""What every subword tokenizer answers about its vocabulary: ids and tokens, both ways.

:class:`TokenTable` is the half of the one interface that does not depend on the model:
``vocab``, ``special_tokens``, ``len``, ``token_to_id``, ``id_to_token`` and the checks of
the ids given to ``decode``. :class:`~rowbook.text.ByteLevelBPE` and
:class:`~rowbook.text.subword_pipeline.SubwordTokenizer` (WordPiece, Unigram, SentencePiece BPE)
inherit it; a class provides ``_vocab`` (token -> id), ``_id_to_token``, ``_special_ids``
and ``_check_fitted``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from rowbook.checks import InputIndexError, InputTypeError, UnknownKeyError

__all__ = ["TokenTable"]


class TokenTable:
    """Token <-> id lookups shared by the subword tokenizers (see the module docstring)."""

    _vocab: dict[str, int]
    _id_to_token: list[str]
    _special_ids: dict[str, int]

    def _check_fitted(self) -> None:
        raise NotImplementedError

    @property
    def vocab(self) -> dict[str, int]:
        """Token -> id (added tokens included)."""
        self._check_fitted()
        return dict(self._vocab)

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token -> id (left out by ``decode`` by default)."""
        self._check_fitted()
        return dict(self._special_ids)

    def __len__(self) -> int:
        self._check_fitted()
        return len(self._id_to_token)

    def token_to_id(self, token: str) -> int:
        """The id of a token (``KeyError`` naming it when unknown)."""
        self._check_fitted()
        if token not in self._vocab:
            raise UnknownKeyError(f"token {token!r} is not in the vocabulary of {len(self)} tokens")
        return self._vocab[token]

    def id_to_token(self, token_id: int) -> str:
        """The token of an id (``IndexError`` naming the valid range)."""
        self._check_fitted()
        if not isinstance(token_id, int | np.integer) or not 0 <= token_id < len(self):
            raise InputIndexError(f"token id {token_id!r} is out of range [0, {len(self)})")
        return self._id_to_token[token_id]

    def add_tokens(self, tokens: Sequence[str]) -> int:
        """Add tokens that are never split, with the next ids; return how many are new.

        As ``tokenizers``' ``add_tokens``: a token already in the vocabulary keeps its id
        (and is from now on never split); the tokenizer's files keep them.
        """
        return self._add(tokens, special=False)

    def add_special_tokens(self, tokens: Sequence[str]) -> int:
        """:meth:`add_tokens` for special tokens (left out by ``decode`` by default)."""
        return self._add(tokens, special=True)

    def _add(self, tokens: Sequence[str], special: bool) -> int:
        raise NotImplementedError

    def _checked_ids(self, ids: Iterable[int] | Any) -> np.ndarray:
        """``ids`` as a 1-d integer array of valid ids, or the error a user can act on."""
        from rowbook.text.bpe.result import Encoding

        if isinstance(ids, Encoding):
            raise InputTypeError("decode takes ids, got an Encoding; pass encoding.ids")
        ids = np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids)
        if ids.size and (ids.dtype.kind not in "iu" or ids.ndim != 1):
            raise InputTypeError(
                f"ids must be a 1-d sequence of ints, got dtype {ids.dtype}, ndim {ids.ndim}"
            )
        if ids.size and (ids.min() < 0 or ids.max() >= len(self)):
            bad = ids[(ids < 0) | (ids >= len(self))][0]
            raise InputIndexError(f"token id {int(bad)} is out of range [0, {len(self)})")
        return ids
