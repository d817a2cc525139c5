"""What the KV cache saves: time per generated token with and without it as the prefix grows.

One GPT-2-shaped network (V=8,000, d=256, 4 layers, 4 heads, float32, random weights, one
BLAS thread as ``generate`` runs). For each prefix length T, the time of the step that
produces token T+1:

* without a cache the network reads all T tokens again: ``O(T d^2)`` for the projections
  and the MLP, ``O(T^2 d)`` for attention, per layer;
* with the cache it reads one token and attends to the T held: ``O(d^2 + T d)``;
* with the int8 cache (:mod:`rowbook.models.language_model.kv_cache`) the same, plus dequantising the
  T held positions; its largest logit change against the float cache, and its bytes.

    python benchmarks/bench_kv_cache.py           # T = 128 ... 2,048
    python benchmarks/bench_kv_cache.py --quick   # small sizes, a smoke test
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import interleaved_times_ms, print_targets

from rowbook.autograd import no_grad
from rowbook.kernel_math import blas_single_thread
from rowbook.models.language_model.config import TransformerConfig
from rowbook.models.language_model.kv_cache import make_cache
from rowbook.models.language_model.transformer import TransformerNet
from rowbook.nn import KVCache


def _step_timers(net: TransformerNet, ids: np.ndarray, T: int) -> tuple[dict, dict, dict]:
    """Closures timing the step that reads token T (no cache: all T; cached: the last one),
    the logits each gives (filled as they run) and the caches."""
    caches: dict[str, KVCache] = {}
    for kind in ("float32", "int8"):
        cache = make_cache(net, 1, T, kind)
        net(ids[None, : T - 1], cache=cache)  # the prefix, held
        caches[kind] = cache
    logits: dict[str, np.ndarray] = {}

    def recompute() -> None:
        logits["none"] = net(ids[None, :T]).data[0, -1]

    def cached(kind: str):
        def step() -> None:
            cache = caches[kind]
            cache.length = T - 1  # the same step again
            logits[kind] = net(ids[None, T - 1 : T], cache=cache).data[0, -1]

        return step

    timers = {"none": recompute, "float32": cached("float32"), "int8": cached("int8")}
    return timers, logits, caches


def bench(quick: bool, repeat: int) -> list[tuple[str, float, float]]:
    V, d, layers, heads = (500, 32, 2, 2) if quick else (8000, 256, 4, 4)
    lengths = (32, 64, 128) if quick else (128, 256, 512, 1024, 2048)
    config = TransformerConfig(
        vocab_size=V, d_model=d, n_layers=layers, n_heads=heads, context=max(lengths)
    )
    net = TransformerNet(config, rng=0)
    net.eval()
    ids = np.random.default_rng(1).integers(0, V, max(lengths))
    print(
        f"### Time per generated token at prefix length T: V={V:,}, d={d}, {layers} layers, "
        f"{heads} heads, float32, 1 BLAS thread; median CPU time of {repeat} interleaved\n"
    )
    print(
        "| T | no cache ms | KV cache ms | int8 cache ms | no cache / cache | "
        "int8 max logit change (share of range) | float16 cache KiB | int8 cache KiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    targets, previous = [], None
    with no_grad(), blas_single_thread():
        for T in lengths:
            timers, out, caches = _step_timers(net, ids, T)
            # CPU time: steadier than wall time for one-threaded work on a busy machine
            runs = interleaved_times_ms(timers, repeat=repeat, clock=time.process_time)
            times = {name: float(np.median(t)) for name, t in runs.items()}
            change = float(np.abs(out["int8"] - out["float32"]).max())
            spread = float(out["float32"].max() - out["float32"].min())
            float16 = make_cache(net, 1, T, "float16").nbytes / 1024
            int8 = caches["int8"].nbytes / 1024
            ratio = times["none"] / times["float32"]
            print(
                f"| {T:,} | {times['none']:.1f} | {times['float32']:.2f} | {times['int8']:.2f} | "
                f"{ratio:.0f} | {change:.1e} ({change / spread:.2%}) | {float16:,.0f} | {int8:,.0f} |"
            )
            if previous is not None:
                growth = times["none"] / previous
            previous = times["none"]
    if quick:  # too small for the cache to pay
        return []
    targets.append((f"no cache / cache at T={lengths[-1]:,}: at least 10x", ratio, 10.0))
    targets.append((f"no-cache step, T doubled to {lengths[-1]:,}: grows >= 1.5x", growth, 1.5))
    return targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small smoke sizes")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    targets = bench(args.quick, 2 if args.quick else args.repeat)
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
