"""``rowbook cooccur CORPUS -o counts.npz``: GloVe's counting pass alone; ``rowbook train glove
counts.npz -o OUT`` trains on its file.

glove.c runs ``vocab_count`` and ``cooccur`` before ``glove``, each writing a file; this is
that cut for rowbook (:mod:`rowbook.data.cooccurrence_file`). Counting reads CORPUS as
``train glove`` reads it (``--tokenizer``, ``--keep-case``, ``--unicode-errors``), chooses
the vocabulary (``--min-count``, ``--max-vocab``) and counts with ``--window`` under
``--memory``, here or on Dask (``--scheduler``); training from the file gives the vectors
``train glove CORPUS`` gives with the same options.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from rowbook.checks import ParameterError
from rowbook.cli._common import (
    add_command,
    add_corpus,
    add_scheduler,
    add_unicode_errors,
    check_output_path,
    cli_error,
)
from rowbook.cli.corpus import add_spill_options, corpus_of, corpus_spill_dir, fit_counted_matrix
from rowbook.cli.options import add_option

__all__ = [
    "COUNTING",
    "check_counted_file",
    "fit_from_file",
    "is_counted_file",
    "register",
    "run_cooccur",
]

#: The GloVe options that act on counting: ``cooccur`` takes them (and ``--memory``), training
#: from a file refuses them.
COUNTING = ("window", "min_count", "max_vocab")


def register(commands: Any, *, options: bool = True) -> None:
    """Add ``rowbook cooccur``; with ``options=False``, its help alone: its options are read
    from GloVe's signature, and importing GloVe (SciPy) costs a command that does not count."""
    p = add_command(
        commands,
        "cooccur",
        run=run_cooccur,
        help="count GloVe's co-occurrences in a corpus and save them, to train on later",
        description="Read CORPUS as 'train glove' reads it, choose the vocabulary and count the "
        "co-occurrences within --window (under --memory, or on Dask with --scheduler), and write "
        "them to OUT (.npz). 'rowbook train glove OUT -o VECTORS' then trains on the file: the "
        "vectors are those 'train glove CORPUS' gives with the same options.",
        examples=[
            "rowbook cooccur corpus.txt -o counts.npz --window 15 --min-count 5 --memory 4",
            "rowbook train glove counts.npz -o glove.txt --vector-size 50 --epochs 25",
            "rowbook cooccur shards/ -o counts.npz --scheduler tcp://scheduler:8786",
        ],
    )
    p.allow_abbrev = False
    if options:
        _add_options(p)


def _add_options(p: argparse.ArgumentParser) -> None:
    from rowbook.cli.options import model_options
    from rowbook.models import GloVe

    add_corpus(p)
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="the co-occurrence file (.npz)"
    )
    add_unicode_errors(p)
    add_option(
        p, "--tokenizer", "as in 'train glove'", default="word", choices=("word", "whitespace")
    )
    p.add_argument(
        "--keep-case",
        dest="lower",
        action="store_false",
        help="keep upper case (default: lower-case the text first)",
    )
    add_spill_options(
        p,
        "keep the corpus's word ids in a temporary file in DIR while counting (default: "
        "there when the files' ids would take more than 1/256 of the available memory, in "
        "the system's temporary folder); with --memory, also the counting runs",
    )
    add_scheduler(p, "The file is written here.")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    options = model_options(GloVe)
    group = p.add_argument_group("counting")
    for name in (*COUNTING, "memory"):
        flag, kwargs = options[name]
        group.add_argument(flag, **kwargs)
    p.set_defaults(
        flags={name: options[name][0] for name in (*COUNTING, "memory")},
        model_class=GloVe,
        model="glove",
        init=None,
        resume=False,
    )


def run_cooccur(args: argparse.Namespace) -> int:
    from rowbook.cli._cluster import check_options, count_glove
    from rowbook.data.cooccurrence_file import save_cooccurrence

    out = check_output_path(args.output)
    if out.suffix.lower() != ".npz":
        raise ValueError(f"-o {out}: a co-occurrence file is a .npz; name it {out.stem}.npz")
    try:
        model = args.model_class(
            **{n: getattr(args, n) for n in COUNTING if getattr(args, n) is not None}
        )
    except ParameterError as err:
        raise cli_error(err, args.flags) from None
    start, corpus = time.perf_counter(), corpus_of(args)
    try:
        if args.scheduler:
            check_options(args)
            if args.memory is not None:
                raise ValueError(
                    "--memory does not go with 'cooccur --scheduler': each file is "
                    "counted in a worker's memory (split large files to bound it); drop it"
                )
            counted = count_glove(model, corpus, args)
        else:
            counted = model.cooccurrence(corpus, spill_dir=corpus_spill_dir(args, corpus))
    except ParameterError as err:
        raise cli_error(err, args.flags) from None
    save_cooccurrence(
        out,
        counted.matrix,
        counted.keys,
        counted.counts,
        window=counted.window,
        symmetric=counted.symmetric,
        weighted=counted.weighted,
    )
    if not args.quiet:
        print(
            f"cooccur: {len(counted.keys):,} words, {counted.matrix.nnz:,} non-zero counts "
            f"(window {counted.window}) in {time.perf_counter() - start:.1f} s -> {out}"
        )
    return 0


def is_counted_file(args: argparse.Namespace) -> bool:
    """Whether ``train glove``'s CORPUS is one co-occurrence file (a ``.npz``) to train on."""
    return (
        args.model == "glove"
        and len(args.corpus) == 1
        and str(args.corpus[0]).lower().endswith(".npz")
    )


def check_counted_file(args: argparse.Namespace) -> None:
    """Refuse, for ``train glove counts.npz``, the counting options (the file has applied
    them already) and the options of a pass over a corpus."""
    given = [args.flags[name] for name in COUNTING if getattr(args, name, None) is not None]
    given += [
        flag
        for flag, dest in (("--init", "init"), ("--resume", "resume"), ("--scheduler", "scheduler"))
        if getattr(args, dest, None)
    ]
    if given:
        raise ValueError(
            f"{given[0]} does not go with a co-occurrence file ({args.corpus[0]}): "
            "the file is counted already; give it to 'rowbook cooccur' instead, or "
            "train on the corpus"
        )


def fit_from_file(model: Any, args: argparse.Namespace) -> None:
    """``train glove counts.npz``: fit on the file's matrix (``--memory`` and ``--spill-dir``
    bound its shuffle and training), its options checked by :func:`check_counted_file`."""
    from rowbook.data.cooccurrence_file import load_cooccurrence

    counted = load_cooccurrence(args.corpus[0])
    model.window, model.symmetric = counted.window, counted.symmetric  # how the file was counted
    model.distance_weighting = counted.weighted
    fit_counted_matrix(model, counted, args)
