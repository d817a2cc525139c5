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
``test_hostile_files.py`` that says how to damage it (``TEXT``, ``BINARY``, ``NPZ``, ``JSON``,
``FOLDER``: a folder kind, in :data:`FOLDER_FORMATS`, is written as a folder and damaged one
file at a time). The fuzz tests then run on it under the same address-space cap, through
its own loader and through ``rowbook.load``.

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
from rowbook.gguf import gguf_tokenizer, gguf_vectors, read_gguf
from rowbook.io import load_state, map_safetensors, save_safetensors, save_state
from rowbook.models import (
    ColorHarmony,
    FastText,
    FastTextClassifier,
    GloVe,
    TransformerLM,
    Word2Vec,
)
from rowbook.nn import Embedding, Module
from rowbook.optim import Adam
from rowbook.text import (
    ByteLevelBPE,
    Normalizer,
    TextPipeline,
    Unigram,
    Vocab,
    WordPiece,
    WordTokenizer,
    load_tokenizer,
)
from rowbook.text.sentencepiece import load_model
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


def _every_tensor(file: Any) -> list[float]:
    return [file.tensor(name).sum() for name in file.tensors]


def _first_neighbours(vectors: Vectors) -> list:
    return vectors.most_similar(vectors.index_to_key[0], topn=2)


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
    "safetensors": lambda p: [np.asarray(a).sum() for a in map_safetensors(p)[0].values()],
    "quantized npz": Vectors.load,
    "mapped vectors npz": lambda p: Vectors.load(p, mmap=True).most_similar("king", topn=2),
    "mapped quantized npz": lambda p: Vectors.load(p, mmap=True).most_similar("king", topn=2),
    "wordpiece json": WordPiece.load,
    "wordpiece tokenizer.json": WordPiece.from_tokenizer_json,
    "vocab.txt": WordPiece.from_vocab,
    "unigram json": Unigram.load,
    "unigram tokenizer.json": Unigram.from_tokenizer_json,
    "sentencepiece model": load_model,
    "any tokenizer": load_tokenizer,
    "fasttext supervised": lambda p: FastTextClassifier.load_fasttext(p).predict("the cat"),
    "fasttext ftz": lambda p: FastTextClassifier.load_fasttext(p).predict("the cat"),
    # folders (written as folders, damaged one file at a time)
    "gguf": lambda p: _every_tensor(read_gguf(p)),
    "gguf vectors": lambda p: _first_neighbours(gguf_vectors(p)),
    "gguf tokenizer": lambda p: gguf_tokenizer(p).encode("the cat sat, naïvely"),
    "hf checkpoint": TransformerLM.from_hf,
    "projector folder": Vectors.load_projector,
}
#: Kinds ``rowbook.load`` recognises and names without opening: only its promise applies.
NAMED_ONLY = ("hf config json",)
#: Kinds that are folders: their base is a :class:`Folder` of files.
FOLDER_FORMATS = ("hf checkpoint", "projector folder")
#: A GPT-2 checkpoint small enough to fuzz (:func:`write_gpt2`).
GPT2_CONFIG = {
    "model_type": "gpt2",
    "vocab_size": 20,
    "n_embd": 8,
    "n_layer": 1,
    "n_head": 2,
    "n_positions": 16,
    "tie_word_embeddings": True,
}
NPZ_FORMATS = (
    "vectors npz",
    "state",
    "trainer checkpoint",
    "word2vec checkpoint",
    "glove checkpoint",
    "saved model",
    "cooccurrence npz",
    "quantized npz",
    "mapped vectors npz",
    "mapped quantized npz",
)
JSON_FORMATS = (
    "vocab json",
    "bpe json",
    "tokenizer.json",
    "wordpiece json",
    "wordpiece tokenizer.json",
    "unigram json",
    "unigram tokenizer.json",
)
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
    _write_subword_bases(folder, texts)
    counted = GloVe(**GLOVE).cooccurrence(CORPUS)
    save_cooccurrence(
        folder / "cooccurrence npz",
        counted.matrix,
        counted.keys,
        counted.counts,
        window=counted.window,
    )
    save_safetensors(
        folder / "safetensors", {"wte.weight": TABLE, "ln_f.bias": TABLE[0]}, {"format": "pt"}
    )
    FastText(vector_size=4, bucket=64, min_count=1, epochs=1, workers=1).fit(CORPUS).save_fasttext(
        folder / "fasttext bin"
    )
    vectors.save(folder / "v.safetensors")
    (folder / "v.safetensors").rename(folder / "vectors safetensors")
    TextPipeline(Normalizer(case="lower"), WordTokenizer(), Vocab()).fit(texts).save(
        folder / "text pipeline json"
    )
    _write_supervised_fasttext(folder / "fasttext supervised", folder / "fasttext ftz")
    rows = np.random.default_rng(0).standard_normal((300, 6)).astype(np.float32)  # 7 KiB
    many = Vectors(KEYS + [f"k{i}" for i in range(296)], rows, counts=np.arange(300, 0, -1))
    many.quantize("pq", m=3, nbits=4, verbose=False).save(folder / "quantized npz")
    wide = Vectors(
        KEYS + [f"k{i}" for i in range(2044)], np.tile(rows, (8, 2))[:2048]
    )  # 96 KiB: mapped
    wide.save(folder / "mapped vectors npz")
    wide.quantize("int8", verbose=False).save(folder / "mapped quantized npz")
    write_gpt2(folder / "hf checkpoint")
    (folder / "hf config json").write_bytes((folder / "hf checkpoint" / "config.json").read_bytes())
    Vectors(KEYS, TABLE, counts=[5, 4, 3, 2]).save_projector(
        folder / "projector folder", metadata={"kind": ["a", "b", "a", "c"]}
    )
    _write_gguf(folder / "gguf")
    _write_gguf(folder / "gguf vectors")
    _write_gguf_tokenizer(folder / "gguf tokenizer", bpe)
    # new file kinds: write one small file (or folder) of each here, named as its format


