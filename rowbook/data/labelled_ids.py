"""Lines to the input rows a supervised fastText model averages: words, char n-grams, word n-grams.

One file over 400 lines on purpose: the line encoder, the compiled assembly of its rows and
the plain reference the tests hold it to stay side by side.

fastText's ``Dictionary::getLine`` (the supervised one) turns a line into a list of rows
of the input table ``W_in`` (``nwords + bucket`` rows) and a list of label ids:

* a word of the vocabulary adds its row ``id(w)``, then, with ``maxn > 0``, the rows
  ``nwords + fnv1a(g) % bucket`` of its character n-grams (:mod:`rowbook.text.char_ngrams`);
* a word outside the vocabulary adds only its n-gram rows (none when ``maxn = 0``);
* a label of the vocabulary adds its id to the labels; an unknown label is skipped;
* every word, known or not, ``</s>`` included, also gives its 32-bit hash to the word
  n-grams, which come after all the words' rows: for each position ``i`` and each
  ``j = i + 1 .. i + word_ngrams - 1``, ``h = h * 116049371 + hash[j]`` (starting from
  ``h = hash[i]``) adds the row ``nwords + h % bucket``. The arithmetic is fastText's
  exactly: each hash is held as a *signed* 32-bit integer and widened to unsigned 64 bits
  with its sign (``uint64_t h = hashes[i]`` on an ``int32_t``), products wrap modulo 2**64.

A quantised model (``.ftz``) may keep only some buckets (``pruneidx``): a hashed bucket
``b`` is then row ``nwords + prune[b]``, or dropped when ``prune[b] < 0``
(``Dictionary::pushHash``).

:class:`LineEncoder` holds a model's dictionary and encodes
:class:`~rowbook.data.labelled.LabelledLines` in two compiled passes (count, then fill);
:func:`encode_line_reference` is the same thing in plain Python, token by token as
fastText reads them, which the tests hold the kernel to.

Examples
--------
>>> from rowbook.data.labelled import read_labelled
>>> enc = LineEncoder(["good", "film", "</s>"], ["__label__pos"], word_ngrams=2, bucket=10)
>>> lines = enc.encode(read_labelled(["good film", "new film"], [["pos"], ["pos"]]))
>>> lines.inputs(0).tolist(), lines.labels(0).tolist()
([0, 1, 2, 8, 9], [0])
>>> [int(r) for r in lines.inputs(1)] == encode_line_reference(enc, ["__label__pos", "new", "film", "</s>"])[0]
True
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numba
import numpy as np

from rowbook.data.labelled import EOS, LabelledLines
from rowbook.data.labelled_scan import TokenScanner
from rowbook.intern_table import InternTable
from rowbook.text.char_ngrams import fasttext_hash, fasttext_hashes, subword_ids, subword_table

__all__ = ["NGRAM_MULTIPLIER", "EncodedLines", "LineEncoder", "encode_line_reference"]

#: fastText's multiplier of the word n-gram hash (``Dictionary::addWordNgrams``).
NGRAM_MULTIPLIER = 116049371

_WORD, _UNKNOWN_WORD, _LABEL, _UNKNOWN_LABEL = 0, 1, 2, 3
_MASK64 = (1 << 64) - 1


class EncodedLines:
    """Each line's input rows and label ids, CSR style, and its token count.

    ``input_ids[input_starts[l]:input_starts[l + 1]]`` are line ``l``'s rows of ``W_in``,
    ``label_ids[label_starts[l]:label_starts[l + 1]]`` its labels, ``tokens[l]`` the tokens
    it holds as fastText counts them (the unit of the learning-rate schedule).
    """

    def __init__(
        self,
        input_starts: np.ndarray,
        input_ids: np.ndarray,
        label_starts: np.ndarray,
        label_ids: np.ndarray,
        tokens: np.ndarray,
    ) -> None:
        self.input_starts, self.input_ids = input_starts, input_ids  # (L + 1,) int64, (T,) int32
        self.label_starts, self.label_ids = label_starts, label_ids  # (L + 1,) int64, (M,) int32
        self.tokens = tokens  # (L,) int64

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def total_tokens(self) -> int:
        return int(self.tokens.sum())

    def inputs(self, line: int) -> np.ndarray:
        return self.input_ids[self.input_starts[line] : self.input_starts[line + 1]]

    def labels(self, line: int) -> np.ndarray:
        return self.label_ids[self.label_starts[line] : self.label_starts[line + 1]]


@numba.njit(cache=True, nogil=True)
def _push_hash(bucket_id, nwords, prune, pruned, out, k, fill):  # pragma: no cover - compiled
    """fastText's ``pushHash``: the row of hashed bucket ``bucket_id`` (or none, pruned)."""
    if pruned:
        bucket_id = prune[bucket_id]
        if bucket_id < 0:
            return k
    if fill:
        out[k] = nwords + bucket_id
    return k + 1


