"""``rowbook inspect FILE``: what a file is; for a GGUF model, its metadata, tensors and tokenizer."""

from __future__ import annotations

import argparse
import os
from typing import Any

import numpy as np

from rowbook.cli._common import add_command, add_positionals, check_input_file, format_table

__all__ = ["describe_gguf", "register"]

_SHOWN = 60  # characters of a metadata value shown


def _shown(value: Any) -> str:
    """A metadata value in one short line: arrays by their size and first items."""
    if isinstance(value, np.ndarray):
        head = ", ".join(f"{v:g}" if value.dtype.kind == "f" else str(v) for v in value[:4])
        text = f"[{len(value):,} {value.dtype.name}: {head}{', ...' if len(value) > 4 else ''}]"
    elif isinstance(value, list):
        head = ", ".join(repr(v) for v in value[:4])
        text = f"[{len(value):,}: {head}{', ...' if len(value) > 4 else ''}]"
    else:
        text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _megabytes(n: int) -> str:
    return f"{n / 2**20:,.1f} MiB" if n >= 2**20 else f"{n:,} B"


def _tokenizer_line(file: Any) -> str:
    from rowbook.gguf.tokenizer import gguf_tokenizer

    model = file.get("tokenizer.ggml.model")
    if model is None:
        return "tokenizer: none in the file"
    try:
        tok = gguf_tokenizer(file)
    except ValueError as err:
        return f"tokenizer: {model!r}, not read by rowbook ({' '.join(str(err).split())})"
    kind = "byte-level BPE" if tok.model == "gpt2" else "SentencePiece BPE"
    pre = f", pre-tokenizer {tok.pre!r}" if tok.pre else ""
    return (
        f"tokenizer: {tok.model!r} ({kind}{pre}), {len(tok):,} tokens, bos {tok.bos_id}, "
        f"eos {tok.eos_id}, add_bos {tok.add_bos}, add_eos {tok.add_eos}"
    )


def describe_gguf(file: Any) -> str:
    """The report of a GGUF file: a summary, the tokenizer, the metadata, the tensor table."""
    tensors = list(file.tensors.values())
    stored = sum(t.n_bytes for t in tensors)
    values = sum(t.n_elements for t in tensors)
    bits = f", {8 * stored / values:.2f} bits a value" if values else ""
    lines = [
        f"{file.path}: GGUF version {file.version}, {len(file.metadata)} metadata keys, "
        f"{len(tensors)} tensors",
        f"architecture: {file.get('general.architecture')!r}, {values:,} values stored in "
        f"{_megabytes(stored)}{bits}",
        _tokenizer_line(file),
        "",
        format_table(
            ["key", "type", "value"],
            [[k, file.value_types[k], _shown(v)] for k, v in file.metadata.items()],
        ),
        "",
        format_table(
            ["tensor", "type", "shape", "bytes"],
            [
                [t.name, t.type_name, " x ".join(map(str, t.shape)), f"{t.n_bytes:,}"]
                for t in tensors
            ],
            "lllr",
        ),
    ]
    return "\n".join(lines)


def run_inspect(args: argparse.Namespace) -> int:
    from rowbook.file_kinds import detect

    path = args.file if os.path.isdir(args.file) else check_input_file(args.file, "file")
    kind = detect(path)
    if kind is None:
        from rowbook.file_kinds import load

        load(path)  # raises, listing the kinds rowbook reads
    if kind.format != "gguf":
        print(f"{path}: {kind.name}\nread it with {kind.reader}")
        return 0
    from rowbook.gguf import read_gguf

    print(describe_gguf(read_gguf(path)))
    return 0


def register(commands: Any) -> None:
    p = add_command(
        commands,
        "inspect",
        run=run_inspect,
        help="say what a file is; for a GGUF model, its metadata, tensors and tokenizer",
        description="Recognise FILE by its content (as rowbook.load does) and say what it is and "
        "what reads it. A GGUF file (llama.cpp, Ollama, LM Studio) is described whole: its "
        "metadata with their types, every tensor with its type, shape and bytes as stored, and "
        "the tokenizer it holds.",
        examples=[
            "rowbook inspect model.gguf",
            "rowbook neighbors model.gguf ' the'  # the GGUF's token table",
        ],
    )
    add_positionals(p, FILE="the file to describe")
