"""The NPLM's training step against the same model written in torch.

One step (forward, cross entropy, backward, Adam step) of Bengio et al.'s model at the
size of a word-level NPLM on 3,000 NewsArticles lines: V = 10,483 (the vocabulary those
lines give), n = 3 context words, d = 16, 64 tanh units, batch 512, float32, dense Adam on
every parameter. rowbook's :class:`~rowbook.models.nplm.NPLMNet` with its Adam, and its
twin in torch (``nn.Embedding``, two ``nn.Linear``, ``F.cross_entropy``, ``torch.optim.Adam``
with its default multi-tensor update) start from the same weights and take the same
batches; both run on one thread and then on two (BLAS, numba and torch's intra-op threads
alike), each side in a process of its own, the two asked for 5 steps in turn so that a busy
machine slows both alike (in one process, the idle side's OpenMP threads spin while the
other runs and slow it). The target: rowbook's step within 1.2x of torch's.

    python benchmarks/bench_nplm.py           # the sizes above
    python benchmarks/bench_nplm.py --quick   # small sizes, a smoke test
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from threadpoolctl import threadpool_limits
from timing import print_targets

from rowbook.models.nplm import NPLMNet
from rowbook.nn import functional as F
from rowbook.optim import Adam


class TorchNPLM(torch.nn.Module):
    """``logits = b + U tanh(d + H [C(w_1); ...; C(w_n)])`` in torch."""

    def __init__(self, net: NPLMNet) -> None:
        super().__init__()
        self.C = torch.nn.Embedding.from_pretrained(torch.tensor(net.C.weight.data), freeze=False)
        self.H = torch.nn.Linear(*net.H.weight.shape[::-1])
        self.U = torch.nn.Linear(*net.U.weight.shape[::-1])
        with torch.no_grad():
            for name in ("H", "U"):
                ours, theirs = getattr(net, name), getattr(self, name)
                theirs.weight.copy_(torch.tensor(ours.weight.data))
                theirs.bias.copy_(torch.tensor(ours.bias.data))

    def forward(self, contexts: torch.Tensor) -> torch.Tensor:
        x = self.C(contexts).reshape(len(contexts), -1)  # (B, n d)
        return self.U(torch.tanh(self.H(x)))  # (B, V)


def _steps(V: int, n: int, d: int, hidden: int, batch: int, seed: int = 0):
    """The two step functions, on the same weights and the same stream of batches."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, V + 1)
    batches = [rng.choice(V, size=(batch, n + 1), p=p / p.sum()) for _ in range(8)]
    net = NPLMNet(V, n, d, hidden, rng=seed)
    ours_opt = Adam(list(net.parameters()), lr=1e-2)
    twin = TorchNPLM(net)
    theirs_opt = torch.optim.Adam(twin.parameters(), lr=1e-2)
    state = {"ours": 0, "theirs": 0}

    def ours() -> None:
        ids = batches[state["ours"] % len(batches)]
        state["ours"] += 1
        ours_opt.zero_grad()
        loss = F.cross_entropy(net(ids[:, :n]), ids[:, n])
        loss.backward()
        ours_opt.step()

    def theirs() -> None:
        ids = torch.from_numpy(batches[state["theirs"] % len(batches)])
        state["theirs"] += 1
        theirs_opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(twin(ids[:, :n]), ids[:, n])
        loss.backward()
        theirs_opt.step()

    return ours, theirs


def _worker(kind: str, threads: int, V: int, batch: int) -> None:
    """Serve timing requests on standard input: each line asks for k steps of ``kind``
    and gets back their mean in ms (a process per side: neither's idle threads spin
    while the other runs)."""
    torch.set_num_threads(threads)
    numba.set_num_threads(threads)  # rowbook's kernels, as torch's intra-op threads
    with threadpool_limits(threads, user_api="blas"):
        step = _steps(V, 3, 16, 64, batch)[kind == "torch"]
        for _ in range(3):
            step()
        print("ready", flush=True)
        for line in sys.stdin:
            k = int(line)
            start = time.perf_counter()
            for _ in range(k):
                step()
            print((time.perf_counter() - start) * 1e3 / k, flush=True)


def _alternating_ms(threads: int, V: int, batch: int, repeat: int, k: int) -> dict[str, float]:
    """Median ms per step of each side, their processes asked in turn ``repeat`` times."""
    here = [sys.executable, str(Path(__file__).resolve())]
    procs = {
        kind: subprocess.Popen(
            [*here, "--worker", kind, str(threads), str(V), str(batch)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for kind in ("rowbook", "torch")
    }
    times: dict[str, list[float]] = {kind: [] for kind in procs}
    try:
        for proc in procs.values():
            assert proc.stdout.readline().strip() == "ready"
        for _ in range(repeat):
            for kind, proc in procs.items():
                proc.stdin.write(f"{k}\n")
                proc.stdin.flush()
                times[kind].append(float(proc.stdout.readline()))
    finally:
        for proc in procs.values():
            proc.stdin.close()
            proc.wait()
    return {kind: float(np.median(t)) for kind, t in times.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke test")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        kind, threads, V, batch = args.worker
        _worker(kind, int(threads), int(V), int(batch))
        return 0
    V, batch, repeat = (2_000, 128, 3) if args.quick else (10_483, 512, 11)
    print(
        f"## NPLM training step: V={V:,}, n=3, d=16, hidden=64, batch {batch}, float32, Adam; "
        f"median of {repeat} rounds of 5 steps, the two sides in their own processes, in turn\n"
    )
    print("| threads | rowbook ms | torch ms | torch / rowbook |")
    print("|---:|---:|---:|---:|")
    targets = []
    for threads in (1, 2):
        ms = _alternating_ms(threads, V, batch, repeat, k=5)
        ratio = ms["torch"] / ms["rowbook"]
        print(f"| {threads} | {ms['rowbook']:.1f} | {ms['torch']:.1f} | {ratio:.2f} |")
        targets.append((f"NPLM step within 1.2x of torch, {threads} thread(s)", ratio, 1 / 1.2))
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    sys.exit(main())
