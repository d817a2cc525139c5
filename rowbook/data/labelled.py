"""Labelled text read the way fastText's supervised mode reads it: lines of tokens, labels apart.

A line of a fastText training or test file is its tokens, split on the seven bytes
fastText's ``Dictionary::readWord`` splits on (space, ``\\t``, ``\\n``, ``\\v``, ``\\f``,
``\\r``, NUL, and nothing else: a no-break space is part of a word). A token that starts
with the label prefix (``__label__`` by default) is a label, any other a word, wherever
it stands on the line; and every line ends with the end-of-sentence token ``</s>``, which
is a word like any other (a line's row average includes its row). A text given with its
labels, ``(texts, labels)``, is the line ``labels... text``: a label without the prefix
gets it.

:func:`read_labelled` reads every line once into token ids, one id per distinct token in
first-sighting order (words, labels and ``</s>`` alike), 4 bytes a token, with the count
of every token: :class:`LabelledLines`; the splitting, hashing and interning are compiled
(:mod:`rowbook.data.labelled_scan`), held to :func:`read_labelled_reference`. :func:`choose_labelled_vocab` then keeps the words
seen ``min_count`` times and the labels seen ``min_count_label`` times, each sorted by
descending count (ties in first-sighting order; fastText's ``std::sort`` leaves them in no
defined order), as fastText's ``Dictionary::threshold`` does.
:mod:`rowbook.data.labelled_ids` turns the lines into the rows a model averages.

Examples
--------
>>> lines = read_labelled(["good film", "bad  film"], [["pos"], "neg"])
>>> lines.keys, lines.counts.tolist()
(('__label__pos', 'good', 'film', '</s>', '__label__neg', 'bad'), [1, 1, 2, 2, 1, 1])
>>> lines.ids.tolist(), lines.starts.tolist()
([0, 1, 2, 3, 4, 5, 2, 3], [0, 4, 8])
>>> words, labels = choose_labelled_vocab(lines, "__label__", min_count=1, min_count_label=1)
>>> words.keys, labels.keys, words.total_words
(('film', '</s>', 'good', 'bad'), ('__label__pos', '__label__neg'), 8)
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

import numpy as np

from rowbook.checks import InputTypeError
from rowbook.corpus_files import is_file_source, iter_batches
from rowbook.data.corpus import Interner
from rowbook.data.counted_vocab import CountedVocab
from rowbook.data.labelled_scan import TokenScanner

__all__ = [
    "EOS",
    "FASTTEXT_SPACE",
    "LabelVocab",
    "LabelledLines",
    "choose_labelled_vocab",
    "fasttext_split",
    "labelled_batches",
    "line_batches",
    "read_labelled",
    "read_labelled_reference",
]

EOS = "</s>"
#: The bytes fastText's ``readWord`` splits tokens on.
FASTTEXT_SPACE = " \t\n\v\f\r\0"
_SPLIT = re.compile("[ \t\n\v\f\r\0]+")
_PYTHON_ONLY_SPACE = re.compile("[\x1c-\x1f\x00]")  # str.split splits here, fastText not / \0
#: Where ``str.split()`` and fastText cut differently: what Python counts as whitespace and
#: fastText does not, and NUL, which fastText cuts at and Python does not.
_NOT_FASTTEXT_SPACE = re.compile(
    "[\x00\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
)

LabelledData = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | Sequence[str]


def fasttext_split(line: str) -> list[str]:
    """The tokens of ``line`` as fastText's ``readWord`` cuts them.

    Examples
    --------
    >>> fasttext_split("a\\u00a0b  c\\x00d\\te")  # a no-break space is not a separator
    ['a\\xa0b', 'c', 'd', 'e']
    """
    if line.isascii() and not _PYTHON_ONLY_SPACE.search(line):
        return line.split()  # the same cuts for ASCII without \\x1c-\\x1f and NUL, 3x faster
    return [token for token in _SPLIT.split(line) if token]


class LabelledLines:
    """Every line of a labelled corpus as token ids, and every distinct token with its count.

    ``keys[i]`` is token ``i`` (first-sighting order); ``ids[starts[l]:starts[l + 1]]`` are
    the tokens of line ``l``, labels and ``</s>`` included; ``counts[i]`` how often token
    ``i`` occurs; ``hashes[i]``, when the reader had them, fastText's hash of token ``i``
    (:func:`rowbook.text.char_ngrams.fasttext_hash`, which the compiled reader computes to
    intern the token; ``None``: computed when needed).
    """

    def __init__(
        self,
        keys: Sequence[str],
        counts: np.ndarray,
        ids: np.ndarray,
        starts: np.ndarray,
        hashes: np.ndarray | None = None,
    ) -> None:
        self.keys = tuple(keys)
        self.counts = counts  # (K,) int64
        self.ids = ids  # (N,) int32
        self.starts = starts  # (L + 1,) int64
        self.hashes = hashes  # (K,) uint32 or None
        self._labels: tuple[str, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.starts) - 1

    def is_label(self, label_prefix: str) -> np.ndarray:
        """``(K,)`` bool: which keys start with ``label_prefix`` (kept for the last prefix
        asked: choosing the vocabulary and checking the lines ask twice)."""
        if self._labels is None or self._labels[0] != label_prefix:
            keys = self.keys
            found = np.fromiter((k.startswith(label_prefix) for k in keys), bool, len(keys))
            self._labels = (label_prefix, found)
        return self._labels[1]

    @property
    def tokens_per_line(self) -> np.ndarray:
        """``(L,)`` tokens of each line as fastText counts them (labels and ``</s>`` too)."""
        return np.diff(self.starts)


def line_batches(source: Any, errors: Literal["strict", "replace"]) -> Iterator[list[str]]:
    """The lines of ``source`` in batches, each a whole line (a long line's pieces, cut at
    whitespace by :func:`rowbook.corpus_files.iter_batches`, joined back into its line)."""
    pending = ""
    for texts, ends_line in iter_batches(source, errors=errors):
        if not ends_line:
            pending += texts[0]
            continue
        if pending:
            texts = [pending + texts[0], *texts[1:]]
            pending = ""
        yield texts
    if pending:
        yield [pending]


def _text_lines(texts: Any, labels: Sequence[Any] | None, prefix: str) -> list[str]:
    """The texts as lines, each text's labels (with the prefix) before it."""
    if isinstance(texts, str):
        raise InputTypeError("texts must be a list of texts, got one str; wrap it: [text]")
    texts = list(texts)
    if labels is not None and (isinstance(labels, str) or len(labels) != len(texts)):
        raise ValueError(
            f"labels must hold one entry per text ({len(texts)} texts), got "
            f"{'a str' if isinstance(labels, str) else len(labels)}; give a label (or a list "
            "of labels) for each text"
        )
    try:
        joined = "\n".join(texts)
    except TypeError:
        number = next(i for i, t in enumerate(texts) if not isinstance(t, str))
        raise InputTypeError(
            f"texts[{number}] is a {type(texts[number]).__name__}, not a str"
        ) from None
    if joined.count("\n") != max(len(texts) - 1, 0):
        number = next(i for i, t in enumerate(texts) if "\n" in t)
        raise ValueError(
            f"texts[{number}] holds a line break; a text is one line (fastText reads "
            "a line at a time): replace the line breaks with spaces"
        )
    if labels is None:
        return texts
    lines = []
    for number, (text, given) in enumerate(zip(texts, labels, strict=True)):
        given = [given] if isinstance(given, str) else list(given)
        for label in given:
            if not isinstance(label, str) or not fasttext_split(label) == [label]:
                raise ValueError(
                    f"labels[{number}] holds {label!r}; a label is a str without spaces"
                )
        names = [g if g.startswith(prefix) else prefix + g for g in given]
        lines.append(" ".join([*names, text]))
    return lines


