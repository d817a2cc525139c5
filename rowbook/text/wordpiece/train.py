"""WordPiece training as ``tokenizers``' ``WordPieceTrainer`` does it: BPE merges over characters,
with ``"##"`` on every character but a word's first.

``tokenizers`` trains WordPiece with its BPE trainer (``WordPieceTrainer`` wraps a
``BpeTrainer`` with ``continuing_subword_prefix="##"``) and keeps every token the merges
made as the vocabulary. The steps, each as there:

1. the special tokens get the first ids;
2. the alphabet: every character of the words, weighted by the word counts, and the
   ``initial_alphabet``; past ``limit_alphabet`` the least frequent are dropped (ties: the
   smaller code point goes first here; ``tokenizers`` sorts them with an unstable sort); the
   kept characters get the next ids in code point order;
3. each word is spelled with its characters, ``"##"`` put in front of all but the first (a
   character dropped from the alphabet is left out); a ``"##c"`` symbol gets the next id
   the first time it is met;
4. the merges: most frequent pair first, ties to the smaller pair of ids, the new token
   being the left one followed by the right one without its ``"##"``
   (:func:`rowbook.text.bpe.train.train_symbol_merges`, the byte-level trainer's kernel),
   until ``vocab_size`` tokens or a best count below ``min_count``.

Where ``tokenizers`` is not deterministic. Step 3 walks its words in the order of a hash
map seeded at random in every process, so the ids of the ``"##c"`` symbols, and through the
ties of step 4 even the set of tokens learned, change from run to run (three runs on the
same text, three vocabularies). rowbook walks the words in first-sighting order. Given the
order ``tokenizers`` happened to use (``continuation_order``, read from its vocabulary), the
vocabularies are equal token for token and id for id; the tests check exactly that.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from rowbook.checks import InputTypeError, check_int
from rowbook.text.bpe.train import spelling_hash, train_symbol_merges
from rowbook.text.trie import codepoints
from rowbook.text.word_counts import as_counted, budget_bytes, count_words

__all__ = ["BERT_SPECIAL_TOKENS", "check_training_args", "fit_wordpiece", "learn_wordpiece"]

#: The special tokens ``tokenizers.BertWordPieceTokenizer`` trains with.
BERT_SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def check_training_args(
    vocab_size: Any,
    min_count: Any,
    special_tokens: Any,
    limit_alphabet: Any = None,
    initial_alphabet: Any = (),
) -> list[str]:
    """The special tokens as a list, after checking the arguments every subword trainer takes."""
    if isinstance(special_tokens, str):
        raise InputTypeError(
            f"special_tokens must be a sequence of str, got the str {special_tokens!r}"
        )
    specials = list(special_tokens)
    if not all(isinstance(t, str) and t for t in specials) or len(set(specials)) != len(specials):
        raise ValueError(f"special_tokens must be distinct non-empty str, got {specials}")
    check_int("vocab_size", vocab_size, max(len(specials), 1))
    check_int("min_count", min_count, 0)
    if limit_alphabet is not None:
        check_int("limit_alphabet", limit_alphabet, 0)
    if isinstance(initial_alphabet, str) or not all(
        isinstance(s, str) and s for s in initial_alphabet
    ):
        raise InputTypeError(
            f"initial_alphabet must be a sequence of non-empty str, got {initial_alphabet!r}"
        )
    return specials


def _alphabet(
    codes: np.ndarray, weights: np.ndarray, initial: Sequence[str], limit: int | None
) -> list[int]:
    """The kept characters (code points, sorted): counted with the word counts as weights."""
    chars, inverse = np.unique(codes, return_inverse=True)
    counts = dict(zip(chars.tolist(), np.bincount(inverse, weights=weights).tolist(), strict=True))
    for c in initial:
        counts[ord(c)] = float("inf")
    kept = list(counts)
    if limit is not None and len(kept) > limit:
        kept = sorted(kept, key=lambda c: (counts[c], c))[len(kept) - limit :]
    return sorted(kept)


def learn_wordpiece(
    word_counts: Mapping[str, int],
    vocab_size: int,
    *,
    min_count: int = 0,
    special_tokens: Sequence[str] = (),
    limit_alphabet: int | None = None,
    initial_alphabet: Sequence[str] = (),
    prefix: str = "##",
    continuation_order: Sequence[str] | None = None,
) -> list[str]:
    """The vocabulary (id order) learned from words and their counts.

    ``continuation_order`` fixes the order in which the ``prefix + character`` symbols get
    their ids (by default the order they are first met in, walking ``word_counts``).

    Examples
    --------
    >>> learn_wordpiece({"hug": 10, "pug": 5, "hugs": 5}, 12, special_tokens=["[UNK]"])
    ['[UNK]', 'g', 'h', 'p', 's', 'u', '##u', '##g', '##s', '##ug', 'hug', 'pug']
    """
    words = as_counted(word_counts)
    codes = codepoints(words.text)  # (C,)
    lengths = np.diff(words.bounds)  # (W,)
    first = np.zeros(codes.size, dtype=np.bool_)
    first[words.bounds[:-1]] = True  # (C,) the first character of each word
    tokens = list(dict.fromkeys(special_tokens))
    index = {t: i for i, t in enumerate(tokens)}

    def symbol(s: str) -> int:
        if s not in index:
            index[s] = len(tokens)
            tokens.append(s)
        return index[s]

    for c in _alphabet(
        codes,
        np.repeat(words.counts, lengths).astype(np.float64),
        [s[0] for s in initial_alphabet],
        limit_alphabet,
    ):
        symbol(chr(c))
    for s in continuation_order or ():
        symbol(s)
    known = np.array(sorted(ord(t) for t in index if len(t) == 1), dtype=np.int64)
    keep = np.isin(codes, known)  # (C,) characters outside the alphabet are left out
    ids = np.empty(codes.size, dtype=np.int64)
    head = keep & first  # the first characters take the alphabet's ids
    known_ids = np.array([index[chr(c)] for c in known.tolist()], dtype=np.int64)
    ids[head] = known_ids[np.searchsorted(known, codes[head])]
    rest = keep & ~first  # the others, "##c" symbols numbered by first sighting
    chars, where = np.unique(codes[rest], return_index=True)
    rest_ids = np.empty(chars.size, dtype=np.int64)
    for k in np.argsort(where, kind="stable").tolist():
        rest_ids[k] = symbol(prefix + chr(int(chars[k])))
    ids[rest] = rest_ids[np.searchsorted(chars, codes[rest])]
    word_of = np.repeat(np.arange(lengths.size), lengths)  # (C,)
    kept_lengths = np.bincount(word_of[keep], minlength=lengths.size)
    wstart = np.zeros(lengths.size + 1, dtype=np.int64)  # (W + 1,)
    np.cumsum(kept_lengths, out=wstart[1:])
    size = max(vocab_size, len(tokens))
    spellings = (
        np.zeros(size, np.uint64),
        np.zeros(size, np.uint64),
        np.zeros(size, np.uint64),
        np.zeros(size, np.uint64),
        np.zeros(size, np.bool_),
    )
    for i, t in enumerate(tokens):
        rest_of = t[len(prefix) :] if prefix and t.startswith(prefix) else t
        spellings[0][i], spellings[1][i] = spelling_hash([ord(c) for c in t])
        spellings[2][i], spellings[3][i] = spelling_hash([ord(c) for c in rest_of])
        spellings[4][i] = rest_of is not t
    rows = train_symbol_merges(
        ids[keep].astype(np.int32),
        wstart,
        words.counts,
        spellings,
        len(tokens),
        vocab_size,
        min_count,
    )
    for left, right, new, _ in rows.tolist():
        if new == len(tokens):
            b = tokens[right]
            tokens.append(
                tokens[left] + (b[len(prefix) :] if prefix and b.startswith(prefix) else b)
            )
    return tokens


def fit_wordpiece(
    wp: Any,
    texts: Iterable[str],
    vocab_size: int,
    *,
    min_count: int = 2,
    special_tokens: Sequence[str] = BERT_SPECIAL_TOKENS,
    limit_alphabet: int | None = None,
    initial_alphabet: Sequence[str] = (),
    word_counts: Mapping[str, int] | None = None,
    memory: float | str | None = None,
    spill_dir: str | os.PathLike | None = None,
    show_progress: bool = False,
    workers: int | None = None,
) -> Any:
    """Fit ``wp`` (a :class:`~rowbook.text.WordPiece`) on ``texts`` as ``tokenizers``'
    ``WordPieceTrainer`` does, and return it (``WordPiece.fit`` is this function).

    Parameters
    ----------
    texts : Iterable[str]
        The corpus, read once. Each text is normalized and pre-tokenized by ``wp``'s parts;
        special tokens written in it are not cut out (``tokenizers`` trains the same way).
    vocab_size : int
        Final size, special tokens and alphabet included.
    min_count : int, default 2
        Stop when the most frequent pair occurs fewer times (``tokenizers``' ``min_frequency``;
        that name is accepted too, with a ``DeprecationWarning``, as by
        :meth:`ByteLevelBPE.fit <rowbook.text.ByteLevelBPE.fit>`).
    special_tokens : Sequence[str], default ``("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")``
        The first ids; ``unk_token``, ``cls_token`` and ``sep_token`` are among them for BERT.
    limit_alphabet, initial_alphabet
        ``tokenizers``' ``WordPieceTrainer`` options (module docstring, step 2).
    word_counts : Mapping[str, int], optional
        Counts already made (of shards, within a memory budget, on Dask); ``texts`` is then
        ignored (pass ``()``).
    memory : float or str, optional
        Budget of the word counts, in gigabytes or as a size such as ``"1GB"``; past half of
        it they spill to temporary files (in ``spill_dir``) and are merged: the same counts,
        in the same order (:mod:`rowbook.text.word_counts`).
    show_progress : bool, default False
    workers : int, optional
        Processes counting the words (``None``: one per core the process may use).
    """
    specials = check_training_args(
        vocab_size, min_count, special_tokens, limit_alphabet, initial_alphabet
    )
    if word_counts is None:
        word_counts = count_words(
            texts,
            wp._training_words,
            workers=workers,
            show_progress=show_progress,
            memory=budget_bytes(memory),
            spill_dir=spill_dir,
        )
    tokens = learn_wordpiece(
        word_counts,
        vocab_size,
        min_count=min_count,
        special_tokens=specials,
        limit_alphabet=limit_alphabet,
        initial_alphabet=initial_alphabet,
        prefix=wp.continuing_subword_prefix,
    )
    wp._set_model(tokens, [(t, True) for t in specials])
    return wp
