"""Byte-level BPE encoding beside tiktoken, on the same ranks; and the merge step's worst case.

A byte-level BPE trained by rowbook on NewsArticles is handed to tiktoken as mergeable ranks
(``tiktoken.Encoding(pat_str=r50k's pattern, mergeable_ranks=...)``, no download) and read
back from those ranks by rowbook as tiktoken reads them (``ByteLevelBPE.from_tiktoken``'s
rules: pairs ranked by the token they make, a word that is a token taken whole). Both
encode the same texts on one thread: documents of about 64 KB (the corpus's articles
joined) and the corpus's first lines, timed in CPU time (one thread each; the machine may
be shared), rowbook with its word cache emptied before each
repetition (cold: what a first encode of unseen text costs) and kept (warm: tiktoken keeps
no cache); then on every core in wall time (tiktoken's threads, ``workers=None``), and
where one thread's cold time goes (the pre-split and its interning, and within it the
words cut alone and their hashes; the merges; the lists of ids). The ids
must be equal. Then the worst case: a run of n = 100,000 and 8n
identical characters, one word, timed with rowbook's merge-list BPE, the one read from
ranks and tiktoken.

    python benchmarks/bench_tiktoken.py           # the full corpus (downloads it once)
    python benchmarks/bench_tiktoken.py --quick   # 300 documents, a smoke test
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import newsarticles_lines, newsarticles_texts
from timing import Row, interleaved_times_ms, machine, print_table, print_targets

from rowbook._threads import usable_cores
from rowbook.text import ByteLevelBPE
from rowbook.text.bpe.tiktoken_files import to_ranks

VOCAB_SIZE = 32_000
DOCUMENT_CHARS = 64_000
LINES = 20_000
RUN = 100_000


def cpu_medians_ms(fns: dict, repeat: int, warmup: int = 1) -> dict[str, float]:
    """Median CPU time of each function, run in turn (every timed run here uses one thread:
    on a shared machine the CPU a process receives is steadier than the wall clock)."""
    times = interleaved_times_ms(fns, repeat=repeat, warmup=warmup, clock=time.process_time)
    return {name: float(np.median(t)) for name, t in times.items()}


def documents(texts: list[str], size: int) -> list[str]:
    """The texts joined (blank line between) into documents of about ``size`` characters."""
    out, part, chars = [], [], 0
    for text in texts:
        part.append(text)
        chars += len(text)
        if chars >= size:
            out.append("\n\n".join(part))
            part, chars = [], 0
    return out + (["\n\n".join(part)] if part else [])


def cold(bpe: ByteLevelBPE, texts: list[str]) -> None:
    bpe._encoder.cache.clear()
    bpe.encode_batch(texts, workers=1)


def encode_rows(bpe, ranked, enc, label, texts, repeat) -> list[Row]:
    """One thread: tiktoken, rowbook's merge-list BPE and the one read from ranks."""
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    times = cpu_medians_ms(
        {
            "tiktoken encode_ordinary_batch(num_threads=1)": lambda: enc.encode_ordinary_batch(
                texts, num_threads=1
            ),
            "rowbook encode_batch(workers=1), cold cache": lambda: cold(bpe, texts),
            "rowbook encode_batch(workers=1), warm cache": lambda: bpe.encode_batch(
                texts, workers=1
            ),
            "rowbook from tiktoken ranks, cold cache": lambda: cold(ranked, texts),
            "rowbook from tiktoken ranks, warm cache": lambda: ranked.encode_batch(
                texts, workers=1
            ),
        },
        repeat=repeat,
    )
    return [Row(label, name, ms, f"{mb / ms * 1e3:.1f} MB/s") for name, ms in times.items()]


def core_rows(bpe, enc, label, texts, repeat) -> list[Row]:
    """Every core, wall clock: tiktoken's threads and rowbook's ``workers=None``, cold and warm."""
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    cores = usable_cores()

    def cold_all() -> None:
        bpe._encoder.cache.clear()
        bpe.encode_batch(texts)

    times = interleaved_times_ms(
        {
            f"tiktoken encode_ordinary_batch(num_threads={cores})": lambda: (
                enc.encode_ordinary_batch(texts, num_threads=cores)
            ),
            "rowbook encode_batch(workers=None), cold cache": cold_all,
            "rowbook encode_batch(workers=None), warm cache": lambda: bpe.encode_batch(texts),
        },
        repeat=repeat,
        warmup=1,
    )
    return [
        Row(label, name, float(np.median(t)), f"{mb / float(np.median(t)) * 1e3:.1f} MB/s")
        for name, t in times.items()
    ]