def labelled_batches(
    data: LabelledData | Iterable[str],
    labels: Sequence[Any] | None = None,
    *,
    label_prefix: str = "__label__",
    errors: Literal["strict", "replace"] = "strict",
) -> Iterable[list[str]]:
    """The lines of ``data`` (a file source, or texts with their ``labels``) in batches:
    what :func:`read_labelled` and :meth:`~rowbook.data.labelled_ids.LineEncoder.encode_batches`
    read (see :func:`read_labelled` for the arguments)."""
    if is_file_source(data):
        if labels is not None:
            raise InputTypeError(
                "labels go with texts; a file holds its labels on each line "
                f"({label_prefix}name before the text)"
            )
        return line_batches(data, errors)
    return [_text_lines(data, labels, label_prefix)]


def read_labelled(
    data: LabelledData | Iterable[str],
    labels: Sequence[Any] | None = None,
    *,
    label_prefix: str = "__label__",
    errors: Literal["strict", "replace"] = "strict",
) -> LabelledLines:
    """Read labelled lines once: a fastText-format file source, or texts with their labels.

    Parameters
    ----------
    data : path, "-", folder, list of paths, or list of str
        Files of lines ``__label__a __label__b text ...`` (compressed, several files or a
        folder, see :mod:`rowbook.corpus_files`), or the texts themselves (one line each).
    labels : sequence, optional
        With texts: each text's label (a str) or labels (a list of str); ``None`` for texts
        without labels (to predict) or for files.
    label_prefix : str
        What a label starts with; given labels that lack it get it.
    errors : {"strict", "replace"}
        Invalid UTF-8 in files: an error naming the file and line, or U+FFFD.
    """
    scanner = TokenScanner()
    ids, lengths = [np.zeros(0, dtype=np.int32)], [np.zeros(1, dtype=np.int64)]
    for lines in labelled_batches(data, labels, label_prefix=label_prefix, errors=errors):
        if lines:
            batch, sizes = scanner.scan(lines)
            ids.append(batch)
            lengths.append(sizes)
    keys = scanner.keys()
    hashes = scanner.tokens.key_hash[: len(keys)].copy()  # (K,) fastText's, as interned
    return _lines_of(keys, np.concatenate(ids), np.concatenate(lengths), hashes)


