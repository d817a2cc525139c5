"""The options of the ``rowbook`` commands: :func:`add_option` for a command's own, and the
model options, one table read against each model's signature.

:func:`add_option` adds an option that takes a value: its type read from its default, and
the default shown at the end of its help, written once here for every command.

:data:`OPTIONS` maps a model parameter to its metavar and help; its flag is
:func:`flag_for` it (``--min-count`` for ``min_count``, the exceptions in :data:`FLAGS`,
which also name a refused parameter in an error message). A parameter becomes
an option of a command when the model's ``__init__`` has it (:func:`model_options`), with
its type (choices for a ``Literal``, a switch for a ``bool``) and the default shown in
``--help`` read from the signature, so neither can drift. An option left out is not
passed, and the library's default applies. ``rowbook train`` (:mod:`rowbook.cli.train_options`)
and ``rowbook cooccur`` (:mod:`rowbook.cli.cooccur`) build their parsers from it.
"""

from __future__ import annotations

import argparse
import inspect
import types
import typing
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, Literal, NamedTuple

__all__ = [
    "FLAGS",
    "MODEL_HELP",
    "NONE_MEANS",
    "OPTIONS",
    "Option",
    "add_model_options",
    "add_option",
    "flag_for",
    "model_options",
    "with_default",
]


#: Library parameter -> command-line flag, where they differ by more than ``_`` -> ``-``.
FLAGS = {
    "hierarchical_softmax": "--hs",
    "errors": "--unicode-errors",
    "n_layers": "--layers",
    "n_heads": "--heads",
    "n_kv_heads": "--kv-heads",
    "tie_embeddings": "--untied",
}


def flag_for(name: str, options: Collection[str] | None = None) -> str | None:
    """The command-line flag of a library parameter; with ``options`` (a command's option
    strings), the one that command has, or None if it has neither spelling.

    >>> flag_for("vector_size"), flag_for("n_layers"), flag_for("min_count", ["--min-count"])
    ('--vector-size', '--layers', '--min-count')
    """
    spellings = [FLAGS[name]] if name in FLAGS else []
    spellings.append("--" + name.replace("_", "-"))
    if options is None:
        return spellings[0]
    return next((flag for flag in spellings if flag in options), None)


def with_default(text: str, shown: object = "%(default)s") -> str:
    """``text`` followed by the default it says, as every option's help ends.

    >>> with_default("most and least moved words to list", 20)
    'most and least moved words to list (default: 20)'
    >>> with_default("")
    '(default: %(default)s)'
    """
    return f"{text} (default: {shown})" if text else f"(default: {shown})"


def add_option(
    parser: Any,
    flag: str,
    help: str = "",
    *,
    default: Any = None,
    shown: object = "%(default)s",
    type: Callable[[str], Any] | None = None,
    metavar: str | None = None,
    **more: Any,
) -> argparse.Action:
    """``flag``, an option that takes a value, added to ``parser`` (a parser or a group): of
    ``type``, or else of ``default``'s type when that is a number or a path. A ``default`` is
    said after ``help`` as ``shown`` (:func:`with_default`), or not at all with ``shown=None``
    (the help says it in its own words, or there is nothing to say). ``more`` goes to
    ``add_argument`` as it is (``choices``, ``nargs``, ``dest``, ``required``).

    Every command adds its options that take a value here, so the type and the shown default
    are written once; positional arguments, switches (``action="store_true"``) and the
    ``-o`` / ``--output`` pair are argparse's ``add_argument`` as they are.

    >>> a = add_option(argparse.ArgumentParser(), "--top", "words to list", default=20, metavar="N")
    >>> a.type, a.default, a.metavar, a.help
    (<class 'int'>, 20, 'N', 'words to list (default: %(default)s)')
    """
    if type is None and not isinstance(default, bool):
        type = next((kind for kind in (int, float, Path) if isinstance(default, kind)), None)
    if default is not None and shown is not None:
        help = with_default(help, shown)
    return parser.add_argument(
        flag, default=default, type=type, metavar=metavar, help=help or None, **more
    )


