"""One loader for every file: ``rowbook.load(path)`` recognises a file by its content.

One file over 400 lines on purpose: it is the one table of kinds, each entry beside the
detector and the opener it names, read top to bottom as :func:`load` reads it.

:data:`KINDS` is the table of every kind of file rowbook writes or reads. Each entry is a
:class:`FileKind`: a **detector** that looks at a few bytes or fields of the file (a
:class:`Head`, which reads them once, on demand) and the **function that opens** the kind,
or ``None`` for a kind rowbook recognises but does not open, with ``reader`` saying which
function does. :func:`load` opens the first kind whose detector answers yes; :func:`detect`
only names it. The suffix is never looked at, so a renamed file loads as what it is.

A file of no known kind is refused in one line that lists the kinds; a file of a known kind
that its opener refuses (damaged, hostile) is refused by the opener, naming the file and the
field or line.

Adding a kind is one entry in :data:`KINDS`: put it before any entry that would also claim
its files (the table is read top to bottom), give it a detector that reads only what it
needs from the :class:`Head` (``raw`` / ``text`` bytes, ``npz_kind``, ``safetensors_meta``,
``fasttext_args``, ``json``, ``lines``, ``names`` for a folder) and its opener; add a sample
file of it to ``tests/test_file_kinds.py`` and to the hostile-file suite
(``tests/hostile/conftest.py``).
"""

from __future__ import annotations

import json
import os
import re
import struct
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from rowbook.corpus_files import check_regular_file, open_binary

__all__ = [
    "KINDS",
    "TOKENIZER_FILES",
    "FileKind",
    "Head",
    "detect",
    "load",
    "load_tokenizer",
    "tokenizer_file",
]

PathLike = str | os.PathLike[str]

_HEAD_BYTES = 1 << 16  # what detectors see of a file's start
_META = "__rowbook_meta__"
_META_BYTES = 64 << 20  # a rowbook archive's JSON document, read for its kind
_SAFETENSORS_HEADER = 100 << 20  # safetensors' own limit on its JSON header
_FASTTEXT_MAGIC = 793712314
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f]")  # no text file starts with these
_WORDPIECE_MARKS = (b"[UNK]", b"[PAD]", b"[CLS]", b"[SEP]", b"[MASK]", b"<unk>")
_FAISS_FOURCC = (b"IHNf", b"IwFl", b"IxFI", b"IHNs", b"IwPQ", b"IwSq", b"IxF2", b"IHfP", b"IxMp")