@numba.njit(cache=True, nogil=True)
def _assemble(
    ids,
    starts,
    kind,
    target,
    hashes,
    bag_starts,
    bag_ids,
    word_ngrams,
    bucket,
    nwords,
    prune,
    pruned,
    in_starts,
    in_ids,
    lab_starts,
    lab_ids,
    fill,
):  # pragma: no cover - compiled
    """Count (``fill=False``) or write each line's input rows and labels (see the module)."""
    longest = 0
    for line in range(starts.shape[0] - 1):
        longest = max(longest, starts[line + 1] - starts[line])
    line_hashes = np.empty(longest, dtype=np.int64)
    k, m = np.int64(0), np.int64(0)
    multiplier = np.uint64(116049371)
    for line in range(starts.shape[0] - 1):
        if fill:
            k, m = in_starts[line], lab_starts[line]
        n = 0
        for p in range(starts[line], starts[line + 1]):
            key = ids[p]
            kd = kind[key]
            if kd == 2:
                if fill:
                    lab_ids[m] = target[key]
                m += 1
            elif kd <= 1:
                for q in range(bag_starts[key], bag_starts[key + 1]):
                    if fill:
                        in_ids[k] = bag_ids[q]
                    k += 1
                line_hashes[n] = hashes[key]  # the signed 32-bit hash, widened with its sign
                n += 1
        for i in range(n):
            h = np.uint64(line_hashes[i])
            for j in range(i + 1, min(n, i + word_ngrams)):
                h = h * multiplier + np.uint64(line_hashes[j])
                k = _push_hash(
                    np.int64(h % np.uint64(bucket)), nwords, prune, pruned, in_ids, k, fill
                )
        if not fill:
            in_starts[line + 1] = k
            lab_starts[line + 1] = m


