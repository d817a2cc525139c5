"""Read a corpus once: count its words and keep the text as word ids.

A corpus is either an iterable of token lists (``[["the", "cat"], ...]``, re-iterable or
a one-shot generator) or text files: a path (``str`` or ``pathlib.Path``), ``"-"`` for
standard input, a folder, or a list of ``pathlib.Path`` (see :mod:`rowbook.corpus_files`
for the order, compression and decoding). Files are read line by line, one sentence per
line, split on whitespace unless a ``tokenizer`` (any ``str -> list[str]`` callable, or an
object with a ``tokenize`` method such as a ``TextPipeline``) is given; a line longer than
``max_sentence_length`` tokens becomes several sentences, as in gensim's ``LineSentence``.

:func:`read_corpus` makes a single pass. Every token is interned to a provisional id, so
the text is held as 4 bytes per token instead of as strings; counts come from a
``bincount`` of those ids. As in gensim 4 (``Word2Vec.build_vocab``), ``max_vocab_size``
caps the number of distinct words *during* the scan: whenever it is exceeded, words seen
fewer than ``k`` times are forgotten (``k = 1, 2, ...`` on successive prunes), and a
forgotten word that comes back starts counting from zero. The vocabulary is then chosen
from the counts by :mod:`rowbook.data.counted_vocab` (``min_count``, the order of ties)
and the provisional ids are mapped to its ids (:mod:`rowbook.data.id_stream`).

Out-of-vocabulary words are then dropped from the id stream, so windows span over them
(word2vec.c, gensim and GloVe all do this), and sentences longer than
``max_sentence_length`` in-vocabulary words are cut into pieces (gensim silently drops
the words after the 10,000th).
"""

from __future__ import annotations

import os
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np

from rowbook.corpus_files import iter_pieces
from rowbook.data import id_stream
from rowbook.data.counted_vocab import (  # truncate_vocab, vocab_from_counts: also named here
    CountedVocab,
    truncate_vocab,
    vocab_from_counts,
    vocab_order,
)
from rowbook.data.id_stream import EncodedCorpus, IdFile, RawIdSink
from rowbook.data.spill import id_bytes

__all__ = [
    "Corpus",
    "CountedVocab",
    "EncodedCorpus",
    "Interner",
    "encode_corpus",
    "is_file_source",
    "iter_sentences",
    "job_boundaries",
    "read_corpus",
    "truncate_vocab",
    "vocab_from_counts",
]

Corpus = Iterable[Sequence[str]] | str | os.PathLike | Sequence[os.PathLike]

MAX_SENTENCE_LENGTH = 10_000


def _tokenize_with(tokenizer: Any) -> Callable[[str], list[str]]:
    if tokenizer is None:
        return str.split
    if hasattr(tokenizer, "tokenize"):
        return tokenizer.tokenize
    if callable(tokenizer):
        return tokenizer
    raise TypeError(
        f"tokenizer must be None, a callable str -> list[str] or have a tokenize method, "
        f"got {type(tokenizer).__name__}"
    )


def iter_sentences(
    corpus: Corpus,
    tokenizer: Any = None,
    *,
    max_sentence_length: int = MAX_SENTENCE_LENGTH,
    errors: Literal["strict", "replace"] = "strict",
    show_progress: bool = False,
) -> Iterator[Sequence[str]]:
    """Yield the sentences (token lists) of ``corpus``; files are read line by line.

    A file source (a path, ``"-"``, a folder, or a list of those, see
    :mod:`rowbook.corpus_files`) gives one sentence per line, cut every
    ``max_sentence_length`` tokens as gensim's ``LineSentence`` does; a line is read in
    bounded pieces, never whole, so memory does not grow with its length. ``errors`` and
    ``show_progress`` apply to files only.

    Examples
    --------
    >>> list(iter_sentences([["a", "b"], ("c",)]))
    [['a', 'b'], ('c',)]
    """
    if is_file_source(corpus):
        pieces = iter_pieces(corpus, errors=errors, show_progress=show_progress)
        yield from _line_sentences(pieces, _tokenize_with(tokenizer), max_sentence_length)
        return
    if isinstance(corpus, bytes) or not isinstance(corpus, Iterable):
        raise TypeError(
            f"corpus must be a path or an iterable of token lists, got {type(corpus).__name__}"
        )
    for number, sentence in enumerate(corpus):
        if isinstance(sentence, str | bytes):
            raise TypeError(
                f"corpus item {number} is a {type(sentence).__name__}, not a list of tokens; "
                "split it first (e.g. [line.split() for line in lines]); to read files, pass "
                "paths that exist (a list of pathlib.Path is always read as files)"
            )
        yield sentence


