"""SentencePiece's precompiled character map: the normalization rules stored in a ``.model`` file.

``normalizer_spec.precompiled_charsmap`` holds the rules (``nmt_nfkc``: NFKC plus a few
fixes, ``nfkc_cf``, a custom TSV) compiled into bytes::

    <trie size: uint32 little-endian><Darts-clone double-array trie><replacement strings>

The trie maps the UTF-8 bytes of a source string to the offset of its replacement, a
NUL-terminated string in the last part. Normalizing walks the text left to right: at each
position the *longest* source string that starts there is replaced, and a position no source
starts at is copied (``Normalizer::NormalizePrefix`` in ``normalizer.cc``).

:func:`read_charsmap` walks the whole trie once (a numba depth-first search over the double
array, with every unit checked to lie inside it) into a ``source -> replacement`` dict, and
:class:`CharsMap` applies it with a numba walk of the trie of the sources (``nmt_nfkc``:
225,276 rules; most start with a Latin letter, since NFKC composes ``"e"`` and an accent),
the longest source at each position found in one pass (:func:`longest_rule`). Most
positions need no walk: a source of two or more characters continues with one of few
characters (185 in ``nmt_nfkc``, combining marks mostly), so when the next character is not
one of them only a one-character rule can apply, read from a table of the Basic
Multilingual Plane.

Examples
--------
>>> cmap = CharsMap({"ﬁ": "fi", "Ａ": "A", "Ａ\u0301": "Á"})
>>> cmap("ﬁne Ａ Ａ\u0301")
'fine A Á'
>>> cmap.pieces("ﬁxＡ́")
[('fi', 1), ('x', 1), ('Á', 2)]
"""

from __future__ import annotations

import base64
import functools
from typing import Any

import numba
import numpy as np

from rowbook.text.aligned import Aligned
from rowbook.text.trie import build_trie, codepoints, find_child, longest_prefix

__all__ = ["CharsMap", "Precompiled", "longest_rule", "read_charsmap"]


@numba.njit(cache=True)
def _walk(units):
    """Every ``(key bytes, value)`` of a Darts-clone double array, depth first. The last
    result is True for a damaged array: a unit outside it, a key over 63 bytes, or more than
    ``64 * units + 2**20`` nodes visited (the array shares sub-tries, so nodes are visited
    more than once: ``nmt_nfkc`` visits 262,841 for 44,800 units; a cycle never ends)."""
    n = units.size
    cap = 1024
    keys = np.zeros((cap, 64), np.int64)  # a stack of key prefixes
    stack_pos = np.empty(cap, np.int64)
    stack_len = np.empty(cap, np.int64)
    out_keys = np.zeros((16, 64), np.int64)
    out_len = np.zeros(16, np.int64)
    out_val = np.zeros(16, np.int64)
    found, pushes = 0, 0
    if n == 0:
        return out_keys[:0], out_len[:0], out_val[:0], False
    root = units[0]
    stack_pos[0] = (root >> 10) << ((root & (1 << 9)) >> 6)
    stack_len[0] = 0
    top = 1
    while top > 0:
        top -= 1
        pos, length = stack_pos[top], stack_len[top]
        prefix = keys[top].copy()
        if pos >= n or pos < 0:
            return out_keys[:found], out_len[:found], out_val[:found], True
        for c in range(1, 256):
            child = pos ^ c
            if child >= n:
                continue
            unit = units[child]
            if (unit & ((1 << 31) | 0xFF)) != c:
                continue
            nxt = child ^ ((unit >> 10) << ((unit & (1 << 9)) >> 6))
            pushes += 1
            if nxt >= n or length + 1 >= 64 or pushes > 64 * n + (1 << 20):
                return out_keys[:found], out_len[:found], out_val[:found], True
            if (unit >> 8) & 1:  # a key ends here: its value is in the unit at nxt
                if found == out_len.size:
                    out_keys = np.concatenate((out_keys, np.zeros_like(out_keys)))
                    out_len = np.concatenate((out_len, np.zeros_like(out_len)))
                    out_val = np.concatenate((out_val, np.zeros_like(out_val)))
                out_keys[found, :length] = prefix[:length]
                out_keys[found, length] = c
                out_len[found] = length + 1
                out_val[found] = units[nxt] & ((1 << 31) - 1)
                found += 1
            if top == cap:
                cap *= 2
                grown = np.zeros((cap, 64), np.int64)
                grown[:top] = keys[:top]
                keys = grown
                stack_pos = np.concatenate((stack_pos, np.empty(top, np.int64)))
                stack_len = np.concatenate((stack_len, np.empty(top, np.int64)))
            keys[top, :length] = prefix[:length]
            keys[top, length] = c
            stack_pos[top], stack_len[top] = nxt, length + 1
            top += 1
    return out_keys[:found], out_len[:found], out_val[:found], False