def read_labelled_reference(
    data: LabelledData | Iterable[str],
    labels: Sequence[Any] | None = None,
    *,
    label_prefix: str = "__label__",
    errors: Literal["strict", "replace"] = "strict",
) -> LabelledLines:
    """:func:`read_labelled` in plain Python, line by line and token by token: the
    reference the compiled scanner (:mod:`rowbook.data.labelled_scan`) is held to."""
    batches = labelled_batches(data, labels, label_prefix=label_prefix, errors=errors)
    interner, ids, lengths = Interner(), array("i"), [0]
    for lines in batches:
        for line in lines:
            tokens = [*fasttext_split(line), EOS]
            ids.extend(map(interner.__getitem__, tokens))
            lengths.append(len(tokens))
    id_array = np.frombuffer(ids, dtype=np.int32) if len(ids) else np.zeros(0, np.int32)
    return _lines_of(interner.keys_in_order, id_array, np.array(lengths, dtype=np.int64))


def _lines_of(
    keys: list[str], ids: np.ndarray, lengths: np.ndarray, hashes: np.ndarray | None = None
) -> LabelledLines:
    counts = np.bincount(ids, minlength=len(keys)).astype(np.int64)  # (K,)
    return LabelledLines(keys, counts, ids, np.cumsum(lengths), hashes)  # starts (L + 1,)


class LabelVocab:
    """The labels a model knows, in id order (descending count), with their counts."""

    def __init__(self, keys: Sequence[str], counts: np.ndarray) -> None:
        self.keys = tuple(keys)
        self.counts = np.asarray(counts, dtype=np.int64)  # (nlabels,)

    def __len__(self) -> int:
        return len(self.keys)


def _by_count(ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``ids`` ordered by descending count, ties in first-sighting (id) order."""
    return ids[np.argsort(-counts[ids], kind="stable")]


def choose_labelled_vocab(
    lines: LabelledLines, label_prefix: str, *, min_count: int, min_count_label: int
) -> tuple[CountedVocab, LabelVocab]:
    """The words (``</s>`` among them) seen ``min_count`` times and the labels seen
    ``min_count_label`` times, each by descending count (fastText's ``threshold``).

    ``total_words`` of the words is every token read (labels and cut words too: fastText's
    ``ntokens``, the unit of its learning-rate schedule); ``corpus_count`` the lines.
    """
    keys, counts = lines.keys, lines.counts
    is_label = lines.is_label(label_prefix)
    every = np.arange(len(keys))
    word_ids = _by_count(every[~is_label & (counts >= min_count)], counts)
    label_ids = _by_count(every[is_label & (counts >= min_count_label)], counts)
    words = CountedVocab(
        tuple(keys[i] for i in word_ids), counts[word_ids], int(counts.sum()), len(lines)
    )
    return words, LabelVocab([keys[i] for i in label_ids], counts[label_ids])
