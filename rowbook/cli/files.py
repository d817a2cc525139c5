"""``rowbook plot`` (PNG or HTML pictures of a vectors file) and ``rowbook convert``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from rowbook.checks import check_int
from rowbook.cli._common import (
    add_command,
    add_positionals,
    add_seed,
    add_unicode_errors,
    check_output_path,
    check_words,
)
from rowbook.cli._vectorio import FORMAT_NAMES, FORMATS, load_vectors, save_vectors
from rowbook.cli.options import add_option

__all__ = ["register"]


def run_plot(args: argparse.Namespace) -> int:
    out = check_output_path(args.output)
    kind = out.suffix.lower()
    if kind not in (".png", ".html"):
        raise ValueError(
            f"cannot tell what to draw from {out}: name it .png (a picture) or "
            ".html (an interactive view)"
        )
    dims = args.dims or (2 if kind == ".png" else 3)
    if kind == ".png" and dims != 2 and not args.heatmap:
        raise ValueError(
            f"a PNG scatter is 2-D; use --dims 2, or write {out.with_suffix('.html')} "
            "for a 3-D view you can rotate"
        )
    if args.heatmap and kind != ".png":
        raise ValueError("--heatmap draws a PNG; name the output .png")
    vectors, _ = load_vectors(args.vectors, unicode_errors=args.unicode_errors)
    words = args.words or list(vectors.index_to_key[: check_int("top", args.top, 1)])
    check_words(vectors, words, args.vectors)
    if len(words) < dims and not args.heatmap:
        raise ValueError(f"a {dims}-D projection needs at least {dims} words, got {len(words)}")
    from rowbook import viz

    if args.heatmap:
        title = {"title": args.title} if args.title is not None else {}
        viz.plot_similarity(vectors, out, words=words, **title)
    else:
        drawn = {
            "words": words,
            "method": args.method,
            "seed": args.seed,
            "show_labels": args.labels,
            "title": args.title,
            "subject": f"{Path(args.vectors).name}, {_selection(vectors, args, words)}",
        }
        if kind == ".png":
            viz.plot_scatter(vectors, out, **drawn)
        else:
            viz.write_html(vectors, out, dims=dims, **drawn)
    method = "PCA" if args.method == "pca" else "t-SNE"
    what = "cosine heatmap" if args.heatmap else f"{dims}-D {method} view"
    print(f"wrote {out}: {what} of {len(words)} words")
    return 0


def _selection(vectors: Any, args: argparse.Namespace, words: list[str]) -> str:
    """Which words are drawn, for the title: chosen, the most frequent, or the first."""
    if args.words:
        return f"{len(words)} chosen words"
    counts = vectors.counts
    if counts is not None and bool(np.all(np.diff(counts[: len(words)]) <= 0)):
        return f"{len(words)} most frequent words"
    return f"the first {len(words)} words of the file"


def run_convert(args: argparse.Namespace) -> int:
    if args.output is not None and args.out is not None and args.output != args.out:
        raise ValueError(
            f"convert writes one file: got OUT {args.output} and -o {args.out}; give one of them"
        )
    args.output = args.out if args.output is None else args.output
    if args.output is None:
        raise ValueError("convert needs the file to write: rowbook convert IN -o OUT")
    if args.to is None:
        from rowbook.cli._vectorio import output_format

        output_format(
            args.output, flag="--to"
        )  # fail on an unknown suffix before reading a big file
    check_output_path(args.output)
    vectors, source = load_vectors(args.input, args.from_, unicode_errors=args.unicode_errors)
    target = save_vectors(vectors, args.output, args.to)
    print(
        f"read {len(vectors)} vectors x {vectors.vector_size} dims from {args.input} "
        f"({FORMAT_NAMES[source]}); wrote {args.output} ({FORMAT_NAMES[target]})"
    )
    return 0


def register(commands: Any) -> None:
    p = add_command(
        commands,
        "plot",
        run=run_plot,
        help="draw words of a vectors file (PNG scatter or heatmap, interactive HTML)",
        description="Project the vectors of the chosen words to 2-D or 3-D and draw them: a "
        "labelled scatter (.png), a cosine-similarity heatmap (.png with --heatmap), or a "
        "self-contained page to rotate, zoom and hover (.html, opens in any browser).",
        examples=[
            "rowbook plot vectors.txt --words king queen man woman boy girl -o people.png",
            "rowbook plot vectors.txt --top 100 -o space.html",
            "rowbook plot vectors.npz --words red green blue cyan --heatmap -o cos.png",
            "rowbook plot vectors.txt --top 200 --method tsne --dims 2 -o tsne.html  "
            "# needs scikit-learn",
        ],
    )
    add_positionals(p, "VECTORS")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help=".png or .html")
    add_option(
        p, "--words", "the words to draw (default: the --top N first)", nargs="+", metavar="WORD"
    )
    add_option(
        p, "--top", "without --words, draw the first N words of the file", default=50, metavar="N"
    )
    add_option(p, "--method", "projection", default="pca", choices=("pca", "tsne"))
    add_option(p, "--dims", "axes (default: 2 for .png, 3 for .html)", type=int, choices=(2, 3))
    p.add_argument(
        "--heatmap", action="store_true", help="draw the cosine-similarity matrix instead"
    )
    add_option(
        p,
        "--labels",
        "auto: every label with room beside its point, saying how many are hidden; "
        "all: every label; none (default: %(default)s; the HTML page has a menu too)",
        choices=("auto", "all", "none"),
        default="auto",
        shown=None,
    )
    add_option(p, "--title", "picture title (default: what is drawn and how)")
    add_seed(p, "t-SNE seed")
    add_unicode_errors(p)

    p = add_command(
        commands,
        "convert",
        run=run_convert,
        help="convert vectors between .npz, word2vec text/binary and GloVe text",
        description="Read vectors in one format and write them in another. Formats: npz "
        "(rowbook), safetensors, text (word2vec text, .txt/.vec), binary (word2vec, .bin), "
        "glove (text rows without the header line). The input format is recognised from its "
        "content; the output's from its suffix, unless --from / --to say otherwise. OUT is "
        "given with -o, as in the other commands, or after IN.",
        examples=[
            "rowbook convert vectors.bin -o vectors.txt",
            "rowbook convert glove.6B.50d.txt glove50.npz",
            "rowbook convert vectors.npz -o vectors.txt --to glove",
        ],
    )
    p.add_argument("input", metavar="IN", help="the vectors file to read")
    p.add_argument(
        "output", metavar="OUT", type=Path, nargs="?", help="the file to write (or -o OUT)"
    )
    p.add_argument("-o", "--output", dest="out", metavar="OUT", type=Path, help="the file to write")
    add_option(p, "--from", "format of IN", dest="from_", choices=FORMATS)
    add_option(p, "--to", "format of OUT", choices=FORMATS)
    add_unicode_errors(p)
