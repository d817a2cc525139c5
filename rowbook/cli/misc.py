"""``rowbook demo`` (the guided tour) and ``rowbook bench`` (the benchmark suite)."""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

from rowbook.cli._common import add_command, add_seed
from rowbook.cli.options import add_option

__all__ = ["benchmarks_dir", "register_bench", "register_demo"]


def run_demo(args: argparse.Namespace) -> int:
    from rowbook.demo import run_demo as demo

    quiet = args.quiet
    echo = (lambda *_: None) if quiet else functools.partial(print, flush=True)  # before any bar
    written = demo(args.out, seed=args.seed, echo=echo, progress=not quiet)
    if not quiet:
        print("files:")
        for path in written:
            print(f"  {path}")
    print(
        f"rowbook demo: wrote {len(written)} files to {args.out}{'' if str(args.out).endswith('/') else '/'}"
    )
    return 0


def benchmarks_dir() -> Path | None:
    """The ``benchmarks/`` folder of the source checkout this package runs from, if any."""
    folder = Path(__file__).resolve().parents[2] / "benchmarks"
    return folder if (folder / "run.py").is_file() else None


def run_bench(args: argparse.Namespace) -> int:
    folder = benchmarks_dir()
    if folder is None:
        package = Path(__file__).resolve().parents[1]
        raise FileNotFoundError(
            f"benchmarks run from a source checkout, and there is no benchmarks/ folder next to "
            f"{package}; clone the rowbook repository, 'pip install -e .[test]' there, and run "
            "'rowbook bench' again"
        )
    command = [
        sys.executable,
        str(folder / "run.py"),
        *(["--quick"] if args.quick else []),
        *args.names,
    ]
    return subprocess.run(command, cwd=folder, check=False).returncode


def register_demo(commands: Any) -> None:
    p = add_command(
        commands,
        "demo",
        run=run_demo,
        help="walk the whole pipeline on built-in data and write the results to a folder",
        description="A guided tour in six sections, about a minute on 2 cores: (1) 'The cat sat "
        "on the mat' through normalize, tokenize, vocab, ids, one-hot, lookup and the sparse "
        "gradient; (2) the colour-harmony table and its pictures; (3) word2vec on a corpus with "
        "planted structure: neighbors and king - man + woman; (4) BPE merges; (5) a neural "
        "language model's sample; (6) fastText's vector for a word the corpus never had. Tables, vectors and pictures go to --out.",
        examples=[
            "rowbook demo",
            "rowbook demo --out /tmp/demo --quiet",
            "rowbook neighbors rowbook-demo/word_vectors.txt king  # after the demo",
        ],
    )
    add_option(p, "--out", "output folder", default=Path("rowbook-demo"))
    add_seed(p, "random seed")
    p.add_argument("--quiet", action="store_true", help="print only where the outputs went")


def register_bench(commands: Any) -> None:
    p = add_command(
        commands,
        "bench",
        run=run_bench,
        help="run the benchmarks (from a source checkout)",
        description="Run benchmarks/run.py of the source checkout: every benchmark measures rowbook "
        "beside its anchors (PyTorch, gensim, Hugging Face tokenizers, NumPy) in the same run and "
        "prints medians and ratios. A full run writes benchmarks/RESULTS.md; the exit status is "
        "non-zero when a target is missed.",
        examples=["rowbook bench --quick", "rowbook bench word2vec vectors"],
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="benchmarks to run (default: all)")
    p.add_argument(
        "--quick", action="store_true", help="small sizes: a smoke test, not a measurement"
    )
