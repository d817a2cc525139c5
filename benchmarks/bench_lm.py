"""Language models against torch and ``transformers``, measured side by side in one run.

1. One training step (forward, backward, optimizer step) of a GPT-2-shaped model, d=256,
   4 layers, 4 heads, T=256, batch 16, V=8,000, float32: rowbook's TransformerLM against
   ``transformers``' GPT2LMHeadModel with the same weights (rowbook reads its checkpoint),
   both with AdamW on every parameter (tied table), and both untied with SparseAdam on the
   table and AdamW on the rest; at 1 and at 2 threads for both.
2. Attention, forward + backward, causal, one sequence of 8 heads of d=64, at T=4,096
   and 8,192: rowbook's tiled path against torch's ``scaled_dot_product_attention``; the
   memory each adds (peak resident size of a child process) against rowbook's plain path.
3. Generation, 256 new tokens after a 16-token prompt, greedy, with the KV cache: rowbook's
   ``generate`` against ``transformers``' ``generate(use_cache=True)`` on the same weights.

    python benchmarks/bench_lm.py           # the sizes above
    python benchmarks/bench_lm.py --quick   # small sizes, a smoke test
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import torch

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from threadpoolctl import threadpool_limits
from timing import interleaved_medians_ms, print_targets

import rowbook.optim as ro
from rowbook.models import TransformerLM
from rowbook.nn import functional as F


def _gpt2(folder: Path, V: int, d: int, layers: int, heads: int, context: int, tied: bool):
    """A random GPT2LMHeadModel saved in ``folder``, and rowbook's model read from it."""
    import transformers

    config = transformers.GPT2Config(
        vocab_size=V,
        n_embd=d,
        n_layer=layers,
        n_head=heads,
        n_positions=context,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        tie_word_embeddings=tied,
        bos_token_id=0,
        eos_token_id=0,
    )
    torch.manual_seed(0)
    theirs = transformers.GPT2LMHeadModel(config)
    theirs.save_pretrained(folder)
    return theirs, TransformerLM.from_hf(folder)


def _groups(named, skip=None):
    """nanoGPT's AdamW groups: decay on matrices and tables, none on biases and norms."""
    params = [(n, p) for n, p in named if p is not skip]
    return [
        {"params": [p for _, p in params if p.ndim >= 2]},
        {"params": [p for _, p in params if p.ndim < 2], "weight_decay": 0.0},
    ]


def _steps(V: int, d: int, layers: int, heads: int, T: int, B: int, sparse: bool):
    """``(rowbook step, torch step)`` closures training the same weights on the same batch."""
    folder = Path(tempfile.mkdtemp())
    theirs, lm = _gpt2(folder, V, d, layers, heads, T, tied=not sparse)
    net = lm.net_
    if sparse:
        net.embedding.sparse = True
        table = net.embedding.weight
        rest = ro.AdamW(_groups(net.named_parameters(), table), lr=1e-3, weight_decay=0.1)
        optimizers = [ro.SparseAdam([table], lr=1e-3), rest]
        wte = theirs.transformer.wte
        wte.sparse = True
        t_opts = [
            torch.optim.SparseAdam([wte.weight], lr=1e-3),
            torch.optim.AdamW(
                _groups(theirs.named_parameters(), wte.weight), lr=1e-3, weight_decay=0.1
            ),
        ]
    else:
        optimizers = [ro.AdamW(_groups(net.named_parameters()), lr=1e-3, weight_decay=0.1)]
        t_opts = [torch.optim.AdamW(_groups(theirs.named_parameters()), lr=1e-3, weight_decay=0.1)]
    windows = np.random.default_rng(0).integers(0, V, (B, T + 1))
    t_windows = torch.tensor(windows)
    losses: dict[str, list[float]] = {"rowbook": [], "torch": []}

    def ours() -> None:
        for o in optimizers:
            o.zero_grad()
        logits = net(windows[:, :-1])  # (B, T, V)
        loss = F.cross_entropy(logits.reshape(-1, V), windows[:, 1:].reshape(-1))
        loss.backward()
        for o in optimizers:
            o.step()
        losses["rowbook"].append(loss.item())

    def torchs() -> None:
        for o in t_opts:
            o.zero_grad()
        logits = theirs(t_windows[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, V), t_windows[:, 1:].reshape(-1)
        )
        loss.backward()
        for o in t_opts:
            o.step()
        losses["torch"].append(loss.item())

    return ours, torchs, losses


