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
``tokenizers``: ``[CLS]`` and ``[SEP]`` of a :class:`~rowbook.text.WordPiece` encoding; a
byte-level BPE adds none, so it is all zeros, and a special token written in the text
(``"<pad>"``) is 0 there too. Compare ``ids`` with ``special_tokens`` to find those.

The other subword tokenizers (:class:`~rowbook.text.WordPiece`, :class:`~rowbook.text.Unigram`,
:class:`~rowbook.text.SentencePieceBPE`) pass a function as ``source``: it computes the
tokens and offsets when either is first read.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["Encoding", "build_encodings", "byte_spans", "char_offsets", "templated"]


class Encoding:
    """One encoded text: ids and, aligned with them, tokens, character offsets and masks.

    Only ``ids`` is computed by ``encode``; the other fields are computed on first use
    (so ``bpe.encode(text).ids`` costs no more than the ids), then kept.

    Examples
    --------
    >>> e = Encoding([5, 9], ["a", "Ġb"], [(0, 1), (1, 3)])
    >>> len(e), e.ids, e.attention_mask, e.special_tokens_mask
    (2, [5, 9], [1, 1], [0, 0])
    """

    __slots__ = ("_offsets", "_source", "_special", "_tokens", "ids")  # encode_batch makes many

    def __init__(
        self,
        ids: list[int],
        tokens: list[str] | None = None,
        offsets: list[tuple[int, int]] | None = None,
        source: tuple[str, Sequence[int], Sequence[str], np.ndarray]
        | Callable[[], tuple[list[str], list[tuple[int, int]]]]
        | None = None,
        *,
        special_tokens_mask: list[int] | None = None,
    ) -> None:
        self.ids = ids
        self._tokens, self._offsets = tokens, offsets
        self._source = (
            source  # (text, prefixed tokens, id -> token, id -> byte length), or a function
        )
        self._special = special_tokens_mask

    @property
    def tokens(self) -> list[str]:
        """The tokens' byte-level spellings (special and added tokens as written)."""
        if self._tokens is None and callable(self._source):
            self._tokens, offsets = self._source()
            self._offsets = offsets if self._offsets is None else self._offsets
        if self._tokens is None:
            self._tokens = [self._source[2][i] for i in self.ids]
        return self._tokens

    @property
    def offsets(self) -> list[tuple[int, int]]:
        """``(start, end)`` character span of each token in the original text."""
        if self._offsets is None and callable(self._source):
            tokens, self._offsets = self._source()
            self._tokens = tokens if self._tokens is None else self._tokens
        if self._offsets is None:
            text, prefixed_at, _, id_len = self._source
            spans = byte_spans(id_len[np.asarray(self.ids, dtype=np.int64)], prefixed_at)  # (n, 2)
            self._offsets = char_offsets(text, spans)
        return self._offsets

    @property
    def attention_mask(self) -> list[int]:
        """All ones: an encoding is never padded."""
        return [1] * len(self.ids)

    @property
    def special_tokens_mask(self) -> list[int]:
        """Ones for tokens a post-processor added (``[CLS]``, ``[SEP]``), zeros elsewhere."""
        return list(self._special) if self._special is not None else [0] * len(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Encoding):
            return NotImplemented
        return (self.ids, self.tokens, self.offsets) == (other.ids, other.tokens, other.offsets)

    __hash__ = None  # mutable caches: not hashable, like a list

    def __repr__(self) -> str:
        return f"Encoding(ids={self.ids}, tokens={self.tokens}, offsets={self.offsets})"


