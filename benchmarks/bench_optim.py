"""Optimizer steps against PyTorch, measured side by side in one run.

1. The step alone on a V=50,257 x d=768 float32 table whose row-sparse gradient comes
   from 16,384 Zipf(1.2) ids: rowbook SparseAdam (fused kernel and its NumPy reference)
   against torch SparseAdam, fed the gradient as torch's ``Embedding(sparse=True)``
   backward leaves it (uncoalesced) and already coalesced; sparse Adagrad; and dense Adam
   on a dense gradient against torch Adam (default and ``fused=True``).
2. SparseAdam's step as the table grows from 10k to 10M rows at a fixed batch. d=64
   here: a 10M x 768 float32 table alone would be 30 GB, more than this machine has.
   torch is measured up to 1M rows only, to keep the run's memory small.
3. A whole training step (lookup, backward, optimizer step) with ``Embedding``.

Each timed call steps with the next of a few pre-drawn batches, so it does not see
the same rows twice in a row.

    python benchmarks/bench_optim.py           # the sizes above
    python benchmarks/bench_optim.py --quick   # small sizes, a smoke test
"""

from __future__ import annotations

import argparse
import itertools
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import Row, machine, median_ms, print_table, print_targets, zipf_ids

import rowbook.optim as ro
from rowbook.autograd.sparse import scatter_add_rows
from rowbook.nn import Embedding, Parameter
from rowbook.optim.adam_kernels import adam_rows_reference

BATCHES = 4
WARMUP = 2 * BATCHES  # past the first touches of lazily zeroed state pages: steady state


def cycling(fn: Callable[[int], object]) -> Callable[[], object]:
    """A timing target that calls ``fn(k)`` with k = 0, 1, ..., BATCHES - 1, 0, ..."""
    counter = itertools.cycle(range(BATCHES))
    return lambda: fn(next(counter))


def sparse_batches(V: int, d: int, N: int, rng: np.random.Generator) -> list[tuple]:
    """(ids, upstream rows, RowSparse, torch uncoalesced, torch coalesced) per batch."""
    out = []
    for _ in range(BATCHES):
        ids = zipf_ids(N, V, rng)
        G = rng.standard_normal((N, d), dtype=np.float32)  # (N, d)
        uncoalesced = torch.sparse_coo_tensor(
            torch.from_numpy(ids)[None], torch.from_numpy(G), (V, d), check_invariants=False
        )
        out.append((ids, G, scatter_add_rows(ids, G, V), uncoalesced, uncoalesced.coalesce()))
    return out


def torch_step(opt: torch.optim.Optimizer, param: torch.Tensor, grads: list) -> Callable:
    def step(k: int) -> None:
        param.grad = grads[k]
        opt.step()

    return cycling(step)


def rowbook_step(opt: ro.Optimizer, param: Parameter, grads: list) -> Callable:
    def step(k: int) -> None:
        param.grad = grads[k]
        opt.step()

    return cycling(step)


def step_rows(W0: np.ndarray, batches: list, repeat: int) -> list[Row]:
    """Sparse steps: SparseAdam and Adagrad, rowbook and torch, on the same gradients."""

    def timed(group: str, name: str, fn: Callable, note: str = "") -> Row:
        return Row(group, name, median_ms(fn, repeat=repeat, warmup=WARMUP), note)

    grads = [b[2] for b in batches]  # RowSparse
    w = Parameter(W0.copy())
    rows = [
        timed(
            "SparseAdam",
            "rowbook SparseAdam",
            rowbook_step(ro.SparseAdam([w]), w, grads),
            "fused kernel",
        )
    ]
    for name, column in (
        ("uncoalesced, as Embedding(sparse=True) leaves it", 3),
        ("coalesced beforehand", 4),
    ):
        tw = torch.from_numpy(W0.copy()).requires_grad_(True)
        fn = torch_step(torch.optim.SparseAdam([tw]), tw, [b[column] for b in batches])
        rows.append(timed("SparseAdam", f"torch SparseAdam, {name}", fn))
    m, v, p = np.zeros_like(W0), np.zeros_like(W0), W0.copy()
    kw = {"step": 3, "lr": 1e-3, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8}
    fn = cycling(lambda k: adam_rows_reference(p, grads[k].indices, grads[k].values, m, v, **kw))
    rows.append(timed("SparseAdam", "rowbook NumPy reference (adam_rows_reference)", fn))
    w = Parameter(W0.copy())
    fn = rowbook_step(ro.Adagrad([w]), w, grads)
    rows.append(timed("Adagrad", "rowbook Adagrad (row-sparse)", fn))
    tw = torch.from_numpy(W0.copy()).requires_grad_(True)
    fn = torch_step(torch.optim.Adagrad([tw]), tw, [b[4] for b in batches])
    rows.append(timed("Adagrad", "torch Adagrad (sparse, coalesced)", fn))
    w = Parameter(W0.copy())
    fn = rowbook_step(ro.RowWiseAdagrad([w]), w, grads)
    rows.append(timed("Adagrad", "rowbook RowWiseAdagrad (row-sparse)", fn, "state V, not V x d"))
    return rows


def dense_rows(W0: np.ndarray, rng: np.random.Generator, repeat: int) -> list[Row]:
    grads = [rng.standard_normal(W0.shape, dtype=np.float32) for _ in range(2)] * 2
    w = Parameter(W0.copy())
    fn = rowbook_step(ro.Adam([w]), w, grads)
    rows = [
        Row(
            "Adam",
            "rowbook Adam (dense)",
            median_ms(fn, repeat=repeat, warmup=WARMUP),
            "fused kernel",
        )
    ]
    for name, kwargs in (("torch Adam", {}), ("torch Adam fused=True", {"fused": True})):
        tw = torch.from_numpy(W0.copy()).requires_grad_(True)
        fn = torch_step(torch.optim.Adam([tw], **kwargs), tw, [torch.from_numpy(g) for g in grads])
        rows.append(Row("Adam", name, median_ms(fn, repeat=repeat, warmup=WARMUP)))
    return rows