def _write_gguf(path: Path) -> None:
    """A small GGUF written by ``gguf``'s writer: metadata of several types (a vocabulary
    among them), an F32, a Q8_0 and a Q4_K tensor."""
    import gguf

    rng = np.random.default_rng(0)
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_block_count(1)
    writer.add_token_list(KEYS)
    writer.add_token_scores([0.0, -1.0, -2.0, -3.0])
    writer.add_tensor("token_embd.weight", rng.standard_normal((4, 32)).astype(np.float32))
    q8 = gguf.quants.quantize(rng.standard_normal((2, 32)).astype(np.float32), 8)
    writer.add_tensor("q8", q8, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
    q4k = rng.integers(0, 256, (1, 144), dtype=np.uint8)
    q4k[0, :4] = np.array([0.5, 0.25], np.float16).view(np.uint8)
    writer.add_tensor("q4k", q4k, raw_dtype=gguf.GGMLQuantizationType.Q4_K)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _write_gguf_tokenizer(path: Path, bpe: ByteLevelBPE) -> None:
    """A GGUF holding only a ``gpt2`` tokenizer: ``bpe``'s tokens, types and merges."""
    import gguf

    tokens = [bpe.id_to_token(i) for i in range(len(bpe))]
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("llama-bpe")
    writer.add_token_list(tokens)
    writer.add_token_types([3 if t in bpe.special_tokens else 1 for t in tokens])
    writer.add_token_merges([f"{a} {b}" for a, b in bpe.merges])
    writer.add_bos_token_id(0)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.close()


def _write_supervised_fasttext(path: Path, ftz: Path) -> None:
    """A fastText supervised model, written in fastText's layout (labels after the words,
    model code 3) by rowbook's writer, so the suite needs no oracle package; and its
    quantised ``.ftz`` (256 bucket rows: one per centroid)."""
    from rowbook.models import FastTextClassifier
    from rowbook.vectors.fasttext_format import FastTextArgs, FastTextFile, write_fasttext_bin

    words = ("the", "cat", "__label__a", "__label__b")
    rng = np.random.default_rng(0)
    file = FastTextFile(
        FastTextArgs(dim=4, model=3, loss=3, bucket=256, minn=0, maxn=0, wordNgrams=2),
        words,
        np.array([4, 3, 2, 2]),
        rng.random((258, 4), dtype=np.float32),
        rng.random((2, 4), dtype=np.float32),
        ntokens=11,
        types=np.array([0, 0, 1, 1], np.int8),
    )
    write_fasttext_bin(path, file)
    FastTextClassifier.load_fasttext(path).quantize(dsub=2).save_fasttext(ftz)


def write_gpt2(path: Path, config: dict | None = None, tensors: dict | None = None) -> Path:
    """A GPT-2 checkpoint folder: ``config`` (default :data:`GPT2_CONFIG`) and
    ``model.safetensors`` holding ``tensors`` (default: random ones of the shapes it implies)."""
    config = GPT2_CONFIG if config is None else config
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(config))
    if tensors is None:
        rng = np.random.default_rng(0)
        d, f = config["n_embd"], 4 * config["n_embd"]
        shapes = {
            "wte.weight": (config["vocab_size"], d),
            "wpe.weight": (config["n_positions"], d),
            "ln_f.weight": (d,),
            "ln_f.bias": (d,),
        }
        for i in range(config["n_layer"]):
            shapes |= {
                f"h.{i}.ln_1.weight": (d,),
                f"h.{i}.ln_1.bias": (d,),
                f"h.{i}.ln_2.weight": (d,),
                f"h.{i}.ln_2.bias": (d,),
                f"h.{i}.attn.c_attn.weight": (d, 3 * d),
                f"h.{i}.attn.c_attn.bias": (3 * d,),
                f"h.{i}.attn.c_proj.weight": (d, d),
                f"h.{i}.attn.c_proj.bias": (d,),
                f"h.{i}.mlp.c_fc.weight": (d, f),
                f"h.{i}.mlp.c_fc.bias": (f,),
                f"h.{i}.mlp.c_proj.weight": (f, d),
                f"h.{i}.mlp.c_proj.bias": (d,),
            }
        tensors = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    save_safetensors(path / "model.safetensors", tensors, {"format": "pt"})
    return path


