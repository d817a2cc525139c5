"""Every loader against damaged and lying files: truncations, byte flips, wrong types in every
JSON field, hostile size claims (headers, ``.npy`` shapes, zip directories).

Each case must end in :func:`conftest.outcome`'s promise: loaded, or ``ValueError`` /
``FileNotFoundError`` naming the file; never another exception, never a hang (the child
below has a time limit; no per-example deadline, which a busy machine breaks), never a
large allocation: the fuzz tests run in a child process whose address
space is capped 2 GiB above its baseline (:func:`test_fuzz_suite_under_a_memory_cap`), so
that allocating from a claim (which overcommit would otherwise allow) fails the test.
"""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rowbook.io import MAX_INFLATED_BYTES

IN_CHILD = bool(os.environ.get("ROWBOOK_MEMORY_CAP_GB"))
child_only = pytest.mark.skipif(not IN_CHILD, reason="runs in the memory-capped child process")
# Derandomized, so CI sees the same cases every run; ROWBOOK_FUZZ_EXPLORE=1 draws new ones
# (and more of them) to hunt for new failures before they are fixed and kept as cases.
EXPLORE = bool(os.environ.get("ROWBOOK_FUZZ_EXPLORE"))
FUZZ = settings(
    max_examples=300 if EXPLORE else 30,
    deadline=None,
    database=None,
    derandomize=not EXPLORE,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# How each format is damaged. A new file kind goes in one of these groups (see conftest.py).
TEXT = ("word2vec text", "word2vec binary", "glove")
BINARY = (
    "fasttext bin",
    "vectors safetensors",
    "safetensors",
    "fasttext supervised",
    "fasttext ftz",
    "sentencepiece model",
    "any tokenizer",
    "vocab.txt",
    "gguf",
    "gguf vectors",
    "gguf tokenizer",
)
NPZ = (
    "vectors npz",
    "state",
    "trainer checkpoint",
    "word2vec checkpoint",
    "glove checkpoint",
    "saved model",
    "quantized npz",
    "mapped vectors npz",
    "mapped quantized npz",
)
JSON = (
    "vocab json",
    "bpe json",
    "tokenizer.json",
    "text pipeline json",
    "wordpiece json",
    "wordpiece tokenizer.json",
    "unigram json",
    "unigram tokenizer.json",
)
#: Folders (conftest.FOLDER_FORMATS): one file of the folder damaged at a time.
FOLDER = ("hf checkpoint", "projector folder")
#: Recognised by rowbook.load without a loader of their own (conftest.NAMED_ONLY).
NAMED_ONLY = ("hf config json",)
BIG = st.one_of(st.integers(0, 64), st.integers(0, 10**13))  # sizes, small and absurd
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def test_fuzz_suite_under_a_memory_cap():
    """The fuzz tests of this file, in a child whose address space is capped (2 GiB headroom)."""
    if IN_CHILD:
        pytest.skip("this is the child")
    root = Path(__file__).resolve().parents[2]
    env = {
        **os.environ,
        "ROWBOOK_MEMORY_CAP_GB": "2",
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-o",
        "addopts=--import-mode=importlib",
        "-x",
        "-p",
        "no:cacheprovider",
        "-k",
        "fuzz_",
        str(Path(__file__).resolve()),
    ]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900, cwd=root)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and " failed" not in done.stdout, done.stdout[-2000:]


@child_only
def test_fuzz_cap_is_active():
    """The cap bites: an allocation overcommit would grant fails here."""
    import numpy as np

    with pytest.raises(MemoryError):
        np.empty(3 * 2**30, dtype=np.uint8)


# -- byte-level damage, every format ----------------------------------------------------------


@st.composite
def damaged(draw, base: bytes) -> bytes:
    """``base`` truncated, with bytes flipped, or with random bytes spliced in."""
    how = draw(st.sampled_from(["truncate", "flip", "splice"]))
    if how == "truncate":
        return base[: draw(st.integers(0, len(base) - 1))]
    if how == "flip":
        data = bytearray(base)
        for _ in range(draw(st.integers(1, 4))):
            data[draw(st.integers(0, len(data) - 1))] ^= draw(st.integers(1, 255))
        return bytes(data)
    at = draw(st.integers(0, len(base)))
    return base[:at] + draw(st.binary(min_size=1, max_size=64)) + base[at:]


@child_only
@pytest.mark.parametrize("fmt", TEXT + BINARY + NPZ + JSON)
@FUZZ
@given(data=st.data())
def test_fuzz_damaged_bytes(fmt, data, bases, craft):
    craft.outcome(fmt, data.draw(damaged(bases[fmt])))


@child_only
@pytest.mark.parametrize("fmt", TEXT + BINARY + NPZ + JSON + NAMED_ONLY + ("cooccurrence npz",))
@FUZZ
@given(data=st.data())
def test_fuzz_any_file_through_rowbook_load(fmt, data, bases, craft):
    """The one loader keeps every loader's promise, whatever it takes a damaged file for."""
    craft.outcome(fmt, data.draw(damaged(bases[fmt])), any_kind=True)


