"""The tokenizers' encoding defaults on text they were not chosen on (rows of ``bench_defaults.py``).

``ByteLevelBPE.encode_batch`` (:mod:`rowbook.text.bpe.batch`) stays on the calling thread
below :data:`~rowbook.text.bpe.batch.THREAD_CHARS` = 65,536 characters (GPT-2's settings:
threads share the compiled pass) and in the calling process below
:data:`~rowbook.text.bpe.batch.POOL_CHARS` = 1,048,576 (other settings: forked processes),
both chosen on NewsArticles with a model trained on it. The target: below the cut-off
another thread (process) would not pay; from it, it does. Measured on the text the cut-offs
were chosen on and on three others, each with a byte-level BPE of 8,000 entries trained on
its own first 2 MB: the health tweets, Han text without spaces (a line's words run together,
so GPT-2's pattern makes each clause one long word), and long agglutinative-like words.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import corpora
import numpy as np
from timing import interleaved_medians_ms, interleaved_times_ms

from rowbook.text import ByteLevelBPE
from rowbook.text.bpe import batch

__all__ = ["cutoff_rows", "text_kinds"]

TRAIN_CHARS = 2_000_000
THREAD_SIZES = (16_384, 32_768, 65_536, 131_072, 262_144)
POOL_SIZES = (524_288, 1_048_576, 2_097_152)


def text_kinds(generated_text: Callable[..., str], tweets: Callable[[], str]) -> dict[str, list]:
    """Each kind of text as lines, at least ``TRAIN_CHARS`` + 2M characters."""
    return {
        "NewsArticles": corpora.newsarticles_lines(),
        "health tweets": tweets().splitlines(),
        "Han text, no spaces": generated_text("han", 2_000_000).splitlines(),
        "long agglutinative-like words": generated_text("long", 600_000).splitlines(),
    }


def _first_chars(lines: list[str], chars: int) -> list[str]:
    out, n = [], 0
    for line in lines:
        if n >= chars:
            break
        out.append(line)
        n += len(line)
    return out


def _encode(bpe: ByteLevelBPE, texts: list[str], workers: int, cold: bool) -> None:
    if cold:
        bpe._encoder.cache.clear()
    saved = batch.THREAD_CHARS, batch.POOL_CHARS
    batch.THREAD_CHARS = batch.POOL_CHARS = 0  # the workers asked for, whatever the size
    try:
        bpe.encode_batch(texts, workers=workers)
    finally:
        batch.THREAD_CHARS, batch.POOL_CHARS = saved


def _ratios(bpe: ByteLevelBPE, lines: list[str], sizes, repeat: int) -> dict:
    """{(size, "cold" | "warm"): (ms on one worker, ms on two, CPU ms on one, CPU ms on two)}:
    wall time, and the process's CPU time (what the second worker costs on a busy machine)."""
    out = {}
    for size in sizes:
        texts = _first_chars(lines, size)
        for mode in ("cold", "warm"):
            cold = mode == "cold"
            bpe.encode_batch(texts, workers=1)  # warm: every word in the model's cache
            fns = {
                "one": lambda t=texts, c=cold: _encode(bpe, t, 1, c),
                "two": lambda t=texts, c=cold: _encode(bpe, t, 2, c),
            }
            ms = interleaved_medians_ms(fns, repeat=repeat)
            cpu = interleaved_times_ms(fns, repeat=repeat, clock=time.process_time)
            out[size, mode] = (ms["one"], ms["two"], np.median(cpu["one"]), np.median(cpu["two"]))
    return out


def cutoff_rows(kinds: dict[str, list], repeat: int, pool: bool) -> list[tuple]:
    """(text, characters a word, setting, {(size, mode): (ms one, ms two)}) for every kind: GPT-2's
    settings (threads) and, with ``pool``, a prefix space (processes)."""
    rows = []
    for name, lines in kinds.items():
        train = _first_chars(lines, TRAIN_CHARS)
        rest = lines[len(train) :]
        bpe = ByteLevelBPE().fit(train, 8_000)
        sample = rest[:2000]  # characters a word of GPT-2's pattern (its leading space too)
        per_word = sum(map(len, sample)) / sum(len(bpe._pretokenizer.split(t)) for t in sample)
        rows.append((name, per_word, "threads", _ratios(bpe, rest, THREAD_SIZES, repeat)))
        if pool:
            spaced = ByteLevelBPE(add_prefix_space=True).fit(train, 8_000)
            rows.append((name, per_word, "processes", _ratios(spaced, rest, POOL_SIZES, repeat)))
    return rows
