"""BERT's normalizer and pre-tokenizer, character for character as ``tokenizers`` has them.

:class:`BertNormalizer` (``tokenizers.normalizers.BertNormalizer``), in this order:

1. ``clean_text``: drop U+0000, U+FFFD and control characters (categories ``Cc``, ``Cf``,
   ``Co``, ``Cs`` except tab, newline and carriage return), then turn every whitespace
   character (tab, newline, carriage return, Unicode ``White_Space``) into a space;
2. ``handle_chinese_chars``: put a space on each side of every CJK ideograph (the
   ranges of :data:`CJK_RANGES`; Hangul, kana and others are left alone);
3. ``strip_accents`` (``None``: the value of ``lowercase``): decompose (NFD) and drop
   nonspacing marks (category ``Mn``);
4. ``lowercase``: each character by itself (``"Σ"`` is always ``"σ"``; ``str.lower`` would
   write a final ``"ς"``).

:class:`BertPreTokenizer` (``tokenizers.pre_tokenizers.BertPreTokenizer``) splits on
whitespace (dropped) and makes every punctuation character (ASCII punctuation, which
includes ``$ + < = > ^ ` | ~``, or a Unicode ``P*`` category) a word of its own.

The Unicode version. ``tokenizers`` takes its categories from the ``unicode_categories``
crate (Unicode 9.0), its NFD and lower case from newer tables; Python and the ``regex``
package know other versions. The characters where they disagree (new punctuation and
marks, format characters added since 9.0, 55 lower-case pairs newer than Python's
tables) are listed below, found by running both on every code point; the tests run that
comparison again, so the two agree on all 1,112,064 code points.

Examples
--------
>>> norm = BertNormalizer()
>>> norm("Héllo\\tWÖRLD 你好\\x00!")
'hello world  你  好 !'
>>> BertPreTokenizer().words(norm("Héllo, wörld!!"))
['hello', ',', 'world', '!', '!']
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import regex

from rowbook.checks import InputTypeError
from rowbook.text.aligned import Aligned

__all__ = ["CJK_RANGES", "BertNormalizer", "BertPreTokenizer", "bert_lower"]

#: The CJK ideograph blocks ``tokenizers`` pads with spaces (``is_chinese_char``).
CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)
# Where the regex package's Unicode classes and tokenizers' (Unicode 9.0) disagree.
_FORMAT_KEPT = ((0x890, 0x891), (0x8E2, 0x8E2), (0x110CD, 0x110CD), (0x13430, 0x1343F))
_PUNCT_ADDED = ((0x166D, 0x166D), (0x111C9, 0x111C9))
_PUNCT_DROPPED = (
    (0x61D, 0x61D),
    (0x9FD, 0x9FD),
    (0xA76, 0xA76),
    (0xC77, 0xC77),
    (0xC84, 0xC84),
    (0x1B4E, 0x1B4F),
    (0x1B7D, 0x1B7F),
    (0x2E43, 0x2E4F),
    (0x2E52, 0x2E5D),
    (0x2E60, 0x2E63),
    (0x10D6E, 0x10D6E),
    (0x10EAD, 0x10EAD),
    (0x10ED0, 0x10ED0),
    (0x10F55, 0x10F59),
    (0x10F86, 0x10F89),
    (0x113D4, 0x113D5),
    (0x113D7, 0x113D8),
    (0x1144B, 0x1144F),
    (0x1145A, 0x1145B),
    (0x1145D, 0x1145D),
    (0x11660, 0x1166C),
    (0x116B9, 0x116B9),
    (0x1183B, 0x1183B),
    (0x11944, 0x11946),
    (0x119E2, 0x119E2),
    (0x11A3F, 0x11A46),
    (0x11A9A, 0x11A9C),
    (0x11A9E, 0x11AA2),
    (0x11B00, 0x11B09),
    (0x11BE1, 0x11BE1),
    (0x11C41, 0x11C45),
    (0x11C70, 0x11C71),
    (0x11EF7, 0x11EF8),
    (0x11F43, 0x11F4F),
    (0x11FFF, 0x11FFF),
    (0x12FF1, 0x12FF2),
    (0x16D6D, 0x16D6F),
    (0x16E97, 0x16E9A),
    (0x16FE2, 0x16FE2),
    (0x1E5FF, 0x1E5FF),
    (0x1E95E, 0x1E95F),
)
_MARKS_KEPT = (
    (0x5C8, 0x5C9),
    (0x7FD, 0x7FD),
    (0x897, 0x89F),
    (0x8CA, 0x8E1),
    (0x9FE, 0x9FE),
    (0xAFA, 0xAFF),
    (0xB53, 0xB55),
    (0xC04, 0xC04),
    (0xC3C, 0xC3C),
    (0xD00, 0xD00),
    (0xD3B, 0xD3C),
    (0xD81, 0xD81),
    (0xEBA, 0xEBA),
    (0xECE, 0xECE),
    (0x180F, 0x180F),
    (0x1885, 0x1886),
    (0x1ABF, 0x1AF0),
    (0x1DF6, 0x1DFB),
    (0xA82C, 0xA82C),
    (0xA8C5, 0xA8C5),
    (0xA8FF, 0xA8FF),
    (0xA9BD, 0xA9BD),
    (0x10D24, 0x10D27),
    (0x10D69, 0x10D6D),
    (0x10EAB, 0x10EAC),
    (0x10ECB, 0x10ECF),
    (0x10EF0, 0x10EFF),
    (0x10F46, 0x10F50),
    (0x10F82, 0x10F85),
    (0x11070, 0x11070),
    (0x11073, 0x11074),
    (0x110C2, 0x110C2),
    (0x111C9, 0x111C9),
    (0x111CF, 0x111CF),
    (0x1123E, 0x1123E),
    (0x11241, 0x11241),
    (0x1133B, 0x1133B),
    (0x113BB, 0x113C0),
    (0x113CE, 0x113CE),
    (0x113D0, 0x113D0),
    (0x113D2, 0x113D2),
    (0x113E1, 0x113E2),
    (0x11438, 0x1143F),
    (0x11442, 0x11444),
    (0x11446, 0x11446),
    (0x1145E, 0x1145E),
    (0x1182F, 0x11837),
    (0x11839, 0x1183A),
    (0x1193B, 0x1193C),
    (0x1193E, 0x1193E),
    (0x11943, 0x11943),
    (0x119D4, 0x119D7),
    (0x119DA, 0x119DB),
    (0x119E0, 0x119E0),
    (0x11A01, 0x11A0A),
    (0x11A33, 0x11A38),
    (0x11A3B, 0x11A3E),
    (0x11A47, 0x11A47),
    (0x11A51, 0x11A56),
    (0x11A59, 0x11A5B),
    (0x11A8A, 0x11A96),
    (0x11A98, 0x11A99),
    (0x11B60, 0x11B60),
    (0x11B62, 0x11B64),
    (0x11B66, 0x11B66),
    (0x11C30, 0x11C36),
    (0x11C38, 0x11C3D),
    (0x11C3F, 0x11C3F),
    (0x11C92, 0x11CA7),
    (0x11CAA, 0x11CB0),
    (0x11CB2, 0x11CB3),
    (0x11CB5, 0x11CB6),
    (0x11D31, 0x11D36),
    (0x11D3A, 0x11D3A),
    (0x11D3C, 0x11D3D),
    (0x11D3F, 0x11D45),
    (0x11D47, 0x11D47),
    (0x11D90, 0x11D91),
    (0x11D95, 0x11D95),
    (0x11D97, 0x11D97),
    (0x11DF0, 0x11DF0),
    (0x11EF3, 0x11EF4),
    (0x11F00, 0x11F01),
    (0x11F36, 0x11F3A),
    (0x11F40, 0x11F40),
    (0x11F42, 0x11F42),
    (0x11F5A, 0x11F5A),
    (0x13440, 0x13440),
    (0x13447, 0x13455),
    (0x1611E, 0x16129),
    (0x1612D, 0x1612F),
    (0x16F4F, 0x16F4F),
    (0x16FE4, 0x16FE4),
    (0x1CF00, 0x1CF2D),
    (0x1CF30, 0x1CF46),
    (0x1D127, 0x1D128),
    (0x1D25B, 0x1D25C),
    (0x1E000, 0x1E006),
    (0x1E008, 0x1E018),
    (0x1E01B, 0x1E021),
    (0x1E023, 0x1E024),
    (0x1E026, 0x1E02A),
    (0x1E08F, 0x1E08F),
    (0x1E130, 0x1E136),
    (0x1E2AE, 0x1E2AE),
    (0x1E2EC, 0x1E2EF),
    (0x1E4EC, 0x1E4EF),
    (0x1E5EE, 0x1E5EF),
    (0x1E6E3, 0x1E6E3),
    (0x1E6E6, 0x1E6E6),
    (0x1E6EE, 0x1E6EF),
    (0x1E6F5, 0x1E6F5),
    (0x1E944, 0x1E94A),
)
_MARKS_ADDED = ((0x1734, 0x1734), (0x1171E, 0x1171E))
_NOT_DECOMPOSED = (0x11938,)
_KEPT_WHOLE = frozenset(map(chr, _NOT_DECOMPOSED))
# Lower-case pairs newer than Python's tables: (first, last, shift) and single characters.
_LOWER_SHIFTED = ((0x10D50, 0x10D65, 0x20), (0x16EA0, 0x16EB8, 0x1B))
_LOWER_SINGLE = {
    0x1C89: 0x1C8A,
    0xA7CB: 0x264,
    0xA7CC: 0xA7CD,
    0xA7CE: 0xA7CF,
    0xA7D2: 0xA7D3,
    0xA7D4: 0xA7D5,
    0xA7DA: 0xA7DB,
    0xA7DC: 0x19B,
}
_ASCII_PUNCT = "!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~"


def _ranges(pairs: tuple[tuple[int, int], ...]) -> str:
    """A regex character-class body for code point ranges."""
    return "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in pairs)


_CONTROL = regex.compile(
    rf"(?V1)[[\x00\ufffd\p{{Cc}}\p{{Cf}}\p{{Co}}\p{{Cs}}]--[\t\n\r{_ranges(_FORMAT_KEPT)}]]+"
)
_SPACE = regex.compile(r"[\t\n\r\p{White_Space}]")
_CJK = regex.compile(f"([{_ranges(CJK_RANGES)}])")
_MARKS = regex.compile(rf"(?V1)[[\p{{Mn}}--[{_ranges(_MARKS_KEPT)}]]{_ranges(_MARKS_ADDED)}]+")
_PUNCT = rf"[[\p{{P}}{_ASCII_PUNCT}{_ranges(_PUNCT_ADDED)}]--[{_ranges(_PUNCT_DROPPED)}]]"
_WORDS = regex.compile(rf"(?V1)[^\p{{White_Space}}{_PUNCT}]+|{_PUNCT}")
#: The words of ASCII text, for the standard library's ``re`` (several times faster there).
_ASCII_WORDS = re.compile(r"[^\t\n\x0b\x0c\r !-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")
_ASCII_CLEAN = {c: None for c in [*range(0, 9), 11, 12, *range(14, 32), 127]} | {
    9: 32,
    10: 32,
    13: 32,
}
_LOWER_EXTRA = _LOWER_SINGLE | {c: c + d for a, b, d in _LOWER_SHIFTED for c in range(a, b + 1)}
_NOT_PYTHON_LOWER = regex.compile("[Σ" + _ranges(tuple((c, c) for c in sorted(_LOWER_EXTRA))) + "]")


def bert_lower(c: str) -> str:
    """Lower case of one character as Rust's ``char::to_lowercase`` gives it.

    Examples
    --------
    >>> bert_lower("Σ"), bert_lower("İ") == "i\\u0307", bert_lower("\\U00010d50") == "\\U00010d70"
    ('σ', True, True)
    """
    extra = _LOWER_EXTRA.get(ord(c))
    return chr(extra) if extra is not None else c.lower()


def _lower(text: str) -> str:
    if text.isascii():
        return text.lower()
    if _NOT_PYTHON_LOWER.search(text):
        return "".join(map(bert_lower, text))  # str.lower would write a final sigma
    return text.lower()


def _nfd(text: str) -> str:
    if any(ord(c) in _NOT_DECOMPOSED for c in text):
        return "".join(
            c if ord(c) in _NOT_DECOMPOSED else unicodedata.normalize("NFD", c) for c in text
        )
    return unicodedata.normalize("NFD", text)


@dataclass(frozen=True)
class BertNormalizer:
    """``tokenizers``' ``BertNormalizer``: clean, space CJK ideographs, strip accents, lower.

    Parameters
    ----------
    clean_text, handle_chinese_chars, lowercase : bool, default True
    strip_accents : bool or None, default None
        ``None`` strips accents exactly when ``lowercase`` is set (BERT uncased).
    """

    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None
    lowercase: bool = True

    def __post_init__(self) -> None:
        for name in ("clean_text", "handle_chinese_chars", "lowercase"):
            if not isinstance(getattr(self, name), bool):
                raise InputTypeError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if self.strip_accents is not None and not isinstance(self.strip_accents, bool):
            raise InputTypeError(
                f"strip_accents must be a bool or None, got {self.strip_accents!r}"
            )

    @property
    def _strips(self) -> bool:
        return self.lowercase if self.strip_accents is None else self.strip_accents

    def __call__(self, text: str) -> str:
        """The normalized text."""
        ascii_text = text.isascii()
        if self.clean_text:
            text = (
                text.translate(_ASCII_CLEAN)
                if ascii_text
                else _SPACE.sub(" ", _CONTROL.sub("", text))
            )
        if not ascii_text:
            if self.handle_chinese_chars:
                text = _CJK.sub(r" \1 ", text)
            if self._strips:
                text = _MARKS.sub("", _nfd(text))
        return _lower(text) if self.lowercase else text

    def aligned(self, text: Aligned) -> Aligned:
        """:meth:`__call__` keeping track of where each character comes from (for offsets)."""
        if self.clean_text:
            text = text.map_chars(
                lambda c: "" if _CONTROL.fullmatch(c) else " " if _SPACE.fullmatch(c) else c
            )
        if self.handle_chinese_chars:
            text = text.map_chars(lambda c: f" {c} " if _CJK.fullmatch(c) else c)
        if self._strips:
            text = text.unicode_form("NFD", _KEPT_WHOLE)
            text = text.map_chars(lambda c: "" if _MARKS.fullmatch(c) else c)
        return text.map_chars(bert_lower) if self.lowercase else text

    def to_json(self) -> dict[str, Any]:
        """The ``tokenizer.json`` form."""
        return {
            "type": "BertNormalizer",
            "clean_text": self.clean_text,
            "handle_chinese_chars": self.handle_chinese_chars,
            "strip_accents": self.strip_accents,
            "lowercase": self.lowercase,
        }


class BertPreTokenizer:
    """``tokenizers``' ``BertPreTokenizer``: whitespace splits, each punctuation mark is a word.

    Examples
    --------
    >>> BertPreTokenizer().spans("a-b  c")
    [(0, 1), (1, 2), (2, 3), (5, 6)]
    """

    def words(self, text: str, first: bool = True) -> list[str]:
        """The words of ``text`` (``first`` is unused: every pre-tokenizer takes it)."""
        return _ASCII_WORDS.findall(text) if text.isascii() else _WORDS.findall(text)

    def spans(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` of each word in ``text``."""
        return [m.span() for m in _WORDS.finditer(text)]

    def aligned_words(self, text: Aligned, first: bool = True) -> list[Aligned]:
        """:meth:`words` of aligned text, each keeping its spans."""
        return [text.slice(a, b) for a, b in self.spans(text.text)]

    def to_json(self) -> dict[str, Any]:
        """The ``tokenizer.json`` form."""
        return {"type": "BertPreTokenizer"}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BertPreTokenizer)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return "BertPreTokenizer()"
