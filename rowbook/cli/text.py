"""``rowbook tokenize`` and ``rowbook vocab``: text -> tokens -> ids, from the command line.

``rowbook vocab`` writes one file, a :class:`~rowbook.text.TextPipeline` (normalizer,
tokenizer, vocabulary or BPE), so ``rowbook tokenize --vocab FILE`` encodes new text as the
corpus was encoded (``--lower`` included) without being told again. Plain ``Vocab`` files
of earlier versions are still read by ``--vocab``, with the ``--tokenizer``/``--lower``
given; ``tokenize`` warns on standard error when more than half of the tokens are unknown.
``vocab --scheduler ADDRESS`` counts the corpus on Dask (:mod:`rowbook.cli._cluster`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rowbook.cli._cluster import counting
from rowbook.cli._common import (
    STDIN,
    add_command,
    add_scheduler,
    add_unicode_errors,
    check_input_file,
    check_output_path,
    format_table,
    print_json,
    read_lines,
    source_name,
)
from rowbook.corpus_files import source_files
from rowbook.io import read_json

__all__ = ["Normalized", "make_tokenizer", "register"]

TOKENIZERS = ("word", "whitespace", "char", "bpe")


def make_tokenizer(name: str, *, lower: bool = False, bpe_file: str | None = None) -> Any:
    """The tokenizer object a ``--tokenizer`` choice names (a BPE is loaded from ``bpe_file``).

    Every returned object has ``tokenize(text) -> list[str]``; with ``lower`` the text goes
    through a lower-casing :class:`~rowbook.text.Normalizer` first.
    """
    from rowbook.text import ByteLevelBPE, CharTokenizer, Normalizer, WordTokenizer

    if name == "bpe":
        if bpe_file is None:
            raise ValueError("--tokenizer bpe needs --bpe FILE (make one with 'rowbook vocab "
                             "CORPUS --tokenizer bpe --max-size N -o bpe.json')")  # fmt: skip
        tokenizer = _load_bpe(check_input_file(bpe_file, "BPE"), ByteLevelBPE)
    elif name == "char":
        tokenizer = CharTokenizer()
    else:
        tokenizer = WordTokenizer(pattern=None) if name == "whitespace" else WordTokenizer()
    return Normalized(Normalizer(case="lower"), tokenizer) if lower else tokenizer


class Normalized:
    """``tokenizer.tokenize(normalizer(text))``: a normalizer in front of a tokenizer."""

    def __init__(self, normalizer: Callable[[str], str], tokenizer: Any) -> None:
        self.normalizer, self.tokenizer = normalizer, tokenizer

    def tokenize(self, text: str) -> list[str]:
        return self.tokenizer.tokenize(self.normalizer(text))


def _load_bpe(path: Path, cls: Any) -> Any:
    """rowbook's BPE file, a pipeline file holding one, or a Hugging Face ``tokenizer.json``."""
    kind = _file_kind(path)
    if kind == "text_pipeline":
        pipe = _load_pipeline(path)
        if not isinstance(pipe.tokenizer_, cls):
            raise ValueError(f"--bpe {path} is a text pipeline with a {type(pipe.tokenizer_).__name__}"
                             ", not a BPE; give it with --vocab FILE")  # fmt: skip
        return pipe.tokenizer_
    return cls.from_tokenizer_json(path) if kind == "tokenizer.json" else cls.load(path)


def _file_kind(path: Path) -> str | None:
    """``"text_pipeline"``, ``"tokenizer.json"`` (it has a ``model`` field), or None: let the
    loader report what is wrong with the file."""

    try:
        d = read_json(path, "BPE")
    except (ValueError, TypeError):
        return None
    if isinstance(d, dict) and d.get("kind") == "text_pipeline":
        return "text_pipeline"
    return "tokenizer.json" if isinstance(d, dict) and "model" in d else None


def _load_pipeline(path: Path) -> Any:
    from rowbook.text import TextPipeline

    return TextPipeline.load(path)


def _shown(token: str) -> str:
    return repr(token) if not token or any(c.isspace() for c in token) else token


# -- tokenize -------------------------------------------------------------------------------


