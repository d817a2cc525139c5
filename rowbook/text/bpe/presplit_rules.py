"""GPT-2's pattern as compiled rules: where each word of :data:`GPT2_PATTERN` ends, over UTF-8 bytes.

The pattern ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``
takes, at each position, its first alternative that matches. Every character is a letter
(``\\p{L}``), a number (``\\p{N}``), white space (``\\s``) or other, so at a position
:func:`word_end` finds the end of the word in this order:

* an apostrophe followed by ``s``, ``t``, ``m``, ``d`` (two characters) or ``re``, ``ve``,
  ``ll`` (three);
* a letter, number or other character, and the run of characters of its class after it;
* a space (U+0020 only) followed by a letter, number or other character: the space, that
  character and its run;
* white space: the run of white space, up to the end of the text; before anything else a
  run of two or more characters leaves its last one (``\\s+(?!\\S)`` backtracks one
  character), which the next word starts with (a U+0020 then joins the word after it),
  and a single white-space character is a word on its own (the last ``\\s+``).

What counts as a letter, a number or white space is read from the ``regex`` package itself
(:func:`char_classes`: its ``\\p{L}``, ``\\p{N}`` and ``\\s`` run once over every code point),
as it ships a Unicode version of its own; its ``\\s`` has 25 characters, not ``\\x1c`` to
``\\x1f``. The tests hold the words to ``regex.findall(GPT2_PATTERN, text)``.

:func:`cut_words` applies the same rules to runs rather than characters: a window of bytes
is first cut into runs of characters of one class with no branch on the data a byte
(:func:`_runs`; a branch a word's end, mispredicted about twice a word, was most of the
cut's time), then each run is a word, but that a space (U+0020) ending a run of white space
joins the run after it, the rest of a run of white space before anything else is a word of
its own (and its last character too, if not a space), and an apostrophe alone before letters
may make a contraction with the first of them. A run that meets the window's end waits for
the next window; a run longer than a window is cut by :func:`word_end`.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
import regex

__all__ = [
    "LETTER",
    "NUMBER",
    "OTHER",
    "SPACE",
    "WINDOW",
    "char_classes",
    "cut_words",
    "word_end",
]

OTHER, LETTER, NUMBER, SPACE = 0, 1, 2, 3
_CONT = 4  # a byte inside a character (UTF-8 continuation): no class of its own
WINDOW = 1 << 12  # bytes cut into runs at a time


@functools.cache
def char_classes() -> np.ndarray:
    """The class of every code point ``(0x110000,)`` uint8 (:data:`OTHER`, :data:`LETTER`,
    :data:`NUMBER`, :data:`SPACE`) as the ``regex`` package's ``\\p{L}``, ``\\p{N}`` and
    ``\\s`` match it; built once a process (about 30 ms).

    Examples
    --------
    >>> classes = char_classes()
    >>> [int(classes[ord(c)]) for c in "a1 .\\u3000\\x1c"]
    [1, 2, 3, 0, 3, 0]
    """
    codes = np.arange(0x110000, dtype=np.uint32)
    codes = codes[(codes < 0xD800) | (codes >= 0xE000)]  # (C,) every code point but surrogates
    text = codes.tobytes().decode("utf-32-le")
    classes = np.zeros(0x110000, dtype=np.uint8)
    for value, pattern in ((LETTER, r"\p{L}+"), (NUMBER, r"\p{N}+"), (SPACE, r"\s+")):
        for match in regex.finditer(pattern, text):
            classes[codes[match.start() : match.end()]] = value
    return classes


@numba.njit(cache=True, nogil=True, inline="always")
def _char_at(data, p):  # pragma: no cover - compiled
    """The code point whose UTF-8 bytes start at ``data[p]``, and how many bytes it has."""
    b = np.int64(data[p])
    if b < 0x80:
        return b, 1
    if b < 0xE0:
        return ((b & 0x1F) << 6) | (np.int64(data[p + 1]) & 0x3F), 2
    if b < 0xF0:
        c = ((b & 0x0F) << 12) | ((np.int64(data[p + 1]) & 0x3F) << 6)
        return c | (np.int64(data[p + 2]) & 0x3F), 3
    c = ((b & 0x07) << 18) | ((np.int64(data[p + 1]) & 0x3F) << 12)
    return c | ((np.int64(data[p + 2]) & 0x3F) << 6) | (np.int64(data[p + 3]) & 0x3F), 4


@numba.njit(cache=True, nogil=True, inline="always")
def _run_end(data, p, end, classes, kind):  # pragma: no cover - compiled
    """Where the run of characters of class ``kind`` from byte ``p`` ends."""
    while p < end:
        c, width = _char_at(data, p)
        if classes[c] != kind:
            break
        p += width
    return p


@numba.njit(cache=True, nogil=True, inline="always")
def word_end(data, p, end, classes):  # pragma: no cover - compiled
    """Where the word of GPT-2's pattern that starts at byte ``p`` ends (``end``: the
    text's end; see the module for the order of the rules)."""
    b = data[p]
    if b == 39 and p + 1 < end:  # 's 't 'm 'd, 're 've 'll
        n = data[p + 1]
        if n == 115 or n == 116 or n == 109 or n == 100:
            return p + 2
        if p + 2 < end:
            m = data[p + 2]
            if (m == 101 and (n == 114 or n == 118)) or (n == 108 and m == 108):
                return p + 3
    c, width = _char_at(data, p)
    kind, q = classes[c], p + width
    if kind != SPACE:
        return _run_end(data, q, end, classes, kind)
    if b == 32 and q < end:  # " ?" before a letter, number or other character
        c, width = _char_at(data, q)
        if classes[c] != SPACE:
            return _run_end(data, q + width, end, classes, classes[c])
    last = p  # the run of white space, and where its last character starts
    while q < end:
        c, width = _char_at(data, q)
        if classes[c] != SPACE:
            break
        last, q = q, q + width
    return q if q == end or last == p else last