def bench_step(quick: bool, repeat: int) -> list[tuple[str, float, float]]:
    V, d, layers, heads, T, B = (500, 32, 2, 2, 32, 4) if quick else (8000, 256, 4, 4, 256, 16)
    print(
        f"### One training step: V={V:,}, d={d}, {layers} layers, {heads} heads, T={T}, "
        f"batch {B}, float32; median of {repeat} interleaved\n"
    )
    print("| optimizer | threads | rowbook ms | torch ms | torch / rowbook | first losses equal |")
    print("|---|---:|---:|---:|---:|---|")
    targets = []
    for sparse in (False, True):
        name = "SparseAdam (table, untied) + AdamW" if sparse else "AdamW on all (tied)"
        for threads in (1, 2):
            ours, torchs, losses = _steps(V, d, layers, heads, T, B, sparse)
            torch.set_num_threads(threads)
            with threadpool_limits(threads, user_api="blas"):
                times = interleaved_medians_ms({"rowbook": ours, "torch": torchs}, repeat=repeat)
            same = abs(losses["rowbook"][0] - losses["torch"][0]) < 1e-4
            ratio = times["torch"] / times["rowbook"]
            print(
                f"| {name} | {threads} | {times['rowbook']:.0f} | {times['torch']:.0f} | "
                f"{ratio:.2f} | {'yes' if same else 'NO'} |"
            )
            targets.append(
                (f"train step, {name}, {threads} thread(s): within 1.2x", ratio, 1 / 1.2)
            )
    return targets


_MEASURE = textwrap.dedent(
    """
    import json, sys
    import numpy as np, torch

    def peak_kib():
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))

    T, H, who = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    torch.set_num_threads(2)

    def run(T):
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((1, H, T, 64), dtype=np.float32) for _ in range(3))
        if who == "torch":
            q, k, v = (torch.tensor(x, requires_grad=True) for x in (q, k, v))
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            out.backward(torch.ones_like(out))
        else:
            from rowbook.autograd import Tensor
            from rowbook.nn.functional import scaled_dot_product_attention
            q, k, v = (Tensor(x, requires_grad=True) for x in (q, k, v))
            out = scaled_dot_product_attention(q, k, v, is_causal=True, implementation=who)
            out.backward(np.ones_like(out.data))

    run(256)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = peak_kib()
    run(T)
    print(json.dumps((peak_kib() - before) / 1024))
    """
)


