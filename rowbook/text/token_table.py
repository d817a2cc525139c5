"""What every subword tokenizer answers about its vocabulary: ids and tokens, both ways.

:class:`TokenTable` is the half of the one interface that does not depend on the model:
``vocab``, ``special_tokens``, ``len``, ``token_to_id``, ``id_to_token`` and the checks of
the ids given to ``decode``. :class:`~rowbook.text.ByteLevelBPE` and
:class:`~rowbook.text.subword.SubwordTokenizer` (WordPiece, Unigram, SentencePiece BPE)
inherit it; a class provides ``_vocab`` (token -> id), ``_id_to_token``, ``_special_ids``
and ``_check_fitted``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

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
            raise KeyError(f"token {token!r} is not in the vocabulary of {len(self)} tokens")
        return self._vocab[token]

    def id_to_token(self, token_id: int) -> str:
        """The token of an id (``IndexError`` naming the valid range)."""
        self._check_fitted()
        if not isinstance(token_id, int | np.integer) or not 0 <= token_id < len(self):
            raise IndexError(f"token id {token_id!r} is out of range [0, {len(self)})")
        return self._id_to_token[token_id]

    def _checked_ids(self, ids: Iterable[int] | Any) -> np.ndarray:
        """``ids`` as a 1-d integer array of valid ids, or the error a user can act on."""
        from rowbook.text.bpe.encoding import Encoding

        if isinstance(ids, Encoding):
            raise TypeError("decode takes ids, got an Encoding; pass encoding.ids")
        ids = np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids)
        if ids.size and (ids.dtype.kind not in "iu" or ids.ndim != 1):
            raise TypeError(
                f"ids must be a 1-d sequence of ints, got dtype {ids.dtype}, ndim {ids.ndim}"
            )
        if ids.size and (ids.min() < 0 or ids.max() >= len(self)):
            bad = ids[(ids < 0) | (ids >= len(self))][0]
            raise IndexError(f"token id {int(bad)} is out of range [0, {len(self)})")
        return ids