@numba.njit(cache=True, nogil=True, inline="always")
def _class_at(data, p, classes):  # pragma: no cover - compiled
    """The class of the character that starts at byte ``p``, :data:`_CONT` inside one."""
    b = data[p]
    if b < 0x80:
        return classes[b]
    if b < 0xC0:
        return np.uint8(_CONT)
    return classes[_char_at(data, p)[0]]


@numba.njit(cache=True, nogil=True, inline="always")
def _runs(data, p, end, classes, run_start, run_class):  # pragma: no cover - compiled
    """The runs of characters of one class in ``data[p:end]``: where each starts and its
    class; returns how many. No branch on the data for ASCII: each byte is written to the
    next free slot, which is taken only where the class changes."""
    m, prev = 0, np.uint8(_CONT)
    for q in range(p, end):
        k = _class_at(data, q, classes)
        run_start[m], run_class[m] = q, k
        m += (k != prev) & (k != _CONT)
        prev = prev if k == _CONT else k
    return m


@numba.njit(cache=True, nogil=True, inline="always")
def _contraction(data, q, run_end):  # pragma: no cover - compiled
    """The length of the contraction at ``data[q]`` (an apostrophe) whose letters are the
    run of letters ``data[q + 1:run_end]`` or start it: 2 (``'s 't 'm 'd``), 3 (``'re 've
    'll``) or 0."""
    n = data[q + 1]
    if n == 115 or n == 116 or n == 109 or n == 100:
        return 2
    if q + 2 < run_end:
        m = data[q + 2]
        if (m == 101 and (n == 114 or n == 118)) or (n == 108 and m == 108):
            return 3
    return 0


@numba.njit(cache=True, nogil=True, inline="always")
def _window_words(data, wend, final, run_start, run_class, m, starts, at):  # pragma: no cover
    """The words of the ``m`` runs of ``data[run_start[0]:wend]`` (GPT-2's rules over runs):
    where each starts, into ``starts[at:]``. ``final``: ``wend`` is the text's end; if not,
    the words the last run may change are left for the next window. Returns the words
    written and where the next window starts."""
    k, pending = at, -1  # pending: a space that starts the next run's word
    i = 0
    while i < m:
        s = run_start[i]
        e = run_start[i + 1] if i + 1 < m else wend
        if run_class[i] == SPACE:
            if i == m - 1:  # no character after it here: its words depend on what follows
                if not final:
                    return k - at, s
                starts[k] = s
                k += 1
                break
            last = e - 1  # where its last character starts
            while (data[last] & 0xC0) == 0x80:
                last -= 1
            if last > s:
                starts[k] = s
                k += 1
            if data[last] == 32:
                pending = last
            else:
                starts[k] = last
                k += 1
            i += 1
            continue
        start = pending if pending >= 0 else s
        pending = -1
        if i == m - 1 and not final:
            return k - at, start
        starts[k] = start
        k += 1
        if start == s and data[s] == 39 and e == s + 1 and i + 1 < m and run_class[i + 1] == LETTER:
            if i + 1 == m - 1 and not final:  # the letters may run past the window
                return k - 1 - at, start
            e2 = run_start[i + 2] if i + 2 < m else wend
            length = _contraction(data, s, e2)
            if length:
                if s + length < e2:  # the rest of the letters: a word of their own
                    starts[k] = s + length
                    k += 1
                i += 2
                continue
        i += 1
    return k - at, wend


@numba.njit(cache=True, nogil=True, inline="always")
def cut_words(data, text_ends, classes, t, p, starts, stops, ends, n):  # pragma: no cover
    """Cut the words of the texts ``data[text_ends[t - 1]:text_ends[t]]`` from text ``t``,
    byte ``p`` on, until ``starts`` is full or the texts end: where each word starts and
    stops, and for each text ended on the way the words so far (``n`` before this call)
    into ``ends``. Returns the words cut and where the next starts, ``(m, t, p)``.

    A window of up to :data:`WINDOW` bytes is cut into runs of one class (:func:`_runs`, no
    branch a byte) and the runs into words (GPT-2's rules, a branch or two a run); a
    window that holds no whole word (one run longer than it) cuts one word with
    :func:`word_end`."""
    capacity = starts.shape[0]
    size = min(WINDOW, capacity)
    run_start, run_class = np.empty(size + 1, np.int64), np.empty(size + 1, np.uint8)
    m = 0
    while m < capacity and t < text_ends.shape[0]:
        end = text_ends[t]
        if p == end:
            ends[t] = n + m
            t += 1
            continue
        wend = min(end, p + min(size, capacity - m))
        runs = _runs(data, p, wend, classes, run_start, run_class)
        got, q = _window_words(data, wend, wend == end, run_start, run_class, runs, starts, m)
        if got == 0:
            starts[m] = p
            q = word_end(data, p, end, classes)
            got = 1
        for j in range(m, m + got - 1):
            stops[j] = starts[j + 1]
        stops[m + got - 1] = q
        m += got
        p = q
    return m, t, p
