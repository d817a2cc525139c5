"""Before the model: the normalizers and pre-tokenizers of ``tokenizer.json`` files.

A Hugging Face tokenizer runs ``normalizer -> pre_tokenizer -> model``. rowbook reads the
parts WordPiece and Unigram files use, each with ``tokenizers``' behaviour:

* normalizers: ``BertNormalizer`` (:mod:`rowbook.text.bert`), ``NFC`` / ``NFD`` / ``NFKC`` /
  ``NFKD``, ``Lowercase`` (character by character), ``StripAccents`` (drops nonspacing
  marks, no decomposition of its own), ``Strip``, ``Replace`` (a string or a regex),
  ``Prepend``, ``Precompiled`` (a SentencePiece character map,
  :mod:`rowbook.text.sentencepiece.charsmap`) and ``Sequence``;
* pre-tokenizers: ``BertPreTokenizer``, ``Metaspace`` (spaces become ``"▁"``, one is put
  in front, words start at each ``"▁"``), ``WhitespaceSplit``, ``Whitespace``.

Each normalizer maps ``str -> str`` for the ids and :class:`~rowbook.text.aligned.Aligned`
``-> Aligned`` for the offsets; each pre-tokenizer gives the words of a normalized string
(``words``) and the same words aligned (``aligned_words``). ``first`` tells a pre-tokenizer
that the text starts the original one (``Metaspace(prepend_scheme="first")``).

Examples
--------
>>> Metaspace().words("hello  world", first=True)
['▁hello', '▁', '▁world']
>>> normalizer_from_json({"type": "Sequence", "normalizers": [{"type": "NFKC"},
...                       {"type": "Lowercase"}]})("ＡＢＣ ﬁ")
'abc fi'
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import regex

from rowbook.text.aligned import Aligned
from rowbook.text.bert import _MARKS, BertNormalizer, BertPreTokenizer, bert_lower

__all__ = [
    "Metaspace",
    "MetaspaceSettings",
    "NormalizerSequence",
    "Prepend",
    "Replace",
    "Strip",
    "UnicodeForm",
    "WhitespaceSplit",
    "normalizer_from_json",
    "pre_tokenizer_from_json",
]


@dataclass(frozen=True)
class UnicodeForm:
    """``NFC``, ``NFD``, ``NFKC`` or ``NFKD``."""

    form: str

    def __call__(self, text: str) -> str:
        return unicodedata.normalize(self.form, text)

    def aligned(self, text: Aligned) -> Aligned:
        return text.unicode_form(self.form)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.form}


@dataclass(frozen=True)
class _CharMap:
    """A normalizer that maps each character by itself (``Lowercase``, ``StripAccents``)."""

    name: str
    f: Callable[[str], str]

    def __call__(self, text: str) -> str:
        return "".join(map(self.f, text)) if not text.isascii() else self.f(text)

    def aligned(self, text: Aligned) -> Aligned:
        return text.map_chars(self.f)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.name}


def _lower(text: str) -> str:
    return text.lower() if text.isascii() else "".join(map(bert_lower, text))


def _strip_marks(c: str) -> str:
    return c if c.isascii() else _MARKS.sub("", c)


@dataclass(frozen=True)
class Replace:
    """``tokenizers``' ``Replace``: every match of ``pattern`` (a literal ``String`` or a
    ``Regex``) becomes ``content``; the new characters take the span of the match."""

    pattern: str
    content: str
    is_regex: bool = False

    def __post_init__(self) -> None:
        _ = self._regex  # a bad pattern fails here, not at the first text

    @property
    def _regex(self) -> regex.Pattern:
        return regex.compile(self.pattern if self.is_regex else regex.escape(self.pattern))

    def __call__(self, text: str) -> str:
        if not self.is_regex:
            return text.replace(self.pattern, self.content)
        return self._regex.sub(lambda _: self.content, text)

    def aligned(self, text: Aligned) -> Aligned:
        parts, end = [], 0
        for m in self._regex.finditer(text.text):
            if m.end() == m.start():
                continue
            parts.append(text.slice(end, m.start()))
            span = text.span(m.start(), m.end())
            n = len(self.content)
            parts.append(Aligned(self.content, (span[0],) * n, (span[1],) * n))
            end = m.end()
        parts.append(text.slice(end, len(text)))
        return text.join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "Replace",
            "pattern": {"Regex" if self.is_regex else "String": self.pattern},
            "content": self.content,
        }


@dataclass(frozen=True)
class Strip:
    """``tokenizers``' ``Strip``: whitespace removed at the start and/or the end."""

    left: bool = True
    right: bool = True

    def _bounds(self, text: str) -> tuple[int, int]:
        start = len(text) - len(regex.sub(r"^\p{White_Space}+", "", text)) if self.left else 0
        end = len(regex.sub(r"\p{White_Space}+$", "", text)) if self.right else len(text)
        return start, max(start, end)

    def __call__(self, text: str) -> str:
        return text[slice(*self._bounds(text))]

    def aligned(self, text: Aligned) -> Aligned:
        return text.slice(*self._bounds(text.text))

    def to_json(self) -> dict[str, Any]:
        return {"type": "Strip", "strip_left": self.left, "strip_right": self.right}


