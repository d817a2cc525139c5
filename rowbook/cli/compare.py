"""``rowbook compare A B``: what moved between two vectors files (:func:`rowbook.vectors.compare`).

Prints the summary (shared words, alignment error, cosine after alignment, neighbour
overlap), then the most and the least moved words, each with its nearest words in A and
in B; ``--json`` prints the same as JSON, ``--plot FILE.png`` draws the most-moved words
(:func:`rowbook.viz.compare.plot_moved`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rowbook.checks import check_int
from rowbook.cli._common import (
    add_command,
    add_json,
    add_positionals,
    add_seed,
    add_unicode_errors,
    check_output_path,
    format_table,
    print_json,
)
from rowbook.cli._vectorio import load_vectors
from rowbook.cli.options import add_option

__all__ = ["register"]


def _sample(value: str) -> int | str | None:
    """``--sample``: a number of words, ``auto`` or ``all``."""
    if value in ("auto", "all"):
        return None if value == "all" else "auto"
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of words, 'auto' or 'all', got {value!r}"
        ) from None


def _moved_rows(pairs: list[tuple[str, float]], a: Any, b: Any, n: int) -> list[dict[str, Any]]:
    return [
        {
            "word": word,
            "cosine": cos,
            "nearest_a": [k for k, _ in a.most_similar(word, topn=n)],
            "nearest_b": [k for k, _ in b.most_similar(word, topn=n)],
        }
        for word, cos in pairs
    ]


def _table(rows: list[dict[str, Any]], name_a: str, name_b: str) -> str:
    lines = [
        (i, r["word"], f"{r['cosine']:.4f}", ", ".join(r["nearest_a"]), ", ".join(r["nearest_b"]))
        for i, r in enumerate(rows, start=1)
    ]
    return format_table(
        ["rank", "word", "cosine", f"nearest in {name_a}", f"nearest in {name_b}"], lines, "rlrll"
    )


def _summary_lines(s: dict[str, Any], name_a: str, name_b: str) -> list[str]:
    k = s["k"]
    sampled = (
        "every shared word"
        if s["sampled"] == s["shared"]
        else f"a sample of {s['sampled']:,} words"
    )
    return [
        f"shared words: {s['shared']:,} ({s['only_a']:,} only in {name_a}, {s['only_b']:,} only in "
        f"{name_b}); widths {s['dims'][0]} and {s['dims'][1]}",
        f"alignment (orthogonal Procrustes): error {s['alignment_error']:.4f} "
        "(||A R - B|| / ||B||, unit rows)",
        f"cosine after alignment: mean {s['mean_cosine']:.4f}, median {s['median_cosine']:.4f}",
        f"neighbour overlap@{k}: mean {s['mean_overlap']:.4f} +- {s['overlap_stderr']:.4f} over "
        f"{sampled}; {100 * s['changed_by_half']:.1f}% of them changed at least half of their top {k}",
        f"flagged: {s['flagged']:,} words moved far more than the rest",
    ]


def run_compare(args: argparse.Namespace) -> int:
    top = check_int("top", args.top, 0)
    plot = check_output_path(args.plot) if args.plot else None
    if plot is not None and plot.suffix.lower() != ".png":
        raise ValueError(f"--plot draws a PNG picture; name it .png, not {plot.name}")
    from rowbook.vectors import compare

    a, _ = load_vectors(args.a, unicode_errors=args.unicode_errors)
    b, _ = load_vectors(args.b, unicode_errors=args.unicode_errors)
    result = compare(a, b, k=args.k, sample=args.sample, seed=args.seed)
    name_a, name_b = Path(args.a).name, Path(args.b).name
    if name_a == name_b:
        name_a, name_b = str(args.a), str(args.b)
    summary = result.summary()
    most = _moved_rows(result.most_moved(top), a, b, args.neighbors)
    least = _moved_rows(result.least_moved(top), a, b, args.neighbors)
    if plot is not None:
        from rowbook.viz.compare import plot_moved

        plot_moved(result, a, b, plot, top=max(top, 1), names=(name_a, name_b))
    if args.json:
        print_json(
            {
                "a": str(args.a),
                "b": str(args.b),
                "summary": summary,
                "most_moved": most,
                "least_moved": least,
                "flagged": result.flagged(),
            }
        )
        return 0
    print(f"{name_a} against {name_b}")
    print("\n".join(_summary_lines(summary, name_a, name_b)))
    if top:
        print(f"\nmost moved (lowest cosine after alignment):\n{_table(most, name_a, name_b)}")
        print(f"\nleast moved:\n{_table(least, name_a, name_b)}")
    if plot is not None:
        print(f"\nwrote {plot}: the {max(top, 1)} most-moved words")
    return 0


def register(commands: Any) -> None:
    p = add_command(
        commands,
        "compare",
        run=run_compare,
        help="what moved between two vectors files (two seeds, checkpoints, models)",
        description="Compare two tables on the words they share: align B's rows with A's by the "
        "best rotation (orthogonal Procrustes), then report each word's cosine after alignment "
        "(1: it did not move relative to the rest), the overlap of its nearest neighbours in "
        "the two tables, the words that moved most and least, and a summary. Past 16,384 "
        "shared words the neighbours are compared for a seeded sample of words (--sample).",
        examples=[
            "rowbook compare seed1.txt seed2.txt --top 20",
            "rowbook compare before.npz after.npz --plot moved.png",
            "rowbook compare word2vec.txt glove.txt --k 10 --sample all --json",
        ],
    )
    add_positionals(p, A="the first vectors file", B="the second vectors file")
    add_option(p, "--top", "most and least moved words to list", default=20, metavar="N")
    add_option(p, "--k", "neighbours compared per word, overlap@k", default=10)
    add_option(
        p,
        "--sample",
        "words whose neighbours are compared: a number, all, or auto (all up to "
        "16,384 shared words, a sample beyond; default: %(default)s)",
        type=_sample,
        default="auto",
        metavar="N|auto|all",
        shown=None,
    )
    add_seed(p, "seed of the sample")
    add_option(
        p, "--neighbors", "nearest words shown beside each listed word", default=3, metavar="N"
    )
    add_option(p, "--plot", "draw the most-moved words to this PNG", metavar="FILE.png")
    add_json(p, "print JSON instead of tables")
    add_unicode_errors(p)
