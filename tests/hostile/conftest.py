"""Hostile files: valid files of every format, the loader of each, and tools to damage them.

``bases`` holds one small valid file per format, written by rowbook itself; ``LOADERS``
opens each format as a user would; :func:`outcome` is the promise every test checks:
a loader returns, or raises ``ValueError`` (or a subclass) or ``FileNotFoundError`` whose
message names the file. Every base file also goes through ``rowbook.load`` (the one loader,
:mod:`rowbook.file_kinds`), which must keep the same promise whatever it takes the damaged
file for. ``craft`` builds ``.npz`` archives member by member, so that a test can make
their headers and zip directory claim what it likes.

**A new file kind** joins the suite in three lines: its writer in :func:`_write_bases`
(under the name of the format), its loader in ``LOADERS``, and the format in the group of
``test_hostile_files.py`` that says how to damage it (``TEXT``, ``BINARY``, ``NPZ``, ``JSON``;
a folder kind gets a group of its own). The fuzz tests then run on it under the same
address-space cap, through its own loader and through ``rowbook.load``. The kinds being
built beside this suite (Hugging Face config + safetensors, fastText ``.ftz``, SentencePiece
``.model``, WordPiece ``vocab.txt``, quantised tables, projector folders) go in that way.

With ``ROWBOOK_MEMORY_CAP_GB`` set (the child process of
``test_hostile_files.py::test_fuzz_suite_under_a_memory_cap``), the address space is capped
at that many GiB above what the process uses after collection, so an allocation from a
lying size claim fails.
"""

from __future__ import annotations

import io
import json
import os
import resource
import tempfile
import warnings
import zipfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

import rowbook
from rowbook.data.cooccurrence_file import load_cooccurrence, save_cooccurrence
from rowbook.io import load_state, save_state
from rowbook.models import ColorHarmony, FastText, GloVe, Word2Vec
from rowbook.nn import Embedding, Module
from rowbook.optim import Adam
from rowbook.text import ByteLevelBPE, Normalizer, TextPipeline, Vocab, WordTokenizer
from rowbook.training import TrainConfig, Trainer
from rowbook.vectors import SubwordVectors, Vectors

KEYS = ["king", "queen", "naïve", "a_b"]
TABLE = (np.arange(12, dtype=np.float32).reshape(4, 3) - 5) / 7  # (4, 3)
CORPUS = [["the", "cat", "sat", "on", "the", "mat"], ["the", "dog", "sat"]] * 3
W2V = {"vector_size": 4, "epochs": 2, "min_count": 1, "workers": 1, "seed": 1}
GLOVE = {"vector_size": 4, "epochs": 2, "min_count": 1, "workers": 1, "seed": 1}


class Tiny(Module):
    def __init__(self) -> None:
        self.embedding = Embedding(5, 2, rng=0)

    def forward(self, ids: np.ndarray):
        return self.embedding(ids).sum()


def _trainer() -> Trainer:
    model = Tiny()
    config = TrainConfig(epochs=2, batch_size=4, seed=0, progress=False)
    return Trainer(model, Adam(model.parameters(), lr=0.1), lambda m, b: m(b[0]), config=config)


_TRAIN_IDS = (np.arange(8) % 5,)