@st.composite
def damaged_folder(draw, files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` with one of them damaged (:func:`damaged`) or removed."""
    files = dict(files)
    name = draw(st.sampled_from(sorted(files)))
    if draw(st.integers(0, 9)) == 0:
        del files[name]
    else:
        files[name] = draw(damaged(files[name]))
    return files


@child_only
@pytest.mark.parametrize("any_kind", [False, True])
@pytest.mark.parametrize("fmt", FOLDER)
@FUZZ
@given(data=st.data())
def test_fuzz_damaged_folders(fmt, any_kind, data, bases, craft):
    """A folder kind with one file damaged, through its loader and through rowbook.load."""
    craft.outcome(fmt, data.draw(damaged_folder(bases[fmt])), any_kind=any_kind)


@child_only
@FUZZ
@given(data=st.data())
def test_fuzz_hugging_face_config_fields(data, bases, craft):
    """Every field of a checkpoint's config.json mistyped or removed, beside valid weights."""
    import json

    files = dict(bases["hf checkpoint"])
    config = data.draw(mistyped(json.loads(files["config.json"])))
    files["config.json"] = json.dumps(config).encode()
    craft.outcome("hf checkpoint", files)


# -- size claims ---------------------------------------------------------------------------------


@child_only
@pytest.mark.parametrize("fmt", ["word2vec text", "word2vec binary"])
@FUZZ
@given(rows=BIG, dim=BIG)
def test_fuzz_header_claims(fmt, rows, dim, bases, craft):
    body = bases[fmt].split(b"\n", 1)[1]
    craft.outcome(fmt, f"{rows} {dim}\n".encode() + body)


@child_only
@FUZZ
@given(dim=st.integers(1, 200_000), blank_lines=st.integers(0, 200_000))
def test_fuzz_glove_line_count_claims(dim, blank_lines, craft):
    """No header: rows are counted from the lines and the size from line 1; blank lines lie."""
    craft.outcome("glove", b"a" + b" 1" * dim + b"\n" * blank_lines + b"b 1\n")


@child_only
@pytest.mark.parametrize("fmt", NPZ)
@FUZZ
@given(
    shape=st.lists(BIG, max_size=3).map(tuple),
    descr=st.sampled_from(["<f4", "<f8", "|u1", "<U8", "|O", "V8"]),
    held=st.integers(0, 64),
    compress=st.booleans(),
    data=st.data(),
)
def test_fuzz_npy_header_claims(fmt, shape, descr, held, compress, data, bases, craft):
    """One member's .npy header claims any shape and dtype over a few bytes of data."""
    parts = craft.members(bases[fmt])
    name = data.draw(st.sampled_from(sorted(parts)))
    parts[name] = craft.npy(shape=shape, descr=descr, data=b"\x01" * held)
    craft.outcome(fmt, craft.npz(parts, compress=compress))


@child_only
@pytest.mark.parametrize("fmt", ["vectors npz", "state", "mapped vectors npz"])
@FUZZ
@given(
    size=st.one_of(BIG, st.integers(MAX_INFLATED_BYTES - 8, MAX_INFLATED_BYTES * 4)),
    compress=st.booleans(),
)
def test_fuzz_zip_directory_claims(fmt, size, compress, bases, craft):
    """The zip directory claims any uncompressed size for every member."""
    archive = craft.npz(craft.members(bases[fmt]), compress=compress)
    craft.outcome(fmt, craft.claim_sizes(archive, size))


# -- wrong types in every JSON field --------------------------------------------------------------


def _fields(obj, at=()):
    """Paths to every value of a JSON document (lists: their first 3 items)."""
    yield at
    items = (
        obj.items()
        if isinstance(obj, dict)
        else enumerate(obj[:3])
        if isinstance(obj, list)
        else ()
    )
    for key, value in items:
        yield from _fields(value, (*at, key))


@st.composite
def mistyped(draw, document):
    """``document`` with one field (any depth) replaced by a random JSON value, or removed."""
    document = copy.deepcopy(document)
    paths = list(_fields(document))
    shallow = [p for p in paths if len(p) <= 2]
    path = draw(st.one_of(st.sampled_from(shallow), st.sampled_from(paths)))
    if not path:
        return draw(JSON_VALUES)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    if draw(st.booleans()) and isinstance(parent, dict):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(JSON_VALUES)
    return document


@child_only
@pytest.mark.parametrize("fmt", JSON)
@FUZZ
@given(data=st.data())
def test_fuzz_json_fields(fmt, data, bases, craft):
    import json

    document = data.draw(mistyped(json.loads(bases[fmt])))
    craft.outcome(fmt, json.dumps(document).encode())


@child_only
@pytest.mark.parametrize("fmt", NPZ)
@FUZZ
@given(data=st.data())
def test_fuzz_npz_metadata_fields(fmt, data, bases, craft):
    meta = data.draw(mistyped(craft.meta_of(bases[fmt])))
    craft.outcome(fmt, craft.with_meta(bases[fmt], meta))


def test_every_base_file_is_recognised_by_rowbook_load(bases, craft):
    """Undamaged, each base file opens through rowbook.load, or is named with what reads it."""
    named = {
        "state": "a rowbook training checkpoint",
        "trainer checkpoint": "a rowbook training checkpoint",
        "safetensors": "a safetensors file; read it with rowbook.io.load_safetensors",
        "hf config json": "a Hugging Face config.json; read it with TransformerLM.from_hf",
    }
    for fmt, data in bases.items():
        said = craft.outcome(fmt, data, any_kind=True)
        assert said == "loaded" if fmt not in named else named[fmt] in said, (fmt, said)
