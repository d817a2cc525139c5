"""What SentencePiece's two models share: piece types, unknown text, the BPE merge table.

Piece types as a ``.model`` file stores them (``ModelProto.SentencePiece.Type``) and the
kinds the lattice uses (:mod:`rowbook.text.unigram.lattice`): a ``NORMAL`` piece is matched
with its score, a ``USER_DEFINED`` one with a bonus, an ``UNUSED`` one takes no part in the
Unigram lattice, and ``UNKNOWN``, ``CONTROL`` and ``BYTE`` pieces are never matched in text.

Examples
--------
>>> unknown_tokens("é", 3, unk_id=0, byte_ids=None)
[(0, 'é', 3, 4)]
>>> [t for _, t, _, _ in unknown_tokens("é", 3, unk_id=0, byte_ids=list(range(256)))]
['<0xC3>', '<0xA9>']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["KIND_OF_TYPE", "merge_tables", "unknown_tokens"]

#: ``.model`` piece type -> lattice kind (0 normal, 1 user-defined, 2 unused, 3 never matched).
KIND_OF_TYPE = {1: 0, 2: 3, 3: 3, 4: 1, 5: 2, 6: 3}


def unknown_tokens(
    text: str, start: int, unk_id: int, byte_ids: Sequence[int] | None
) -> list[tuple[int, str, int, int]]:
    """``(id, token, start, end)`` of unknown text, as SentencePiece gives it: one ``unk``
    token for the run, or with byte fallback the ``<0xXX>`` pieces of each character's UTF-8
    bytes (each spanning its character)."""
    if byte_ids is None:
        return [(unk_id, text, start, start + len(text))]
    out = []
    for k, c in enumerate(text):
        for b in c.encode("utf-8", "surrogatepass"):
            out.append((byte_ids[b], f"<0x{b:02X}>", start + k, start + k + 1))
    return out


def merge_tables(
    pieces: Sequence[str], kinds: np.ndarray
) -> tuple[dict[str, int], np.ndarray, np.ndarray]:
    """``(char ids, pair keys, new ids)`` of a BPE model.

    Symbols are pieces (normal, user-defined or unused: the ones ``bpe_model.cc`` merges
    into) or single characters; a character that is no piece gets an id past the vocabulary.
    Every way of cutting a piece in two symbols is a pair ``(left, right)`` that merges into
    it; the keys ``left << 32 | right`` come sorted, with the piece each makes.
    """
    mergeable = {p: i for i, p in enumerate(pieces) if kinds[i] in (0, 1, 2)}
    chars: dict[str, int] = {}
    for p in mergeable:
        for c in p:
            if c not in chars:
                chars[c] = mergeable.get(c, len(pieces) + len(chars))

    def symbol(s: str) -> int | None:
        return mergeable.get(s, chars.get(s) if len(s) == 1 else None)

    table: dict[int, int] = {}
    for p, i in mergeable.items():
        for k in range(1, len(p)):
            left, right = symbol(p[:k]), symbol(p[k:])
            if left is not None and right is not None:
                table[left << 32 | right] = i
    keys = np.array(sorted(table), dtype=np.int64)
    return chars, keys, np.array([table[k] for k in keys.tolist()], dtype=np.int64)