def _cut_kernels():
    """Two compiled loops over the documents' bytes, for :func:`phase_rows`: GPT-2's words
    cut and counted (the pre-split's :func:`cut_words`, nothing interned), and the FNV-1a
    hash of every word (what interning computes before it probes)."""
    import numba

    from rowbook.intern_table import fnv1a
    from rowbook.text.bpe.presplit_rules import cut_words

    @numba.njit(nogil=True)
    def cut(data, text_ends, classes, starts, stops):
        return cut_words(data, text_ends, classes, 0, 0, starts, stops, text_ends.copy(), 0)[0]

    @numba.njit(nogil=True)
    def hashes(data, starts, stops, out):
        for i in range(starts.shape[0]):
            out[i] = fnv1a(data, starts[i], stops[i])

    return cut, hashes


def phase_rows(bpe: ByteLevelBPE, texts: list[str], repeat: int) -> list[Row]:
    """Where one thread's cold encoding goes: GPT-2's compiled pre-split with the interning
    of every word (a fresh table), and within it the words cut alone and their hashes; the
    merges of the distinct words, the lists of ids, and the whole."""
    from rowbook.intern_table import InternTable
    from rowbook.text.bpe.batch import _slices
    from rowbook.text.bpe.merge_kernels import encode_word_bytes
    from rowbook.text.bpe.presplit import scan_words
    from rowbook.text.bpe.presplit_rules import char_classes
    from rowbook.text.utf8 import utf8_of

    encoder = bpe._encoder
    words = InternTable()
    scan_words(words, texts)
    data, ends = words.key_bytes()
    data = data.copy()  # (N,) the distinct words' bytes
    utf8, text_ends = utf8_of(texts)
    starts, stops = np.empty(len(utf8), np.int64), np.empty(len(utf8), np.int64)  # (W,) at most
    cut, hashes = _cut_kernels()
    n = cut(utf8, text_ends, char_classes(), starts, stops)
    starts, stops, hashed = starts[:n], stops[:n], np.empty(n, np.uint32)  # (W,) each
    hashes(utf8, starts, stops, hashed)
    ids, id_ends = encoder.plain_ids(texts)
    times = cpu_medians_ms(
        {
            "pre-split and interning of every word (the UTF-8 copy included)": lambda: scan_words(
                InternTable(), texts
            ),
            f"  of which the {n:,} words cut (GPT-2's rules, nothing interned)": lambda: cut(
                utf8, text_ends, char_classes(), starts, stops
            ),
            "  their FNV-1a hashes, all (only those the front cache lacks are hashed)": lambda: (
                hashes(utf8, starts, stops, hashed)
            ),
            f"merges of the {len(ends):,} distinct words": lambda: encode_word_bytes(
                data, ends, encoder.byte_ids, encoder.pairs
            ),
            f"the lists of the {len(ids):,} ids (holding the GIL)": lambda: _slices(
                encoder, ids, id_ends
            ),
            "encode_batch(workers=1), cold cache, in all": lambda: cold(bpe, texts),
        },
        repeat=repeat,
    )
    return [Row("documents, one thread, where the time goes", k, v, "") for k, v in times.items()]


def worst_rows(bpe, ranked, enc, n: int, repeat: int) -> tuple[list[Row], list[float]]:
    """A run of n and 8n identical characters; the 8n / n time ratios (rowbook's two)."""
    rows, ratios = [], []
    for name, tok in (("rowbook merge list", bpe), ("rowbook from ranks", ranked)):
        fns = {}
        for size in (n, 8 * n):
            text = "a" * size
            fns[f"{name}, {size:,} characters"] = lambda t=text, b=tok: cold(b, [t])
        times = cpu_medians_ms(fns, repeat=repeat)
        small, large = times.values()
        ratios.append(large / small)
        rows += [Row("run of one character", k, v, "") for k, v in times.items()]
    fns = {
        f"tiktoken, {size:,} characters": lambda t="a" * size: enc.encode_ordinary(t)
        for size in (n, 8 * n)
    }
    times = cpu_medians_ms(fns, repeat=repeat)
    small, large = times.values()
    ratios.append(large / small)
    rows += [Row("run of one character", k, v, "") for k, v in times.items()]
    return rows, ratios


