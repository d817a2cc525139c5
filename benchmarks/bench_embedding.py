"""Embedding lookup kernels against their anchors, measured side by side in one run.

Forward: a lookup of N Zipf-distributed ids in a (V, d) table, against a bandwidth
bound (copying an output-sized array into an existing buffer), NumPy fancy indexing,
``torch.nn.functional.embedding`` and the one-hot matmul. Backward (timed alone, the
graph built outside the timer): the gradient of
the table, against ``np.add.at``, torch's dense and sparse backward, and a SciPy CSR
``O.T @ G`` over the unique ids. Last, the one-hot path against the lookup as V grows.

    python benchmarks/bench_embedding.py           # V=50,257, d=768, N=16,384
    python benchmarks/bench_embedding.py --quick   # small sizes, a smoke test
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import Row, machine, median_ms, print_table, print_targets, zipf_ids

from rowbook.autograd import Tensor
from rowbook.nn import functional as F


def forward_rows(E: np.ndarray, ids: np.ndarray, repeat: int) -> list[Row]:
    import torch

    Et, it = torch.from_numpy(E), torch.from_numpy(ids)
    W = Tensor(E)
    expected = E[ids]
    buffer = np.empty_like(expected)
    assert np.array_equal(F.embedding(ids, W).data, expected)
    few = ids[:512]
    one_hot = np.zeros((few.size, E.shape[0]), dtype=E.dtype)  # (512, V)
    one_hot[np.arange(few.size), few] = 1
    return [
        Row(
            "forward", "rowbook F.embedding", median_ms(lambda: F.embedding(ids, W), repeat=repeat)
        ),
        Row(
            "forward",
            "memcpy of the output (bandwidth bound)",
            median_ms(lambda: np.copyto(buffer, expected), repeat=repeat),
            "np.copyto into a buffer",
        ),
        Row("forward", "NumPy E[ids]", median_ms(lambda: E[ids], repeat=repeat)),
        Row(
            "forward",
            "torch.nn.functional.embedding",
            median_ms(lambda: torch.nn.functional.embedding(it, Et), repeat=repeat),
        ),
        Row(
            "forward",
            "one_hot(ids) @ E, only 512 ids",
            median_ms(lambda: one_hot @ E, repeat=max(3, repeat // 5)),
            "one-hot built outside the timer",
        ),
        Row(
            "forward",
            "rowbook F.embedding, only 512 ids",
            median_ms(lambda: F.embedding(few, W), repeat=repeat),
        ),
    ]


def backward_rows(E: np.ndarray, ids: np.ndarray, G: np.ndarray, repeat: int) -> list[Row]:
    import torch

    # The backward pass alone: each graph is built once, outside the timer, and its
    # backward is run repeatedly (torch with retain_graph=True) on a cleared gradient.
    def rowbook_backward(sparse: bool) -> Callable[[], object]:
        W = Tensor(E, requires_grad=True)
        out = F.embedding(ids, W, sparse=sparse)

        def run() -> object:
            W.grad = None
            out.backward(G)
            return W.grad

        return run

    def numpy_add_at() -> np.ndarray:
        grad = np.zeros_like(E)
        np.add.at(grad, ids, G)
        return grad

    def torch_backward(sparse: bool) -> Callable[[], object]:
        Wt = torch.from_numpy(E).requires_grad_(True)
        out = torch.nn.functional.embedding(torch.from_numpy(ids), Wt, sparse=sparse)
        Gt = torch.from_numpy(G)

        def run() -> object:
            Wt.grad = None
            out.backward(Gt, retain_graph=True)
            return Wt.grad.coalesce() if sparse else Wt.grad

        return run

    def scipy_csr() -> np.ndarray:
        uniq, inverse = np.unique(ids, return_inverse=True)
        onehot_t = sp.csr_matrix(
            (np.ones(ids.size, E.dtype), (inverse, np.arange(ids.size))), (uniq.size, ids.size)
        )
        return onehot_t @ G

    dense = numpy_add_at()
    assert np.allclose(rowbook_backward(True)().to_dense(), dense, atol=1e-4)
    assert np.allclose(rowbook_backward(False)(), dense, atol=1e-4)
    del dense
    slow = max(3, repeat // 3)
    return [
        Row(
            "backward",
            "rowbook sparse=True (RowSparse)",
            median_ms(rowbook_backward(True), repeat=repeat),
        ),
        Row(
            "backward",
            "rowbook dense (V, d) gradient",
            median_ms(rowbook_backward(False), repeat=slow),
        ),
        Row(
            "backward",
            "np.add.at into a dense (V, d) gradient",
            median_ms(numpy_add_at, repeat=slow),
        ),
        Row("backward", "torch dense backward", median_ms(torch_backward(False), repeat=slow)),
        Row(
            "backward",
            "torch sparse=True backward and coalesce",
            median_ms(torch_backward(True), repeat=slow),
        ),
        Row(
            "backward", "SciPy CSR O^T @ G over the unique ids", median_ms(scipy_csr, repeat=repeat)
        ),
    ]


def scaling_rows(vocab_sizes: list[int], d: int, n: int, rng: np.random.Generator) -> list[Row]:
    """One-hot matmul grows with V; the lookup does not."""
    rows = []
    for V in vocab_sizes:
        E = rng.standard_normal((V, d), dtype=np.float32)
        ids = zipf_ids(n, V, rng)
        W = Tensor(E)
        onehot_ms = median_ms(lambda: F.one_hot(ids, V).astype(np.float32) @ W, repeat=3, warmup=1)  # noqa: B023
        lookup_ms = median_ms(lambda: F.embedding(ids, W), repeat=15)  # noqa: B023
        rows.append(Row(f"V={V:,}", "rowbook F.embedding", lookup_ms))
        rows.append(Row(f"V={V:,}", "one_hot(ids) @ E (one-hot built inside)", onehot_ms))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: a smoke test, not a measurement"
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    V, d, N, repeat = (5_000, 64, 2_048, 5) if args.quick else (50_257, 768, 16_384, 25)
    E = rng.standard_normal((V, d), dtype=np.float32)  # (V, d)
    ids = zipf_ids(N, V, rng)
    G = rng.standard_normal((N, d), dtype=np.float32)  # (N, d)

    print(
        f"Embedding kernels: V={V:,}, d={d}, N={N:,} Zipf(1.2) ids ({np.unique(ids).size:,} unique), "
        f"float32; {machine()}"
    )
    fwd, bwd = forward_rows(E, ids, repeat), backward_rows(E, ids, G, repeat)
    print_table(
        "Forward and backward",
        fwd + bwd,
        {"forward": "rowbook F.embedding", "backward": "rowbook sparse=True (RowSparse)"},
    )
    sizes = [1_000, 10_000] if args.quick else [1_000, 10_000, 100_000, 1_000_000]
    scale = scaling_rows(sizes, 64, 256, rng)
    print_table(
        "One-hot matmul vs lookup as V grows (d=64, 256 ids)",
        scale,
        {r.group: "rowbook F.embedding" for r in scale},
    )

    t = {r.name: r.ms for r in fwd + bwd}
    lookups = [r.ms for r in scale if r.name.startswith("rowbook")]
    onehots = [r.ms for r in scale if r.name.startswith("one_hot")]
    ok = print_targets(
        [
            (
                "forward: torch F.embedding / rowbook",
                t["torch.nn.functional.embedding"] / t["rowbook F.embedding"],
                1.5,
            ),
            (
                "forward: memcpy bound x 1.5 / rowbook",
                1.5 * t["memcpy of the output (bandwidth bound)"] / t["rowbook F.embedding"],
                1.0,
            ),
            (
                "backward: torch dense / rowbook sparse",
                t["torch dense backward"] / t["rowbook sparse=True (RowSparse)"],
                5.0,
            ),
            (
                "backward: torch sparse / rowbook sparse",
                t["torch sparse=True backward and coalesce"] / t["rowbook sparse=True (RowSparse)"],
                5.0,
            ),
            (
                "backward: np.add.at / rowbook sparse",
                t["np.add.at into a dense (V, d) gradient"] / t["rowbook sparse=True (RowSparse)"],
                10.0,
            ),
            (
                f"one-hot growth V={sizes[0]:,} -> {sizes[-1]:,} (time ratio)",
                onehots[-1] / onehots[0],
                2.0,
            ),
            (
                f"lookup flatness: 2 / (time ratio V={sizes[0]:,} -> {sizes[-1]:,})",
                2.0 / (lookups[-1] / lookups[0]),
                1.0,
            ),
        ]
    )
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
