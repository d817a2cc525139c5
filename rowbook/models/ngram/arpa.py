r"""ARPA files: the text form of a backoff n-gram model that KenLM, SRILM and IRSTLM share.

::

    \data\
    ngram 1=5
    ngram 2=7

    \1-grams:
    -0.90309	<unk>	0
    ...
    \2-grams:
    -0.37712017	<s> a
    ...
    \end\

Each entry is ``log10 p(w_k | w_1 .. w_{k-1})``, the words, and (below the highest order)
``log10 b(w_1 .. w_k)``, the weight of backing off from that context. A reader scores
``w`` after context ``c`` with the longest entry ``c w`` it has, adding the backoff weights
of the longer contexts it had to shorten (:func:`rowbook.models.ngram.tables.backoff_log10`,
KenLM's query rule).

Reading is strict and bounded: lines before ``\data\`` (KenLM's ``#`` header) are
skipped; every other line is checked, and a bad one is reported with its line number; the
counts in the header must match the entries, and for an uncompressed file they must fit
in its size before anything is read on (entries are collected as they come, never into
arrays sized from the header). gzip, bzip2 and xz files are read as they are.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rowbook.corpus_files import is_compressed, open_binary
from rowbook.io import atomic_write
from rowbook.models.ngram.counts import lookup
from rowbook.models.ngram.tables import NGramTables

__all__ = [
    "MISSING_UNK_LOG10",
    "ArpaEntries",
    "ArpaError",
    "read_arpa",
    "tables_from_entries",
    "write_arpa",
]

_COUNT = re.compile(r"ngram\s+(\d+)\s*=\s*(\d+)")
_SECTION = re.compile(r"\\(\d+)-grams:")
_MIN_ENTRY_BYTES = 4  # "0 a\n"


class ArpaError(ValueError):
    """An ARPA file that cannot be read; the message names the file and the line."""


@dataclass(frozen=True)
class ArpaEntries:
    """What an ARPA file holds, in file order: the unigram words, and per order k the
    ``(m_k, k)`` word ids (indices into ``words``), log10 probabilities, log10 backoff
    weights (0 where absent) and the line of each entry."""

    words: list[str]
    grams: list[np.ndarray]
    log10_prob: list[np.ndarray]
    log10_backoff: list[np.ndarray]
    lines: list[np.ndarray]


def _lines(path: str | os.PathLike[str]) -> Iterator[tuple[int, str]]:
    """``(line number, line without its ending)`` of the (decompressed) UTF-8 file."""
    with open_binary(path, "ARPA file") as f:
        for number, raw in enumerate(f, start=1):
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise ArpaError(f"{path}, line {number}: not UTF-8 ({err.reason})") from None


def _header(path: Path, lines: Iterator[tuple[int, str]]) -> tuple[list[int], int, str]:
    """The counts of ``\\data\\``, and the number and text of the first section line."""
    for _, line in lines:
        if line.strip() == "\\data\\":
            break
    else:
        raise ArpaError(f"{path}: no \\data\\ line; this is not an ARPA file")
    counts: list[int] = []
    for number, line in lines:
        text = line.strip()
        if not text:
            continue
        match = _COUNT.fullmatch(text)
        if match is None:
            if not counts:
                raise ArpaError(f"{path}, line {number}: expected 'ngram 1=COUNT', got {text!r}")
            return counts, number, text
        if int(match[1]) != len(counts) + 1:
            raise ArpaError(
                f"{path}, line {number}: expected the count of order {len(counts) + 1}, got {text!r}"
            )
        counts.append(int(match[2]))
    raise ArpaError(f"{path}: the file ends inside the \\data\\ header (truncated?)")


def _check_counts_fit(path: Path, counts: list[int]) -> None:
    if is_compressed(path):
        return
    size = path.stat().st_size
    if sum(counts) * _MIN_ENTRY_BYTES > size:
        raise ArpaError(
            f"{path}: the header announces {sum(counts)} n-grams ({counts}), more than a "
            f"file of {size} bytes can hold; the header is damaged"
        )


def _entry(path: Path, number: int, text: str, k: int, n: int) -> tuple[float, list[str], float]:
    fields = text.split()
    if len(fields) not in ((k + 1, k + 2) if k < n else (k + 1,)):
        shape = f"'log10prob w1 .. w{k}'" + (" [log10backoff]" if k < n else "")
        raise ArpaError(f"{path}, line {number}: a {k}-gram entry must be {shape}, got {text!r}")
    try:
        prob = float(fields[0])
        backoff = float(fields[k + 1]) if len(fields) == k + 2 else 0.0
    except ValueError:
        raise ArpaError(f"{path}, line {number}: not a number in {text!r}") from None
    if not (math.isfinite(prob) and prob <= 0 and math.isfinite(backoff)):
        raise ArpaError(
            f"{path}, line {number}: log10 probabilities must be finite and <= 0, and "
            f"backoffs finite, got {text!r}"
        )
    return prob, fields[1 : k + 1], backoff


def read_arpa(path: str | os.PathLike[str]) -> ArpaEntries:
    """The entries of the ARPA file ``path``; :class:`ArpaError` names a bad line."""
    path = Path(path)
    lines = _lines(path)
    counts, number, text = _header(path, lines)
    _check_counts_fit(path, counts)
    n, index = len(counts), {}
    out = ArpaEntries([], [], [], [], [])
    for k in range(1, n + 1):
        if text != f"\\{k}-grams:":
            raise ArpaError(f"{path}, line {number}: expected '\\{k}-grams:', got {text!r}")
        grams, probs, backoffs, where = [], [], [], []
        text = None
        for number, line in lines:
            text = line.strip()
            if text.startswith("\\"):
                break
            if not text:
                continue
            prob, words, backoff = _entry(path, number, text, k, n)
            if k == 1:
                if words[0] in index:
                    raise ArpaError(f"{path}, line {number}: the word {words[0]!r} is listed twice")
                index[words[0]] = len(index)
                out.words.append(words[0])
            try:
                grams.append([index[w] for w in words])
            except KeyError as err:
                raise ArpaError(
                    f"{path}, line {number}: the word {err.args[0]!r} has no unigram entry"
                ) from None
            probs.append(prob), backoffs.append(backoff), where.append(number)
        else:
            raise ArpaError(f"{path}: the file ends inside the {k}-grams section (truncated?)")
        if len(grams) != counts[k - 1]:
            raise ArpaError(
                f"{path}, line {number}: the {k}-grams section has {len(grams)} entries, "
                f"the header announces {counts[k - 1]}"
            )
        out.grams.append(np.array(grams, dtype=np.int64).reshape(-1, k))
        out.log10_prob.append(np.array(probs, dtype=np.float64))
        out.log10_backoff.append(np.array(backoffs, dtype=np.float64))
        out.lines.append(np.array(where, dtype=np.int64))
    if text != "\\end\\":
        raise ArpaError(f"{path}, line {number}: expected '\\end\\', got {text!r}")
    return out


#: The log10 probability of ``<unk>`` when a file has no entry for it (KenLM's choice).
MISSING_UNK_LOG10 = -100.0


def tables_from_entries(path: Any, entries: ArpaEntries, ids: np.ndarray, V: int) -> NGramTables:
    """The backoff tables of ``entries``, their words renumbered by ``ids`` (file word ->
    vocabulary id, every id but a missing ``<unk>`` having its unigram); an n-gram whose
    context has no entry, or one listed twice, is refused with its line."""
    unigram_prob = np.full(V, MISSING_UNK_LOG10)
    unigram_prob[ids] = entries.log10_prob[0]
    unigram_backoff = np.zeros(V)
    unigram_backoff[ids] = entries.log10_backoff[0]
    keys, probs, backoffs = [np.arange(V, dtype=np.int64)], [unigram_prob], [unigram_backoff]
    for k in range(2, len(entries.grams) + 1):
        words = ids[entries.grams[k - 1]]  # (m_k, k)
        rank = words[:, 0]  # the rank of the context's first j words, j = 1 .. k-1
        for j in range(2, k):
            rank = lookup(keys[j - 1], rank * V + words[:, j - 1])
            if np.any(rank < 0):
                raise ArpaError(_missing(path, entries, k, int(np.argmax(rank < 0)), j))
        key = rank * V + words[:, -1]
        order = np.argsort(key, kind="stable")
        key = key[order]
        twice = np.flatnonzero(np.diff(key) == 0)
        if len(twice):
            line = entries.lines[k - 1][order[twice[0] + 1]]
            raise ArpaError(f"{path}, line {line}: this {k}-gram is listed twice")
        keys.append(key)
        probs.append(entries.log10_prob[k - 1][order])
        backoffs.append(entries.log10_backoff[k - 1][order])
    return NGramTables(V, keys, None, probs, backoffs[:-1])


def _missing(path: Any, entries: ArpaEntries, k: int, row: int, j: int) -> str:
    words = " ".join(entries.words[w] for w in entries.grams[k - 1][row])
    return (
        f"{path}, line {entries.lines[k - 1][row]}: the {k}-gram {words!r} has no {j}-gram "
        f"entry for its first {j} words; every context of an entry must have its own entry"
    )


def _words_of(tables: NGramTables) -> list[np.ndarray]:
    """``(m_k, k)`` the word ids of every k-gram, in key order."""
    words = [np.arange(tables.V, dtype=np.int64)[:, None]]
    for k in range(2, tables.n + 1):
        keys = tables.keys[k - 1]
        words.append(np.hstack([words[-1][keys // tables.V], (keys % tables.V)[:, None]]))
    return words


def write_arpa(path: str | os.PathLike[str], itos: list[str], tables: NGramTables) -> None:
    """Write the backoff ``tables`` (words ``itos``) as an ARPA file, atomically; the
    numbers are written in full (``repr``), so reading them back gives the same floats."""
    for token in itos:
        if not token or any(c.isspace() for c in token):
            raise ValueError(
                f"the token {token!r} is empty or holds white space, which an ARPA file cannot "
                "hold (its fields are separated by white space); use level='word' tokens"
            )
    with atomic_write(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("\\data\\\n")
        for k, size in enumerate(tables.sizes(), start=1):
            f.write(f"ngram {k}={size}\n")
        for k, words in enumerate(_words_of(tables), start=1):
            f.write(f"\n\\{k}-grams:\n")
            probs = tables.log10_prob[k - 1].tolist()
            backoffs = tables.log10_backoff[k - 1].tolist() if k < tables.n else None
            for row, gram in enumerate(words.tolist()):
                text = " ".join(itos[w] for w in gram)
                tail = "" if backoffs is None else f"\t{backoffs[row]!r}"
                f.write(f"{probs[row]!r}\t{text}{tail}\n")
        f.write("\n\\end\\\n")
