"""fastText's supervised commands: ``train classifier``, ``predict``, ``test`` (and a classifier's
``quantize``, in :mod:`rowbook.cli.tables`).

A classifier file is fastText's ``.bin`` / ``.ftz`` (recognised by its first bytes, whatever
its name: the ``fasttext`` package and ``fasttext predict`` open what these commands
write) or rowbook's model file (``.npz``, :meth:`rowbook.models.Model.save`, which also
keeps the training progress for ``--resume``). Training and test files are fastText's:
one text a line, its labels (``__label__name``, or ``--label-prefix``) anywhere on it.
``predict`` and ``test`` print what ``fasttext predict`` / ``predict-prob`` / ``test`` /
``test-label`` print, so scripts written for one read the other.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from rowbook.cli._common import (
    STDIN,
    add_command,
    add_positionals,
    add_training_run,
    add_unicode_errors,
    check_input_file,
    check_output_path,
)
from rowbook.cli.fitting import checked_resume, make_model, run_fit
from rowbook.cli.options import add_model_options, add_option

__all__ = ["add_train_classifier", "is_fasttext_file", "open_classifier", "register"]

_FASTTEXT_MAGIC = (793712314).to_bytes(4, "little")


def is_fasttext_file(path: str | Path) -> bool:
    """Whether ``path`` starts with fastText's magic number (a ``.bin`` or ``.ftz``)."""
    with open(path, "rb") as f:
        return f.read(4) == _FASTTEXT_MAGIC


def is_supervised_fasttext(path: str | Path) -> bool:
    """Whether ``path`` is a fastText model file of a supervised model (``args.model`` 3)."""
    with open(path, "rb") as f:
        head = f.read(8 + 4 * 8)
    return head[:4] == _FASTTEXT_MAGIC and int.from_bytes(head[36:40], "little") == 3


def open_classifier(path: str | Path, label_prefix: str | None = None) -> Any:
    """The classifier in ``path``: a fastText file (by content) or a rowbook model file."""
    from rowbook.models import FastTextClassifier, load

    path = check_input_file(path, "model")
    if is_fasttext_file(path):
        if not is_supervised_fasttext(path):
            raise ValueError(
                f"{path} is a fastText word-vector model, not a classifier; "
                "`rowbook neighbors` and the other query commands read it"
            )
        return FastTextClassifier.load_fasttext(path, label_prefix=label_prefix or "__label__")
    model = load(path)
    if not isinstance(model, FastTextClassifier):
        raise ValueError(f"{path} holds a {type(model).__name__}, not a FastTextClassifier")
    return model


def save_classifier(model: Any, path: Path) -> str:
    """Write ``model`` where ``path``'s suffix says: ``.npz`` rowbook's, else fastText's."""
    if path.suffix == ".npz":
        model.save(path)
        return "rowbook model"
    model.save_fasttext(path)
    return "fastText .ftz" if model.is_quantized else "fastText .bin"


# -- train classifier -------------------------------------------------------------------------


def run_train_classifier(args: argparse.Namespace) -> int:
    from rowbook.models import FastTextClassifier

    output = check_output_path(args.output)
    model = make_model(args, FastTextClassifier, progress=not args.quiet)
    resume = checked_resume(args)
    data = args.train if len(args.train) > 1 else args.train[0]
    if data == STDIN:
        raise ValueError("training reads its file several times; give a file, not '-'")
    fit: dict[str, Any] = {"checkpoint": args.checkpoint, "errors": args.unicode_errors}
    if resume is not None:
        fit["resume"] = resume
    if args.valid is not None:
        fit.update(validation=check_input_file(args.valid, "validation file"))
        fit.update(autotune_seconds=args.autotune, autotune_metric=args.autotune_metric)
    elif args.autotune is not None:
        raise ValueError("--autotune searches against a validation file: add --valid FILE")
    stopped = run_fit(args, lambda: model.fit(data, **fit))
    if stopped is not None:
        return stopped
    kind = save_classifier(model, output)
    if not args.quiet:
        if model.autotune_ is not None:
            record = model.autotune_
            best = ", ".join(f"{k}={v}" for k, v in record["best_params"].items())
            score = f"{args.autotune_metric} {record['best_score']:.4f}"
            print(f"autotune: best {score} with {best}", file=sys.stderr)
        print(
            f"wrote {output} ({kind}): {len(model.index_to_key_):,} words, "
            f"{len(model.labels_):,} labels",
            file=sys.stderr,
        )
    return 0