def is_file_source(corpus: Any) -> bool:
    """A path, or a non-empty list/tuple of paths: ``pathlib.Path`` items, or ``str`` items
    that all name existing files or folders (or ``"-"``); a list of token lists is not."""
    if isinstance(corpus, str | os.PathLike):
        return True
    if not isinstance(corpus, list | tuple) or not corpus:
        return False
    if all(isinstance(item, os.PathLike) for item in corpus):
        return True
    return all(
        isinstance(item, os.PathLike)
        or (isinstance(item, str) and (item == "-" or os.path.exists(item)))
        for item in corpus
    )


def _line_sentences(
    pieces: Iterable[tuple[str, bool]], tokenize: Callable[[str], list[str]], max_len: int
) -> Iterator[list[str]]:
    """Join the pieces of each line into sentences of at most ``max_len`` tokens.

    >>> list(_line_sentences([("a b", False), (" c d e", True), ("", True)], str.split, 2))
    [['a', 'b'], ['c', 'd'], ['e'], []]
    """
    sentence: list[str] = []
    for text, ends_line in pieces:
        sentence += tokenize(text)
        start = 0
        while len(sentence) - start > max_len:
            yield sentence[start : start + max_len]
            start += max_len
        sentence = sentence[start:]
        if ends_line:
            yield sentence
            sentence = []


class Interner(dict):
    """``interner[key]`` is the key's id, assigning the next id to a new key."""

    def __missing__(self, key: str) -> int:
        index = self[key] = len(self.keys_in_order)
        self.keys_in_order.append(key)
        return index

    def __init__(self) -> None:
        super().__init__()
        self.keys_in_order: list[str] = []


def _bincount_since(raw_ids: array, start: int, size: int) -> np.ndarray:
    """Counts of the provisional ids appended since ``start`` (the buffer view dies here),
    a block at a time: ``np.bincount`` would copy the whole stream to int64 first."""
    counts = np.zeros(size, dtype=np.int64)
    fresh = np.frombuffer(raw_ids, dtype=np.int32) if len(raw_ids) else np.zeros(0, np.int32)
    for a in range(start, len(fresh), id_stream.REMAP_TOKENS):
        counts += np.bincount(fresh[a : a + id_stream.REMAP_TOKENS], minlength=size)
    return counts


def _scan(
    sentences: Iterable[Sequence[str]], max_vocab_size: int | None, sink: RawIdSink | None = None
):
    """Intern every token; prune like gensim whenever the live vocabulary is too big.

    Returns the provisional keys, the (N,) provisional ids as an ``array("i")`` (None
    when they went to ``sink``, block by block), the (S,) sentence lengths, the ids still live at the end,
    and the counts by provisional id.
    """
    interner, raw_ids, lengths = Interner(), array("i"), array("q")
    counts = np.zeros(0, dtype=np.int64)  # by provisional id, for tokens before counted_upto
    counted_upto, min_reduce = 0, 1
    for sentence in sentences:
        raw_ids.extend(map(interner.__getitem__, sentence))
        lengths.append(len(sentence))
        if sink is not None and len(raw_ids) >= id_stream.BLOCK_TOKENS:
            counts = _with_fresh(counts, raw_ids, counted_upto, len(interner.keys_in_order))
            sink.write(raw_ids)
            raw_ids, counted_upto = array("i"), 0
        if max_vocab_size and len(interner) > max_vocab_size:
            counts = _with_fresh(counts, raw_ids, counted_upto, len(interner.keys_in_order))
            counted_upto = len(raw_ids)
            for key in [k for k, i in interner.items() if counts[i] < min_reduce]:
                del interner[key]
            min_reduce += 1
    counts = _with_fresh(counts, raw_ids, counted_upto, len(interner.keys_in_order))
    if sink is not None:
        sink.write(raw_ids)
        sink.finish()
    ids = None if sink is not None else raw_ids  # the one buffer, remapped in place later
    live = np.fromiter(interner.values(), dtype=np.int64, count=len(interner))
    return interner.keys_in_order, ids, np.array(lengths, dtype=np.int64), live, counts


