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
  8 ids over a 50,000 x 100 float32 table (with padding id 0: the rounded products).

``--against DIR`` runs the same cases with the ``rowbook`` of another checkout (say
``/work/main``, the code before the change) in child processes, taking turns round by round
so that a change of load on a shared machine reaches both alike, and prints both medians
and their ratio. Run ``python benchmarks/bench_shared_kernels.py --against /work/main``
(``--quick``: smaller inputs, fewer rounds).
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


def measure(quick: bool, only: str | None) -> dict[str, float]:
    """Median ms of each case (whose name starts with ``only``) in this process (the
    ``rowbook`` on ``sys.path``)."""
    chosen = {k: fn for k, fn in cases(quick).items() if only is None or k.startswith(only)}
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
