"""fastText's subwords: a word is the bag of its character n-grams, hashed into buckets.

Bojanowski et al. (2017) represent a word ``w`` by the ids

    [id(w)] + [nwords + fnv1a(g) % bucket  for g in ngrams("<" + w + ">", minn..maxn)]

rows of one input table of ``nwords + bucket`` rows; the word's vector is the mean of
those rows (an ``EmbeddingBag(mode="mean")`` over the bag). Every detail below is read
from fastText's ``src/dictionary.cc`` (``computeSubwords``, ``hash``, ``initNgrams``):

* n-grams are taken over the UTF-8 bytes of ``"<" + word + ">"`` but counted in Unicode
  characters: a continuation byte (``0b10xxxxxx``) never starts an n-gram and is always
  taken along with the character it belongs to;
* n-grams of ``minn`` to ``maxn`` characters, in order of start, then length; the
  one-character n-grams ``"<"`` and ``">"`` (n = 1 at either end) are left out;
* the hash is 32-bit FNV-1a, except that each byte is sign-extended first
  (``h ^= uint32(int8(byte))``), the behaviour every released fastText model was trained
  with, so bytes >= 0x80 flip the upper 24 bits too;
* an in-vocabulary word's bag starts with its own id; the end-of-sentence token ``</s>``
  has no n-grams; an unseen word's bag is its n-grams alone (empty when it has none).
"""

from __future__ import annotations

from collections.abc import Sequence

import numba
import numpy as np

from rowbook.intern_table import fnv1a

__all__ = [
    "EOS",
    "char_ngrams",
    "fasttext_hash",
    "fasttext_hashes",
    "subword_ids",
    "subword_table",
    "subword_table_reference",
]

EOS = "</s>"
BOW, EOW = "<", ">"
_FNV_OFFSET, _FNV_PRIME, _MASK32 = 2166136261, 16777619, 0xFFFFFFFF


def fasttext_hash(text: str | bytes) -> int:
    """fastText's ``Dictionary::hash``: FNV-1a over the UTF-8 bytes, each byte sign-extended.

    Examples
    --------
    >>> fasttext_hash("a"), fasttext_hash(b"a")
    (3826002220, 3826002220)
    >>> fasttext_hash("é") == fasttext_hash("é".encode())  # bytes 0xc3 0xa9, both sign-extended
    True
    """
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    h = _FNV_OFFSET
    for byte in data:
        h ^= byte | 0xFFFFFF00 if byte >= 0x80 else byte  # uint32(int8(byte))
        h = (h * _FNV_PRIME) & _MASK32
    return h


@numba.njit(cache=True, nogil=True)
def _hash_spans(data, starts, out):  # pragma: no cover - compiled
    """``out[w]`` = :func:`fasttext_hash` of the bytes ``data[starts[w]:starts[w + 1]]``."""
    for w in range(starts.shape[0] - 1):
        out[w] = fnv1a(data, starts[w], starts[w + 1])


def fasttext_hashes(words: Sequence[str]) -> np.ndarray:
    """:func:`fasttext_hash` of every word at once, compiled: ``(len(words),)`` uint32.

    Examples
    --------
    >>> fasttext_hashes(["a", "é"]).tolist() == [fasttext_hash("a"), fasttext_hash("é")]
    True
    """
    encoded = [w.encode("utf-8") for w in words]
    data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    starts = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in encoded], out=starts[1:])
    out = np.empty(len(encoded), dtype=np.uint32)
    _hash_spans(data, starts, out)
    return out


def _ngram_spans(data: bytes, minn: int, maxn: int) -> list[tuple[int, int]]:
    """Byte spans ``(i, j)`` of the n-grams of ``data`` (already wrapped in ``<`` ``>``)."""
    spans = []
    for i in range(len(data)):
        if data[i] & 0xC0 == 0x80:  # a continuation byte never starts an n-gram
            continue
        j, n = i, 1
        while j < len(data) and n <= maxn:
            j += 1
            while j < len(data) and data[j] & 0xC0 == 0x80:
                j += 1
            if n >= minn and not (n == 1 and (i == 0 or j == len(data))):
                spans.append((i, j))
            n += 1
    return spans


def char_ngrams(word: str, minn: int = 3, maxn: int = 6) -> list[str]:
    """The character n-grams of ``"<" + word + ">"`` in fastText's order (none for ``</s>``).

    Examples
    --------
    >>> char_ngrams("where", 3, 3)
    ['<wh', 'whe', 'her', 'ere', 're>']
    >>> char_ngrams("a", 1, 2)  # the lone '<' and '>' are left out
    ['<a', 'a', 'a>']
    >>> char_ngrams("né", 2, 2)  # counted in characters, not bytes
    ['<n', 'né', 'é>']
    """
    if word == EOS:
        return []
    data = (BOW + word + EOW).encode("utf-8")
    return [data[i:j].decode("utf-8") for i, j in _ngram_spans(data, minn, maxn)]


