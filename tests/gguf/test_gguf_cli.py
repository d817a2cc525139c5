"""A GGUF file on the command line (``inspect``, ``neighbors``, ``compare``, ``size``) and in
``rowbook.sizing``: what they print against ``gguf``'s reader of the same file."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rowbook import sizing
from rowbook.cli import main
from rowbook.gguf import gguf_vectors

gguf = pytest.importorskip("gguf")
TOKENS = [f"tok{i}" for i in range(40)]


def _model_file(path, gguf_files, qtype="Q8_0", seed=0):
    """A small llama GGUF (untied, GQA) with a token list, its table quantised as ``qtype``."""
    rng = np.random.default_rng(seed)
    d, ff, layers = 64, 96, 2
    q = gguf.GGMLQuantizationType[qtype]
    tensors = {
        "token_embd.weight": (
            gguf.quants.quantize(rng.standard_normal((40, d)).astype("f4"), q),
            qtype,
        )
    }
    tensors["output.weight"] = rng.standard_normal((40, d)).astype(np.float32)
    tensors["output_norm.weight"] = np.ones(d, np.float32)
    for i in range(layers):
        for name, shape in {
            "attn_norm": (d,),
            "ffn_norm": (d,),
            "attn_q": (d, d),
            "attn_k": (32, d),
            "attn_v": (32, d),
            "attn_output": (d, d),
            "ffn_gate": (ff, d),
            "ffn_up": (ff, d),
            "ffn_down": (d, ff),
        }.items():
            tensors[f"blk.{i}.{name}.weight"] = rng.standard_normal(shape).astype(np.float32)
    V = gguf.GGUFValueType
    metadata = {
        "llama.context_length": (128, V.UINT32),
        "llama.embedding_length": (d, V.UINT32),
        "llama.block_count": (layers, V.UINT32),
        "llama.feed_forward_length": (ff, V.UINT32),
        "llama.attention.head_count": (4, V.UINT32),
        "llama.attention.head_count_kv": (2, V.UINT32),
        "llama.attention.layer_norm_rms_epsilon": (1e-5, V.FLOAT32),
        "tokenizer.ggml.tokens": (TOKENS, V.ARRAY),
    }
    return gguf_files.write(path, tensors, metadata)


def test_inspect_prints_every_tensor_with_its_type_and_bytes(tmp_path, gguf_files, capsys):
    path = _model_file(tmp_path / "m.gguf", gguf_files)
    assert main(["inspect", str(path)]) == 0
    out = capsys.readouterr().out
    for tensor in gguf.GGUFReader(path).tensors:
        row = next(line for line in out.splitlines() if line.startswith(tensor.name + " "))
        assert row.split()[1] == tensor.tensor_type.name
        assert row.split()[-1] == f"{int(tensor.n_bytes):,}"
    assert re.search(r"llama.attention.head_count_kv +uint32 +2\n", out)
    assert "tokenizer: none in the file" in out


def test_inspect_names_another_kind(tmp_path, capsys):
    path = tmp_path / "v.txt"
    path.write_text("2 2\na 1 0\nb 0 1\n")
    assert main(["inspect", str(path)]) == 0
    assert "word2vec text vectors" in capsys.readouterr().out


def test_neighbors_and_compare_read_the_gguf_table(tmp_path, gguf_files, capsys):
    q8 = _model_file(tmp_path / "q8.gguf", gguf_files, "Q8_0")
    q4 = _model_file(tmp_path / "q4.gguf", gguf_files, "Q4_0")
    assert main(["neighbors", str(q8), "tok3", "--topn", "3"]) == 0
    out = capsys.readouterr().out
    expected = [k for k, _ in gguf_vectors(q8).most_similar("tok3", topn=3)]
    assert [line.split()[1] for line in out.splitlines()[-3:]] == expected
    assert main(["compare", str(q8), str(q4)]) == 0
    assert "40" in capsys.readouterr().out


def test_sizing_from_the_metadata_counts_the_tensors(tmp_path, gguf_files, capsys):
    path = _model_file(tmp_path / "m.gguf", gguf_files)
    size = sizing.model_size_from_gguf(path)
    stored = sum(int(t.n_elements) for t in gguf.GGUFReader(path).tensors)
    assert size.parameters == stored
    assert (size.family, size.n_kv_heads, size.tied, size.context) == ("llama", 2, False, 128)
    assert size.kv_cache_bytes(128) == 2 * 2 * 128 * 2 * 16 * 2  # K and V, L, T, H_kv, d_k, fp16
    assert main(["size", str(path)]) == 0
    assert f"{stored:,}" in capsys.readouterr().out


def test_plot_draws_the_gguf_table(tmp_path, gguf_files, capsys):
    path = _model_file(tmp_path / "m.gguf", gguf_files)
    out = tmp_path / "table.html"
    assert main(["plot", str(path), "-o", str(out), "--words", "tok1", "tok2", "tok3", "tok4"]) == 0
    assert "4 words" in capsys.readouterr().out
    assert "tok3" in out.read_text(encoding="utf-8")


def test_size_of_a_gguf_takes_the_cache_s_dtype(tmp_path, gguf_files, capsys):
    path = _model_file(tmp_path / "m.gguf", gguf_files)
    size = sizing.model_size_from_gguf(path, dtype="float32")
    assert size.kv_cache_bytes(128) == 2 * 2 * 128 * 2 * 16 * 4
    assert main(["size", str(path), "--dtype", "float32"]) == 0
    assert "float32" in capsys.readouterr().out
