"""``--scheduler ADDRESS``: a command's counting passes on Dask, the rest on this machine.

Each file of CORPUS (folders expanded, in reading order) is one shard, counted by a worker
with the command's own reading options (tokenizer, ``--lower``, ``--unicode-errors``) and
summed by :mod:`rowbook.distributed`; the counts then go down the same fitting path as
counts made here (``Vocab.fit_counts``, ``ByteLevelBPE.fit_word_counts``,
``Word2Vec.fit(corpus, vocab=counts)``, ``GloVe.fit_cooccurrence``), so the
output files are the same. The SGD passes stay on this machine: they read and write rows
of shared tables every few microseconds (Hogwild threads), and across machines each step
would wait on the network.

Dask is imported only when ``--scheduler`` is given. Not with it: standard input (the
workers cannot read it), and the options that act during one local pass over the corpus
(:data:`LOCAL_ONLY`, and for GloVe :data:`GLOVE_LOCAL_ONLY`).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rowbook.cli._common import STDIN, source_name
from rowbook.cli.corpus import corpus_spill_dir, fit_counted_matrix
from rowbook.corpus_source import CorpusSource

__all__ = [
    "CONNECT_TIMEOUT",
    "GLOVE_LOCAL_ONLY",
    "LOCAL_ONLY",
    "check_options",
    "counting",
    "fit_counted",
]

#: Seconds to wait for the scheduler (and for it to have a worker) before giving up.
CONNECT_TIMEOUT = 10.0

#: Options that cannot go with --scheduler: option dest -> why, and what to do instead.
LOCAL_ONLY = {
    "max_vocab_size": "it prunes words during one pass in corpus order, which counts summed over "
    "files cannot repeat; drop it (--min-count caps the vocabulary)",
}


#: GloVe trains on the counted matrix alone: these act on a local pass over the corpus.
GLOVE_LOCAL_ONLY = {
    "resume": "a GloVe run on counts made with --scheduler continues with --init FILE --epochs N "
    "(the epochs left) after counting again; drop --scheduler to resume a local fit",
}


def check_options(args: argparse.Namespace) -> None:
    """Refuse, in one line, the inputs and options that do not go with ``--scheduler``."""
    if STDIN in args.corpus:
        raise ValueError(
            "--scheduler counts files on the Dask workers, which cannot read this "
            "command's standard input ('-'); save it to a file and give its path"
        )
    local_only = LOCAL_ONLY | (GLOVE_LOCAL_ONLY if getattr(args, "model", None) == "glove" else {})
    for dest, why in local_only.items():
        if getattr(args, dest, None):
            raise ValueError(f"--{dest.replace('_', '-')} does not go with --scheduler: {why}")
    if getattr(args, "init", None) and getattr(args, "model", None) == "glove":
        raise ValueError(
            "--init does not go with --scheduler for GloVe: a continued GloVe model "
            "counts the new corpus's co-occurrences on this machine; drop --scheduler"
        )


@contextmanager
def _client(address: str) -> Iterator[Any]:
    """A client of the scheduler at ``address`` with one worker at least; errors in one line."""
    try:
        from rowbook.distributed import connect

        client = connect(address, timeout=CONNECT_TIMEOUT)
    except ImportError:
        raise ImportError("--scheduler needs Dask: pip install 'rowbook[dask]'") from None
    except ValueError as err:
        raise ValueError(
            f"--scheduler {address} is not a scheduler address ({err}); give "
            "tcp://HOST:PORT, or 'local'"
        ) from None
    except OSError as err:  # refused, unknown host, timed out
        raise OSError(
            f"--scheduler {address}: no Dask scheduler answered ({err}); start one "
            "('dask scheduler', then 'dask worker ADDRESS') or check the address"
        ) from None
    with client:
        try:
            client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
        except TimeoutError:
            raise OSError(
                f"--scheduler {address} has no worker after {CONNECT_TIMEOUT:g} s; "
                "start some with 'dask worker ADDRESS'"
            ) from None
        yield client


@contextmanager
def counting(args: argparse.Namespace, corpus: CorpusSource) -> Iterator[Callable[..., Any]]:
    """``count(function, **kwargs)``: a :mod:`rowbook.distributed` counting function run on
    the files of ``corpus`` (CORPUS, checked by :func:`check_options`) on ``--scheduler``,
    one file a shard, with its ``errors``."""
    with _client(args.scheduler) as client:
        shards = [Path(f).resolve() for f in corpus.files]  # for the workers' folder

        def count(function: Callable[..., Any], **kwargs: Any) -> Any:
            return function(shards, errors=corpus.errors, client=client, **kwargs)

        yield count


def fit_counted(
    model: Any, corpus: CorpusSource, args: argparse.Namespace, resume: str | None
) -> None:
    """Fit (or, with ``--init``, continue) ``model`` on counts made on ``--scheduler``:
    word counts for word2vec and fastText, then the local epochs over ``corpus``
    (``fit(corpus, vocab=counts)``, so ``--resume`` and ``--spill-dir`` work as without
    ``--scheduler``); co-occurrences over the vocabulary for GloVe, then its local epochs
    over them."""
    from rowbook.distributed import word_counts

    if args.model == "glove":
        counted = count_glove(model, corpus, args)
        fit_counted_matrix(model, counted, args)
        return
    with counting(args, corpus) as count:
        counts = _word_counts(count, word_counts, corpus, args)
    spill = corpus_spill_dir(args, corpus)
    if args.init:
        model.build_vocab_from_freq(counts, update=True)
        epochs = args.epochs or model.epochs
        model.train(corpus, epochs=epochs, checkpoint=args.checkpoint, spill_dir=spill)
        return
    model.fit(corpus, vocab=counts, checkpoint=args.checkpoint, resume=resume, spill_dir=spill)


def count_glove(model: Any, corpus: CorpusSource, args: argparse.Namespace) -> Any:
    """GloVe's vocabulary and co-occurrence matrix counted on ``--scheduler`` (what
    ``model.cooccurrence(corpus)`` counts here), as a ``CountedCooccurrence``."""
    from rowbook.data.cooccurrence_file import CountedCooccurrence
    from rowbook.distributed import cooccurrence_counts, word_counts

    # how the workers count, and so what the counted matrix says it is: stated once for both
    how = {
        "window": model.window,
        "symmetric": model.symmetric,
        "weighted": model.distance_weighting,
    }
    with counting(args, corpus) as count:
        vocab = model.choose_vocab(_word_counts(count, word_counts, corpus, args))
        X = count(cooccurrence_counts, keys=vocab.keys, tokenizer=corpus.tokenizer, **how)
    return CountedCooccurrence(X.tocsr(), vocab.keys, vocab.counts, **how)


def _word_counts(
    count: Callable[..., Any], word_counts: Any, corpus: CorpusSource, args: argparse.Namespace
) -> Any:
    counts = count(word_counts, tokenizer=corpus.tokenizer)
    if not counts:
        raise ValueError(f"{source_name(args.corpus)} is empty: no words")
    return counts
