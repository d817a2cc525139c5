"""``rowbook vocab``: count a corpus and write a text pipeline file (a vocabulary or a subword model).

The file is a :class:`~rowbook.text.TextPipeline` (normalizer, tokenizer, vocabulary or
BPE), which ``rowbook tokenize --vocab FILE`` (:mod:`rowbook.cli.text`) applies as the
corpus was read. ``--model bpe|wordpiece|unigram`` trains a subword model of ``--max-vocab``
entries instead (:mod:`rowbook.cli.subword`), written as a pipeline file, a Hugging Face
``tokenizer.json`` or a SentencePiece ``.model`` (``--format``). ``--scheduler ADDRESS``
counts the corpus on Dask (:mod:`rowbook.cli._cluster`); ``--memory GB`` keeps the word
counts of a subword model (BPE too) within a budget.
"""

from __future__ import annotations

import argparse
import itertools
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from rowbook.cli._cluster import check_options, counting
from rowbook.cli._common import (
    add_command,
    add_corpus,
    add_json,
    add_lower,
    add_scheduler,
    add_unicode_errors,
    check_output_path,
    format_table,
    given_corpus,
    print_json,
    source_name,
)
from rowbook.cli.options import add_option
from rowbook.cli.text import TOKENIZERS, _shown, make_tokenizer
from rowbook.corpus_source import CorpusSource

__all__ = ["register", "run_vocab"]


def run_vocab(args: argparse.Namespace) -> int:
    out = check_output_path(args.output)
    if args.scheduler:
        check_options(args)
    corpus = given_corpus(args.corpus, errors=args.unicode_errors, progress=not args.quiet)
    if args.model in ("wordpiece", "unigram"):
        from rowbook.cli.subword import fit_subword

        return fit_subword(args, out, corpus)
    if args.format != "rowbook":
        raise ValueError("--format goes with --model wordpiece or --model unigram")
    if args.tokenizer == "bpe" or args.model == "bpe":
        return _fit_bpe(args, out, corpus)
    if args.memory:
        raise ValueError("--memory goes with --model bpe, wordpiece or unigram")
    tokenizer = make_tokenizer(args.tokenizer, lower=args.lower)
    counts, n_lines = _count(args, replace(corpus, tokenizer=tokenizer))
    if not counts:
        raise ValueError(f"{source_name(args.corpus)} is empty: {_lines_read(n_lines)}no tokens")
    from rowbook.text import TextPipeline, Vocab

    min_count = 1 if args.min_count is None else args.min_count
    vocab = Vocab(min_count=min_count, max_vocab=args.max_vocab).fit_counts(counts)
    kept = len(vocab) - len(vocab.specials)
    if kept == 0:
        top, count = counts.most_common(1)[0]
        raise ValueError(
            f"no token occurs at least --min-count={vocab.min_count} times (the most "
            f"frequent, {top!r}, occurs {count}); lower --min-count"
        )
    parts = (tokenizer.normalizer, tokenizer.tokenizer) if args.lower else (None, tokenizer)
    TextPipeline(*parts, vocab).fit([]).save(out)
    specials, kept_counts = set(vocab.specials), vocab.counts  # each property copies
    ranked = ((i, t, kept_counts[t]) for i, t in enumerate(vocab.itos) if t not in specials)
    top = list(itertools.islice(ranked, args.top))
    summary = {
        "output": str(out),
        "lines": n_lines,
        "tokens": sum(counts.values()),
        "distinct": len(counts),
        "size": len(vocab),
        "specials": list(vocab.specials),
        "top": [{"id": i, "token": t, "count": c} for i, t, c in top],
    }
    if args.json:
        print_json(summary)
    elif not args.quiet:
        print(f"{_read(args, corpus, n_lines)}: {summary['tokens']} tokens, {len(counts)} distinct")
        print(
            f"vocabulary: {len(vocab)} entries ({len(vocab.specials)} special + {kept} tokens "
            f"seen >= {vocab.min_count} times) -> {out}"
        )
        rows = [(i, _shown(t), c) for i, t, c in top]
        print(format_table(["id", "token", "count"], rows, "rlr"))
    return 0