class Folder(dict):
    """A folder kind's files, name -> bytes."""

    def __repr__(self) -> str:
        return f"Folder({sorted(self)})"


def _write_subword_bases(folder: Path, texts: list[str]) -> None:
    import io

    import sentencepiece as spm

    wp = WordPiece().fit([*texts, "naïve [CLS] x"], 40, min_count=1, workers=1)
    wp.save(folder / "wordpiece json")
    wp.to_tokenizer_json(folder / "wordpiece tokenizer.json")
    wp.save_vocab(folder / "vocab.txt")
    uni = Unigram().fit(texts, 30, workers=1)
    uni.save(folder / "unigram json")
    uni.to_tokenizer_json(folder / "unigram tokenizer.json")
    # A small rule table of its own (A-Z lower-cased, the fi ligature, a Roman numeral): a
    # precompiled charsmap of about a kilobyte, trie and strings, damaged like the rest of the
    # file in a millisecond per example (nmt_nfkc's 240 KB map takes a second to read whole;
    # the text tests read it)
    rules = [f"{c:X}\t{c + 32:X}" for c in range(0x41, 0x5B)] + ["FB01\t66 69", "2160\t49"]
    (folder / "rules.tsv").write_text("\n".join(rules) + "\n", encoding="utf-8")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts * 4),
        model_writer=model,
        vocab_size=30,
        minloglevel=2,
        hard_vocab_limit=False,
        byte_fallback=False,
        normalization_rule_tsv=str(folder / "rules.tsv"),
    )
    (folder / "rules.tsv").unlink()
    (folder / "sentencepiece model").write_bytes(model.getvalue())
    (folder / "any tokenizer").write_bytes(model.getvalue())


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
        return Bases({fmt: _read(Path(folder) / fmt) for fmt in formats})


def _read(path: Path) -> bytes | Folder:
    if path.is_dir():
        return Folder({p.name: p.read_bytes() for p in path.iterdir()})
    return path.read_bytes()


def outcome(fmt: str, data: bytes | dict[str, bytes], *, any_kind: bool = False) -> str:
    """Write ``data`` (a folder's files, for a folder kind) and open it as ``fmt`` (with
    ``any_kind``, with ``rowbook.load``, as whatever it recognises): ``"loaded"``, or the
    documented error's message."""
    loader = rowbook.load if any_kind else LOADERS[fmt]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"hostile {fmt}"
        if isinstance(data, dict):
            path.mkdir()
            for name, content in data.items():
                (path / name).write_bytes(content)
        else:
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
        write_gpt2=write_gpt2,
        gpt2_config=GPT2_CONFIG,
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
