"""Dequantisation: every compiled kernel against ``gguf.quants.dequantize`` and against its
NumPy reference, bit for bit, on blocks quantised by ``gguf`` and on random blocks."""

from __future__ import annotations

import numpy as np
import pytest

from rowbook.gguf import quants as rowbook_quants
from rowbook.gguf import read_gguf
from rowbook.gguf.quants import SUPPORTED, dequantize_blocks
from rowbook.gguf.quants_reference import REFERENCES

gguf = pytest.importorskip("gguf")
TYPES = [t for t in SUPPORTED if t != "F32"]
QUANTISED_BY_GGUF = ("Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "BF16")


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("type_name", TYPES)
def test_random_blocks_equal_gguf_and_the_reference(gguf_files, type_name):
    raw = gguf_files.random_blocks(type_name, (8, 512), seed=3)
    qtype = gguf.GGMLQuantizationType[type_name]
    expected = gguf.quants.dequantize(raw, qtype).reshape(-1)
    ours = dequantize_blocks(raw, type_name).reshape(-1)
    assert _same_bits(ours, expected)
    _block, type_bytes = gguf.GGML_QUANT_SIZES[qtype]
    reference = REFERENCES[type_name](raw.reshape(-1, type_bytes)).reshape(-1)
    assert _same_bits(reference, expected)


@pytest.mark.parametrize("type_name", QUANTISED_BY_GGUF)
def test_blocks_quantised_by_gguf(type_name):
    rng = np.random.default_rng(1)
    values = (rng.standard_normal((16, 256)) * rng.uniform(0.01, 3, (16, 1))).astype(np.float32)
    qtype = gguf.GGMLQuantizationType[type_name]
    raw = gguf.quants.quantize(values, qtype)
    expected = gguf.quants.dequantize(raw, qtype)
    assert _same_bits(dequantize_blocks(raw, type_name).reshape(expected.shape), expected)
    assert np.abs(expected - values).max() < 0.2 * np.abs(values).max()  # roughly the values


def test_every_byte_of_a_q4_k_block_matters():
    """A kernel that skipped a field would agree on zeros: flip each byte of one block."""
    raw = np.random.default_rng(0).integers(0, 256, (1, 144), dtype=np.uint8)
    raw[0, :4] = np.array([1.0, 0.5], np.float16).view(np.uint8)
    base = dequantize_blocks(raw, "Q4_K")
    for i in range(4, 144):
        flipped = raw.copy()
        flipped[0, i] ^= 0x3F
        ours = dequantize_blocks(flipped, "Q4_K")
        assert not np.array_equal(ours, base), i
        expected = gguf.quants.dequantize(flipped, gguf.GGMLQuantizationType.Q4_K)
        assert _same_bits(ours.reshape(expected.shape), expected)


def test_a_file_of_every_type_reads_as_gguf_reads_it(gguf_files, tmp_path):
    tensors = {
        f"t.{name}": (gguf_files.random_blocks(name, (4, 512), seed=i), name)
        for i, name in enumerate(TYPES)
    }
    tensors["t.F32"] = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    path = gguf_files.write(tmp_path / "all.gguf", tensors)
    ours = read_gguf(path)
    theirs = gguf.GGUFReader(path)
    assert [t.name for t in theirs.tensors] == list(ours.tensors)
    for tensor in theirs.tensors:
        expected = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        got = ours.tensor(tensor.name)
        assert _same_bits(got, expected.reshape(got.shape)), tensor.name
        assert got.shape == tuple(reversed(tensor.shape.tolist()))
        assert ours.tensors[tensor.name].offset == tensor.data_offset
        assert ours.tensors[tensor.name].n_bytes == tensor.n_bytes
        assert ours.tensors[tensor.name].type_name == tensor.tensor_type.name


def test_rows_are_the_tensor_s_rows(gguf_files, tmp_path):
    raw = gguf_files.random_blocks("Q6_K", (6, 512))
    path = gguf_files.write(tmp_path / "rows.gguf", {"w": (raw, "Q6_K")})
    file = read_gguf(path)
    assert _same_bits(file.rows("w", 2, 5), file.tensor("w")[2:5])
    with pytest.raises(ValueError, match=r"rows 4:7 of 'w' are outside its 6 rows"):
        file.rows("w", 4, 7)


def test_threads_share_a_tensor_exactly(gguf_files, monkeypatch):
    raw = gguf_files.random_blocks("Q5_K", (8, 1024))
    one = dequantize_blocks(raw, "Q5_K", workers=1)
    monkeypatch.setattr(rowbook_quants, "_PIECE_BLOCKS", 3)
    assert _same_bits(dequantize_blocks(raw, "Q5_K", workers=2), one)


def test_a_type_rowbook_does_not_dequantise_is_named(tmp_path, gguf_files):
    raw = np.zeros((2, 18 * 2), np.uint8)  # IQ4_NL: 32 values in 18 bytes
    path = gguf_files.write(tmp_path / "iq.gguf", {"iq": (raw, "IQ4_NL"), "ok": np.ones(2, "f4")})
    file = read_gguf(path)
    assert file.tensors["iq"].shape == (2, 64)
    np.testing.assert_array_equal(file.tensor("ok"), [1, 1])
    with pytest.raises(ValueError, match=r"iq is stored as IQ4_NL, which rowbook does not"):
        file.tensor("iq")


def test_rowbook_s_q4_k_blocks_decode_near_their_values():
    """rowbook's plain Q4_K quantiser: ``gguf`` decodes its blocks as rowbook does, and each
    value lands within half a step (plus the 6-bit rounding of the step) of the input."""
    from rowbook.gguf.quantize import quantize_q4_k

    rng = np.random.default_rng(0)
    x = (rng.standard_normal((12, 512)) * rng.uniform(0.01, 2, (12, 1))).astype(np.float32)
    x[0, :256] = 0  # an all-zero super-block
    x[1, :256] = np.abs(x[1, :256])  # a positive one: the offset clamps at 0, as ggml's
    blocks = quantize_q4_k(x)
    expected = gguf.quants.dequantize(blocks, gguf.GGMLQuantizationType.Q4_K)
    ours = dequantize_blocks(blocks, "Q4_K").reshape(x.shape)
    assert _same_bits(ours, expected)
    sub = x.reshape(-1, 8, 32)
    step = (sub.max(axis=2) - np.minimum(sub.min(axis=2), 0)) / 15  # (n, 8)
    error = np.abs(ours - x).reshape(-1, 8, 32).max(axis=2)
    assert (error <= 0.5 * step + step.max(axis=1, keepdims=True) / 63 * 8 + 1e-6).all()
    assert np.array_equal(ours[0, :256], np.zeros(256))
