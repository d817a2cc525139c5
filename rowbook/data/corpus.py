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
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np

from rowbook._threads import resolve_workers
from rowbook.checks import InputTypeError
from rowbook.corpus_files import is_file_source
from rowbook.corpus_source import CorpusSource, corpus_source
from rowbook.data import id_stream
from rowbook.data.counted_vocab import (  # truncate_vocab, vocab_from_counts: also named here
    CountedVocab,
    truncate_vocab,
    vocab_from_counts,
    vocab_order,
)
from rowbook.data.id_stream import EncodedCorpus, IdFile, RawIdSink
from rowbook.data.scan import (
    Discard,
    Interner,
    Scanned,
    line_sentences,
    parallel_parts,
    scan_parts,
    scan_sentences,
    scan_text,
)
from rowbook.data.spill import source_id_bytes

__all__ = [
    "Corpus",
    "CorpusSource",
    "CountedVocab",
    "EncodedCorpus",
    "Interner",
    "corpus_source",
    "count_words",
    "encode_corpus",
    "encode_source",
    "is_file_source",
    "iter_sentences",
    "job_boundaries",
    "read_corpus",
    "read_source",
    "sentences_of",
    "truncate_vocab",
    "vocab_from_counts",
]

Corpus = Iterable[Sequence[str]] | str | os.PathLike | Sequence[os.PathLike] | CorpusSource

MAX_SENTENCE_LENGTH = 10_000


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
    source = corpus_source(corpus, tokenizer=tokenizer, errors=errors, show_progress=show_progress)
    yield from sentences_of(source, max_sentence_length)


def sentences_of(
    source: CorpusSource, max_len: int = MAX_SENTENCE_LENGTH
) -> Iterator[Sequence[str]]:
    """The sentences of ``source``: its files' lines split by its tokenizer and cut every
    ``max_len`` tokens, or its token lists, each checked to be one."""
    if source.is_files:
        yield from line_sentences(source.pieces(), source.tokenize, max_len)
        return
    for number, sentence in enumerate(source.sentences):
        if isinstance(sentence, str | bytes):
            raise InputTypeError(
                f"corpus item {number} is a {type(sentence).__name__}, not a list of tokens; "
                "split it first (e.g. [line.split() for line in lines]); to read files, pass "
                "paths that exist (a list of pathlib.Path is always read as files)"
            )
        yield sentence


def _scan(
    source: CorpusSource,
    max_len: int,
    max_vocab_size: int | None,
    sink: Any,
    workers: int | None,
    *,
    keep_ids: bool = True,
) -> Scanned:
    """The first pass (:mod:`rowbook.data.scan`), on ``workers`` processes where it can;
    ``keep_ids=False`` counts only."""
    workers = resolve_workers(workers)
    parts = parallel_parts(source, workers, max_vocab_size)
    compiled = source.splits_on_whitespace and not max_vocab_size  # no pruning compiled
    if parts is None:
        sink = sink if keep_ids else Discard()
        if compiled:
            return scan_text(source.batches(as_bytes=True), max_len, sink)
        return scan_sentences(sentences_of(source, max_len), max_vocab_size, sink)
    return scan_parts(
        parts,
        None if compiled else source.tokenize,
        max_len=max_len,
        sink=sink,
        workers=workers,
        errors=source.errors,
        keep_ids=keep_ids,
        show_progress=source.show_progress,
    )


def count_words(
    corpus: Corpus,
    *,
    tokenizer: Any = None,
    workers: int | None = 1,
    errors: Literal["strict", "replace"] = "strict",
    show_progress: bool = False,
) -> tuple[dict[str, int], int]:
    """``(counts, lines)``: every word of ``corpus`` with its count, in order of first
    sighting, and the number of lines (sentences of token lists) read.

    The pass of :func:`read_corpus` without the id stream (what ``rowbook vocab`` counts),
    on ``workers`` processes for a file corpus. ``errors`` and ``show_progress`` apply to
    files, as in :func:`iter_sentences`.

    Examples
    --------
    >>> count_words([["b", "a", "b"], []])
    ({'b': 2, 'a': 1}, 2)
    """
    source = corpus_source(corpus, tokenizer=tokenizer, errors=errors, show_progress=show_progress)
    keys, _, lengths, _, counts = _scan(source, sys.maxsize, None, None, workers, keep_ids=False)
    return dict(zip(keys, counts.tolist(), strict=True)), len(lengths)


