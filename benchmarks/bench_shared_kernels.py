"""Kernels that one shared piece of code now serves, timed against another checkout.

Where two compiled kernels repeated a loop, one kernel (or one small ``@numba.njit`` helper
that numba inlines) now serves both; this times each such kernel on its own input:

* ``subword_table``: fastText's n-gram bags of a 200,000-word vocabulary (one walk of the
  n-grams counts, then fills, with the one FNV-1a hash of ``rowbook.intern_table``);
* ``dequantize <type>``: GGUF blocks of each type whose kernel shares a helper, 4M values;
* ``scatter_add_rows`` and ``bag_scatter_add``: one segment-sum kernel for a lookup's
  backward and a bag's (which reads its rows through ``take``), 200,000 ids over 50,000
  rows of 100 float32;
* ``bag_sum``, ``bag_sum weighted``, ``bag_max``: one bag walk for every mode, 25,000 bags of
  8 ids over a 50,000 x 100 float32 table (with padding id 0: the rounded products);
* ``wv ...``: one job of each word-vector kernel (word2vec's and fastText's, classic and
  batched, skip-gram and CBOW), which share their sentence and sampling arguments, the
  draws before the examples (``kept_words``) and the minibatch block (``block_step``):
  200,000 Zipf words of a 20,000-word vocabulary in sentences of 20 (fastText: 50,000, its
  bags of n-grams 3-6 in 100,000 buckets), d = 100, window 5, 5 negatives, called through
  the model's job bundle (``Word2VecJob`` / ``FastTextJob``, whose fields and ``run`` are the
  same before and after the change).
* ``ftc ...``: fastText's classifier kernels (prediction for each loss, the mean rows, one
  training job for three losses), whose prediction moved to its own module.

``--against DIR`` runs the same cases with the ``rowbook`` of another checkout (say
``/work/main``, the code before the change) in child processes, taking turns round by round
so that a change of load on a shared machine reaches both alike, and prints both medians
and their ratio. Run ``python benchmarks/bench_shared_kernels.py --against /work/main``
(``--quick``: smaller inputs, fewer rounds; ``--only wv``: the word-vector kernels alone;
``--only ftc``: the classifier's; ``--cpu``: every case by the CPU time its thread received,
``time.thread_time``, steadier than wall time on a busy machine for these one-threaded
kernels).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent
sys.path.append(str(HERE))  # after PYTHONPATH: the rowbook timed is the one PYTHONPATH names

from benchmarks.timing import interleaved_times_ms, median_ms, zipf_ids  # noqa: E402

GGUF_TYPES = ("Q4_0", "Q5_0", "Q4_1", "Q5_1", "Q4_K", "Q5_K")


def _words(n: int, rng: np.random.Generator) -> list[str]:
    letters = list("abcdefghijklmnopqrstuvwxyzéüß")
    lengths = rng.integers(2, 14, size=n)
    return [f"{''.join(rng.choice(letters, size=k))}{i}" for i, k in enumerate(lengths)]


def cases(quick: bool) -> dict[str, object]:
    """Name -> a function of no arguments, each a kernel's call on its input."""
    from rowbook.autograd.sparse import scatter_add_rows
    from rowbook.gguf.quants import dequantize_blocks
    from rowbook.gguf.types import GGML_TYPES
    from rowbook.nn.bag import bag_max, bag_scatter_add, bag_sum
    from rowbook.text.char_ngrams import subword_table

    rng = np.random.default_rng(0)
    words = _words(20_000 if quick else 200_000, rng)
    out = {
        "subword_table": lambda: subword_table(words, minn=3, maxn=6, bucket=2_000_000),
    }
    n_ids = 20_000 if quick else 200_000
    ids = zipf_ids(n_ids, 50_000, rng)
    rows = rng.standard_normal((n_ids, 100), dtype=np.float32)  # (N, d)
    bags = np.sort(rng.integers(0, n_ids // 8, size=n_ids))  # (N,) 8 ids a bag
    grad = rng.standard_normal((n_ids // 8, 100), dtype=np.float32)  # (B, d)
    out["scatter_add_rows"] = lambda: scatter_add_rows(ids, rows, 50_000)
    out["bag_scatter_add"] = lambda: bag_scatter_add(ids, bags, grad, 50_000)
    table = rng.standard_normal((50_000, 100), dtype=np.float32)  # (V, d)
    bounds = np.arange(0, n_ids + 1, 8)  # (B + 1,)
    psw = rng.random(n_ids, dtype=np.float32)  # (N,)
    out["bag_sum"] = lambda: bag_sum(table, ids, bounds, padding_idx=0)
    out["bag_sum weighted"] = lambda: bag_sum(table, ids, bounds, per_sample_weights=psw)
    out["bag_max"] = lambda: bag_max(table, ids, bounds, padding_idx=0)
    n_values = (1 << 18) if quick else (1 << 22)
    for name in GGUF_TYPES:
        _, block, type_bytes = next(v for v in GGML_TYPES.values() if v[0] == name)
        raw = rng.integers(0, 256, size=(n_values // block) * type_bytes, dtype=np.uint8)
        raw = raw.reshape(-1, type_bytes)
        raw[:, :4] = [0x00, 0x3C, 0x00, 0x3C]  # each type's first scales (d, m or dmin): 1.0
        out[f"dequantize {name}"] = lambda raw=raw, name=name: dequantize_blocks(raw, name)
    return out


def word_vector_cases(quick: bool) -> dict[str, object]:
    """Name -> one job of a word-vector kernel on its synthetic corpus (the tables keep
    training from call to call, alike in both checkouts)."""
    from rowbook.data import huffman_tree
    from rowbook.data.sampling import negative_guide, negative_table, sample_thresholds
    from rowbook.models.word_vectors.job_args import FastTextJob, Word2VecJob
    from rowbook.text.char_ngrams import subword_table

    rng = np.random.default_rng(1)
    V, d, window = 20_000, 100, 5
    counts_of = lambda ids: np.bincount(ids, minlength=V) + 1  # noqa: E731

    def corpus(n: int):
        ids = zipf_ids(n, V, rng).astype(np.int32)  # (n,)
        return ids, np.arange(0, n + 1, 20, dtype=np.int64)  # sentences of 20 words

    def tables(rows: int) -> np.ndarray:
        return ((rng.random((rows, d), dtype=np.float32) - 0.5) / d).astype(np.float32)

    out = {}
    ids, starts = corpus(20_000 if quick else 200_000)
    counts = counts_of(ids)
    table = negative_table(counts)
    thresholds = sample_thresholds(counts, 1e-3)
    W_nodes = np.zeros((V - 1, d), np.float32)
    for arch in ("skipgram", "cbow"):
        for kernel in ("classic", "batched"):
            for hs in (False, True):
                W_out = np.zeros((V, d), np.float32)
                job = Word2VecJob(
                    tables(V),
                    thresholds,
                    True,
                    (W_out, table, negative_guide(table), 5),
                    (W_nodes.copy(), *huffman_tree(counts)) if hs else None,
                    window,
                    True,
                    arch == "skipgram",
                    True,
                    False,
                    kernel == "batched",
                    2,
                )
                name = f"wv word2vec {arch} {kernel}" + (" hs" if hs else "")
                out[name] = lambda job=job: job.run(ids, starts, 0.025, 7, None)
    words = _words(V, rng)
    bag_starts, bag_ids = subword_table(words, minn=3, maxn=6, bucket=100_000)
    ft_ids, ft_starts = corpus(5_000 if quick else 50_000)
    for arch in ("skipgram", "cbow"):
        for kernel in ("classic", "batched"):
            W_out = np.zeros((V, d), np.float32)
            job = FastTextJob(
                tables(V + 100_000),
                bag_starts,
                bag_ids,
                thresholds,
                True,
                (W_out, table, negative_guide(table), 5),
                window,
                arch == "skipgram",
                kernel == "batched",
            )
            name = f"wv fasttext {arch} {kernel}"
            out[name] = lambda job=job: job.run(ft_ids, ft_starts, 0.05, 7, None)
    return out


def classifier_cases(quick: bool) -> dict[str, object]:
    """Name -> fastText's classifier kernels on generated lines (8 rows a line of a 200,000-row
    ``W_in``, d = 100, 50 labels): ``predict_lines`` for each loss on one thread, and
    ``sentence_vectors``; ``train_job`` for softmax, ns and hs on its own copy of the tables
    (which keep training from call to call, alike in both checkouts)."""
    from rowbook.data.sampling import negative_guide, negative_table
    from rowbook.models.fasttext_classifier import kernels

    try:  # the prediction kernels and the tree in their own modules
        from rowbook.data.huffman import fasttext_tree
        from rowbook.models.fasttext_classifier.prediction_kernels import (
            predict_lines,
            sentence_vectors,
        )
    except ImportError:  # before: all in kernels.py
        fasttext_tree = kernels.fasttext_tree
        predict_lines, sentence_vectors = kernels.predict_lines, kernels.sentence_vectors
    rng = np.random.default_rng(2)
    n_lines, rows, d, n_labels = (5_000 if quick else 50_000), 200_000, 100, 50
    W_in = ((rng.random((rows, d), dtype=np.float32) - 0.5) / d).astype(np.float32)
    W_out = (rng.random((n_labels, d), dtype=np.float32) - 0.5).astype(np.float32)
    in_starts = np.arange(0, 8 * n_lines + 1, 8, dtype=np.int64)  # (L + 1,)
    in_ids = zipf_ids(8 * n_lines, rows, rng).astype(np.int32)  # (8 L,)
    lab_starts = np.arange(n_lines + 1, dtype=np.int64)  # one label a line
    lab_ids = rng.integers(0, n_labels, n_lines).astype(np.int32)
    counts = np.sort(rng.integers(1, 1000, n_labels))[::-1].copy()
    tree = fasttext_tree(counts)
    out: dict[str, object] = {}
    for loss in ("softmax", "ova", "hs"):
        code = kernels.LOSS_CODES[loss]
        out[f"ftc predict {loss}"] = lambda code=code: predict_lines(
            (W_in, None, W_out, None),
            in_starts,
            in_ids,
            loss=code,
            k=5,
            threshold=0.0,
            children=tree[:2],
        )
    vectors = np.zeros((n_lines, d), dtype=np.float32)  # (L, d)
    out["ftc sentence_vectors"] = lambda: sentence_vectors(W_in, None, in_starts, in_ids, vectors)
    lines = (in_starts, in_ids, lab_starts, lab_ids, np.full(n_lines, 10, dtype=np.int64))
    table = negative_table(counts, 0.5)
    for loss in ("softmax", "ns", "hs"):
        W_in_job, W_out_job = W_in.copy(), W_out.copy()
        args = (kernels.LOSS_CODES[loss], (table, negative_guide(table), 5), tree[2:])
        out[f"ftc train_job {loss}"] = lambda w=(W_in_job, W_out_job), args=args: kernels.train_job(
            *w, lines, 0, n_lines, *args, (0.1, 1e-8, 0.0), 7
        )
    return out


def measure(quick: bool, only: str | None, cpu: bool = False) -> dict[str, float]:
    """Median ms of each case (whose name starts with ``only``) in this process (the
    ``rowbook`` on ``sys.path``): wall time, but CPU time for the classifier's (``ftc``) and,
    with ``cpu``, for every case."""
    word_vectors = only is None or only.startswith("wv") or "wv".startswith(only)
    every = {} if only and only.startswith(("wv", "ftc")) else cases(quick)
    every |= word_vector_cases(quick) if word_vectors else {}
    every |= classifier_cases(quick) if only is None or "ftc".startswith(only[:3]) else {}
    chosen = {k: fn for k, fn in every.items() if only is None or k.startswith(only)}
    repeat = 3 if quick else 7
    timed = {}
    for name, fn in chosen.items():  # the kernels stay on this thread: its CPU time
        if cpu or name[:3] == "ftc":
            times = interleaved_times_ms({name: fn}, repeat=repeat, clock=time.thread_time)
            timed[name] = float(np.median(times[name]))
        else:
            timed[name] = median_ms(fn, repeat=repeat)
    return timed


def _child(checkout: Path, quick: bool, only: str | None, cpu: bool) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    argv = [sys.executable, __file__, "--child"] + (["--quick"] if quick else [])
    argv += (["--only", only] if only else []) + (["--cpu"] if cpu else [])
    done = subprocess.run(argv, env=env, cwd=checkout, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, metavar="DIR", help="another rowbook checkout")
    parser.add_argument("--rounds", type=int, default=5, help="turns of each checkout")
    parser.add_argument("--quick", action="store_true", help="small inputs: a smoke test")
    parser.add_argument("--only", metavar="PREFIX", help="only the cases whose name starts so")
    parser.add_argument("--cpu", action="store_true", help="thread CPU time, not wall time")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        import rowbook

        where = Path(rowbook.__file__).resolve().parent.parent
        assert str(where) == os.environ["PYTHONPATH"], f"timed the rowbook in {where}"
        print(json.dumps(measure(args.quick, args.only, args.cpu)))
        return 0
    checkouts = {"this": HERE} | ({"against": args.against.resolve()} if args.against else {})
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in checkouts}
    for _ in range(2 if args.quick else args.rounds):
        for key, checkout in checkouts.items():
            runs[key].append(_child(checkout, args.quick, args.only, args.cpu))
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    clock = "thread CPU" if args.cpu else "wall (classifier: thread CPU)"
    print(f"load average: {load}; medians of {len(runs['this'])} rounds, {clock} ms")
    print("| case | this | " + ("against | against / this |" if args.against else ""))
    print("| --- | ---: | " + ("---: | ---: |" if args.against else ""))
    for name in runs["this"][0]:
        this = statistics.median(r[name] for r in runs["this"])
        row = f"| {name} | {this:.2f} |"
        if args.against:
            other = statistics.median(r[name] for r in runs["against"])
            row += f" {other:.2f} | {other / this:.2f}x |"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
