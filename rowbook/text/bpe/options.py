"""Checks of the options of :class:`~rowbook.text.ByteLevelBPE`, with ``tokenizers``' meanings.

The trainer options are those of ``tokenizers.trainers.BpeTrainer`` as a byte-level
tokenizer uses them (``initial_alphabet=ByteLevel.alphabet()``, so every byte symbol is
in the vocabulary and no input is ever unknown):

* ``initial_alphabet``: more characters for the alphabet (the first character of each
  string, as ``tokenizers`` takes); a character outside the byte alphabet becomes a token
  of its own, placed by code point among the byte symbols;
* ``limit_alphabet``: the most characters the alphabet may hold. ``tokenizers`` would drop
  characters beyond it, choosing among the equally ranked initial ones in no fixed order;
  a byte-level BPE keeps all of them, so a limit below the alphabet's size is refused;
* ``max_token_length``: see :func:`rowbook.text.bpe.train.train_merges`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Literal

import regex

from rowbook.checks import InputTypeError
from rowbook.text.bpe.bytelevel import byte_alphabet

__all__ = [
    "Specials",
    "check_cache_size",
    "check_disallowed",
    "check_dropout",
    "check_fit_args",
    "check_trainer_options",
    "special_regex",
    "special_sets",
]

Specials = Literal["all"] | AbstractSet[str] | Sequence[str]
"""tiktoken's ``allowed_special`` / ``disallowed_special``: ``"all"`` or some special tokens."""


def check_fit_args(vocab_size: Any, min_count: Any, special_tokens: Any) -> list[str]:
    """The special tokens as a list, after checking the three basic training arguments."""
    if isinstance(special_tokens, str):
        raise InputTypeError(
            f"special_tokens must be a sequence of str, got the str {special_tokens!r}"
        )
    specials = list(special_tokens)
    for token in specials:
        if not isinstance(token, str) or not token:
            raise ValueError(f"special tokens must be non-empty str, got {token!r}")
    if len(set(specials)) != len(specials):
        raise ValueError(f"special_tokens has duplicates: {specials}")
    base = len(dict.fromkeys([*specials, *byte_alphabet()]))
    if not isinstance(vocab_size, int) or vocab_size < base:
        raise ValueError(
            f"vocab_size must be an int >= {base} (256 byte symbols + {base - 256} "
            f"special tokens), got {vocab_size!r}"
        )
    if not isinstance(min_count, int) or min_count < 0:
        raise ValueError(f"min_count must be an int >= 0, got {min_count!r}")
    return specials


def check_trainer_options(
    limit_alphabet: Any, initial_alphabet: Any, max_token_length: Any
) -> list[str]:
    """The extra alphabet characters, after checking the three ``BpeTrainer`` options.

    Examples
    --------
    >>> check_trainer_options(None, ["☃x", "a"], 8)
    ['☃', 'a']
    >>> check_trainer_options(100, [], None)
    Traceback (most recent call last):
    ...
    ValueError: limit_alphabet=100 is below the 256 characters of the alphabet; a byte-level BPE keeps every byte symbol (pass None, or at least 256)
    """
    if isinstance(initial_alphabet, str):
        raise InputTypeError(
            "initial_alphabet must be a sequence of str (one character each is kept)"
        )
    chars = []
    for item in initial_alphabet:
        if not isinstance(item, str) or not item:
            raise ValueError(f"initial_alphabet holds non-empty str, got {item!r}")
        chars.append(item[0])  # tokenizers keeps the first character of each string
    size = len({*byte_alphabet(), *chars})
    if limit_alphabet is not None and (
        isinstance(limit_alphabet, bool)
        or not isinstance(limit_alphabet, int)
        or limit_alphabet < size
    ):
        raise ValueError(
            f"limit_alphabet={limit_alphabet!r} is below the {size} characters of the alphabet; "
            f"a byte-level BPE keeps every byte symbol (pass None, or at least {size})"
        )
    if max_token_length is not None and (
        isinstance(max_token_length, bool)
        or not isinstance(max_token_length, int)
        or max_token_length < 1
    ):
        raise ValueError(f"max_token_length must be None or an int >= 1, got {max_token_length!r}")
    return chars


