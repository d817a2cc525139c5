"""Byte-level BPE on the NewsArticles corpus: rowbook beside Hugging Face ``tokenizers``.

Training: an 8,000-entry byte-level BPE (GPT-2 pre-split, all 256 bytes, min_frequency 2)
from raw text, pre-tokenization and word counting included, with rowbook, with
``tokenizers`` (its default thread pool, and one thread in a subprocess with
``RAYON_NUM_THREADS=1``) and with a naive trainer that recounts every pair after every
merge (run for a few merges and extrapolated). Encoding: the whole corpus with each
trained tokenizer, rowbook's word cache emptied before every repetition, and a naive
encoder (no cache, the leftmost lowest-rank pair merged at a time, on a slice of the
corpus, extrapolated by bytes). Both libraries must learn the same merges and produce the
same ids; the benchmark checks it.

    python benchmarks/bench_text.py           # the full corpus (downloads it once)
    python benchmarks/bench_text.py --quick   # 300 documents, a smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpora import newsarticles_lines, newsarticles_texts
from timing import Row, interleaved_medians_ms, machine, median_ms, print_table, print_targets

from rowbook.text import ByteLevelBPE
from rowbook.text.bpe.classic import learn_merges_recount
from rowbook.text.bpe.merge_kernels import encode_word_reference

VOCAB_SIZE = 8_000
ENCODE_LINES = 20_000


def hf_tokenizer():
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def hf_train(texts, vocab_size):
    from tokenizers import pre_tokenizers, trainers

    tok = hf_tokenizer()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=2,
        show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def hf_times(texts, lines, vocab_size, repeat, encode_only=False) -> dict[str, float]:
    """Median train and encode_batch (of ``lines``) times of ``tokenizers`` in this process (ms)."""
    tok = hf_train(texts, vocab_size)
    train = (
        0.0
        if encode_only
        else median_ms(lambda: hf_train(texts, vocab_size), repeat=repeat, warmup=0)
    )
    return {
        "train": train,
        "encode": median_ms(lambda: tok.encode_batch(lines), repeat=2 * repeat + 1),
    }


def hf_single_thread(args, repeat: int) -> dict[str, float]:
    """The same measurement (same corpus) in a subprocess whose Rayon pool has one thread."""
    env = {**os.environ, "RAYON_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        __file__,
        "--hf-worker",
        "--repeat",
        str(repeat),
        "--copies",
        str(args.copies),
    ]
    cmd += ["--quick"] if args.quick else []
    cmd += ["--encode-only"] if args.encode_only else []
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def naive_train_ms(
    texts, bpe: ByteLevelBPE, n_merges: int, total_merges: int
) -> tuple[float, float]:
    """Extrapolated time of a recount-every-merge trainer: count words, then ``n_merges``
    recounting merges timed and scaled to ``total_merges``. Returns (estimate, measured)."""
    start = time.perf_counter()
    counts = Counter()
    for text in texts:
        counts.update(bpe._pretokenizer.split(text))
    byte_ids = bpe._encoder.byte_ids.tolist()
    words = {tuple(byte_ids[b] for b in w.encode("utf-8")): c for w, c in counts.items()}
    counting = time.perf_counter() - start
    tokens = [bytes([b]) for b in range(256)]  # same ids as rowbook up to a permutation
    start = time.perf_counter()
    learn_merges_recount(words, tokens, 256 + n_merges, min_count=2)
    merging = time.perf_counter() - start
    return 1e3 * (counting + merging / n_merges * total_merges), 1e3 * (counting + merging)


def naive_encode_ms(texts, bpe: ByteLevelBPE) -> float:
    """A cache-free encoder merging the leftmost lowest-rank pair at a time (ms)."""
    vocab = bpe.vocab
    ranks = {(vocab[a], vocab[b]): (r, vocab[a + b]) for r, (a, b) in enumerate(bpe.merges)}
    byte_ids = bpe._encoder.byte_ids.tolist()
    start = time.perf_counter()
    for text in texts:
        for word in bpe._pretokenizer.split(text):
            encode_word_reference([byte_ids[b] for b in word.encode("utf-8")], ranks)
    return 1e3 * (time.perf_counter() - start)


def encode_cold(bpe: ByteLevelBPE, texts, workers=None):
    bpe._encoder.cache.clear()
    return bpe.encode_batch(texts, workers=workers)


def encode_side_by_side(bpe: ByteLevelBPE, hf, lines, repeat: int) -> dict[str, float]:
    """Median ms of rowbook's and tokenizers' ``encode_batch`` of the same lines, in turn."""
    return interleaved_medians_ms(
        {
            "cold": lambda: encode_cold(bpe, lines),
            "one": lambda: encode_cold(bpe, lines, workers=1),
            "warm": lambda: bpe.encode_batch(lines, workers=1),
            "tokenizers": lambda: hf.encode_batch(lines),
        },
        repeat=repeat,
    )


def lines_for(args) -> list[str]:
    return newsarticles_lines()[: 2_000 if args.quick else ENCODE_LINES]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="300 documents: a smoke test, not a measurement"
    )
    parser.add_argument("--repeat", type=int, default=None, help="repetitions per timing (median)")
    parser.add_argument(
        "--copies",
        type=int,
        default=1,
        help="train on NewsArticles repeated N times (16: about 200 MB)",
    )
    parser.add_argument(
        "--encode-only",
        action="store_true",
        help="train each tokenizer once, time only the encoding",
    )
    parser.add_argument("--hf-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    texts = newsarticles_texts()[: 300 if args.quick else None] * args.copies
    vocab_size, repeat = (2_000, 1) if args.quick else (VOCAB_SIZE, 3)
    repeat = args.repeat or repeat
    lines = lines_for(args)
    if args.hf_worker:
        print(json.dumps(hf_times(texts, lines, vocab_size, repeat, args.encode_only)))
        return 0

    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    line_bytes = sum(len(t.encode("utf-8")) for t in lines)
    print(
        f"NewsArticles: {len(texts):,} documents, {n_bytes / 1e6:.2f} MB, "
        f"{sum(len(t.split()) for t in texts):,} words; encoding: the first {len(lines):,} lines "
        f"of one sentence each, {line_bytes / 1e6:.2f} MB; byte-level BPE, vocab_size={vocab_size:,}, "
        f"min_frequency=2; {machine()}; 1-min load average at start {os.getloadavg()[0]:.1f}"
    )
    ByteLevelBPE().fit(texts[:50], 300)  # compile (or load) the numba kernels outside the timers
    bpe = ByteLevelBPE().fit(texts, vocab_size)
    hf = hf_train(texts, vocab_size)
    hf_model = json.loads(hf.to_str())["model"]
    same_merges = [tuple(m) for m in hf_model["merges"]] == bpe.merges
    same_merges &= hf_model["vocab"] == bpe.vocab
    same_ids = all(
        [e.ids for e in bpe.encode_batch(part)] == [e.ids for e in hf.encode_batch(part)]
        for part in (lines, texts)
    )
    single = hf_single_thread(args, repeat)
    rows, targets = [], []
    if not args.encode_only:
        rows, targets = train_rows(
            bpe, texts, vocab_size, repeat, same_merges, single, args.copies >= 16
        )
    more_rows, more_targets = encode_rows(bpe, hf, lines, repeat, same_ids, single)
    print_table(
        "Byte-level BPE, NewsArticles",
        rows + more_rows,
        {"train": "rowbook ByteLevelBPE.fit (workers: one per CPU)", "encode": ENCODE_SUBJECT},
    )
    print(
        f"\n1-min load average at the end: {os.getloadavg()[0]:.1f} (other processes share the cores)"
    )
    ok = print_targets(
        [
            *targets,
            *more_targets,
            ("same merges, vocab and ids as tokenizers", float(same_merges and same_ids), 1.0),
        ]
    )
    return 0 if ok or args.quick else 1


ENCODE_SUBJECT = "rowbook encode_batch (workers: one per CPU), cache emptied first"


def train_rows(bpe, texts, vocab_size, repeat, same_merges, single, big) -> tuple[list[Row], list]:
    """Training times of rowbook, tokenizers and the naive trainer, and their targets."""
    train = median_ms(lambda: ByteLevelBPE().fit(texts, vocab_size), repeat=repeat, warmup=0)
    train_1 = median_ms(
        lambda: ByteLevelBPE().fit(texts, vocab_size, workers=1), repeat=repeat, warmup=0
    )
    theirs = median_ms(lambda: hf_train(texts, vocab_size), repeat=repeat, warmup=0)
    n_naive = 10 if len(texts) < 1000 else 40
    naive_est, naive_measured = naive_train_ms(texts, bpe, n_naive, len(bpe.merges))
    rows = [
        Row(
            "train",
            "rowbook ByteLevelBPE.fit (workers: one per CPU)",
            train,
            f"{len(bpe.merges):,} merges",
        ),
        Row(
            "train", "rowbook ByteLevelBPE.fit, workers=1", train_1, "word counting in this process"
        ),
        Row(
            "train",
            "tokenizers BpeTrainer (default threads)",
            theirs,
            f"same merges and vocab: {'yes' if same_merges else 'NO'}",
        ),
        Row("train", "tokenizers BpeTrainer, RAYON_NUM_THREADS=1", single["train"], "subprocess"),
        Row(
            "train",
            "naive: recount every pair after every merge",
            naive_est,
            f"extrapolated: {n_naive} merges took {naive_measured / 1e3:.1f} s (word counting included)",
        ),
    ]
    targets = [
        (
            "train: tokenizers (default) time / rowbook time (1.5 asked at 200 MB: --copies 16)",
            theirs / train,
            1.5 if big else 1.0,
        ),
        ("train: naive / rowbook", naive_est / train, 10.0),
    ]
    return rows, targets


def encode_rows(bpe, hf, lines, repeat, same_ids, single) -> tuple[list[Row], list]:
    """``encode_batch`` of the lines by rowbook and tokenizers side by side, and the targets."""
    enc = encode_side_by_side(bpe, hf, lines, 2 * repeat + 1)
    cold, hf_enc = enc["cold"], enc["tokenizers"]
    line_bytes = sum(len(t.encode("utf-8")) for t in lines)
    part = lines[: max(1, len(lines) // 20)]
    naive_enc = naive_encode_ms(part, bpe) * line_bytes / sum(len(t.encode("utf-8")) for t in part)

    def rate(ms: float) -> str:
        return f"{line_bytes / 1e6 / (ms / 1e3):.2f} MB/s"

    rows = [
        Row("encode", ENCODE_SUBJECT, cold, rate(cold)),
        Row(
            "encode",
            "rowbook encode_batch, workers=1, cache emptied first",
            enc["one"],
            rate(enc["one"]),
        ),
        Row(
            "encode",
            "rowbook encode_batch, workers=1, warm word cache",
            enc["warm"],
            rate(enc["warm"]),
        ),
        Row(
            "encode",
            "tokenizers encode_batch (default threads)",
            hf_enc,
            f"{rate(hf_enc)}; same ids (lines and documents): {'yes' if same_ids else 'NO'}",
        ),
        Row(
            "encode",
            "tokenizers encode_batch, RAYON_NUM_THREADS=1",
            single["encode"],
            f"{rate(single['encode'])}; subprocess",
        ),
        Row(
            "encode",
            "naive: no cache, lowest-rank pair at a time",
            naive_enc,
            f"{rate(naive_enc)}; run on 1/20 of the lines, scaled by bytes",
        ),
    ]
    targets = [
        (
            f"encode_batch of {len(lines):,} lines: tokenizers (default) time / rowbook time",
            hf_enc / cold,
            2.0,
        ),
        ("encode: naive / rowbook", naive_enc / cold, 10.0),
    ]
    return rows, targets


if __name__ == "__main__":
    raise SystemExit(main())
