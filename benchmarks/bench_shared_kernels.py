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

``--against DIR`` runs the same cases with the ``rowbook`` of another checkout (say
``/work/main``, the code before the change) in child processes, taking turns round by round
so that a change of load on a shared machine reaches both alike, and prints both medians
and their ratio. Run ``python benchmarks/bench_shared_kernels.py --against /work/main``
(``--quick``: smaller inputs, fewer rounds; ``--only wv``: the word-vector kernels alone).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent.parent
sys.path.append(str(HERE))  # after PYTHONPATH: the rowbook timed is the one PYTHONPATH names

from benchmarks.timing import median_ms, zipf_ids  # noqa: E402

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


def measure(quick: bool, only: str | None) -> dict[str, float]:
    """Median ms of each case (whose name starts with ``only``) in this process (the
    ``rowbook`` on ``sys.path``)."""
    word_vectors = only is None or only.startswith("wv") or "wv".startswith(only)
    every = {} if only and only.startswith("wv") else cases(quick)
    every |= word_vector_cases(quick) if word_vectors else {}
    chosen = {k: fn for k, fn in every.items() if only is None or k.startswith(only)}
    return {name: median_ms(fn, repeat=3 if quick else 7) for name, fn in chosen.items()}


def _child(checkout: Path, quick: bool, only: str | None) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    argv = [sys.executable, __file__, "--child"] + (["--quick"] if quick else [])
    argv += ["--only", only] if only else []
    done = subprocess.run(argv, env=env, cwd=checkout, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, metavar="DIR", help="another rowbook checkout")
    parser.add_argument("--rounds", type=int, default=5, help="turns of each checkout")
    parser.add_argument("--quick", action="store_true", help="small inputs: a smoke test")
    parser.add_argument("--only", metavar="PREFIX", help="only the cases whose name starts so")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        import rowbook

        where = Path(rowbook.__file__).resolve().parent.parent
        assert str(where) == os.environ["PYTHONPATH"], f"timed the rowbook in {where}"
        print(json.dumps(measure(args.quick, args.only)))
        return 0
    checkouts = {"this": HERE} | ({"against": args.against.resolve()} if args.against else {})
    runs: dict[str, list[dict[str, float]]] = {k: [] for k in checkouts}
    for _ in range(2 if args.quick else args.rounds):
        for key, checkout in checkouts.items():
            runs[key].append(_child(checkout, args.quick, args.only))
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"load average: {load}; medians of {len(runs['this'])} rounds, ms")
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
