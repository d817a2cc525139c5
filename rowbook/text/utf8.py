"""Texts as UTF-8 bytes: the form the compiled scanners, counters and trainers read.

A ``str`` indexes characters, the kernels index bytes; these convert one into the other
without a Python object per word: :func:`utf8_of` joins texts into one buffer with the
byte offset where each ends, :func:`byte_ends` and :func:`char_ends` map offsets between
the two. A lone surrogate has no UTF-8 bytes: :func:`check_utf8` names it.

Examples
--------
>>> data, ends = utf8_of(["né", "日本"])
>>> ends.tolist(), char_ends(data, ends).tolist()
([3, 9], [2, 4])
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from rowbook.text.batches import length_ends

__all__ = ["LONG_TEXT", "byte_ends", "char_ends", "check_utf8", "utf8_len", "utf8_of"]

LONG_TEXT = 256  # characters a text on average from which utf8_of encodes texts one by one


def check_utf8(text: str) -> str:
    """``text`` if it has UTF-8 bytes (a lone surrogate has none: a ``ValueError`` with its offset)."""
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ValueError(
                f"text has a lone surrogate {text[err.start]!r} at character offset "
                f"{err.start}, which has no UTF-8 bytes; encode valid Unicode"
            ) from None
    return text


@numba.njit(cache=True, inline="always")
def utf8_len(c):  # pragma: no cover - compiled
    """The number of UTF-8 bytes of code point ``c`` (a surrogate's three, as Python's
    ``"surrogatepass"`` writes it)."""
    return 1 + (c >= 0x80) + (c >= 0x800) + (c >= 0x10000)


@numba.njit(cache=True, nogil=True)
def byte_ends(data, char_ends):  # pragma: no cover - compiled
    """The byte offsets ``(B,)`` in UTF-8 ``data`` of the character offsets ``char_ends``
    (ascending).

    Eight ASCII bytes that hold no text's end are passed at once (one load and a test of
    their top bits): on 1,833 news lines with 22 of them not ASCII, 184 us became 69 us.
    """
    out = np.empty(char_ends.shape[0], np.int64)
    chars, t, n, p = 0, 0, data.shape[0], 0
    words = data[: n - n % 8].view(np.uint64)  # (N // 8,) the data eight bytes at a time
    while p <= n:
        if p & 7 == 0 and p + 8 <= n and (t == char_ends.shape[0] or char_ends[t] >= chars + 8):
            if words[p >> 3] & np.uint64(0x8080808080808080) == 0:  # eight ASCII characters
                p += 8
                chars += 8
                continue
        if p == n or (data[p] & 0xC0) != 0x80:  # a character starts here (or the data ends)
            while t < char_ends.shape[0] and char_ends[t] == chars:
                out[t] = p
                t += 1
            chars += 1
        p += 1
    return out


@numba.njit(cache=True, nogil=True)
def char_ends(data, byte_ends):  # pragma: no cover - compiled
    """The character offsets ``(B,)`` in UTF-8 ``data`` of the byte offsets ``byte_ends``
    (ascending, each at the start of a character or at the end)."""
    out = np.empty(byte_ends.shape[0], np.int64)
    chars, t, n = 0, 0, data.shape[0]
    for p in range(n + 1):
        while t < byte_ends.shape[0] and byte_ends[t] == p:
            out[t] = chars
            t += 1
        if p < n and (data[p] & 0xC0) != 0x80:
            chars += 1
    return out


def utf8_of(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of ``texts`` joined ``(N,)`` and where each text ends in them ``(B,)``;
    a lone surrogate is a ``ValueError`` naming its offset in its text."""
    text = texts[0] if len(texts) == 1 else "".join(texts)
    try:
        if len(texts) > 1 and len(text) >= LONG_TEXT * len(texts) and not text.isascii():
            # long texts, not all ASCII: one encode each, their byte lengths the ends (on
            # NewsArticles' 64 KB documents 6 ms against 18 ms for byte_ends' walk)
            pieces = [t.encode("utf-8") for t in texts]
            lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))  # (B,)
            return np.frombuffer(b"".join(pieces), dtype=np.uint8), np.cumsum(lengths)
        data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8)  # (N,)
    except UnicodeEncodeError:
        for text in texts:
            check_utf8(text)
        raise
    if len(texts) == 1:
        return data, np.array([len(data)], dtype=np.int64)
    ends = length_ends(texts)  # (B,) in characters
    return data, (ends if len(data) == len(text) else byte_ends(data, ends))