def _with_fresh(counts: np.ndarray, raw_ids: array, start: int, size: int) -> np.ndarray:
    total = _bincount_since(raw_ids, start, size)
    total[: len(counts)] += counts
    return total


def read_corpus(
    corpus: Corpus,
    *,
    min_count: int = 1,
    max_vocab_size: int | None = None,
    tokenizer: Any = None,
    ties: Literal["gensim", "alphabetical"] = "gensim",
    max_sentence_length: int = MAX_SENTENCE_LENGTH,
    spill_dir: str | os.PathLike[str] | None = None,
) -> tuple[CountedVocab, EncodedCorpus]:
    """Scan ``corpus`` once; return its vocabulary and its in-vocabulary id stream.

    With ``spill_dir`` (a folder) the id stream goes to a temporary file there instead of
    RAM (:mod:`rowbook.data.id_stream`), so memory stays bounded by the vocabulary however
    long the corpus; the ids, and so anything trained on them, are the same.

    Examples
    --------
    >>> vocab, enc = read_corpus([["a", "b", "a"], ["c", "a", "b"]], min_count=2)
    >>> vocab.keys, vocab.counts.tolist(), vocab.total_words
    (('a', 'b'), [3, 2], 6)
    >>> enc.ids.tolist(), enc.starts.tolist(), enc.raw_lengths.tolist()
    ([0, 1, 0, 0, 1], [0, 3, 5], [3, 3])
    """
    sink = None if spill_dir is None else _sink(corpus, spill_dir)
    sentences = iter_sentences(corpus, tokenizer, max_sentence_length=max_sentence_length)
    with _removed_on_error(sink):
        keys, raw, lengths, live, counts = _scan(sentences, max_vocab_size, sink)
    live_counts = counts[live]
    kept = live[live_counts >= min_count]
    kept = kept[vocab_order(keys, kept, counts[kept], ties)]
    vocab_keys = tuple(keys[i] for i in kept)
    vocab = CountedVocab(
        vocab_keys, counts[kept].astype(np.int64), int(lengths.sum()), len(lengths)
    )
    remap = np.full(len(keys), -1, dtype=np.int32)
    remap[kept] = np.arange(len(kept), dtype=np.int32)
    if len(live) < len(keys):  # forgotten ids of words that came back map by their key
        index = dict(zip(vocab_keys, range(len(kept)), strict=True))
        dead = np.setdiff1d(np.arange(len(keys)), live)
        remap[dead] = [index.get(keys[i], -1) for i in dead]
    with _removed_on_error(sink):
        return vocab, _encode(sink, raw, remap, lengths, max_sentence_length)


def encode_corpus(
    corpus: Corpus,
    keys: Sequence[str],
    *,
    tokenizer: Any = None,
    max_sentence_length: int = MAX_SENTENCE_LENGTH,
    spill_dir: str | os.PathLike[str] | None = None,
) -> EncodedCorpus:
    """The id stream of ``corpus`` over a vocabulary already chosen (``keys`` in id order).

    Words not in ``keys`` are dropped as :func:`read_corpus` drops out-of-vocabulary words,
    so encoding a corpus with the vocabulary ``read_corpus`` chose for it gives the same ids.
    ``spill_dir`` keeps the ids in a file there, as in :func:`read_corpus`.

    Examples
    --------
    >>> enc = encode_corpus([["a", "x", "b"], ["b"]], ("b", "a"))
    >>> enc.ids.tolist(), enc.starts.tolist(), enc.raw_lengths.tolist()
    ([1, 0, 0], [0, 2, 3], [3, 1])
    """
    sink = None if spill_dir is None else _sink(corpus, spill_dir)
    with _removed_on_error(sink):
        scanned, raw, lengths, _, _ = _scan(iter_sentences(corpus, tokenizer), None, sink)
        index = {key: i for i, key in enumerate(keys)}
        remap = np.array([index.get(key, -1) for key in scanned], dtype=np.int32)
        return _encode(sink, raw, remap, lengths, max_sentence_length)