def add_train_classifier(models: Any, help_text: str) -> None:
    """``rowbook train classifier`` (registered by :mod:`rowbook.cli.train_options`)."""
    from rowbook.models import FastTextClassifier

    p = add_command(
        models,
        "classifier",
        run=run_train_classifier,
        help=help_text,
        description="Train fastText's supervised classifier on TRAIN (one text a line, its labels "
        "__label__name on it) and write OUT: .bin is fastText's model file (the fasttext package "
        "and `fasttext predict` open it), .npz rowbook's model file. With --valid, search the "
        "parameters for --autotune seconds first (fastText's autotune).",
        examples=[
            "rowbook train classifier train.txt -o model.bin",
            "rowbook train classifier train.txt -o model.bin --word-ngrams 2 --epochs 25 --lr 1.0",
            "rowbook train classifier train.txt -o model.bin --loss ova  # several labels a text",
            "rowbook train classifier train.txt -o model.bin --valid valid.txt --autotune 300",
            "rowbook train classifier train.txt -o m.npz --checkpoint m.ckpt.npz --resume",
        ],
    )
    p.allow_abbrev = False
    p.add_argument("train", metavar="TRAIN", nargs="+", help="fastText training files or folders")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help=".bin or .npz")
    add_option(p, "--valid", "validation file: search the parameters on it", metavar="FILE")
    add_option(
        p,
        "--autotune",
        "with --valid: seconds of parameter search (default: 300)",
        type=int,
        metavar="SECONDS",
    )
    add_option(
        p,
        "--autotune-metric",
        "f1, f1:LABEL, precisionAtRecall:R[:LABEL] or recallAtPrecision:P[:LABEL]",
        default="f1",
        metavar="METRIC",
    )
    add_unicode_errors(p)
    add_training_run(p)
    add_model_options(p, FastTextClassifier)


# -- predict, test ----------------------------------------------------------------------------


def _check_k(k: int) -> int:
    if k == 0 or k < -1:
        raise ValueError(f"--k must be an integer >= 1 (or -1 for every label), got {k}")
    return k


def run_predict(args: argparse.Namespace) -> int:
    k = _check_k(args.k)
    model = open_classifier(args.model, args.label_prefix)
    out = sys.stdout
    source = args.input if args.input == STDIN else check_input_file(args.input, "input")
    from rowbook.data.labelled import line_batches

    for lines in line_batches(source, args.unicode_errors):  # a long line stays one line
        labels, probs = model.predict(lines, k=k, threshold=args.threshold)
        for names, values in zip(labels, probs, strict=True):
            if args.probs:
                out.write(" ".join(f"{n} {v:.6g}" for n, v in zip(names, values, strict=True)))
            else:
                out.write(" ".join(names))
            out.write("\n")
        out.flush()
    return 0


def _metric(value: float) -> str:
    return f"{value:.6f}" if math.isfinite(value) else "--------"


def run_test(args: argparse.Namespace) -> int:
    k = _check_k(args.k)
    model = open_classifier(args.model, args.label_prefix)
    source = args.input if args.input == STDIN else check_input_file(args.input, "test file")
    from rowbook.data.labelled import read_labelled

    # read once: standard input cannot be read again for --per-label and --confusion
    source = read_labelled(source, label_prefix=model.label_prefix, errors=args.unicode_errors)
    if args.per_label:
        for label, m in model.test_label(source, k=k, threshold=args.threshold).items():
            print(
                f"F1-Score : {_metric(m['f1score'])}  Precision : {_metric(m['precision'])}  "
                f"Recall : {_metric(m['recall'])}   {label}"
            )
    n, precision, recall = model.test(source, k=k, threshold=args.threshold)
    print(f"N\t{n}\nP@{k}\t{precision:.3g}\nR@{k}\t{recall:.3g}")
    if args.confusion:
        print(model.confusion(source))
    return 0


def _model_and_input(p: argparse.ArgumentParser, what: str) -> None:
    add_positionals(p, MODEL="a classifier: fastText .bin / .ftz, or .npz")
    p.add_argument("input", metavar=what, help="a file of lines, or '-' for standard input")
    add_option(p, "--k", "labels per line, -1 for all", default=1)
    add_option(p, "--threshold", "least probability shown", default=0.0)
    add_option(
        p,
        "--label-prefix",
        "what labels start with, for a fastText file (default: __label__)",
        metavar="PREFIX",
    )
    add_unicode_errors(p)


def register(commands: Any) -> None:
    p = add_command(
        commands,
        "predict",
        run=run_predict,
        help="the most probable labels of each line, by a trained classifier",
        description="Print the --k most probable labels of each line of INPUT (at least "
        "--threshold probable), best first, one line of output per line, as `fasttext predict` "
        "does; --probs follows each label with its probability (`fasttext predict-prob`).",
        examples=[
            "rowbook predict model.bin test.txt",
            "rowbook predict model.bin test.txt --k 3 --probs",
            "echo 'which baking dish is best' | rowbook predict model.ftz - --k 2 --threshold 0.5",
        ],
    )
    _model_and_input(p, "INPUT")
    p.add_argument("--probs", action="store_true", help="print each label's probability after it")

    p = add_command(
        commands,
        "test",
        run=run_test,
        help="precision@k and recall@k of a classifier on a labelled file",
        description="Score a classifier on the labelled lines of TEST as `fasttext test` does: N "
        "(the lines with a label), precision@k and recall@k; --per-label adds each label's F1, "
        "precision and recall (`fasttext test-label`), --confusion the table of gold against "
        "predicted labels.",
        examples=[
            "rowbook test model.bin test.txt",
            "rowbook test model.bin test.txt --k 5",
            "rowbook test model.ftz test.txt --per-label --confusion",
        ],
    )
    _model_and_input(p, "TEST")
    p.add_argument("--per-label", action="store_true", help="each label's F1, precision, recall")
    p.add_argument("--confusion", action="store_true", help="gold against predicted, as a table")