def run_tokenize(args: argparse.Namespace) -> int:
    name = "bpe" if args.bpe and args.tokenizer is None else args.tokenizer or "word"
    if args.bpe and name != "bpe":
        raise ValueError(f"--bpe FILE goes with --tokenizer bpe, not --tokenizer {name}")
    pipe = _pipeline_given(args)
    if pipe is not None:
        tokenizer, encode = pipe, _pipeline_encoder(pipe)
    else:
        tokenizer = make_tokenizer(name, lower=args.lower, bpe_file=args.bpe)
        encode = _encoder(name, tokenizer, args.vocab)
    if args.ids and encode is None:
        raise ValueError(
            "--ids needs ids: give --vocab FILE (from 'rowbook vocab') or use --tokenizer bpe"
        )
    unknown = _Unknown(getattr(encode, "vocab", None))
    texts = read_lines(STDIN) if args.text == STDIN else [args.text]
    for text in texts:
        tokens = tokenizer.tokenize(text)
        ids = encode(text, tokens) if encode is not None else None
        unknown.update(tokens, ids)
        if args.json:
            record = {"text": text, "tokens": tokens} | ({"ids": ids} if ids is not None else {})
            print(json.dumps(record, ensure_ascii=False))
        elif args.ids:
            print(" ".join(map(str, ids)))
        else:
            print(" ".join(_shown(t) for t in tokens))
    unknown.warn(args, pipe is not None)
    return 0


def _pipeline_given(args: argparse.Namespace) -> Any:
    """The text pipeline in --vocab FILE (or --bpe FILE), or None for a plain vocabulary."""
    given = [(flag, f) for flag, f in (("--vocab", args.vocab), ("--bpe", args.bpe)) if f]
    for flag, file in given:
        path = check_input_file(file, "vocabulary" if flag == "--vocab" else "BPE")
        if _file_kind(path) == "text_pipeline":
            bpe_ok = flag == "--bpe" and args.tokenizer == "bpe"  # --tokenizer bpe agrees
            flags = ("--lower", "--tokenizer", "--bpe", "--vocab")
            others = [o for o in flags if o != flag and getattr(args, o[2:])]
            others = [o for o in others if not (o == "--tokenizer" and bpe_ok)]
            if others:
                raise ValueError(f"{flag} {file} is a text pipeline from 'rowbook vocab': it fixes "
                                 f"the normalizer and tokenizer, so drop {' and '.join(others)}")  # fmt: skip
            return _load_pipeline(path)
    return None


def _pipeline_encoder(pipe: Any) -> Callable:
    def encode(text: str, tokens: list[str]) -> list[int]:
        return pipe.encode(text).tolist()

    encode.vocab = pipe.vocab_  # type: ignore[attr-defined]
    return encode


def _encoder(name: str, tokenizer: Any, vocab_file: str | None) -> Callable | None:
    """``(text, tokens) -> ids`` when ids exist: a BPE's own, or a vocabulary file's."""
    if vocab_file is not None:
        if name == "bpe":
            raise ValueError("--vocab maps word or char tokens to ids; a BPE file has its own ids")
        from rowbook.text import Vocab

        vocab = Vocab.load(check_input_file(vocab_file, "vocabulary"))

        def encode(text: str, tokens: list[str]) -> list[int]:
            return vocab.encode(tokens).tolist()

        encode.vocab = vocab  # type: ignore[attr-defined]
        return encode
    if name == "bpe":
        bpe = getattr(tokenizer, "tokenizer", tokenizer)
        return lambda text, tokens: [bpe.token_to_id(t) for t in tokens]
    return None


class _Unknown:
    """Counts tokens mapped to ``<unk>``; warns when they are more than half of the input."""

    SAMPLE = 1000

    def __init__(self, vocab: Any) -> None:
        self.vocab, self.total, self.unknown, self.sample = vocab, 0, 0, []
        self.unk_id = vocab.unk_id if vocab is not None and vocab.unk_token is not None else None

    def update(self, tokens: list[str], ids: list[int] | None) -> None:
        if self.unk_id is None or ids is None:
            return
        self.total += len(ids)
        for token, i in zip(tokens, ids, strict=False):
            if i == self.unk_id:
                self.unknown += 1
                if len(self.sample) < self.SAMPLE:
                    self.sample.append(token)

    def warn(self, args: argparse.Namespace, from_pipeline: bool) -> None:
        if self.unknown * 2 <= self.total:
            return
        file = args.vocab or args.bpe
        known_lower = sum(t.lower() in self.vocab for t in self.sample)
        if known_lower * 2 > len(self.sample) and not from_pipeline:
            cause = ("its tokens are lower-case and this text is not: add --lower (a file written "
                     "by 'rowbook vocab' now records --lower and applies it itself)")  # fmt: skip
        elif not from_pipeline:
            cause = ("this plain vocabulary file does not record the tokenizer or normalizer it "
                     "was built with: give the same --tokenizer and --lower, or rebuild it with "
                     "'rowbook vocab', whose file records them")  # fmt: skip
        else:
            cause = ("the text differs from the corpus the vocabulary was built from (another "
                     "language, spelling or domain), or --min-count dropped most words")  # fmt: skip
        print(f"{args.prog}: warning: {self.unknown} of {self.total} tokens are not in the "
              f"vocabulary of {file} and became <unk> (e.g. {self.sample[0]!r}); likely cause: "
              f"{cause}", file=sys.stderr)  # fmt: skip