def growth_rows(sizes: list[int], d: int, N: int, torch_max: int, rng) -> list[Row]:
    rows = []
    for V in sizes:
        W0 = np.full((V, d), 0.01, dtype=np.float32)  # (V, d), values do not matter here
        batches = sparse_batches(V, d, N, rng)
        unique = int(np.mean([b[2].nnz for b in batches]))
        w = Parameter(W0)
        fn = rowbook_step(ro.SparseAdam([w]), w, [b[2] for b in batches])
        ms = median_ms(fn, repeat=31, warmup=WARMUP)
        rows.append(
            Row(
                f"V={V:,}",
                "rowbook SparseAdam",
                ms,
                f"{unique:,} unique rows, {1e3 * ms / unique:.2f} us per row",
            )
        )
        if V <= torch_max:
            tw = torch.from_numpy(W0).requires_grad_(True)
            fn = torch_step(torch.optim.SparseAdam([tw]), tw, [b[3] for b in batches])
            ms = median_ms(fn, repeat=7, warmup=WARMUP)
            rows.append(Row(f"V={V:,}", "torch SparseAdam (uncoalesced)", ms))
        del w, W0, batches
    return rows


def train_rows(W0: np.ndarray, batches: list, repeat: int) -> list[Row]:
    """Lookup + backward of ``sum(E[ids] * G)`` + optimizer step, both libraries."""
    rows = []
    for sparse, rb_opt, t_opt in (
        (True, ro.SparseAdam, torch.optim.SparseAdam),
        (False, ro.Adam, torch.optim.Adam),
    ):
        emb = Embedding(*W0.shape, sparse=sparse, _weight=W0.copy())
        opt = rb_opt(emb.parameters())

        def ours(k: int, emb=emb, opt=opt) -> None:
            opt.zero_grad()
            emb(batches[k][0]).backward(batches[k][1])
            opt.step()

        temb = torch.nn.Embedding(*W0.shape, sparse=sparse, _weight=torch.from_numpy(W0.copy()))
        topt = t_opt(temb.parameters())
        tbatches = [(torch.from_numpy(b[0]), torch.from_numpy(b[1])) for b in batches]

        def theirs(k: int, temb=temb, topt=topt, tbatches=tbatches) -> None:
            topt.zero_grad()
            temb(tbatches[k][0]).backward(tbatches[k][1])
            topt.step()

        kind = "Embedding(sparse=True) + SparseAdam" if sparse else "dense Embedding + Adam"
        for who, fn in (("rowbook", ours), ("torch", theirs)):
            ms = median_ms(cycling(fn), repeat=repeat, warmup=WARMUP)
            rows.append(Row(kind, f"{who} {kind}", ms))
    return rows


def main(argv: list[str] | None = None) -> int:
    formatter = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=formatter)
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", "Sparse invariant checks", UserWarning)
    rng = np.random.default_rng(0)
    V, d, N, repeat = (5_000, 64, 2_048, 5) if args.quick else (50_257, 768, 16_384, 15)
    sizes = [1_000, 10_000, 100_000] if args.quick else [10_000, 100_000, 1_000_000, 10_000_000]
    W0 = rng.standard_normal((V, d), dtype=np.float32)  # (V, d)
    batches = sparse_batches(V, d, N, rng)
    unique = int(np.mean([b[2].nnz for b in batches]))
    print(
        f"Optimizer steps: V={V:,}, d={d}, N={N:,} Zipf(1.2) ids per batch ({unique:,} unique "
        f"rows on average), float32; torch {torch.__version__} with "
        f"{torch.get_num_threads()} threads; {machine()}"
    )
    steps = step_rows(W0, batches, repeat) + dense_rows(W0, rng, max(3, repeat // 3))
    subjects = {
        "SparseAdam": "rowbook SparseAdam",
        "Adagrad": "rowbook Adagrad (row-sparse)",
        "Adam": "rowbook Adam (dense)",
    }
    print_table("The optimizer step alone", steps, subjects)
    growth = growth_rows(sizes, 64, N, 1_000_000, rng)
    print_table(
        f"SparseAdam step as V grows (d=64, N={N:,} Zipf ids)",
        growth,
        {r.group: "rowbook SparseAdam" for r in growth},
    )
    train = train_rows(W0, batches, max(3, repeat // 3))
    print_table(
        "Training step: lookup + backward + optimizer step",
        train,
        {r.group: f"rowbook {r.group}" for r in train},
    )
    t = {(r.group, r.name): r.ms for r in steps + train}
    ours = [r.ms for r in growth if r.name.startswith("rowbook")]
    train_kind = "Embedding(sparse=True) + SparseAdam"
    ok = print_targets(
        [
            (
                "step: torch SparseAdam (coalesced) / rowbook SparseAdam",
                t["SparseAdam", "torch SparseAdam, coalesced beforehand"]
                / t["SparseAdam", "rowbook SparseAdam"],
                3.0,
            ),
            (
                "train step: torch / rowbook, sparse + SparseAdam",
                t[train_kind, f"torch {train_kind}"] / t[train_kind, f"rowbook {train_kind}"],
                3.0,
            ),
            (
                f"SparseAdam flatness: 2 / (slowest / fastest, V={sizes[0]:,}..{sizes[-1]:,})",
                2.0 / (max(ours) / min(ours)),
                1.0,
            ),
        ]
    )
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    raise SystemExit(main())
