"""``load_tokenizer(path)``: any tokenizer file rowbook reads, recognised by what it holds.

The name of a file says little (``tokenizer.model``, ``spiece.model``, ``bpe.json``), so
:func:`identify` looks inside:

* bytes that do not start a JSON value and parse as a protobuf ``ModelProto``: a
  SentencePiece ``.model`` (Unigram or BPE);
* JSON with ``"format": "rowbook.ByteLevelBPE" / "rowbook.WordPiece" / "rowbook.Unigram"``:
  rowbook's own files; ``"kind": "text_pipeline"``: a pipeline file, whose tokenizer is
  returned;
* JSON with a ``"model"`` object: a Hugging Face ``tokenizer.json``, by its model's ``type``
  (``BPE``: byte-level when a ``ByteLevel`` step splits it into bytes, else a
  character-level BPE with byte fallback (Llama 2, Mistral); ``WordPiece``, ``Unigram``);
* JSON mapping tokens to ids: GPT-2's ``vocab.json``, read with the ``merges.txt`` beside it;
* text whose lines are base64, a space and a rank: a tiktoken ``.tiktoken`` file (its
  encoding told by its name or its number of ranks);
* text whose first line is ``#version`` or two tokens: a ``merges.txt``, read with the
  ``vocab.json`` beside it;
* other text, one token per line: BERT's ``vocab.txt``;
* a folder: its ``tokenizer.json``, else ``vocab.json`` + ``merges.txt``, else ``vocab.txt``,
  else the one ``*.model`` file in it (as a Hugging Face model folder holds them).

:func:`identify` returns what it found in words; the error for a file that is none of these
says what it looks like instead.

Examples
--------
>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "vocab.txt").write_text("[UNK]\\n[CLS]\\n[SEP]\\nhello\\n")
>>> identify(folder / "vocab.txt").description
'a WordPiece vocab.txt (4 lines)'
>>> load_tokenizer(folder).encode("Hello").tokens
['[CLS]', 'hello', '[SEP]']
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rowbook.corpus_files import check_regular_file
from rowbook.io import read_json
from rowbook.text.bpe.tiktoken_files import is_tiktoken_file

__all__ = ["Found", "identify", "is_byte_level", "load_tokenizer"]

_HEAD = 1 << 16  # bytes looked at to tell text from protobuf
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f]")  # no text file starts with these; a .model does


@dataclass(frozen=True)
class Found:
    """What :func:`identify` found: a ``kind`` (``"sentencepiece"``, ``"rowbook"``,
    ``"pipeline"``, ``"tokenizer.json"``, ``"gpt2"``, ``"tiktoken"``, ``"vocab.txt"``), the files to read and
    a description in words."""

    kind: str
    paths: tuple[Path, ...]
    description: str


def _folder(path: Path) -> Found:
    for name in ("tokenizer.json",):
        if (path / name).is_file():
            return identify(path / name)
    if (path / "vocab.json").is_file() and (path / "merges.txt").is_file():
        return identify(path / "vocab.json")
    if (path / "vocab.txt").is_file():
        return identify(path / "vocab.txt")
    models = sorted(path.glob("*.model"))
    if len(models) == 1:
        return identify(models[0])
    raise ValueError(
        f"folder {path} holds no tokenizer rowbook reads (tokenizer.json, vocab.json + "
        f"merges.txt, vocab.txt or one *.model file){'; it has several .model files' if models else ''}"
    )


def _json_kind(path: Path, d: Any) -> Found:
    if isinstance(d, dict) and str(d.get("format", "")).startswith("rowbook."):
        name = d["format"][len("rowbook.") :]
        if name in ("ByteLevelBPE", "ByteFallbackBPE", "WordPiece", "Unigram"):
            return Found("rowbook", (path,), f"a rowbook {name} file")
        raise ValueError(
            f"{path} is a rowbook {name} file, not a tokenizer; read it with its own loader"
        )
    if isinstance(d, dict) and d.get("kind") == "text_pipeline":
        return Found("pipeline", (path,), "a rowbook text pipeline file")
    if isinstance(d, dict) and isinstance(d.get("model"), dict):
        kind = d["model"].get("type", "BPE")
        if kind in ("BPE", "WordPiece", "Unigram"):
            return Found(
                "tokenizer.json", (path,), f"a Hugging Face tokenizer.json with a {kind} model"
            )
        raise ValueError(
            f"{path} is a Hugging Face tokenizer.json with a {kind!r} model; rowbook reads "
            "BPE (byte-level), WordPiece and Unigram models"
        )
    if isinstance(d, dict) and d and all(isinstance(v, int) for v in list(d.values())[:100]):
        merges = path.with_name("merges.txt")
        if not merges.is_file():
            raise ValueError(
                f"{path} looks like GPT-2's vocab.json, but there is no merges.txt beside it"
            )
        return Found("gpt2", (path, merges), f"GPT-2's vocab.json + merges.txt ({len(d)} tokens)")
    raise ValueError(
        f"{path} is JSON but no tokenizer file rowbook knows: no 'model', no rowbook "
        f"'format', not a token -> id map (it holds a {type(d).__name__})"
    )


def identify(path: str | os.PathLike) -> Found:
    """What ``path`` holds (see the module docstring); ``ValueError`` saying what it looks like
    when it is no tokenizer rowbook reads."""
    path = Path(path)
    if path.is_dir():
        return _folder(path)
    check_regular_file(path, "tokenizer")
    with open(path, "rb") as f:
        head = f.read(_HEAD)
    if not head:
        raise ValueError(f"{path} is empty; a tokenizer file holds a vocabulary")
    start = head.lstrip()[:1]
    if start == b"{":
        return _json_kind(path, read_json(path, "tokenizer"))
    if start == b"[":  # a JSON array, or a vocab.txt starting with "[PAD]"
        second = head.lstrip()[1:2]
        try:
            return _json_kind(path, read_json(path, "tokenizer"))
        except ValueError:
            if not second.isalpha():  # "[[", "[{", '["', "[1": JSON that is too deep or broken
                raise
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or _CONTROL.search(text[:64]):
        from rowbook.text.sentencepiece.proto import read_model

        try:
            model = read_model(path.read_bytes(), f"{path}")
        except ValueError as err:
            raise ValueError(
                f"{path} is binary but not a SentencePiece .model file ({err})"
            ) from None
        kind = {1: "Unigram", 2: "BPE"}.get(
            model.trainer["model_type"], str(model.trainer["model_type"])
        )
        return Found(
            "sentencepiece", (path,), f"a SentencePiece {kind} model ({len(model.pieces)} pieces)"
        )
    if is_tiktoken_file(head):
        return Found("tiktoken", (path,), "a tiktoken rank file (.tiktoken)")
    first = text.split("\n", 1)[0].rstrip("\r")
    if first.startswith("#version") or (len(first.split(" ")) == 2 and "\t" not in first):
        vocab = path.with_name("vocab.json")
        if not vocab.is_file():
            raise ValueError(
                f"{path} looks like GPT-2's merges.txt, but there is no vocab.json beside it"
            )
        return Found("gpt2", (vocab, path), "GPT-2's vocab.json + merges.txt")
    lines = text.count("\n") + (not text.endswith("\n"))
    more = "+" if len(head) == _HEAD else ""
    return Found("vocab.txt", (path,), f"a WordPiece vocab.txt ({lines}{more} lines)")


def load_tokenizer(path: str | os.PathLike) -> Any:
    """The tokenizer in ``path`` (a file or a model folder), whatever its format: a
    :class:`~rowbook.text.ByteLevelBPE`, :class:`~rowbook.text.WordPiece`,
    :class:`~rowbook.text.Unigram` or :class:`~rowbook.text.SentencePieceBPE`.

    The format is decided by the content (:func:`identify`), never by the file's name.
    """
    from rowbook.text import ByteLevelBPE, TextPipeline, Unigram, WordPiece
    from rowbook.text.bpe.fallback import ByteFallbackBPE
    from rowbook.text.sentencepiece import load_model

    found = identify(path)
    first = found.paths[0]
    if found.kind == "sentencepiece":
        return load_model(first)
    if found.kind == "vocab.txt":
        return WordPiece.from_vocab(first)
    if found.kind == "gpt2":
        return ByteLevelBPE.from_files(*found.paths)
    if found.kind == "tiktoken":
        return ByteLevelBPE.from_tiktoken(first)
    if found.kind == "pipeline":
        return TextPipeline.load(first).tokenizer_
    d = read_json(first, "tokenizer")
    if found.kind == "rowbook":
        cls = {
            "rowbook.ByteLevelBPE": ByteLevelBPE,
            "rowbook.ByteFallbackBPE": ByteFallbackBPE,
            "rowbook.WordPiece": WordPiece,
            "rowbook.Unigram": Unigram,
        }
        return cls[d["format"]].load(first)
    kind = d["model"].get("type", "BPE")
    if kind == "BPE" and not is_byte_level(d):
        return ByteFallbackBPE.from_tokenizer_json(first)
    cls = {"BPE": ByteLevelBPE, "WordPiece": WordPiece, "Unigram": Unigram}[kind]
    return cls.from_tokenizer_json(first)


def is_byte_level(d: dict) -> bool:
    """Whether a ``tokenizer.json`` document splits text into bytes (a ``ByteLevel``
    pre-tokenizer or decoder): a byte-level BPE; else a character-level one."""
    return any('"ByteLevel"' in json.dumps(d.get(key)) for key in ("pre_tokenizer", "decoder"))