def read_charsmap(blob: bytes, where: str) -> dict[str, str]:
    """``source -> replacement`` of a precompiled character map (shared by the models of one
    process that hold the same map: do not modify it)."""
    try:
        return _parse(bytes(blob))
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


@functools.lru_cache(maxsize=4)  # nmt_nfkc is the same 240 KB in every model
def _parse(blob: bytes) -> dict[str, str]:
    if len(blob) <= 4:
        raise ValueError(f"the precompiled_charsmap of {len(blob)} bytes is too short")
    size = int.from_bytes(blob[:4], "little")
    if size >= len(blob) - 3 or size % 4:
        raise ValueError(
            f"the precompiled_charsmap claims a trie of {size} bytes in {len(blob)}; the map is damaged"
        )
    units = np.frombuffer(blob, dtype="<u4", count=size // 4, offset=4).astype(np.int64)
    strings = blob[4 + size :]
    keys, lengths, values, damaged = _walk(units)
    if damaged:
        raise ValueError(
            "the precompiled_charsmap's trie points outside itself; the map is damaged"
        )
    parts = strings.split(b"\0")
    starts = np.cumsum([0, *(len(p) + 1 for p in parts[:-1])]).tolist()
    replacement = dict(zip(starts, parts, strict=True))
    rows = keys.astype(np.uint8)
    table = {}
    try:
        for row, n, value in zip(rows, lengths.tolist(), values.tolist(), strict=True):
            if value not in replacement:
                raise ValueError(
                    "the precompiled_charsmap points between its strings; the map is damaged"
                )
            table[row[:n].tobytes().decode("utf-8")] = replacement[value].decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("the precompiled_charsmap holds a rule that is not UTF-8") from None
    return table


_BMP = 0x10000


@numba.njit(cache=True, inline="always")
def longest_rule(rules, text, i, end):
    """``(length, rule)`` of the longest rule whose source starts ``text[i:end]`` (``i < end``),
    or ``(0, -1)``: the walk of the trie of the sources, skipped when the next character
    continues no source (then only a one-character rule can apply, read from a table for
    the Basic Multilingual Plane). ``rules`` is :attr:`CharsMap.rules`. Inlined: call it
    from functions compiled with ``_nrt=False``."""
    trie, _, _, single, tail = rules
    if i + 1 < end and text[i + 1] < tail.size and tail[text[i + 1]]:
        return longest_prefix(trie, text, i, end)
    c = text[i]
    if c < _BMP:
        rule = single[c]
    else:
        node = find_child(trie, 0, c)
        rule = trie[2][node] if node >= 0 else -1
    return (1, rule) if rule >= 0 else (0, -1)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _apply(text, rules, out, used, wrote):
    """Longest-match replacement over the code points ``text`` into ``out`` (room for
    :attr:`CharsMap.widest` characters for each of ``text``): ``(o, steps)``, the output
    being ``out[:o]``, and for each step the characters it used and wrote."""
    out_data, out_starts = rules[1], rules[2]
    n = text.size
    o, steps, i = 0, 0, 0
    while i < n:
        length, rule = longest_rule(rules, text, i, n)
        if rule < 0:
            out[o] = text[i]
            o += 1
            used[steps], wrote[steps] = 1, 1
            i += 1
        else:
            a, b = out_starts[rule], out_starts[rule + 1]
            for k in range(a, b):
                out[o + k - a] = out_data[k]
            o += b - a
            used[steps], wrote[steps] = length, b - a
            i += length
        steps += 1
    return o, steps


class CharsMap:
    """Longest-match replacement by a ``source -> replacement`` table (SentencePiece's rules),
    a numba walk of the trie of the sources (:mod:`rowbook.text.trie`) over the text."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self._lengths = sorted({len(k) for k in table}, reverse=True)
        values = list(table.values())
        starts = np.zeros(len(values) + 1, dtype=np.int64)
        np.cumsum([len(v) for v in values], out=starts[1:])
        single = np.full(_BMP, -1, np.int64)  # (65536,) the one-character rule of each
        tail = np.zeros(1 + max((ord(c) for k in table for c in k[1:]), default=0), np.bool_)
        for rule, source in enumerate(table):
            if len(source) == 1 and ord(source) < _BMP:
                single[ord(source)] = rule
            for c in source[1:]:
                tail[ord(c)] = True
        #: ``(trie of the sources, output code points, output starts, one-character rules,
        #: characters that continue a source)``, the tables of :func:`longest_rule`.
        self.rules = (build_trie(list(table)), codepoints("".join(values)), starts, single, tail)
        self.empty = not table
        #: The most characters a rule writes (at least 1).
        self.widest = max([1, *map(len, values)])

    def _run(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        data = codepoints(text)  # (n,)
        out = np.empty(data.size * self.widest, np.int32)
        used, wrote = np.empty(data.size, np.int64), np.empty(data.size, np.int64)
        o, steps = _apply(data, self.rules, out, used, wrote)
        return out[:o], used[:steps], wrote[:steps]

    def __call__(self, text: str) -> str:
        if self.empty or not text:
            return text
        out, _, _ = self._run(text)
        return out.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")

    def pieces(self, text: str) -> list[tuple[str, int]]:
        """``(output, characters consumed)`` at each step, as ``NormalizePrefix`` returns them."""
        if self.empty or not text:
            return [(c, 1) for c in text]
        out, used, wrote = self._run(text)
        chars = out.astype(np.uint32).tobytes().decode("utf-32-le", "surrogatepass")
        ends = np.cumsum(wrote).tolist()
        return [
            (chars[e - w : e], u)
            for e, w, u in zip(ends, wrote.tolist(), used.tolist(), strict=True)
        ]

    def aligned(self, text: Aligned) -> Aligned:
        """:meth:`__call__` on aligned text: a replacement takes the span of its source."""
        parts, i = [], 0
        for out, used in self.pieces(text.text):
            span = text.span(i, i + used)
            parts.append(Aligned(out, (span[0],) * len(out), (span[1],) * len(out)))
            i += used
        return text.join(parts)


class Precompiled(CharsMap):
    """``tokenizers``' ``Precompiled`` normalizer (a SentencePiece map in a ``tokenizer.json``),
    applied with SentencePiece's longest match."""

    def __init__(self, blob: bytes, where: str = "precompiled_charsmap") -> None:
        super().__init__(read_charsmap(blob, where) if blob else {})
        self.blob = blob

    @classmethod
    def from_json(cls, d: dict[str, Any], where: str) -> Precompiled:
        value = d.get("precompiled_charsmap")
        if value is None:
            return cls(b"")
        try:
            return cls(base64.b64decode(value, validate=True), where)
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"{where}: Precompiled needs a base64 'precompiled_charsmap' ({err})"
            ) from None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": "Precompiled",
            "precompiled_charsmap": base64.b64encode(self.blob).decode("ascii"),
        }