class Option(NamedTuple):
    """A model option: its metavar (None for a switch or a choice) and its help; its flag is
    :func:`flag_for` its parameter."""

    metavar: str | None
    help: str


#: Model parameter -> :class:`Option`, for every model option of the train commands.
OPTIONS = {
    "architecture": Option(
        None,
        "skip-gram (an example per word pair) or CBOW (the window's mean predicts its centre)",
    ),
    "level": Option(None, "tokens"),
    "vector_size": Option("D", "dimensions"),
    "dim": Option("D", "embedding size"),
    "context": Option("N", "previous tokens seen"),
    "hidden": Option("H", "tanh layer size"),
    "tied": Option(None, "reuse C as the output layer"),
    "window": Option("N", "context words each side"),
    "min_count": Option("N", "ignore words seen fewer than N times"),
    "max_vocab_size": Option("N", "cap on distinct words held while reading"),
    "max_vocab": Option("N", "keep only the N most frequent words"),
    "negative": Option("K", "negative samples per example, 0 for none (with --hs)"),
    "hierarchical_softmax": Option(
        None, "train a hierarchical softmax too (with --negative 0: instead)"
    ),
    "kernel": Option(
        None,
        "the step: classic (an example per skip-gram pair or CBOW window, as word2vec.c and "
        "fastText step) or batched (minibatches: word2vec's skip-gram window and 8 CBOW windows "
        "share their negatives, FastText's CBOW over bags; FastText's skip-gram reads the centre's "
        "bag once a window)",
    ),
    "sample": Option("T", "subsampling threshold, 0 = off"),
    "minn": Option("N", "shortest character n-gram"),
    "maxn": Option("N", "longest character n-gram, 0 = none"),
    "bucket": Option("N", "hash buckets for the n-grams"),
    "x_max": Option("X", "co-occurrence count where the weighting reaches 1"),
    "memory": Option(
        "GB",
        "budget for counting and shuffling co-occurrences; past it, counts and the shuffled "
        "records go to temporary files (in --spill-dir)",
    ),
    "alpha": Option("A", "exponent of the weighting (x / x_max) ** alpha"),
    "epochs": Option("N", "passes over the corpus"),
    "lr": Option("LR", "initial learning rate"),
    "min_lr": Option("LR", "final learning rate"),
    "batch_size": Option("N", "examples per step"),
    "optimizer": Option(None, "how the tables are stepped"),
    "val_fraction": Option(
        "F", "share of the lines held out to report held-out perplexity, 0 for none"
    ),
    "word_ngrams": Option("N", "word n-grams up to N words join each line (hashed)"),
    "loss": Option(None, "softmax, negative sampling, hierarchical softmax or one-vs-all"),
    "min_count_label": Option("N", "ignore labels seen fewer than N times"),
    "label_prefix": Option("PREFIX", "what a label starts with"),
    "pretrained_vectors": Option("FILE", "word vectors (.vec, .npz) to start the word rows from"),
    "workers": Option("N", "threads; 1 is reproducible"),
    "seed": Option("N", "random seed"),
    "family": Option(
        None,
        "gpt2: learned positions, LayerNorm, GELU, biases; llama: RoPE, RMSNorm, SwiGLU, "
        "grouped-query heads",
    ),
    "vocab_size": Option("V", "entries of the byte-level BPE: the rows of the table"),
    "d_model": Option("D", "width of the table and of every layer"),
    "n_layers": Option("L", "Transformer blocks"),
    "n_heads": Option("H", "attention heads"),
    "n_kv_heads": Option("H", "key/value heads, a divisor of --heads (grouped-query attention)"),
    "d_ff": Option("N", "MLP width"),
    "positions": Option(None, "position information"),
    "tie_embeddings": Option(
        None,
        "a separate output layer instead of the table (V x D more parameters)",
    ),
    "scale_embeddings": Option(None, "multiply the rows by sqrt(D)"),
    "dropout": Option("P", "dropout on embeddings, attention weights and residual branches"),
    "weight_decay": Option("W", "AdamW's decoupled weight decay (matrices and tables)"),
}

