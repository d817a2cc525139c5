"""SentencePiece's normalizer and decoder, as ``normalizer.cc`` and ``sentencepiece_processor.cc`` run them.

Normalizing (``Normalizer::Normalize``) walks the text a prefix at a time: a user-defined
symbol is kept as it is, else the longest rule of the character map applies
(:mod:`rowbook.text.sentencepiece.charsmap`), else the character is copied. Around that,
with the ``normalizer_spec`` flags:

* ``remove_extra_whitespaces``: leading spaces are dropped, a piece that follows one ending
  in a space loses its leading spaces, trailing spaces are dropped;
* ``add_dummy_prefix``: a space is put in front (at the end with
  ``treat_whitespace_as_suffix``), so a word always starts with one;
* ``escape_whitespaces``: every space becomes ``"▁"`` (U+2581).

Without user-defined symbols, and when no rule writes two spaces in a row, that walk equals
string operations on the mapped text (collapse runs of spaces, strip both ends): the fast
path. Otherwise, and for offsets, the walk itself runs (:meth:`SentencePieceNormalizer.aligned`).
:func:`normalize_into` is that walk compiled, on code points, for the batch encoders of
:mod:`rowbook.text.sentencepiece.batch` (the tables of :attr:`SentencePieceNormalizer.tables`);
the tests hold it to :meth:`~SentencePieceNormalizer.aligned`.

Decoding (``Decode``): control pieces vanish, the unknown piece becomes ``unk_surface``
(``" ⁇ "``), runs of ``<0xXX>`` byte pieces become their UTF-8 text (each invalid byte a
U+FFFD), ``"▁"`` becomes a space and the space of the dummy prefix is dropped.

Examples
--------
>>> norm = SentencePieceNormalizer(None)
>>> norm("  Hello   world ")
'▁Hello▁world'
>>> SentencePieceNormalizer(None, remove_extra_whitespaces=False)(" a  b")
'▁▁a▁▁b'
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

import numba
import numpy as np
import regex

from rowbook.text.aligned import Aligned
from rowbook.text.sentencepiece.charsmap import CharsMap, longest_rule
from rowbook.text.trie import build_trie, longest_prefix

__all__ = [
    "SPACE",
    "SentencePieceDecoder",
    "SentencePieceNormalizer",
    "decode_utf8_bytes",
    "normalize_into",
    "with_room",
]

SPACE = "\u2581"
_SPACES = re.compile(" +")
_SPACE_CODE, _ESCAPED_CODE = 0x20, 0x2581


@numba.njit(cache=True, inline="always")
def _piece_at(data, i, e, user, rules, has_user, has_rules):
    """``NormalizePrefix`` at ``data[i]`` (``i < e``): ``(from rules, start, end, used)``, the
    output being ``rules[1][start:end]`` or ``data[start:end]``."""
    if has_user:
        length, _ = longest_prefix(user, data, i, e)
        if length > 0:
            return False, i, i + length, length
    if has_rules:
        length, rule = longest_rule(rules, data, i, e)
        if rule >= 0:
            return True, rules[2][rule], rules[2][rule + 1], length
    return False, i, i + 1, 1


@numba.njit(cache=True, inline="always")
def with_room(out, need):
    """``out``, or a copy twice ``need`` long when it holds fewer than ``need`` entries."""
    if need <= out.size:
        return out
    grown = np.empty(2 * need, out.dtype)
    grown[: out.size] = out
    return grown


@numba.njit(cache=True, nogil=True, _nrt=False)
def normalize_into(data, s, e, user, rules, flags, out):
    """The walk of :meth:`SentencePieceNormalizer.aligned` over the code points ``data[s:e]``,
    written to ``out``: the count ``m`` written. ``out`` must hold ``(e - s) * flags[6] + 2``
    (a rule writes at most ``flags[6]`` characters). ``user`` is the trie of the
    user-defined symbols, ``rules`` the character map's
    (:attr:`~rowbook.text.sentencepiece.charsmap.CharsMap.rules`), ``flags``
    :attr:`SentencePieceNormalizer.tables`'. Compiled without reference counts: the walk
    only reads and writes the arrays it is given (counting them cost 40 ns a character)."""
    has_user, has_rules, dummy, remove, escape, suffix = (
        flags[0],
        flags[1],
        flags[2],
        flags[3],
        flags[4],
        flags[5],
    )
    output = rules[1]
    i = s
    if remove:  # leading pieces that normalize to one space
        while i < e:
            ruled, a, b, used = _piece_at(data, i, e, user, rules, has_user, has_rules)
            c = output[a] if ruled else data[a]
            if b - a != 1 or c != _SPACE_CODE:
                break
            i += used
    if i == e:
        return 0
    space = _ESCAPED_CODE if escape else _SPACE_CODE
    m = 0
    if dummy and not suffix:
        out[0] = space
        m = 1
    prev_space = remove
    while i < e:
        ruled, a, b, used = _piece_at(data, i, e, user, rules, has_user, has_rules)
        if prev_space:
            while a < b and (output[a] if ruled else data[a]) == _SPACE_CODE:
                a += 1
        if a < b:
            for k in range(a, b):
                c = output[k] if ruled else data[k]
                out[m] = space if c == _SPACE_CODE else c
                m += 1
            prev_space = c == _SPACE_CODE
        i += used
        if not remove:
            prev_space = False
    if remove:
        while m > 0 and out[m - 1] == space:
            m -= 1
    if dummy and suffix:
        out[m] = space
        m += 1
    return m


class SentencePieceNormalizer:
    """The normalizer of a ``.model`` file (``charsmap`` ``None``: the identity rules)."""

    def __init__(
        self,
        charsmap: CharsMap | None,
        *,
        add_dummy_prefix: bool = True,
        remove_extra_whitespaces: bool = True,
        escape_whitespaces: bool = True,
        treat_whitespace_as_suffix: bool = False,
        user_defined: tuple[str, ...] = (),
    ) -> None:
        self.charsmap = charsmap or CharsMap({})
        self.add_dummy_prefix, self.remove_extra_whitespaces = (
            add_dummy_prefix,
            remove_extra_whitespaces,
        )
        self.escape_whitespaces, self.suffix = escape_whitespaces, treat_whitespace_as_suffix
        self.user_defined = tuple(user_defined)
        ordered = sorted(self.user_defined, key=len, reverse=True)
        self._symbols = regex.compile("|".join(map(regex.escape, ordered))) if ordered else None
        self._fast = self._symbols is None and not any(
            "  " in v for v in self.charsmap.table.values()
        )

    @functools.cached_property
    def tables(self) -> tuple:
        """``(user, rules, flags)`` of :func:`normalize_into`: the trie of the user-defined
        symbols, the character map's rules and the flags ``(has user symbols, has rules,
        add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces,
        treat_whitespace_as_suffix)``."""
        flags = np.array(
            [
                bool(self.user_defined),
                not self.charsmap.empty,
                self.add_dummy_prefix,
                self.remove_extra_whitespaces,
                self.escape_whitespaces,
                self.suffix,
                self.charsmap.widest,
            ],
            dtype=np.int64,
        )
        return build_trie(list(self.user_defined)), self.charsmap.rules, flags

    def __call__(self, text: str) -> str:
        if not self._fast:
            return self.aligned(Aligned.of(text)).text
        mapped = self.charsmap(text)
        if self.remove_extra_whitespaces:
            mapped = _SPACES.sub(" ", mapped).strip(" ")
            if not mapped:
                return ""
        if not text:
            return ""
        space = SPACE if self.escape_whitespaces else " "
        if self.escape_whitespaces:
            mapped = mapped.replace(" ", SPACE)
        if self.add_dummy_prefix and not self.suffix:
            mapped = space + mapped
        if self.remove_extra_whitespaces:  # the walk drops every trailing "▁", a literal one too
            mapped = mapped.rstrip(space)
        if self.add_dummy_prefix and self.suffix:
            mapped += space
        return mapped

    def symbols(self, text: str) -> list[str]:
        """The initial symbols of a normalized sentence for BPE: user-defined symbols whole
        (longest at each position), every other character by itself."""
        if self._symbols is None:
            return list(text)
        out, end = [], 0
        for m in self._symbols.finditer(text):
            out += list(text[end : m.start()])
            out.append(m.group())
            end = m.end()
        return out + list(text[end:])

    def _piece_at(self, text: str, i: int) -> tuple[str, int]:
        """``NormalizePrefix``: the output and the characters used at position ``i``."""
        if self._symbols is not None:
            m = self._symbols.match(text, i)
            if m is not None:
                return m.group(), m.end() - i
        table = self.charsmap.table
        for n in self.charsmap._lengths:
            source = text[i : i + n]
            if len(source) == n and source in table:
                return table[source], n
        return text[i], 1  # (the walk of aligned() below; CharsMap.pieces does the same in numba)

    def aligned(self, text: Aligned) -> Aligned:
        """``Normalizer::Normalize`` step by step, each output character with its span."""
        s, i, n = text.text, 0, len(text.text)
        if not s:
            return text
        if self.remove_extra_whitespaces:  # leading pieces that normalize to one space
            while i < n and self._piece_at(s, i)[0] == " ":
                i += self._piece_at(s, i)[1]
        if i == n:
            return text.slice(0, 0)
        space = SPACE if self.escape_whitespaces else " "
        chars: list[str] = []
        spans: list[tuple[int, int]] = []
        if self.add_dummy_prefix and not self.suffix:
            chars.append(space)
            spans.append(text.span(i, i + 1))
        prev_space = self.remove_extra_whitespaces
        while i < n:
            piece, used = self._piece_at(s, i)
            span = text.span(i, i + used)
            if prev_space:
                piece = piece.lstrip(" ")
            if piece:
                for c in piece:
                    chars.append(space if c == " " else c)
                    spans.append(span)
                prev_space = piece.endswith(" ")
            i += used
            if not self.remove_extra_whitespaces:
                prev_space = False
        if self.remove_extra_whitespaces:
            while chars and chars[-1] == space:
                chars.pop()
                spans.pop()
        if self.add_dummy_prefix and self.suffix:
            chars.append(space)
            spans.append(spans[-1] if spans else text.span(n - 1, n))
        return Aligned("".join(chars), tuple(a for a, _ in spans), tuple(b for _, b in spans))


def decode_utf8_bytes(data: bytes) -> str:
    """UTF-8 text of ``data``, each byte of an invalid sequence a U+FFFD (SentencePiece's rule).

    Examples
    --------
    >>> decode_utf8_bytes(b"a\\xc3\\xa9\\xc3b\\xff")
    'aé\\ufffdb\\ufffd'
    """
    out, i = [], 0
    while i < len(data):
        lead = data[i]
        size = (
            1
            if lead < 0x80
            else 2
            if 0xC2 <= lead < 0xE0
            else 3
            if 0xE0 <= lead < 0xF0
            else 4
            if 0xF0 <= lead < 0xF5
            else 0
        )
        try:
            out.append(data[i : i + size].decode("utf-8") if size else "\ufffd")
            i += max(size, 1)
        except UnicodeDecodeError:
            out.append("\ufffd")
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class SentencePieceDecoder:
    """``SentencePieceProcessor::Decode`` for token strings; ``types`` gives the ``.model``
    type of the pieces that are not normal (2 unknown, 3 control, 6 byte)."""

    types: dict[str, int] = field(default_factory=dict, compare=False)
    unk_surface: str = " \u2047 "
    strip_bos_space: bool = True
    remove_extra_whitespaces: bool = True

    def __call__(self, tokens: list[str]) -> str:
        """The text of ``tokens``."""
        text, run = "", bytearray()
        bos, seen = True, False
        for piece in tokens:
            kind = self.types.get(piece, 1)
            if kind == 6:
                run.append(int(piece[3:5], 16))
                continue
            if run:
                text += decode_utf8_bytes(bytes(run))
                run.clear()
            if seen or text:
                bos = False
            seen = False
            if kind == 3:
                continue
            if kind == 2:
                text += self.unk_surface
                continue
            if bos and self.strip_bos_space and piece.startswith(SPACE):
                piece, seen = piece[1:], not self.remove_extra_whitespaces
            text += piece.replace(SPACE, " ")
        return text + (decode_utf8_bytes(bytes(run)) if run else "")

    def to_json(self) -> Any:
        return None