@dataclass(frozen=True)
class Prepend:
    """``tokenizers``' ``Prepend``: ``prefix`` put in front of non-empty text."""

    prefix: str

    def __call__(self, text: str) -> str:
        return self.prefix + text if text else text

    def aligned(self, text: Aligned) -> Aligned:
        return text.prepend(self.prefix)

    def to_json(self) -> dict[str, Any]:
        return {"type": "Prepend", "prepend": self.prefix}


@dataclass(frozen=True)
class NormalizerSequence:
    """Normalizers applied in order."""

    steps: tuple[Any, ...]

    def __call__(self, text: str) -> str:
        for step in self.steps:
            text = step(text)
        return text

    def aligned(self, text: Aligned) -> Aligned:
        for step in self.steps:
            text = step.aligned(text)
        return text

    def to_json(self) -> dict[str, Any]:
        return {"type": "Sequence", "normalizers": [s.to_json() for s in self.steps]}


def normalizer_from_json(d: Any, where: str = "normalizer") -> Any:
    """The normalizer of a ``tokenizer.json`` ``normalizer`` entry (``None`` for null)."""
    if d is None:
        return None
    kind = d.get("type") if isinstance(d, dict) else None
    if kind == "BertNormalizer":
        flags = {
            k: d.get(k, default)
            for k, default in (
                ("clean_text", True),
                ("handle_chinese_chars", True),
                ("lowercase", True),
            )
        }
        try:
            return BertNormalizer(**flags, strip_accents=d.get("strip_accents"))
        except TypeError as err:
            raise ValueError(f"{where}: {err}") from None
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return UnicodeForm(kind)
    if kind == "Lowercase":
        return _CharMap("Lowercase", _lower)
    if kind == "StripAccents":
        return _CharMap("StripAccents", _strip_marks)
    if kind == "Replace":
        pattern, content = d.get("pattern"), d.get("content")
        key = next(iter(pattern), None) if isinstance(pattern, dict) and len(pattern) == 1 else None
        if (
            key not in ("String", "Regex")
            or not isinstance(pattern[key], str)
            or not isinstance(content, str)
        ):
            raise ValueError(
                f"{where}: Replace needs a pattern {{'String' or 'Regex': str}} and a string content"
            )
        try:
            return Replace(pattern[key], content, key == "Regex")
        except regex.error as err:
            raise ValueError(
                f"{where}: Replace pattern {pattern[key]!r} is not a valid regex: {err}"
            ) from None
    if kind == "Strip" and all(
        isinstance(d.get(k, True), bool) for k in ("strip_left", "strip_right")
    ):
        return Strip(d.get("strip_left", True), d.get("strip_right", True))
    if kind == "Prepend" and isinstance(d.get("prepend"), str):
        return Prepend(d["prepend"])
    if kind == "Precompiled":
        from rowbook.text.sentencepiece.charsmap import Precompiled

        return Precompiled.from_json(d, where)
    if kind == "Sequence" and isinstance(d.get("normalizers"), list):
        return NormalizerSequence(tuple(normalizer_from_json(s, where) for s in d["normalizers"]))
    raise ValueError(
        f"{where}: normalizer {str(kind or d)[:60]!r} is not supported; rowbook reads "
        "BertNormalizer, NFC/NFD/NFKC/NFKD, Lowercase, StripAccents, Strip, Replace, "
        "Prepend, Precompiled and Sequence"
    )