def main(argv: list[str] | None = None) -> int:
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="300 documents: a smoke test")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per timing (median)")
    args = parser.parse_args(argv)
    texts = newsarticles_texts()[: 300 if args.quick else None]
    vocab_size = 2_000 if args.quick else VOCAB_SIZE
    repeat = 1 if args.quick else args.repeat
    lines = newsarticles_lines()[: 2_000 if args.quick else LINES]
    docs = documents(texts, DOCUMENT_CHARS)
    print(
        f"NewsArticles: {len(docs):,} documents of about {DOCUMENT_CHARS:,} characters, "
        f"{len(lines):,} lines; byte-level BPE, vocab_size={vocab_size:,}; one thread; "
        f"{machine()}; 1-min load average at start {os.getloadavg()[0]:.1f}"
    )
    bpe = ByteLevelBPE().fit(texts, vocab_size)
    ranks = to_ranks(bpe)
    enc = tiktoken.Encoding("bench", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={})
    ranked = ByteLevelBPE.from_ranks(ranks, pattern=bpe.pattern, special_tokens={})
    same = [e.ids for e in ranked.encode_batch(docs + lines)] == enc.encode_ordinary_batch(
        docs + lines
    )
    merge_list_same = sum(
        e.ids == ids
        for e, ids in zip(bpe.encode_batch(lines), enc.encode_ordinary_batch(lines), strict=True)
    )
    rows = encode_rows(bpe, ranked, enc, "documents", docs, repeat)
    rows += encode_rows(bpe, ranked, enc, "lines", lines, repeat)
    rows += core_rows(bpe, enc, "documents, every core (wall clock)", docs, repeat)
    rows += core_rows(
        bpe, enc, "one document of all, every core (wall clock)", ["\n\n".join(docs)], repeat
    )
    rows += phase_rows(bpe, docs, repeat)
    run = RUN // 10 if args.quick else RUN
    worst, ratios = worst_rows(bpe, ranked, enc, run, repeat)
    subject = "rowbook encode_batch(workers=1), cold cache"
    print_table(
        "Byte-level BPE beside tiktoken, same ranks: one thread (median CPU ms), every core (median wall ms)",
        rows + worst,
        {
            "documents": subject,
            "lines": subject,
            "documents, every core (wall clock)": "rowbook encode_batch(workers=None), cold cache",
            "one document of all, every core (wall clock)": (
                "rowbook encode_batch(workers=None), cold cache"
            ),
            "documents, one thread, where the time goes": (
                "encode_batch(workers=1), cold cache, in all"
            ),
        },
    )
    ms = {(r.group, r.name): r.ms for r in rows}
    cores = f"tiktoken encode_ordinary_batch(num_threads={usable_cores()})"
    every = "documents, every core (wall clock)"

    def over(group: str, anchor: str, name: str) -> float:
        return ms[(group, anchor)] / ms[(group, name)]

    print(
        f"\nThe merge-list BPE gives tiktoken's ids on {merge_list_same:,} of {len(lines):,} "
        f"lines. A run of 8n characters costs tiktoken {ratios[2]:.1f}x a run of n. 1-min load "
        f"average at the end: {os.getloadavg()[0]:.1f}"
    )
    one = "tiktoken encode_ordinary_batch(num_threads=1)"
    ok = print_targets(
        [
            ("ids equal tiktoken's (BPE read from the ranks)", float(same), 1.0),
            (
                "documents, one thread, cold: tiktoken / rowbook",
                over("documents", one, subject),
                2.5,
            ),
            ("lines, one thread, cold: tiktoken / rowbook", over("lines", one, subject), 5.0),
            (
                "documents, every core, cold: tiktoken / rowbook",
                over(every, cores, "rowbook encode_batch(workers=None), cold cache"),
                3.0,
            ),
            (
                "documents, every core, warm: tiktoken / rowbook",
                over(every, cores, "rowbook encode_batch(workers=None), warm cache"),
                3.0,
            ),
            ("run of 8n / run of n, merge list (<= 16: not quadratic)", 16 / ratios[0], 1.0),
            ("run of 8n / run of n, from ranks (<= 16: not quadratic)", 16 / ratios[1], 1.0),
        ]
    )
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