def check_cache_size(cache_size: Any) -> int:
    """``cache_size`` if it is an int >= 0 (0: nothing is cached)."""
    if not isinstance(cache_size, int) or cache_size < 0:
        raise ValueError(f"cache_size must be an int >= 0, got {cache_size!r}")
    return cache_size


def check_dropout(dropout: Any) -> float | None:
    """``dropout`` if it is None or a probability in [0, 1]."""
    if dropout is not None and (
        isinstance(dropout, bool)
        or not isinstance(dropout, int | float)
        or not 0.0 <= dropout <= 1.0
    ):
        raise ValueError(f"dropout must be None or a probability in [0, 1], got {dropout!r}")
    return dropout


def special_regex(tokens: Sequence[str]) -> regex.Pattern | None:
    """A regex that cuts ``tokens`` out of text: leftmost match, then the longest token."""
    if not tokens:
        return None
    ordered = sorted(tokens, key=len, reverse=True)
    return regex.compile("(" + "|".join(regex.escape(s) for s in ordered) + ")")


def _special_set(name: str, value: Any, specials: Mapping[str, int]) -> frozenset[str]:
    """``value`` (``"all"`` or some of ``specials``) as a set, or the error naming ``name``."""
    if value == "all":
        return frozenset(specials)
    if isinstance(value, str) or not isinstance(value, Collection):
        raise InputTypeError(f"{name} must be 'all' or a set of special tokens, got {value!r}")
    unknown = [t for t in value if t not in specials]
    if unknown:
        raise ValueError(
            f"{name} names {unknown[0]!r}, which is not a special token of this BPE "
            f"(it has {sorted(specials)[:8]}); add it with add_special_tokens first"
        )
    return frozenset(value)


def special_sets(
    specials: Mapping[str, int], allowed: Any, disallowed: Any, tiktoken: bool
) -> tuple[frozenset[str], frozenset[str] | None]:
    """``(allowed, disallowed or None)``: the special tokens cut out of the text, and those
    whose presence is an error, as tiktoken's ``encode`` reads its two arguments; ``None``
    takes tiktoken's defaults (``allowed=()``, ``disallowed="all"``) when ``tiktoken``, else
    ``tokenizers``' behaviour (every special token cut out).

    Examples
    --------
    >>> specials = {"<|endoftext|>": 0, "<|fim|>": 1}
    >>> allowed, refused = special_sets(specials, {"<|fim|>"}, None, tiktoken=True)
    >>> sorted(allowed), sorted(refused)
    (['<|fim|>'], ['<|endoftext|>'])
    >>> special_sets(specials, None, None, tiktoken=False)[1] is None
    True
    """
    if allowed is None:
        allowed = () if tiktoken else "all"
    if disallowed is None:
        disallowed = "all" if tiktoken else ()
    allowed_set = _special_set("allowed_special", allowed, specials)
    if disallowed == "all":
        return allowed_set, frozenset(specials) - allowed_set
    refused = _special_set("disallowed_special", disallowed, specials)
    return allowed_set, (refused or None)


def check_disallowed(texts: Sequence[str], disallowed: AbstractSet[str]) -> None:
    """A ``ValueError`` if a text holds a ``disallowed`` special token (tiktoken's check)."""
    finder = special_regex(sorted(disallowed))
    if finder is None:
        return
    for n, text in enumerate(texts):
        found = finder.search(text)
        if found is not None:
            token = found.group()
            where = f"at character {found.start()}" + (f" of text {n}" if len(texts) > 1 else "")
            raise ValueError(
                f"the text holds the special token {token!r} {where}, which disallowed_special "
                f"refuses (tiktoken's default); pass allowed_special={{{token!r}, ...}} (or "
                "'all') to encode it as that token, or disallowed_special=() to encode it as text"
            )