# -- vocab ----------------------------------------------------------------------------------


def run_vocab(args: argparse.Namespace) -> int:
    out = check_output_path(args.output)
    if args.tokenizer == "bpe":
        return _fit_bpe(args, out)
    tokenizer = make_tokenizer(args.tokenizer, lower=args.lower)
    counts, n_lines = _count(args, tokenizer)
    if not counts:
        raise ValueError(f"{source_name(args.corpus)} is empty: {_lines_read(n_lines)}no tokens")
    from rowbook.text import TextPipeline, Vocab

    min_count = 1 if args.min_count is None else args.min_count
    vocab = Vocab(min_count=min_count, max_size=args.max_size).fit_counts(counts)
    kept = len(vocab) - len(vocab.specials)
    if kept == 0:
        top, count = counts.most_common(1)[0]
        raise ValueError(f"no token occurs at least --min-count={vocab.min_count} times (the most "
                         f"frequent, {top!r}, occurs {count}); lower --min-count")  # fmt: skip
    parts = (tokenizer.normalizer, tokenizer.tokenizer) if args.lower else (None, tokenizer)
    TextPipeline(*parts, vocab).fit([]).save(out)
    top = [(i, t, vocab.counts[t]) for i, t in enumerate(vocab.itos) if t not in vocab.specials][
        : args.top
    ]
    summary = {"output": str(out), "lines": n_lines, "tokens": sum(counts.values()),
               "distinct": len(counts), "size": len(vocab), "specials": list(vocab.specials),
               "top": [{"id": i, "token": t, "count": c} for i, t, c in top]}  # fmt: skip
    if args.json:
        print_json(summary)
    elif not args.quiet:
        print(f"{_read(args, n_lines)}: {summary['tokens']} tokens, {len(counts)} distinct")
        print(f"vocabulary: {len(vocab)} entries ({len(vocab.specials)} special + {kept} tokens "
              f"seen >= {vocab.min_count} times) -> {out}")  # fmt: skip
        rows = [(i, _shown(t), c) for i, t, c in top]
        print(format_table(["id", "token", "count"], rows, "rlr"))
    return 0


def _count(args: argparse.Namespace, tokenizer: Any) -> tuple[Counter, int | None]:
    """The token counts of CORPUS and its number of lines (None: counted on --scheduler)."""
    if args.scheduler:
        from rowbook.distributed import word_counts

        with counting(args) as count:
            return count(word_counts, tokenizer=tokenizer), None
    counts: Counter[str] = Counter()
    n_lines = 0
    lines = read_lines(args.corpus, progress=not args.quiet, errors=args.unicode_errors)
    for n_lines, line in enumerate(lines, start=1):  # noqa: B007 - the count is the result
        counts.update(tokenizer.tokenize(line))
    return counts, n_lines


def _bpe_counts(args: argparse.Namespace, normalizer: Any) -> tuple[Counter, int | None]:
    """The words :meth:`ByteLevelBPE.fit` counts in CORPUS, and its number of lines (None:
    counted on --scheduler)."""
    from rowbook.text import ByteLevelBPE

    if args.scheduler:
        from rowbook.distributed import bpe_word_counts

        with counting(args) as count:
            return count(bpe_word_counts, normalizer=normalizer), None
    lines = read_lines(args.corpus, progress=not args.quiet, errors=args.unicode_errors)
    texts = [normalizer(line) if normalizer else line for line in lines]
    return ByteLevelBPE().count_words(texts, workers=None), len(texts)


def _lines_read(n_lines: int | None) -> str:
    return "" if n_lines is None else f"{n_lines} lines and "


def _read(args: argparse.Namespace, n_lines: int | None) -> str:
    """``read 12 lines``, or ``counted 3 files on Dask at tcp://...`` (--scheduler)."""
    if n_lines is not None:
        return f"read {n_lines} lines"
    where = "a local Dask cluster" if args.scheduler == "local" else f"Dask at {args.scheduler}"
    return f"counted {len(source_files(args.corpus))} files on {where}"