def _count(args: argparse.Namespace, corpus: CorpusSource) -> tuple[Counter, int | None]:
    """The token counts of ``corpus``, in order of first sighting, and its number of lines
    (None: counted on --scheduler): the trainers' first pass
    (:func:`rowbook.data.corpus.count_words`), on --workers processes."""
    if args.scheduler:
        from rowbook.distributed import word_counts

        with counting(args, corpus) as count:
            return count(word_counts, tokenizer=corpus.tokenizer), None
    from rowbook.data.corpus import count_words

    counts, n_lines = count_words(corpus, workers=args.workers)
    return Counter(counts), n_lines


def _bpe_counts(
    args: argparse.Namespace, corpus: CorpusSource, normalizer: Any
) -> tuple[Mapping, int | None]:
    """The words :meth:`ByteLevelBPE.fit` counts in CORPUS (within --memory), and its number
    of lines (None: counted on --scheduler)."""
    from rowbook.text import ByteLevelBPE

    if args.scheduler and args.memory:
        raise ValueError(
            "--memory does not go with --scheduler: the workers count their files in RAM"
        )
    if args.scheduler:
        from rowbook.distributed import bpe_word_counts

        with counting(args, corpus) as count:
            return count(bpe_word_counts, normalizer=normalizer), None
    n_lines = 0

    def texts() -> Iterator[str]:  # streamed: within --memory the corpus is never held
        nonlocal n_lines
        for line in corpus.lines():
            n_lines += 1
            yield normalizer(line) if normalizer else line

    counts = ByteLevelBPE().count_words(
        texts(), workers=args.workers, memory=args.memory, spill_dir=args.spill_dir
    )
    return counts, n_lines


def _lines_read(n_lines: int | None) -> str:
    return "" if n_lines is None else f"{n_lines} lines and "


def _read(args: argparse.Namespace, corpus: CorpusSource, n_lines: int | None) -> str:
    """``read 12 lines``, or ``counted 3 files on Dask at tcp://...`` (--scheduler)."""
    if n_lines is not None:
        return f"read {n_lines} lines"
    where = "a local Dask cluster" if args.scheduler == "local" else f"Dask at {args.scheduler}"
    return f"counted {len(corpus.files)} files on {where}"


def _fit_bpe(args: argparse.Namespace, out: Path, corpus: CorpusSource) -> int:
    from rowbook.text import ByteLevelBPE, Normalizer, TextPipeline
    from rowbook.text.bpe.options import check_fit_args

    if args.max_vocab is None:
        raise ValueError(
            "--tokenizer bpe needs --max-vocab N, the final vocabulary size "
            "(256 byte symbols + N - 256 merges)"
        )
    min_count = 2 if args.min_count is None else args.min_count
    check_fit_args(args.max_vocab, min_count, ())  # before the long count
    norm = Normalizer(case="lower") if args.lower else None
    counts, n_lines = _bpe_counts(args, corpus, norm)
    if not counts:
        raise ValueError(f"{source_name(args.corpus)} is empty: {_lines_read(n_lines)}no text")
    bpe = ByteLevelBPE().fit_word_counts(
        counts, args.max_vocab, min_count=min_count, memory=args.memory
    )
    TextPipeline(norm, bpe).fit([]).save(out)
    trace = bpe.merge_trace
    if args.json:
        print_json(
            {
                "output": str(out),
                "lines": n_lines,
                "size": len(bpe),
                "merges": len(trace),
                "first_merges": [[m.left, m.right, m.count] for m in trace[: args.top]],
            }
        )
    elif not args.quiet:
        print(
            f"{_read(args, corpus, n_lines)}; byte-level BPE: {len(bpe)} entries "
            f"(256 bytes + {len(trace)} merges) -> {out}"
        )
        rows = [(k + 1, m.left, m.right, m.token, m.count) for k, m in enumerate(trace[: args.top])]
        print(format_table(["#", "left", "right", "merged", "count"], rows, "rlllr"))
    return 0


