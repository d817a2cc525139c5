"""The GGUF container: metadata of every value type, tensor infos and alignment, each
against ``gguf.GGUFReader`` reading the same file."""

from __future__ import annotations

import numpy as np
import pytest

import rowbook
from rowbook.file_kinds import detect
from rowbook.gguf import GGUFFile, read_gguf

gguf = pytest.importorskip("gguf")
V = gguf.GGUFValueType if gguf else None

METADATA = {
    "test.u8": (200, V.UINT8),
    "test.i8": (-5, V.INT8),
    "test.u16": (60000, V.UINT16),
    "test.i16": (-30000, V.INT16),
    "test.u32": (4_000_000_000, V.UINT32),
    "test.i32": (-2_000_000_000, V.INT32),
    "test.f32": (0.1, V.FLOAT32),
    "test.bool": (True, V.BOOL),
    "test.u64": (2**63 + 5, V.UINT64),
    "test.i64": (-(2**62), V.INT64),
    "test.f64": (0.1, V.FLOAT64),
    "test.string": "naïve ∑ text",
    "test.empty": "",
    "test.ints": ([3, 1, 4], V.ARRAY),
    "test.floats": ([0.5, 0.25], V.ARRAY),
    "test.strings": (["a", "", "ünï"], V.ARRAY),
}


def test_metadata_equals_gguf_s_reading(gguf_files, tmp_path):
    path = gguf_files.write(tmp_path / "meta.gguf", {"x": np.zeros(4, np.float32)}, METADATA)
    ours = read_gguf(path)
    theirs = gguf.GGUFReader(path)
    assert list(ours.metadata) == [k for k in theirs.fields if not k.startswith("GGUF.")]
    for key, field in theirs.fields.items():
        if key.startswith("GGUF."):
            continue
        value = ours.metadata[key]
        expected = field.contents()
        if isinstance(value, np.ndarray):
            assert value.dtype == gguf.GGUFReader.gguf_scalar_to_np[field.types[-1]]
            value = value.tolist()
        assert value == expected, key
    assert ours.value_types["test.u8"] == "uint8"
    assert ours.value_types["test.strings"] == "array[string]"
    assert ours.value_types["test.ints"] == "array[int32]"
    assert ours.get("general.architecture") == "llama"
    assert ours.version == 3


def test_alignment_and_offsets(gguf_files, tmp_path):
    writer_meta = {"general.alignment": 64}
    tensors = {"a": np.arange(3, dtype=np.float32), "b": np.ones((2, 7), np.float32)}
    path = gguf_files.write(tmp_path / "aligned.gguf", tensors, writer_meta)
    ours = read_gguf(path)
    theirs = gguf.GGUFReader(path)
    assert ours.alignment == 64 and ours.data_offset == theirs.data_offset
    assert all(t.offset % 64 == ours.data_offset % 64 for t in ours.tensors.values())
    np.testing.assert_array_equal(ours.tensor("b"), np.ones((2, 7)))
    np.testing.assert_array_equal(ours.raw("a").view(np.float32), [0, 1, 2])


def test_rowbook_load_recognises_a_gguf_by_its_magic(gguf_files, tmp_path):
    path = gguf_files.write(tmp_path / "renamed.bin", {"x": np.zeros(2, np.float32)})
    assert detect(path).name.startswith("a GGUF file")
    assert isinstance(rowbook.load(path), GGUFFile)