class LineEncoder:
    """A supervised model's dictionary: words and labels in id order, and its n-gram options.

    Parameters
    ----------
    words, labels : sequence of str
        The vocabulary (``nwords`` words, ``</s>`` among them) and the labels, in id order.
    label_prefix : str
        What an unknown token starts with to be taken for a label (and skipped).
    word_ngrams, minn, maxn, bucket : int
        Word n-grams up to ``word_ngrams`` words, character n-grams of ``minn`` to ``maxn``
        characters (``maxn = 0``: none), in ``bucket`` hash buckets.
    prune : numpy.ndarray, optional
        ``(bucket,)`` int32: the kept row of each bucket, ``-1`` where it is dropped
        (a quantised model's ``pruneidx``); ``None`` keeps every bucket.
    """

    def __init__(
        self,
        words: Sequence[str],
        labels: Sequence[str],
        *,
        label_prefix: str = "__label__",
        word_ngrams: int = 1,
        minn: int = 0,
        maxn: int = 0,
        bucket: int = 0,
        prune: np.ndarray | None = None,
    ) -> None:
        self.words, self.labels = tuple(words), tuple(labels)
        self.word_index = {w: i for i, w in enumerate(self.words)}
        self.label_index = {label: i for i, label in enumerate(self.labels)}
        self.label_prefix = label_prefix
        self.word_ngrams, self.minn, self.maxn, self.bucket = word_ngrams, minn, maxn, bucket
        self.prune = prune
        self._word_bags: tuple[np.ndarray, np.ndarray] | None = None
        self._known: InternTable | None = None
        if (word_ngrams > 1 or maxn > 0) and bucket < 1:
            raise ValueError(
                f"word n-grams ({word_ngrams}) or char n-grams (maxn={maxn}) need buckets, "
                "got bucket=0"
            )

    @property
    def nwords(self) -> int:
        return len(self.words)

    def _bags(self, keys: Sequence[str], own: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, ids)``: the rows each word of ``keys`` adds, its own id ``own[i]`` (or
        none when ``-1``) then its char n-grams' rows (fastText's ``addSubwords``)."""
        use_ngrams = self.maxn > 0 and self.bucket > 0
        if not use_ngrams:  # each word's own row, if it has one (no n-grams to hash)
            keep = np.asarray(own) >= 0
            starts = np.zeros(len(keys) + 1, dtype=np.int64)
            np.cumsum(keep, out=starts[1:])
            return starts, np.asarray(own)[keep].astype(np.int32)
        starts, ids = subword_table(
            keys, minn=self.minn, maxn=self.maxn if use_ngrams else 0, bucket=self.bucket
        )
        rows = ids.astype(np.int64)  # (n,)
        first = starts[:-1]
        is_ngram = np.ones(len(rows), dtype=bool)
        is_ngram[first] = False
        rows[first] = own
        grams = rows[is_ngram] - len(keys)  # bucket of each n-gram
        if self.prune is not None:
            grams = self.prune[grams].astype(np.int64)
        rows[is_ngram] = np.where(grams >= 0, grams + self.nwords, -1)
        keep = rows >= 0
        sizes = np.add.reduceat(keep, first) if len(keys) else np.zeros(0, np.int64)
        sizes[starts[:-1] == starts[1:]] = 0  # (reduceat of an empty bag reads the next one)
        new_starts = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(sizes, out=new_starts[1:])
        return new_starts, rows[keep].astype(np.int32)

    def word_bags(self) -> tuple[np.ndarray, np.ndarray]:
        """``(starts, ids)``: the rows of each vocabulary word (``getSubwords``): its own id,
        then its n-grams'. Word ``i``'s vector is the mean of ``W_in`` over them (made once)."""
        if self._word_bags is None:
            self._word_bags = self._bags(self.words, np.arange(self.nwords))
        return self._word_bags

    def known(self) -> InternTable:
        """The words, then the labels, as a compiled table: word ``i`` is key ``i``, label
        ``j`` key ``nwords + j`` (made once; only read after)."""
        if self._known is None:
            keys = [k.encode("utf-8") for k in (*self.words, *self.labels)]
            ends = np.cumsum([len(k) for k in keys], dtype=np.int64)  # (K,)
            data = np.frombuffer(b"".join(keys), dtype=np.uint8)
            table = InternTable()
            ids = table.intern(data, ends - [len(k) for k in keys], ends)
            if not np.array_equal(ids, np.arange(len(keys))):
                raise ValueError("a model's words and labels must be distinct strings")
            self._known = table
        return self._known

    def encode_batches(self, batches: Iterable[list[str]]) -> EncodedLines:
        """:meth:`encode` of lines read straight from ``batches`` of text lines
        (:func:`rowbook.data.labelled.labelled_batches`), what prediction reads.

        The tokens are cut and looked up in :meth:`known` in one compiled pass; only the
        tokens the model does not know are interned (their hash feeds the word n-grams), and
        decoded to strings only when they have char n-grams. The same rows as
        ``encode(read_labelled(...))``, which the tests hold it to, without a Python step
        per distinct token.
        """
        known = self.known()
        scanner = TokenScanner(known)
        ids, lengths = [np.zeros(0, dtype=np.int32)], [np.zeros(1, dtype=np.int64)]
        for lines in batches:
            if lines:
                batch, sizes = scanner.scan(lines)
                ids.append(batch)
                lengths.append(sizes)
        starts = np.cumsum(np.concatenate(lengths))  # (L + 1,)
        unknown = scanner.tokens
        n_known, U = len(known), len(unknown)
        nw = self.nwords
        prefix = np.frombuffer(self.label_prefix.encode("utf-8"), dtype=np.uint8)
        labelled = _starts_with(unknown.arena, unknown.key_start[:U], unknown.key_len[:U], prefix)
        kind = np.full(n_known + U, _LABEL, dtype=np.int8)  # (K,)
        kind[:nw] = _WORD
        kind[n_known:] = np.where(labelled, _UNKNOWN_LABEL, _UNKNOWN_WORD)
        target = np.full(n_known + U, -1, dtype=np.int32)  # (K,)
        target[:n_known] = np.concatenate([np.arange(nw), np.arange(n_known - nw)])
        hashes = np.concatenate([known.key_hash[:n_known], unknown.key_hash[:U]])
        word_starts, word_ids = self.word_bags()
        sizes = np.zeros(n_known + U, dtype=np.int64)  # (K,) rows each key adds
        sizes[:nw] = np.diff(word_starts)
        bag_ids = word_ids
        if self.maxn > 0 and self.bucket > 0:  # unknown words: their char n-grams
            words = np.flatnonzero(~labelled)
            keys = scanner.keys()
            grams = self._bags([keys[i] for i in words], np.full(len(words), -1))
            sizes[n_known + words] = np.diff(grams[0])
            bag_ids = np.concatenate([word_ids, grams[1]])
        key_starts = np.zeros(n_known + U + 1, dtype=np.int64)
        np.cumsum(sizes, out=key_starts[1:])
        tables = (np.concatenate(ids), starts, kind, target, hashes.view(np.int32))
        return self._assembled(*tables, key_starts, bag_ids, np.diff(starts))

    def encode(self, lines: LabelledLines) -> EncodedLines:
        """The input rows and labels of every line (see the module docstring)."""
        keys = lines.keys
        K = len(keys)
        target = np.fromiter(map(self.word_index.get, keys, itertools.repeat(-1)), np.int32, K)
        kind = np.where(target >= 0, _WORD, _UNKNOWN_WORD).astype(np.int8)  # (K,)
        for i in np.flatnonzero(target < 0).tolist():  # the labels, and unknown tokens
            if keys[i] in self.label_index:
                kind[i], target[i] = _LABEL, self.label_index[keys[i]]
            elif keys[i].startswith(self.label_prefix):
                kind[i] = _UNKNOWN_LABEL
        hashes = lines.hashes if lines.hashes is not None else fasttext_hashes(keys)
        hashes = hashes.view(np.int32)  # (K,) signed
        word_keys = np.flatnonzero(kind <= _UNKNOWN_WORD)
        bag_starts, bag_ids = self._bags([keys[i] for i in word_keys], target[word_keys])
        sizes = np.zeros(K, dtype=np.int64)
        sizes[word_keys] = np.diff(bag_starts)
        key_starts = np.zeros(K + 1, dtype=np.int64)
        np.cumsum(sizes, out=key_starts[1:])
        tables = (lines.ids, lines.starts, kind, target, hashes)
        return self._assembled(*tables, key_starts, bag_ids, lines.tokens_per_line)

    def _assembled(
        self,
        ids: np.ndarray,
        starts: np.ndarray,
        kind: np.ndarray,
        target: np.ndarray,
        hashes: np.ndarray,
        key_starts: np.ndarray,
        bag_ids: np.ndarray,
        tokens: np.ndarray,
    ) -> EncodedLines:
        """The lines of tokens ``ids`` (CSR ``starts``) as rows and labels, given each
        token key's kind, target, signed 32-bit hash and rows (CSR ``key_starts``)."""
        L = len(starts) - 1
        in_starts = np.zeros(L + 1, dtype=np.int64)
        lab_starts = np.zeros(L + 1, dtype=np.int64)
        prune = self.prune if self.prune is not None else np.zeros(0, dtype=np.int32)
        tables = (ids, starts, kind, target, hashes.astype(np.int64), key_starts, bag_ids)
        options = (
            self.word_ngrams,
            max(self.bucket, 1),
            self.nwords,
            prune,
            self.prune is not None,
        )
        empty = np.zeros(0, dtype=np.int32)
        _assemble(*tables, *options, in_starts, empty, lab_starts, empty, False)  # sizes
        in_ids = np.empty(int(in_starts[-1]), dtype=np.int32)  # (T,)
        lab_ids = np.empty(int(lab_starts[-1]), dtype=np.int32)  # (M,)
        _assemble(*tables, *options, in_starts, in_ids, lab_starts, lab_ids, True)
        return EncodedLines(in_starts, in_ids, lab_starts, lab_ids, tokens)


