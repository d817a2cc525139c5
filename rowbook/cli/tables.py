"""Smaller tables: ``quantize`` and ``prune``.

``quantize`` writes a quantised ``.npz`` (:meth:`rowbook.vectors.Vectors.quantize`) and
always prints what it cost: the bytes, and with ``--report`` recall@10 and the change on
the evaluation files given. ``prune`` keeps the most frequent words (and, for a fastText
model quantised with ``--keep``, the n-gram buckets they use).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rowbook.cli._common import (
    add_command,
    add_positionals,
    add_seed,
    add_vectors_reading,
    check_input_file,
    check_output_path,
)
from rowbook.cli._vectorio import FORMAT_NAMES, load_vectors, output_format, save_vectors
from rowbook.cli.options import add_option

__all__ = ["register"]


def _is_classifier(path: str) -> bool:
    """Whether ``path`` holds a text classifier: a supervised fastText file, or a rowbook
    model file of a FastTextClassifier (read by content, not by name)."""
    from rowbook.cli.classify import is_fasttext_file, is_supervised_fasttext

    if path == "-" or not Path(path).is_file():
        return False
    if is_fasttext_file(path):
        return is_supervised_fasttext(path)
    if Path(path).suffix != ".npz":
        return False
    from rowbook.models.base import read_model_file

    try:
        return read_model_file(path)["class"] == "FastTextClassifier"
    except ValueError:  # a vectors .npz, not a model file
        return False


def run_quantize_classifier(args: argparse.Namespace) -> int:
    """``fasttext quantize``: a classifier pruned (``--cutoff``), retrained, quantised."""
    from rowbook.cli.classify import open_classifier, save_classifier

    output = check_output_path(args.output)
    if args.method != "pq" or args.m is not None:
        raise ValueError(
            "a classifier is quantised as fastText quantises it: product quantisation of "
            "--dsub values (default 2) a byte; drop --method int8 / --m"
        )
    refused = [
        flag
        for flag, value in (
            ("--keep", args.keep),
            ("--rerank", args.rerank),
            ("--recall", args.recall),
        )
        if value is not None
    ]
    if refused or args.report:
        raise ValueError(f"{(refused or ['--report'])[0]} is for word vectors, not a classifier")
    if args.retrain and args.input is None:
        raise ValueError("--retrain trains the kept rows again: give the training file, --input")
    model = open_classifier(args.vectors)
    dense = Path(args.vectors).stat().st_size
    model.quantize(
        cutoff=args.cutoff,
        dsub=args.dsub or 2,
        qnorm=not args.no_qnorm,
        qout=args.qout,
        retrain=args.retrain,
        data=args.input,
        epochs=args.epochs,
        seed=args.seed,
    )
    kind = save_classifier(model, output)
    small = output.stat().st_size
    print(f"wrote {output} ({kind}): {small:,} bytes, from {dense:,}", file=sys.stderr)
    return 0


def run_quantize(args: argparse.Namespace) -> int:
    if _is_classifier(args.vectors):
        return run_quantize_classifier(args)
    classifier_only = (
        ("--cutoff", args.cutoff),
        ("--retrain", args.retrain),
        ("--qout", args.qout),
    )
    for flag, value in classifier_only:
        if value:
            raise ValueError(f"{flag} is for a text classifier; {args.vectors} holds word vectors")
    if args.rerank is not None and args.recall is not None:
        raise ValueError(
            "--rerank N fixes the re-ranked pool and --recall R measures it: give one of them"
        )
    output = check_output_path(args.output)
    if output.suffix != ".npz":
        raise ValueError(
            f"a quantised table is written as rowbook .npz; name the output "
            f"{output.with_suffix('.npz')} (got {output})"
        )
    analogies = (
        None if args.analogies is None else check_input_file(args.analogies, "analogy questions")
    )
    pairs = [check_input_file(p, "word pairs") for p in args.pairs]
    vectors, _ = load_vectors(
        args.vectors,
        unicode_errors=args.unicode_errors,
        mmap=True if args.rerank or args.recall else args.mmap,
        cache_dir=args.cache_dir,
    )
    if args.keep is not None:
        vectors = vectors.prune(args.keep)
    small = vectors.quantize(
        args.method,
        m=args.m,
        dsub=args.dsub,
        nbits=args.nbits,
        qnorm=not args.no_qnorm,
        seed=args.seed,
        rerank=args.rerank,
        recall=args.recall,
        report=args.report,
        analogies=analogies,
        pairs=pairs,
        queries=args.queries,
    )
    small.save(output)
    linked = (
        f", linked to {small.float_table.path} (re-rank {small.rerank})"
        if small.float_table
        else ""
    )
    print(f"wrote {output}{linked}", file=sys.stderr)
    return 0


def run_prune(args: argparse.Namespace) -> int:
    output_format(args.output, args.to, flag="--to")  # an unknown suffix fails before reading
    check_output_path(args.output)
    vectors, source = load_vectors(
        args.vectors, unicode_errors=args.unicode_errors, mmap=args.mmap, cache_dir=args.cache_dir
    )
    pruned = vectors.prune(args.keep)
    target = save_vectors(pruned, args.output, args.to)
    note = ""
    if source == "fasttext":
        note = " (the words' vectors; to keep n-grams, use rowbook quantize --keep)"
    print(f"wrote {args.output} ({FORMAT_NAMES[target]}){note}", file=sys.stderr)
    return 0


def register(commands: Any) -> None:
    p = add_command(
        commands,
        "quantize",
        run=run_quantize,
        help="store a table in a few bytes a row (int8 or product quantisation), cost measured",
        description="Quantise VECTORS and write them as rowbook .npz: 'pq' stores M one-byte codes "
        "(a text classifier -- a supervised fastText .bin, or a FastTextClassifier .npz -- is "
        "recognised by its content and quantised as `fasttext quantize` does, to .ftz) "
        "a row (default M: one tenth of the float32 bytes), 'int8' a byte a value and a scale a "
        "row. Prints the bytes before and after; --report measures recall@10 against the float "
        "table and the change on --analogies / --pairs files. --rerank N links the result to "
        "the float table (mapped): queries then re-score their N best candidates exactly.",
        examples=[
            "rowbook quantize vectors.bin -o small.npz --method pq --m 50 --report",
            "rowbook quantize vectors.npz -o small.npz --method int8",
            "rowbook quantize vectors.npz -o small.npz --m 30 --rerank 100",
            "rowbook quantize cc.en.300.bin -o small.npz --keep 200000 --m 60",
            "rowbook quantize model.bin -o model.ftz  # a classifier: fastText's quantize",
            "rowbook quantize model.bin -o model.ftz --cutoff 100000 --retrain --input train.txt",
        ],
    )
    add_positionals(p, VECTORS="a .npz, word2vec, GloVe or fastText file")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="FILE", help="a .npz file")
    add_option(p, "--method", default="pq", choices=("pq", "int8"))
    add_option(p, "--m", "pq: sub-spaces, one byte each", type=int, metavar="M")
    add_option(
        p, "--dsub", "pq: sub-space width instead of --m (fastText's -dsub)", type=int, metavar="D"
    )
    add_option(p, "--nbits", "pq: bits per code, 1 to 8", default=8)
    p.add_argument(
        "--no-qnorm",
        action="store_true",
        help="pq: quantise the raw rows, not their directions with the norms apart in a byte each",
    )
    add_seed(p, "k-means seed", 1234)
    add_option(p, "--keep", "prune to the N most frequent words first", type=int, metavar="N")
    add_option(
        p,
        "--rerank",
        "link to the float table (opened mapped) "
        "and re-score the N best candidates of each query exactly",
        type=int,
        metavar="N",
    )
    add_option(
        p,
        "--recall",
        "link to the float table (opened mapped) and measure how many candidates to "
        "re-score for recall@10 R (e.g. 0.95); instead of --rerank",
        type=float,
        metavar="R",
    )
    p.add_argument(
        "--report", action="store_true", help="measure recall@10 and the evaluation changes"
    )
    add_option(p, "--analogies", "with --report: a questions-words file", metavar="FILE")
    add_option(
        p,
        "--pairs",
        "with --report: word-pair files (WordSim353, SimLex-999)",
        metavar="FILE",
        nargs="+",
        default=[],
        shown=None,
    )
    add_option(
        p,
        "--queries",
        "with --report: keys whose neighbours are compared",
        default=200,
        metavar="N",
    )
    group = p.add_argument_group(
        "a text classifier (a supervised fastText .bin or a FastTextClassifier .npz)",
        "quantised as `fasttext quantize` does, written as .ftz (or .npz)",
    )
    add_option(
        group, "--cutoff", "keep the N rows of largest norm", default=0, metavar="N", shown=None
    )
    group.add_argument("--retrain", action="store_true", help="train the kept rows again")
    add_option(group, "--input", "with --retrain: the training file", metavar="TRAIN")
    add_option(group, "--epochs", "with --retrain: epochs", type=int, metavar="N")
    group.add_argument("--qout", action="store_true", help="quantise the output rows too")
    add_vectors_reading(p)

    p = add_command(
        commands,
        "prune",
        run=run_prune,
        help="keep the N most frequent words of a table",
        description="Write the N most frequent words of VECTORS (by their counts; without counts, "
        "the first N rows, which trainers sort by frequency) in the format of OUT's suffix, and "
        "print the bytes saved.",
        examples=[
            "rowbook prune vectors.bin -o top.npz --keep 200000",
            "rowbook prune vectors.npz -o top.txt --keep 50000",
        ],
    )
    add_positionals(p, "VECTORS")
    p.add_argument("-o", "--output", required=True, type=Path, metavar="OUT")
    add_option(p, "--keep", "words to keep", type=int, required=True, metavar="N")
    add_option(
        p, "--to", "format of OUT", choices=("npz", "safetensors", "text", "binary", "glove")
    )
    add_vectors_reading(p)
