"""Run every benchmark in one process, one after another, and keep the combined report.

    python benchmarks/run.py                 # full sizes; writes benchmarks/RESULTS.md
    python benchmarks/run.py --quick         # small sizes, a smoke test
    python benchmarks/run.py embedding optim # a subset, by name

Each ``bench_<name>.py`` measures rowbook beside its anchors (torch, gensim, Hugging Face
tokenizers, NumPy) in the same run and prints medians and ratios; a non-zero status
means a target was missed. The report starts with the date and the machine.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import io
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import machine  # noqa: E402

NAMES = [
    "cores",
    "embedding",
    "optim",
    "telemetry",
    "learning",
    "losses",
    "text",
    "tokenizers",
    "tiktoken",
    "vectors",
    "compare",
    "index",
    "defaults",
    "quantize",
    "word2vec",
    "anchors",
    "fasttext",
    "classifier",
    "contention",
    "scale",
    "viewer",
    "lm",
    "kv_cache",
    "gguf",
    "nplm",
    "ngram",
]


class _Tee(io.TextIOBase):
    def __init__(self, *streams: io.TextIOBase) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
            stream.flush()
        return len(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help=f"benchmarks to run, from {NAMES} (default: all)")
    parser.add_argument(
        "--quick", action="store_true", help="small sizes: a smoke test, not a measurement"
    )
    parser.add_argument(
        "--out", type=Path, default=HERE / "RESULTS.md", help="report file (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.names) - set(NAMES))
    if unknown:
        parser.error(f"unknown benchmarks {unknown}; choose from {NAMES}")
    report = io.StringIO()
    failed = []
    with contextlib.redirect_stdout(_Tee(sys.stdout, report)):
        print(f"# rowbook benchmarks, {datetime.date.today().isoformat()}\n\n{machine()}\n")
        for name in args.names or NAMES:
            print(f"\n## {name}\n")
            status = importlib.import_module(f"bench_{name}").main(
                ["--quick"] if args.quick else []
            )
            if status:
                failed.append(name)
        print(f"\nTargets missed in: {', '.join(failed)}" if failed else "\nAll targets met.")
    if not args.quick:
        args.out.write_text(report.getvalue(), encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