@numba.njit(cache=True, nogil=True)
def _starts_with(arena, key_start, key_len, prefix):  # pragma: no cover - compiled
    """Whether each key ``arena[key_start[i]:][:key_len[i]]`` starts with ``prefix``."""
    out = np.zeros(key_start.shape[0], dtype=np.bool_)
    for i in range(key_start.shape[0]):
        if key_len[i] >= prefix.shape[0]:
            same = True
            for j in range(prefix.shape[0]):
                if arena[key_start[i] + j] != prefix[j]:
                    same = False
                    break
            out[i] = same
    return out


def encode_line_reference(
    encoder: LineEncoder, tokens: Sequence[str]
) -> tuple[list[int], list[int]]:
    """One line's ``(input rows, label ids)`` in plain Python, read as fastText's supervised
    ``getLine`` reads it (the tokens include the final ``</s>``). The reference of
    :meth:`LineEncoder.encode`."""
    rows: list[int] = []
    labels: list[int] = []
    hashes: list[int] = []
    nwords, bucket, prune = encoder.nwords, encoder.bucket, encoder.prune

    def push(b: int) -> None:
        if prune is not None:
            b = int(prune[b])
            if b < 0:
                return
        rows.append(nwords + b)

    for token in tokens:
        h = fasttext_hash(token)
        if token in encoder.label_index or (
            token not in encoder.word_index and token.startswith(encoder.label_prefix)
        ):
            if token in encoder.label_index:
                labels.append(encoder.label_index[token])
            continue
        wid = encoder.word_index.get(token)
        if wid is not None:
            rows.append(wid)
        if encoder.maxn > 0 and token != EOS:
            grams = subword_ids(
                token, minn=encoder.minn, maxn=encoder.maxn, bucket=bucket, nwords=0
            )
            for g in grams.tolist():
                push(g)
        hashes.append(h - (1 << 32) if h >= 1 << 31 else h)  # as int32_t
    for i in range(len(hashes)):
        h = hashes[i] & _MASK64  # int32 -> uint64 with its sign
        for j in range(i + 1, min(len(hashes), i + encoder.word_ngrams)):
            h = (h * NGRAM_MULTIPLIER + (hashes[j] & _MASK64)) & _MASK64
            push(h % bucket)
    return rows, labels
