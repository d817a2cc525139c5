"""Byte-level BPE training on a large file within ``memory=``: peak memory beside ``tokenizers``'.

The corpus is generated once and cached (``~/.cache/rowbook-bench/bpe-memory-<MB>MB.txt``):
lines of 12 pseudo-words drawn from a Zipf law (exponent 1.1) over 2 million words spelled
with syllables (the most frequent the shortest), so that, as in real text, the distinct
words keep growing with the corpus: far more than a ``Counter`` holds in the budget. Each
trainer runs alone in a fresh child process that reads the file line by line and reports
its own peak resident memory (``ru_maxrss``) and its wall time: rowbook's
``ByteLevelBPE().fit(lines, vocab_size, memory=..., workers=1)`` (one process, so its peak is
the whole cost), the same without ``memory`` (counts in RAM), and ``tokenizers``'
``BpeTrainer`` with its byte-level pre-tokenizer on the same lines (its own threads). The
merges of the two rowbook runs must be equal. A budget below the merge step's floor (8 bytes
per byte of the distinct words plus 36 per word: 232 MB for the 130 MB corpus's 2.5 million
distinct words) is refused by rowbook once the words are counted.

    python benchmarks/bench_bpe_memory.py                 # 1 GB, memory="1GB"
    python benchmarks/bench_bpe_memory.py --mb 128 --memory 256MB
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import cache_dir
from timing import machine

VOCAB_WORDS = 2_000_000
WORDS_PER_LINE = 12
CONSONANTS = np.frombuffer(b"bcdfghjklmnprstvwxyz", dtype=np.uint8)
VOWELS = np.frombuffer(b"aeiou", dtype=np.uint8)


def _spellings(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The bytes of words 0 .. n-1 one after another ``(N,)`` and where each starts ``(n + 1,)``:
    word i is the base-100 digits of i + 1, each digit a consonant-vowel syllable."""
    value = np.arange(1, n + 1, dtype=np.int64)  # (n,)
    digits = np.floor(np.log(value) / np.log(100)).astype(np.int64) + 1  # (n,) syllables
    digits[100**digits <= value] += 1  # the log's rounding at powers of 100
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(2 * digits, out=starts[1:])
    data = np.empty(starts[-1], dtype=np.uint8)
    for d in range(int(digits.max())):  # the d-th syllable from the end of every long word
        has = digits > d
        syllable = (value[has] // 100**d) % 100
        at = starts[1:][has] - 2 * (d + 1)
        data[at] = CONSONANTS[syllable // 5]
        data[at + 1] = VOWELS[syllable % 5]
    return data, starts


def corpus_file(megabytes: int) -> Path:
    """The cached generated corpus of about ``megabytes`` MB (made if missing)."""
    path = cache_dir() / f"bpe-memory-{megabytes}MB.txt"
    if path.exists():
        return path
    rng = np.random.default_rng(0)
    data, starts = _spellings(VOCAB_WORDS)
    data = np.append(data, np.uint8(0))  # read (then overwritten) as the last word's separator
    lengths = np.diff(starts)
    partial = path.with_suffix(".partial")
    written = 0
    with open(partial, "wb") as f:
        while written < megabytes * 10**6:
            ids = (rng.zipf(1.1, size=1 << 20) - 1) % VOCAB_WORDS  # (B,)
            size = lengths[ids] + 1  # (B,) each word and its separator
            ends = np.cumsum(size)
            out = np.empty(int(ends[-1]), dtype=np.uint8)
            within = np.arange(out.size) - np.repeat(ends - size, size)
            out[:] = data[np.repeat(starts[ids], size) + within]
            sep = np.full(ids.size, ord(" "), dtype=np.uint8)
            sep[WORDS_PER_LINE - 1 :: WORDS_PER_LINE] = ord("\n")
            out[ends - 1] = sep
            f.write(out.tobytes())
            written += out.size
    partial.rename(path)
    return path


_CHILD = """
import json, resource, sys, time
path, tool, vocab_size, memory = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
def lines():
    with open(path, encoding="utf-8") as f:
        yield from f
start = time.perf_counter()
if tool == "tokenizers":
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(lines(), trainer)
    merges = None
else:
    from rowbook.text import ByteLevelBPE
    bpe = ByteLevelBPE().fit(lines(), vocab_size, workers=1, memory=None if memory == "-" else memory)
    merges = bpe.merges
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "merges": merges}))
"""


def run_child(path: Path, tool: str, vocab_size: int, memory: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), tool, str(vocab_size), memory],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mb", type=int, default=1000, help="corpus size in MB (default 1000)")
    parser.add_argument("--memory", default="1GB", help="rowbook's budget (default 1GB)")
    parser.add_argument("--vocab-size", type=int, default=32_000)
    parser.add_argument("--limit-mb", type=float, default=1536, help="target peak (1.5 GB)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    path = corpus_file(args.mb)
    size = path.stat().st_size / 1e6
    print(
        f"{path.name}: {size:,.0f} MB (ready in {time.perf_counter() - start:.0f} s); "
        f"vocab_size={args.vocab_size:,}; {machine()}; 1-min load {os.getloadavg()[0]:.1f}"
    )
    runs = {
        f"rowbook memory={args.memory!r}, workers=1": ("rowbook", args.memory),
        "rowbook in RAM, workers=1": ("rowbook", "-"),
        "tokenizers BpeTrainer (its threads)": ("tokenizers", "-"),
    }
    results = {}
    for name, (tool, memory) in runs.items():
        results[name] = run_child(path, tool, args.vocab_size, memory)
        r = results[name]
        print(
            f"  {name:45s} {r['seconds']:8.1f} s  peak {r['peak_mb']:8,.0f} MB  "
            f"(load {os.getloadavg()[0]:.1f})"
        )
    budgeted, in_ram = (results[n]["merges"] for n in list(runs)[:2])
    peak = results[next(iter(runs))]["peak_mb"]
    print(f"same merges within the budget as in RAM: {budgeted == in_ram}")
    print(f"peak within memory={args.memory!r}: {peak:,.0f} MB (target < {args.limit_mb:,.0f} MB)")
    return 0 if budgeted == in_ram and peak < args.limit_mb else 1


if __name__ == "__main__":
    raise SystemExit(main())