def _added_mib(T: int, H: int, who: str) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(T), str(H), who],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def bench_attention(quick: bool, repeat: int) -> list[tuple[str, float, float]]:
    from rowbook.autograd import Tensor
    from rowbook.nn.functional import scaled_dot_product_attention

    H, lengths = (2, (512, 1024)) if quick else (8, (4096, 8192))
    torch.set_num_threads(2)
    print(
        f"\n### Attention, forward + backward: 1 x {H} heads x T x 64, causal, float32, "
        f"2 threads; median of {repeat} interleaved; memory: peak resident size a child adds\n"
    )
    print(
        "| T | rowbook tiled ms | torch SDPA ms | torch / rowbook | tiled MiB | plain MiB | torch MiB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    targets = []
    for T in lengths:
        rng = np.random.default_rng(0)
        arrays = [rng.standard_normal((1, H, T, 64), dtype=np.float32) for _ in range(3)]
        grad = np.ones((1, H, T, 64), np.float32)

        def ours(arrays=arrays, grad=grad) -> None:
            q, k, v = (Tensor(a, requires_grad=True) for a in arrays)
            scaled_dot_product_attention(q, k, v, is_causal=True, implementation="tiled").backward(
                grad
            )

        def theirs(arrays=arrays, grad=grad) -> None:
            q, k, v = (torch.tensor(a, requires_grad=True) for a in arrays)
            out = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            out.backward(torch.from_numpy(grad))

        times = interleaved_medians_ms({"rowbook": ours, "torch": theirs}, repeat=repeat)
        tiled, theirs_mib = _added_mib(T, H, "tiled"), _added_mib(T, H, "torch")
        # the plain path holds H T^2 scores and probabilities: run at the smaller length only
        plain = _added_mib(T, H, "plain") if T == lengths[0] else 2 * H * T * T * 4 / 2**20
        shown = f"{plain:.0f}" if T == lengths[0] else f">= {plain:.0f} (2 H T^2 float32, not run)"
        ratio = times["torch"] / times["rowbook"]
        print(
            f"| {T:,} | {times['rowbook']:.0f} | {times['torch']:.0f} | {ratio:.2f} | "
            f"{tiled:.0f} | {shown} | {theirs_mib:.0f} |"
        )
        targets.append((f"attention T={T}: at most 1.5x torch's time", ratio, 1 / 1.5))
        targets.append(
            (f"attention T={T}: plain / tiled memory at least 8", plain / max(tiled, 1), 8)
        )
    return targets


def bench_generate(quick: bool, repeat: int) -> list[tuple[str, float, float]]:
    V, d, layers, heads, new = (500, 32, 2, 2, 32) if quick else (8000, 256, 4, 4, 256)
    folder = Path(tempfile.mkdtemp())
    theirs, lm = _gpt2(folder, V, d, layers, heads, 512, tied=True)
    theirs.eval()
    prompt = np.random.default_rng(1).integers(1, V, 16)
    t_prompt = torch.tensor(prompt[None])
    outputs = {}

    def ours() -> None:
        outputs["rowbook"] = lm.generate(prompt, new, temperature=0, stop_at_eos=False)

    def transformers_generate() -> None:
        with torch.no_grad():
            out = theirs.generate(
                t_prompt,
                max_new_tokens=new,
                min_new_tokens=new,
                do_sample=False,
                use_cache=True,
                pad_token_id=0,
                eos_token_id=None,
            )
        outputs["torch"] = out[0].numpy()

    print(
        f"\n### Generation: {new} new tokens after 16, greedy, KV cache; V={V:,}, d={d}, "
        f"{layers} layers; median of {repeat} interleaved\n"
    )
    print(
        "| threads | rowbook tokens/s | transformers tokens/s | rowbook / transformers | same tokens |"
    )
    print("|---:|---:|---:|---:|---|")
    targets = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        with threadpool_limits(threads, user_api="blas"):
            times = interleaved_medians_ms(
                {"rowbook": ours, "torch": transformers_generate}, repeat=repeat
            )
        same = np.array_equal(outputs["rowbook"], outputs["torch"])
        rate = {k: new / (v / 1e3) for k, v in times.items()}
        ratio = rate["rowbook"] / rate["torch"]
        print(
            f"| {threads} | {rate['rowbook']:.0f} | {rate['torch']:.0f} | {ratio:.2f} | "
            f"{'yes' if same else 'no'} |"
        )
        targets.append(
            (f"generation, {threads} thread(s): at least transformers' tokens/s", ratio, 1.0)
        )
    return targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small smoke sizes")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    repeat = 2 if args.quick else args.repeat
    targets = bench_step(args.quick, repeat)
    targets += bench_attention(args.quick, max(2, repeat - 2))
    targets += bench_generate(args.quick, repeat)
    return 0 if print_targets(targets) else 1


if __name__ == "__main__":
    raise SystemExit(main())
