"""``save_gguf``: a rowbook model written as GGUF, read back by ``gguf`` (every tensor, the
Q8_0 blocks byte for byte as ``gguf`` quantises) and loaded by ``transformers`` (logits within
1e-4 of rowbook's reading of the same file), the tokenizer kept."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")
pytest.importorskip("accelerate")

from rowbook.gguf import gguf_tokenizer, read_gguf  # noqa: E402
from rowbook.gguf.quantize import quantize_q8_0  # noqa: E402
from rowbook.models import TransformerLM  # noqa: E402

TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog"] * 8
IDS = np.array([[5, 60, 100, 7, 7, 200, 31, 2]])
SETTINGS = {
    "llama": {
        "family": "llama",
        "n_kv_heads": 2,
        "d_ff": 96,
        "context": 32,
        "tie_embeddings": False,
    },
    # transformers' GGUF loader takes GPT-2's n_positions as 1024 and its MLP as 4 d
    "gpt2": {"family": "gpt2", "context": 1024},
}


@pytest.fixture(scope="module", params=sorted(SETTINGS))
def model(request):
    settings = SETTINGS[request.param]
    return TransformerLM(
        vocab_size=300, d_model=64, n_layers=2, n_heads=4, epochs=1, seed=0, **settings
    ).fit(TEXTS)


def test_q8_0_blocks_equal_gguf_s():
    x = np.random.default_rng(0).standard_normal((16, 128)).astype(np.float32) * 3
    x[0, :32] = 0  # a zero block
    expected = gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q8_0)
    assert np.array_equal(quantize_q8_0(x), expected)


@pytest.mark.parametrize("dtype", ["f32", "f16", "q8_0"])
def test_gguf_reads_and_transformers_loads_what_rowbook_writes(model, dtype, tmp_path):
    path = tmp_path / "model.gguf"
    model.save_gguf(path, dtype=dtype)
    theirs = gguf.GGUFReader(path)
    ours = read_gguf(path)
    for tensor in theirs.tensors:
        expected = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
        assert np.array_equal(
            ours.tensor(tensor.name), expected.reshape(ours.tensors[tensor.name].shape)
        )
    matrices = {t.tensor_type.name for t in theirs.tensors if len(t.shape) == 2}
    assert matrices == {dtype.upper()}
    back = TransformerLM.from_gguf(path)
    logits = back.net_(IDS).data
    hf = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, gguf_file="model.gguf", dtype=torch.float32
    ).eval()
    with torch.no_grad():
        np.testing.assert_allclose(
            hf(torch.from_numpy(IDS)).logits.numpy(), logits, atol=1e-4, rtol=0
        )
    original = model.net_(IDS).data
    tolerance = {"f32": 1e-5, "f16": 1e-2, "q8_0": 5e-2}[dtype]
    np.testing.assert_allclose(logits, original, atol=tolerance, rtol=0)
    if dtype == "f32":
        assert "output.weight" in ours.tensors or model.config_.tie_embeddings


def test_the_tokenizer_is_written_and_read_back(model, tmp_path):
    path = tmp_path / "model.gguf"
    model.save_gguf(path, dtype="f16")
    back = TransformerLM.from_gguf(path)
    for text in ["the cat sat", "a dog on a mat!", "unseen wörds 123"]:
        assert back.encode(text).tolist() == model.encode(text).tolist()
    tok = gguf_tokenizer(path)
    assert tok.model == "gpt2" and tok.pre == "gpt-2" and not tok.add_bos
    assert list(back.vectors.index_to_key) == list(model.vectors.index_to_key)


def test_an_unknown_dtype_is_named(model, tmp_path):
    with pytest.raises(ValueError, match="dtype"):
        model.save_gguf(tmp_path / "x.gguf", dtype="q4_k")
