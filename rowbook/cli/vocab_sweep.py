"""``rowbook vocab-sweep``: one subword scheme at several vocabulary sizes, measured on held-out text.

A thin layer over :func:`rowbook.text.vocab_sweep.vocab_sweep`: the table on standard output
(or JSON), the picture with ``-o FILE.png``.
"""

from __future__ import annotations

import argparse
from typing import Any

from rowbook.cli._common import (
    add_command,
    add_unicode_errors,
    check_output_path,
    print_json,
    read_lines,
)

__all__ = ["register", "run_vocab_sweep"]


def run_vocab_sweep(args: argparse.Namespace) -> int:
    from rowbook.text.vocab_sweep import plot_sweep, sweep_table, vocab_sweep

    out = check_output_path(args.output) if args.output else None
    texts = read_lines(args.corpus, progress=not args.json, errors=args.unicode_errors)
    held_out = (
        list(read_lines(args.held_out, errors=args.unicode_errors)) if args.held_out else None
    )
    rows = []
    for model in args.model:
        rows += vocab_sweep(texts if len(args.model) == 1 else list(texts), model=model, sizes=args.sizes,
                            held_out=held_out, dim=args.dim)  # fmt: skip
        texts = read_lines(args.corpus, errors=args.unicode_errors)  # read again for the next model
    if out is not None:
        plot_sweep(rows, out)
    if args.json:
        print_json([r.to_dict() for r in rows])
    else:
        print(sweep_table(rows))
        if out is not None:
            print(f"picture -> {out}")
    return 0


def register(commands: Any) -> None:
    p = add_command(
        commands, "vocab-sweep", run=run_vocab_sweep,
        help="compare vocabulary sizes: tokens per character, unknown pieces, table size",
        description="Train a subword model (--model wordpiece, unigram or bpe; several to compare "
        "them) at each of --sizes on CORPUS and measure it on held-out text (--held-out FILE, or "
        "every 10th line of CORPUS, left out of training): tokens per character, the share of "
        "[UNK] or byte-fallback pieces, and the (V x --dim) embedding table's size.",
        examples=["rowbook vocab-sweep corpus.txt --model wordpiece --sizes 1000 4000 16000",
                  "rowbook vocab-sweep corpus.txt --model wordpiece unigram bpe --sizes 2000 8000 -o sweep.png",
                  "rowbook vocab-sweep corpus.txt --model unigram --sizes 8000 32000 --held-out test.txt --json"],
    )  # fmt: skip
    p.add_argument(
        "corpus", metavar="CORPUS", nargs="+", help="UTF-8 text files or folders, one text per line"
    )
    p.add_argument("--model", nargs="+", choices=("wordpiece", "unigram", "bpe"), default=["wordpiece"],
                   help="the scheme(s) to sweep (default: wordpiece)")  # fmt: skip
    p.add_argument(
        "--sizes", nargs="+", type=int, required=True, metavar="N", help="vocabulary sizes"
    )
    p.add_argument(
        "--held-out", metavar="FILE", help="text to measure on (default: every 10th line of CORPUS)"
    )
    p.add_argument(
        "--dim",
        type=int,
        default=768,
        help="embedding width, for the table's size (default: %(default)s)",
    )
    p.add_argument("-o", "--output", metavar="FILE.png", help="also draw the picture")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    add_unicode_errors(p)
