"""Byte-level symbols: every byte gets a printable stand-in character, as in GPT-2.

A byte-level BPE works on the UTF-8 bytes of a text, so its 256 base symbols cover
every possible input and nothing is ever out of vocabulary. To keep tokens readable
(and to store them as JSON strings, the way Hugging Face ``tokenizer.json`` files do),
each byte is shown as one Unicode character:

* the 188 bytes that are printable Latin-1 characters (``!`` to ``~``, ``¡`` to ``¬``
  and ``®`` to ``ÿ``) stand for themselves;
* the other 68 (control bytes, space, DEL, NBSP, soft hyphen) are shifted, in byte
  order, to U+0100 and up: space (0x20) becomes ``Ġ``, newline (0x0A) ``Ċ``.

Before the bytes are seen, text is pre-split by :data:`GPT2_PATTERN` so merges never
cross word boundaries, and a leading space stays attached to the word after it.

Examples
--------
>>> to_byte_level("héllo world\\n")
'hÃ©lloĠworldĊ'
>>> from_byte_level('hÃ©lloĠworldĊ').decode("utf-8")
'héllo world\\n'
>>> import regex
>>> regex.findall(GPT2_PATTERN, "I'll pay $3.50  now!")
['I', "'ll", ' pay', ' $', '3', '.', '50', ' ', ' now', '!']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "BYTE_TO_UNICODE",
    "END_OF_TEXT",
    "GPT2_ASCII_PATTERN",
    "GPT2_PATTERN",
    "UNICODE_TO_BYTE",
    "byte_alphabet",
    "decode_tokens",
    "from_byte_level",
    "to_byte_level",
]

#: GPT-2's end-of-text token: the special token a byte-level BPE of rowbook's language
#: models ends each text with.
END_OF_TEXT = "<|endoftext|>"
#: The pre-tokenizer regex of GPT-2 (and of ``tokenizers``' ``ByteLevel(use_regex=True)``):
#: English contractions, letters, digits and other symbols (each optionally preceded by
#: one space), and whitespace, where a whitespace run before a word leaves its last
#: space to that word.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

#: :data:`GPT2_PATTERN` for ASCII text, written for the standard library's ``re``, which runs
#: it twice as fast as ``regex`` runs the original (2.8 MB of news). On ASCII the two find
#: the same pieces: ``\p{L}`` is ``[A-Za-z]``, ``\p{N}`` is ``[0-9]``, and ``regex``'s ``\s``
#: is ``[\t\n\v\f\r ]`` (``re``'s would add ``\x1c``-``\x1f``, so it is spelled out).
GPT2_ASCII_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\t\n\x0b\x0c\r A-Za-z0-9]+"""
    r"""|[\t\n\x0b\x0c\r ]+(?![^\t\n\x0b\x0c\r ])|[\t\n\x0b\x0c\r ]+"""
)


def _byte_to_unicode() -> tuple[str, ...]:
    printable = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    shifted = [b for b in range(256) if b not in printable]
    chars = {b: chr(b) for b in printable}
    chars.update({b: chr(0x100 + i) for i, b in enumerate(shifted)})
    return tuple(chars[b] for b in range(256))


#: ``BYTE_TO_UNICODE[b]`` is the character standing for byte ``b``.
BYTE_TO_UNICODE: tuple[str, ...] = _byte_to_unicode()
#: The inverse map, character -> byte value.
UNICODE_TO_BYTE: dict[str, int] = {c: b for b, c in enumerate(BYTE_TO_UNICODE)}
_TO_CHARS = {b: c for b, c in enumerate(BYTE_TO_UNICODE)}
_BYTE_ORDER = np.array(sorted(range(256), key=lambda b: BYTE_TO_UNICODE[b]), dtype=np.int64)


def byte_alphabet() -> list[str]:
    """The 256 byte characters sorted by code point: the order ``tokenizers`` gives them ids.

    Examples
    --------
    >>> alphabet = byte_alphabet()
    >>> len(alphabet), alphabet[:3], alphabet[-1]
    (256, ['!', '"', '#'], 'Ń')
    """
    return [BYTE_TO_UNICODE[b] for b in _BYTE_ORDER]


def to_byte_level(text: str) -> str:
    """The UTF-8 bytes of ``text``, one stand-in character per byte."""
    return text.encode("utf-8").decode("latin-1").translate(_TO_CHARS)


def from_byte_level(symbols: str) -> bytes:
    """The bytes spelled by byte-level characters; any other character passes through.

    As ``tokenizers``' ``ByteLevel`` decoder does for a token: if one of its characters is
    outside the byte alphabet (an added token such as ``"☃"``), the whole string stands
    for its own UTF-8 bytes.

    Examples
    --------
    >>> from_byte_level("ĠcafÃ©"), from_byte_level("☃ĠÃ©")
    (b' caf\xc3\xa9', b'\xe2\x98\x83\xc4\xa0\xc3\x83\xc2\xa9')
    """
    try:
        return bytes([UNICODE_TO_BYTE[c] for c in symbols])
    except KeyError:
        return symbols.encode("utf-8")


def decode_tokens(tokens: Sequence[str]) -> str:
    """Text of byte-level tokens, as ``tokenizers.decoders.ByteLevel().decode(tokens)``.

    Each token is mapped with :func:`from_byte_level` (so characters outside the byte
    alphabet pass through), the bytes are joined and decoded as UTF-8, invalid sequences
    becoming U+FFFD.

    Examples
    --------
    >>> decode_tokens(["caf", "Ã", "©", "Ġ☃"])  # the last token is not byte-level: kept as is
    'caféĠ☃'
    """
    return b"".join(map(from_byte_level, tokens)).decode("utf-8", errors="replace")