def subword_ids(
    word: str, *, minn: int, maxn: int, bucket: int, nwords: int, word_id: int | None = None
) -> np.ndarray:
    """The bag of ``word``: its own id (when in the vocabulary), then its n-gram rows.

    ``nwords + fasttext_hash(g) % bucket`` for each n-gram ``g`` of :func:`char_ngrams`.

    Examples
    --------
    >>> [fasttext_hash(g) % 10 for g in char_ngrams("ab", 3, 3)]  # '<ab', 'ab>'
    [8, 6]
    >>> subword_ids("ab", minn=3, maxn=3, bucket=10, nwords=2, word_id=1).tolist()
    [1, 10, 8]
    """
    ids = [] if word_id is None else [word_id]
    if word != EOS and maxn > 0 and bucket > 0:
        data = (BOW + word + EOW).encode("utf-8")
        ids += [
            nwords + fasttext_hash(data[i:j]) % bucket for i, j in _ngram_spans(data, minn, maxn)
        ]
    return np.array(ids, dtype=np.int64)


def subword_table_reference(
    words: Sequence[str], *, minn: int, maxn: int, bucket: int
) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ids)``: the bags of a whole vocabulary (word ``i``'s id first), CSR style.

    Bag ``i`` is ``ids[starts[i]:starts[i + 1]]``; plain Python, the reference of
    :func:`subword_table`.

    Examples
    --------
    >>> starts, ids = subword_table_reference(["ab", "</s>"], minn=3, maxn=3, bucket=10)
    >>> starts.tolist(), ids.tolist()
    ([0, 3, 4], [0, 10, 8, 1])
    """
    bags = [
        subword_ids(w, minn=minn, maxn=maxn, bucket=bucket, nwords=len(words), word_id=i)
        for i, w in enumerate(words)
    ]
    starts = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in bags], out=starts[1:])
    ids = np.concatenate(bags).astype(np.int32) if bags else np.zeros(0, dtype=np.int32)
    return starts, ids


@numba.njit(cache=True, nogil=True)
def _bags(data, word_starts, eos, minn, maxn, bucket, fill, starts, ids):  # pragma: no cover
    """Per word (bytes ``data[word_starts[w]:word_starts[w + 1]]``, wrapped): its bag size;
    with ``fill``, also its id and then its hashed n-gram rows written into ``ids[starts[w]:]``.

    One walk serves both passes (count, then fill): the branch on ``fill`` is taken the same
    way all pass long, and the counting pass never hashes.
    """
    n_words = word_starts.shape[0] - 1
    sizes = np.ones(n_words, dtype=np.int64)
    for w in range(n_words):
        at, size = starts[w], 1
        if fill:
            ids[at] = w
        if eos[w]:
            continue
        lo, hi = word_starts[w], word_starts[w + 1]
        for i in range(lo, hi):
            if data[i] & 0xC0 == 0x80:
                continue
            j, n = i, 1
            while j < hi and n <= maxn:
                j += 1
                while j < hi and data[j] & 0xC0 == 0x80:
                    j += 1
                if n >= minn and not (n == 1 and (i == lo or j == hi)):
                    if fill:
                        ids[at + size] = n_words + np.int64(fnv1a(data, i, j) % np.uint32(bucket))
                    size += 1
                n += 1
        sizes[w] = size
    return sizes


def subword_table(
    words: Sequence[str], *, minn: int, maxn: int, bucket: int
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`subword_table_reference` compiled: ``(starts (V + 1,) int64, ids (n,) int32)``.

    A 2M-word vocabulary takes about a second instead of minutes.
    """
    wrapped = [(BOW + w + EOW).encode("utf-8") for w in words]
    data = np.frombuffer(b"".join(wrapped), dtype=np.uint8)
    word_starts = np.zeros(len(words) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in wrapped], out=word_starts[1:])
    eos = np.array([w == EOS for w in words], dtype=np.bool_)
    if maxn <= 0 or bucket <= 0:
        eos[:] = True  # no n-grams at all: every bag is the word alone
    starts = np.zeros(len(words) + 1, dtype=np.int64)
    ids = np.empty(0, dtype=np.int32)
    np.cumsum(_bags(data, word_starts, eos, minn, maxn, 1, False, starts, ids), out=starts[1:])
    ids = np.empty(int(starts[-1]), dtype=np.int32)
    _bags(data, word_starts, eos, minn, maxn, max(bucket, 1), True, starts, ids)
    return starts, ids