# -- pre-tokenizers ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def _word_pattern(replacement: str) -> re.Pattern:
    """Words that start at each ``replacement`` (and a first word before any)."""
    r = re.escape(replacement)
    return re.compile(f"{r}[^{r}]*|[^{r}]+", re.S)


@dataclass(frozen=True)
class MetaspaceSettings:
    """The settings ``tokenizers``' ``Metaspace`` pre-tokenizer and its decoder share, and
    their one ``tokenizer.json`` entry."""

    replacement: str = "▁"
    prepend_scheme: str = "always"
    split: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "Metaspace",
            "replacement": self.replacement,
            "prepend_scheme": self.prepend_scheme,
            "split": self.split,
        }


@dataclass(frozen=True)
class Metaspace(MetaspaceSettings):
    """``tokenizers``' ``Metaspace``: spaces become ``replacement``; one is put in front
    (``prepend_scheme``: ``"always"``, ``"first"`` (only at the start of the text) or
    ``"never"``) unless the text starts with one; with ``split``, every ``replacement``
    starts a new word."""

    def _prepends(self, text: str, first: bool) -> bool:
        scheme = self.prepend_scheme
        return (
            bool(text)
            and not text.startswith(self.replacement)
            and (scheme == "always" or (scheme == "first" and first))
        )

    @property
    def _pieces(self) -> re.Pattern:
        return _word_pattern(self.replacement)

    def _cuts(self, text: str) -> list[tuple[int, int]]:
        if not self.split:
            return [(0, len(text))] if text else []
        return [m.span() for m in self._pieces.finditer(text)]

    def words(self, text: str, first: bool = True) -> list[str]:
        text = text.replace(" ", self.replacement)
        if self._prepends(text, first):
            text = self.replacement + text
        if not self.split:
            return [text] if text else []
        return self._pieces.findall(text)

    def aligned_words(self, text: Aligned, first: bool = True) -> list[Aligned]:
        text = Aligned(text.text.replace(" ", self.replacement), text.starts, text.ends)
        if self._prepends(text.text, first):
            text = text.prepend(self.replacement)
        return [text.slice(a, b) for a, b in self._cuts(text.text)]


@dataclass(frozen=True)
class WhitespaceSplit:
    """``WhitespaceSplit`` (words between whitespace) or, with ``punctuation``,
    ``Whitespace`` (the regex ``\\w+|[^\\w\\s]+``)."""

    punctuation: bool = False

    @property
    def _regex(self) -> regex.Pattern:
        return regex.compile(r"\w+|[^\w\s]+" if self.punctuation else r"[^\p{White_Space}]+")

    def words(self, text: str, first: bool = True) -> list[str]:
        return self._regex.findall(text)

    def aligned_words(self, text: Aligned, first: bool = True) -> list[Aligned]:
        return [text.slice(*m.span()) for m in self._regex.finditer(text.text)]

    def to_json(self) -> dict[str, Any]:
        return {"type": "Whitespace" if self.punctuation else "WhitespaceSplit"}


def pre_tokenizer_from_json(d: Any, where: str = "pre_tokenizer") -> Any:
    """The pre-tokenizer of a ``tokenizer.json`` ``pre_tokenizer`` entry (``None`` for null)."""
    if d is None:
        return None
    kind = d.get("type") if isinstance(d, dict) else None
    if kind == "BertPreTokenizer":
        return BertPreTokenizer()
    if kind in ("Whitespace", "WhitespaceSplit"):
        return WhitespaceSplit(kind == "Whitespace")
    if kind == "Metaspace":
        scheme = d.get(
            "prepend_scheme", "always" if d.get("add_prefix_space", True) is not False else "never"
        )
        replacement, split = d.get("replacement", "▁"), d.get("split", True)
        if (
            scheme not in ("always", "first", "never")
            or not isinstance(replacement, str)
            or len(replacement) != 1
            or not isinstance(split, bool)
        ):
            raise ValueError(
                f"{where}: Metaspace needs a one-character 'replacement', a 'prepend_scheme' "
                "of always/first/never and a boolean 'split'"
            )
        return Metaspace(replacement, scheme, split)
    raise ValueError(
        f"{where}: pre_tokenizer {str(kind or d)[:60]!r} is not supported; rowbook reads "
        "BertPreTokenizer, Metaspace, Whitespace and WhitespaceSplit"
    )
