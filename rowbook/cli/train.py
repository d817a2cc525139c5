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

word2vec and GloVe read lines lower-cased and split into words, punctuation dropped (as
gensim's ``simple_preprocess`` reads them), unless ``--keep-case`` or ``--tokenizer
whitespace``. ``--scheduler ADDRESS`` counts the corpus on Dask and trains here on the
counts (:mod:`rowbook.cli._cluster`). The options are defined in
:mod:`rowbook.cli.train_options`; a parameter the model refuses is reported with its flag
(:meth:`rowbook.checks.ParameterError.message_for`).
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rowbook.checks import ParameterError, check_int
from rowbook.cli._cluster import check_options, fit_counted
from rowbook.cli._common import STDIN, check_output_path, read_lines, show_progress, source_name
from rowbook.cli._vectorio import FORMAT_NAMES, output_format, save_vectors
from rowbook.cli.cooccur import fit_from_file, is_counted_file
from rowbook.cli.text import Normalized

__all__ = ["WORD_PATTERN", "Corpus", "cli_error", "run_nplm", "run_word_vectors", "train_tokenizer"]

#: ``--tokenizer word`` of the train commands: runs of letters and digits with inner
#: apostrophes; punctuation is dropped (gensim's ``simple_preprocess`` keeps letters only).
WORD_PATTERN = r"\w+(?:['’]\w+)*"


def train_tokenizer(name: str, *, lower: bool) -> Any:
    """The tokenizer of ``--tokenizer word|whitespace``, lower-casing first when ``lower``.

    >>> train_tokenizer("word", lower=True).tokenize("The whale, the Whale's eye.")
    ['the', 'whale', 'the', "whale's", 'eye']
    >>> train_tokenizer("whitespace", lower=False).tokenize("The whale, the Whale's eye.")
    ['The', 'whale,', 'the', "Whale's", 'eye.']
    """
    from rowbook.text import Normalizer, WordTokenizer

    tokenizer = WordTokenizer(pattern=None if name == "whitespace" else WORD_PATTERN)
    return Normalized(Normalizer(case="lower"), tokenizer) if lower else tokenizer


class Corpus:
    """The CORPUS files as sentences, read by :func:`rowbook.data.iter_sentences` (the one
    corpus reader: files, folders, ``-``, compressed), counting the lines and tokens of the
    last pass."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.sources, self.lines, self.tokens = args.corpus, 0, 0
        self.tokenizer = train_tokenizer(args.tokenizer, lower=args.lower)
        self.progress = show_progress(args.corpus, not args.quiet)
        self.errors = args.unicode_errors

    def __iter__(self) -> Iterator[Sequence[str]]:
        from rowbook.data import iter_sentences

        self.lines, self.tokens = 0, 0
        sentences = iter_sentences(
            self.sources, self.tokenizer, errors=self.errors, show_progress=self.progress
        )
        for tokens in sentences:
            self.lines, self.tokens = self.lines + 1, self.tokens + len(tokens)
            yield tokens


def cli_error(err: ParameterError, flags: dict[str, str]) -> ValueError:
    """``err`` said with the flag of its parameter (``flags``: this command's parameter -> flag);
    a parameter the command does not list (``errors``, say) is left to :func:`rowbook.cli.main`,
    which names it by :func:`~rowbook.cli._common.flag_for`.

    >>> str(cli_error(ParameterError("vector_size", 0, "an integer >= 1"), {"vector_size": "--vector-size"}))
    '--vector-size must be an integer >= 1, got 0'
    """
    return ValueError(err.message_for(flags[err.name])) if err.name in flags else err


def _check_resume(args: argparse.Namespace) -> str | None:
    """The checkpoint to resume from, or None (a missing one starts afresh, with a note)."""
    if not args.resume:
        return None
    if args.checkpoint is None:
        raise ValueError("--resume needs --checkpoint FILE, the checkpoint to continue from")
    if not Path(args.checkpoint).exists():
        if not args.quiet:
            print(
                f"{args.prog}: no checkpoint {args.checkpoint} yet; starting at epoch 1",
                file=sys.stderr,
            )
        return None
    return args.checkpoint


def _resumed(source: str | None, verb: str = "continued") -> str:
    return "" if source is None else f" ({verb} from {source})"


def _interrupted(args: argparse.Namespace) -> int:
    saved = args.checkpoint is not None and Path(args.checkpoint).exists()
    glove_counted = getattr(args, "scheduler", None) and getattr(args, "model", None) == "glove"
    if saved and (getattr(args, "init", None) or glove_counted):
        hint = (
            f"{args.checkpoint} holds the model after the last finished epoch; continue it "
            f"with --init {args.checkpoint} and the epochs still to do"
        )
    elif saved:
        hint = (
            f"{args.checkpoint} holds the last finished epoch; add --resume to the same "
            "command to continue"
        )
    elif args.checkpoint is not None:
        hint = f"nothing was saved yet: {args.checkpoint} is written at the end of the first epoch"
    else:
        hint = "nothing was saved (add --checkpoint FILE to make training resumable)"
    print(f"{args.prog}: interrupted; {hint}", file=sys.stderr)
    return 130


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The model options the user gave (the others keep the library's defaults)."""
    return {name: getattr(args, name) for name in args.flags if getattr(args, name) is not None}


def _make_model(args: argparse.Namespace, **extra: Any) -> Any:
    try:
        return args.model_class(**_given(args), **extra)
    except ParameterError as err:
        raise cli_error(err, args.flags) from None


# -- word2vec and GloVe ---------------------------------------------------------------------


def _initial_model(args: argparse.Namespace) -> Any:
    """The model of ``--init MODEL``, told to run with this command's ``--workers``."""
    from rowbook.models import load

    if args.resume:
        raise ValueError(
            "--init MODEL continues a saved model and --resume a stopped run; give one"
        )
    model = load(args.init)
    if not isinstance(model, args.model_class):
        raise ValueError(
            f"--init {args.init} holds a {type(model).__name__} model, not a "
            f"{args.model_class.__name__}; use 'rowbook train {args.model}' with a "
            f"model saved by it (--save-model)"
        )
    fixed = [args.flags[name] for name in _given(args) if name not in ("epochs", "workers")]
    if fixed:
        raise ValueError(
            f"{', '.join(fixed)}: a model continued with --init keeps its own "
            "parameters; only --epochs and --workers apply"
        )
    if args.workers is not None:
        try:
            model.workers = check_int("workers", args.workers, 1)
        except ParameterError as err:
            raise cli_error(err, args.flags) from None
    model.progress = not args.quiet
    return model


def _continue(model: Any, corpus: Any, args: argparse.Namespace) -> None:
    """``build_vocab(update=True)`` and ``train`` for ``--epochs`` (default: the model's)."""
    if STDIN in args.corpus:
        corpus = list(corpus)  # read twice below
    model.build_vocab(corpus, update=True)
    model.train(corpus, epochs=args.epochs or model.epochs, checkpoint=args.checkpoint)


def _fit_or_continue(model: Any, args: argparse.Namespace, resume: str | None) -> Corpus:
    corpus = Corpus(args)
    try:
        if is_counted_file(args):
            fit_from_file(model, args)
        elif args.scheduler:
            fit_counted(model, corpus, args, resume)
        elif args.init:
            _continue(model, corpus, args)
        else:
            spill = {"spill_dir": args.spill_dir} if args.spill_dir else {}
            model.fit(corpus, checkpoint=args.checkpoint, resume=resume, **spill)
    except ParameterError as err:
        raise cli_error(err, args.flags) from None
    except ValueError:
        if corpus.tokens == 0 and not args.scheduler and not is_counted_file(args):
            raise ValueError(
                f"{source_name(args.corpus)} is empty: {corpus.lines} lines, no words"
            ) from None
        raise
    return corpus


def run_word_vectors(args: argparse.Namespace) -> int:
    out = check_output_path(args.output)
    fasttext_bin = args.model == "fasttext" and out.suffix.lower() == ".bin"
    fmt = "fasttext" if fasttext_bin else output_format(out)
    for path in (args.checkpoint, args.save_model):
        if path is not None:
            check_output_path(path)
    if args.scheduler and not is_counted_file(args):
        check_options(args)
    if args.init and not is_counted_file(args):
        model = _initial_model(args)
    else:
        model = _make_model(args, progress=not args.quiet)
    resume, start, epochs_before = _check_resume(args), time.perf_counter(), _epochs_done(model)
    try:
        _fit_or_continue(model, args, resume)
    except KeyboardInterrupt:
        return _interrupted(args)
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
    resume = _check_resume(args)
    lm = _make_model(args, **extra)
    try:
        lm.fit(texts, checkpoint=args.checkpoint, resume=resume)
    except KeyboardInterrupt:
        return _interrupted(args)
    except ParameterError as err:
        raise cli_error(err, args.flags) from None
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
