"""The token table of a GGUF file: rows equal to ``gguf``'s dequantisation, keys equal to the
file's tokens, neighbours equal to the cosine of NumPy on the same rows."""

from __future__ import annotations

import numpy as np
import pytest

import rowbook
from rowbook.gguf import gguf_vectors

gguf = pytest.importorskip("gguf")
TOKENS = ["<s>", "</s>", "the", "cat", "sat", "on", "mat", "dog", "a", "log"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory, gguf_files):
    """A file with a Q8_0 token table (quantised by ``gguf``) and an F16 untied head."""
    rng = np.random.default_rng(0)
    table = rng.standard_normal((len(TOKENS), 64)).astype(np.float32)  # (V, d)
    head = rng.standard_normal((len(TOKENS), 64)).astype(np.float16)
    tensors = {
        "token_embd.weight": (gguf.quants.quantize(table, gguf.GGMLQuantizationType.Q8_0), "Q8_0"),
        "output.weight": head,
    }
    metadata = {"tokenizer.ggml.tokens": (TOKENS, gguf.GGUFValueType.ARRAY)}
    path = tmp_path_factory.mktemp("table") / "model.gguf"
    return gguf_files.write(path, tensors, metadata)


def _dequantised(path, name):
    tensor = next(t for t in gguf.GGUFReader(path).tensors if t.name == name)
    return gguf.quants.dequantize(tensor.data, tensor.tensor_type)


def test_the_table_is_gguf_s_rows_keyed_by_the_tokens(model_file):
    vectors = gguf_vectors(model_file)
    assert list(vectors.index_to_key) == TOKENS
    expected = _dequantised(model_file, "token_embd.weight")
    assert np.array_equal(vectors.vectors, expected)
    unit = expected / np.linalg.norm(expected, axis=1, keepdims=True)
    cosine = unit @ unit[TOKENS.index("cat")]
    cosine[TOKENS.index("cat")] = -np.inf
    best = int(np.argmax(cosine))
    (key, score), *_ = vectors.most_similar("cat", topn=3)
    assert key == TOKENS[best] and score == pytest.approx(cosine[best], abs=1e-5)


def test_the_untied_head_is_the_second_table(model_file):
    head = gguf_vectors(model_file, table="output")
    assert list(head.index_to_key) == TOKENS
    assert np.array_equal(head.vectors, _dequantised(model_file, "output.weight"))
    assert list(rowbook.load(model_file).vectors.index_to_key) == TOKENS


def test_a_tied_model_has_no_output_table(tmp_path, gguf_files):
    path = gguf_files.write(tmp_path / "tied.gguf", {"token_embd.weight": np.eye(3, 4, dtype="f4")})
    with pytest.raises(ValueError, match=r"ties its head to token_embd.weight"):
        gguf_vectors(path, table="output")
    assert list(gguf_vectors(path).index_to_key) == ["id:0", "id:1", "id:2"]  # no token list


def test_rows_past_the_tokens_and_repeated_tokens_are_keyed_by_id(tmp_path, gguf_files):
    metadata = {"tokenizer.ggml.tokens": (["a", "b", "a"], gguf.GGUFValueType.ARRAY)}
    tensors = {"token_embd.weight": np.eye(5, 4, dtype="f4")}
    path = gguf_files.write(tmp_path / "padded.gguf", tensors, metadata)
    assert list(gguf_vectors(path).index_to_key) == ["a", "b", "id:2", "id:3", "id:4"]