class Head:
    """What the detectors look at, each part read once and only when a detector asks.

    ``raw``: the first 64 KiB as stored; ``text``: the first 64 KiB decompressed (gzip,
    bzip2, xz); ``lines``: the complete lines of ``text``; ``npz_kind``: the ``kind`` of a
    rowbook ``.npz`` (``""`` for another zip); ``safetensors_meta``; ``fasttext_args``
    (``(model, loss)`` codes and whether it is quantised); ``json``: the parsed document of a
    JSON file (a JSON file that does not parse raises its ``ValueError``, naming the line);
    ``names``: a folder's entries.
    """

    def __init__(self, path: PathLike) -> None:
        self.path = Path(path)
        self.is_dir = self.path.is_dir()
        if not self.is_dir:
            check_regular_file(self.path, "file")
        self.size = 0 if self.is_dir else self.path.stat().st_size

    @cached_property
    def raw(self) -> bytes:
        if self.is_dir:
            return b""
        with open(self.path, "rb") as f:
            return f.read(_HEAD_BYTES)

    @cached_property
    def text(self) -> bytes:
        if self.is_dir:
            return b""
        try:
            with open_binary(self.path) as f:
                return f.read(_HEAD_BYTES)
        except (ValueError, OSError, EOFError):  # corrupt compressed data: not a text file
            return self.raw

    @cached_property
    def lines(self) -> list[bytes]:
        """The complete lines at the start of :attr:`text` (without their ``\\n``)."""
        body = self.text
        if len(body) == _HEAD_BYTES:
            body = body[: body.rfind(b"\n") + 1]
        return body.splitlines()

    @cached_property
    def npz_kind(self) -> str | None:
        """The kind of a rowbook ``.npz`` (``save_state``'s ``kind``); ``""`` for a zip archive
        without rowbook's document, ``"?"`` for a zip archive or document that cannot be
        read (cut short, damaged), ``None`` for a file that is not a zip archive."""
        if not self.raw.startswith(b"PK\x03\x04"):
            return None
        from rowbook._npz import peek_text

        try:
            text = peek_text(self.path, _META, _META_BYTES // 4)  # cut short: not JSON, "?"
            if text is None:
                return ""
            meta = json.loads(text)
        except (ValueError, OSError, zipfile.BadZipFile, EOFError, RuntimeError, TypeError):
            return "?"
        kind = meta.get("kind") if isinstance(meta, dict) else None
        return kind if isinstance(kind, str) and kind not in ("", "?") else "?"

    @cached_property
    def safetensors_meta(self) -> dict[str, Any] | None:
        """The ``__metadata__`` of a safetensors file (``{}`` if it has none), else ``None``."""
        if len(self.raw) < 10:
            return None
        (length,) = struct.unpack("<Q", self.raw[:8])
        if not (2 <= length <= min(_SAFETENSORS_HEADER, self.size - 8)):
            return None
        if self.raw[8:9] != b"{":
            return None
        with open(self.path, "rb") as f:
            f.seek(8)
            header = f.read(length)
        try:
            document = json.loads(header)
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(document, dict):
            return None
        meta = document.get("__metadata__", {})
        return meta if isinstance(meta, dict) else {}

    @cached_property
    def fasttext_args(self) -> tuple[int, int, bool] | None:
        """``(model, loss, quantised)`` of a fastText ``.bin`` / ``.ftz`` (fastText's codes:
        model 1 cbow, 2 skipgram, 3 supervised; loss 1 hs, 2 ns, 3 softmax, 4 ova)."""
        if len(self.raw) < 64 or struct.unpack("<i", self.raw[:4])[0] != _FASTTEXT_MAGIC:
            return None
        _, _, _, _, _, _, loss, model = struct.unpack("<8i", self.raw[8:40])
        return model, loss, model == 3 and _quantised(self.path)

    @cached_property
    def json(self) -> Any:
        """The parsed JSON document, or ``None`` for a file that does not start like one."""
        start = self.text.lstrip()[:2]
        if start[:1] not in (b"{", b"[") or (start[:1] == b"[" and start[1:].isalpha()):
            return None  # "[PAD]" starts BERT's vocab.txt, not a JSON array
        from rowbook.io import read_json

        return read_json(self.path, "JSON")

    @cached_property
    def names(self) -> list[str]:
        """A folder's entries, sorted (``[]`` for a file)."""
        return sorted(os.listdir(self.path)) if self.is_dir else []


def _quantised(path: Path) -> bool:
    """Whether a fastText model's input matrix is quantised (its ``quant`` flag, the byte
    after the dictionary, which is walked entry by entry), as ``.ftz`` files are."""
    import mmap

    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        size, _, _, _, prune = struct.unpack_from("<3i2q", data, 4 + 4 + 56)
        pos = 4 + 4 + 56 + 28
        for _ in range(max(size, 0)):
            end = data.find(b"\0", pos)
            if end < 0:
                return False
            pos = end + 10  # NUL, int64 count, int8 type
        pos += 8 * max(prune, 0)  # int32 pairs of the pruned index
        return pos < len(data) and data[pos] != 0


@dataclass(frozen=True)
class FileKind:
    """A kind of file: how to recognise it and how to open it.

    ``name`` says what the file is ("word2vec text vectors"); ``detect(head)`` answers from
    a :class:`Head`; ``open(path, mmap)`` returns the object (``None``: rowbook recognises the
    kind but does not open it; ``mmap`` asks for its tables mapped where the kind can be);
    ``reader`` is the call that opens it, said in messages;
    ``format`` is the vectors format name of the command line (``rowbook convert --from``),
    for the kinds it reads as vectors; ``tokenizer``, for the kinds that hold a tokenizer
    (what :func:`load_tokenizer` opens), the tokenizer of the opened object (the object
    itself, a text pipeline's ``tokenizer_``, a GGUF file's).
    """

    name: str
    detect: Callable[[Head], bool]
    open: Callable[[Path, bool], Any] | None
    reader: str
    format: str | None = None
    tokenizer: Callable[[Any], Any] | None = None


# -- openers (imported on use: recognising a file imports none of the models) ----------------


def _call(reader: Callable[[], Callable[[Path], Any]]) -> Callable[[Path, bool], Any]:
    """An opener calling ``reader()`` (a function of the path, reached through the package
    that defines it, imported only when a file of the kind is opened) on the path; it reads,
    never maps."""

    def open_(path: Path, mmap: bool) -> Any:
        return reader()(path)

    return open_


def _text() -> Any:
    import rowbook.text

    return rowbook.text


def _models() -> Any:
    import rowbook.models

    return rowbook.models


def _vectors_class() -> Any:
    from rowbook.vectors import Vectors

    return Vectors


def _cooccurrence(path: Path, mmap: bool) -> Any:
    from rowbook.data.cooccurrence_file import load_cooccurrence

    return load_cooccurrence(path)


def _gguf(path: Path, mmap: bool) -> Any:
    from rowbook.gguf import read_gguf

    return read_gguf(path)


def _itself(found: Any) -> Any:
    return found


def _gguf_tokenizer(file: Any) -> Any:
    from rowbook.gguf import gguf_tokenizer

    return gguf_tokenizer(file)


def _model(path: Path, mmap: bool) -> Any:
    from rowbook.models import load

    return load(path, mmap=mmap)


def _vectors(path: Path, mmap: bool) -> Any:
    from rowbook.vectors import Vectors

    return Vectors.load(path, mmap=mmap)


def _gpt2_files(vocab: Path, merges: Path, given: Path) -> Any:
    """GPT-2's byte-level BPE from ``vocab.json`` and ``merges.txt``, one of them ``given``."""
    from rowbook.text import ByteLevelBPE

    other = merges if given == vocab else vocab
    if not other.is_file():
        raise ValueError(
            f"{given} looks like GPT-2's {given.name}, but there is no {other.name} beside it"
        )
    return ByteLevelBPE.from_files(vocab, merges)


def _gpt2_from_vocab(path: Path, mmap: bool) -> Any:
    return _gpt2_files(path, path.with_name("merges.txt"), path)


def _gpt2_from_merges(path: Path, mmap: bool) -> Any:
    return _gpt2_files(path.with_name("vocab.json"), path, path)


def _unreadable_npz(path: Path, mmap: bool) -> Any:
    """Raises what is wrong with a zip archive (or rowbook document) that cannot be read."""
    from rowbook.io import load_state

    load_state(path, kind="?")
    raise ValueError(f"{path}: a rowbook .npz whose document names no kind")


def _fasttext_vectors(path: Path, mmap: bool) -> Any:
    from rowbook.vectors import SubwordVectors

    return SubwordVectors.load_fasttext(path, mmap=mmap)


def _word2vec(binary: bool, glove: bool = False) -> Callable[[Path, bool], Any]:
    def open_(path: Path, mmap: bool) -> Any:
        from rowbook.vectors import Vectors

        return Vectors.load_word2vec_format(path, binary=binary, no_header=glove, mmap=mmap)

    return open_


# -- detectors ----------------------------------------------------------------------------------


def _numbers(fields: list[bytes]) -> bool:
    try:
        [float(x) for x in fields]
    except ValueError:
        return False
    return bool(fields)


def _word2vec_header(head: Head) -> tuple[int, int] | None:
    """``(n_rows, dim)`` of a first line ``"n d"``, else ``None``."""
    first = head.text.split(b"\n", 1)[0].split()
    if len(first) != 2 or not all(f.isdigit() for f in first) or int(first[1]) < 1:
        return None
    return int(first[0]), int(first[1])


def _looks_binary(data: bytes) -> bool:
    """A NUL byte, or bytes that are not UTF-8 (a character cut off at the end allowed)."""
    if b"\x00" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as err:
        return err.end < len(data) - 3 or err.reason != "unexpected end of data"
    return False


def _is_word2vec_binary(head: Head) -> bool:
    return _word2vec_header(head) is not None and _looks_binary(head.text.partition(b"\n")[2])


def _is_word2vec_text(head: Head) -> bool:
    """A header ``"n d"`` over text (whether the rows hold what it says is the reader's to
    check, naming the line)."""
    return _word2vec_header(head) is not None and not _is_word2vec_binary(head)


def _rows(head: Head) -> list[list[bytes]]:
    """The fields of the first few non-blank lines of a text file (none for binary data)."""
    if _looks_binary(head.text):
        return []
    return [line.split() for line in head.lines[:5] if line.strip()]


def _is_counts_file(head: Head) -> bool:
    rows = _rows(head)
    return bool(rows) and all(len(r) == 2 and r[1].isdigit() for r in rows)


def _is_glove(head: Head) -> bool:
    rows = _rows(head)
    widths = {len(r) for r in rows}
    return (
        bool(rows) and len(widths) == 1 and widths.pop() >= 2 and all(_numbers(r[1:]) for r in rows)
    )


def _json_format(head: Head, value: str, kind: str | None = None) -> bool:
    document = head.json
    return (
        isinstance(document, dict)
        and document.get("format") == value
        and (kind is None or document.get("kind") == kind)
    )


def _tokenizer_json(head: Head) -> str | None:
    """The model type of a Hugging Face ``tokenizer.json`` (``"BPE"``, ``"WordPiece"``, ...)."""
    document = head.json
    if not isinstance(document, dict) or not isinstance(document.get("model"), dict):
        return None
    if "added_tokens" not in document and "pre_tokenizer" not in document:
        return None
    kind = document["model"].get("type")
    return kind if isinstance(kind, str) else "an unnamed model"


def _byte_level(head: Head) -> bool:
    """Whether a tokenizer.json splits into bytes (a ``ByteLevel`` pre-tokenizer or decoder)."""
    parts = (head.json.get("pre_tokenizer"), head.json.get("decoder"))
    return any('"ByteLevel"' in json.dumps(part) for part in parts)


def _is_gpt2_vocab(head: Head) -> bool:
    document = head.json
    return (
        isinstance(document, dict)
        and bool(document)
        and all(isinstance(v, int) and not isinstance(v, bool) for v in document.values())
    )


def _is_sentencepiece(head: Head) -> bool:
    """A SentencePiece ``ModelProto``: binary (not UTF-8, or control characters early), its
    first field the pieces (protobuf field 1, length-delimited: byte ``0x0a``); the loader
    checks the rest."""
    start = head.raw[:64]
    return start[:1] == b"\x0a" and (_looks_binary(start) or bool(_CONTROL.search(start)))


def _is_tiktoken(head: Head) -> bool:
    """tiktoken's ``.tiktoken``: lines of base64, a space and a rank."""
    from rowbook.text.bpe.tiktoken_files import is_tiktoken_file

    return not _looks_binary(head.text) and is_tiktoken_file(head.text)


def _is_wordpiece_vocab(head: Head) -> bool:
    """BERT's ``vocab.txt``: text of one token a line (no whitespace in a line), holding one
    of its special tokens or a ``##`` continuation piece."""
    if _looks_binary(head.text):
        return False
    lines = [line.rstrip(b"\r") for line in head.lines]
    return (
        len(lines) >= 2
        and all(line.split() == [line] for line in lines)  # one token, no whitespace
        and any(line in _WORDPIECE_MARKS or line.startswith(b"##") for line in lines)
    )


def _rowbook_tokenizer(what: str, name: str) -> FileKind:
    """The kind of the file the tokenizer class ``name`` of :mod:`rowbook.text` saves
    (``{"format": "rowbook.<name>", ...}``), opened by its ``load``."""
    return FileKind(
        f"a rowbook {what} (.json)",
        lambda h: _json_format(h, f"rowbook.{name}"),
        _call(lambda: getattr(_text(), name).load),
        f"{name}.load(path)",
        tokenizer=_itself,
    )


def _hf_tokenizer(what: str, name: str, detect: Callable[[Head], bool]) -> FileKind:
    """The kind of a Hugging Face ``tokenizer.json`` that ``detect`` tells apart, opened by the
    ``from_tokenizer_json`` of the tokenizer class ``name`` of :mod:`rowbook.text`."""
    return FileKind(
        f"a Hugging Face tokenizer.json ({what})",
        detect,
        _call(lambda: getattr(_text(), name).from_tokenizer_json),
        f"{name}.from_tokenizer_json(path)",
        tokenizer=_itself,
    )


KINDS: tuple[FileKind, ...] = (
    # folders, by the files they hold
    FileKind(
        "a Hugging Face checkpoint folder (config.json + safetensors)",
        lambda h: (
            "config.json" in h.names
            and ("model.safetensors" in h.names or "model.safetensors.index.json" in h.names)
        ),
        _call(lambda: _models().TransformerLM.from_hf),
        "TransformerLM.from_hf(folder); its token table alone: rowbook.models.language_model.hf_checkpoint."
        "hf_vectors(folder)",
    ),
    FileKind(
        "a TensorBoard projector folder",
        lambda h: "projector_config.pbtxt" in h.names,
        _call(lambda: _vectors_class().load_projector),
        "Vectors.load_projector(folder)",
    ),
    # rowbook's own .npz files, by the kind their JSON document names
    FileKind(
        "a rowbook model (.npz)",
        lambda h: h.npz_kind == "model",
        _model,
        "rowbook.load(path), or the model class's load(path)",
    ),
    FileKind(
        "rowbook vectors (.npz, plain or quantised)",
        lambda h: h.npz_kind in ("vectors", "quantized vectors"),
        _vectors,
        "Vectors.load(path)",
        "npz",
    ),
    FileKind(
        "a cache of a fastText model's vectors (.npz)",
        lambda h: h.npz_kind == "fasttext cache",
        None,
        "SubwordVectors.load_fasttext(source, mmap=True), on the .bin it was made from",
    ),
    FileKind(
        "rowbook co-occurrence counts (.npz)",
        lambda h: h.npz_kind == "cooccurrence",
        _cooccurrence,
        "rowbook.data.load_cooccurrence(path)",
    ),
    FileKind(
        "a rowbook training checkpoint (.npz)",
        lambda h: h.npz_kind == "checkpoint",
        None,
        "Trainer(...).fit(data, resume=path), with the model and settings it was saved from",
    ),
    FileKind(
        "a rowbook optimizer state (.npz)",
        lambda h: h.npz_kind == "optimizer",
        None,
        "optimizer.load(path), on an optimizer over the same parameters",
    ),
    FileKind(
        "a rowbook .npz of a kind this rowbook does not know",
        lambda h: h.npz_kind not in (None, "", "?"),
        None,
        "the newer rowbook that wrote it",
    ),
    FileKind(
        "a zip archive that cannot be read",
        lambda h: h.npz_kind == "?",
        _unreadable_npz,
        "nothing: the file is cut short or damaged",
    ),
    FileKind(
        "rowbook vectors (safetensors)",
        lambda h: (h.safetensors_meta or {}).get("kind") == "vectors",
        _vectors,
        "Vectors.load(path)",
        "safetensors",
    ),
    # fastText's own model files
    FileKind(
        "a fastText model (.bin, skip-gram or CBOW, negative sampling)",
        lambda h: h.fasttext_args is not None and h.fasttext_args[:2] in ((1, 2), (2, 2)),
        _call(lambda: _models().FastText.load_fasttext),
        "FastText.load_fasttext(path)",
        "fasttext",
    ),
    FileKind(
        "a fastText model (.bin, skip-gram or CBOW)",
        lambda h: h.fasttext_args is not None and h.fasttext_args[0] in (1, 2),
        _fasttext_vectors,
        "SubwordVectors.load_fasttext(path)",
        "fasttext",
    ),
    FileKind(
        "a quantised fastText supervised model (.ftz)",
        lambda h: h.fasttext_args is not None and h.fasttext_args[2],
        _call(lambda: _models().FastTextClassifier.load_fasttext),
        "FastTextClassifier.load_fasttext(path)",
    ),
    FileKind(
        "a fastText supervised model (.bin)",
        lambda h: h.fasttext_args is not None and h.fasttext_args[0] == 3,
        _call(lambda: _models().FastTextClassifier.load_fasttext),
        "FastTextClassifier.load_fasttext(path)",
    ),
    # vectors as text or binary rows
    FileKind(
        "word2vec binary vectors",
        _is_word2vec_binary,
        _word2vec(binary=True),
        "Vectors.load_word2vec_format(path, binary=True)",
        "binary",
    ),
    FileKind(
        "word2vec text vectors",
        _is_word2vec_text,
        _word2vec(binary=False),
        "Vectors.load_word2vec_format(path)",
        "text",
    ),
    # JSON documents: rowbook's tokenizers and vocabularies, Hugging Face's
    _rowbook_tokenizer("byte-level BPE", "ByteLevelBPE"),
    _rowbook_tokenizer("WordPiece", "WordPiece"),
    _rowbook_tokenizer("Unigram", "Unigram"),
    _rowbook_tokenizer("byte-fallback BPE", "ByteFallbackBPE"),
    FileKind(
        "a rowbook Vocab (.json)",
        lambda h: _json_format(h, "rowbook.Vocab"),
        _call(lambda: _text().Vocab.load),
        "Vocab.load(path)",
    ),
    FileKind(
        "a rowbook text pipeline (.json)",
        lambda h: _json_format(h, "rowbook", "text_pipeline"),
        _call(lambda: _text().TextPipeline.load),
        "TextPipeline.load(path)",
        tokenizer=lambda pipeline: pipeline.tokenizer_,
    ),
    _hf_tokenizer(
        "byte-level BPE", "ByteLevelBPE", lambda h: _tokenizer_json(h) == "BPE" and _byte_level(h)
    ),
    _hf_tokenizer(
        "character-level BPE, byte fallback",
        "ByteFallbackBPE",
        lambda h: _tokenizer_json(h) == "BPE" and not _byte_level(h),
    ),
    _hf_tokenizer("WordPiece", "WordPiece", lambda h: _tokenizer_json(h) == "WordPiece"),
    _hf_tokenizer("Unigram", "Unigram", lambda h: _tokenizer_json(h) == "Unigram"),
    FileKind(
        "a Hugging Face tokenizer.json",
        lambda h: _tokenizer_json(h) is not None,
        None,
        "tokenizers.Tokenizer.from_file(path); rowbook opens byte-level BPE, WordPiece and "
        "Unigram ones",
    ),
    FileKind(
        "a Hugging Face config.json",
        lambda h: isinstance(h.json, dict) and isinstance(h.json.get("model_type"), str),
        None,
        "TransformerLM.from_hf(folder), on the folder holding it and its model.safetensors",
    ),
    FileKind(
        "a GPT-2 vocab.json (token -> id)",
        _is_gpt2_vocab,
        _gpt2_from_vocab,
        "ByteLevelBPE.from_files(vocab_json, merges_txt), with its merges.txt",
        tokenizer=_itself,
    ),
    # other binary files rowbook writes or reads
    FileKind(
        "a GGUF file (llama.cpp, Ollama: metadata, tokenizer, tensors)",
        lambda h: h.raw[:4] == b"GGUF",
        _gguf,
        "rowbook.gguf.read_gguf(path); its token table: rowbook.gguf.gguf_vectors(path)",
        "gguf",
        tokenizer=_gguf_tokenizer,
    ),
    FileKind(
        "a faiss index",
        lambda h: h.raw[:4] in _FAISS_FOURCC,
        None,
        "Vectors.load_index(path), on the vectors it was built for",
    ),
    FileKind(
        "a SentencePiece model (.model)",
        _is_sentencepiece,
        _call(lambda: _text().load_model),
        "rowbook.text.load_model(path)",
        tokenizer=_itself,
    ),
    FileKind(
        "a safetensors file",
        lambda h: h.safetensors_meta is not None,
        None,
        "rowbook.io.load_safetensors(path), which returns its arrays",
    ),
    FileKind(
        "a NumPy .npz archive not written by rowbook",
        lambda h: h.npz_kind == "",
        None,
        "numpy.load(path, allow_pickle=False)",
    ),
    # plain text, last: the loosest detectors
    FileKind(
        "a GPT-2 merges.txt",
        lambda h: h.text.startswith(b"#version"),
        _gpt2_from_merges,
        "ByteLevelBPE.from_files(vocab_json, merges_txt), with its vocab.json",
        tokenizer=_itself,
    ),
    FileKind(
        "a WordPiece vocab.txt (one token a line)",
        _is_wordpiece_vocab,
        _call(lambda: _text().WordPiece.from_vocab),
        "WordPiece.from_vocab(path)",
        tokenizer=_itself,
    ),
    FileKind(
        "a tiktoken rank file (.tiktoken)",
        lambda h: _is_tiktoken(h),
        _call(lambda: _text().ByteLevelBPE.from_tiktoken),
        "ByteLevelBPE.from_tiktoken(path, encoding)",
        tokenizer=_itself,
    ),
    FileKind(
        "a vocabulary file of counts ('key count' lines)",
        _is_counts_file,
        None,
        "Vectors.load_word2vec_format(vectors_path, fvocab=path), beside its vectors",
    ),
    FileKind(
        "GloVe text vectors",
        _is_glove,
        _word2vec(binary=False, glove=True),
        "Vectors.load_glove(path)",
        "glove",
    ),
)


def detect(path: PathLike) -> FileKind | None:
    """The kind of the file at ``path`` (the first of :data:`KINDS` that claims it), or
    ``None``. A missing file is ``FileNotFoundError``; a FIFO or device ``ValueError``."""
    head = Head(path)
    return next((kind for kind in KINDS if _claims(kind, head)), None)


def _claims(kind: FileKind, head: Head) -> bool:
    """``kind.detect(head)``; a detector that cannot read what it looks for (a file cut
    short, a field of another type) says no. A JSON file that does not parse is the one
    failure that propagates: its error names the line."""
    try:
        return bool(kind.detect(head))
    except (struct.error, IndexError, KeyError, TypeError, AttributeError, UnicodeDecodeError):
        return False


def load(path: PathLike, *, mmap: bool = False) -> Any:
    """The object a file holds, whatever rowbook file it is, recognised by its content.

    A saved model or checkpoint gives the model; word2vec, GloVe, fastText and rowbook
    vectors files give :class:`~rowbook.vectors.Vectors` (a fastText ``.bin`` gives the
    :class:`~rowbook.models.FastText` model, whose ``.vectors`` answer for any word); a
    tokenizer file gives the tokenizer (:class:`~rowbook.text.ByteLevelBPE`,
    :class:`~rowbook.text.Vocab`, :class:`~rowbook.text.TextPipeline`); a co-occurrence file
    its :class:`~rowbook.data.CountedCooccurrence`; a supervised fastText ``.bin`` / ``.ftz``
    the :class:`~rowbook.models.FastTextClassifier`; a quantised table
    :class:`~rowbook.vectors.QuantizedVectors`. Two kinds are folders: a Hugging Face
    checkpoint (``config.json`` + safetensors) gives the
    :class:`~rowbook.models.TransformerLM`, a TensorBoard projector folder its
    :class:`~rowbook.vectors.Vectors`. The kinds are listed in :data:`KINDS`.

    ``mmap=True`` maps the tables of the kinds that can be (rowbook models and vectors,
    safetensors; word2vec, GloVe and fastText vectors through a converted cache, see
    :mod:`rowbook.vectors.mapped`); the other kinds are read as usual.

    A kind rowbook recognises but does not open raises ``ValueError`` saying what the file
    is and which function reads it; a file of no known kind raises ``ValueError`` listing
    the kinds.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from rowbook.vectors import Vectors
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "renamed.dat"  # the suffix says nothing
    >>> Vectors(["king", "queen"], [[1.0, 0.1], [0.9, 0.2]]).save_word2vec_format(path)
    >>> load(path)
    Vectors(n_keys=2, vector_size=2)
    >>> _ = path.write_text("just some text\\n")
    >>> load(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: .../renamed.dat is not a file rowbook knows: it reads a Hugging Face checkpoint ...
    """
    kind = detect(path)
    if kind is None:
        if Path(path).is_dir():
            raise ValueError(f"{path} is a folder of no kind rowbook knows: it reads {_known()}")
        raise ValueError(f"{path} is not a file rowbook knows: it reads {_known()}")
    if kind.open is None:
        raise ValueError(f"{path} is {kind.name}; read it with {kind.reader}")
    return kind.open(Path(path), bool(mmap))


#: What :func:`load_tokenizer` looks for in a folder, in this order (a Hugging Face model
#: folder holds one of them), then the one ``*.model`` file in it.
TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "vocab.txt")


