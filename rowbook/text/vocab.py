"""Vocabulary: a bijection between token strings and the ids ``0 .. V-1``.

Special tokens come first (``<pad>`` = 0, ``<unk>`` = 1, then the optional ``<bos>``,
``<eos>`` and any extra ones), then the corpus tokens by decreasing count, ties broken
by first appearance. Tokens rarer than ``min_count`` are left out, and at most
``max_vocab`` entries (specials included) are kept. Unknown tokens map to ``<unk>``, or
raise a ``KeyError`` when the vocabulary has no ``<unk>``.

The cat sat on the mat example:

Examples
--------
>>> vocab = Vocab().fit([["the", "cat", "sat", "on", "the", "mat"]])
>>> vocab.stoi
{'<pad>': 0, '<unk>': 1, 'the': 2, 'cat': 3, 'sat': 4, 'on': 5, 'mat': 6}
>>> vocab.encode(["the", "cat", "sat", "on", "the", "mat"])
array([2, 3, 4, 5, 2, 6])
>>> vocab.encode(["the", "dog"]), vocab.decode([2, 1])
(array([2, 1]), ['the', '<unk>'])
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from rowbook.checks import (
    InputIndexError,
    InputTypeError,
    ParameterError,
    UnknownKeyError,
    check_int,
)
from rowbook.io import read_json, write_json

__all__ = ["Vocab"]

FORMAT = "rowbook.Vocab"
VERSION = 1


class Vocab:
    """Token <-> id table built from token counts.

    Parameters
    ----------
    min_count : int, default 1
        Keep only tokens seen at least this many times.
    max_vocab : int or None, default None
        Largest number of entries, special tokens included; the most frequent tokens win
        (``max_size`` before rowbook 0.2, still accepted with a ``DeprecationWarning``).
    pad_token, unk_token : str or None, default "<pad>", "<unk>"
        Padding and unknown-token symbols (ids 0 and 1). ``unk_token=None`` makes
        unknown tokens an error.
    bos_token, eos_token : str or None, default None
        Optional begin / end of sequence symbols, placed right after the two above.
    extra_specials : Sequence[str], default ()
        More reserved symbols, after all of the above.
    """

    def __init__(
        self,
        *,
        min_count: int = 1,
        max_vocab: int | None = None,
        pad_token: str | None = "<pad>",
        unk_token: str | None = "<unk>",
        bos_token: str | None = None,
        eos_token: str | None = None,
        extra_specials: Sequence[str] = (),
    ) -> None:
        min_count = check_int("min_count", min_count, 1)
        named = {
            "pad_token": pad_token,
            "unk_token": unk_token,
            "bos_token": bos_token,
            "eos_token": eos_token,
        }
        for name, token in named.items():
            if token is not None and (not isinstance(token, str) or not token):
                raise ValueError(f"{name} must be a non-empty str or None, got {token!r}")
        if isinstance(extra_specials, str):
            raise InputTypeError(
                f"extra_specials must be a sequence of str, got the str {extra_specials!r}"
            )
        specials = [t for t in named.values() if t is not None] + list(extra_specials)
        if len(set(specials)) != len(specials) or not all(
            isinstance(t, str) and t for t in specials
        ):
            raise ValueError(f"special tokens must be distinct non-empty str, got {specials}")
        if max_vocab is not None and (not isinstance(max_vocab, int) or max_vocab < len(specials)):
            raise ParameterError(
                "max_vocab",
                max_vocab,
                f"an integer >= {len(specials)} (room for the special tokens {specials})",
            )
        self.min_count, self.max_vocab = min_count, max_vocab
        self.pad_token, self.unk_token, self.bos_token, self.eos_token = named.values()
        self.extra_specials = tuple(extra_specials)
        self.specials = tuple(specials)
        self._itos: list[str] | None = None

    # ----------------------------------------------------------------- fitting
    def fit(self, documents: Iterable[Iterable[str]]) -> Vocab:
        """Count the tokens of ``documents`` (each an iterable of tokens) and build the table."""
        counts: Counter[str] = Counter()
        for doc in documents:
            if isinstance(doc, str):
                raise InputTypeError(
                    "Vocab.fit expects an iterable of token sequences, got a str "
                    f"({doc[:20]!r}); wrap one list of tokens in a list: fit([tokens])"
                )
            counts.update(doc)
        return self.fit_counts(counts)

    def fit_counts(self, counts: Mapping[str, int]) -> Vocab:
        """Build the table from token -> count; the mapping's order counts as first appearance."""
        for token, count in counts.items():
            if not isinstance(token, str):
                raise InputTypeError(f"tokens must be str, got {type(token).__name__} {token!r}")
            if not isinstance(count, int | np.integer) or count < 0:
                raise ValueError(f"count of {token!r} must be an int >= 0, got {count!r}")
        special_set = set(self.specials)
        ranked = sorted(
            (t for t, c in counts.items() if c >= self.min_count and t not in special_set),
            key=lambda t: -counts[t],
        )  # stable: ties keep first appearance
        room = None if self.max_vocab is None else self.max_vocab - len(self.specials)
        self._itos = [*self.specials, *ranked[:room]]
        self._stoi = {t: i for i, t in enumerate(self._itos)}
        self._counts = {t: int(counts.get(t, 0)) for t in self._itos}
        return self

    def _check_fitted(self) -> None:
        if self._itos is None:
            raise ValueError(
                "this Vocab is not fitted yet: call fit(documents), fit_counts(counts) "
                "or Vocab.load(path) first"
            )

    # ----------------------------------------------------------------- lookups
    @property
    def itos(self) -> list[str]:
        """Tokens in id order."""
        self._check_fitted()
        return list(self._itos)

    @property
    def stoi(self) -> dict[str, int]:
        """Token -> id."""
        self._check_fitted()
        return dict(self._stoi)

    @property
    def counts(self) -> dict[str, int]:
        """Corpus count of every entry (0 for specials never seen)."""
        self._check_fitted()
        return dict(self._counts)

    def _special_id(self, token: str | None) -> int | None:
        self._check_fitted()
        return None if token is None else self._stoi[token]

    pad_id = property(lambda self: self._special_id(self.pad_token), doc="Id of pad_token or None.")
    unk_id = property(lambda self: self._special_id(self.unk_token), doc="Id of unk_token or None.")
    bos_id = property(lambda self: self._special_id(self.bos_token), doc="Id of bos_token or None.")
    eos_id = property(lambda self: self._special_id(self.eos_token), doc="Id of eos_token or None.")

    def __len__(self) -> int:
        self._check_fitted()
        return len(self._itos)

    def __contains__(self, token: object) -> bool:
        self._check_fitted()
        return token in self._stoi

    def token_to_id(self, token: str) -> int:
        """Id of ``token``: ``<unk>``'s id when unknown, or ``KeyError`` without ``<unk>``."""
        self._check_fitted()
        if token in self._stoi:
            return self._stoi[token]
        if self.unk_token is None:
            raise UnknownKeyError(
                f"token {token!r} is not in the vocabulary and it has no unk_token; "
                "build the Vocab with unk_token='<unk>' to map unknown tokens"
            )
        return self._stoi[self.unk_token]

    def id_to_token(self, token_id: int) -> str:
        """Token of ``token_id`` (``IndexError`` outside ``[0, len)``)."""
        self._check_fitted()
        if not isinstance(token_id, int | np.integer) or not 0 <= token_id < len(self._itos):
            raise InputIndexError(f"token id {token_id!r} is out of range [0, {len(self._itos)})")
        return self._itos[token_id]

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        """``(T,)`` int64 ids of ``tokens``."""
        self._check_fitted()
        if isinstance(tokens, str):
            raise InputTypeError(
                f"encode expects a sequence of tokens, got the str {tokens[:20]!r}; "
                "tokenize it first"
            )
        stoi, unk = self._stoi, self._stoi.get(self.unk_token)
        ids = [
            stoi.get(t, unk) if isinstance(t, str) else _not_a_token(i, t)
            for i, t in enumerate(tokens)
        ]
        if unk is None:
            return np.array([self.token_to_id(t) for t in tokens], dtype=np.int64)
        return np.array(ids, dtype=np.int64)

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens of ``ids``."""
        self._check_fitted()
        ids = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids))
        if ids.size == 0:
            return []
        if ids.dtype.kind not in "iu" or ids.ndim != 1:
            raise InputTypeError(
                f"ids must be a 1-d sequence of ints, got dtype {ids.dtype}, ndim {ids.ndim}"
            )
        bad = (ids < 0) | (ids >= len(self._itos))
        if bad.any():
            raise InputIndexError(
                f"token id {int(ids[bad][0])} is out of range [0, {len(self._itos)})"
            )
        return [self._itos[i] for i in ids.tolist()]

    # ----------------------------------------------------------------- files
    def get_params(self) -> dict[str, Any]:
        """The constructor's parameters (JSON values): ``Vocab(**vocab.get_params())`` is an
        unfitted copy."""
        params = {k: getattr(self, k) for k in _FIELDS}
        params["extra_specials"] = list(self.extra_specials)
        return params

    def to_dict(self) -> dict[str, Any]:
        """Versioned JSON-ready form."""
        self._check_fitted()
        return {
            "format": FORMAT,
            "version": VERSION,
            "min_count": self.min_count,
            "max_vocab": self.max_vocab,
            "pad_token": self.pad_token,
            "unk_token": self.unk_token,
            "bos_token": self.bos_token,
            "eos_token": self.eos_token,
            "extra_specials": list(self.extra_specials),
            "tokens": [[t, self._counts[t]] for t in self._itos],
        }

    def save(self, path: str | os.PathLike) -> None:
        """Write the vocabulary as JSON (atomic)."""
        write_json(path, self.to_dict())

    @classmethod
    def from_dict(cls, d: Any, where: str = "Vocab data") -> Vocab:
        """Rebuild from :meth:`to_dict` output, checking every field (``ValueError`` naming it).

        Files written before the renames hold ``min_freq`` (now ``min_count``) or
        ``max_size`` (now ``max_vocab``); they are read as they were written.
        """
        if isinstance(d, dict):
            for old, new in _RENAMED_FIELDS.items():
                if old in d and new not in d:
                    d = {new if k == old else k: v for k, v in d.items()}
        _check_fields(d, where)
        try:
            vocab = cls(**{k: d[k] for k in _FIELDS})
        except (TypeError, ValueError) as err:
            raise ValueError(f"{where}: {err}") from None
        tokens = [e[0] for e in d["tokens"]]
        if tuple(tokens[: len(vocab.specials)]) != vocab.specials or len(set(tokens)) != len(
            tokens
        ):
            raise ValueError(
                f"{where}: field 'tokens' must be distinct and start with the "
                f"specials {list(vocab.specials)}"
            )
        if vocab.max_vocab is not None and len(tokens) > vocab.max_vocab:
            raise ValueError(
                f"{where}: field 'tokens' holds {len(tokens)} entries, more than "
                f"max_vocab={vocab.max_vocab}"
            )
        vocab._itos, vocab._stoi = tokens, {t: i for i, t in enumerate(tokens)}
        vocab._counts = {e[0]: e[1] for e in d["tokens"]}
        return vocab

    @classmethod
    def load(cls, path: str | os.PathLike) -> Vocab:
        """Read a file written by :meth:`save`."""
        return cls.from_dict(read_json(path, what="Vocab"), f"Vocab file {path}")

    def __repr__(self) -> str:
        size = f"{len(self._itos)} tokens" if self._itos is not None else "not fitted"
        return f"Vocab({size}, specials={list(self.specials)})"


_FIELDS = (
    "min_count",
    "max_vocab",
    "pad_token",
    "unk_token",
    "bos_token",
    "eos_token",
    "extra_specials",
)


#: Fields of files written before a rename: old name -> new name.
_RENAMED_FIELDS = {"min_freq": "min_count", "max_size": "max_vocab"}


def _not_a_token(index: int, item: Any) -> int:
    raise InputTypeError(
        f"tokens must be str, got {type(item).__name__} {item!r} at index {index}; "
        "convert or drop it before encode (fit refuses it too)"
    )


def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_entry(e: Any) -> bool:
    return isinstance(e, list) and len(e) == 2 and isinstance(e[0], str) and _is_int(e[1])


def _check_fields(d: Any, where: str) -> None:
    """The one validation step of a Vocab file: every field's type, as the constructor wants it."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        found = d.get("format") if isinstance(d, dict) else type(d).__name__
        raise ValueError(f"{where} is not a rowbook Vocab (format {found!r}, expected {FORMAT!r})")
    if d.get("version") != VERSION:
        raise ValueError(
            f"{where} has version {d.get('version')!r}; this rowbook reads version {VERSION}"
        )
    missing = [k for k in (*_FIELDS, "tokens") if k not in d]
    if missing:
        raise ValueError(f"{where} lacks the fields {missing}")
    expected = {
        "min_count": (_is_int, "an integer >= 1"),
        "max_vocab": (lambda x: x is None or _is_int(x), "an integer or null"),
        "extra_specials": (
            lambda x: isinstance(x, list) and all(isinstance(t, str) for t in x),
            "a list of strings",
        ),
    }
    for name in ("pad_token", "unk_token", "bos_token", "eos_token"):
        expected[name] = (lambda x: x is None or isinstance(x, str), "a string or null")
    for name, (ok, what) in expected.items():
        if not ok(d[name]):
            raise ValueError(f"{where}: field {name!r} must be {what}, got {d[name]!r}")
    entries = d["tokens"]
    bad = (
        next((i for i, e in enumerate(entries) if not _is_entry(e)), None)
        if isinstance(entries, list)
        else -1
    )
    if bad is not None:
        shown = entries[bad] if bad >= 0 else entries
        raise ValueError(
            f"{where}: field 'tokens' must be a list of [token, count] pairs, got "
            f"{str(shown)[:60]}" + (f" at index {bad}" if bad >= 0 else "")
        )
    negative = next((e for e in entries if e[1] < 0), None)
    if negative is not None:
        raise ValueError(
            f"{where}: field 'tokens': the count of {negative[0]!r} must be an int >= 0, "
            f"got {negative[1]}"
        )