def read_corpus(
    corpus: Corpus,
    *,
    min_count: int = 1,
    max_vocab_size: int | None = None,
    tokenizer: Any = None,
    ties: Literal["gensim", "alphabetical"] = "gensim",
    max_sentence_length: int = MAX_SENTENCE_LENGTH,
    spill_dir: str | os.PathLike[str] | None = None,
    workers: int | None = 1,
) -> tuple[CountedVocab, EncodedCorpus]:
    """Scan ``corpus`` once; return its vocabulary and its in-vocabulary id stream.

    With ``spill_dir`` (a folder) the id stream goes to a temporary file there instead of
    RAM (:mod:`rowbook.data.id_stream`), so memory stays bounded by the vocabulary however
    long the corpus; the ids, and so anything trained on them, are the same.

    ``workers`` processes (``None``: one per core the process may use) read a file corpus
    side by side, over byte ranges of its files (:mod:`rowbook.data.scan`); the vocabulary,
    its order and the ids are those of one process, byte for byte. ``max_vocab_size``
    pruning, standard input and token lists read on one.

    Examples
    --------
    >>> vocab, enc = read_corpus([["a", "b", "a"], ["c", "a", "b"]], min_count=2)
    >>> vocab.keys, vocab.counts.tolist(), vocab.total_words
    (('a', 'b'), [3, 2], 6)
    >>> enc.ids.tolist(), enc.starts.tolist(), enc.raw_lengths.tolist()
    ([0, 1, 0, 0, 1], [0, 3, 5], [3, 3])
    """
    source = corpus_source(corpus, tokenizer=tokenizer)
    return read_source(
        source,
        min_count=min_count,
        max_vocab_size=max_vocab_size,
        ties=ties,
        max_sentence_length=max_sentence_length,
        spill_dir=spill_dir,
        workers=workers,
    )


def read_source(
    source: CorpusSource,
    *,
    min_count: int = 1,
    max_vocab_size: int | None = None,
    ties: Literal["gensim", "alphabetical"] = "gensim",
    max_sentence_length: int = MAX_SENTENCE_LENGTH,
    spill_dir: str | os.PathLike[str] | None = None,
    workers: int | None = 1,
) -> tuple[CountedVocab, EncodedCorpus]:
    """:func:`read_corpus` of a corpus already decided (a model's ``fit`` decides it once)."""
    sink = None if spill_dir is None else _sink(source, spill_dir)
    with _removed_on_error(sink):
        keys, raw, lengths, live, counts = _scan(
            source, max_sentence_length, max_vocab_size, sink, workers
        )
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
    workers: int | None = 1,
) -> EncodedCorpus:
    """The id stream of ``corpus`` over a vocabulary already chosen (``keys`` in id order).

    Words not in ``keys`` are dropped as :func:`read_corpus` drops out-of-vocabulary words,
    so encoding a corpus with the vocabulary ``read_corpus`` chose for it gives the same ids.
    ``spill_dir`` keeps the ids in a file there, and ``workers`` read a file corpus, as in
    :func:`read_corpus`.

    Examples
    --------
    >>> enc = encode_corpus([["a", "x", "b"], ["b"]], ("b", "a"))
    >>> enc.ids.tolist(), enc.starts.tolist(), enc.raw_lengths.tolist()
    ([1, 0, 0], [0, 2, 3], [3, 1])
    """
    source = corpus_source(corpus, tokenizer=tokenizer)
    return encode_source(
        source, keys, max_sentence_length=max_sentence_length, spill_dir=spill_dir, workers=workers
    )


def encode_source(
    source: CorpusSource,
    keys: Sequence[str],
    *,
    max_sentence_length: int = MAX_SENTENCE_LENGTH,
    spill_dir: str | os.PathLike[str] | None = None,
    workers: int | None = 1,
) -> EncodedCorpus:
    """:func:`encode_corpus` of a corpus already decided."""
    sink = None if spill_dir is None else _sink(source, spill_dir)
    with _removed_on_error(sink):
        scanned, raw, lengths, _, _ = _scan(source, MAX_SENTENCE_LENGTH, None, sink, workers)
        index = {key: i for i, key in enumerate(keys)}
        remap = np.array([index.get(key, -1) for key in scanned], dtype=np.int32)
        return _encode(sink, raw, remap, lengths, max_sentence_length)


def _sink(source: CorpusSource, spill_dir: str | os.PathLike[str]) -> RawIdSink:
    """A sink in ``spill_dir`` for the ids of ``source``, told the room they will need
    (twice the ids, while they are encoded) when the corpus's size says it."""
    ids = source_id_bytes(source)
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