def tokenizer_file(path: PathLike) -> tuple[Path, FileKind]:
    """The tokenizer file at ``path`` (or in the folder ``path``) and its kind; a
    ``ValueError`` saying what the file is when it holds no tokenizer rowbook reads.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "vocab.txt").write_text("[UNK]\\n[CLS]\\n[SEP]\\nhello\\n")
    >>> tokenizer_file(folder)[1].name
    'a WordPiece vocab.txt (one token a line)'
    """
    path = Path(path)
    if path.is_dir():
        found = [path / name for name in TOKENIZER_FILES if (path / name).is_file()]
        models = sorted(path.glob("*.model"))
        if not found and len(models) != 1:
            several = "; it has several .model files" if models else ""
            raise ValueError(
                f"folder {path} holds no tokenizer rowbook reads ({', '.join(TOKENIZER_FILES)} "
                f"or one *.model file){several}"
            )
        path = found[0] if found else models[0]
    check_regular_file(path, "tokenizer")
    if path.stat().st_size == 0:
        raise ValueError(f"{path} is empty; a tokenizer file holds a vocabulary")
    kind = detect(path)
    if kind is None:
        raise ValueError(f"{path} is no tokenizer file rowbook knows: it reads {_tokenizers()}")
    if kind.tokenizer is None:
        raise ValueError(f"{path} is {kind.name}, not a tokenizer; read it with {kind.reader}")
    return path, kind


def load_tokenizer(path: PathLike) -> Any:
    """The tokenizer in ``path`` (a file, or a model folder holding one), whatever its
    format: a :class:`~rowbook.text.ByteLevelBPE`, :class:`~rowbook.text.ByteFallbackBPE`,
    :class:`~rowbook.text.WordPiece`, :class:`~rowbook.text.Unigram` or
    :class:`~rowbook.text.SentencePieceBPE` (a GGUF file's, a text pipeline's).

    The format is decided by the content, as :func:`load` decides it (the tokenizer kinds
    of :data:`KINDS`), never by the file's name.
    """
    file, kind = tokenizer_file(path)
    assert kind.open is not None and kind.tokenizer is not None  # every tokenizer kind opens
    return kind.tokenizer(kind.open(file, False))


def _tokenizers() -> str:
    return ", ".join(kind.name for kind in KINDS if kind.tokenizer is not None)


def _known() -> str:
    return ", ".join(kind.name for kind in KINDS)