#: Help that differs for one model: (model, parameter) -> help.
MODEL_HELP = {
    ("GloVe", "lr"): "AdaGrad step size",
    ("GloVe", "epochs"): "passes over the co-occurrence records",
    ("TransformerLM", "context"): "longest sequence: the length of the training windows",
    ("TransformerLM", "optimizer"): "adamw: AdamW on everything; sparse_adam: SparseAdam on the "
    "table's touched rows (needs --untied)",
    ("TransformerLM", "epochs"): "passes over the training windows",
    ("TransformerLM", "batch_size"): "windows per step",
}

#: What a default of None means, where the signature cannot say it.
NONE_MEANS = {
    ("GloVe", "memory"): "no budget, count in RAM",
    ("Word2Vec", "lr"): "0.025 for skipgram, 0.05 for cbow",
    ("NPLM", "lr"): "0.01 for adam and sparse_adam, 0.1 for sgd",
    ("Word2Vec", "max_vocab_size"): "no cap",
    ("GloVe", "max_vocab"): "no cap",
    ("Word2Vec", "workers"): "one per core the process may use",
    ("GloVe", "workers"): "one per core the process may use",
    ("FastText", "workers"): "one per core the process may use",
    ("FastText", "kernel"): "batched for skipgram, classic for cbow",
    ("TransformerLM", "n_kv_heads"): "--heads",
    ("TransformerLM", "d_ff"): "4 D for gpt2, 8 D / 3 rounded up to 256 for llama",
    ("TransformerLM", "positions"): "learned for gpt2, rope for llama",
    ("FastTextClassifier", "workers"): "one per core the process may use",
    ("FastTextClassifier", "pretrained_vectors"): "none",
}


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls.__init__)
    except Exception:  # an annotation that does not resolve: fall back to the defaults' types
        return {}


def _base_type(hint: Any, default: Any) -> Any:
    """``int`` for ``int | None``, the ``Literal`` itself, or the default's type."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [h for h in typing.get_args(hint) if h is not type(None)]
        hint = rest[0] if len(rest) == 1 else None
    if hint is None or hint is Any:
        return type(default) if default is not None else str
    return hint


def model_options(cls: type) -> dict[str, tuple[str, dict[str, Any]]]:
    """Parameter -> (flag, ``add_argument`` keywords) of the :data:`OPTIONS` ``cls`` takes.

    >>> from rowbook.models import GloVe
    >>> flag, kwargs = model_options(GloVe)["x_max"]
    >>> flag, kwargs["type"], kwargs["help"]
    ('--x-max', <class 'float'>, 'co-occurrence count where the weighting reaches 1 (default: 100.0)')
    """
    hints, found = _hints(cls), {}
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if name not in OPTIONS:
            continue
        flag, (metavar, text) = flag_for(name), OPTIONS[name]
        text = MODEL_HELP.get((cls.__name__, name), text)
        default = param.default
        shown = NONE_MEANS.get((cls.__name__, name), default)
        kwargs: dict[str, Any] = {
            "dest": name,
            "default": None,
            "help": with_default(text, shown),
        }
        kind = _base_type(hints.get(name), default)
        if typing.get_origin(kind) is Literal:
            kwargs["choices"] = typing.get_args(kind)
        elif kind is bool:  # a switch that turns the default over
            kwargs.update(action="store_const", const=not default, help=text)
        else:
            kwargs.update(type=kind, metavar=metavar)
        found[name] = (flag, kwargs)
    return found


def add_model_options(p: argparse.ArgumentParser, cls: type) -> None:
    """``cls``'s options as a group of ``p``, and ``flags`` (parameter -> flag) and
    ``model_class`` in its defaults, for the run and its error messages."""
    options = model_options(cls)
    group = p.add_argument_group(f"{cls.__name__} parameters")
    for flag, kwargs in options.values():
        group.add_argument(flag, **kwargs)
    p.set_defaults(flags={name: flag for name, (flag, _) in options.items()}, model_class=cls)
