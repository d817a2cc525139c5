"""``rowbook tokenize``: text -> tokens -> ids, from the command line.

``rowbook vocab`` (:mod:`rowbook.cli.vocab`) writes one file, a :class:`~rowbook.text.TextPipeline` (normalizer,
tokenizer, vocabulary or BPE), so ``rowbook tokenize --vocab FILE`` encodes new text as the
corpus was encoded (``--lower`` included) without being told again. Plain ``Vocab`` files
of earlier versions are still read by ``--vocab``, with the ``--tokenizer``/``--lower``
given; ``tokenize`` warns on standard error when more than half of the tokens are unknown.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rowbook.cli._common import (
    STDIN,
    add_command,
    add_json,
    add_lower,
    add_positionals,
    check_input_file,
    read_lines,
)
from rowbook.cli.options import add_option
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
            raise ValueError(
                "--tokenizer bpe needs --bpe FILE (make one with 'rowbook vocab "
                "CORPUS --tokenizer bpe --max-vocab N -o bpe.json')"
            )
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
            raise ValueError(
                f"--bpe {path} is a text pipeline with a {type(pipe.tokenizer_).__name__}"
                ", not a BPE; give it with --vocab FILE"
            )
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


def _tokenizer_file(args: argparse.Namespace) -> Any:
    """The tokenizer of ``--tokenizer FILE`` (any format, :func:`rowbook.load_tokenizer`)."""
    from rowbook.file_kinds import load_tokenizer, tokenizer_file

    path = Path(args.tokenizer)
    if not path.exists():
        raise ValueError(
            f"--tokenizer {args.tokenizer} is neither one of {', '.join(TOKENIZERS)} nor "
            "a file or folder (tokenizer.json, .model, vocab.txt, vocab.json, a rowbook file)"
        )
    for flag in ("--bpe", "--vocab", "--lower"):
        if getattr(args, flag[2:]):
            raise ValueError(
                f"--tokenizer FILE fixes the normalizer, the tokens and the ids: drop {flag}"
            )
    file, kind = tokenizer_file(path)
    print(f"{args.prog}: {file}: {kind.name}", file=sys.stderr)
    return load_tokenizer(file)


def _run_file_tokenizer(args: argparse.Namespace) -> int:
    tokenizer = _tokenizer_file(args)
    texts = read_lines(STDIN) if args.text == STDIN else [args.text]
    for text in texts:
        encoding = tokenizer.encode(text)
        if args.json:
            print(
                json.dumps(
                    {
                        "text": text,
                        "tokens": encoding.tokens,
                        "ids": encoding.ids,
                        "offsets": encoding.offsets,
                    },
                    ensure_ascii=False,
                )
            )
        elif args.ids:
            print(" ".join(map(str, encoding.ids)))
        else:
            print(" ".join(_shown(t) for t in encoding.tokens))
    return 0


def run_tokenize(args: argparse.Namespace) -> int:
    if args.tokenizer is not None and args.tokenizer not in TOKENIZERS:
        return _run_file_tokenizer(args)
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
                raise ValueError(
                    f"{flag} {file} is a text pipeline from 'rowbook vocab': it fixes "
                    f"the normalizer and tokenizer, so drop {' and '.join(others)}"
                )
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
            cause = (
                "its tokens are lower-case and this text is not: add --lower (a file written "
                "by 'rowbook vocab' now records --lower and applies it itself)"
            )
        elif not from_pipeline:
            cause = (
                "this plain vocabulary file does not record the tokenizer or normalizer it "
                "was built with: give the same --tokenizer and --lower, or rebuild it with "
                "'rowbook vocab', whose file records them"
            )
        else:
            cause = (
                "the text differs from the corpus the vocabulary was built from (another "
                "language, spelling or domain), or --min-count dropped most words"
            )
        print(
            f"{args.prog}: warning: {self.unknown} of {self.total} tokens are not in the "
            f"vocabulary of {file} and became <unk> (e.g. {self.sample[0]!r}); likely cause: "
            f"{cause}",
            file=sys.stderr,
        )


# -- parsers --------------------------------------------------------------------------------


def register(commands: Any) -> None:
    p = add_command(
        commands,
        "tokenize",
        run=run_tokenize,
        help="split a text into tokens (and ids)",
        description="Split TEXT into tokens, one output line per input line. '-' reads standard "
        "input line by line. Tokens containing whitespace are shown quoted; --json prints one "
        "JSON object per line with the exact tokens (and ids, when there are any).",
        examples=[
            "rowbook tokenize 'The cat sat on the mat'",
            "rowbook tokenize --lower --tokenizer char 'Cat!'",
            "rowbook tokenize --bpe bpe.json --json 'lowest prices'",
            "rowbook tokenize --tokenizer bert-base-uncased/tokenizer.json --ids 'Hello!'",
            "rowbook tokenize --tokenizer spiece.model 'Hello world'",
            "rowbook tokenize --vocab vocab.json --ids 'The cat'",
            "rowbook tokenize --lower - < raw.txt > corpus.txt",
        ],
    )
    add_positionals(p, TEXT="the text, or '-' for standard input")
    add_option(
        p,
        "--tokenizer",
        "word (regex words and punctuation, the default), whitespace, char, bpe (with "
        "--bpe), or a tokenizer FILE or model folder of any format: tokenizer.json "
        "(byte-level BPE, WordPiece, Unigram), a SentencePiece .model, BERT's vocab.txt, "
        "GPT-2's vocab.json + merges.txt, a rowbook file; it is recognised by its content",
        metavar="NAME|FILE",
    )
    add_option(
        p,
        "--bpe",
        "a BPE file from 'rowbook vocab --tokenizer bpe' or a Hugging Face tokenizer.json",
        metavar="FILE",
    )
    add_lower(p)
    add_option(
        p,
        "--vocab",
        "a file from 'rowbook vocab': its normalizer, tokenizer and vocabulary are "
        "applied (an older plain vocabulary file maps the tokens of --tokenizer)",
        metavar="FILE",
    )
    p.add_argument("--ids", action="store_true", help="print ids instead of tokens")
    add_json(p, "one JSON object per line")
