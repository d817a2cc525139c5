"""Normalize: collapse surface variation before tokenizing.

A :class:`Normalizer` is a callable ``str -> str`` that applies a fixed sequence of
steps, always in this order:

1. a Unicode normalization form (``"NFC"``, ``"NFKC"``, ``"NFD"``, ``"NFKD"`` or none);
2. case: keep, ``"lower"`` (:meth:`str.lower`) or ``"casefold"`` (:meth:`str.casefold`,
   which also maps ``"ß"`` to ``"ss"``);
3. strip accents: decompose (NFD), drop the combining marks (category ``Mn``), and
   recompose with the chosen form;
4. strip punctuation: drop every character of a Unicode punctuation category (``P*``);
5. collapse whitespace: every run of Unicode whitespace becomes one space;
6. strip: drop leading and trailing whitespace.

Examples
--------
>>> Normalizer(case="lower", strip=True)("  The Cat ")
'the cat'
>>> Normalizer(unicode_form="NFKC")("ﬁne ①")
'fine 1'
>>> Normalizer(strip_accents=True, case="casefold")("Crème Brûlée, Straße")
'creme brulee, strasse'
>>> Normalizer(strip_punctuation=True, collapse_whitespace=True)("Hello,  world!\\n")
'Hello world '
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

import regex

from rowbook.checks import InputTypeError

__all__ = ["Normalizer", "strip_accents"]

UnicodeForm = Literal["NFC", "NFKC", "NFD", "NFKD"]
_FORMS = ("NFC", "NFKC", "NFD", "NFKD")
_CASES = ("keep", "lower", "casefold")
_WHITESPACE = regex.compile(r"\s+")
_PUNCTUATION = regex.compile(r"\p{P}+")
_EDGE_WHITESPACE = regex.compile(r"\A\s+|\s+\Z")


def strip_accents(text: str, unicode_form: UnicodeForm | None = "NFC") -> str:
    """Remove combining marks: decompose, drop category ``Mn``, recompose with ``unicode_form``.

    Examples
    --------
    >>> strip_accents("naïve café")
    'naive cafe'
    >>> strip_accents("Ångström", unicode_form=None)
    'Angstrom'
    """
    decomposed = unicodedata.normalize("NFD", text)
    kept = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    return unicodedata.normalize(unicode_form, kept) if unicode_form else kept


@dataclass(frozen=True)
class Normalizer:
    """Compose Unicode normalization, case folding, accent, punctuation and whitespace steps.

    Parameters
    ----------
    unicode_form : {"NFC", "NFKC", "NFD", "NFKD"} or None, default "NFC"
        Unicode normalization form applied first (and used to recompose after
        ``strip_accents``). ``None`` leaves the code points as they are.
    case : {"keep", "lower", "casefold"}, default "keep"
        ``"lower"`` uses :meth:`str.lower`; ``"casefold"`` the more aggressive
        :meth:`str.casefold` meant for caseless matching.
    strip_accents : bool, default False
        Drop combining marks after a canonical decomposition (``"é"`` -> ``"e"``).
    strip_punctuation : bool, default False
        Drop every character of a Unicode punctuation category ``P*``. Symbols
        (``$``, ``+``, emoji) are kept.
    collapse_whitespace : bool, default False
        Replace each run of Unicode whitespace by a single space.
    strip : bool, default False
        Remove leading and trailing whitespace.

    Notes
    -----
    Whitespace means the Unicode ``White_Space`` property (regex ``\\s``) in both
    whitespace steps.

    Examples
    --------
    >>> norm = Normalizer(case="lower", collapse_whitespace=True, strip=True)
    >>> norm("  The\\tCat  sat ")
    'the cat sat'
    >>> norm.steps
    ('NFC', 'lower', 'collapse_whitespace', 'strip')
    """

    unicode_form: UnicodeForm | None = "NFC"
    case: Literal["keep", "lower", "casefold"] = "keep"
    strip_accents: bool = False
    strip_punctuation: bool = False
    collapse_whitespace: bool = False
    strip: bool = False

    def __post_init__(self) -> None:
        if self.unicode_form is not None and self.unicode_form not in _FORMS:
            raise ValueError(
                f"unicode_form must be one of {_FORMS} or None, got {self.unicode_form!r}"
            )
        if self.case not in _CASES:
            raise ValueError(f"case must be one of {_CASES}, got {self.case!r}")
        for name in ("strip_accents", "strip_punctuation", "collapse_whitespace", "strip"):
            if not isinstance(getattr(self, name), bool):
                raise InputTypeError(f"{name} must be a bool, got {getattr(self, name)!r}")

    @property
    def steps(self) -> tuple[str, ...]:
        """Names of the steps this normalizer applies, in order."""
        names = [self.unicode_form] if self.unicode_form else []
        names += [self.case] if self.case != "keep" else []
        flags = ("strip_accents", "strip_punctuation", "collapse_whitespace", "strip")
        return tuple(names + [name for name in flags if getattr(self, name)])

    def __call__(self, text: str) -> str:
        """Normalize one string."""
        if not isinstance(text, str):
            raise InputTypeError(f"Normalizer expects a str, got {type(text).__name__}")
        if self.unicode_form:
            text = unicodedata.normalize(self.unicode_form, text)
        if self.case == "lower":
            text = text.lower()
        elif self.case == "casefold":
            text = text.casefold()
        if self.strip_accents:
            text = strip_accents(text, self.unicode_form)
        if self.strip_punctuation:
            text = _PUNCTUATION.sub("", text)
        if self.collapse_whitespace:
            text = _WHITESPACE.sub(" ", text)
        if self.strip:
            text = _EDGE_WHITESPACE.sub("", text)
        return text

    def to_dict(self) -> dict[str, Any]:
        """The parameters as a JSON-ready dict (``Normalizer(**d)`` rebuilds it)."""
        return {
            "unicode_form": self.unicode_form,
            "case": self.case,
            "strip_accents": self.strip_accents,
            "strip_punctuation": self.strip_punctuation,
            "collapse_whitespace": self.collapse_whitespace,
            "strip": self.strip,
        }