def _sink(corpus: Corpus, spill_dir: str | os.PathLike[str]) -> RawIdSink:
    """A sink in ``spill_dir`` for the ids of ``corpus``, told the room they will need
    (twice the ids, while they are encoded) when the corpus's size says it."""
    ids = id_bytes(corpus)
    return RawIdSink(spill_dir, None if ids is None else 2 * ids)


@contextmanager
def _removed_on_error(sink: RawIdSink | None) -> Iterator[None]:
    """Remove the spilled ids of ``sink`` if the block fails (an error, Ctrl-C)."""
    try:
        yield
    except BaseException:
        if sink is not None:
            sink.close()
        raise


def _encoded(
    ids: np.ndarray,
    kept_per_sentence: np.ndarray,
    lengths: np.ndarray,
    max_len: int,
    id_file: IdFile | None = None,
) -> EncodedCorpus:
    """The corpus of in-vocabulary ``ids``, its sentences cut into pieces of ``max_len``."""
    starts, raw_piece = _layout(kept_per_sentence, lengths, max_len)
    return EncodedCorpus(ids, starts, raw_piece, id_file)


def _encode(
    sink: RawIdSink | None, raw: array | None, remap: np.ndarray, lengths: np.ndarray, max_len: int
) -> EncodedCorpus:
    """The scanned provisional ids mapped through ``remap`` (out-of-vocabulary ``-1`` dropped):
    in RAM in place, spilled into the final id file beside them."""
    if sink is None:
        ids, kept_per_sentence = id_stream.remap_in_place(raw, remap, lengths)
        return _encoded(ids, kept_per_sentence, lengths, max_len)
    blocks = sink.blocks(id_stream.REMAP_TOKENS)
    id_file, kept_per_sentence = id_stream.remap_to_file(blocks, remap, lengths, sink.folder)
    sink.raw_path.unlink()  # the folder is the id file's now
    return _encoded(id_file.ids, kept_per_sentence, lengths, max_len, id_file)


def _layout(
    kept_per_sentence: np.ndarray, lengths: np.ndarray, max_len: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sentence starts and raw lengths after cutting sentences into pieces of ``max_len``."""
    pieces = np.maximum(1, -(-kept_per_sentence // max_len))  # ceil, at least one piece
    piece_len = np.repeat(kept_per_sentence, pieces)
    first = np.concatenate([[0], np.cumsum(pieces)])[:-1]
    offset_in = np.arange(len(piece_len)) - np.repeat(first, pieces)
    piece_len = np.minimum(piece_len - offset_in * max_len, max_len)
    raw_piece = np.where(offset_in == 0, np.repeat(lengths, pieces), 0)  # raw count on 1st piece
    starts = np.concatenate([[0], np.cumsum(piece_len)]).astype(np.int64)
    return starts, raw_piece.astype(np.int64)


def job_boundaries(raw_lengths: np.ndarray, batch_words: int = MAX_SENTENCE_LENGTH) -> np.ndarray:
    """Split sentences into jobs of at most ``batch_words`` tokens, greedily, as gensim does.

    Returns sentence indices ``b`` such that job ``j`` is sentences ``[b[j], b[j + 1])``;
    a sentence longer than ``batch_words`` is a job of its own.

    Examples
    --------
    >>> job_boundaries(np.array([4, 4, 4, 9, 1]), batch_words=8).tolist()
    [0, 2, 3, 4, 5]
    """
    ends = np.cumsum(raw_lengths, dtype=np.int64)  # (S,) words up to each sentence's end
    bounds, start = [0], 0
    while start < len(ends):  # one step per job, not per sentence (10M lines: 3 s in Python)
        before = int(ends[start - 1]) if start else 0
        fits = int(np.searchsorted(ends, before + batch_words, side="right"))
        start = max(fits, start + 1)  # a sentence longer than batch_words is a job alone
        bounds.append(start)
    return np.array(bounds, dtype=np.int64)