def register(commands: Any) -> None:
    p = add_command(
        commands,
        "vocab",
        run=run_vocab,
        help="build a vocabulary (or train a byte-level BPE) from a corpus",
        description="Count the tokens of CORPUS (UTF-8 text files, compressed or not, folders, or "
        "'-' for standard input) and write a text pipeline file (JSON): the normalizer (--lower), "
        "the tokenizer and the vocabulary, <pad> = 0, <unk> = 1, then tokens by decreasing count. "
        "With --model bpe (or --tokenizer bpe), wordpiece or unigram, train that subword model of "
        "--max-vocab entries instead (its own ids), as Hugging Face tokenizers' trainers do. "
        "'rowbook tokenize --vocab FILE' (or --tokenizer FILE) applies the file as it was built.",
        examples=[
            "rowbook vocab corpus.txt --lower --min-count 2 -o vocab.json",
            "rowbook vocab corpus.txt --max-vocab 10000 -o vocab.json --json",
            "rowbook vocab corpus.txt --tokenizer bpe --max-vocab 1000 -o bpe.json",
            "rowbook vocab corpus.txt --model wordpiece --lower --max-vocab 8000 -o bert.json",
            "rowbook vocab corpus.txt --model unigram --max-vocab 8000 --format model -o spm.model",
            "rowbook vocab big/ --model unigram --max-vocab 32000 --memory 2 -o uni.json",
            "rowbook vocab big/ --model bpe --max-vocab 32000 --memory 1 -o bpe.json",
            "rowbook vocab books/ news.txt.gz -o vocab.json",
            "cat *.txt | rowbook vocab - -o vocab.json",
        ],
    )
    add_corpus(p, "one document per line")
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write the JSON")
    add_option(p, "--tokenizer", default="word", choices=TOKENIZERS)
    add_option(
        p,
        "--model",
        "train a subword model of --max-vocab entries: byte-level BPE, WordPiece (BERT's "
        "normalizer and [CLS]/[SEP]; --lower for uncased) or Unigram (Metaspace words)",
        choices=("bpe", "wordpiece", "unigram"),
    )
    add_option(
        p,
        "--format",
        "with --model wordpiece/unigram: a rowbook pipeline file, a Hugging Face "
        "tokenizer.json, or (unigram) a SentencePiece .model",
        default="rowbook",
        choices=("rowbook", "tokenizer.json", "model"),
    )
    add_option(
        p,
        "--memory",
        "with --model bpe/wordpiece/unigram: keep the word counts within GB gigabytes, "
        "spilling to temporary files (in --spill-dir) past half of it; same result",
        type=float,
        metavar="GB",
    )
    add_option(
        p,
        "--spill-dir",
        "where --memory spills (default: the system's temporary folder)",
        metavar="DIR",
    )
    add_lower(p)
    add_option(
        p,
        "--min-count",
        "keep tokens seen at least N times (default 1; for bpe, the least count of "
        "a pair to merge, default 2)",
        type=int,
        metavar="N",
    )
    add_option(
        p,
        "--max-vocab",
        "keep at most N entries, the most frequent, specials included (required for bpe)",
        type=int,
        metavar="N",
    )
    add_option(
        p, "--top", "show the N most frequent tokens (or first merges)", default=10, metavar="N"
    )
    add_option(
        p,
        "--workers",
        "processes that read CORPUS, over byte ranges of its files; the counts are the "
        "same for every N (default: one per core the process may use)",
        type=int,
        metavar="N",
    )
    add_json(p, "print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    add_unicode_errors(p)
    add_scheduler(p, "")
