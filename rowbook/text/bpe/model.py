"""Byte-level BPE: Sennrich et al.'s merges, learned on UTF-8 bytes after a GPT-2 pre-split.

:class:`ByteLevelBPE` splits text into words with :data:`~rowbook.text.bpe.bytelevel.GPT2_PATTERN`,
spells each word with its UTF-8 bytes (256 base symbols, so no input is ever unknown),
and learns merges of adjacent symbols, most frequent pair first (ties: the smaller pair of
ids). Encoding replays the merges inside each word, lowest rank first. Special tokens are
cut out of the text before anything else and never split.

It learns the same merges as Hugging Face ``tokenizers``' ``BpeTrainer`` given the same
words (ids: special tokens, then the 256 byte symbols in code point order, then one per
merge) and reads and writes its ``tokenizer.json`` form; see :mod:`rowbook.text.bpe.files`.

On the BPE paper's toy corpus (no end-of-word symbol here; see
:mod:`rowbook.text.bpe.classic` for the paper's exact character-level run):

>>> bpe = ByteLevelBPE().fit_word_counts(
...     {"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=263, min_frequency=2)
>>> [(step.token, step.count) for step in bpe.merge_trace]
[('es', 9), ('est', 9), ('lo', 7), ('low', 7), ('ew', 6), ('new', 6), ('newest', 6)]
>>> bpe.tokenize("lowest"), bpe.tokenize("newer")
(['low', 'est'], ['new', 'e', 'r'])
>>> bpe.decode(bpe.encode("lowest ✓"))
'lowest ✓'
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import regex
from tqdm.auto import tqdm

from rowbook.text.bpe import files as bpe_files
from rowbook.text.bpe.bytelevel import (
    GPT2_PATTERN,
    byte_alphabet,
    to_byte_level,
)
from rowbook.text.bpe.classic import MergeStep
from rowbook.text.bpe.encode import encode_words
from rowbook.text.bpe.train import learn

__all__ = ["ByteLevelBPE"]


def _check_str(text: object, name: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    return text


class ByteLevelBPE:
    """A byte-level byte-pair-encoding tokenizer (GPT-2 style), learned with :meth:`fit`.

    Parameters
    ----------
    pattern : str, default :data:`~rowbook.text.bpe.bytelevel.GPT2_PATTERN`
        Pre-tokenizer regex (``regex`` package syntax). Merges never cross the pieces it
        cuts; text between matches forms pieces of its own.
    add_prefix_space : bool, default False
        Put a space before each piece of text that does not start with one (as
        ``tokenizers`` does). It breaks ``decode(encode(s)) == s``, so it is off by default.
    cache_size : int, default 100_000
        Number of words whose encoding is kept; the cache is emptied when it is full.
    """

    def __init__(self, *, pattern: str = GPT2_PATTERN, add_prefix_space: bool = False,
                 cache_size: int = 100_000) -> None:  # fmt: skip
        try:
            self._split = regex.compile(_check_str(pattern, "pattern"))
        except regex.error as err:
            raise ValueError(
                f"pattern {pattern!r} is not a valid regular expression: {err}"
            ) from None
        if not isinstance(cache_size, int) or cache_size < 0:
            raise ValueError(f"cache_size must be an int >= 0, got {cache_size!r}")
        self.pattern, self.add_prefix_space, self.cache_size = (
            pattern,
            bool(add_prefix_space),
            cache_size,
        )
        self._fitted = False

    # ----------------------------------------------------------------- training
    def fit(self, texts: Iterable[str], vocab_size: int, *, min_frequency: int = 2,
            special_tokens: Sequence[str] = (), show_progress: bool = False) -> ByteLevelBPE:  # fmt: skip
        """Learn merges from ``texts`` until the vocabulary has ``vocab_size`` entries.

        Parameters
        ----------
        texts : Iterable[str]
            The training corpus, read once (a generator is fine).
        vocab_size : int
            Final size: special tokens + 256 byte symbols + merges. Fewer if the pairs
            run out or drop below ``min_frequency``.
        min_frequency : int, default 2
            Stop when the most frequent pair occurs fewer times than this.
        special_tokens : Sequence[str], default ()
            Tokens given the first ids, never split, and cut out of the training text.
        show_progress : bool, default False
            Show a progress bar while counting words.
        """
        specials = _check_fit_args(vocab_size, min_frequency, special_tokens)
        counts = self.count_words(texts, special_tokens=specials, show_progress=show_progress)
        return self.fit_word_counts(counts, vocab_size, min_frequency=min_frequency,
                                    special_tokens=specials)  # fmt: skip

    def count_words(self, texts: Iterable[str], *, special_tokens: Sequence[str] = (),
                    show_progress: bool = False) -> Counter[str]:  # fmt: skip
        """The pre-tokenized words of ``texts`` and their counts: the first pass of :meth:`fit`,
        which :meth:`fit_word_counts` finishes (counts of shards can be added in between).

        >>> ByteLevelBPE().count_words(["the cat", "the hat"])
        Counter({'the': 2, ' cat': 1, ' hat': 1})
        """
        specials = list(special_tokens)
        counts: Counter[str] = Counter()
        cutter = _special_regex(specials)
        for text in tqdm(texts, desc="count words", unit="text", disable=not show_progress):
            for piece, special in self._pieces(_check_str(text), cutter, specials):
                if special is None:
                    counts.update(self._pretokenize(piece))
        return counts

    def fit_word_counts(self, word_counts: Mapping[str, int], vocab_size: int, *,
                        min_frequency: int = 2, special_tokens: Sequence[str] = ()) -> ByteLevelBPE:  # fmt: skip
        """Learn merges from already pre-tokenized words and their frequencies."""
        specials = _check_fit_args(vocab_size, min_frequency, special_tokens)
        for word, count in word_counts.items():
            if not isinstance(word, str) or not isinstance(count, int | np.integer) or count < 0:
                raise TypeError(f"word_counts must map str to int >= 0, got {word!r}: {count!r}")
        vocab, merges, trace = learn(word_counts, vocab_size, min_frequency, specials)
        self._set_model(vocab, merges, specials, trace)
        return self

    # ------------------------------------------------------------ learned state
    def _set_model(self, vocab: dict[str, int], merges: list[tuple[str, str]],
                   specials: list[str], trace: list[MergeStep] | None = None,
                   ignore_merges: bool = False) -> None:  # fmt: skip
        tables = bpe_files.check_model(vocab, merges, specials)
        self._vocab, self._merges, self._specials = dict(vocab), list(merges), list(specials)
        self._id_to_token = tables["id_to_token"]
        self._byte_ids = tables["byte_ids"]
        self._merge_table = tables["merge_table"]
        self._id_bytes = tables["id_bytes"]
        self._special_ids = {s: vocab[s] for s in specials}
        self._cutter = _special_regex(specials)
        self._trace = trace or [MergeStep(a, b, None) for a, b in merges]
        self._ignore_merges = ignore_merges
        self._cache: dict[str, tuple[int, ...]] = {}
        self._fitted = True

    def _check_fitted(self) -> None:
        if not self._fitted:
            raise ValueError("this ByteLevelBPE is not fitted yet: call fit(...), "
                             "ByteLevelBPE.load(...) or ByteLevelBPE.from_tokenizer_json(...) first")  # fmt: skip

    @property
    def vocab(self) -> dict[str, int]:
        """Token (byte-level spelling, or special token) -> id."""
        self._check_fitted()
        return dict(self._vocab)

    @property
    def merges(self) -> list[tuple[str, str]]:
        """The merges in rank order, as pairs of byte-level spellings."""
        self._check_fitted()
        return list(self._merges)

    @property
    def merge_trace(self) -> list[MergeStep]:
        """The merges with the pair count each had when it was learned (``None`` if loaded
        from a file that does not record it)."""
        self._check_fitted()
        return list(self._trace)

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token -> id."""
        self._check_fitted()
        return dict(self._special_ids)

    def __len__(self) -> int:
        self._check_fitted()
        return len(self._id_to_token)

    def token_to_id(self, token: str) -> int:
        """The id of a token (``KeyError`` naming it when unknown)."""
        self._check_fitted()
        if token not in self._vocab:
            raise KeyError(f"token {token!r} is not in the vocabulary of {len(self)} tokens")
        return self._vocab[token]

    def id_to_token(self, token_id: int) -> str:
        """The token of an id (``IndexError`` naming the valid range)."""
        self._check_fitted()
        if not isinstance(token_id, int | np.integer) or not 0 <= token_id < len(self):
            raise IndexError(f"token id {token_id!r} is out of range [0, {len(self)})")
        return self._id_to_token[token_id]

    # ----------------------------------------------------------------- encoding
    def _pretokenize(self, piece: str) -> list[str]:
        words = self._split.findall(piece)
        if sum(map(len, words)) == len(piece):
            return words
        out, end = [], 0  # text the pattern skips forms pieces too, as in tokenizers
        for m in self._split.finditer(piece):
            out += [piece[end : m.start()], m.group()] if m.start() > end else [m.group()]
            end = m.end()
        return [w for w in (*out, piece[end:]) if w]

    def _pieces(self, text: str, cutter: regex.Pattern | None, specials: Iterable[str]):
        specials = set(specials)
        parts = cutter.split(text) if cutter is not None else [text]
        for part in parts:
            if part in specials:
                yield part, part
            elif part:
                if self.add_prefix_space and not part.startswith(" "):
                    part = " " + part
                yield part, None

    def _encode_words(self, words: list[str]) -> list[int]:
        cache = self._cache
        try:  # the common case once the cache is warm: every word is known
            return list(itertools.chain.from_iterable(map(cache.__getitem__, words)))
        except KeyError:
            pass
        unique = set(words)
        missing = list(unique.difference(cache))
        if len(cache) + len(missing) > self.cache_size:
            cache.clear()
            missing = list(unique)
        if self._ignore_merges:
            whole = [w for w in missing if to_byte_level(w) in self._vocab]
            cache.update((w, (self._vocab[to_byte_level(w)],)) for w in whole)
            missing = [w for w in missing if w not in cache]
        if missing:
            encoded = encode_words(
                [w.encode("utf-8") for w in missing], self._byte_ids, self._merge_table
            )
            cache.update(zip(missing, map(tuple, encoded), strict=True))
        return list(itertools.chain.from_iterable(map(cache.__getitem__, words)))

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; special tokens found in it become their ids, unsplit."""
        self._check_fitted()
        _check_str(text)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise ValueError(f"text has a lone surrogate {text[err.start]!r} at character offset "
                             f"{err.start}, which has no UTF-8 bytes; encode valid Unicode") from None  # fmt: skip
        ids: list[int] = []
        for piece, special in self._pieces(text, self._cutter, self._special_ids):
            if special is None:
                ids += self._encode_words(self._pretokenize(piece))
            else:
                ids.append(self._special_ids[special])
        return ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`encode` for each text."""
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a sequence of str; for one text use encode()")
        return [self.encode(text) for text in texts]

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` as byte-level spellings (``"Ġworld"``)."""
        return [self._id_to_token[i] for i in self.encode(text)]

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Inverse of :meth:`tokenize`: join the spelled bytes and decode them as UTF-8."""
        self._check_fitted()
        return self.decode([self.token_to_id(t) for t in tokens])

    def decode(self, ids: Iterable[int], *, skip_special_tokens: bool = False) -> str:
        """Text of ``ids``: bytes concatenated, then UTF-8 decoded (invalid sequences, which
        only a cut through a character produces, become U+FFFD)."""
        self._check_fitted()
        ids = np.asarray(list(ids) if not isinstance(ids, np.ndarray) else ids)
        if ids.size and (ids.dtype.kind not in "iu" or ids.ndim != 1):
            raise TypeError(
                f"ids must be a 1-d sequence of ints, got dtype {ids.dtype}, ndim {ids.ndim}"
            )
        if ids.size and (ids.min() < 0 or ids.max() >= len(self)):
            bad = ids[(ids < 0) | (ids >= len(self))][0]
            raise IndexError(f"token id {int(bad)} is out of range [0, {len(self)})")
        skip = set(self._special_ids.values()) if skip_special_tokens else ()
        table = self._id_bytes
        data = b"".join([table[i] for i in ids.tolist() if i not in skip])
        return data.decode("utf-8", errors="replace")

    # ----------------------------------------------------------------- files
    def save(self, path: str | os.PathLike) -> None:
        """Write the versioned rowbook JSON format (atomic)."""
        self._check_fitted()
        bpe_files.save(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> ByteLevelBPE:
        """Read a file written by :meth:`save`."""
        return bpe_files.load(cls, path)

    def to_tokenizer_json(self, path: str | os.PathLike) -> None:
        """Write a Hugging Face ``tokenizer.json`` that ``tokenizers.Tokenizer.from_file`` loads."""
        self._check_fitted()
        bpe_files.to_tokenizer_json(self, path)

    @classmethod
    def from_tokenizer_json(cls, path: str | os.PathLike) -> ByteLevelBPE:
        """Read a Hugging Face byte-level BPE ``tokenizer.json``."""
        return bpe_files.from_tokenizer_json(cls, path)

    def __repr__(self) -> str:
        size = f"{len(self)} tokens" if self._fitted else "not fitted"
        return f"ByteLevelBPE({size})"

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters."""
        return {"pattern": self.pattern, "add_prefix_space": self.add_prefix_space,
                "cache_size": self.cache_size}  # fmt: skip


def _check_fit_args(vocab_size: Any, min_frequency: Any, special_tokens: Any) -> list[str]:
    if isinstance(special_tokens, str):
        raise TypeError(f"special_tokens must be a sequence of str, got the str {special_tokens!r}")
    specials = list(special_tokens)
    for token in specials:
        if not isinstance(token, str) or not token:
            raise ValueError(f"special tokens must be non-empty str, got {token!r}")
    if len(set(specials)) != len(specials):
        raise ValueError(f"special_tokens has duplicates: {specials}")
    base = len(dict.fromkeys([*specials, *byte_alphabet()]))
    if not isinstance(vocab_size, int) or vocab_size < base:
        raise ValueError(f"vocab_size must be an int >= {base} (256 byte symbols + {base - 256} "
                         f"special tokens), got {vocab_size!r}")  # fmt: skip
    if not isinstance(min_frequency, int) or min_frequency < 0:
        raise ValueError(f"min_frequency must be an int >= 0, got {min_frequency!r}")
    return specials


def _special_regex(specials: Sequence[str]) -> regex.Pattern | None:
    if not specials:
        return None
    ordered = sorted(specials, key=len, reverse=True)  # leftmost, then longest match
    return regex.compile("(" + "|".join(regex.escape(s) for s in ordered) + ")")
