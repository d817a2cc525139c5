"""GGUF models: tiny random Llama and GPT-2 built with ``transformers``, converted to GGUF here
as llama.cpp's converter does (names, Llama's q/k rows permuted for its RoPE, GPT-2's Conv1D
weights transposed) and quantised by ``gguf``; rowbook's logits within 1e-4 of
``transformers`` loading the same file. And back: rowbook's ``save_gguf`` read by ``gguf``
and loaded by ``transformers``."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
gguf = pytest.importorskip("gguf")
pytest.importorskip("accelerate")

from rowbook.models import TransformerLM  # noqa: E402
from rowbook.models.language_model.gguf_checkpoint import hf_names, permute  # noqa: E402

V = 96
IDS = np.array([[3, 17, 42, 5, 88, 1, 60, 7, 7, 30]])


def _llama(**extra):
    settings = {
        "vocab_size": V,
        "hidden_size": 64,
        "intermediate_size": 96,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 64,
        "rms_norm_eps": 1e-5,
        "rope_theta": 10000.0,
        "bos_token_id": 0,
        "eos_token_id": 1,
    } | extra
    return _random(transformers.LlamaForCausalLM(transformers.LlamaConfig(**settings)))


def _gpt2(**extra):
    # transformers reads a GGUF's gpt2.context_length as n_ctx, leaving n_positions at 1024
    config = transformers.GPT2Config(
        vocab_size=V,
        n_embd=64,
        n_layer=2,
        n_head=4,
        n_positions=1024,
        bos_token_id=0,
        eos_token_id=1,
        **extra,
    )
    return _random(transformers.GPT2LMHeadModel(config))


def _random(model):
    torch.manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            if p.ndim == 1:
                p.add_(torch.randn_like(p) * 0.2)
    return model.eval()


def _gguf_name(arch: str, hf: str, n_layers: int) -> str | None:
    """The GGUF name of a ``transformers`` tensor (by search through rowbook's own map)."""
    stems = ["token_embd", "position_embd", "output_norm", "output"]
    blocks = [
        f"blk.{i}.{part}"
        for i in range(n_layers)
        for part in (
            "attn_norm ffn_norm attn_q attn_k attn_v attn_output ffn_gate ffn_up ffn_down attn_qkv"
        ).split()
    ]
    for stem in stems + blocks:
        for kind in ("weight", "bias"):
            if hf_names(arch, f"{stem}.{kind}") == hf:
                return f"{stem}.{kind}"
    return None


def _convert(model, path, qtype: str) -> None:
    """llama.cpp's conversion of a ``transformers`` model, quantised by ``gguf``."""
    config = model.config
    arch = config.model_type
    writer = gguf.GGUFWriter(path, arch)
    writer.add_context_length(
        config.max_position_embeddings if arch == "llama" else config.n_positions
    )
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_head_count(config.num_attention_heads)
    if arch == "llama":
        writer.add_feed_forward_length(config.intermediate_size)
        writer.add_head_count_kv(config.num_key_value_heads)
        writer.add_layer_norm_rms_eps(config.rms_norm_eps)
        writer.add_rope_freq_base(config.rope_parameters["rope_theta"])
        writer.add_rope_dimension_count(config.hidden_size // config.num_attention_heads)
        writer.add_vocab_size(config.vocab_size)
    else:
        writer.add_feed_forward_length(4 * config.hidden_size)
        writer.add_layer_norm_eps(config.layer_norm_epsilon)
    writer.add_token_list([f"t{i}" for i in range(config.vocab_size)])
    names = set()
    for hf, tensor in model.state_dict().items():
        hf = hf.removeprefix("transformer.")
        name = _gguf_name(arch, hf, config.num_hidden_layers)
        if name is None or name in names or hf.endswith((".attn.bias", ".masked_bias")):
            continue
        if hf == "lm_head.weight" and config.tie_word_embeddings:
            continue
        names.add(name)
        array = tensor.numpy().astype(np.float32)
        if arch == "llama" and ".attn_q." in name:
            array = permute(array, config.num_attention_heads)
        elif arch == "llama" and ".attn_k." in name:
            array = permute(array, config.num_key_value_heads)
        elif arch == "gpt2" and array.ndim == 2 and name.startswith("blk."):
            array = np.ascontiguousarray(array.T)  # Conv1D (in, out) -> (out, in)
        if array.ndim == 2 and qtype != "F32":
            q = gguf.GGMLQuantizationType[qtype]
            writer.add_tensor(name, gguf.quants.quantize(array, q), raw_dtype=q)
        else:
            writer.add_tensor(name, array)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _their_logits(folder, name) -> np.ndarray:
    theirs = transformers.AutoModelForCausalLM.from_pretrained(
        folder, gguf_file=name, dtype=torch.float32
    ).eval()
    with torch.no_grad():
        return theirs(torch.from_numpy(IDS)).logits.numpy()


MODELS = {
    "llama_gqa": lambda: _llama(),
    "llama_tied_mqa": lambda: _llama(num_key_value_heads=1, tie_word_embeddings=True),
    "llama_rope_eps": lambda: _llama(rope_theta=500000.0, rms_norm_eps=1e-6, num_key_value_heads=4),
    "gpt2": lambda: _gpt2(),
    "gpt2_untied": lambda: _gpt2(tie_word_embeddings=False),
}


@pytest.mark.parametrize("qtype", ["F32", "F16", "Q8_0", "Q4_0", "Q5_1"])
@pytest.mark.parametrize("which", sorted(MODELS))
def test_logits_equal_transformers_loading_the_same_file(which, qtype, tmp_path):
    model = MODELS[which]()
    _convert(model, tmp_path / "model.gguf", qtype)
    ours = TransformerLM.from_gguf(tmp_path / "model.gguf")
    with torch.no_grad():
        original = model(torch.from_numpy(IDS)).logits.numpy()
    logits = ours.net_(IDS).data
    theirs = _their_logits(tmp_path, "model.gguf")
    np.testing.assert_allclose(logits, theirs, atol=1e-4, rtol=0)
    if qtype == "F32":
        np.testing.assert_allclose(logits, original, atol=1e-4, rtol=0)
    else:  # the quantised model differs from the original: the test sees the weights used
        assert np.abs(logits - original).max() > 1e-6
    assert ours.config_.tie_embeddings == model.config.tie_word_embeddings
    if which == "llama_rope_eps":  # read from the file, not the family's defaults
        assert ours.config_.rope_base == 500000.0
        assert ours.config_.norm_eps == pytest.approx(1e-6)


def test_generation_with_the_cache_follows_the_logits(tmp_path):
    model = _llama()
    _convert(model, tmp_path / "model.gguf", "Q8_0")
    ours = TransformerLM.from_gguf(tmp_path / "model.gguf")
    out = ours.generate(IDS[0], max_new_tokens=5, temperature=0.0, stop_at_eos=False)
    theirs = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path, gguf_file="model.gguf", dtype=torch.float32
    )
    expected = theirs.generate(
        torch.from_numpy(IDS), max_new_tokens=5, do_sample=False, eos_token_id=None
    )
    assert out.tolist() == expected[0].tolist()
