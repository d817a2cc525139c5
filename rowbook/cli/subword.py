"""``rowbook vocab --model wordpiece|unigram``: train a WordPiece or Unigram tokenizer on a corpus.

Counting the words is the pass over the corpus (here on every core, within ``--memory``, or
on ``--scheduler``); training then runs on the counts. The tokenizer is written as a
:class:`~rowbook.text.TextPipeline` file (``--format rowbook``, read by ``rowbook tokenize
--vocab FILE``), a Hugging Face ``tokenizer.json`` or, for Unigram, a SentencePiece
``.model``; ``rowbook tokenize --tokenizer FILE`` reads any of them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rowbook.cli._cluster import counting
from rowbook.cli._common import format_table, print_json, source_name
from rowbook.cli.text import _shown
from rowbook.corpus_source import CorpusSource

__all__ = ["fit_subword", "make_subword"]


def make_subword(model: str, lower: bool, plain: bool = False) -> Any:
    """The unfitted tokenizer ``--model`` names (``--lower``: uncased; ``plain``: a Unigram
    with no normalizer, as a SentencePiece ``.model`` written by rowbook holds)."""
    from rowbook.text import Unigram, WordPiece
    from rowbook.text.bert import BertNormalizer
    from rowbook.text.components import NormalizerSequence, UnicodeForm, normalizer_from_json

    if model == "wordpiece":
        return WordPiece(normalizer=BertNormalizer(lowercase=lower))
    if plain:
        return Unigram(normalizer=None)
    steps = [UnicodeForm("NFKC"), *([normalizer_from_json({"type": "Lowercase"})] if lower else [])]
    return Unigram(normalizer=NormalizerSequence(tuple(steps)))


def fit_subword(args: argparse.Namespace, out: Path, corpus: CorpusSource) -> int:
    from rowbook.text.wordpiece.train import BERT_SPECIAL_TOKENS

    if args.max_vocab is None:
        raise ValueError(
            f"--model {args.model} needs --max-vocab N, the number of entries to learn"
        )
    if args.format == "model" and args.model != "unigram":
        raise ValueError(
            "--format model writes a SentencePiece .model, which holds a Unigram model: "
            "use --model unigram, or --format tokenizer.json"
        )
    if args.format == "model" and args.lower:
        raise ValueError(
            "--lower does not go with --format model: a .model file written by rowbook "
            "has no normalizer; lower-case the corpus first, or use --format tokenizer.json"
        )
    if args.scheduler and args.memory:
        raise ValueError(
            "--memory does not go with --scheduler: the workers count their files in RAM"
        )
    tokenizer = make_subword(args.model, args.lower, plain=args.format == "model")
    specials = BERT_SPECIAL_TOKENS if args.model == "wordpiece" else ("<unk>",)
    options = {"special_tokens": specials}
    if args.min_count is not None and args.model == "wordpiece":
        options["min_count"] = args.min_count
    if args.scheduler:
        from rowbook.distributed import subword_word_counts

        with counting(args, corpus) as count:
            counts = count(subword_word_counts, tokenizer=tokenizer)
        lines = None
    else:
        lines = _Lines(corpus.lines())
        from rowbook.text.word_counts import budget_bytes, count_words

        counts = count_words(
            lines,
            tokenizer._training_words,
            workers=None,
            memory=budget_bytes(args.memory),
            spill_dir=args.spill_dir,
        )
    if not counts:
        raise ValueError(f"{source_name(args.corpus)} is empty: no words")
    tokenizer.fit((), args.max_vocab, word_counts=counts, **options)
    _write(tokenizer, args, out)
    _summary(tokenizer, args, out, lines.count if lines is not None else None, len(counts))
    return 0


class _Lines:
    """The corpus lines, counted as they are read."""

    def __init__(self, lines: Any) -> None:
        self.lines, self.count = lines, 0

    def __iter__(self) -> Any:
        for line in self.lines:
            self.count += 1
            yield line


def _write(tokenizer: Any, args: argparse.Namespace, out: Path) -> None:
    from rowbook.text import TextPipeline
    from rowbook.text.sentencepiece import save_model

    if args.format == "tokenizer.json":
        tokenizer.to_tokenizer_json(out)
    elif args.format == "model":
        save_model(tokenizer, out)
    else:
        TextPipeline(None, tokenizer).fit([]).save(out)


def _summary(
    tokenizer: Any, args: argparse.Namespace, out: Path, n_lines: int | None, n_words: int
) -> None:
    vocab = tokenizer.vocab
    top = sorted(vocab, key=vocab.get)[: args.top]
    if args.json:
        print_json(
            {
                "output": str(out),
                "model": args.model,
                "format": args.format,
                "lines": n_lines,
                "distinct_words": n_words,
                "size": len(tokenizer),
                "first": top,
            }
        )
    elif not args.quiet:
        read = f"read {n_lines} lines" if n_lines is not None else f"counted on {args.scheduler}"
        print(f"{read}, {n_words} distinct words; {args.model}: {len(tokenizer)} entries -> {out}")
        print(format_table(["id", "token"], [(vocab[t], _shown(t)) for t in top], "rl"))
