"""Encoding: what ``ByteLevelBPE.encode`` returns, with ``tokenizers``' field names.

``ids``, ``tokens`` and, for span labelling, ``offsets``: the ``(start, end)`` character
span of each token in the *original* string, computed as ``tokenizers`` does for byte-level
tokens:

* a token covers the characters of the bytes it spells; a token that cuts a multi-byte
  character covers that whole character, so two tokens splitting ``"é"`` both include it
  (``"hÃ"`` -> ``(0, 2)`` and ``"©llo"`` -> ``(1, 5)`` in ``"héllo"``);
* the space ``add_prefix_space`` inserts is aligned with the character it precedes: a
  token of that space alone covers that character, as in ``tokenizers``.

``attention_mask`` is all ones (rowbook does not pad an encoding; ``TextPipeline`` pads
batches). ``special_tokens_mask`` marks tokens a post-processor *added*, as in
``tokenizers``; rowbook adds none, so it is all zeros, and a special token written in the
text (``"<pad>"``) is 0 there too. Compare ``ids`` with ``special_tokens`` to find those.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Encoding", "build_encoding", "byte_spans", "char_offsets"]


@dataclass(frozen=True)
class Encoding:
    """One encoded text: ids and, aligned with them, tokens, character offsets and masks.

    >>> e = Encoding([5, 9], ["a", "Ġb"], [(0, 1), (1, 3)], [1, 1], [0, 0])
    >>> len(e), e.ids
    (2, [5, 9])
    """

    ids: list[int]
    tokens: list[str]
    offsets: list[tuple[int, int]]
    attention_mask: list[int]
    special_tokens_mask: list[int]

    def __len__(self) -> int:
        return len(self.ids)


def char_offsets(text: str, spans: np.ndarray) -> list[tuple[int, int]]:
    """Character spans of byte spans ``(n, 2)`` of ``text``'s UTF-8 (end exclusive).

    A span is widened to whole characters. An empty span ``(b, b)`` (a token that only
    holds an inserted prefix space) covers the character at byte ``b``, the one the space
    was put in front of, as ``tokenizers`` aligns it.

    >>> char_offsets("héllo", np.array([[0, 0], [0, 2], [2, 6]]))
    [(0, 1), (0, 2), (1, 5)]
    """
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)  # (C,)
    widths = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)  # UTF-8 bytes per char
    char_of = np.append(np.repeat(np.arange(len(codes)), widths), len(codes))  # (B + 1,)
    starts, ends = spans[:, 0], spans[:, 1]  # (n,) each
    first = char_of[starts]
    last = np.where(ends > starts, char_of[np.maximum(ends - 1, 0)], first) + 1
    last = np.minimum(last, len(codes))
    return list(zip(first.tolist(), last.tolist(), strict=True))


def byte_spans(lengths: Sequence[int], inserted: Sequence[int]) -> np.ndarray:
    """Byte spans ``(n, 2)`` in the original text of consecutive tokens of ``lengths`` bytes.

    ``inserted[i]`` bytes of token i (a prefix space) are not in the text: they take no room.

    >>> byte_spans([2, 3, 1], [1, 0, 0]).tolist()
    [[0, 1], [1, 4], [4, 5]]
    """
    sizes = np.asarray(lengths, dtype=np.int64) - np.asarray(inserted, dtype=np.int64)  # (n,)
    ends = np.cumsum(sizes)
    return np.stack([ends - sizes, ends], axis=1)  # (n, 2)


def build_encoding(
    text: str, ids: list[int], inserted: list[int], id_to_token: Sequence[str], id_len: np.ndarray
) -> Encoding:
    """The :class:`Encoding` of ``text`` from its ids and the inserted bytes of each token.

    ``id_len[i]`` is the number of bytes token ``i`` spells (its special-token text for
    special and added tokens).
    """
    spans = byte_spans(id_len[np.asarray(ids, dtype=np.int64)], inserted)  # (n, 2)
    return Encoding(
        ids=list(ids),
        tokens=[id_to_token[i] for i in ids],
        offsets=char_offsets(text, spans),
        attention_mask=[1] * len(ids),
        special_tokens_mask=[0] * len(ids),
    )
