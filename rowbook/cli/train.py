"""``rowbook train word2vec|glove|fasttext|nplm CORPUS -o OUT``: fit a model, write its table.

Two files, two options: ``-o OUT`` is always the table (word vectors, or the language
model's input table ``C``), in the format its suffix names (``.npz``, ``.txt``/``.vec``,
``.bin``; for fasttext, ``.bin`` is Facebook fastText's model file, which keeps the
n-grams), for the query commands and other tools; ``--save-model FILE`` also keeps the
whole model (``model.save``: parameters, tables, training progress), which ``rowbook.load``
opens and ``--init FILE`` continues: the corpus's new words are added
(``build_vocab(update=True)``) and ``--epochs`` more epochs run (``train``, its own
learning-rate schedule). ``--checkpoint FILE`` saves the model there after every epoch
(atomically), and ``--resume`` continues a ``fit`` from it, so an interrupted run (Ctrl-C:
exit status 130) loses at most the epoch in progress. ``train nplm`` holds out
``--val-fraction`` of the lines and reports training and held-out perplexity apart.

word2vec, GloVe and fastText read CORPUS as :mod:`rowbook.cli.corpus` says. A word-vector
command decides once, before it makes or loads a model, where its counts come from
(:func:`counts_source`): GloVe's co-occurrence file (``train glove counts.npz``, see
:mod:`rowbook.cli.cooccur`), counting on Dask (``--scheduler ADDRESS``, see
:mod:`rowbook.cli._cluster`; the epochs run here), or a pass over CORPUS here; the options
that do not go with that source are refused then, in one line. The parsers are in
:mod:`rowbook.cli.train_options`; a parameter the model refuses is reported with its flag
(:meth:`rowbook.checks.ParameterError.message_for`).
"""

from __future__ import annotations

import argparse
import inspect
import time
from pathlib import Path
from typing import Any

from rowbook.checks import ParameterError, check_int
from rowbook.cli._cluster import check_options, fit_counted
from rowbook.cli._common import (
    STDIN,
    check_output_path,
    cli_error,
    read_lines,
    source_name,
)
from rowbook.cli._vectorio import FORMAT_NAMES, output_format, save_vectors
from rowbook.cli.cooccur import check_counted_file, fit_from_file, is_counted_file
from rowbook.cli.corpus import Corpus, corpus_spill_dir
from rowbook.cli.fitting import checked_resume, given, make_model, run_fit

__all__ = [
    "CORPUS",
    "COUNTS_FILE",
    "SCHEDULER",
    "counts_source",
    "run_nplm",
    "run_word_vectors",
]


def _resumed(source: str | None, verb: str = "continued") -> str:
    return "" if source is None else f" ({verb} from {source})"


# -- word2vec, GloVe, fastText --------------------------------------------------------------

#: Where a word-vector command's counts come from (:func:`counts_source`): GloVe's
#: co-occurrence file, counting on ``--scheduler``, or a pass over CORPUS on this machine.
COUNTS_FILE, SCHEDULER, CORPUS = "counts file", "scheduler", "corpus"


def counts_source(args: argparse.Namespace) -> str:
    """The one decision of a word-vector command: where its counts come from, with the
    options that do not go with that source refused (``--init`` continues a saved model on
    the scheduler's counts or the corpus's; a counts file refuses it)."""
    if is_counted_file(args):
        check_counted_file(args)
        return COUNTS_FILE
    if args.scheduler:
        check_options(args)
        return SCHEDULER
    return CORPUS


def _check_init(args: argparse.Namespace) -> None:
    """``--init MODEL`` continues a saved model: only ``--epochs`` and ``--workers`` apply."""
    if args.resume:
        raise ValueError(
            "--init MODEL continues a saved model and --resume a stopped run; give one"
        )
    fixed = [args.flags[name] for name in given(args) if name not in ("epochs", "workers")]
    if fixed:
        raise ValueError(
            f"{', '.join(fixed)}: a model continued with --init keeps its own "
            "parameters; only --epochs and --workers apply"
        )
    if args.workers is not None:
        try:
            check_int("workers", args.workers, 1)
        except ParameterError as err:
            raise cli_error(err, args.flags) from None


def _initial_model(args: argparse.Namespace) -> Any:
    """The model of ``--init MODEL`` (checked by :func:`_check_init`), told to run with this
    command's ``--workers``."""
    from rowbook.models import load

    model = load(args.init)
    if not isinstance(model, args.model_class):
        raise ValueError(
            f"--init {args.init} holds a {type(model).__name__} model, not a "
            f"{args.model_class.__name__}; use 'rowbook train {args.model}' with a "
            f"model saved by it (--save-model)"
        )
    if args.workers is not None:
        model.workers = args.workers
    model.progress = not args.quiet
    return model


def _continue(model: Any, corpus: Any, args: argparse.Namespace) -> None:
    """``build_vocab(update=True)`` and ``train`` for ``--epochs`` (default: the model's)."""
    if STDIN in args.corpus:
        corpus = list(corpus)  # read twice below
    model.build_vocab(corpus, update=True)
    model.train(
        corpus,
        epochs=args.epochs or model.epochs,
        checkpoint=args.checkpoint,
        spill_dir=corpus_spill_dir(args),
    )


