"""GGUF files: dequantisation throughput per type, and opening a big file for its table.

Two parts, one run:

1. **Dequantisation** of 16M values of every type rowbook reads (random blocks whose fp16
   scales are finite), rowbook's compiled kernel on one thread (``workers=1``) against
   ``gguf.quants.dequantize`` (NumPy, vectorised over blocks), timed in turn on the same
   bytes (CPU time of the process: steadier than wall time on a shared machine). Target:
   rowbook at least 5x ``gguf`` on every quantised type.
2. **Opening** a generated GGUF of about 1 GiB (a Llama-3-sized vocabulary: 128,256 tokens
   in the metadata, ``token_embd.weight`` 128,256 x 2,048 in Q4_K, ``output.weight`` in
   Q6_K, 76 2,048 x 8,192 Q4_K matrices; random blocks, kept in the benchmark cache,
   never committed), each reader in a fresh process: rowbook's ``gguf_vectors`` and a first
   ``most_similar``, against ``gguf.GGUFReader`` + ``gguf.quants.dequantize`` of the same
   table and the same query in NumPy: time to the answer and peak resident memory (VmHWM).

    python benchmarks/bench_gguf.py           # the sizes above (a few minutes on 2 cores)
    python benchmarks/bench_gguf.py --quick   # 1M values a type, a 60 MB file
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.corpora import cache_dir
from benchmarks.timing import interleaved_times_ms, machine, print_targets
from rowbook.gguf.quantize import random_blocks
from rowbook.gguf.quants import SUPPORTED, dequantize_blocks
from rowbook.gguf.types import GGML_TYPES

TYPES = [t for t in SUPPORTED if t != "F32"]


def throughput(n_values: int, repeat: int) -> list[tuple[str, float, float]]:
    import gguf

    rng = np.random.default_rng(0)
    print(f"\n### Dequantisation, {n_values:,} values a type, one thread\n")
    print("| type | rowbook M values/s | gguf.quants M values/s | rowbook / gguf |")
    print("|---|---:|---:|---:|")
    targets = []
    for name in TYPES:
        type_bytes = next(v for v in GGML_TYPES.values() if v[0] == name)[2]
        raw = random_blocks(name, (n_values // 256, 256), rng).reshape(-1, type_bytes)
        qtype = gguf.GGMLQuantizationType[name]
        times = interleaved_times_ms(
            {
                "rowbook": lambda raw=raw, name=name: dequantize_blocks(raw, name, workers=1),
                "gguf": lambda raw=raw, qtype=qtype: gguf.quants.dequantize(raw, qtype),
            },
            repeat=repeat,
            clock=time.process_time,
        )
        ours, theirs = (float(np.median(times[k])) for k in ("rowbook", "gguf"))
        rate = n_values / 1e3
        print(f"| {name} | {rate / ours:,.0f} | {rate / theirs:,.0f} | {theirs / ours:.1f} |")
        if name not in ("F16", "BF16"):
            targets.append((f"dequantise {name}: rowbook / gguf.quants", theirs / ours, 5.0))
    return targets


def write_big_file(path: Path, quick: bool) -> None:
    """The generated GGUF of part 2 (written once, kept in the cache)."""
    from rowbook.gguf.writer import write_gguf

    rng = np.random.default_rng(1)
    vocab, d, ff, layers = (16_000, 1024, 4096, 4) if quick else (128_256, 2048, 8192, 38)
    tensors = [
        ("token_embd.weight", random_blocks("Q4_K", (vocab, d), rng), "Q4_K", (vocab, d)),
        ("output.weight", random_blocks("Q6_K", (vocab, d), rng), "Q6_K", (vocab, d)),
    ]
    for i in range(layers):
        tensors.append(
            (f"blk.{i}.ffn_up.weight", random_blocks("Q4_K", (ff, d), rng), "Q4_K", (ff, d))
        )
        tensors.append(
            (f"blk.{i}.ffn_down.weight", random_blocks("Q4_K", (d, ff), rng), "Q4_K", (d, ff))
        )
    tokens = [f"tok{i}" for i in range(vocab)]
    meta = [("general.architecture", "string", "llama"), ("tokenizer.ggml.tokens", "array", tokens)]
    write_gguf(path, meta, tensors)


ROWBOOK = """
from rowbook.gguf import gguf_vectors
table = gguf_vectors(PATH)
opened = time.perf_counter() - start
answer = table.most_similar("tok1000", topn=10)
"""
GGUF = """
import numpy as np, gguf
reader = gguf.GGUFReader(PATH)
tokens = reader.fields["tokenizer.ggml.tokens"].contents()
tensor = next(t for t in reader.tensors if t.name == "token_embd.weight")
rows = gguf.quants.dequantize(tensor.data, tensor.tensor_type)  # (V, d)
opened = time.perf_counter() - start
unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
scores = unit @ unit[1000]
scores[1000] = -np.inf
best = np.argpartition(-scores, 10)[:10]
answer = [(tokens[i], float(scores[i])) for i in best[np.argsort(-scores[best])]]
"""
HARNESS = """
import json, time
start = time.perf_counter()  # imports included: each reader's own
{body}
seconds = time.perf_counter() - start
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
print(json.dumps({{"seconds": seconds, "opened": opened, "first": answer[0][0],
                  "peak": int(status["VmHWM"].split()[0]) * 1024}}))