LOADERS = {
    "word2vec text": lambda p: Vectors.load_word2vec_format(p),
    "word2vec binary": lambda p: Vectors.load_word2vec_format(p, binary=True),
    "glove": lambda p: Vectors.load_glove(p),
    "vectors npz": Vectors.load,
    "state": lambda p: load_state(p, kind="checkpoint"),
    "trainer checkpoint": lambda p: _trainer().fit(_TRAIN_IDS, resume=p),
    "word2vec checkpoint": lambda p: Word2Vec(**W2V).fit(CORPUS, resume=p),
    "glove checkpoint": lambda p: GloVe(**GLOVE).fit(CORPUS, resume=p),
    "saved model": rowbook.load,
    "vocab json": Vocab.load,
    "bpe json": ByteLevelBPE.load,
    "tokenizer.json": ByteLevelBPE.from_tokenizer_json,
    "fasttext bin": SubwordVectors.load_fasttext,
    "cooccurrence npz": load_cooccurrence,
    "vectors safetensors": Vectors.load,
    "text pipeline json": TextPipeline.load,
}
#: Kinds ``rowbook.load`` recognises and names without opening: only its promise applies.
NAMED_ONLY = ("fasttext supervised",)
NPZ_FORMATS = (
    "vectors npz",
    "state",
    "trainer checkpoint",
    "word2vec checkpoint",
    "glove checkpoint",
    "saved model",
    "cooccurrence npz",
)
JSON_FORMATS = ("vocab json", "bpe json", "tokenizer.json")
TEXT_FORMATS = ("word2vec text", "word2vec binary", "glove")


def _write_bases(folder: Path) -> None:
    vectors = Vectors(KEYS, TABLE, counts=[5, 4, 3, 2])
    vectors.save_word2vec_format(folder / "word2vec text")
    vectors.save_word2vec_format(folder / "word2vec binary", binary=True)
    vectors.save_word2vec_format(folder / "glove", write_header=False)
    vectors.save(folder / "vectors npz")
    save_state(folder / "state", {"weights": TABLE, "step": 3, "names": KEYS}, kind="checkpoint")
    _trainer().fit(_TRAIN_IDS, checkpoint=folder / "trainer checkpoint")
    Word2Vec(**W2V).fit(CORPUS, checkpoint=folder / "word2vec checkpoint")
    GloVe(**GLOVE).fit(CORPUS, checkpoint=folder / "glove checkpoint")
    ColorHarmony(epochs=1).fit().save(folder / "saved model")  # the model contract's file
    Vocab(bos_token="<s>", extra_specials=["<x>"]).fit(CORPUS).save(folder / "vocab json")
    texts = ["the cat sat on the mat", "the dog sat on the log"] * 4
    bpe = ByteLevelBPE().fit(texts, 270, special_tokens=["<pad>"])
    bpe.save(folder / "bpe json")
    bpe.to_tokenizer_json(folder / "tokenizer.json")
    counted = GloVe(**GLOVE).cooccurrence(CORPUS)
    save_cooccurrence(
        folder / "cooccurrence npz",
        counted.matrix,
        counted.keys,
        counted.counts,
        window=counted.window,
    )
    FastText(vector_size=4, bucket=64, min_count=1, epochs=1, workers=1).fit(CORPUS).save_fasttext(
        folder / "fasttext bin"
    )
    vectors.save(folder / "v.safetensors")
    (folder / "v.safetensors").rename(folder / "vectors safetensors")
    TextPipeline(Normalizer(case="lower"), WordTokenizer(), Vocab()).fit(texts).save(
        folder / "text pipeline json"
    )
    _write_supervised_fasttext(folder / "fasttext supervised")
    # new file kinds: write one small file of each here, named as its format (see above)


def _write_supervised_fasttext(path: Path) -> None:
    """A fastText supervised model, written in fastText's layout (labels after the words,
    model code 3) by rowbook's writer, so the suite needs no oracle package."""
    from rowbook.vectors.fasttext_format import FastTextArgs, FastTextFile, write_fasttext_bin

    words = ("the", "cat", "__label__a", "__label__b")
    rng = np.random.default_rng(0)
    file = FastTextFile(
        FastTextArgs(dim=3, model=3, loss=3, bucket=0, minn=0, maxn=0, minCount=1),
        words,
        np.array([4, 3, 2, 2]),
        rng.random((2, 3), dtype=np.float32),
        rng.random((2, 3), dtype=np.float32),
        ntokens=11,
        types=np.array([0, 0, 1, 1], np.int8),
    )
    write_fasttext_bin(path, file)