def _train(model: Any, source: str, args: argparse.Namespace, resume: str | None) -> None:
    """Fit ``model``, or continue it (``--init``), on the counts of ``source``."""
    if source == COUNTS_FILE:
        fit_from_file(model, args)
        return
    corpus = Corpus(args)
    try:
        if source == SCHEDULER:
            fit_counted(model, corpus, args, resume)
        elif args.init:
            _continue(model, corpus, args)
        else:
            spill = corpus_spill_dir(args)
            model.fit(corpus, checkpoint=args.checkpoint, resume=resume, spill_dir=spill)
    except ValueError as err:
        if source == CORPUS and corpus.tokens == 0 and not isinstance(err, ParameterError):
            raise ValueError(
                f"{source_name(args.corpus)} is empty: {corpus.lines} lines, no words"
            ) from None
        raise


def run_word_vectors(args: argparse.Namespace) -> int:
    """``rowbook train word2vec|glove|fasttext``: the outputs and every option are checked
    and the path is chosen here, once; then the model is made (or loaded), trained and saved."""
    out = check_output_path(args.output)
    fasttext_bin = args.model == "fasttext" and out.suffix.lower() == ".bin"
    fmt = "fasttext" if fasttext_bin else output_format(out)
    for path in (args.checkpoint, args.save_model):
        if path is not None:
            check_output_path(path)
    source = counts_source(args)
    if args.init:
        _check_init(args)
    resume = checked_resume(args)
    model = _initial_model(args) if args.init else make_model(args, progress=not args.quiet)
    start, epochs_before = time.perf_counter(), _epochs_done(model)
    glove_counted = args.model == "glove" and source != CORPUS  # GloVe's --resume needs CORPUS
    stopped = run_fit(
        args,
        lambda: _train(model, source, args, resume),
        continue_with_init=bool(args.init) or glove_counted,
    )
    if stopped is not None:
        return stopped
    seconds = time.perf_counter() - start
    if fasttext_bin:
        model.save_fasttext(out)
    else:
        save_vectors(model.vectors, out, fmt)
    if args.save_model is not None:
        model.save(args.save_model)
    if not args.quiet:
        print(_summary(model, args, out, fmt, seconds, epochs_before, resume))
    return 0


def _epochs_done(model: Any) -> int:
    return len(model.history_) if model.is_fitted else 0


def _summary(
    model: Any,
    args: argparse.Namespace,
    out: Path,
    fmt: str,
    seconds: float,
    epochs_before: int,
    resume: str | None,
) -> str:
    vectors, history = model.vectors, model.history_
    if hasattr(model, "n_records_"):  # GloVe trains on co-occurrence records
        what = f"{model.n_records_:,} co-occurrence records, final cost {history[-1].loss:.4g}"
    else:
        what = f"{history[-1].total_words:,} corpus words"
    how = _resumed(args.init, "more, on a model loaded") or _resumed(resume)
    saved = "" if args.save_model is None else f"; model -> {args.save_model}"
    return (
        f"{args.model}: {len(vectors)} words x {vectors.vector_size} dims from {what}, "
        f"{len(history) - epochs_before} epochs{how} in {seconds:.1f} s -> {out} "
        f"({FORMAT_NAMES[fmt]}){saved}"
    )


# -- the neural language model --------------------------------------------------------------


def run_nplm(args: argparse.Namespace) -> int:
    from rowbook.text import Normalizer

    out = check_output_path(args.output)
    if args.checkpoint is not None:
        check_output_path(args.checkpoint)
    fmt = output_format(out)
    init = inspect.signature(args.model_class.__init__).parameters
    level = args.level or init["level"].default
    if level != "word" and fmt != "npz":
        raise ValueError(
            f"a character table has keys such as ' ' that {FORMAT_NAMES[fmt]} cannot "
            f"hold; name the output {out.with_suffix('.npz')}"
        )
    texts = [line for line in read_lines(args.corpus, errors=args.unicode_errors) if line.strip()]
    if not texts:
        raise ValueError(f"{source_name(args.corpus)} is empty: it has no non-blank line")
    extra = {
        "normalizer": Normalizer(case="lower") if args.lower else None,
        "progress": not args.quiet,
    }
    resume = checked_resume(args)
    lm = make_model(args, **extra)
    stopped = run_fit(args, lambda: lm.fit(texts, checkpoint=args.checkpoint, resume=resume))
    if stopped is not None:
        return stopped
    save_vectors(lm.vectors, out, fmt)
    if not args.quiet and lm.history_.epochs:
        print(_nplm_summary(lm, out, fmt, resume))
    if args.sample_length:
        if not args.quiet:
            print(f"sample (temperature {args.temperature}, seed {lm.seed}):")
        print(
            lm.sample(
                args.sample_length, prompt=args.prompt, temperature=args.temperature, seed=lm.seed
            )
        )
    return 0


def _nplm_summary(lm: Any, out: Path, fmt: str, resume: str | None) -> str:
    """The closing line: training perplexity, and held-out perplexity when texts were held out."""
    history = lm.history_
    last = history.epochs[-1]
    held_out = (
        f", held-out loss {last['val_loss']:.4f}, perplexity {last['val_perplexity']:.3f}"
        if "val_loss" in last
        else " (nothing held out: --val-fraction 0 or too few lines)"
    )
    return (
        f"nplm: {lm.level} level, {len(lm.vocab_)} tokens, context {lm.context}, "
        f"{len(history.epochs)} epochs{_resumed(resume)}: training loss {last['loss']:.4f}, "
        f"perplexity {last['perplexity']:.3f}{held_out} -> {out} ({FORMAT_NAMES[fmt]}, the table C)"
    )