def _fit_bpe(args: argparse.Namespace, out: Path) -> int:
    from rowbook.text import ByteLevelBPE, Normalizer, TextPipeline
    from rowbook.text.bpe.options import check_fit_args

    if args.max_size is None:
        raise ValueError("--tokenizer bpe needs --max-size N, the final vocabulary size "
                         "(256 byte symbols + N - 256 merges)")  # fmt: skip
    min_frequency = 2 if args.min_count is None else args.min_count
    check_fit_args(args.max_size, min_frequency, ())  # before the long count
    norm = Normalizer(case="lower") if args.lower else None
    counts, n_lines = _bpe_counts(args, norm)
    if not counts:
        raise ValueError(f"{source_name(args.corpus)} is empty: {_lines_read(n_lines)}no text")
    bpe = ByteLevelBPE().fit_word_counts(counts, args.max_size, min_frequency=min_frequency)
    TextPipeline(norm, bpe).fit([]).save(out)
    trace = bpe.merge_trace
    if args.json:
        print_json({"output": str(out), "lines": n_lines, "size": len(bpe), "merges": len(trace),
                    "first_merges": [[m.left, m.right, m.count] for m in trace[: args.top]]})  # fmt: skip
    elif not args.quiet:
        print(f"{_read(args, n_lines)}; byte-level BPE: {len(bpe)} entries "
              f"(256 bytes + {len(trace)} merges) -> {out}")  # fmt: skip
        rows = [(k + 1, m.left, m.right, m.token, m.count) for k, m in enumerate(trace[: args.top])]
        print(format_table(["#", "left", "right", "merged", "count"], rows, "rlllr"))
    return 0


# -- parsers --------------------------------------------------------------------------------


def register(commands: Any) -> None:
    p = add_command(
        commands, "tokenize", run=run_tokenize,
        help="split a text into tokens (and ids)",
        description="Split TEXT into tokens, one output line per input line. '-' reads standard "
        "input line by line. Tokens containing whitespace are shown quoted; --json prints one "
        "JSON object per line with the exact tokens (and ids, when there are any).",
        examples=["rowbook tokenize 'The cat sat on the mat'",
                  "rowbook tokenize --lower --tokenizer char 'Cat!'",
                  "rowbook tokenize --bpe bpe.json --json 'lowest prices'",
                  "rowbook tokenize --vocab vocab.json --ids 'The cat'",
                  "rowbook tokenize --lower - < raw.txt > corpus.txt"],
    )  # fmt: skip
    p.add_argument("text", metavar="TEXT", help="the text, or '-' for standard input")
    p.add_argument("--tokenizer", choices=TOKENIZERS,
                   help="word (regex words and punctuation, the default), whitespace, char, or "
                   "bpe (with --bpe)")  # fmt: skip
    p.add_argument("--bpe", metavar="FILE", help="a BPE file from 'rowbook vocab --tokenizer bpe' "
                   "or a Hugging Face tokenizer.json")  # fmt: skip
    p.add_argument("--lower", action="store_true", help="lower-case the text first")
    p.add_argument("--vocab", metavar="FILE",
                   help="a file from 'rowbook vocab': its normalizer, tokenizer and vocabulary are "
                   "applied (an older plain vocabulary file maps the tokens of --tokenizer)")  # fmt: skip
    p.add_argument("--ids", action="store_true", help="print ids instead of tokens")
    p.add_argument("--json", action="store_true", help="one JSON object per line")

    p = add_command(
        commands, "vocab", run=run_vocab,
        help="build a vocabulary (or train a byte-level BPE) from a corpus",
        description="Count the tokens of CORPUS (UTF-8 text files, compressed or not, folders, or "
        "'-' for standard input) and write a text pipeline file (JSON): the normalizer (--lower), "
        "the tokenizer and the vocabulary, <pad> = 0, <unk> = 1, then tokens by decreasing count. "
        "With --tokenizer bpe, train a byte-level BPE of --max-size entries instead (its own ids). "
        "'rowbook tokenize --vocab FILE' (or --bpe FILE) applies the file as it was built.",
        examples=["rowbook vocab corpus.txt --lower --min-count 2 -o vocab.json",
                  "rowbook vocab corpus.txt --max-size 10000 -o vocab.json --json",
                  "rowbook vocab corpus.txt --tokenizer bpe --max-size 1000 -o bpe.json",
                  "rowbook vocab books/ news.txt.gz -o vocab.json",
                  "cat *.txt | rowbook vocab - -o vocab.json"],
    )  # fmt: skip
    p.add_argument("corpus", metavar="CORPUS", nargs="+",
                   help="UTF-8 text files (gzip/bzip2/xz too), folders of them (read in sorted path "
                   "order), or '-' for standard input; one document per line")  # fmt: skip
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write the JSON")
    p.add_argument("--tokenizer", choices=TOKENIZERS, default="word", help="(default: %(default)s)")
    p.add_argument("--lower", action="store_true", help="lower-case the text first")
    p.add_argument("--min-count", type=int, metavar="N",
                   help="keep tokens seen at least N times (default 1; for bpe, the least count of "
                   "a pair to merge, default 2)")  # fmt: skip
    p.add_argument("--max-size", type=int, metavar="N", help="at most N entries, specials included "
                   "(required for bpe)")  # fmt: skip
    p.add_argument("--top", type=int, default=10, metavar="N", help="show the N most frequent "
                   "tokens (or first merges) (default: %(default)s)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    add_unicode_errors(p)
    add_scheduler(p, "")