class Bases(dict):
    def __repr__(self) -> str:  # hypothesis prints the arguments of a failing example
        return "bases"


@pytest.fixture(scope="session")
def bases() -> dict[str, bytes]:
    """One valid file per format, as bytes."""
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _write_bases(Path(folder))
        formats = (*LOADERS, *NAMED_ONLY)
        return Bases({fmt: (Path(folder) / fmt).read_bytes() for fmt in formats})


def outcome(fmt: str, data: bytes, *, any_kind: bool = False) -> str:
    """Write ``data`` and open it as ``fmt`` (with ``any_kind``, with ``rowbook.load``, as
    whatever it recognises): ``"loaded"``, or the documented error's message."""
    loader = rowbook.load if any_kind else LOADERS[fmt]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"hostile {fmt}"
        path.write_bytes(data)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loader(path)
        except (ValueError, FileNotFoundError) as err:
            assert str(path) in str(err), f"{fmt}: {type(err).__name__} without the file: {err}"
            return str(err)
    return "loaded"


# -- .npz archives member by member ---------------------------------------------------------


def npy(
    array: np.ndarray | None = None, *, shape: tuple = (), descr: str = "<f4", data: bytes = b""
) -> bytes:
    """An ``.npy`` member: ``array``, or a header claiming ``shape``/``descr`` followed by ``data``."""
    buffer = io.BytesIO()
    if array is not None:
        np.lib.format.write_array(buffer, array, allow_pickle=False)
        return buffer.getvalue()
    header = {"descr": descr, "fortran_order": False, "shape": shape}
    np.lib.format.write_array_header_1_0(buffer, header)
    return buffer.getvalue() + data


def npz(members: dict[str, bytes], *, compress: bool = False) -> bytes:
    """A zip of ``name.npy`` members (stored, or deflated with ``compress``)."""
    buffer = io.BytesIO()
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, data in members.items():
            archive.writestr(name + ".npy", data)
    return buffer.getvalue()


def members(data: bytes) -> dict[str, bytes]:
    """The raw ``.npy`` members of an archive, by name without ``.npy``."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name[:-4]: archive.read(name) for name in archive.namelist()}


def meta_of(data: bytes) -> Any:
    """The JSON document of a rowbook ``.npz`` file."""
    raw = members(data)["__rowbook_meta__"]
    return json.loads(str(np.lib.format.read_array(io.BytesIO(raw), allow_pickle=False)))


def with_meta(data: bytes, meta: Any) -> bytes:
    """The archive ``data`` with its JSON document replaced by ``meta``."""
    parts = members(data)
    parts["__rowbook_meta__"] = npy(np.array(json.dumps(meta)))
    return npz(parts)


def claim_sizes(data: bytes, size: int) -> bytes:
    """The archive with every member's uncompressed size in the zip directory set to ``size``."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x01\x02", 24), (b"PK\x03\x04", 22)):
        start = out.find(signature)
        while start >= 0:
            out[start + offset : start + offset + 4] = (size % 2**32).to_bytes(4, "little")
            start = out.find(signature, start + 4)
    return bytes(out)


@pytest.fixture(scope="session")
def craft() -> SimpleNamespace:
    """The archive tools above, for tests (hypothesis allows session-scoped fixtures)."""
    return SimpleNamespace(
        npy=npy,
        npz=npz,
        members=members,
        meta_of=meta_of,
        with_meta=with_meta,
        claim_sizes=claim_sizes,
        outcome=outcome,
    )


@pytest.fixture(scope="session", autouse=True)
def _memory_cap() -> None:
    """Cap the address space in the fuzzing child (see the module docstring)."""
    cap = os.environ.get("ROWBOOK_MEMORY_CAP_GB")
    if not cap:
        return
    with open("/proc/self/status") as f:
        used = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (used + int(float(cap) * 2**30), hard))
