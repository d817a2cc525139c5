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
command decides once, before it makes or loads a model, where its counts come from and how
CORPUS is read (:func:`plan_word_vectors`): GloVe's co-occurrence file (``train glove counts.npz``, see
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
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from rowbook.checks import EmptyInputError, ParameterError, check_int
from rowbook.cli._cluster import check_options, fit_counted
from rowbook.cli._common import (
    check_output_path,
    cli_error,
    read_lines,
    source_name,
)
from rowbook.cli._vectorio import FORMAT_NAMES, output_format, save_vectors
from rowbook.cli.cooccur import check_counted_file, fit_from_file, is_counted_file
from rowbook.cli.corpus import corpus_of, corpus_spill_dir
from rowbook.cli.fitting import checked_resume, given, make_model, run_fit
from rowbook.corpus_source import CorpusSource, corpus_source

__all__ = ["WordVectorRun", "plan_word_vectors", "run_nplm", "run_word_vectors"]


def _resumed(source: str | None, verb: str = "continued") -> str:
    return "" if source is None else f" ({verb} from {source})"


# -- word2vec, GloVe, fastText --------------------------------------------------------------


@dataclass(frozen=True)
class WordVectorRun:
    """What one ``rowbook train word2vec|glove|fasttext`` does, decided once at dispatch
    (:func:`plan_word_vectors`): the table's path and format, the model to start from, how it
    is trained on its counts, and how an interrupted run goes on (``--resume``, or ``--init``
    where it cannot resume)."""

    out: Path
    fmt: str
    start: Callable[[], Any]
    train: Callable[[Any], None]
    resume: str | None
    continue_with_init: bool


def plan_word_vectors(args: argparse.Namespace) -> WordVectorRun:
    """The one decision of a word-vector command. Its outputs are checked; where its counts
    come from is chosen, with the options that do not go with that source refused: GloVe's
    co-occurrence file (no ``--init``), counting on ``--scheduler``, or a pass over CORPUS
    here (``--init`` continues a saved model on the scheduler's counts or the corpus's);
    CORPUS is read as :func:`~rowbook.cli.corpus.corpus_of` decides, once."""
    out = check_output_path(args.output)
    fasttext_bin = args.model == "fasttext" and out.suffix.lower() == ".bin"
    fmt = "fasttext" if fasttext_bin else output_format(out)
    for path in (args.checkpoint, args.save_model):
        if path is not None:
            check_output_path(path)
    counted = is_counted_file(args)
    if counted:
        check_counted_file(args)
    elif args.scheduler:
        check_options(args)
    if args.init:
        _check_init(args)
    resume = checked_resume(args)
    if args.init:
        start = partial(_initial_model, args)
    else:
        start = partial(make_model, args, progress=not args.quiet)
    glove_counted = args.model == "glove" and (counted or bool(args.scheduler))
    continue_with_init = bool(args.init) or glove_counted  # GloVe's --resume needs CORPUS
    if counted:
        return WordVectorRun(
            out, fmt, start, partial(fit_from_file, args=args), resume, continue_with_init
        )
    corpus = corpus_of(args)
    if args.scheduler:
        train = partial(fit_counted, corpus=corpus, args=args, resume=resume)
    else:
        spill = corpus_spill_dir(args, corpus)
        train = partial(_fit_corpus, corpus=corpus, spill=spill, args=args, resume=resume)
    return WordVectorRun(out, fmt, start, _named_empty(train, args), resume, continue_with_init)


def _named_empty(train: Callable[[Any], None], args: argparse.Namespace) -> Callable[[Any], None]:
    """``train``, its refusal of an empty corpus naming CORPUS as the user gave it."""

    def trained(model: Any) -> None:
        try:
            train(model)
        except EmptyInputError:
            raise ValueError(f"{source_name(args.corpus)} is empty: no words") from None

    return trained


def _fit_corpus(
    model: Any, *, corpus: CorpusSource, spill: Any, args: argparse.Namespace, resume: str | None
) -> None:
    """Fit ``model`` on ``corpus`` (``--checkpoint``, ``--resume``), or, with ``--init``,
    add the corpus's new words (``build_vocab(update=True)``) and ``train`` for ``--epochs``
    (default: the model's)."""
    if not args.init:
        model.fit(corpus, checkpoint=args.checkpoint, resume=resume, spill_dir=spill)
        return
    if corpus.reads_stdin:
        from rowbook.data.corpus import sentences_of

        corpus = corpus_source(list(sentences_of(corpus)))  # read twice below
    model.build_vocab(corpus, update=True)
    epochs = args.epochs or model.epochs
    model.train(corpus, epochs=epochs, checkpoint=args.checkpoint, spill_dir=spill)


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


def run_word_vectors(args: argparse.Namespace) -> int:
    """``rowbook train word2vec|glove|fasttext``: everything is decided first, once
    (:func:`plan_word_vectors`); then the model is made (or loaded), trained and saved."""
    run = plan_word_vectors(args)
    model = run.start()
    start, epochs_before = time.perf_counter(), _epochs_done(model)
    stopped = run_fit(args, lambda: run.train(model), continue_with_init=run.continue_with_init)
    if stopped is not None:
        return stopped
    seconds = time.perf_counter() - start
    if run.fmt == "fasttext":
        model.save_fasttext(run.out)
    else:
        save_vectors(model.vectors, run.out, run.fmt)
    if args.save_model is not None:
        model.save(args.save_model)
    if not args.quiet:
        print(_summary(model, args, run, seconds, epochs_before))
    return 0


def _epochs_done(model: Any) -> int:
    return len(model.history_) if model.is_fitted else 0


def _summary(
    model: Any, args: argparse.Namespace, run: WordVectorRun, seconds: float, epochs_before: int
) -> str:
    vectors, history = model.vectors, model.history_
    if hasattr(model, "n_records_"):  # GloVe trains on co-occurrence records
        what = f"{model.n_records_:,} co-occurrence records, final cost {history[-1].loss:.4g}"
    else:
        what = f"{history[-1].total_words:,} corpus words"
    how = _resumed(args.init, "more, on a model loaded") or _resumed(run.resume)
    saved = "" if args.save_model is None else f"; model -> {args.save_model}"
    return (
        f"{args.model}: {len(vectors)} words x {vectors.vector_size} dims from {what}, "
        f"{len(history) - epochs_before} epochs{how} in {seconds:.1f} s -> {run.out} "
        f"({FORMAT_NAMES[run.fmt]}){saved}"
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
