"""Aligned text: a normalized string that remembers where each character came from.

The ids of a subword tokenizer come from the *normalized* text, but a user labelling spans
wants character offsets in the *original* one, as ``tokenizers`` gives them. An
:class:`Aligned` string carries, for every character, the span ``[start, end)`` of the
original text it was made from; each normalizing step maps those spans along:

* a character replaced by several (``"ﬁ"`` -> ``"fi"`` by NFKC, ``"İ"`` -> ``"i̇"`` by
  lower-casing) gives each of them its own span;
* a character dropped (a control character) drops its span;
* characters merged into one (``"e"`` + U+0301 -> ``"é"`` by NFC) give it the union of
  their spans;
* a character inserted (the ``"▁"`` a Metaspace pre-tokenizer puts in front) takes the span
  of the character it is put next to, as ``tokenizers`` aligns it.

A token covering normalized characters ``[i, j)`` then covers ``(starts[i], ends[j - 1])``
of the original text. Only offsets need this bookkeeping, so tokenizers normalize with
plain ``str`` operations to find the ids and build an :class:`Aligned` string only when
offsets are read.

Examples
--------
>>> a = Aligned.of("Ae\\u0301c").map_chars(str.lower).unicode_form("NFC")
>>> a.text, a.span(1, 2), a.span(2, 3)
('aéc', (1, 3), (3, 4))
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Aligned"]


@dataclass(frozen=True)
class Aligned:
    """A string and, for each of its characters, the ``[start, end)`` span it comes from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    @classmethod
    def of(cls, text: str, offset: int = 0) -> Aligned:
        """``text`` aligned with itself (character ``i`` comes from ``offset + i``)."""
        positions = range(offset, offset + len(text))
        return cls(text, tuple(positions), tuple(p + 1 for p in positions))

    def __len__(self) -> int:
        return len(self.text)

    def span(self, i: int, j: int) -> tuple[int, int]:
        """Original span of the normalized characters ``[i, j)`` (``j > i``)."""
        return self.starts[i], self.ends[j - 1]

    def map_chars(self, f: Callable[[str], str]) -> Aligned:
        """Replace each character ``c`` by ``f(c)`` (any length), spans following."""
        text, starts, ends = [], [], []
        for c, s, e in zip(self.text, self.starts, self.ends, strict=True):
            out = f(c)
            text.append(out)
            starts += [s] * len(out)
            ends += [e] * len(out)
        return Aligned("".join(text), tuple(starts), tuple(ends))

    def join(self, parts: list[Aligned]) -> Aligned:
        """``parts`` concatenated (``self`` is unused; reads like ``str.join``)."""
        return Aligned(
            "".join(p.text for p in parts),
            tuple(s for p in parts for s in p.starts),
            tuple(e for p in parts for e in p.ends),
        )

    def slice(self, i: int, j: int) -> Aligned:
        """Characters ``[i, j)``."""
        return Aligned(self.text[i:j], self.starts[i:j], self.ends[i:j])

    def prepend(self, prefix: str) -> Aligned:
        """``prefix + text``; the new characters take the span of the first character."""
        if not self.text:
            return self
        n = len(prefix)
        return Aligned(
            prefix + self.text, (self.starts[0],) * n + self.starts, (self.ends[0],) * n + self.ends
        )

    def unicode_form(self, form: str, keep: frozenset[str] = frozenset()) -> Aligned:
        """Unicode normalization ``form`` (``"NFC"``, ``"NFKD"``, ...), spans following;
        a decomposing form leaves the characters of ``keep`` as they are.

        The text is cut into chunks that normalize independently (a character with
        combining class 0 starts a chunk unless it composes with what precedes it); a chunk
        whose characters map one to one keeps their spans, any other gives each output
        character the span of the whole chunk.
        """
        chunks = _chunks(self.text, form)
        text, starts, ends, i = [], [], [], 0
        for chunk in chunks:
            out = unicodedata.normalize(form, chunk)
            j = i + len(chunk)
            if form in ("NFD", "NFKD"):
                out, out_spans = _decomposed(chunk, form, self.starts[i:j], self.ends[i:j], keep)
            elif len(out) == len(chunk):
                out_spans = list(zip(self.starts[i:j], self.ends[i:j], strict=True))
            else:
                out_spans = [(self.starts[i], self.ends[j - 1])] * len(out)
            text.append(out)
            starts += [s for s, _ in out_spans]
            ends += [e for _, e in out_spans]
            i = j
        return Aligned("".join(text), tuple(starts), tuple(ends))


def _decomposed(
    chunk: str, form: str, starts: tuple[int, ...], ends: tuple[int, ...], keep: frozenset[str]
) -> tuple[str, list[tuple[int, int]]]:
    """``normalize(form, chunk)`` for a decomposing ``form`` and its spans: each character's
    decomposition keeps its span, then marks are reordered by combining class (stable), as
    canonical ordering does."""
    pieces = [
        (c, s, e)
        for ch, s, e in zip(chunk, starts, ends, strict=True)
        for c in (ch if ch in keep else unicodedata.normalize(form, ch))
    ]
    out, run = [], []
    for item in pieces:
        if unicodedata.combining(item[0]):
            run.append(item)
            continue
        out += [*sorted(run, key=lambda x: unicodedata.combining(x[0])), item]
        run = []
    out += sorted(run, key=lambda x: unicodedata.combining(x[0]))
    return "".join(c for c, _, _ in out), [(s, e) for _, s, e in out]


def _chunks(text: str, form: str) -> list[str]:
    """``text`` cut where normalizing the parts separately changes nothing."""
    chunks: list[str] = []
    for c in text:
        if chunks and (
            unicodedata.combining(c)
            or unicodedata.normalize(form, chunks[-1] + c)
            != unicodedata.normalize(form, chunks[-1]) + unicodedata.normalize(form, c)
        ):
            chunks[-1] += c
        else:
            chunks.append(c)
    return chunks
