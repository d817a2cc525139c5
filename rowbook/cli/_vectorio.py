"""Vector files on the command line: the format from the content (or ``--from``), load, save.

=========  =============================  =========================================
format     suffix (when writing)          what it is
=========  =============================  =========================================
``npz``    ``.npz``                       rowbook's own (keys, vectors, counts)
``text``   ``.txt``, ``.vec``             word2vec text: header ``n d``, then rows
``binary`` ``.bin``                       word2vec binary (float32 rows)
``glove``  (``.txt`` without a header)    GloVe text: the rows only
``fasttext`` (``.bin`` starting with       Facebook fastText model (read only: word
           fastText's magic number)       vectors, and a vector for any word)
``model``  (any)                          a rowbook model file: its ``.vectors`` (read only)
=========  =============================  =========================================

Text and binary files may be gzip, bzip2 or xz compressed (``vectors.txt.gz``).
Tables inside models are read too: a saved rowbook model (``model.save``, ``rowbook train lm
-o lm.npz``) gives its ``vectors``, and a Hugging Face checkpoint folder (GPT-2, Llama) its
token table, with the tokens of its ``tokenizer.json`` as keys; a GGUF file (llama.cpp,
Ollama) its ``token_embd.weight``, dequantised, keyed by the tokens it holds.
Reading recognises a file by its content, whatever its suffix, as ``rowbook.load`` does
(:mod:`rowbook.file_kinds`, the one table of file kinds); ``--from`` overrides it. A file
that holds no vectors is refused in one line saying what it is.

**Mapped by default when large.** A file of :data:`MAP_FROM_BYTES` (256 MiB) or more is
opened mapped (``--mmap`` / ``--no-mmap`` decide instead): rowbook's ``.npz`` and
safetensors map directly; word2vec, GloVe and fastText files are converted once into a
mapped cache beside them (or in ``--cache-dir``), which later runs open at once (see
:mod:`rowbook.vectors.mapped`); a compressed file is decompressed into its cache once.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rowbook.cli._common import check_input_file

if TYPE_CHECKING:
    from rowbook.vectors import Vectors

__all__ = [
    "FORMATS",
    "FORMAT_NAMES",
    "input_format",
    "load_vectors",
    "output_format",
    "save_vectors",
]

FORMATS = ("npz", "safetensors", "text", "binary", "glove", "fasttext")
FORMAT_NAMES = {
    "npz": "rowbook .npz",
    "safetensors": "safetensors",
    "text": "word2vec text",
    "binary": "word2vec binary",
    "glove": "GloVe text",
    "fasttext": "fastText .bin",
    "model": "the table of a saved rowbook model",
    "hf": "the token table of a Hugging Face checkpoint",
    "gguf": "the token table of a GGUF model",
}
SUFFIXES = {
    ".npz": "npz",
    ".safetensors": "safetensors",
    ".txt": "text",
    ".vec": "text",
    ".bin": "binary",
}
#: Files at least this large are opened mapped unless ``--no-mmap`` says otherwise.
MAP_FROM_BYTES = 256 << 20


def input_format(path: str | Path, given: str | None = None) -> str:
    """The format to read ``path`` with: ``given``, else the vectors format of its kind
    (:func:`rowbook.file_kinds.detect`), or ``"model"`` for a saved model; a file of another
    kind, or of none, is a one-line ``ValueError``."""
    if given is not None:
        return given
    from rowbook.file_kinds import detect, load

    kind = detect(path)
    if kind is not None and kind.format is not None:
        return kind.format
    if kind is not None and kind.name.startswith("a rowbook model"):
        return "model"
    load(path)  # raises what the file is and what reads it, what is wrong with it, or the kinds
    raise ValueError(
        f"{path} is {kind.name}, not word vectors; give a vectors file (.npz, word2vec, "
        "GloVe, fastText .bin) or a saved model"
    )


def output_format(path: str | Path, given: str | None = None, *, flag: str | None = None) -> str:
    """The format to write ``path`` in: ``given``, else its suffix (``ValueError`` if unknown,
    which suggests ``flag`` when the command has an option naming the format)."""
    if given is not None:
        return given
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(
            f"cannot tell the vector format of {path} from its suffix {suffix or '(none)'!r}; "
            "name it .npz (rowbook), .safetensors, .txt or .vec (word2vec text) or .bin (word2vec binary)"
            + (f", or give the format with {flag}" if flag else "")
        )
    return SUFFIXES[suffix]


def load_vectors(
    path: str | Path,
    fmt: str | None = None,
    *,
    unicode_errors: str = "strict",
    mmap: bool | None = False,
    cache_dir: str | Path | None = None,
) -> tuple[Vectors, str]:
    """Read a vectors file; returns the table and the format it was read as.

    ``mmap`` True maps the table, False reads it, None maps a file of :data:`MAP_FROM_BYTES`
    or more. A format that cannot be mapped as it is goes through its cache."""
    from rowbook.vectors import Vectors  # numba: imported by the commands that read vectors

    if fmt is None and Path(path).is_dir():
        from rowbook.models.hf_checkpoint import hf_vectors

        return hf_vectors(path), "hf"
    path = check_input_file(path, "vectors")
    fmt = input_format(path, fmt)
    if mmap is None:
        mmap = path.stat().st_size >= MAP_FROM_BYTES
    if fmt in ("npz", "safetensors"):
        return Vectors.load(path, mmap=mmap), fmt
    if fmt == "model":
        from rowbook.models import load

        return load(path, mmap=mmap).vectors, fmt
    if fmt == "gguf":  # the table dequantised: a quantised table has no mapped form
        from rowbook.gguf import gguf_vectors

        return gguf_vectors(path), fmt
    cached = {"mmap": True, "cache_dir": cache_dir} if mmap else {}
    if fmt == "fasttext":
        from rowbook.vectors import SubwordVectors  # loads rowbook.nn's bag kernels

        return SubwordVectors.load_fasttext(path, **cached), fmt
    return Vectors.load_word2vec_format(
        path,
        binary=fmt == "binary",
        no_header=fmt == "glove",
        unicode_errors=unicode_errors,
        **cached,
    ), fmt


def save_vectors(vectors: Vectors, path: str | Path, fmt: str | None = None) -> str:
    """Write ``vectors`` atomically in ``fmt`` (default: from the suffix); returns the format."""
    fmt = output_format(path, fmt)
    if fmt == "fasttext":
        raise ValueError(
            f"cannot write {path} as a fastText .bin from vectors alone (it needs the model's "
            "output table): `rowbook train fasttext CORPUS -o model.bin` writes one; convert to "
            ".vec or .npz instead"
        )
    if fmt in ("npz", "safetensors"):
        vectors.save(path)
    else:
        vectors.save_word2vec_format(path, binary=fmt == "binary", write_header=fmt != "glove")
    return fmt
