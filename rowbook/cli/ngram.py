"""The count language model on the command line: ``count-vs-neural``.

``rowbook count-vs-neural CORPUS`` trains an n-gram count model (modified Kneser-Ney, and
add-one) and an NPLM on the same lines and prints their held-out perplexity side by side
with the share of held-out n-grams the counts never saw
(:func:`rowbook.models.ngram.experiment.counts_vs_neural`).
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from rowbook.cli._common import (
    add_command,
    add_corpus,
    add_json,
    add_seed,
    add_unicode_errors,
    print_json,
    read_lines,
)
from rowbook.cli.options import add_option

__all__ = ["register"]


def run_count_vs_neural(args: argparse.Namespace) -> int:
    from rowbook.models.ngram.experiment import counts_vs_neural, counts_vs_neural_table

    lines = [line for line in read_lines(args.corpus, errors=args.unicode_errors) if line.strip()]
    lines = lines[: args.max_lines] if args.max_lines else lines
    if args.held_out:
        train = lines
        held = [h for h in read_lines(args.held_out, errors=args.unicode_errors) if h.strip()]
    else:
        train = [line for i, line in enumerate(lines) if i % 10]
        held = lines[::10]
    if not train or not held:
        raise ValueError(
            f"the corpus gave {len(train)} training and {len(held)} held-out lines; both need "
            "at least one (give more lines, or --held-out FILE)"
        )
    settings = {"epochs": args.epochs, "dim": args.dim, "hidden": args.hidden}
    result = counts_vs_neural(
        train,
        held,
        n=args.n,
        min_count=args.min_count,
        nplm=settings | {"batch_size": args.batch_size},
        seed=args.seed,
        threads=args.threads or None,
        discount_fallback=args.discount_fallback,
    )
    if args.json:
        print_json(dataclasses.asdict(result))
    else:
        print(counts_vs_neural_table(result))
    return 0


def register(commands: Any) -> None:
    """Add ``count-vs-neural``."""
    p = add_command(
        commands,
        "count-vs-neural",
        run=run_count_vs_neural,
        help="an n-gram count model beside the NPLM: held-out perplexity, unseen n-grams",
        description="Train an n-gram count model (interpolated modified Kneser-Ney as KenLM "
        "builds it, and add-one) and an NPLM seeing the same n-1 words on the lines of CORPUS "
        "(one sentence a line, word tokens, the same vocabulary), and print held-out perplexity "
        "side by side with the share of held-out n-grams the counts never saw. Every tenth "
        "line is held out unless --held-out is given.",
        examples=[
            "rowbook count-vs-neural sentences.txt",
            "rowbook count-vs-neural sentences.txt --max-lines 20000 --epochs 5 --json",
        ],
    )
    add_corpus(p, "one sentence per line")
    add_option(p, "--held-out", "lines to score (default: every tenth)", metavar="FILE")
    add_option(p, "--max-lines", "read at most N lines", default=0, metavar="N", shown=None)
    add_option(p, "--n", "the order", default=3)
    add_option(p, "--min-count", "rarer words become <unk> in both models", default=2, metavar="N")
    for flag, default in (("--epochs", 5), ("--dim", 32), ("--hidden", 64), ("--batch-size", 512)):
        add_option(p, flag, "NPLM", default=default)
    add_seed(p, "NPLM seed")
    add_option(
        p,
        "--threads",
        "BLAS and numba threads while training, 0 for as they are",
        default=1,
        metavar="N",
        shown="1, the fastest on a busy machine",
    )
    add_option(
        p,
        "--discount-fallback",
        "Kneser-Ney discounts for an order whose estimate fails on small text, as lmplz's "
        "--discount_fallback (e.g. 0.5 1 1.5)",
        type=float,
        nargs=3,
        metavar=("D1", "D2", "D3"),
    )
    add_json(p)
    add_unicode_errors(p)