"""


def _run(body: str, path: Path) -> dict:
    code = HARNESS.format(body=textwrap.dedent(body).replace("PATH", repr(str(path))))
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def opening(quick: bool) -> None:
    path = cache_dir() / ("gguf-quick.gguf" if quick else "gguf-1gib.gguf")
    if not path.exists():
        write_big_file(path, quick)
    size = path.stat().st_size
    _run(ROWBOOK, path)  # compiles the kernels into numba's cache: not part of the measure
    runs = {"rowbook": [], "gguf": []}
    for _ in range(1 if quick else 3):
        runs["rowbook"].append(_run(ROWBOOK, path))
        runs["gguf"].append(_run(GGUF, path))
    print(f"\n### Opening a {size / 2**20:,.0f} MiB GGUF and a first most_similar on its table\n")
    print("| reader | table ready s | + first most_similar s | peak RSS MiB | nearest to tok1000 |")
    print("|---|---:|---:|---:|---|")
    medians = {}
    for name, results in runs.items():
        opened, seconds, peak = (
            float(np.median([r[k] for r in results])) for k in ("opened", "seconds", "peak")
        )
        medians[name] = (seconds, peak, opened)
        print(
            f"| {name} | {opened:.2f} | {seconds:.2f} | {peak / 2**20:,.0f} | {results[0]['first']} |"
        )
    same = runs["rowbook"][0]["first"] == runs["gguf"][0]["first"]
    print(f"\nBoth readers give the same nearest token: {same}.")
    ratios = {
        k: medians["gguf"][i] / medians["rowbook"][i]
        for i, k in enumerate(("total", "peak", "ready"))
    }
    print(
        f"gguf / rowbook: table ready {ratios['ready']:.2f}x the time, with the first query "
        f"{ratios['total']:.2f}x, peak memory {ratios['peak']:.2f}x (measured, no target: the "
        "first query is rowbook's exact one, unit rows in float64 as gensim's, for any table)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    args = parser.parse_args(argv)
    try:
        import gguf  # noqa: F401  (the anchor)
    except ImportError:
        print("bench_gguf needs the gguf package (pip install -e '.[test]')")
        return 1
    from importlib.metadata import version

    print(f"GGUF files: rowbook beside gguf {version('gguf')}; {machine()}")
    n_values = 1 << 20 if args.quick else 1 << 24
    targets = throughput(n_values, 3 if args.quick else 5)
    opening(args.quick)
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