def char_offsets(text: str, spans: np.ndarray) -> list[tuple[int, int]]:
    """Character spans of byte spans ``(n, 2)`` of ``text``'s UTF-8 (end exclusive).

    A span is widened to whole characters. An empty span ``(b, b)`` (a token that only
    holds an inserted prefix space) covers the character at byte ``b``, the one the space
    was put in front of, as ``tokenizers`` aligns it.

    Examples
    --------
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


def byte_spans(lengths: Sequence[int], prefixed_at: Sequence[int]) -> np.ndarray:
    """Byte spans ``(n, 2)`` in the original text of consecutive tokens of ``lengths`` bytes.

    The tokens at ``prefixed_at`` start with an inserted prefix space, a byte the text has
    not: it takes no room.

    Examples
    --------
    >>> byte_spans([2, 3, 1], [0]).tolist()
    [[0, 1], [1, 4], [4, 5]]
    """
    sizes = np.array(lengths, dtype=np.int64)  # (n,)
    sizes[np.asarray(prefixed_at, dtype=np.int64)] -= 1
    ends = np.cumsum(sizes)
    return np.stack([ends - sizes, ends], axis=1)  # (n, 2)


def build_encodings(
    texts: Sequence[str],
    ids_of: Sequence[list[int]],
    prefixed: Mapping[int, Sequence[int]],
    id_to_token: Sequence[str],
    id_len: np.ndarray,
    align: Callable[[str], Any] | None = None,
) -> list[Encoding]:
    """The :class:`Encoding` of each text from its ids; ``prefixed[i]`` lists the tokens of
    text ``i`` that hold an inserted prefix space (texts without any are left out).

    ``id_len[i]`` is the number of bytes token ``i`` spells (its special-token text for
    special and added tokens). Tokens and offsets are computed when first read. ``align``
    gives the normalized text that the ids spell, as an :class:`~rowbook.text.aligned.Aligned`
    string, when a normalizer changed it: offsets are then carried back to the original.
    """
    none: tuple[int, ...] = ()
    if align is None and not prefixed:  # most batches: no inserted space to look up per text
        # map, no keyword: 30,000 Encodings in 6.9 ms against 10.6 for a list comprehension
        # passing source=...; the repeats are endless, so the two lengths are checked here
        if len(texts) != len(ids_of):
            raise ValueError(f"{len(texts)} texts but {len(ids_of)} lists of ids")
        r = itertools.repeat
        sources = zip(texts, r(none), r(id_to_token), r(id_len), strict=False)
        return list(map(Encoding, ids_of, r(None), r(None), sources))
    if align is None:
        return [
            Encoding(ids, source=(text, prefixed.get(i, none), id_to_token, id_len))
            for i, (text, ids) in enumerate(zip(texts, ids_of, strict=True))
        ]
    return [
        Encoding(
            ids,
            source=_aligned_source(text, ids, prefixed.get(i, none), id_to_token, id_len, align),
        )
        for i, (text, ids) in enumerate(zip(texts, ids_of, strict=True))
    ]


def _aligned_source(text, ids, prefixed_at, id_to_token, id_len, align):
    """Tokens and offsets of a normalized text's ids, offsets in the original ``text``."""

    def source() -> tuple[list[str], list[tuple[int, int]]]:
        aligned = align(text)  # (C,) spans in text of each normalized character
        inner = Encoding(ids, source=(aligned.text, prefixed_at, id_to_token, id_len))
        last = aligned.ends[-1] if len(aligned) else 0
        offsets = [
            aligned.span(a, b)
            if b > a
            else ((aligned.starts[a],) * 2 if a < len(aligned) else (last, last))
            for a, b in inner.offsets
        ]
        return inner.tokens, offsets

    return source


def templated(encoding: Encoding, template: Any) -> Encoding:
    """``encoding`` inside a post-processor's template (:class:`rowbook.text.postprocess.Template`):
    its tokens before and after, at offsets ``(0, 0)``, marked in ``special_tokens_mask``.

    Examples
    --------
    >>> from rowbook.text.postprocess import Template
    >>> e = templated(Encoding([7], ["a"], [(0, 1)]), Template(("<s>",), (), {"<s>": 1}))
    >>> e.ids, e.tokens, e.offsets, e.special_tokens_mask
    ([1, 7], ['<s>', 'a'], [(0, 0), (0, 1)], [1, 0])
    """
    ids, before, after = template.apply(encoding.ids)

    def source() -> tuple[list[str], list[tuple[int, int]]]:
        tokens = [*template.before, *encoding.tokens, *template.after]
        return tokens, [(0, 0)] * before + encoding.offsets + [(0, 0)] * after

    mask = [1] * before + [0] * len(encoding.ids) + [1] * after
    return Encoding(ids, source=source, special_tokens_mask=mask)
