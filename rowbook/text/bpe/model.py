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

Examples
--------
>>> bpe = ByteLevelBPE().fit_word_counts(
...     {"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=263, min_frequency=2)
>>> [(step.token, step.count) for step in bpe.merge_trace]
[('es', 9), ('est', 9), ('lo', 7), ('low', 7), ('ew', 6), ('new', 6), ('newest', 6)]
>>> bpe.tokenize("lowest"), bpe.tokenize("newer")
(['low', 'est'], ['new', 'e', 'r'])
>>> encoding = bpe.encode("lowest ✓")
>>> encoding.tokens, encoding.offsets
(['low', 'est', 'Ġ', 'â', 'ľ', 'ĵ'], [(0, 3), (3, 6), (6, 7), (7, 8), (7, 8), (7, 8)])
>>> bpe.decode(encoding.ids)
'lowest ✓'

``encode`` returns an :class:`~rowbook.text.bpe.encoding.Encoding` (``ids``, ``tokens``,
character ``offsets``, masks), as ``tokenizers`` does. Tokens added after training
(:meth:`ByteLevelBPE.add_tokens`, :meth:`ByteLevelBPE.add_special_tokens`) get the next
ids and are never split.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import Counter
from collections.abc import Container, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import regex
from tqdm.auto import tqdm

from rowbook.checks import check_int
from rowbook.text.bpe import files as bpe_files
from rowbook.text.bpe.batch import Segments, encode_batch, encode_texts
from rowbook.text.bpe.bytelevel import (
    GPT2_ASCII_PATTERN,
    GPT2_PATTERN,
    decode_tokens,
    to_byte_level,
)
from rowbook.text.bpe.classic import MergeStep
from rowbook.text.bpe.count import count_words_parallel
from rowbook.text.bpe.encode import encode_word_dropout
from rowbook.text.bpe.encoding import Encoding, build_encodings
from rowbook.text.bpe.options import check_fit_args, check_trainer_options, special_regex
from rowbook.text.bpe.train import learn
from rowbook.text.token_table import TokenTable

__all__ = ["ByteLevelBPE"]


def _check_str(text: object, name: str = "text") -> str:
    if not isinstance(text, str):
        raise TypeError(f"{name} must be a str, got {type(text).__name__}")
    return text


class ByteLevelBPE(TokenTable):
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
    dropout : float, optional
        BPE-dropout (Provilkov et al. 2020) at encode time, for training-time
        regularisation: each merge is skipped with this probability (``tokenizers``'
        ``BPE(dropout=...)``). Encodings then vary from call to call; the cache is unused.
    seed : int, optional
        Seed of the dropout's random numbers (``tokenizers`` cannot be seeded).
    """

    def __init__(self, *, pattern: str = GPT2_PATTERN, add_prefix_space: bool = False,
                 cache_size: int = 100_000, dropout: float | None = None,
                 seed: int | None = None) -> None:  # fmt: skip
        try:
            self._split = regex.compile(_check_str(pattern, "pattern"))
            self._split_ascii = re.compile(GPT2_ASCII_PATTERN) if pattern == GPT2_PATTERN else None
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
        if dropout is not None and (isinstance(dropout, bool) or not 0.0 <= dropout <= 1.0):
            raise ValueError(f"dropout must be None or a probability in [0, 1], got {dropout!r}")
        self.dropout, self.seed = dropout, seed
        self._rng = np.random.default_rng(seed)
        self._fitted = False

    # ----------------------------------------------------------------- training
    def fit(self, texts: Iterable[str], vocab_size: int, *, min_frequency: int = 2,
            special_tokens: Sequence[str] = (), show_progress: bool = False,
            limit_alphabet: int | None = None, initial_alphabet: Sequence[str] = (),
            max_token_length: int | None = None, workers: int | None = None) -> ByteLevelBPE:  # fmt: skip
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
        limit_alphabet, initial_alphabet, max_token_length
            ``tokenizers``' ``BpeTrainer`` options; see :mod:`rowbook.text.bpe.options`.
        """
        check_fit_args(vocab_size, min_frequency, special_tokens)
        options = {"limit_alphabet": limit_alphabet, "initial_alphabet": initial_alphabet,
                   "max_token_length": max_token_length}  # fmt: skip
        check_trainer_options(**options)
        counts = self.count_words(texts, special_tokens=special_tokens, show_progress=show_progress,
                                  workers=workers)  # fmt: skip
        return self.fit_word_counts(counts, vocab_size, min_frequency=min_frequency,
                                    special_tokens=list(special_tokens), **options)  # fmt: skip

    def count_words(self, texts: Iterable[str], *, special_tokens: Sequence[str] = (),
                    show_progress: bool = False, workers: int | None = 1) -> Counter[str]:  # fmt: skip
        """The pre-tokenized words of ``texts`` and their counts: the first pass of :meth:`fit`,
        which :meth:`fit_word_counts` finishes (counts of shards can be added in between).

        ``workers`` processes count batches of texts (``None``: one per CPU); the result is
        the serial count, same counts in the same order (:mod:`rowbook.text.bpe.count`).

        Examples
        --------
        >>> ByteLevelBPE().count_words(["the cat", "the hat"])
        Counter({'the': 2, ' cat': 1, ' hat': 1})
        """
        specials, counts = list(special_tokens), Counter()
        workers = check_int("workers", workers, 1, allow_none=True) or os.cpu_count() or 1
        if workers > 1:
            settings = {"pattern": self.pattern, "add_prefix_space": self.add_prefix_space}
            texts = tqdm(texts, desc="count words", unit="text", disable=not show_progress)
            return count_words_parallel(settings, texts, specials, workers)
        cutter = special_regex(specials)
        for text in tqdm(texts, desc="count words", unit="text", disable=not show_progress):
            for piece, special, _ in self._pieces(_check_str(text), cutter, specials):
                if special is None:
                    counts.update(self._pretokenize(piece))
        return counts

    def fit_word_counts(self, word_counts: Mapping[str, int], vocab_size: int, *,
                        min_frequency: int = 2, special_tokens: Sequence[str] = (),
                        limit_alphabet: int | None = None, initial_alphabet: Sequence[str] = (),
                        max_token_length: int | None = None) -> ByteLevelBPE:  # fmt: skip
        """Learn merges from already pre-tokenized words and their frequencies."""
        specials = check_fit_args(vocab_size, min_frequency, special_tokens)
        alphabet = check_trainer_options(limit_alphabet, initial_alphabet, max_token_length)
        for word, count in word_counts.items():
            if not isinstance(word, str) or not isinstance(count, int | np.integer) or count < 0:
                raise TypeError(f"word_counts must map str to int >= 0, got {word!r}: {count!r}")
        vocab, merges, trace = learn(word_counts, vocab_size, min_frequency, specials,
                                     initial_alphabet=alphabet, max_token_length=max_token_length)  # fmt: skip
        self._set_model(vocab, merges, specials, trace)
        return self

    # ------------------------------------------------------------ learned state
    def _set_model(self, vocab: dict[str, int], merges: list[tuple[str, str]],
                   specials: list[str], trace: list[MergeStep] | None = None,
                   ignore_merges: bool = False, added: Sequence[tuple[str, bool]] = ()) -> None:  # fmt: skip
        """Install a model; ``added`` lists the ``(token, special)`` added after training."""
        unsplit = list(dict.fromkeys([*specials, *(t for t, _ in added)]))  # cut out, never split
        tables = bpe_files.check_model(vocab, merges, unsplit)
        self._vocab, self._merges, self._specials = dict(vocab), list(merges), list(specials)
        self._added = list(added)
        self._id_to_token = tables["id_to_token"]
        self._byte_ids = tables["byte_ids"]
        self._merge_table = tables["merge_table"]
        self._id_bytes = tables["id_bytes"]
        self._id_len = np.array([len(b) for b in self._id_bytes], dtype=np.int64)  # (V,)
        self._special_ids = {s: vocab[s] for s in specials}
        self._unsplit_ids = {s: vocab[s] for s in unsplit}
        self._cutter = special_regex(unsplit)
        self._ranks: dict[tuple[int, int], tuple[int, int]] | None = None  # built for dropout
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

    # ----------------------------------------------------------------- encoding
    def _pretokenize(self, piece: str) -> list[str]:
        fast = self._split_ascii is not None and piece.isascii()  # the same pieces, sooner
        words = (self._split_ascii if fast else self._split).findall(piece)
        if sum(map(len, words)) == len(piece):
            return words
        out, end = [], 0  # text the pattern skips forms pieces too, as in tokenizers
        for m in self._split.finditer(piece):
            out += [piece[end : m.start()], m.group()] if m.start() > end else [m.group()]
            end = m.end()
        return [w for w in (*out, piece[end:]) if w]

    def _pieces(self, text: str, cutter: regex.Pattern | None, specials: Container[str]):
        """``(piece, token or None, prefixed)``: unsplit tokens, and text with its prefix space."""
        parts = cutter.split(text) if cutter is not None else [text]
        for part in parts:
            if part in specials:
                yield part, part, False
            elif part:
                prefixed = self.add_prefix_space and not part.startswith(" ")
                yield (" " + part if prefixed else part), None, prefixed

    def _encode_dropout(self, words: list[str]) -> list[int]:
        if self._ranks is None:
            keys, ranks, new_ids = self._merge_table
            self._ranks = {(k >> 32, k & 0xFFFFFFFF): (r, n)
                           for k, r, n in zip(keys.tolist(), ranks.tolist(), new_ids.tolist(), strict=True)}  # fmt: skip
        ids: list[int] = []
        for word in words:
            if self._ignore_merges and to_byte_level(word) in self._vocab:
                ids.append(self._vocab[to_byte_level(word)])
                continue
            symbols = self._byte_ids[np.frombuffer(word.encode("utf-8"), dtype=np.uint8)].tolist()
            ids += encode_word_dropout(symbols, self._ranks, self.dropout, self._rng)
        return ids

    def _checked(self, text: str) -> str:
        """``text`` (a ``str``, checked by the caller) if it has UTF-8 bytes."""
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as err:
                raise ValueError(f"text has a lone surrogate {text[err.start]!r} at character offset "
                                 f"{err.start}, which has no UTF-8 bytes; encode valid Unicode") from None  # fmt: skip
        return text

    def _words_of(self, texts: Sequence[str]) -> list[list[str]]:
        """The words of each text, for a model with no unsplit tokens and no prefix space."""
        for text in itertools.filterfalse(str.isascii, texts):
            self._checked(text)
        if self._split_ascii is not None:
            # GPT-2's pattern puts every character in a word; ASCII texts go to its twin for re
            ascii_findall, findall = self._split_ascii.findall, self._split.findall
            return [ascii_findall(t) if t.isascii() else findall(t) for t in texts]
        words_of = list(map(self._split.findall, texts))
        if sum(map(len, itertools.chain.from_iterable(words_of))) == sum(map(len, texts)):
            return words_of  # the pattern skipped no character of any text
        return [self._pretokenize(text) for text in texts]

    def _segments(self, text: str) -> Segments:
        """``text`` cut for encoding: unsplit tokens, and the words of the text between them."""
        return [(None, prefixed, self._pretokenize(piece)) if token is None
                else (self._unsplit_ids[token], False, [])
                for piece, token, prefixed in self._pieces(self._checked(text), self._cutter,
                                                           self._unsplit_ids)]  # fmt: skip

    def encode(self, text: str) -> Encoding:
        """The :class:`~rowbook.text.bpe.encoding.Encoding` of ``text``: ids, tokens, offsets, masks.

        Special and added tokens found in the text become their ids, unsplit.
        """
        self._check_fitted()
        ids_of, prefixed = encode_texts(self, [_check_str(text)])
        return build_encodings([text], ids_of, prefixed, self._id_to_token, self._id_len)[0]

    def encode_batch(self, texts: Sequence[str], *, workers: int | None = None) -> list[Encoding]:
        """:meth:`encode` for each text, each distinct word encoded once, on every core.

        Parameters
        ----------
        texts : Sequence[str]
        workers : int, optional
            Processes that share the work (``None``: one per CPU). Texts of more than a
            million characters in all are cut into batches shared by this process and
            ``workers - 1`` forked ones; fewer stay here. The encodings are the same for
            every ``workers``; with ``dropout`` all texts are encoded here, in order.
            A busy machine may be faster with ``workers=1``
            (:mod:`rowbook.text.bpe.batch`).
        """
        self._check_fitted()
        if isinstance(texts, str):
            raise TypeError("encode_batch expects a sequence of str; for one text use encode()")
        workers = check_int("workers", workers, 1, allow_none=True) or os.cpu_count() or 1
        texts = list(texts)
        if not set(map(type, texts)) <= {str}:  # the quick check; a subclass of str passes below
            for text in texts:
                _check_str(text)
        return encode_batch(self, texts, workers)

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` as byte-level spellings (``"Ġworld"``)."""
        self._check_fitted()
        return [self._id_to_token[i] for i in encode_texts(self, [_check_str(text)])[0][0]]

    def detokenize(self, tokens: Sequence[str]) -> str:
        """Text of tokens, as ``tokenizers``' ``ByteLevel`` decoder gives it (no vocabulary lookup).

        A token with a character outside the byte alphabet stands for itself.
        """
        return decode_tokens(tokens)

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """Text of ``ids``: bytes concatenated, then UTF-8 decoded (invalid sequences, which
        only a cut through a character produces, become U+FFFD). Special tokens are left
        out unless ``skip_special_tokens=False``, as ``tokenizers``' default."""
        self._check_fitted()
        ids = self._checked_ids(ids)
        skip = set(self._special_ids.values()) if skip_special_tokens else ()
        table = self._id_bytes
        data = b"".join([table[i] for i in ids.tolist() if i not in skip])
        return data.decode("utf-8", errors="replace")

    # ----------------------------------------------------------- added tokens
    def add_tokens(self, tokens: Sequence[str]) -> int:
        """Add tokens that are never split, with the next ids; return how many are new.

        As ``tokenizers``' ``add_tokens``: a token already in the vocabulary keeps its id
        (and is from now on never split). Kept by :meth:`save` and :meth:`to_tokenizer_json`.
        """
        return self._add(tokens, special=False)

    def add_special_tokens(self, tokens: Sequence[str]) -> int:
        """:meth:`add_tokens` for special tokens (left out by ``decode`` by default)."""
        return self._add(tokens, special=True)

    def _add(self, tokens: Sequence[str], special: bool) -> int:
        self._check_fitted()
        if isinstance(tokens, str) or any(not isinstance(t, str) or not t for t in tokens):
            raise TypeError(f"tokens must be a sequence of non-empty str, got {tokens!r}")
        vocab, specials, added = dict(self._vocab), list(self._specials), list(self._added)
        new = 0
        for token in tokens:
            if token in self._unsplit_ids or token in specials or any(t == token for t, _ in added):
                continue
            if token not in vocab:
                vocab[token], new = len(vocab), new + 1
            added.append((token, special))
            specials += [token] if special else []
        self._set_model(vocab, self._merges, specials, self._trace, self._ignore_merges, added)
        return new

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

    @classmethod
    def from_files(cls, vocab: str | os.PathLike, merges: str | os.PathLike, *,
                   add_prefix_space: bool = False, dropout: float | None = None,
                   seed: int | None = None) -> ByteLevelBPE:  # fmt: skip
        """Read a GPT-2-style ``vocab.json`` + ``merges.txt`` pair (``save_model``'s files).

        The same model as ``tokenizers.ByteLevelBPETokenizer(vocab, merges)``: GPT-2's
        pre-split, no special tokens (the pair does not record them; add them with
        :meth:`add_special_tokens`).
        """
        bpe = cls(add_prefix_space=add_prefix_space, dropout=dropout, seed=seed)
        token_ids, pairs = bpe_files.read_vocab_merges(vocab, merges)
        bpe._set_model(token_ids, pairs, [])
        return bpe

    def __repr__(self) -> str:
        size = f"{len(self)} tokens" if self._fitted else "not fitted"
        return f"ByteLevelBPE({size})"

    def get_params(self) -> dict[str, Any]:
        """Constructor parameters."""
        return {"pattern": self.pattern, "add_prefix_space": self.add_prefix_space,
                "cache_size": self.cache_size, "dropout": self.dropout, "seed": self.seed}  # fmt: skip
