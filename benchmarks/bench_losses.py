"""Losses, forward + backward: rowbook's fused ops against torch 2.13, side by side.

Prints a markdown table of medians and the ratio torch / rowbook (above 1: rowbook is faster).
The composed cross-entropy (``log_softmax`` + index + mean) shows what fusing saves.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from rowbook.autograd import Tensor, ops
from rowbook.nn.loss import binary_cross_entropy_with_logits, cross_entropy, mse_loss


def _medians_ms(fns: list[Callable[[], object]], repeats: int) -> list[float]:
    """Median time of each function, run in alternation so that load hits all alike."""
    for fn in fns:
        fn()  # warm-up
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for fn, bucket in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            bucket.append(time.perf_counter() - start)
    return [float(np.median(t) * 1e3) for t in times]


def _cases(N: int, C: int) -> list[tuple[str, Callable, Callable]]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, C)).astype(np.float32)  # (N, C)
    t = rng.integers(0, C, N)  # (N,)
    y = (rng.random((N, C)) < 0.5).astype(np.float32)  # (N, C)
    tt, ty = torch.from_numpy(t), torch.from_numpy(y)

    def ours(loss):
        def run():
            X = Tensor(x, requires_grad=True)
            loss(X).backward()

        return run

    def theirs(loss):
        def run():
            X = torch.tensor(x, requires_grad=True)
            loss(X).backward()

        return run

    rows = np.arange(N)
    return [
        (
            "cross_entropy",
            ours(lambda X: cross_entropy(X, t)),
            theirs(lambda X: F.cross_entropy(X, tt)),
        ),
        (
            "cross_entropy, composed ops",
            ours(lambda X: -ops.log_softmax(X)[rows, t].mean()),
            theirs(lambda X: F.cross_entropy(X, tt)),
        ),
        (
            "cross_entropy, label_smoothing=0.1",
            ours(lambda X: cross_entropy(X, t, label_smoothing=0.1)),
            theirs(lambda X: F.cross_entropy(X, tt, label_smoothing=0.1)),
        ),
        (
            "binary_cross_entropy_with_logits",
            ours(lambda X: binary_cross_entropy_with_logits(X, y)),
            theirs(lambda X: F.binary_cross_entropy_with_logits(X, ty)),
        ),
        ("mse_loss", ours(lambda X: mse_loss(X, y)), theirs(lambda X: F.mse_loss(X, ty))),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small smoke size")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--torch-threads", type=int, default=1, help="rowbook is single-threaded")
    args = parser.parse_args(argv)
    N, C = (64, 100) if args.quick else (1024, 4096)
    torch.set_num_threads(args.torch_threads)
    print(
        f"forward + backward, float32 logits ({N}, {C}), median of {args.repeats}, "
        f"torch on {args.torch_threads} thread(s)\n"
    )
    print("| loss | rowbook (ms) | torch (ms) | torch / rowbook |")
    print("|---|---|---|---|")
    for name, ours, theirs in _cases(N, C):
        a, b = _medians_ms([ours, theirs], args.repeats)
        print(f"| {name} | {a:.2f} | {b:.2f} | {b / a:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
